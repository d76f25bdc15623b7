//! The frontier: one entry per URL of the run, shared by every task.
//!
//! An entry records which tasks reached the URL and which want it as a
//! document, where it stands (new, waiting, in flight, done) and, once done,
//! a compact [`Outcome`] (the full result is already in the store). Parsed
//! documents keep only their links as indices, never their bodies.

use super::taskset::TaskSet;
use spinneret_core::document::RefKind;
use spinneret_core::model::Category;
use spinneret_store::CachedResult;
use std::hash::BuildHasher;
use std::sync::Arc;
use url::Url;

/// Index of a URL in the frontier.
pub(crate) type UrlIdx = u32;

/// Where a URL stands in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UrlState {
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
pub(crate) struct DocInfo {
    /// Its Owner (meta or header).
    pub owner: Option<String>,
    /// Unique references with a URL.
    pub links: Box<[(UrlIdx, RefKind)]>,
    /// References that are not URLs: what was written, and why it is not one.
    pub invalid: Box<[(String, String)]>,
}

/// What checking a URL found, as the engine needs it to go on.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The result's category.
    pub category: Category,
    /// Whether the result came from a GET (so it can answer whether the URL is a document).
    pub via_get: bool,
    /// Where a redirect chain ended.
    pub final_url: Option<UrlIdx>,
    /// The parsed document, for HTML fetched by GET at this very URL
    /// (boxed: most outcomes have none, and every checked URL keeps its
    /// outcome to the end of the run).
    pub doc: Option<Box<DocInfo>>,
    /// The content type, for "not HTML" reasons (shared: see
    /// [`Frontier::content_type`]).
    pub content_type: Option<Arc<str>>,
    /// The failure reason, for broken results.
    pub error: Option<Box<str>>,
    /// The final HTTP status, when a request answered.
    pub status: Option<u16>,
}

impl Outcome {
    /// Whether this outcome settles the URL for a task that wants it as a document.
    /// A HEAD that found it working does not: only a GET tells whether it is HTML.
    pub(crate) fn settles_document(&self) -> bool {
        self.via_get || self.category != Category::Ok
    }
}

/// One URL of the run.
#[derive(Debug)]
pub(crate) struct UrlEntry {
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

/// Entries per chunk of the frontier's storage.
const CHUNK: usize = 4096;

/// All URLs of the run. Each URL's text is held once, in its entry: the
/// index holds entry numbers only (found by the URL's hash, compared with
/// the entry's URL). Entries are stored in fixed chunks, so a growing
/// frontier never copies itself into a twice-as-large allocation.
#[derive(Default)]
pub(crate) struct Frontier {
    chunks: Vec<Vec<UrlEntry>>,
    len: usize,
    index: hashbrown::HashTable<UrlIdx>,
    hasher: foldhash::fast::RandomState,
    content_types: foldhash::HashSet<Arc<str>>,
}

/// The most content types the frontier shares among outcomes. A run meets
/// a handful; a hostile server could send a new one with every answer, and
/// those past the limit are held by their own outcome alone.
const SHARED_CONTENT_TYPES: usize = 256;

/// The entry `i` of `chunks`.
fn entry(chunks: &[Vec<UrlEntry>], i: UrlIdx) -> &UrlEntry {
    &chunks[i as usize / CHUNK][i as usize % CHUNK]
}

impl Frontier {
    /// The entry of a URL already known.
    pub(crate) fn lookup(&self, url: &str) -> Option<UrlIdx> {
        self.find(self.hasher.hash_one(url), url)
    }

    /// The entry of `url`, whose hash is `hash`.
    fn find(&self, hash: u64, url: &str) -> Option<UrlIdx> {
        self.index
            .find(hash, |&i| entry(&self.chunks, i).url.as_str() == url)
            .copied()
    }

    /// `content_type` as an outcome holds it: one text shared by every
    /// outcome of the same type (200,000 checked URLs of one type hold one
    /// copy of it, not 200,000).
    pub(crate) fn content_type(&mut self, content_type: Option<&str>) -> Option<Arc<str>> {
        let t = content_type?;
        if let Some(shared) = self.content_types.get(t) {
            return Some(shared.clone());
        }
        let t: Arc<str> = Arc::from(t);
        if self.content_types.len() < SHARED_CONTENT_TYPES {
            self.content_types.insert(t.clone());
        }
        Some(t)
    }

    /// The index of `url`, adding it when new (`site_of` names its site).
    pub(crate) fn intern(&mut self, url: Url, site_of: impl FnOnce(&Url) -> u32) -> UrlIdx {
        let hash = self.hasher.hash_one(url.as_str());
        if let Some(i) = self.find(hash, url.as_str()) {
            return i;
        }
        let i = self.len as UrlIdx;
        let site = site_of(&url);
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks
            .last_mut()
            .expect("a chunk with room")
            .push(UrlEntry {
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
        self.len += 1;
        let (chunks, hasher) = (&self.chunks, &self.hasher);
        self.index
            .insert_unique(hash, i, |&j| hasher.hash_one(entry(chunks, j).url.as_str()));
        i
    }

    /// An entry.
    pub(crate) fn get(&self, i: UrlIdx) -> &UrlEntry {
        entry(&self.chunks, i)
    }

    /// An entry, mutably.
    pub(crate) fn get_mut(&mut self, i: UrlIdx) -> &mut UrlEntry {
        &mut self.chunks[i as usize / CHUNK][i as usize % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_interned_once_across_chunks() {
        let mut f = Frontier::default();
        let url = |i: usize| Url::parse(&format!("http://a.example/{i}")).unwrap();
        for i in 0..CHUNK * 2 + 10 {
            assert_eq!(f.intern(url(i), |_| 7) as usize, i);
        }
        for i in [0, CHUNK - 1, CHUNK, CHUNK * 2 + 9] {
            assert_eq!(f.intern(url(i), |_| unreachable!()) as usize, i);
            assert_eq!(f.lookup(url(i).as_str()), Some(i as UrlIdx));
            assert_eq!(f.get(i as UrlIdx).url, url(i));
        }
        assert_eq!(f.lookup("http://a.example/none"), None);
        f.get_mut(5).site = 3;
        assert_eq!(f.get(5).site, 3);
    }

    #[test]
    fn outcomes_share_a_content_type_up_to_the_limit() {
        let mut f = Frontier::default();
        assert_eq!(f.content_type(None), None);
        let a = f.content_type(Some("text/plain")).unwrap();
        let b = f.content_type(Some("text/plain")).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "one text for one type");
        assert_eq!(&*a, "text/plain");
        // A server sending a new type with every answer: past the limit,
        // each is its outcome's own, and the shared ones stay shared.
        for i in 0..SHARED_CONTENT_TYPES * 2 {
            assert_eq!(
                &*f.content_type(Some(&format!("x/{i}"))).unwrap(),
                format!("x/{i}")
            );
        }
        assert_eq!(f.content_types.len(), SHARED_CONTENT_TYPES);
        let past = format!("x/{}", SHARED_CONTENT_TYPES * 2 - 1);
        let (c, d) = (
            f.content_type(Some(&past)).unwrap(),
            f.content_type(Some(&past)).unwrap(),
        );
        assert!(!Arc::ptr_eq(&c, &d));
        assert!(Arc::ptr_eq(
            &a,
            &f.content_type(Some("text/plain")).unwrap()
        ));
    }
}
