//! Terminal output: logging through tracing, and the progress bar that logs
//! print around (indicatif) when stderr is a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use spinneret_crawl::Progress;
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
pub(super) fn init_logging(verbose: u8, quiet: u8) {
    let level = match (quiet, verbose) {
        (2.., _) => "off",
        (1, _) => "error",
        (0, 0) => "warn,spinneret=info",
        (0, 1) => "info,spinneret=debug",
        (0, _) => "debug,spinneret=trace",
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

fn progress_line(progress: &Progress, start: Instant, delay: Duration) -> String {
    let done = progress.done.load(Ordering::Relaxed);
    let rate = done as f64 / start.elapsed().as_secs_f64().max(0.001);
    format!(
        "{done} checked, {} queued, {} in flight, {rate:.0} URLs/s, {} broken{}",
        progress.queued.load(Ordering::Relaxed),
        progress.in_flight.load(Ordering::Relaxed),
        progress.errors.load(Ordering::Relaxed),
        super::overrides::delay_note(delay),
    )
}

/// How often a progress line is logged when stderr is not a terminal.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Show progress while the crawl runs: a bar on a terminal, a log line every
/// ten seconds otherwise (for cron mails and CI logs); nothing with `-q`.
pub(super) fn start_progress(
    progress: Arc<Progress>,
    quiet: bool,
    delay: Duration,
) -> Option<tokio::task::JoinHandle<()>> {
    if quiet {
        return None;
    }
    let start = Instant::now();
    if !std::io::stderr().is_terminal() {
        return Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(LOG_EVERY).await;
                tracing::info!("progress: {}", progress_line(&progress, start, delay));
            }
        }));
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let bar = BAR.get_or_init(|| bar).clone();
    bar.enable_steady_tick(Duration::from_millis(120));
    Some(tokio::spawn(async move {
        loop {
            bar.set_message(progress_line(&progress, start, delay));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }))
}

/// Clear the progress bar.
pub(super) fn finish_progress(handle: Option<tokio::task::JoinHandle<()>>) {
    if let Some(h) = handle {
        h.abort();
    }
    if let Some(bar) = BAR.get() {
        bar.finish_and_clear();
    }
}

/// Text from the web (a title, anchor text, a URL as written) as a
/// terminal may be shown it: control characters written as escapes
/// (`\u{1b}`), so that a page cannot clear the screen, retitle the window
/// or hide a line from the person reading (an `ESC [2J` in a title).
pub(super) struct Shown<'a>(pub &'a str);

/// [`Shown`], and cut after [`Clipped::MAX`] bytes with a note of how much
/// is left out: a URL or a message of a megabyte is one screenful of a
/// line, not thousands (`--json` gives it whole).
pub(super) struct Clipped<'a>(pub &'a str);

impl Clipped<'_> {
    /// The most bytes of the text shown.
    pub(super) const MAX: usize = 300;
}

impl std::fmt::Display for Clipped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0;
        if s.len() <= Clipped::MAX {
            return Shown(s).fmt(f);
        }
        let mut end = Clipped::MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        write!(f, "{}… ({} more bytes)", Shown(&s[..end]), s.len() - end)
    }
}

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(char::is_control) {
            f.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().expect("found at `at`");
            write!(f, "{}", c.escape_default())?;
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

/// Standard output for a command's results. A reader that has gone away
/// (`spinneret results | head -3`) is not an error: what is left to write
/// is dropped and the command finishes as it would have, exit code
/// included.
pub(super) struct Stdout(std::io::StdoutLock<'static>);

/// The command's standard output (see [`Stdout`]).
pub(super) fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(buf.len()),
            r => r,
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        }
    }
}

/// `print!` to [`stdout`]: a closed pipe is no error, another failure is
/// logged.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = write!($crate::cli::output::stdout(), $($arg)*) {
            tracing::error!("cannot write to standard output: {e}");
        }
    }};
}

/// `println!` to [`stdout`]: a closed pipe is no error, another failure is
/// logged.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!($crate::cli::output::stdout(), $($arg)*) {
            tracing::error!("cannot write to standard output: {e}");
        }
    }};
}

pub(crate) use {out, outln};

/// Write what `write` writes to `file` (whole, replacing it only when
/// complete) or, without one, to standard output; `write`'s answer.
///
/// `file` is the user's `-o`: never one of `kept` (the store being read,
/// with its journal files), never a directory made up on the way; a
/// symbolic link is written through (its target replaced, the link kept),
/// and a device or a named pipe (`/dev/stdout`, `/dev/null`, a FIFO) is
/// written to, not replaced by a file.
pub(super) fn to_file_or_stdout<T>(
    file: Option<&std::path::Path>,
    kept: &[&std::path::Path],
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if let Some(path) = file {
        return write_user_file(path, kept, write);
    }
    let mut out = std::io::BufWriter::new(stdout());
    let answer = write(&mut out)?;
    out.flush()?;
    Ok(answer)
}

/// [`to_file_or_stdout`] to a file the user named.
fn write_user_file<T>(
    path: &std::path::Path,
    kept: &[&std::path::Path],
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let shown = path.display();
    // Where it leads: through symbolic links, or where it would be made.
    let target = match std::fs::canonicalize(path) {
        Ok(t) => t,
        Err(_) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            let dir = std::fs::canonicalize(dir).map_err(|_| {
                anyhow::anyhow!(
                    "cannot write {shown}: there is no directory {}; make it first, or name another file",
                    dir.display()
                )
            })?;
            dir.join(path.file_name().unwrap_or_default())
        }
    };
    for k in kept {
        let Ok(k) = std::fs::canonicalize(k) else {
            continue;
        };
        let journal = |suffix: &str| {
            let mut name = k.clone().into_os_string();
            name.push(suffix);
            std::path::PathBuf::from(name)
        };
        if target == k || target == journal("-wal") || target == journal("-shm") {
            anyhow::bail!(
                "cannot write {shown}: it is the store being read ({}); name another file",
                k.display()
            );
        }
    }
    let mut buf = Vec::new();
    let answer = write(&mut buf)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => anyhow::bail!("cannot write {shown}: it is a directory"),
        // A device or a pipe: written to as it is.
        Ok(m) if !m.is_file() => std::fs::OpenOptions::new()
            .write(true)
            .open(&target)
            .and_then(|mut f| f.write_all(&buf))
            .map_err(|e| anyhow::anyhow!("cannot write {shown}: {e}"))?,
        _ => spinneret_core::fs::write_atomically(&target, &buf)
            .map_err(|e| anyhow::anyhow!("cannot write {shown}: {e}"))?,
    }
    Ok(answer)
}
