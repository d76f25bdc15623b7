//! The frontier: one entry per URL of the run, shared by every task.
//!
//! An entry records which tasks reached the URL and which want it as a
//! document, where it stands (new, waiting, in flight, done) and, once done,
//! a compact [`Outcome`] (the full result is already in the store). Parsed
//! documents keep only their links as indices, never their bodies.

use super::taskset::TaskSet;
use crate::model::Category;
use crate::parse::RefKind;
use crate::store::CachedResult;
use foldhash::HashMap;
use url::Url;

/// Index of a URL in the frontier.
pub type UrlIdx = u32;

/// Where a URL stands in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlState {
    /// Known, not yet wanted by anyone.
    New,
    /// In a site queue (or deferred to the leaf phase).
    Waiting,
    /// A request is out.
    InFlight,
    /// Checked.
    Done,
}

/// The links of a parsed document.
#[derive(Debug)]
pub struct DocInfo {
    /// Its Owner (meta or header).
    pub owner: Option<String>,
    /// Unique references with a URL.
    pub links: Box<[(UrlIdx, RefKind)]>,
    /// References that are not URLs: what was written, and why it is not one.
    pub invalid: Box<[(String, String)]>,
}

/// What checking a URL found, as the engine needs it to go on.
#[derive(Debug)]
pub struct Outcome {
    /// The result's category.
    pub category: Category,
    /// Whether the result came from a GET (so it can answer whether the URL is a document).
    pub via_get: bool,
    /// Where a redirect chain ended.
    pub final_url: Option<UrlIdx>,
    /// The parsed document, for HTML fetched by GET at this very URL.
    pub doc: Option<DocInfo>,
    /// The content type, for "not HTML" reasons.
    pub content_type: Option<String>,
    /// The failure reason, for broken results.
    pub error: Option<String>,
    /// The final HTTP status, when a request answered.
    pub status: Option<u16>,
}

impl Outcome {
    /// Whether this outcome settles the URL for a task that wants it as a document.
    /// A HEAD that found it working does not: only a GET tells whether it is HTML.
    pub fn settles_document(&self) -> bool {
        self.via_get || self.category != Category::Ok
    }
}

/// One URL of the run.
#[derive(Debug)]
pub struct UrlEntry {
    /// The URL.
    pub url: Url,
    /// Its site.
    pub site: u32,
    /// Where it stands.
    pub state: UrlState,
    /// Whether an initial job is in its site's GET queue.
    pub queued_get: bool,
    /// The first document that referred to it (sent as `Referer`).
    pub referrer: Option<UrlIdx>,
    /// Tasks that reached it.
    pub reached: TaskSet,
    /// Tasks that want it as a document (traverse).
    pub doc_tasks: TaskSet,
    /// Tasks whose role for it is settled and stored.
    pub finalized: TaskSet,
    /// Tasks whose policy plugins have judged it (their objections, if
    /// any, are kept by the engine).
    pub policy_asked: TaskSet,
    /// What checking it found.
    pub outcome: Option<Box<Outcome>>,
    /// An earlier result, stale, whose validators make the request conditional.
    pub cached: Option<Box<CachedResult>>,
}

/// All URLs of the run.
#[derive(Default)]
pub struct Frontier {
    entries: Vec<UrlEntry>,
    index: HashMap<Box<str>, UrlIdx>,
}

impl Frontier {
    /// The entry of a URL already known.
    pub fn lookup(&self, url: &str) -> Option<UrlIdx> {
        self.index.get(url).copied()
    }

    /// The index of `url`, adding it when new (`site_of` names its site).
    pub fn intern(&mut self, url: Url, site_of: impl FnOnce(&Url) -> u32) -> UrlIdx {
        if let Some(i) = self.index.get(url.as_str()) {
            return *i;
        }
        let i = self.entries.len() as UrlIdx;
        let site = site_of(&url);
        self.index.insert(url.as_str().into(), i);
        self.entries.push(UrlEntry {
            url,
            site,
            state: UrlState::New,
            queued_get: false,
            referrer: None,
            reached: TaskSet::default(),
            doc_tasks: TaskSet::default(),
            finalized: TaskSet::default(),
            policy_asked: TaskSet::default(),
            outcome: None,
            cached: None,
        });
        i
    }

    /// An entry.
    pub fn get(&self, i: UrlIdx) -> &UrlEntry {
        &self.entries[i as usize]
    }

    /// An entry, mutably.
    pub fn get_mut(&mut self, i: UrlIdx) -> &mut UrlEntry {
        &mut self.entries[i as usize]
    }
}
