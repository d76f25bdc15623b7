//! How a person stops spinneret: SIGTERM or Ctrl-C (SIGINT), the one
//! mechanism every command uses. A run (a crawl, a worker's share, a
//! collection) is asked to stop by the first signal: it starts no new
//! request and keeps, reports and indexes what it has; a second signal
//! quits at once (exit 130). `watch` waits for a signal between runs, and
//! `serve` stops serving on one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// SIGTERM and Ctrl-C, listened for from its creation on: a signal that
/// comes while nobody waits is kept until asked ([`Signals::pending`]).
pub struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    /// Start listening (inside a runtime).
    pub fn listen() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                interrupt: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// Wait for a signal.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        {
            if let (Some(term), Some(interrupt)) = (&mut self.term, &mut self.interrupt) {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = interrupt.recv() => {}
                }
                return;
            }
        }
        let _ = tokio::signal::ctrl_c().await;
    }

    /// Whether a signal came and was not waited for yet (the wait is
    /// polled once: a timeout polls what it bounds before its deadline).
    pub async fn pending(&mut self) -> bool {
        tokio::time::timeout(std::time::Duration::ZERO, self.recv())
            .await
            .is_ok()
    }
}

/// Wait for the next SIGTERM or Ctrl-C (inside a runtime).
pub async fn signal() {
    Signals::listen().recv().await
}

/// A run's stop request, listened for on a thread of its own while the
/// run lasts: the first signal says `stopping` on standard error and sets
/// the request (seen as a flag by blocking code and as a `watch` channel
/// by async code); a second ends the process (exit 130). Dropped, it stops
/// listening.
pub struct StopRequest {
    flag: Arc<AtomicBool>,
    asked: tokio::sync::watch::Receiver<bool>,
    done: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StopRequest {
    /// Listen for signals until dropped; `stopping` is what the run does
    /// when asked to stop, said to the person who asked.
    pub fn listen(stopping: &'static str) -> std::io::Result<StopRequest> {
        let flag = Arc::new(AtomicBool::new(false));
        let (tell, asked) = tokio::sync::watch::channel(false);
        let (done, mut ended) = tokio::sync::oneshot::channel::<()>();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let set = flag.clone();
        let thread = std::thread::Builder::new()
            .name("stop-listener".into())
            .spawn(move || {
                rt.block_on(async {
                    let mut signals = Signals::listen();
                    tokio::select! {
                        _ = signals.recv() => {}
                        _ = &mut ended => return,
                    }
                    set.store(true, Ordering::Relaxed);
                    let _ = tell.send(true);
                    eprintln!("spinneret: {stopping} (again to quit at once)");
                    tokio::select! {
                        _ = signals.recv() => std::process::exit(130),
                        _ = ended => {}
                    }
                })
            })?;
        Ok(StopRequest {
            flag,
            asked,
            done: Some(done),
            thread: Some(thread),
        })
    }

    /// Set once the run is asked to stop.
    pub fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// Changes to `true` once the run is asked to stop.
    pub fn receiver(&self) -> tokio::sync::watch::Receiver<bool> {
        self.asked.clone()
    }
}

impl Drop for StopRequest {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
