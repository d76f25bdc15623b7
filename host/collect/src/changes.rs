//! What changed in a collection since the profile's last run (seed 004,
//! §2.1): each main page new, changed, unchanged or not retrieved, and the
//! last run's pages gone. Whether a page changed is the change detectors'
//! word (a `content-changed` finding); the snapshots they compare are
//! made here from the main pages of the two runs.

use spinneret_plugin_host::bindings::host::types::{Category, CheckResult, Finding};
use spinneret_store::{MainPage, UrlMemory};
use std::collections::{HashMap, HashSet};

/// What became of a main page since the last run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The last run did not have it (or could not retrieve it).
    New,
    /// A change detector saw its content change.
    Changed,
    /// The last run had it and no detector saw it change.
    Unchanged,
    /// It could not be retrieved this time.
    NotRetrieved,
    /// Not due this run (its entry has a schedule of its own): the last
    /// run's copy, carried forward.
    Carried,
}

impl Change {
    /// How the summary says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Changed => "changed",
            Change::Unchanged => "unchanged",
            Change::NotRetrieved => "not retrieved",
            Change::Carried => "carried",
        }
    }
}

/// The finding kind that says a page's content changed.
pub const CONTENT_CHANGED: &str = "content-changed";

/// The key of a main page in a run: its category and URL (a page may be in
/// several categories).
fn key(p: &MainPage) -> (&str, &str) {
    (p.category.as_str(), p.url.as_str())
}

/// For each of `current`'s pages, the page of `previous` with its category
/// and URL, if that run retrieved it; and `previous`'s pages `current`
/// does not have (gone).
pub fn pair<'a>(
    current: &[MainPage],
    previous: &'a [MainPage],
) -> (Vec<Option<&'a MainPage>>, Vec<MainPage>) {
    let before: HashMap<(&str, &str), &MainPage> = previous
        .iter()
        .filter(|p| p.digest.is_some())
        .map(|p| (key(p), p))
        .collect();
    let now: HashSet<(&str, &str)> = current.iter().map(key).collect();
    let paired = current
        .iter()
        .map(|p| before.get(&key(p)).copied())
        .collect();
    let gone = previous
        .iter()
        .filter(|p| !now.contains(&key(p)))
        .cloned()
        .collect();
    (paired, gone)
}

/// What a run saw of a main page, as a change detector reads it: retrieved
/// (its digest as the content hash, `memory`'s validators and type) or
/// broken (with why), checked at `at`.
pub fn snapshot(p: &MainPage, memory: Option<&UrlMemory>, at: i64) -> CheckResult {
    let retrieved = p.digest.is_some();
    CheckResult {
        url: p.url.clone(),
        category: match retrieved {
            true => Category::Ok,
            false => Category::Broken,
        },
        method: Some("GET".into()),
        status: None,
        error: p.problem.clone(),
        content_type: memory.and_then(|m| m.content_type.clone()),
        size: retrieved.then_some(p.bytes),
        content_hash: p.digest.clone(),
        etag: memory.and_then(|m| m.etag.clone()),
        last_modified: memory.and_then(|m| m.last_modified.clone()),
        expires: None,
        owner: None,
        redirects: Vec::new(),
        final_url: None,
        elapsed_ms: None,
        referrer: None,
        checked_at: at,
    }
}

/// What became of `page`, which the last run had as `previous`, given what
/// the detectors found about it.
pub fn change(page: &MainPage, previous: Option<&MainPage>, findings: &[Finding]) -> Change {
    match (&page.digest, previous) {
        (None, _) => Change::NotRetrieved,
        // The last run's copy, kept: this run could not fetch it.
        _ if page.problem.is_some() => Change::NotRetrieved,
        (Some(_), None) => Change::New,
        _ if findings.iter().any(|f| f.kind == CONTENT_CHANGED) => Change::Changed,
        _ => Change::Unchanged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_plugin_host::bindings::host::types::Severity;

    fn page(url: &str, digest: Option<&str>) -> MainPage {
        MainPage {
            category: "URLs".into(),
            url: url.into(),
            digest: digest.map(str::to_string),
            bytes: 10,
            problem: digest.is_none().then(|| "HTTP 404".to_string()),
            ..MainPage::default()
        }
    }

    #[test]
    fn pages_pair_with_the_last_runs_retrieved_ones_and_the_rest_are_gone() {
        let before = [
            page("https://a/", Some("1")),
            page("https://b/", None),
            page("https://gone/", Some("3")),
        ];
        let now = [page("https://a/", Some("2")), page("https://b/", Some("4"))];
        let (paired, gone) = pair(&now, &before);
        assert_eq!(paired, [Some(&before[0]), None]);
        assert_eq!(gone, [before[2].clone()]);
    }

    #[test]
    fn the_change_is_the_detectors_word() {
        let was = page("https://a/", Some("1"));
        let is = page("https://a/", Some("2"));
        let changed = Finding {
            kind: CONTENT_CHANGED.into(),
            url: is.url.clone(),
            referrer: None,
            message: String::new(),
            severity: Severity::Info,
            source: "maintenance".into(),
        };
        assert_eq!(change(&is, Some(&was), &[changed]), Change::Changed);
        assert_eq!(change(&is, Some(&was), &[]), Change::Unchanged);
        assert_eq!(change(&is, None, &[]), Change::New);
        assert_eq!(
            change(&page("https://a/", None), Some(&was), &[]),
            Change::NotRetrieved
        );
        let s = snapshot(&is, None, 5);
        assert_eq!(
            (s.category, s.content_hash.as_deref(), s.size),
            (Category::Ok, Some("2"), Some(10))
        );
        let s = snapshot(&page("https://a/", None), None, 5);
        assert_eq!(
            (s.category, s.error.as_deref()),
            (Category::Broken, Some("HTTP 404"))
        );
    }
}
