//! `spinneret serve`: the Worm's search page (seed 001, section 3.3), its
//! JSON API, each task's reports and a view of the last run's problems,
//! served read-only over HTTP; and GENVL's library under `/library`
//! ([`spinneret_library::pages`]), the one part that takes posts.
//!
//! Loopback by default. Every page is an auto-escaping template; no page
//! needs JavaScript or loads anything from another origin, and the
//! headers say so (`Content-Security-Policy`, `X-Content-Type-Options`,
//! `frame-ancestors`). Connections are bounded in number and in the time
//! a client has to send its request ([`connections`]); requests carry no
//! body; queries are bounded by the search ([`spinneret_worm::search`]),
//! searches in progress and waiting by [`turns`] (past that, 503), and a
//! report file is served only from under its task's output directory.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

mod connections;
mod turns;

pub use connections::{Limits, client_of};

use askama::Template;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use spinneret_core::model::Category;
use spinneret_store::{HeldStore, Store};
use spinneret_worm::index::SearchIndex;
use spinneret_worm::search::{Answer, FIELDS, MAX_QUERY, Request, SearchError, Searcher};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Results on a page of the search page.
const PAGE: usize = 10;
/// Searches run at once; more wait their turn.
const SEARCHES_AT_ONCE: usize = 16;
/// Searches waiting their turn; more are refused with 503 and `Retry-After`.
const SEARCHES_WAITING: usize = 64;
/// The largest report file served.
const MAX_REPORT_FILE: u64 = 64 << 20;
/// The policy every answer carries: nothing from elsewhere, no scripts,
/// no framing, forms only to this server.
const CSP: &str = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The searches offered ready to click: (what, query, mode).
const SAMPLES: &[(&str, &str, &str)] = &[
    ("Pages about the web", "web", "documents"),
    ("All GIF images on .edu hosts", "ext:gif host:edu", "urls"),
    ("All MPEG movies in Finland", "ext:mpg host:fi", "urls"),
    (
        "What others call a \"home page\"",
        "anchor:\"home page\"",
        "urls",
    ),
    ("Documents without a title", "bad:no-title", "documents"),
    (
        "URLs with \"photo\" in a path segment",
        "url:/photo.*/",
        "urls",
    ),
];

/// What every handler reads.
struct App {
    store: HeldStore,
    searcher: Searcher,
    searches: turns::Turns,
}

/// How and to whom a store is served.
pub struct Serving {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The bounds on connections.
    pub limits: Limits,
    /// Names answered besides the loopback ones.
    pub allowed_hosts: Vec<String>,
    /// The library's title and moderators.
    pub library: spinneret_config::LibrarySettings,
    /// What stops the server (a signal, for the command line): the
    /// connections open are finished first.
    pub stop: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
}

/// Serve `store`, with its search index at `index_dir`, until stopped;
/// `ready` hears the address listened on.
pub fn serve(
    store: Store,
    index_dir: &Path,
    at: Serving,
    ready: &mut dyn FnMut(SocketAddr),
) -> anyhow::Result<()> {
    let Serving {
        listen,
        limits,
        allowed_hosts,
        library,
        stop,
    } = at;
    let library = Arc::new(spinneret_library::request::Library::new(
        store.reader()?,
        library
            .title
            .as_deref()
            .unwrap_or(spinneret_library::DEFAULT_TITLE),
        library
            .moderators
            .into_iter()
            .map(|m| (m.name, m.password_hash))
            .collect(),
        library.internal_hosts,
    )?);
    spinneret_worm::refresh_index(&store, index_dir, &mut |m| eprintln!("{m}"))?;
    let Some(index) = SearchIndex::open(index_dir)? else {
        anyhow::bail!(
            "the search index {} could not be opened",
            index_dir.display()
        );
    };
    // The index is kept current through a connection of its own.
    let refreshing = HeldStore::new(store.reader()?);
    let app = Arc::new(App {
        store: HeldStore::new(store),
        searcher: Searcher::new(&index)?,
        searches: turns::Turns::new(SEARCHES_AT_ONCE, SEARCHES_WAITING),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = connections::listen(listen)
            .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
        ready(listener.local_addr()?);
        let refresher = tokio::spawn(keep_index_current(
            app.clone(),
            index_dir.to_path_buf(),
            Arc::new(refreshing),
        ));
        connections::serve(
            listener,
            router(
                app,
                library,
                Arc::new(Gate {
                    loopback: listen.ip().is_loopback(),
                    allowed: allowed_hosts,
                }),
                limits.idle_timeout,
            ),
            limits,
            stop,
        )
        .await;
        refresher.abort();
        Ok(())
    })
}

/// Every 10 s: when a crawl has added to the store, update the index and
/// let the searcher see it.
///
/// Through a connection of its own, not the one the pages use: an update
/// (a rebuild takes minutes on a large store) leaves the reports and
/// results pages answering. The connection is checked before each update
/// and made again when it no longer answers ([`HeldStore`]): a database
/// server restarted meanwhile is reached again.
async fn keep_index_current(app: Arc<App>, index_dir: PathBuf, own: Arc<HeldStore>) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        let app = app.clone();
        let path = index_dir.clone();
        let own = own.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let mut said = |m: String| tracing::info!("{m}");
            match own.with(|store| spinneret_worm::refresh_index(store, &path, &mut said)) {
                Ok(()) => {
                    if let Err(e) = app.searcher.reload() {
                        tracing::warn!("search index: {e}");
                    }
                }
                Err(e) => tracing::warn!("search index: {e:#}"),
            }
        })
        .await;
    }
}

fn router(
    app: Arc<App>,
    library: Arc<spinneret_library::request::Library>,
    gate: Arc<Gate>,
    deadline: std::time::Duration,
) -> Router {
    Router::new()
        .nest("/library", spinneret_library::pages::router(library))
        .route("/", get(search_page))
        .route("/api/search", get(api_search))
        .route("/reports", get(reports_page))
        .route("/reports/{task}/{*file}", get(report_file))
        .route("/results/{task}", get(results_page))
        .route("/style.css", get(style))
        // Browsers ask for it on every page, the reports' included: no icon.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(1024))
        .layer(axum::middleware::from_fn_with_state(deadline, within))
        .layer(axum::middleware::map_response(security_headers))
        .layer(axum::middleware::from_fn_with_state(gate, local_host_only))
        .with_state(app)
}

/// 413 for a body larger than `largest`, the connection closed.
fn too_large(largest: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        [(header::CONNECTION, "close")],
        format!(
            "the request's body is larger than any form here takes ({} KiB)\n",
            largest / 1024
        ),
    )
        .into_response()
}

/// A request's body must arrive whole within `deadline` (the idle
/// timeout): a client trickling a form's body a byte at a time holds its
/// connection no longer (408). The body is read here, up to the largest
/// any route takes, and the route's own bound still applies; a request
/// without a body (every search) is not timed here, so a search waiting
/// its turn is never cut off half-run.
async fn within(
    State(deadline): State<std::time::Duration>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let headers = request.headers();
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    if !has_body {
        return next.run(request).await;
    }
    let largest = spinneret_library::request::MAX_FORM;
    // A body no route takes is answered at once, unread: a client that
    // declares gigabytes does not hold its connection while it sends them.
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if request.method() != axum::http::Method::POST
        || !request.uri().path().starts_with("/library/")
    {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::CONNECTION, "close"), (header::ALLOW, "GET, HEAD")],
            "only the library's forms take a request body (POST /library/…)\n",
        )
            .into_response();
    }
    if declared.is_some_and(|n| n > largest as u64) {
        return too_large(largest);
    }
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(deadline, axum::body::to_bytes(body, largest)).await {
        Ok(Ok(bytes)) => {
            let request = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
            next.run(request).await
        }
        // The one failure a client still listening can meet: the bound.
        Ok(Err(_)) => too_large(largest),
        Err(_) => (
            StatusCode::REQUEST_TIMEOUT,
            [(header::CONNECTION, "close")],
            format!(
                "the request did not arrive whole within {}\n",
                humantime::format_duration(deadline)
            ),
        )
            .into_response(),
    }
}

/// Which `Host` names the server answers to.
struct Gate {
    /// Whether it listens on loopback (then only loopback names, and
    /// `allowed`, are answered).
    loopback: bool,
    /// Names answered besides the loopback ones (`--allow-host`: a
    /// reverse proxy's public name, when it passes the `Host` through).
    allowed: Vec<String>,
}

impl Gate {
    /// Whether a request naming `host` (a `Host` header or a request
    /// target's authority) is answered.
    fn admits(&self, host: &str) -> bool {
        !self.loopback
            || is_local_host(host)
            || split_port(host)
                .is_some_and(|(name, _)| self.allowed.iter().any(|a| a.eq_ignore_ascii_case(name)))
    }
}

/// A server on loopback answers requests for a loopback name only
/// (`localhost`, `127.0.0.1`, `[::1]`, any port): a page elsewhere that
/// points its own host name at 127.0.0.1 (DNS rebinding) would otherwise
/// read the search and post to the library with the visitor's cookies.
/// On another address (the user's choice, warned about) every name goes.
async fn local_host_only(
    State(gate): State<Arc<Gate>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next().and_then(|h| h.to_str().ok()).unwrap_or("");
    if hosts.next().is_some() {
        return (
            StatusCode::BAD_REQUEST,
            "a request names one host: it has two Host headers\n",
        )
            .into_response();
    }
    // An absolute request target (`GET http://name/ HTTP/1.1`) names its
    // host too, and it is the one HTTP/1.1 says counts.
    let target = request.uri().authority().map(|a| a.as_str().to_string());
    if gate.admits(host) && target.as_deref().is_none_or(|t| gate.admits(t)) {
        return next.run(request).await;
    }
    (
        StatusCode::MISDIRECTED_REQUEST,
        "this server answers to localhost only (it listens on loopback); open it as http://localhost:PORT/\n",
    )
        .into_response()
}

/// A `Host` value's name and port (`[::1]:8080` gives `::1`), when it is
/// well formed: a bracketed IPv6 address or a name without a colon, then
/// nothing or `:` and a port of digits.
fn split_port(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, rest) = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']')?,
        None => host.find(':').map_or((host, ""), |i| host.split_at(i)),
    };
    let port = match rest {
        "" => None,
        p => {
            let digits = p.strip_prefix(':')?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(digits.parse().ok()?)
        }
    };
    Some((name, port))
}

/// Whether a `Host` header names this machine's loopback: `localhost` or
/// a loopback address, with or without a port (of digits).
fn is_local_host(host: &str) -> bool {
    split_port(host).is_some_and(|(name, _)| {
        name.eq_ignore_ascii_case("localhost")
            || name
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

async fn security_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    // The library's pages set their own (they show images from the web).
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

/// What is said of parameters that cannot be read (one of them twice, a
/// page that is no number, …).
const UNREADABLE: &str =
    "the parameters cannot be read; use q, mode (documents or urls), page and limit, each once";

/// The search form's and the API's parameters.
#[derive(Debug, Default, Deserialize)]
struct SearchParams {
    #[serde(default)]
    q: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    page: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

impl SearchParams {
    fn urls(&self) -> bool {
        self.mode.as_deref() == Some("urls")
    }

    /// What is wrong with `mode`, when it is neither of the two.
    fn bad_mode(&self) -> Option<String> {
        match self.mode.as_deref() {
            None | Some("documents" | "urls") => None,
            Some(m) => Some(format!(
                "mode must be documents or urls, not \"{}\"",
                m.chars().take(40).collect::<String>()
            )),
        }
    }

    fn page(&self) -> usize {
        self.page.unwrap_or(1).clamp(1, 10_000)
    }

    /// The link to page `page` of these results.
    fn link(&self, page: usize) -> String {
        let q: String = url::form_urlencoded::byte_serialize(self.q.as_bytes()).collect();
        let mode = if self.urls() { "urls" } else { "documents" };
        format!("/?q={q}&mode={mode}&page={page}#results")
    }
}

/// Why a search has no answer.
enum NotRun {
    /// Too many searches wait already: try again shortly (503).
    Busy,
    /// The query is refused (400) or the index failed (500), with the reason.
    Failed(SearchError),
}

impl NotRun {
    /// The answer's status, the reason, and the `Retry-After` seconds.
    fn status(&self) -> (StatusCode, String, Option<&'static str>) {
        match self {
            NotRun::Busy => (
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is busy with other searches; try again in a moment".into(),
                Some("1"),
            ),
            NotRun::Failed(e) if e.is_the_querys() => {
                (StatusCode::BAD_REQUEST, e.to_string(), None)
            }
            NotRun::Failed(e) => {
                tracing::error!("serve: {e}");
                (StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), None)
            }
        }
    }
}

/// Run a search off the async threads, at most [`SEARCHES_AT_ONCE`] at a
/// time and [`SEARCHES_WAITING`] waiting.
async fn run_search(
    app: &Arc<App>,
    p: &SearchParams,
    limit: usize,
) -> Result<(Answer, std::time::Duration), NotRun> {
    let Some(turn) = app.searches.take().await else {
        return Err(NotRun::Busy);
    };
    let app = app.clone();
    let query = p.q.clone();
    let urls = p.urls();
    let offset = (p.page() - 1).saturating_mul(limit);
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let req = Request {
            query: &query,
            urls,
            limit,
            offset,
            explain: false,
        };
        let answer = app.searcher.search(&req).map(|a| (a, started.elapsed()));
        drop(turn);
        answer
    })
    .await
    .map_err(|e| SearchError::Damaged(format!("the search failed: {e}")))
    .and_then(|r| r)
    .map_err(NotRun::Failed)
}

#[derive(Template)]
#[template(path = "search.html")]
struct SearchPage<'a> {
    version: &'a str,
    query: &'a str,
    urls: bool,
    error: Option<String>,
    answer: Option<Answer>,
    first: usize,
    last: usize,
    took: String,
    previous: Option<String>,
    next: Option<String>,
    samples: Vec<(&'a str, String)>,
    fields: &'a [(&'a str, &'a str)],
}

async fn search_page(
    State(app): State<Arc<App>>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Response {
    let (p, unreadable) = match params {
        Ok(Query(p)) => (p, false),
        Err(_) => (SearchParams::default(), true),
    };
    let mut page = SearchPage {
        version: env!("CARGO_PKG_VERSION"),
        query: &p.q,
        urls: p.urls(),
        error: None,
        answer: None,
        first: 0,
        last: 0,
        took: String::new(),
        previous: None,
        next: None,
        samples: SAMPLES
            .iter()
            .map(|(what, q, mode)| {
                let q: String = url::form_urlencoded::byte_serialize(q.as_bytes()).collect();
                (*what, format!("/?q={q}&mode={mode}#results"))
            })
            .collect(),
        fields: FIELDS,
    };
    let refused = match unreadable {
        true => Some(UNREADABLE.to_string()),
        false => p.bad_mode(),
    };
    if let Some(why) = refused {
        page.error = Some(why);
        return render(StatusCode::BAD_REQUEST, &page);
    }
    if !p.q.trim().is_empty() {
        match run_search(&app, &p, PAGE).await {
            Ok((answer, took)) => {
                let offset = (p.page() - 1) * PAGE;
                page.first = offset + 1;
                page.last = offset + answer.hits.len();
                page.took = format!("{:.1} ms", took.as_secs_f64() * 1000.0);
                page.previous = (p.page() > 1).then(|| p.link(p.page() - 1));
                page.next = (page.last < answer.total).then(|| p.link(p.page() + 1));
                page.answer = Some(answer);
            }
            Err(e) => {
                let (status, reason, retry) = e.status();
                page.error = Some(reason);
                return retry_after(render(status, &page), retry);
            }
        }
    }
    render(StatusCode::OK, &page)
}

async fn api_search(
    State(app): State<Arc<App>>,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> Response {
    let Ok(Query(p)) = params else {
        return api_error(StatusCode::BAD_REQUEST, UNREADABLE);
    };
    if let Some(bad) = p.bad_mode() {
        return api_error(StatusCode::BAD_REQUEST, &bad);
    }
    if p.q.chars().count() > MAX_QUERY {
        return api_error(
            StatusCode::BAD_REQUEST,
            &format!("the query is longer than {MAX_QUERY} characters"),
        );
    }
    let limit = p.limit.unwrap_or(PAGE);
    match run_search(&app, &p, limit).await {
        Ok((answer, took)) => {
            // The same object as `search --json`'s.
            let body = answer.json(&p.q, p.urls(), p.page(), limit, took);
            match serde_json::to_string(&body) {
                Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
                Err(e) => server_error(&anyhow::Error::from(e)),
            }
        }
        Err(e) => {
            let (status, reason, retry) = e.status();
            retry_after(api_error(status, &reason), retry)
        }
    }
}

/// `r` with a `Retry-After` of `seconds`, when given.
fn retry_after(mut r: Response, seconds: Option<&'static str>) -> Response {
    if let Some(after) = seconds {
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static(after));
    }
    r
}

fn api_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({"schema": spinneret_worm::search::SCHEMA, "error": message});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A task of the last run, as the reports page lists it.
struct TaskLine {
    id: i64,
    name: String,
    kind: String,
    top: String,
    has_index: bool,
    problems: usize,
}

#[derive(Template)]
#[template(path = "reports.html")]
struct ReportsPage<'a> {
    version: &'a str,
    run: i64,
    started: String,
    tasks: Vec<TaskLine>,
}

async fn reports_page(State(app): State<Arc<App>>) -> Response {
    let answer = blocking(app, |store| {
        let Some(run) = store.last_run()? else {
            return Ok((0, String::new(), Vec::new()));
        };
        let mut tasks = Vec::new();
        for t in store.run_tasks(run.id)? {
            let problems = store
                .run_results(run.id, Some(t.id))?
                .iter()
                .filter(|(r, _)| is_problem(r.category))
                .count();
            let has_index = t
                .output_dir
                .as_deref()
                .is_some_and(|d| Path::new(d).join("index.html").is_file());
            tasks.push(TaskLine {
                id: t.id,
                name: t.name,
                kind: t.kind,
                top: t.top_url,
                has_index,
                problems,
            });
        }
        let started = jiff::Timestamp::from_second(run.started_at)
            .map(|t| t.to_string())
            .unwrap_or_default();
        Ok((run.id, started, tasks))
    })
    .await;
    match answer {
        Ok((run, started, tasks)) => render(
            StatusCode::OK,
            &ReportsPage {
                version: env!("CARGO_PKG_VERSION"),
                run,
                started,
                tasks,
            },
        ),
        Err(e) => server_error(&e),
    }
}

fn is_problem(c: Category) -> bool {
    matches!(c, Category::Broken | Category::Moved | Category::Blocked)
}

/// One problem of a task.
struct ProblemRow {
    url: String,
    what: String,
    referrer: Option<String>,
}

/// The problems of one category.
struct ProblemGroup {
    category: &'static str,
    heading: &'static str,
    rows: Vec<ProblemRow>,
}

#[derive(Template)]
#[template(path = "results.html")]
struct ResultsPage<'a> {
    version: &'a str,
    task: String,
    groups: Vec<ProblemGroup>,
}

async fn results_page(State(app): State<Arc<App>>, UrlPath(task): UrlPath<i64>) -> Response {
    let answer = blocking(app, move |store| {
        let Some(run) = store.last_run()? else {
            return Ok(None);
        };
        let Some(t) = store.run_tasks(run.id)?.into_iter().find(|t| t.id == task) else {
            return Ok(None);
        };
        let results = store.run_results(run.id, Some(t.id))?;
        let groups = [
            (Category::Broken, "Broken links"),
            (Category::Moved, "Moved"),
            (Category::Blocked, "Blocked (the server refused the robot)"),
        ]
        .into_iter()
        .map(|(c, heading)| ProblemGroup {
            category: c.as_str(),
            heading,
            rows: results
                .iter()
                .filter(|(r, _)| r.category == c)
                .map(|(r, _)| ProblemRow {
                    url: r.url.clone(),
                    what: match (&r.final_url, r.status, &r.error) {
                        (Some(f), _, _) if c == Category::Moved => format!("moved to {f}"),
                        (_, Some(s), _) => format!("status {s}"),
                        (_, None, Some(e)) => e.clone(),
                        _ => String::new(),
                    },
                    referrer: r.referrer.clone(),
                })
                .collect(),
        })
        .collect();
        Ok(Some((t.name, groups)))
    })
    .await;
    match answer {
        Ok(Some((task, groups))) => render(
            StatusCode::OK,
            &ResultsPage {
                version: env!("CARGO_PKG_VERSION"),
                task,
                groups,
            },
        ),
        Ok(None) => not_found().await,
        Err(e) => server_error(&e),
    }
}

/// A file of a task's reports, from under its output directory only.
async fn report_file(
    State(app): State<Arc<App>>,
    UrlPath((task, file)): UrlPath<(i64, String)>,
) -> Response {
    let dir = blocking(app, move |store| {
        let Some(run) = store.last_run()? else {
            return Ok(None);
        };
        Ok(store
            .run_tasks(run.id)?
            .into_iter()
            .find(|t| t.id == task)
            .and_then(|t| t.output_dir))
    })
    .await;
    // The file is read with the store let go: a large report holds up no
    // other page.
    let answer = match dir {
        Ok(Some(dir)) => tokio::task::spawn_blocking(move || read_report(Path::new(&dir), &file))
            .await
            .map_err(anyhow::Error::from),
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    };
    match answer {
        Ok(Some((bytes, mime))) => ([(header::CONTENT_TYPE, mime)], bytes).into_response(),
        Ok(None) => not_found().await,
        Err(e) => server_error(&e),
    }
}

/// The kinds of file a report is made of, by extension: a task's output
/// directory may be shared with other files (`output = "."` beside the
/// configuration and the store), which are not the server's to hand out.
const REPORT_KINDS: &[&str] = &[
    "html", "htm", "css", "jsonl", "json", "md", "csv", "xml", "sarif", "txt", "png", "gif", "jpg",
    "jpeg", "svg", "webp", "ico", "pdf",
];

/// The file `rel` under `dir`: plain path segments only (none hidden, as
/// `.git` or `.htpasswd`), a report's kind of file ([`REPORT_KINDS`]),
/// the file itself inside `dir` once links are resolved, and no larger
/// than [`MAX_REPORT_FILE`].
fn read_report(dir: &Path, rel: &str) -> Option<(Vec<u8>, String)> {
    let plain = rel
        .split('/')
        .all(|s| !s.is_empty() && !s.starts_with('.') && !s.contains('\\'));
    let kind = Path::new(rel)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| REPORT_KINDS.contains(&e.to_ascii_lowercase().as_str()));
    if !plain || !kind {
        return None;
    }
    let root = dir.canonicalize().ok()?;
    let path = root.join(rel).canonicalize().ok()?;
    if !path.starts_with(&root) || !path.is_file() {
        return None;
    }
    if std::fs::metadata(&path).ok()?.len() > MAX_REPORT_FILE {
        return None;
    }
    let mime = mime_guess::from_path(&path)
        .first_or_octet_stream()
        .to_string();
    Some((std::fs::read(&path).ok()?, mime))
}

/// Run `f` with the store off the async threads.
async fn blocking<T: Send + 'static>(
    app: Arc<App>,
    f: impl FnOnce(&Store) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(move || app.store.with(|store| f(store))).await?
}

async fn style() -> Response {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        include_str!("../../templates/style.css"),
    )
        .into_response()
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Html("<!DOCTYPE html><title>Not found</title><p>Not found. <a href=\"/\">Search</a>"),
    )
        .into_response()
}

fn server_error(e: &anyhow::Error) -> Response {
    tracing::error!("serve: {e:#}");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "the store could not be read; see the server's log",
    )
        .into_response()
}

fn render(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => server_error(&anyhow::anyhow!("template: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_local_hosts() {
        for local in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.0.0.1:8080",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(is_local_host(local), "{local}");
        }
        for foreign in [
            "evil.example",
            "evil.example:8080",
            "localhost.evil.example",
            "10.0.0.1:8080",
            "[::ffff:10.0.0.1]:80",
            "",
            // Ports that are no ports (a hostile client's, not a browser's).
            "127.0.0.1:abc",
            "127.0.0.1:99999",
            "localhost:evil.example",
            "127.0.0.1:8080@evil.example",
            "[::1]evil.example",
            "127.0.0.1:",
        ] {
            assert!(!is_local_host(foreign), "{foreign}");
        }
    }

    #[test]
    fn a_proxys_name_is_answered_when_allowed() {
        let gate = Gate {
            loopback: true,
            allowed: vec!["search.example.org".into()],
        };
        assert!(gate.admits("search.example.org"));
        assert!(gate.admits("SEARCH.example.org:443"));
        assert!(gate.admits("localhost:8080"));
        assert!(!gate.admits("evil.example"));
        assert!(!gate.admits("search.example.org.evil.example"));
        assert!(!gate.admits("search.example.org:x"));
        let open = Gate {
            loopback: false,
            allowed: Vec::new(),
        };
        assert!(open.admits("anything.example"));
    }

    #[test]
    fn report_files_stay_under_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/index.html"), "<p>ok").unwrap();
        std::fs::write(dir.path().join("secret"), "no").unwrap();
        let reports = dir.path().join("sub");
        assert_eq!(read_report(&reports, "index.html").unwrap().1, "text/html");
        assert!(read_report(&reports, "../secret").is_none());
        assert!(read_report(&reports, "/etc/passwd").is_none());
        assert!(read_report(&reports, "a//b").is_none());
        // An output directory shared with the store and the configuration
        // (`output = "."`): only the reports' kinds of file, none hidden.
        for other in ["s.db", "s.db-wal", "c.toml", ".htpasswd", "secrets.txt.bak"] {
            std::fs::write(reports.join(other), "private").unwrap();
            assert!(read_report(&reports, other).is_none(), "{other}");
        }
        std::fs::create_dir(reports.join(".git")).unwrap();
        std::fs::write(reports.join(".git/config.txt"), "private").unwrap();
        assert!(read_report(&reports, ".git/config.txt").is_none());
        std::fs::write(reports.join("report.jsonl"), "{}").unwrap();
        assert!(read_report(&reports, "report.jsonl").is_some());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), reports.join("link")).unwrap();
            assert!(read_report(&reports, "link").is_none());
        }
    }
}
