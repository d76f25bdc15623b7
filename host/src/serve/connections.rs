//! How `serve` takes connections, within bounds a client cannot stretch:
//!
//! - at most [`Limits::connections`] open at once; more wait in the
//!   kernel's backlog until one closes (no file descriptor is spent on
//!   them, so the server never runs out of descriptors for its store and
//!   index);
//! - each given [`Limits::header_timeout`] to send a request's head: a
//!   client that connects and sends nothing, trickles its headers a byte
//!   at a time, or keeps an idle connection open between requests is
//!   closed after it;
//! - a request's head is read into a bounded buffer ([`MAX_HEAD`]);
//! - on the stop signal no connection is taken any more and those open
//!   finish the request they are answering ([`DRAIN`] at most).
//!
//! (axum's own `serve` sets no timer, so hyper applies no header timeout:
//! ~20,000 silent connections took a server down.)

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// The largest request head read (request line and headers): a search's
/// query is bounded far below it.
pub const MAX_HEAD: usize = 64 << 10;
/// How long open connections get to finish once the server is stopped.
pub const DRAIN: Duration = Duration::from_secs(5);

/// The bounds on connections.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once.
    pub connections: usize,
    /// How long a client has to send a request's head, and how long an
    /// idle connection stays open.
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 256,
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// Answer the connections `listener` takes with `router` until `stop`
/// resolves; each request carries its peer's address, as axum's
/// [`ConnectInfo`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_HEAD);
    let mut stop = std::pin::pin!(stop);
    loop {
        // A permit before the accept: past the cap, connections wait in
        // the backlog, not in this process.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut stop => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(c) => c,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection from {peer}: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!(
            "stopped with connections still open after {}",
            humantime::format_duration(DRAIN)
        );
    }
}

/// A failed accept: the peer's own failure is nothing; running out of
/// descriptors or memory is said, and the next accept waits a second for
/// some to be freed (instead of spinning on the same error).
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::warn!("cannot accept a connection: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
