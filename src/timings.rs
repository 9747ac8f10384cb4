//! `brc --timings`: where a run's time went, phase by phase and thread by
//! thread.
//!
//! Recording is off unless [`enable`]d. When on, the drivers and the binary
//! take a handful of clock readings per thread and per phase, never per
//! row; when off, each of those places costs one relaxed atomic load.
//! The record is process-wide because a run is: one input, one report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);
static RECORD: Mutex<Record> = Mutex::new(Record {
    phases: Vec::new(),
    workers: Vec::new(),
});

/// What one worker thread did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    /// Time from the thread's first claim to its last chunk done.
    pub busy: Duration,
    /// Time it then took to sort its names.
    pub sort: Duration,
    /// Bytes it aggregated.
    pub bytes: u64,
    /// Chunks (or blocks) it aggregated.
    pub chunks: u64,
}

/// Everything recorded so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Named phases in the order they ended.
    pub phases: Vec<(&'static str, Duration)>,
    /// One entry per worker thread, in the order they finished.
    pub workers: Vec<Worker>,
}

impl Record {
    fn phase(&self, name: &str) -> Duration {
        self.phases
            .iter()
            .filter(|p| p.0 == name)
            .map(|p| p.1)
            .sum()
    }

    /// The report `brc --timings` prints for a run over `bytes` bytes and
    /// `rows` rows with `threads` threads: the phases `open`, `aggregate`
    /// (with each worker's busy time, share and sort, `merge` and
    /// `check names` inside it) and `print`, then the throughput.
    /// Per-core figures divide the wall time of the whole run by the rows
    /// and multiply by the threads, as the 1BRC write-ups count them.
    pub fn report(&self, bytes: u64, rows: u64, threads: usize) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut out = String::from("brc timings\n");
        let mut line = |name: &str, d: Duration, note: String| {
            let text = format!("  {name:<24}{:>10.1} ms  {note}", ms(d));
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line("open", self.phase("open"), String::new());
        line("aggregate", self.phase("aggregate"), String::new());
        for (i, w) in self.workers.iter().enumerate() {
            let gbs = w.bytes as f64 / w.busy.as_secs_f64().max(1e-9) / 1e9;
            let share = 100.0 * w.bytes as f64 / bytes.max(1) as f64;
            let note = format!(
                "{share:5.1}% of bytes, {}, {gbs:.2} GB/s, then {:.1} ms sorting",
                count(w.chunks, "chunk"),
                ms(w.sort)
            );
            line(&format!("  thread {i} busy"), w.busy, note);
        }
        line("  merge", self.phase("merge"), String::new());
        line("  check names", self.phase("check names"), String::new());
        line("print", self.phase("print"), String::new());
        let total = self.phase("open") + self.phase("aggregate") + self.phase("print");
        let secs = total.as_secs_f64().max(1e-9);
        line(
            "total",
            total,
            format!(
                "{:.2} GB/s, {:.1} M rows/s, {:.2} ns/row/core ({}, {}, {})",
                bytes as f64 / secs / 1e9,
                rows as f64 / secs / 1e6,
                secs * 1e9 * threads as f64 / rows.max(1) as f64,
                count(bytes, "byte"),
                count(rows, "row"),
                count(threads as u64, "thread"),
            ),
        );
        out
    }
}

/// `noun` as it follows the number `n`: singular for exactly one (`1
/// thread`), plural otherwise (`0 threads`, `2 threads`). Every noun brc
/// counts in its messages takes a plain `s`.
pub fn plural(n: u64, noun: &str) -> String {
    match n {
        1 => noun.to_string(),
        _ => format!("{noun}s"),
    }
}

/// `n` followed by `noun` in the number [`plural`] gives it: `1 chunk`,
/// `3 chunks`.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// Turns recording on for the rest of the process.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn record() -> std::sync::MutexGuard<'static, Record> {
    RECORD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `f`, recording its duration as phase `name` when enabled.
pub fn phase<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let start = Instant::now();
    let out = f();
    record().phases.push((name, start.elapsed()));
    out
}

/// Takes everything recorded so far, leaving the record empty.
pub fn take() -> Record {
    std::mem::take(&mut *record())
}

/// A worker thread's clock: counts what it aggregates and records it as a
/// [`Worker`] when dropped, if recording is on.
pub struct WorkerClock {
    start: Option<Instant>,
    /// Set when the thread's chunks are done and it starts sorting.
    busy: Option<Duration>,
    sort: Duration,
    bytes: u64,
    chunks: u64,
}

impl WorkerClock {
    /// Starts the clock (a no-op when recording is off).
    pub fn start() -> WorkerClock {
        WorkerClock {
            start: enabled().then(Instant::now),
            busy: None,
            sort: Duration::ZERO,
            bytes: 0,
            chunks: 0,
        }
    }

    /// Runs `f`, the thread's sort of its names once its chunks are done,
    /// and times it apart from them.
    pub fn sort<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let Some(start) = self.start else {
            return f();
        };
        self.busy = Some(start.elapsed());
        let sorting = Instant::now();
        let out = f();
        self.sort = sorting.elapsed();
        out
    }

    /// Counts one chunk of `bytes` bytes done.
    pub fn chunk(&mut self, bytes: usize) {
        self.bytes += bytes as u64;
        self.chunks += 1;
    }
}

impl Drop for WorkerClock {
    fn drop(&mut self) {
        if let Some(start) = self.start {
            record().workers.push(Worker {
                busy: self.busy.unwrap_or_else(|| start.elapsed()),
                sort: self.sort,
                bytes: self.bytes,
                chunks: self.chunks,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_phases_and_workers_only_when_enabled() {
        // Off: nothing is kept.
        assert_eq!(phase("off", || 7), 7);
        drop(WorkerClock::start());
        assert_eq!(take(), Record::default());
        enable();
        assert_eq!(phase("on", || 8), 8);
        let mut clock = WorkerClock::start();
        clock.chunk(10);
        clock.chunk(5);
        assert_eq!(clock.sort(|| 9), 9);
        drop(clock);
        let r = take();
        assert_eq!(r.phases.iter().map(|p| p.0).collect::<Vec<_>>(), ["on"]);
        assert_eq!((r.workers[0].bytes, r.workers[0].chunks), (15, 2));
        let report = r.report(15, 3, 1);
        for phase in [
            "open",
            "aggregate",
            "thread 0 busy",
            "merge",
            "check names",
            "print",
            "total",
        ] {
            assert!(report.contains(phase), "{phase} missing from\n{report}");
        }
        assert!(report.contains("100.0% of bytes, 2 chunks"), "{report}");
        assert!(report.contains("ms sorting"), "{report}");
        assert!(report.contains("(15 bytes, 3 rows, 1 thread)"), "{report}");
    }

    #[test]
    fn one_of_a_thing_is_singular() {
        assert_eq!(count(0, "thread"), "0 threads");
        assert_eq!(count(1, "thread"), "1 thread");
        assert_eq!(count(2, "thread"), "2 threads");
        assert_eq!(plural(1, "row"), "row");
        assert_eq!(plural(1_000, "row"), "rows");
        let one = Record {
            phases: Vec::new(),
            workers: vec![Worker {
                busy: Duration::from_millis(1),
                sort: Duration::ZERO,
                bytes: 1,
                chunks: 1,
            }],
        };
        let report = one.report(1, 1, 1);
        assert!(report.contains("of bytes, 1 chunk, "), "{report}");
        assert!(report.contains("(1 byte, 1 row, 1 thread)"), "{report}");
    }
}
