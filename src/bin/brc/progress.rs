//! The progress bar on stderr: bytes read out of the total (a spinner with
//! bytes and rate when the total is unknown), drawn from its own thread
//! only once a run has lasted about a second, and wiped when it ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Runs shorter than this show no bar at all.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar reads the counter.
const TICK: Duration = Duration::from_millis(100);

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
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            if stopped.recv_timeout(DELAY) != Err(RecvTimeoutError::Timeout) {
                return;
            }
            let bar = match size {
                Some(size) => ProgressBar::new(size).with_style(style(
                    "{spinner} {elapsed} [{wide_bar}] {bytes}/{total_bytes} \
                     {binary_bytes_per_sec} ETA {eta}",
                )),
                None => ProgressBar::new_spinner()
                    .with_style(style("{spinner} {elapsed} {bytes} {binary_bytes_per_sec}")),
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

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}
