//! The fetch stage: one request at a time, exactly as the engine asks for it.
//!
//! The [`Fetcher`] sends the polite headers (User-Agent, From, Referer),
//! conditional headers when it has validators, never follows redirects itself
//! (the engine does, so each hop passes robots and politeness), decodes gzip,
//! deflate and brotli, and caps the body *after* decoding so a compression bomb
//! stops at the cap. `file://` URLs are served from the local file system.

pub mod cookies;
mod decode;
mod file;
pub use file::LocalNames;
pub mod politeness;
pub mod public_dns;
pub mod retry;
pub mod robots;
pub mod trust;

use bytes::BytesMut;
use reqwest::header::{self, HeaderMap, HeaderValue};
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};
use url::Url;

/// How the fetcher talks to servers: the polite headers, the time limits,
/// the connections it keeps per site, fixed addresses and the body cap.
/// The configuration's settings make one (`config::Settings::crawl`).
#[derive(Clone, Debug)]
pub struct FetchSettings {
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The `From` header: where a webmaster can reach the person running the robot.
    pub from: Option<String>,
    /// The `Accept` header: the media types the robot asks for.
    pub accept: String,
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// Time allowed for a whole request, body included.
    pub timeout: Duration,
    /// Idle connections kept open per site (the requests in flight to one site).
    pub idle_per_site: usize,
    /// Host names resolved to fixed addresses instead of DNS (like curl's `--resolve`).
    pub resolve: BTreeMap<String, IpAddr>,
    /// The most bytes of a body read (after decompression).
    pub max_body: u64,
    /// Connect only to public addresses: a name that resolves only to this
    /// machine or its network is refused ([`public_dns::PublicOnly`]);
    /// the names of `resolve` are still the user's.
    pub public_only: bool,
    /// Headers and credentials sent to the URLs under a prefix (the
    /// configuration's `[[request]]` tables), in order.
    pub requests: Vec<RequestRule>,
    /// The root of a local tree (`root_dir`, `--root-dir`), as a `file:`
    /// directory URL: a root-relative reference (`/p1.html`) of a `file:`
    /// document under it resolves against it, as the web server it is
    /// deployed to would.
    pub root_dir: Option<url::Url>,
    /// The cookie jar the crawl's requests send from and keep into
    /// (`cookie_jar`, `--cookie-jar`), if any.
    pub cookies: Option<cookies::CookieJar>,
    /// Hosts of this machine or its network the operator allows whatever
    /// led to them (`internal_hosts`): names as written in URLs, or
    /// addresses. Not held to the address rule.
    pub internal_hosts: Vec<String>,
    /// Which certificates are trusted beside the system's authorities
    /// (`ca_file`, `--cacert`), or whether any is (`--insecure`).
    pub trust: trust::CertificateTrust,
    /// Read `file:` URLs only (`--offline`): any other request is refused
    /// before it leaves, as vetoed ([`FetchError::Vetoed`]).
    pub offline: bool,
    /// Which file a `file:` URL is read from: a directory's index files,
    /// a missing file's fallback extensions.
    pub local_names: LocalNames,
}

/// What is sent with every request under a URL prefix: headers, and HTTP
/// basic authentication. A prefix holds on its origin only (scheme, host
/// and port the same, the path under the prefix's), so a redirect to
/// another host never takes the credentials along.
#[derive(Clone)]
pub struct RequestRule {
    /// Where it applies.
    pub prefix: url::Url,
    /// Headers to add (name, value), checked when the rule was made.
    pub headers: Vec<(String, String)>,
    /// A user name and its password, for `Authorization: Basic`.
    pub basic_auth: Option<(String, String)>,
}

impl RequestRule {
    /// Whether `url` is under the rule's prefix.
    pub fn applies(&self, url: &url::Url) -> bool {
        url.scheme() == self.prefix.scheme()
            && url.host_str() == self.prefix.host_str()
            && url.port_or_known_default() == self.prefix.port_or_known_default()
            && url.path().starts_with(self.prefix.path())
    }
}

// Never the password, in a log or an error.
impl std::fmt::Debug for RequestRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestRule")
            .field("prefix", &self.prefix.as_str())
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
            )
            .field(
                "basic_auth",
                &self.basic_auth.as_ref().map(|(user, _)| user),
            )
            .finish()
    }
}

/// The request method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Headers only: leaves.
    Head,
    /// The whole resource: documents.
    Get,
}

impl Method {
    /// `HEAD` or `GET`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Head => "HEAD",
            Method::Get => "GET",
        }
    }
}

/// Which body to read after a GET.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyWanted {
    /// None (a GET standing in for a refused HEAD).
    No,
    /// Only when the response is a page the crawl parses ([`is_page`]:
    /// HTML or Markdown), or has no type and looks like HTML.
    IfHtml,
    /// Always (robots.txt), up to the given cap.
    Always(u64),
}

/// Validators from an earlier result, for a conditional request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag`, sent as `If-None-Match`.
    pub etag: Option<String>,
    /// `Last-Modified` as sent by the server, sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

/// One request to make.
#[derive(Clone, Debug)]
pub struct FetchRequest {
    /// What to request.
    pub url: Url,
    /// HEAD or GET.
    pub method: Method,
    /// The document the link came from (`Referer`).
    pub referrer: Option<Url>,
    /// Validators for a conditional request.
    pub validators: Option<Validators>,
    /// Which body to read.
    pub body: BodyWanted,
    /// Headers added by fetch-hook plugins, (name, value).
    pub extra_headers: Vec<(String, String)>,
    /// Keep every response header as received in
    /// [`FetchResponse::raw_headers`] (for an archive of the exchange).
    pub keep_headers: bool,
    /// Hold it to the address rule: a page from elsewhere led to it, so it
    /// may not reach this machine or its network
    /// ([`Fetcher::address_refusal`], [`public_dns::PublicOnly`]).
    pub public_only: bool,
}

/// The response headers the crawler keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResponseHeaders {
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Content-Length`.
    pub content_length: Option<u64>,
    /// `ETag`.
    pub etag: Option<String>,
    /// `Last-Modified`, as sent.
    pub last_modified: Option<String>,
    /// `Expires`, as sent.
    pub expires: Option<String>,
    /// `Location`, as sent.
    pub location: Option<String>,
    /// `Retry-After`, as sent.
    pub retry_after: Option<String>,
    /// `Owner` (MOMspider's proposed header).
    pub owner: Option<String>,
    /// `Cache-Control`, as sent.
    pub cache_control: Option<String>,
}

/// A body read from a response.
#[derive(Clone, Debug, Default)]
pub struct Body {
    /// The decoded bytes, at most the cap (shared, not copied, by the parse,
    /// the hooks and the store).
    pub bytes: bytes::Bytes,
    /// Whether the cap cut it short.
    pub truncated: bool,
}

/// A response.
#[derive(Clone, Debug)]
pub struct FetchResponse {
    /// The status code.
    pub status: u16,
    /// Headers of interest.
    pub headers: ResponseHeaders,
    /// The body, when one was wanted and read.
    pub body: Option<Body>,
    /// Time from sending to the end of the body.
    pub elapsed: Duration,
    /// Every header as received, in order, when the request asked to keep
    /// them ([`FetchRequest::keep_headers`]); empty otherwise.
    pub raw_headers: Vec<(String, String)>,
}

/// Whether a Content-Type value names HTML.
pub fn is_html(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        let mime = ct.split(';').next().unwrap_or("").trim();
        mime.eq_ignore_ascii_case("text/html") || mime.eq_ignore_ascii_case("application/xhtml+xml")
    })
}

/// Whether a Content-Type value names Markdown (`text/markdown`, RFC
/// 7763, and the older `text/x-markdown`): a local `.md` file is read so,
/// and a server that says so.
pub fn is_markdown(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        let mime = ct.split(';').next().unwrap_or("").trim();
        mime.eq_ignore_ascii_case("text/markdown") || mime.eq_ignore_ascii_case("text/x-markdown")
    })
}

/// Whether a Content-Type value names a page the crawl parses for its
/// links itself: HTML or Markdown.
pub fn is_page(content_type: Option<&str>) -> bool {
    is_html(content_type) || is_markdown(content_type)
}

/// The HTTP client could not be set up from the settings (a header value
/// that is not one, a TLS setup that failed): said as it is.
#[derive(Debug, thiserror::Error)]
#[error("the HTTP client cannot be set up: {0}")]
pub struct ClientError(pub String);

/// Why a request produced no response.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// No complete answer in the time allowed.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The host name does not exist: DNS said so (not a resolver that
    /// could not be asked, which is [`FetchError::Connect`]). It will not
    /// exist a second later, so it is not retried.
    #[error("no such host: {0}")]
    NoSuchHost(String),
    /// The connection could not be made (DNS, refused, TLS).
    #[error("connection failed: {0}")]
    Connect(String),
    /// The server's certificate is not trusted: the reason, and what to
    /// do about it ([`trust::CertificateTrust`]). Not retried: it will
    /// not be trusted a second later.
    #[error("{0}")]
    Certificate(String),
    /// The server answered something that is not HTTP, or closed the
    /// connection before it answered.
    #[error("HTTP protocol error: {0}")]
    Protocol(String),
    /// The connection broke while the body was read.
    #[error("response body incomplete: {0}")]
    Body(String),
    /// Anything else the HTTP layer reported.
    #[error("request failed: {0}")]
    Other(String),
    /// The address rule: a URL that a page from elsewhere led to names
    /// this machine or its network (by its host, or by every address its
    /// name resolves to), and the request was not made. The reason says
    /// which address and how to allow it.
    #[error("{0}")]
    AddressRule(String),
    /// A fetch-hook plugin vetoed the request; the reason is its.
    #[error("{0}")]
    Vetoed(String),
    /// A local file cannot be read as asked (a directory without an
    /// index.html); the reason says why.
    #[error("{0}")]
    Local(String),
}

impl FetchError {
    /// Whether trying again later may help.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            FetchError::Other(_)
                | FetchError::Vetoed(_)
                | FetchError::NoSuchHost(_)
                | FetchError::Certificate(_)
                | FetchError::Local(_)
                | FetchError::AddressRule(_)
        )
    }
}

/// Sends requests for the crawler.
#[derive(Clone)]
pub struct Fetcher {
    /// Connects wherever a name resolves (the user's own URLs).
    client: reqwest::Client,
    /// Connects only to public addresses ([`public_dns::PublicOnly`]): for
    /// the requests a page from elsewhere led to
    /// ([`FetchRequest::public_only`]).
    public: reqwest::Client,
    /// Whether every request is held to the address rule
    /// ([`FetchSettings::public_only`]).
    public_only: bool,
    timeout: Duration,
    requests: std::sync::Arc<[RequestRule]>,
    root_dir: Option<std::sync::Arc<url::Url>>,
    /// The real paths of the directories local files may be read from
    /// (see [`Fetcher::with_local_roots`]); empty: no bound.
    local_roots: std::sync::Arc<[std::path::PathBuf]>,
    /// The names given fixed addresses (`resolve`) and the operator's
    /// `internal_hosts`: the user's word, not held to the address rule.
    own_hosts: std::sync::Arc<[String]>,
    /// Only `file:` URLs are read ([`FetchSettings::offline`]).
    offline: bool,
    /// Which file a `file:` URL is read from ([`FetchSettings::local_names`]).
    local_names: std::sync::Arc<LocalNames>,
}

/// A host as [`Fetcher::own_host`] compares it: lower-case, without the
/// brackets of an IPv6 address or a final dot.
fn own_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// What went wrong in the HTTP exchange itself, when that is what happened:
/// a response that does not parse, or a connection closed before the answer.
fn protocol_error(e: &reqwest::Error) -> Option<String> {
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        if let Some(h) = err.downcast_ref::<hyper::Error>() {
            return if h.is_parse() || h.is_parse_status() {
                Some(format!("the server's response is not valid HTTP ({h})"))
            } else if h.is_incomplete_message() {
                Some("the server closed the connection before it answered".into())
            } else {
                None
            };
        }
        cur = err.source();
    }
    None
}

/// Whether `e` says that DNS answered that the name does not exist
/// (getaddrinfo's `EAI_NONAME` or `EAI_NODATA`, as each system words it;
/// std reports them only as text), rather than that it could not be asked
/// (`EAI_AGAIN`, "Temporary failure in name resolution": worth a retry).
fn no_such_host(e: &dyn std::error::Error) -> bool {
    const SAID: [&str; 5] = [
        "Name or service not known",                    // glibc EAI_NONAME
        "No address associated with hostname",          // glibc EAI_NODATA
        "nodename nor servname provided, or not known", // BSD, macOS
        "No such host is known",                        // Windows
        "Name does not resolve",                        // musl
    ];
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let text = err.to_string();
        if SAID.iter().any(|s| text.contains(s)) {
            return true;
        }
        cur = err.source();
    }
    false
}

/// The error chain of an error as one line, most specific last.
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !s.starts_with("error sending request") && !parts.contains(&s) {
            parts.push(s);
        }
        cur = err.source();
    }
    if parts.is_empty() {
        e.to_string()
    } else {
        parts.join(": ")
    }
}

/// The headers of a response that a fetch reads.
fn response_headers(h: &HeaderMap) -> ResponseHeaders {
    ResponseHeaders {
        content_type: header_str(h, header::CONTENT_TYPE),
        content_length: header_str(h, header::CONTENT_LENGTH).and_then(|s| s.parse().ok()),
        etag: header_str(h, header::ETAG),
        last_modified: header_str(h, header::LAST_MODIFIED),
        expires: header_str(h, header::EXPIRES),
        location: header_str(h, header::LOCATION),
        retry_after: header_str(h, header::RETRY_AFTER),
        owner: header_str(h, "owner"),
        cache_control: header_str(h, header::CACHE_CONTROL),
    }
}

/// Every header of a response, in order, its value read as UTF-8 (lossily).
fn all_headers(h: &HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .map(|(n, v)| {
            (
                n.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// A body with the content codings the HTTP client left undone (it
/// decodes one, not a stack) decoded, up to `cap` bytes: `coding` is what
/// Content-Encoding still says; a body already cut short is left as it is.
fn decode_rest(
    bytes: bytes::Bytes,
    truncated: bool,
    coding: Option<&str>,
    cap: u64,
) -> Result<(bytes::Bytes, bool), FetchError> {
    let Some(coding) = coding.filter(|_| !truncated) else {
        return Ok((bytes, truncated));
    };
    match decode::decode(coding, &bytes, cap) {
        Ok(Some((decoded, cut))) => Ok((decoded.into(), truncated | cut)),
        Ok(None) => Ok((bytes, truncated)),
        Err(e) => Err(FetchError::Body(format!(
            "the body is not what its Content-Encoding ({coding}) says: {e}"
        ))),
    }
}

fn header_str(h: &HeaderMap, name: impl header::AsHeaderName) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether bytes look like the start of an HTML document (for responses without a type).
fn sniff_html(bytes: &[u8]) -> bool {
    let head: Vec<u8> = bytes
        .iter()
        .copied()
        .skip_while(u8::is_ascii_whitespace)
        .take(64)
        .collect::<Vec<u8>>()
        .to_ascii_lowercase();
    head.starts_with(b"<!doctype html") || head.starts_with(b"<html") || head.starts_with(b"<head")
}

impl Fetcher {
    /// Build the HTTP client for these settings.
    pub fn new(settings: &FetchSettings) -> Result<Fetcher, ClientError> {
        spinneret_core::tls::install_provider();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_str(&settings.accept).map_err(|_| {
                ClientError(format!(
                    "`accept` is not a valid header value: {}",
                    settings.accept
                ))
            })?,
        );
        if let Some(from) = &settings.from {
            headers.insert(
                header::FROM,
                HeaderValue::from_str(from).map_err(|_| {
                    ClientError(format!("`from` is not a valid header value: {from}"))
                })?,
            );
        }
        let build = |public_only: bool| {
            let mut builder = reqwest::Client::builder()
                .user_agent(settings.user_agent.clone())
                .default_headers(headers.clone())
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(settings.connect_timeout)
                .timeout(settings.timeout)
                .pool_max_idle_per_host(settings.idle_per_site.max(1))
                .pool_idle_timeout(Duration::from_secs(30))
                .tcp_nodelay(true);
            builder = settings.trust.apply(builder);
            if public_only {
                // Through a proxy the resolver would judge the proxy's name,
                // not the target's: the public client connects directly.
                builder = builder.dns_resolver(public_dns::PublicOnly).no_proxy();
            }
            for (host, ip) in &settings.resolve {
                builder = builder.resolve(host, std::net::SocketAddr::new(*ip, 0));
            }
            if let Some(jar) = &settings.cookies {
                builder = builder.cookie_provider(jar.provider());
            }
            builder.build().map_err(|e| ClientError(e.to_string()))
        };
        let public = build(true)?;
        let client = match settings.public_only {
            true => public.clone(),
            false => build(false)?,
        };
        Ok(Fetcher {
            client,
            public,
            public_only: settings.public_only,
            own_hosts: settings
                .resolve
                .keys()
                .chain(&settings.internal_hosts)
                .map(|h| own_host(h))
                .collect(),
            timeout: settings.timeout,
            requests: settings.requests.clone().into(),
            root_dir: settings.root_dir.clone().map(std::sync::Arc::new),
            local_roots: std::sync::Arc::new([]),
            offline: settings.offline,
            local_names: std::sync::Arc::new(settings.local_names.clone()),
        })
    }

    /// The fetcher, reading local files only from the directories of these
    /// `tops` that are `file:` URLs and from the root directory: a file
    /// whose real path (its symbolic links followed) lies elsewhere is not
    /// read (a link in a tree to `/etc/passwd` stays a name).
    pub fn with_local_roots<'u>(mut self, tops: impl Iterator<Item = &'u url::Url>) -> Fetcher {
        let dirs = tops
            .filter(|t| t.scheme() == "file")
            .filter_map(|t| {
                let mut dir = t.clone();
                dir.set_path(spinneret_core::urls::directory_of(t));
                dir.to_file_path().ok()
            })
            .chain(self.root_dir.as_deref().and_then(|r| r.to_file_path().ok()));
        let mut roots: Vec<std::path::PathBuf> =
            dirs.filter_map(|d| std::fs::canonicalize(d).ok()).collect();
        roots.sort();
        roots.dedup();
        self.local_roots = roots.into();
        self
    }

    /// Why the address rule refuses `url` by its host alone, if it does:
    /// `localhost` or an address of this machine or its network written
    /// in the URL (a name is judged on what it resolves to, when the
    /// connection is made). Names given fixed addresses are the user's.
    pub fn address_refusal(&self, url: &Url) -> Option<FetchError> {
        let host = url.host_str()?;
        if url.scheme() == "file" || self.own_host(url) {
            return None;
        }
        spinneret_core::urls::local_host(url)
            .then(|| FetchError::AddressRule(public_dns::refusal(host, None)))
    }

    /// Whether `url`'s host is the user's own word: given a fixed address
    /// (`resolve`) or allowed by `internal_hosts`.
    pub fn own_host(&self, url: &Url) -> bool {
        url.host_str()
            .is_some_and(|h| self.own_hosts.iter().any(|o| *o == own_host(h)))
    }

    /// The root of a local tree that root-relative references of its
    /// documents resolve against, if one was given.
    pub fn root_dir(&self) -> Option<&url::Url> {
        self.root_dir.as_deref()
    }

    /// Make one request.
    pub async fn fetch(
        &self,
        req: &FetchRequest,
        max_body: u64,
    ) -> Result<FetchResponse, FetchError> {
        self.fetch_with(req, max_body, |_| std::future::ready(false))
            .await
    }

    /// Make one request; for a GET that wants an HTML body but gets another
    /// type, `other_body` decides from the headers whether to read the body
    /// anyway (a parser plugin may read that type).
    pub async fn fetch_with<F, Fut>(
        &self,
        req: &FetchRequest,
        max_body: u64,
        other_body: F,
    ) -> Result<FetchResponse, FetchError>
    where
        F: FnOnce(&ResponseHeaders) -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        if req.url.scheme() == "file" {
            return file::fetch(req, max_body, &self.local_roots, &self.local_names).await;
        }
        if self.offline {
            return Err(FetchError::Vetoed(
                "not requested: --offline reads local files only".into(),
            ));
        }
        let public_only = (self.public_only || req.public_only) && !self.own_host(&req.url);
        if public_only && let Some(refusal) = self.address_refusal(&req.url) {
            return Err(refusal);
        }
        let start = Instant::now();
        let mut resp = self
            .request_builder(req, public_only)
            .send()
            .await
            .map_err(|e| self.map_err(&e))?;
        let h = resp.headers();
        let headers = response_headers(h);
        let raw_headers = match req.keep_headers {
            true => all_headers(h),
            false => Vec::new(),
        };
        // The client removes Content-Encoding when it decodes the body.
        let still_encoded = header_str(h, header::CONTENT_ENCODING);
        let status = resp.status().as_u16();
        let cap = match req.body {
            _ if req.method == Method::Head || !(200..300).contains(&status) => None,
            BodyWanted::No => None,
            BodyWanted::Always(cap) => Some(cap.min(max_body)),
            BodyWanted::IfHtml => match headers.content_type.as_deref() {
                Some(_) if is_page(headers.content_type.as_deref()) => Some(max_body),
                Some(_) if other_body(&headers).await => Some(max_body),
                Some(_) => None,
                None => Some(max_body),
            },
        };
        let mut body = None;
        if let Some(cap) = cap {
            let declared = headers.content_length.unwrap_or(0);
            let (bytes, truncated) = self.read_body(&mut resp, cap, declared).await?;
            let (bytes, truncated) = decode_rest(bytes, truncated, still_encoded.as_deref(), cap)?;
            let untyped = headers.content_type.is_none() && req.body == BodyWanted::IfHtml;
            if !untyped || sniff_html(&bytes) {
                body = Some(Body { bytes, truncated });
            }
        }
        Ok(FetchResponse {
            status,
            headers,
            body,
            elapsed: start.elapsed(),
            raw_headers,
        })
    }

    /// The request `req` makes, through the client for public addresses
    /// only when `public_only`: its referrer (never a `file:` one), its
    /// validators, the headers and credentials of the request rules that
    /// apply to its URL, and its own extra headers.
    fn request_builder(&self, req: &FetchRequest, public_only: bool) -> reqwest::RequestBuilder {
        let method = match req.method {
            Method::Head => reqwest::Method::HEAD,
            Method::Get => reqwest::Method::GET,
        };
        let client = match public_only {
            true => &self.public,
            false => &self.client,
        };
        let mut rb = client.request(method, req.url.clone());
        if let Some(r) = &req.referrer
            && r.scheme() != "file"
        {
            rb = rb.header(header::REFERER, r.as_str());
        }
        if let Some(v) = &req.validators {
            if let Some(etag) = &v.etag {
                rb = rb.header(header::IF_NONE_MATCH, etag.as_str());
            }
            if let Some(lm) = &v.last_modified {
                rb = rb.header(header::IF_MODIFIED_SINCE, lm.as_str());
            }
        }
        for rule in self.requests.iter().filter(|r| r.applies(&req.url)) {
            for (name, value) in &rule.headers {
                rb = rb.header(name.as_str(), value.as_str());
            }
            if let Some((user, password)) = &rule.basic_auth {
                rb = rb.basic_auth(user, Some(password));
            }
        }
        for (name, value) in &req.extra_headers {
            rb = rb.header(name.as_str(), value.as_str());
        }
        rb
    }

    /// A response's body, up to `cap` bytes (`declared` is its
    /// Content-Length, 0 if not sent), and whether it was cut there.
    async fn read_body(
        &self,
        resp: &mut reqwest::Response,
        cap: u64,
        declared: u64,
    ) -> Result<(bytes::Bytes, bool), FetchError> {
        // The declared length, within the cap, saves growing (and
        // copying) a large body again and again.
        let declared = declared.min(cap).min(16 << 20);
        let mut buf = BytesMut::with_capacity(declared as usize);
        let mut truncated = false;
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.map_body_err(&e))? {
            let room = (cap as usize).saturating_sub(buf.len());
            if chunk.len() > room {
                buf.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            buf.extend_from_slice(&chunk);
        }
        Ok((buf.freeze(), truncated))
    }

    fn map_err(&self, e: &reqwest::Error) -> FetchError {
        if let Some(local) = public_dns::local_address(e) {
            FetchError::AddressRule(local.to_string())
        } else if e.is_timeout() {
            FetchError::Timeout(self.timeout)
        } else if e.is_connect() && no_such_host(e) {
            FetchError::NoSuchHost(chain(e))
        } else if let Some(refused) = trust::certificate_refused(&chain(e)) {
            FetchError::Certificate(refused)
        } else if e.is_connect() {
            FetchError::Connect(chain(e))
        } else if e.is_body() || e.is_decode() {
            FetchError::Body(chain(e))
        } else if let Some(why) = protocol_error(e) {
            FetchError::Protocol(why)
        } else if e.is_request() {
            FetchError::Connect(chain(e))
        } else {
            FetchError::Other(chain(e))
        }
    }

    fn map_body_err(&self, e: &reqwest::Error) -> FetchError {
        if e.is_timeout() {
            FetchError::Timeout(self.timeout)
        } else {
            FetchError::Body(chain(e))
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_request_rule_holds_under_its_prefix_on_its_origin_only() {
        let rule = RequestRule {
            prefix: url::Url::parse("https://intranet.example.org/docs/").unwrap(),
            headers: vec![("X-Token".into(), "t".into())],
            basic_auth: Some(("checker".into(), "secret".into())),
        };
        let under = |u: &str| rule.applies(&url::Url::parse(u).unwrap());
        assert!(under("https://intranet.example.org/docs/a.html"));
        assert!(under("https://intranet.example.org:443/docs/"));
        assert!(!under("https://intranet.example.org/other/"));
        assert!(!under("http://intranet.example.org/docs/a.html"));
        assert!(!under("https://intranet.example.org:8443/docs/a.html"));
        assert!(!under(
            "https://intranet.example.org.evil.example/docs/a.html"
        ));
        let shown = format!("{rule:?}");
        assert!(
            shown.contains("checker") && !shown.contains("secret") && !shown.contains("\"t\""),
            "{shown}"
        );
    }

    #[test]
    fn a_name_that_does_not_exist_is_told_from_a_resolver_that_failed() {
        let lookup = |why: &str| {
            std::io::Error::other(format!("failed to lookup address information: {why}"))
        };
        assert!(no_such_host(&lookup("Name or service not known")));
        assert!(no_such_host(&lookup("No address associated with hostname")));
        assert!(!no_such_host(&lookup(
            "Temporary failure in name resolution"
        )));
        assert!(!no_such_host(&std::io::Error::other("Connection refused")));
        assert!(!FetchError::NoSuchHost("x".into()).is_retryable());
        assert!(FetchError::Connect("Temporary failure in name resolution".into()).is_retryable());
    }

    use super::*;

    #[test]
    fn html_sniffing() {
        assert!(sniff_html(b"  <!DOCTYPE html><p>"));
        assert!(sniff_html(b"<HTML>"));
        assert!(!sniff_html(b"\x89PNG"));
    }
}
