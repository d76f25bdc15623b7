//! How `serve` takes connections, within bounds a client cannot stretch:
//!
//! - at most [`Limits::connections`] open at once; more wait in the
//!   kernel's backlog until one closes (no file descriptor is spent on
//!   them, so the server never runs out of descriptors for its store and
//!   index);
//! - at most [`Limits::per_client`] of them from one client (an IPv4
//!   address, an IPv6 /64): a client's further connections are answered
//!   503 with `Retry-After` and closed at once ([`Clients`]), so one
//!   client, however many connections it opens and however slowly it
//!   talks on them, leaves room for the others;
//! - each given [`Limits::header_timeout`] to send a request's head: a
//!   client that connects and sends nothing, trickles its headers a byte
//!   at a time, or keeps an idle connection open between requests is
//!   closed after it;
//! - closed when no byte moves either way for [`Limits::idle_timeout`]
//!   (and a [`GRACE`] second): a
//!   client that stops sending a request's body, or stops reading the
//!   answer, holds its place no longer than that ([`Inactive`]); and a
//!   request's body must arrive whole within it (see `serve::router`);
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
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// The largest request head read (request line and headers): a search's
/// query is bounded far below it.
pub(crate) const MAX_HEAD: usize = 64 << 10;
/// How much longer than the idle timeout a connection waits on a silent
/// peer before it is cut: a stalled request body is answered 408 at the
/// idle timeout (by the router's deadline) before its connection goes.
pub(crate) const GRACE: Duration = Duration::from_secs(1);
/// Connections past their client's share answered 503 at once, at most
/// (each for a second at most); more are closed without an answer.
pub(crate) const TURNING_AWAY: usize = 64;
/// How long open connections get to finish once the server is stopped.
pub(crate) const DRAIN: Duration = Duration::from_secs(5);

/// The bounds on connections.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once.
    pub connections: usize,
    /// Connections open at once from one client.
    pub per_client: usize,
    /// How long a client has to send a request's head, and how long an
    /// idle connection stays open.
    pub header_timeout: Duration,
    /// How long a connection stays open with no byte moving either way
    /// (a request body stalled, an answer not read), and the most a
    /// request's body may take to arrive.
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 256,
            per_client: 32,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
        }
    }
}

/// Answer the connections `listener` takes with `router` until `stop`
/// resolves; each request carries its peer's address, as axum's
/// [`ConnectInfo`].
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.connections.max(1)));
    let clients = Clients::new(limits.per_client);
    let turning_away = Arc::new(tokio::sync::Semaphore::new(TURNING_AWAY));
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
        let Some(client) = clients.admit(peer.ip()) else {
            // The client holds its share already: told so, and closed; past
            // TURNING_AWAY answers at once, closed without one (so that a
            // client connecting in a loop holds no descriptors).
            drop(permit);
            if let Ok(answering) = turning_away.clone().try_acquire_owned() {
                tokio::spawn(async move {
                    turn_away(stream).await;
                    drop(answering);
                });
            }
            continue;
        };
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(request)
        });
        let stream = Inactive::new(stream, limits.idle_timeout + GRACE);
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection from {peer}: {e}");
            }
            drop(client);
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

pub use spinneret_core::client::client_of;

/// The connections each client holds, against [`Limits::per_client`].
#[derive(Clone)]
struct Clients {
    held: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
    cap: usize,
}

/// One connection counted against its client until dropped.
struct ClientSlot {
    clients: Clients,
    key: std::net::IpAddr,
}

impl Clients {
    fn new(cap: usize) -> Clients {
        Clients {
            held: Default::default(),
            cap: cap.max(1),
        }
    }

    /// A slot for one more connection of `ip`'s client, unless it holds
    /// its share already.
    fn admit(&self, ip: std::net::IpAddr) -> Option<ClientSlot> {
        let key = client_of(ip);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let n = held.entry(key).or_insert(0);
        if *n >= self.cap {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            clients: self.clone(),
            key,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.clients.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = held.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.key);
            }
        }
    }
}

/// Answer a connection past its client's share: 503, when to come back,
/// and closed. What the client sends first (its request's head, up to
/// 8 KiB) is read and dropped, so that an HTTP client reads an answer to
/// its request rather than one that came before it; a client that takes
/// more than a second over all this is just closed.
async fn turn_away(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const BODY: &str =
        "this client has as many connections open as one client may; try again shortly\n";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let mut head = [0u8; 8192];
        let mut got = 0;
        while got < head.len() && !head[..got].windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut head[got..]).await? {
                0 => break,
                n => got += n,
            }
        }
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}

/// A listener on `addr` with room for 1,024 connections waiting to be
/// taken (the standard library asks for 128), so clients past
/// [`Limits::connections`] wait in the backlog rather than being retried.
pub(crate) fn listen(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match addr {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// A connection closed (its reads and writes fail with `TimedOut`) once
/// no byte has moved either way for its limit while it waits on the peer.
pub(crate) struct Inactive {
    io: TcpStream,
    limit: Duration,
    /// When a byte last moved.
    last: Instant,
    timer: Pin<Box<Sleep>>,
}

impl Inactive {
    fn new(io: TcpStream, limit: Duration) -> Inactive {
        let last = Instant::now();
        Inactive {
            io,
            limit,
            last,
            timer: Box::pin(tokio::time::sleep_until(last + limit)),
        }
    }

    /// A read or write made progress.
    fn moved(&mut self) {
        self.last = Instant::now();
    }

    /// What a write of the inner stream came to, with the timeout applied.
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        match written {
            Poll::Ready(r) => {
                if r.as_ref().is_ok_and(|&n| n > 0) {
                    self.moved();
                }
                Poll::Ready(r)
            }
            Poll::Pending => match self.waiting(cx) {
                Some(e) => Poll::Ready(Err(e)),
                None => Poll::Pending,
            },
        }
    }

    /// A read or write waits on the peer: the timeout, once the peer has
    /// been silent for the limit.
    fn waiting(&mut self, cx: &mut Context<'_>) -> Option<std::io::Error> {
        let deadline = self.last + self.limit;
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        self.timer.as_mut().poll(cx).is_ready().then(|| {
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no byte moved either way within the idle timeout",
            )
        })
    }
}

impl AsyncRead for Inactive {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    self.moved();
                }
                Poll::Ready(r)
            }
            Poll::Pending => match self.waiting(cx) {
                Some(e) => Poll::Ready(Err(e)),
                None => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for Inactive {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        self.wrote(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.wrote(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A pair of connected sockets, the first wrapped.
    async fn pair(limit: Duration) -> (Inactive, TcpStream) {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let peer = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (ours, _) = listener.accept().await.unwrap();
        (Inactive::new(ours, limit), peer)
    }

    /// A peer that sends nothing, or reads nothing of what it is sent,
    /// ends the connection once the limit has passed with no byte moving.
    #[tokio::test]
    async fn a_silent_peer_or_one_that_reads_nothing_times_out() {
        let (mut ours, _silent) = pair(Duration::from_millis(200)).await;
        let mut buf = [0u8; 16];
        let e = ours.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);

        let (mut ours, _deaf) = pair(Duration::from_millis(200)).await;
        let chunk = vec![b'x'; 1 << 16];
        let mut written = 0usize;
        let e = loop {
            match ours.write(&chunk).await {
                Ok(n) => written += n,
                Err(e) => break e,
            }
            assert!(written < 1 << 30, "the socket took a gigabyte unread");
        };
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        assert!(written > 0);
    }

    /// A peer that keeps sending, however slowly, keeps the connection.
    #[tokio::test]
    async fn a_peer_that_keeps_sending_is_not_cut_off() {
        let (mut ours, mut peer) = pair(Duration::from_secs(2)).await;
        let sender = tokio::spawn(async move {
            for _ in 0..6 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                peer.write_all(b"a").await.unwrap();
            }
            peer
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 1];
        while got.len() < 6 {
            let n = ours.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, b"aaaaaa");
        drop(sender.await.unwrap());
    }
}
