//! The loopback test web: one HTTP server on 127.0.0.1 serving any number of
//! fake sites by their `Host` header (`www.fict.org`, `a.example`, …), which
//! the crawler resolves to 127.0.0.1. Every request is logged, so tests can
//! assert exactly which methods reached which URLs with which headers.
//!
//! Bodies may contain `{PORT}`, replaced by the server's port when served, so
//! fixtures can write absolute cross-site links before the port is known.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the server answers one path.
#[derive(Clone)]
pub enum Route {
    /// A resource.
    Page {
        /// Status code.
        status: u16,
        /// Content-Type.
        content_type: String,
        /// Body (`{PORT}` replaced when served).
        body: Bytes,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// An ETag; a matching `If-None-Match` gets 304.
        etag: Option<String>,
        /// A Last-Modified; an `If-Modified-Since` not older gets 304.
        last_modified: Option<String>,
    },
    /// A redirect.
    Redirect {
        /// 301, 302, 303, 307 or 308.
        status: u16,
        /// The Location (`{PORT}` replaced).
        location: String,
    },
    /// The n-th request gets the n-th route; the last one repeats.
    Sequence(Vec<Route>),
    /// HEAD gets this status; other methods the inner route.
    HeadStatus(u16, Box<Route>),
    /// Answer after a delay.
    Delay(Duration, Box<Route>),
    /// Headers promise `declared` bytes; the connection breaks after the body.
    Truncated {
        /// The Content-Length sent.
        declared: usize,
        /// What is actually sent before the break.
        body: Bytes,
    },
    /// The inner route's body, gzip-compressed with `Content-Encoding: gzip`
    /// (`…, gzip` over an inner route's own coding).
    Gzip(Box<Route>),
    /// A body that never ends (zeros, sent as long as the client reads),
    /// declaring `declared` bytes: a 10 GB image, say.
    Endless {
        /// The Content-Type sent.
        content_type: String,
        /// The Content-Length sent.
        declared: u64,
    },
}

impl Route {
    /// A 200 HTML page.
    pub fn html(body: impl Into<String>) -> Route {
        Route::file("text/html; charset=utf-8", body.into().into_bytes())
    }

    /// A 200 resource of any type.
    pub fn file(content_type: &str, body: impl Into<Bytes>) -> Route {
        Route::Page {
            status: 200,
            content_type: content_type.to_string(),
            body: body.into(),
            headers: Vec::new(),
            etag: None,
            last_modified: None,
        }
    }

    /// A bare status with a short text body.
    pub fn status(status: u16) -> Route {
        Route::Page {
            status,
            content_type: "text/plain".into(),
            body: Bytes::from(format!("status {status}\n")),
            headers: Vec::new(),
            etag: None,
            last_modified: None,
        }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Route {
        Route::Redirect {
            status,
            location: location.to_string(),
        }
    }

    /// Add a header to a page.
    pub fn header(mut self, name: &str, value: &str) -> Route {
        if let Route::Page { headers, .. } = &mut self {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }

    /// Give a page an ETag (conditional requests answer 304).
    pub fn etag(mut self, tag: &str) -> Route {
        if let Route::Page { etag, .. } = &mut self {
            *etag = Some(tag.to_string());
        }
        self
    }

    /// Give a page a Last-Modified (conditional requests answer 304).
    pub fn last_modified(mut self, date: &str) -> Route {
        if let Route::Page { last_modified, .. } = &mut self {
            *last_modified = Some(date.to_string());
        }
        self
    }
}

/// A function that answers paths a site has no fixed route for.
pub type Generator = Arc<dyn Fn(&str) -> Option<Route> + Send + Sync>;

/// One fake site.
#[derive(Clone, Default)]
pub struct Site {
    routes: HashMap<String, Route>,
    generator: Option<Generator>,
}

impl Site {
    /// An empty site (everything 404, robots.txt included).
    pub fn new() -> Site {
        Site::default()
    }

    /// Serve `route` at `path` (with query, if any).
    pub fn route(mut self, path: &str, route: Route) -> Site {
        self.routes.insert(path.to_string(), route);
        self
    }

    /// Serve an HTML page at `path`.
    pub fn page(self, path: &str, html: &str) -> Site {
        self.route(path, Route::html(html))
    }

    /// Serve a robots.txt.
    pub fn robots(self, text: &str) -> Site {
        self.route("/robots.txt", Route::file("text/plain", text.to_string()))
    }

    /// Answer unknown paths with `f`.
    pub fn generated(mut self, f: Generator) -> Site {
        self.generator = Some(f);
        self
    }
}

/// A whole fake web: sites by host name.
#[derive(Clone, Default)]
pub struct Web {
    sites: HashMap<String, Site>,
    /// Every answer waits this long before its head is sent (zero: none).
    round_trip: Duration,
}

impl Web {
    /// An empty web.
    pub fn new() -> Web {
        Web::default()
    }

    /// Add a site under `host`.
    pub fn site(mut self, host: &str, site: Site) -> Web {
        self.sites.insert(host.to_ascii_lowercase(), site);
        self
    }

    /// Answer every request after `round_trip`, whatever its host, path or
    /// method (robots.txt, a page, a HEAD, a redirect, a 404 alike): a web
    /// at that round trip from its client. The wait is an asynchronous
    /// sleep, so requests waiting at once do not hold each other up; a
    /// route's own [`Route::Delay`] comes on top of it.
    pub fn round_trip(mut self, round_trip: Duration) -> Web {
        self.round_trip = round_trip;
        self
    }

    /// The host names.
    pub fn hosts(&self) -> Vec<String> {
        let mut h: Vec<_> = self.sites.keys().cloned().collect();
        h.sort();
        h
    }
}

/// The request headers kept in the log.
pub const LOGGED_HEADERS: [&str; 12] = [
    "cookie",
    "user-agent",
    "accept",
    "from",
    "referer",
    "if-none-match",
    "if-modified-since",
    "accept-encoding",
    "host",
    "x-checked-by",
    "x-test",
    "authorization",
];

/// One request the server saw.
#[derive(Clone, Debug)]
pub struct Logged {
    /// Host name (without port).
    pub host: String,
    /// Method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The request headers tests look at (see [`LOGGED_HEADERS`]).
    pub headers: Vec<(&'static str, String)>,
    /// When it arrived.
    pub at: Instant,
}

impl Logged {
    /// A header's value (one of [`LOGGED_HEADERS`]).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

struct WebState {
    web: Web,
    port: u16,
    log: Mutex<Vec<Logged>>,
    counts: Mutex<HashMap<(String, String), usize>>,
    /// Per host: requests being answered now, and the most at once.
    in_flight: Mutex<HashMap<String, (usize, usize)>>,
    /// Requests answered (their response's head ready) since the start.
    served: AtomicU64,
}

/// A running test web.
pub struct TestWeb {
    addr: SocketAddr,
    state: Arc<WebState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestWeb {
    /// Serve `web` on a free loopback port, on a thread of its own.
    pub fn start(web: Web) -> TestWeb {
        TestWeb::start_at("127.0.0.1", web)
    }

    /// Serve `web` on a free port of the loopback address `ip` (another
    /// host of this machine, such as 127.0.0.2), on a thread of its own.
    pub fn start_at(ip: &str, web: Web) -> TestWeb {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("test web runtime");
        let listener = {
            let _in = rt.enter();
            listen(ip)
        };
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(WebState {
            web,
            port: addr.port(),
            log: Mutex::new(Vec::new()),
            counts: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            served: AtomicU64::new(0),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let thread = std::thread::Builder::new()
            .name("test-web".into())
            .spawn(move || {
                rt.block_on(async move {
                    let app = axum::Router::new().fallback(serve).with_state(st);
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async {
                            let _ = rx.await;
                        })
                        .await;
                });
                // Drop lingering connections (slow responses) without waiting for them.
                rt.shutdown_background();
            })
            .expect("test web thread");
        TestWeb {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://HOST:PORT/PATH`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port())
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.state.log.lock().unwrap().clone()
    }

    /// The most requests to `host` that were being answered at once (from
    /// their arrival until their response's head was ready: a delayed
    /// route counts through its delay).
    pub fn most_in_flight(&self, host: &str) -> usize {
        self.state
            .in_flight
            .lock()
            .unwrap()
            .get(host)
            .map_or(0, |(_, most)| *most)
    }

    /// Requests answered since the server started (their response's head
    /// ready; [`TestWeb::clear_log`] does not reset it): a request whose
    /// client left before its answer was ready is not counted.
    pub fn served(&self) -> u64 {
        self.state.served.load(Ordering::Relaxed)
    }

    /// Forget the requests so far.
    pub fn clear_log(&self) {
        self.state.log.lock().unwrap().clear();
    }

    /// The methods requested for `host` `path`, in order.
    pub fn methods(&self, host: &str, path: &str) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r.host == host && r.path == path)
            .map(|r| r.method)
            .collect()
    }

    /// The `[resolve]` table that sends every host name of the web to this
    /// server (a host written as an address needs none).
    pub fn resolve_toml(&self) -> String {
        let mut s = String::from("[resolve]\n");
        for h in self.state.web.hosts() {
            if h.parse::<std::net::IpAddr>().is_ok() {
                continue;
            }
            s.push_str(&format!("\"{h}\" = \"127.0.0.1\"\n"));
        }
        s
    }
}

/// A listener on a free port of the address `ip`, in the current runtime,
/// with room for a burst of connections: std's listeners queue 128, and
/// the benchmark's hundreds of connections opened at once overflowed
/// that, each one refused waiting a second for its SYN to be sent again.
fn listen(ip: &str) -> tokio::net::TcpListener {
    let ip: std::net::IpAddr = ip.parse().expect("an IP address");
    let socket = match ip {
        std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4(),
        std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6(),
    }
    .expect("a socket");
    socket.set_reuseaddr(true).expect("SO_REUSEADDR");
    socket
        .bind(SocketAddr::new(ip, 0))
        .expect("bind a loopback port");
    socket.listen(1024).expect("listen")
}

impl Drop for TestWeb {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn with_port(body: &Bytes, port: u16) -> Bytes {
    match std::str::from_utf8(body) {
        Ok(s) if s.contains("{PORT}") => Bytes::from(s.replace("{PORT}", &port.to_string())),
        _ => body.clone(),
    }
}

async fn serve(State(st): State<Arc<WebState>>, req: Request) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .split(':')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let method = req.method().as_str().to_string();
    st.log.lock().unwrap().push(Logged {
        host: host.clone(),
        method: method.clone(),
        path: path.clone(),
        headers: LOGGED_HEADERS
            .iter()
            .filter_map(|h| {
                let v = req.headers().get(*h)?.to_str().ok()?;
                Some((*h, v.to_string()))
            })
            .collect(),
        at: Instant::now(),
    });
    let nth = {
        let mut counts = st.counts.lock().unwrap();
        let c = counts.entry((host.clone(), path.clone())).or_insert(0);
        *c += 1;
        *c - 1
    };
    let route = st.web.sites.get(&host).and_then(|site| {
        site.routes
            .get(&path)
            .cloned()
            .or_else(|| site.generator.as_ref().and_then(|g| g(&path)))
    });
    {
        let mut flying = st.in_flight.lock().unwrap();
        let (now, most) = flying.entry(host.clone()).or_default();
        *now += 1;
        *most = (*most).max(*now);
    }
    let route = route.unwrap_or_else(|| Route::status(404));
    if !st.web.round_trip.is_zero() {
        tokio::time::sleep(st.web.round_trip).await;
    }
    let response = respond(&st, &route, &method, req.headers(), nth).await;
    if let Some((now, _)) = st.in_flight.lock().unwrap().get_mut(&host) {
        *now -= 1;
    }
    st.served.fetch_add(1, Ordering::Relaxed);
    response
}

fn respond<'a>(
    st: &'a WebState,
    route: &'a Route,
    method: &'a str,
    req_headers: &'a HeaderMap,
    nth: usize,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send + 'a>> {
    Box::pin(async move {
        let head = method == "HEAD";
        match route {
            Route::Page {
                status,
                content_type,
                body,
                headers,
                etag,
                last_modified,
            } => {
                let not_modified = not_modified(etag, last_modified, req_headers);
                let mut b = Response::builder();
                if let Some(e) = etag {
                    b = b.header(header::ETAG, e);
                }
                if let Some(lm) = last_modified {
                    b = b.header(header::LAST_MODIFIED, lm);
                }
                for (k, v) in headers {
                    b = b.header(k.as_str(), v.as_str());
                }
                if not_modified && (200..300).contains(status) {
                    return b.status(304).body(Body::empty()).unwrap();
                }
                let body = with_port(body, st.port);
                b = b
                    .status(*status)
                    .header(header::CONTENT_TYPE, content_type.as_str())
                    .header(header::CONTENT_LENGTH, body.len());
                b.body(if head {
                    Body::empty()
                } else {
                    Body::from(body)
                })
                .unwrap()
            }
            Route::Redirect { status, location } => Response::builder()
                .status(*status)
                .header(
                    header::LOCATION,
                    location.replace("{PORT}", &st.port.to_string()),
                )
                .body(Body::empty())
                .unwrap(),
            Route::Sequence(routes) => {
                let r = &routes[nth.min(routes.len() - 1)];
                respond(st, r, method, req_headers, nth).await
            }
            Route::HeadStatus(status, inner) => {
                if head {
                    Response::builder()
                        .status(*status)
                        .body(Body::empty())
                        .unwrap()
                } else {
                    respond(st, inner, method, req_headers, nth).await
                }
            }
            Route::Delay(d, inner) => {
                tokio::time::sleep(*d).await;
                respond(st, inner, method, req_headers, nth).await
            }
            Route::Truncated { declared, body } => truncated(*declared, body, head),
            Route::Endless {
                content_type,
                declared,
            } => {
                let chunk = Bytes::from(vec![0u8; 64 * 1024]);
                let stream = futures_util::stream::repeat_with(move || {
                    Ok::<Bytes, std::io::Error>(chunk.clone())
                });
                streamed(content_type, *declared, head, stream)
            }
            Route::Gzip(inner) => {
                gzipped(respond(st, inner, method, req_headers, nth).await, head).await
            }
        }
    })
}

/// Whether a request with these headers gets 304 from a page with this
/// `etag` and `last_modified`: its `If-None-Match` is the ETag, or
/// (without either) its `If-Modified-Since` is not older than the page.
fn not_modified(
    etag: &Option<String>,
    last_modified: &Option<String>,
    req_headers: &HeaderMap,
) -> bool {
    match (etag, req_headers.get(header::IF_NONE_MATCH)) {
        (Some(e), Some(v)) => v.to_str().is_ok_and(|v| v == e),
        _ => match (last_modified, req_headers.get(header::IF_MODIFIED_SINCE)) {
            (Some(lm), Some(v)) => {
                let lm = httpdate::parse_http_date(lm).ok();
                let since = v
                    .to_str()
                    .ok()
                    .and_then(|v| httpdate::parse_http_date(v).ok());
                matches!((lm, since), (Some(lm), Some(since)) if lm <= since)
            }
            _ => false,
        },
    }
}

/// [`Route::Truncated`]: the headers promise `declared` bytes of HTML;
/// `body` is sent, then the connection breaks.
fn truncated(declared: usize, body: &Bytes, head: bool) -> Response {
    let first = body.clone();
    // Send the headers and the first part, then break the connection.
    let stream = futures_util::stream::unfold(0u8, move |step| {
        let first = first.clone();
        async move {
            match step {
                0 => Some((Ok::<Bytes, std::io::Error>(first), 1)),
                1 => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Some((
                        Err(std::io::Error::other("connection dropped by the test web")),
                        2,
                    ))
                }
                _ => None,
            }
        }
    });
    streamed("text/html", declared as u64, head, stream)
}

/// [`Route::Gzip`]: the inner route's response `resp` with its body
/// gzip-compressed, `gzip` added to its codings and its length changed;
/// a 200 to a HEAD keeps no body.
async fn gzipped(resp: Response, head: bool) -> Response {
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&bytes).unwrap();
    let gz = enc.finish().unwrap();
    // Over a coding already applied, the codings are listed in the order
    // applied (`gzip, gzip`).
    let coding = match parts.headers.get(header::CONTENT_ENCODING) {
        Some(before) => format!("{}, gzip", before.to_str().unwrap_or("")),
        None => "gzip".to_string(),
    };
    parts.headers.insert(
        header::CONTENT_ENCODING,
        HeaderValue::from_str(&coding).unwrap(),
    );
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(gz.len()));
    if parts.status == StatusCode::OK && head {
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(gz))
}

/// A 200 declaring `declared` bytes of `content_type` whose body is
/// `stream` (none for a HEAD).
fn streamed<S>(content_type: &str, declared: u64, head: bool, stream: S) -> Response<Body>
where
    S: futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CONTENT_LENGTH, declared)
        .body(if head {
            Body::empty()
        } else {
            Body::from_stream(stream)
        })
        .unwrap()
}
