//! Earlier results: whether a URL's newest stored result settles it in
//! this run without a request (checked in this run already, or younger than
//! `result_max_age`), or only lends its validators to a conditional
//! request, or does not count at all.

use crate::fetch::Validators;
use spinneret_core::model::{Category, Source};
use spinneret_store::CachedResult;
use std::time::Duration;

/// What an earlier result does for a URL about to be requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// It settles the URL: recorded as `Some(source)`, or not recorded
    /// again (`None`: it is this run's own, stored already).
    Settle(Option<Source>),
    /// It is too old to stand, but its validators make the request
    /// conditional (a 304 then lets it stand).
    Revalidate,
    /// It does not count: the URL is requested afresh.
    Ignore,
}

/// What `cached` does for a URL of run `run` that is wanted as a document
/// (`need_get`) or a leaf, at Unix time `now`, given `max_age`.
pub(crate) fn reuse(
    cached: &CachedResult,
    run: i64,
    need_get: bool,
    now: i64,
    max_age: Duration,
) -> Reuse {
    let r = &cached.result;
    // Policy decisions are made afresh; only real checks are reused.
    if matches!(r.category, Category::Avoided | Category::NotChecked) {
        return Reuse::Ignore;
    }
    let this_run = cached.run == run;
    let from_get = r.method == Some("GET") || cached.is_document;
    if need_get && !from_get && r.category == Category::Ok {
        // A HEAD said it works; a document candidate needs its body.
        return Reuse::Ignore;
    }
    if this_run {
        return Reuse::Settle(None);
    }
    if need_get && cached.doc_predates_fragments {
        // Parsed before the store kept places and fragments: read again.
        return Reuse::Ignore;
    }
    if now - r.checked_at < max_age.as_secs() as i64 {
        return Reuse::Settle(Some(Source::Reused));
    }
    Reuse::Revalidate
}

/// The validators of `cached` for a request by GET (`get`) or HEAD: none
/// when it has none, when they are another resource's (it redirected), or
/// when a GET would be answered 304 on the strength of a HEAD (whose
/// result holds no document).
pub(crate) fn validators(cached: &CachedResult, get: bool) -> Option<Validators> {
    // After a redirect the stored validators are the target's: sent to the
    // URL that redirected, they would ask about another resource (and a
    // 304 from it would keep "moved" for a URL that answers again).
    let own = cached.result.redirects.is_empty();
    let usable = own
        && (!get
            || (cached.is_document || cached.result.method == Some("GET"))
                && !cached.doc_predates_fragments);
    let v = Validators {
        etag: cached.result.etag.clone(),
        last_modified: cached.result.last_modified.clone(),
    };
    (usable && (v.etag.is_some() || v.last_modified.is_some())).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_core::model::CheckResult;

    const DAY: i64 = 24 * 3600;

    fn cached(
        run: i64,
        method: Option<&'static str>,
        category: Category,
        age: i64,
    ) -> CachedResult {
        let mut result =
            CheckResult::unrequested("http://a.test/", category, "", None, 100 * DAY - age);
        result.method = method;
        result.etag = Some("\"v1\"".into());
        CachedResult {
            run,
            result,
            doc_owner: None,
            is_document: false,
            doc_predates_fragments: false,
        }
    }

    #[test]
    fn what_an_earlier_result_does() {
        let now = 100 * DAY;
        let week = Duration::from_secs(7 * DAY as u64);
        let document = CachedResult {
            is_document: true,
            ..cached(1, Some("GET"), Category::Ok, 30 * DAY)
        };
        let table = [
            (
                "this run's own result settles it, not recorded again",
                cached(5, Some("HEAD"), Category::Broken, 0),
                false,
                Reuse::Settle(None),
            ),
            (
                "a result younger than result_max_age is reused",
                cached(4, Some("HEAD"), Category::Ok, DAY),
                false,
                Reuse::Settle(Some(Source::Reused)),
            ),
            (
                "an older one only lends its validators",
                cached(4, Some("HEAD"), Category::Ok, 8 * DAY),
                false,
                Reuse::Revalidate,
            ),
            (
                "an old document is revalidated as a document",
                document.clone(),
                true,
                Reuse::Revalidate,
            ),
            (
                "a document parsed before places and fragments were kept is read again",
                CachedResult {
                    doc_predates_fragments: true,
                    ..document.clone()
                },
                true,
                Reuse::Ignore,
            ),
            (
                "a HEAD that worked does not settle a document candidate",
                cached(5, Some("HEAD"), Category::Ok, 0),
                true,
                Reuse::Ignore,
            ),
            (
                "a HEAD that failed settles a document candidate too",
                cached(4, Some("HEAD"), Category::Broken, DAY),
                true,
                Reuse::Settle(Some(Source::Reused)),
            ),
            (
                "an avoided URL is decided afresh",
                cached(5, None, Category::Avoided, 0),
                false,
                Reuse::Ignore,
            ),
            (
                "a URL not checked is decided afresh",
                cached(4, None, Category::NotChecked, DAY),
                false,
                Reuse::Ignore,
            ),
        ];
        for (case, c, need_get, want) in table {
            assert_eq!(reuse(&c, 5, need_get, now, week), want, "{case}");
        }
    }

    #[test]
    fn validators_of_an_earlier_result() {
        let head = cached(1, Some("HEAD"), Category::Ok, 0);
        let get = cached(1, Some("GET"), Category::Ok, 0);
        let etag = |v: Option<Validators>| v.and_then(|v| v.etag);
        assert_eq!(etag(validators(&head, false)), Some("\"v1\"".into()));
        assert_eq!(etag(validators(&head, true)), None, "a HEAD's for a GET");
        assert_eq!(etag(validators(&get, true)), Some("\"v1\"".into()));
        let before_fragments = CachedResult {
            is_document: true,
            doc_predates_fragments: true,
            ..get.clone()
        };
        assert_eq!(
            etag(validators(&before_fragments, true)),
            None,
            "a parse from before fragments were kept is not revalidated"
        );
        assert!(
            validators(&before_fragments, false).is_some(),
            "a leaf's HEAD is"
        );
        let mut none = get.clone();
        none.result.etag = None;
        assert!(
            validators(&none, true).is_none(),
            "nothing to validate with"
        );
        none.result.last_modified = Some("Tue, 01 Sep 2026 00:00:00 GMT".into());
        assert!(validators(&none, true).is_some());
    }
}
