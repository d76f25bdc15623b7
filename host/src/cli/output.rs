//! Terminal output: logging through tracing, and the progress bar that logs
//! print around (indicatif) when stderr is a terminal.

use crate::crawl::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

static BAR: OnceLock<ProgressBar> = OnceLock::new();

/// A writer for log lines that steps around the progress bar.
struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match BAR.get() {
            Some(bar) if !bar.is_finished() => bar.suspend(|| std::io::stderr().write(buf)),
            _ => std::io::stderr().write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Set up logging: `verbosity` 0 is warnings and the crawl's own notes, each `-v` more, `-q` less.
pub fn init_logging(verbose: u8, quiet: bool) {
    let level = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn,spinneret=info",
        (false, 1) => "info,spinneret=debug",
        (false, _) => "debug,spinneret=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPINNERET_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(|| LogWriter)
        .try_init();
}

/// Show a progress bar fed by `progress` while the crawl runs (only on a terminal).
pub fn start_progress(progress: Arc<Progress>, quiet: bool) -> Option<tokio::task::JoinHandle<()>> {
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let bar = BAR.get_or_init(|| bar).clone();
    bar.enable_steady_tick(Duration::from_millis(120));
    let start = Instant::now();
    Some(tokio::spawn(async move {
        loop {
            let done = progress.done.load(Ordering::Relaxed);
            let rate = done as f64 / start.elapsed().as_secs_f64().max(0.001);
            bar.set_message(format!(
                "{done} checked, {} queued, {} in flight, {rate:.0} URLs/s, {} broken",
                progress.queued.load(Ordering::Relaxed),
                progress.in_flight.load(Ordering::Relaxed),
                progress.errors.load(Ordering::Relaxed),
            ));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }))
}

/// Clear the progress bar.
pub fn finish_progress(handle: Option<tokio::task::JoinHandle<()>>) {
    if let Some(h) = handle {
        h.abort();
    }
    if let Some(bar) = BAR.get() {
        bar.finish_and_clear();
    }
}
