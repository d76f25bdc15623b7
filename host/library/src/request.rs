//! What every request to the library goes through: who asks (a
//! `Visitor`: the client cookie, a moderator's session, the peer), the
//! form it sends and its CSRF check, the store it reads and writes, and
//! how it is answered (a page with its cookie and policy, a redirect, a
//! refusal).

use super::auth::{Guard, Refusal};
use super::input::Fields;
use askama::Template;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use spinneret_store::{HeldStore, LibraryError, Posting, Store};
use std::net::SocketAddr;
use std::sync::Arc;

/// The largest form accepted (a report of 64 KiB, escaped, or a pasted
/// list of pointers).
pub const MAX_FORM: usize = 256 * 1024;
/// The client cookie (the CSRF token is tied to it).
const CLIENT_COOKIE: &str = "vl_client";
/// A moderator's session cookie.
pub(super) const SESSION_COOKIE: &str = "vl_session";
/// The library pages' policy: as the search page's, but a VL's or a
/// report's image may come from any web address (none is sent a referrer).
const CSP: &str = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data: http: https:; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// What the library's handlers share.
pub struct Library {
    store: HeldStore,
    pub(super) guard: Guard,
    title: String,
    /// The hosts of this machine or its network a posting may point at
    /// (`internal_hosts`).
    internal_hosts: Vec<String>,
}

impl Library {
    /// The CSRF token for the forms `v` is shown.
    pub(super) fn token(&self, v: &Visitor) -> String {
        self.guard.csrf_token(&v.client)
    }

    /// The library of `store` (its root made, titled `title`, when the
    /// store has none), with `moderators` (name, argon2id hash); postings
    /// may point at the `internal_hosts` of this machine or its network
    /// and at no other such address.
    pub fn new(
        mut store: Store,
        title: &str,
        moderators: Vec<(String, String)>,
        internal_hosts: Vec<String>,
    ) -> Result<Library, LibraryError> {
        store.library_root(title)?;
        Ok(Library {
            store: HeldStore::new(store),
            guard: Guard::new(moderators),
            title: title.to_string(),
            internal_hosts,
        })
    }

    /// Refuse a posted `url` (as [`super::input::url`] keeps it) that
    /// names this machine or its network (`localhost`, a loopback,
    /// private, shared, link-local or unspecified address, however
    /// written), unless the operator allows its host (`internal_hosts`):
    /// anyone may post, and the spider requests what is posted. Names
    /// that resolve there are refused when the spider resolves them.
    pub(super) fn reachable(&self, url: &str) -> Result<(), super::input::Invalid> {
        let Ok(u) = url::Url::parse(url) else {
            return Ok(());
        };
        let host = u.host_str().unwrap_or("");
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if !spinneret_core::urls::local_host(&u) || self.internal_hosts.iter().any(|h| h == bare) {
            return Ok(());
        }
        Err(super::input::Invalid(format!(
            "`{url}` is on the server's own machine or network ({host}), which postings may not point at; point at a public address"
        )))
    }
}

/// Who is asking: the client cookie (made up when missing), a moderator's
/// session, the peer's address.
pub(super) struct Visitor {
    pub(super) client: String,
    pub(super) new_client: bool,
    pub(super) session: Option<String>,
    pub(super) moderator: Option<String>,
    pub(super) peer: String,
    pub(super) secure: bool,
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .filter(|v| v.len() <= 128 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

impl FromRequestParts<Arc<Library>> for Visitor {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        lib: &Arc<Library>,
    ) -> Result<Visitor, Self::Rejection> {
        let headers = &parts.headers;
        let (client, new_client) = match cookie(headers, CLIENT_COOKIE) {
            Some(c) => (c.to_string(), false),
            None => (super::auth::random_hex(16), true),
        };
        let session = cookie(headers, SESSION_COOKIE).map(str::to_string);
        let moderator = session.as_deref().and_then(|s| lib.guard.moderator(s));
        // The peer as the server saw it (none when served without it:
        // then every client counts as one for the password bound).
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or_else(String::new, |c| c.0.ip().to_string());
        Ok(Visitor {
            client,
            new_client,
            session,
            moderator,
            peer,
            secure: headers
                .get("x-forwarded-proto")
                .is_some_and(|p| p.as_bytes().eq_ignore_ascii_case(b"https")),
        })
    }
}

pub(super) fn set_cookie(
    v: &Visitor,
    name: &str,
    value: &str,
    max_age: Option<u64>,
) -> HeaderValue {
    let mut c = format!("{name}={value}; Path=/library; HttpOnly; SameSite=Strict");
    if let Some(age) = max_age {
        c.push_str(&format!("; Max-Age={age}"));
    }
    if v.secure {
        c.push_str("; Secure");
    }
    HeaderValue::from_str(&c).expect("a cookie of hex digits")
}

/// A page for `v`: its client cookie set when it is new, never cached.
pub(super) fn page(v: &Visitor, status: StatusCode, t: &impl Template) -> Response {
    let mut r = match t.render() {
        Ok(html) => (status, Html(html)).into_response(),
        Err(e) => return failed(&anyhow::anyhow!("template: {e}")),
    };
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    if v.new_client {
        h.append(
            header::SET_COOKIE,
            set_cookie(v, CLIENT_COOKIE, &v.client, None),
        );
    }
    r
}

/// `answer` to a request refused for `r`, with `Retry-After` when waiting
/// helps (429: too many wrong passwords, or posts).
pub(super) fn retry_after(mut answer: Response, r: &Refusal) -> Response {
    if let Some(secs) = r.retry_after() {
        answer
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    answer
}

/// A page that says why `r` refused the request (`text`), with its
/// status and, when waiting helps, `Retry-After`.
pub(super) fn refusal(v: &Visitor, r: &Refusal, text: &str, back: &str) -> Response {
    retry_after(message(v, r.status(), "Not done", text, back), r)
}

/// A redirect after a change, to `to` (see other).
pub(super) fn done(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response()
}

pub(super) fn failed(e: &anyhow::Error) -> Response {
    tracing::error!("library: {e:#}");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "the library could not be read or written; see the server's log",
    )
        .into_response()
}

/// A page that only says something went wrong, and where to go.
#[derive(Template)]
#[template(path = "library/message.html")]
struct Message {
    version: &'static str,
    heading: String,
    text: String,
    back: String,
}

pub(super) fn message(
    v: &Visitor,
    status: StatusCode,
    heading: &str,
    text: &str,
    back: &str,
) -> Response {
    page(
        v,
        status,
        &Message {
            version: env!("CARGO_PKG_VERSION"),
            heading: heading.to_string(),
            text: text.to_string(),
            back: back.to_string(),
        },
    )
}

/// The answer to a library error.
/// A page made of what was read from the library, or why it could not be
/// read.
pub(super) fn read_page(v: &Visitor, answer: Result<impl Template, LibraryError>) -> Response {
    match answer {
        Ok(t) => page(v, StatusCode::OK, &t),
        Err(e) => refused(v, e, "/library"),
    }
}

pub(super) fn refused(v: &Visitor, e: LibraryError, back: &str) -> Response {
    let status = match &e {
        LibraryError::NotFound(_) => StatusCode::NOT_FOUND,
        LibraryError::Gone(_) => StatusCode::GONE,
        LibraryError::Conflict { .. } => StatusCode::CONFLICT,
        LibraryError::Store(_) => return failed(&anyhow::Error::from(e)),
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    message(v, status, "Not done", &e.to_string(), back)
}

/// Run `f` with the store, off the async threads.
pub(super) async fn with_store<T: Send + 'static>(
    lib: &Arc<Library>,
    f: impl FnOnce(&mut Store, &str) -> Result<T, LibraryError> + Send + 'static,
) -> Result<T, LibraryError> {
    let lib = lib.clone();
    tokio::task::spawn_blocking(move || lib.store.with(|store| f(store, &lib.title)))
        .await
        .map_err(|e| LibraryError::Import(format!("the request failed: {e}")))?
}

/// A form's fields, as sent (`application/x-www-form-urlencoded`).
#[derive(Clone, Default)]
pub(super) struct Form(Vec<(String, String)>);

impl Form {
    pub(super) fn parse(body: &[u8]) -> Form {
        Form(url::form_urlencoded::parse(body).into_owned().collect())
    }

    pub(super) fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }

    pub(super) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.0
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn fields(&self) -> Fields {
        Fields {
            title: self.get("title").to_string(),
            url: self.get("url").to_string(),
            body: self.get("body").to_string(),
            image: self.get("image").to_string(),
            create_only: !self.get("create_only").is_empty(),
            author: self.get("author").to_string(),
            email: self.get("email").to_string(),
        }
    }
}

/// The refusal of a form whose CSRF token is not this client's (none when
/// it is).
pub(super) fn forged(lib: &Library, v: &Visitor, f: &Form, back: &str) -> Option<Response> {
    if lib.guard.csrf_ok(&v.client, f.get("csrf")) {
        return None;
    }
    Some(message(
        v,
        StatusCode::FORBIDDEN,
        "Form refused",
        "This form was not sent from this library's own page, or it is out of date (the server restarted since it was opened). Open the page again and send it from there.",
        back,
    ))
}

/// Whether `v` may change posting `p`: a moderator may; a posting without
/// a password anyone may; otherwise its password is needed.
pub(super) async fn may_change(
    lib: &Arc<Library>,
    v: &Visitor,
    p: &Posting,
    password: &str,
) -> Result<(), Refusal> {
    if v.moderator.is_some() {
        return Ok(());
    }
    let Some(hash) = p.password.clone() else {
        return Ok(());
    };
    let lib = lib.clone();
    let (id, peer, password) = (p.id, v.peer.clone(), password.to_string());
    tokio::task::spawn_blocking(move || lib.guard.check_password(id, &peer, &hash, &password))
        .await
        .unwrap_or(Err(Refusal::Wrong))
}

/// Whether visitor `v` may move or delete posting `p`: as [`may_change`],
/// and, unless a moderator, only when nothing below it has a password of
/// its own (the owner of a VL could otherwise take away others'
/// protected postings with it).
pub(super) async fn may_remove(
    lib: &Arc<Library>,
    v: &Visitor,
    p: &Posting,
    password: &str,
) -> Result<(), Refusal> {
    may_change(lib, v, p, password).await?;
    if v.moderator.is_some() {
        return Ok(());
    }
    let id = p.id;
    match with_store(lib, move |s, _| s.library_protected_below(id)).await {
        Ok(false) => Ok(()),
        Ok(true) => Err(Refusal::HoldsProtected),
        // Not known to be safe: refused.
        Err(_) => Err(Refusal::HoldsProtected),
    }
}

/// A password given with a new posting, hashed (none when empty).
pub(super) async fn new_password(password: &str) -> anyhow::Result<Option<String>> {
    if password.is_empty() {
        return Ok(None);
    }
    let p = password.to_string();
    tokio::task::spawn_blocking(move || super::auth::hash_password(&p))
        .await?
        .map(Some)
}
