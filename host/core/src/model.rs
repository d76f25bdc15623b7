//! The plain records that flow forward from the crawl to the store and the
//! reports: what checking one URL found, and what a task made of it.

use serde::Serialize;

/// The outcome of checking one URL, as reports count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// 2xx (or 304 for a conditional request).
    Ok,
    /// Redirected, and the chain ended in a working resource: report the final URL.
    Moved,
    /// 4xx (but 401, 403, 429), 5xx, network failures, unreachable sites, redirect loops, bad URLs.
    Broken,
    /// 401, 403 and 429: the server refused the robot; not the link's fault.
    Blocked,
    /// Not requested: robots.txt or an avoid rule forbids it.
    Avoided,
    /// Not requested: a scheme the crawler does not check (mailto, ftp, …) or a form action.
    NotChecked,
}

impl Category {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Ok => "ok",
            Category::Moved => "moved",
            Category::Broken => "broken",
            Category::Blocked => "blocked",
            Category::Avoided => "avoided",
            Category::NotChecked => "not_checked",
        }
    }

    /// The category with this stable name.
    pub fn from_name(s: &str) -> Option<Category> {
        [
            Category::Ok,
            Category::Moved,
            Category::Broken,
            Category::Blocked,
            Category::Avoided,
            Category::NotChecked,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }

    /// The category of a final HTTP status (after any redirects).
    pub fn of_status(status: u16, redirected: bool) -> Category {
        match status {
            200..=299 | 304 if redirected => Category::Moved,
            200..=299 | 304 => Category::Ok,
            401 | 403 | 429 => Category::Blocked,
            _ => Category::Broken,
        }
    }
}

/// Where a result came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A request made in this run.
    Network,
    /// A conditional request answered 304; the earlier result stands.
    NotModified,
    /// An earlier result young enough to be reused without a request.
    Reused,
}

impl Source {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Network => "network",
            Source::NotModified => "not_modified",
            Source::Reused => "reused",
        }
    }

    /// The source with this stable name.
    pub fn from_name(s: &str) -> Source {
        match s {
            "not_modified" => Source::NotModified,
            "reused" => Source::Reused,
            _ => Source::Network,
        }
    }
}

/// One hop of a redirect chain: the URL requested and the status it answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Hop {
    /// The URL requested.
    pub url: String,
    /// Its 3xx status.
    pub status: u16,
}

/// What checking one URL found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckResult {
    /// The URL checked.
    pub url: String,
    /// The outcome.
    pub category: Category,
    /// `HEAD` or `GET` (the last request made), or none.
    pub method: Option<&'static str>,
    /// The final status (after redirects).
    pub status: Option<u16>,
    /// Why it failed, was avoided or not checked.
    pub error: Option<String>,
    /// `Content-Type` of the final response.
    pub content_type: Option<String>,
    /// `Content-Length` of the final response.
    pub content_length: Option<u64>,
    /// Bytes of body read (after decoding).
    pub size: Option<u64>,
    /// SHA-256 of the body, hex, for documents.
    pub content_hash: Option<String>,
    /// `ETag`.
    pub etag: Option<String>,
    /// `Last-Modified`, as sent.
    pub last_modified: Option<String>,
    /// `Expires`, as sent.
    pub expires: Option<String>,
    /// `Owner` header.
    pub owner: Option<String>,
    /// The redirect chain, in order (empty when not redirected).
    pub redirects: Vec<Hop>,
    /// The URL the chain ended at.
    pub final_url: Option<String>,
    /// Milliseconds spent on the requests.
    pub elapsed_ms: Option<u64>,
    /// Whether the body cap cut the body short.
    pub truncated: bool,
    /// Requests made for this URL, retries and redirect hops included.
    pub attempts: u32,
    /// The document it was first reached from.
    pub referrer: Option<String>,
    /// When it was checked (Unix seconds).
    pub checked_at: i64,
    /// Where the result came from.
    pub source: Source,
}

impl CheckResult {
    /// A result for a URL that gets no request.
    pub fn unrequested(
        url: &str,
        category: Category,
        reason: &str,
        referrer: Option<String>,
        now: i64,
    ) -> Self {
        CheckResult {
            url: url.to_string(),
            category,
            method: None,
            status: None,
            error: Some(reason.to_string()),
            content_type: None,
            content_length: None,
            size: None,
            content_hash: None,
            etag: None,
            last_modified: None,
            expires: None,
            owner: None,
            redirects: Vec::new(),
            final_url: None,
            elapsed_ms: None,
            truncated: false,
            attempts: 0,
            referrer,
            checked_at: now,
            source: Source::Network,
        }
    }
}

/// The current time in Unix seconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_categories() {
        assert_eq!(Category::of_status(200, false), Category::Ok);
        assert_eq!(Category::of_status(200, true), Category::Moved);
        assert_eq!(Category::of_status(304, false), Category::Ok);
        assert_eq!(Category::of_status(404, false), Category::Broken);
        assert_eq!(Category::of_status(404, true), Category::Broken);
        assert_eq!(Category::of_status(403, false), Category::Blocked);
        assert_eq!(Category::of_status(429, false), Category::Blocked);
        assert_eq!(Category::of_status(500, false), Category::Broken);
        for c in ["ok", "moved", "broken", "blocked", "avoided", "not_checked"] {
            assert_eq!(Category::from_name(c).unwrap().as_str(), c);
        }
    }
}

/// How a task bounds its infostructure (seed 000, section 5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    /// Every document on the top URL's site (host and port).
    Site,
    /// Every document at or below the top URL's directory.
    Tree,
    /// Every document whose Owner equals the task's name.
    Owner,
    /// The Worm's crawl (seed 001, section 3.2): every HTML document on any
    /// host, to a recursion depth (`levels`) from the top.
    Web,
    /// GENVL's library (seed 001, section 2): its summary pages, published
    /// as files, traversed as a tree; every pointer on them is tested.
    Library,
}

impl TaskKind {
    /// The lower-case name used in configs and the store.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Site => "site",
            TaskKind::Tree => "tree",
            TaskKind::Owner => "owner",
            TaskKind::Web => "web",
            TaskKind::Library => "library",
        }
    }
}

/// What the store records of a task when a run begins (or is resumed), and
/// what plugins are told of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRecord<'a> {
    /// The task's name, unique in its configuration.
    pub name: &'a str,
    /// How it bounds its infostructure.
    pub kind: TaskKind,
    /// Its top URL.
    pub top: &'a str,
    /// Where its owner's mail goes.
    pub email: Option<&'a str>,
    /// Where its reports are written.
    pub output: &'a std::path::Path,
    /// How many days count as recently modified.
    pub changed_days: u32,
    /// How many days ahead count as expiring.
    pub expiring_days: u32,
}
