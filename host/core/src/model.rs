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

    /// The category of a final HTTP status (after any redirects); the
    /// statuses in `accepted` count as 2xx do.
    pub fn of_status(status: u16, redirected: bool, accepted: AcceptedStatuses) -> Category {
        match status {
            _ if accepted.contains(status) && redirected => Category::Moved,
            _ if accepted.contains(status) => Category::Ok,
            200..=299 | 304 if redirected => Category::Moved,
            200..=299 | 304 => Category::Ok,
            401 | 403 | 429 => Category::Blocked,
            _ => Category::Broken,
        }
    }
}

/// HTTP statuses a run counts as ok beside 2xx (`accept_status`,
/// `--accept`: lychee's `--accept`), as a set of the codes 100 to 999.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AcceptedStatuses([u64; 15]);

impl AcceptedStatuses {
    /// No status beside 2xx.
    pub const NONE: AcceptedStatuses = AcceptedStatuses([0; 15]);

    /// Whether `status` is in the set.
    pub fn contains(&self, status: u16) -> bool {
        let Some(i) = status.checked_sub(100).filter(|i| *i < 900) else {
            return false;
        };
        self.0[usize::from(i / 64)] & (1 << (i % 64)) != 0
    }

    /// Add `status` (100 to 999).
    fn insert(&mut self, status: u16) {
        let i = status - 100;
        self.0[usize::from(i / 64)] |= 1 << (i % 64);
    }

    /// Add the statuses of `list`: codes and ranges separated by commas,
    /// a range written `500..=599`, `500..600` (its end left out) or
    /// `500-599`. The error says which item is wrong and why.
    pub fn add_list(&mut self, list: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let code = |s: &str| -> Result<u16, String> {
                match s.trim().parse::<u16>() {
                    Ok(n) if (100..=999).contains(&n) => Ok(n),
                    _ => Err(format!(
                        "`{item}` is not a status or a range of statuses; write codes from 100 to 999 such as \"403\", \"500..=599\" or \"200-299\""
                    )),
                }
            };
            let (first, last) = if let Some((a, b)) = item.split_once("..=") {
                (code(a)?, code(b)?)
            } else if let Some((a, b)) = item.split_once("..") {
                (code(a)?, code(b)?.saturating_sub(1))
            } else if let Some((a, b)) = item.split_once('-') {
                (code(a)?, code(b)?)
            } else {
                let c = code(item)?;
                (c, c)
            };
            if first > last {
                return Err(format!("`{item}` is an empty range of statuses"));
            }
            (first..=last).for_each(|s| self.insert(s));
        }
        Ok(())
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
        let none = AcceptedStatuses::NONE;
        assert_eq!(Category::of_status(200, false, none), Category::Ok);
        assert_eq!(Category::of_status(200, true, none), Category::Moved);
        assert_eq!(Category::of_status(304, false, none), Category::Ok);
        assert_eq!(Category::of_status(404, false, none), Category::Broken);
        assert_eq!(Category::of_status(404, true, none), Category::Broken);
        assert_eq!(Category::of_status(403, false, none), Category::Blocked);
        assert_eq!(Category::of_status(429, false, none), Category::Blocked);
        assert_eq!(Category::of_status(500, false, none), Category::Broken);
        let mut some = AcceptedStatuses::NONE;
        some.add_list("403, 500..=502,999").unwrap();
        assert_eq!(Category::of_status(403, false, some), Category::Ok);
        assert_eq!(Category::of_status(501, true, some), Category::Moved);
        assert_eq!(Category::of_status(503, false, some), Category::Broken);
        for c in ["ok", "moved", "broken", "blocked", "avoided", "not_checked"] {
            assert_eq!(Category::from_name(c).unwrap().as_str(), c);
        }
    }

    #[test]
    fn accepted_statuses_read_codes_and_ranges() {
        let mut a = AcceptedStatuses::NONE;
        assert!((0..=u16::MAX).all(|s| !a.contains(s)));
        a.add_list("403, 429 ,500..=503, 520..523, 100-101,")
            .unwrap();
        let held: Vec<u16> = (100..=999).filter(|s| a.contains(*s)).collect();
        assert_eq!(
            held,
            [100, 101, 403, 429, 500, 501, 502, 503, 520, 521, 522]
        );
        assert!(!a.contains(999) && !a.contains(0) && !a.contains(65535));
        for (bad, why) in [
            ("40x", "`40x` is not a status"),
            ("99", "`99` is not a status"),
            ("1000", "`1000` is not a status"),
            ("503..=500", "`503..=500` is an empty range"),
            ("500..500", "`500..500` is an empty range"),
        ] {
            let mut none = AcceptedStatuses::NONE;
            let e = none.add_list(bad).unwrap_err();
            assert!(e.starts_with(why), "{bad}: {e}");
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
