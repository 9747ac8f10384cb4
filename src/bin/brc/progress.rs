//! The progress bars on stderr: the summary's (bytes read out of the
//! total, or a spinner with the bytes when the total is unknown), drawn
//! from its own thread only once a run has lasted about a second and wiped
//! when it ends; and `brc generate`'s (rows written).
//!
//! A frame's text is a pure function of the time since the run began and
//! what it has done ([`bytes_frame`], [`rows_frame`]): rates are averages
//! over the whole run, shown only once the run has lasted
//! [`MEASURED_AFTER`] and done something. indicatif's own rate and ETA come
//! from the bar's recent steps, and the summary's bar starts a second into
//! the run with that second's bytes as its first step: its first frames
//! read terabytes a second.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use brc::timings::plural;
use indicatif::{
    BinaryBytes, HumanCount, HumanDuration, ProgressBar, ProgressState, ProgressStyle,
};

/// Runs shorter than this show no bar at all.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar reads the counter.
const TICK: Duration = Duration::from_millis(100);
/// No rate or ETA is shown before a run has lasted this long: over less,
/// the work handed out at the start (chunks claimed, buffers filled) is a
/// large part of what was counted.
pub const MEASURED_AFTER: Duration = Duration::from_secs(1);

/// A progress bar that is shown while it lives, then cleared.
pub struct Bar {
    // Dropping the sender tells the thread to stop.
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// Shows `consumed` bytes out of `size` from one second on, unless the
    /// bar is dropped before.
    pub fn start(consumed: Arc<AtomicU64>, size: Option<u64>) -> Bar {
        let start = Instant::now();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            if stopped.recv_timeout(DELAY) != Err(RecvTimeoutError::Timeout) {
                return;
            }
            let frame = move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&bytes_frame(start.elapsed(), state.pos(), size));
            };
            let bar = match size {
                Some(size) => ProgressBar::new(size)
                    .with_style(style("{spinner} [{wide_bar}] {frame}").with_key("frame", frame)),
                None => ProgressBar::new_spinner()
                    .with_style(style("{spinner} {frame}").with_key("frame", frame)),
            };
            loop {
                bar.set_position(consumed.load(Ordering::Relaxed));
                if stopped.recv_timeout(TICK) != Err(RecvTimeoutError::Timeout) {
                    break;
                }
            }
            bar.finish_and_clear();
        });
        Bar {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// A bar that never shows.
    pub fn hidden() -> Bar {
        Bar {
            stop: None,
            thread: None,
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // A panic while drawing is not worth failing the run for.
            let _ = thread.join();
        }
    }
}

/// A style from `template`, with the bar drawn as `[===>  ]`.
pub fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// The units a run has done per second, averaged over the run: `None`
/// until the run has lasted [`MEASURED_AFTER`] and done something.
fn rate(elapsed: Duration, done: u64) -> Option<f64> {
    (elapsed >= MEASURED_AFTER && done > 0).then(|| done as f64 / elapsed.as_secs_f64())
}

/// The time left to do `total` units at `rate` units a second, having
/// done `done`.
fn eta(rate: f64, done: u64, total: u64) -> Option<Duration> {
    Duration::try_from_secs_f64(total.saturating_sub(done) as f64 / rate).ok()
}

/// `elapsed` in whole seconds (`9s`, `2m` past 90 seconds), never rounded
/// up: a frame with no rate yet never says `1s`.
fn seconds(elapsed: Duration) -> String {
    format!(
        "{:#}",
        HumanDuration(Duration::from_secs(elapsed.as_secs()))
    )
}

/// The summary's frame after its bar (or spinner): `bytes` read out of
/// `total`, `elapsed` into the run, then the rate and time left once
/// [`rate`] has one.
pub fn bytes_frame(elapsed: Duration, bytes: u64, total: Option<u64>) -> String {
    let mut text = BinaryBytes(bytes).to_string();
    if let Some(total) = total {
        let _ = write!(text, "/{}", BinaryBytes(total));
    }
    let _ = write!(text, " in {}", seconds(elapsed));
    if let Some(rate) = rate(elapsed, bytes) {
        let _ = write!(text, ", {}/s", BinaryBytes(rate as u64));
        if let Some(eta) = total.and_then(|total| eta(rate, bytes, total)) {
            let _ = write!(text, ", ETA {:#}", HumanDuration(eta));
        }
    }
    text
}

/// `brc generate`'s frame after its bar: `rows` written out of `total`
/// (`bytes` so far), `elapsed` into the run, then the rate and time left
/// once [`rate`] has one.
pub fn rows_frame(elapsed: Duration, rows: u64, bytes: u64, total: u64) -> String {
    let mut text = format!(
        "{}/{} {}, {} in {}",
        HumanCount(rows),
        HumanCount(total),
        plural(total, "row"),
        BinaryBytes(bytes),
        seconds(elapsed)
    );
    if let Some(rate) = rate(elapsed, rows) {
        let _ = match rate >= 1e5 {
            true => write!(text, ", {:.1}M rows/s", rate / 1e6),
            false => write!(text, ", {} rows/s", HumanCount(rate as u64)),
        };
        if let Some(eta) = eta(rate, rows, total) {
            let _ = write!(text, ", ETA {:#}", HumanDuration(eta));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn no_rate_before_a_second_of_the_run() {
        // A bar drawn a second into a run that read 1 GiB in its first
        // 100 ms: no rate until the run has lasted a second, then the
        // run's average, never the 10 GiB/s of its first step.
        assert_eq!(
            bytes_frame(secs(0.1), GIB, Some(9 * GIB)),
            "1.00 GiB/9.00 GiB in 0s"
        );
        assert_eq!(
            bytes_frame(secs(0.999), GIB, Some(9 * GIB)),
            "1.00 GiB/9.00 GiB in 0s"
        );
        assert_eq!(
            bytes_frame(secs(1.0), GIB, Some(9 * GIB)),
            "1.00 GiB/9.00 GiB in 1s, 1.00 GiB/s, ETA 8s"
        );
        assert_eq!(
            bytes_frame(secs(4.0), 2 * GIB, Some(9 * GIB)),
            "2.00 GiB/9.00 GiB in 4s, 512.00 MiB/s, ETA 14s"
        );
    }

    #[test]
    fn nothing_read_is_no_rate() {
        assert_eq!(bytes_frame(secs(5.0), 0, Some(GIB)), "0 B/1.00 GiB in 5s");
        assert_eq!(bytes_frame(secs(5.0), 0, None), "0 B in 5s");
    }

    #[test]
    fn a_stream_has_a_rate_and_no_eta() {
        assert_eq!(bytes_frame(secs(0.5), GIB, None), "1.00 GiB in 0s");
        assert_eq!(
            bytes_frame(secs(2.0), GIB, None),
            "1.00 GiB in 2s, 512.00 MiB/s"
        );
    }

    #[test]
    fn a_finished_or_overrun_total_has_no_time_left() {
        assert_eq!(
            bytes_frame(secs(2.0), 2 * GIB, Some(GIB)),
            "2.00 GiB/1.00 GiB in 2s, 1.00 GiB/s, ETA 0s"
        );
    }

    #[test]
    fn generate_frames_have_every_field_filled() {
        // The first frame, before any row is written.
        assert_eq!(
            rows_frame(Duration::ZERO, 0, 0, 100_000_000),
            "0/100,000,000 rows, 0 B in 0s"
        );
        assert_eq!(
            rows_frame(secs(0.5), 5_000_000, 70 << 20, 100_000_000),
            "5,000,000/100,000,000 rows, 70.00 MiB in 0s"
        );
        assert_eq!(
            rows_frame(secs(2.0), 20_000_000, 280 << 20, 100_000_000),
            "20,000,000/100,000,000 rows, 280.00 MiB in 2s, 10.0M rows/s, ETA 8s"
        );
        // A slow run's rate is not rounded to nothing.
        assert_eq!(
            rows_frame(secs(10.0), 32_768, 440 << 10, 100_000_000),
            "32,768/100,000,000 rows, 440.00 KiB in 10s, 3,276 rows/s, ETA 8h"
        );
        assert_eq!(rows_frame(Duration::ZERO, 0, 0, 1), "0/1 row, 0 B in 0s");
        assert_eq!(
            rows_frame(secs(3.0), 1, 14, 1),
            "1/1 row, 14 B in 3s, 0 rows/s, ETA 0s"
        );
    }
}
