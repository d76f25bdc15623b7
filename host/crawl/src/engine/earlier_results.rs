//! Earlier results: a URL checked by an earlier run is settled from the
//! store when it is young enough (`result_max_age`), or lends its
//! validators for a conditional request (see `reuse`); a reused
//! document's references come from the store too.

use super::*;

impl Engine<'_> {
    /// Whether the store may hold a result that settles `u`: when earlier
    /// runs stored any, or another worker of a shared run checked `u`'s
    /// site before this one took it over.
    pub(super) fn may_be_stored(&mut self, u: UrlIdx) -> bool {
        self.use_cache || self.site_taken_over(u)
    }

    /// Reuse or prepare to revalidate an earlier result; true when `u` is settled by it.
    pub(super) fn try_cache(&mut self, u: UrlIdx, need_get: bool) -> bool {
        let url = self.frontier.get(u).url.to_string();
        let earlier = match self.prefetched.remove(&u) {
            Some(prefetched) => Ok(prefetched),
            None => self.store.riding_out(|s| s.latest_result(&url)),
        };
        let cached = match earlier {
            Ok(Some(c)) => c,
            Ok(None) => return false,
            Err(e) => {
                tracing::warn!("cannot read the earlier result of {url}: {e}");
                return false;
            }
        };
        let max_age = self.settings.result_max_age;
        match reuse(&cached, self.ids.run, need_get, unix_now(), max_age) {
            Reuse::Settle(source) => {
                self.reused += u64::from(source.is_some());
                self.complete_cached(u, cached, source);
                true
            }
            Reuse::Revalidate => {
                self.frontier.get_mut(u).cached = Some(Box::new(cached));
                false
            }
            Reuse::Ignore => false,
        }
    }

    /// Ask the store at once for the earlier results of those of `links`
    /// not yet seen, when it prefers that to a question a URL (a database
    /// server); `try_cache` takes them.
    pub(super) fn prefetch_earlier_results(&mut self, links: &[(UrlIdx, RefKind)]) {
        if !self.store.prefers_batches() {
            return;
        }
        let mut new: Vec<UrlIdx> = links
            .iter()
            .map(|&(u, _)| u)
            .filter(|&u| {
                self.frontier.get(u).state == UrlState::New
                    && self.holds_site_of(u)
                    && self.may_be_stored(u)
            })
            .collect();
        // Each once: a URL asked for twice would find its answer taken by
        // the first (a shared run's reaches name a URL once per task).
        new.sort_unstable();
        new.dedup();
        if new.len() < 2 {
            return;
        }
        let urls: Vec<String> = new
            .iter()
            .map(|&u| self.frontier.get(u).url.to_string())
            .collect();
        let asked: Vec<&str> = urls.iter().map(String::as_str).collect();
        let mut found = match self.store.riding_out(|s| s.latest_results(&asked)) {
            Ok(found) => found,
            Err(e) => {
                // Each is asked for alone instead.
                tracing::warn!("cannot read the earlier results of a page's references: {e}");
                return;
            }
        };
        for (u, url) in new.into_iter().zip(&urls) {
            self.prefetched.insert(u, found.remove(url));
        }
    }

    /// Settle `u` with an earlier result; `source` is how to record it (None: already recorded in this run).
    pub(super) fn complete_cached(
        &mut self,
        u: UrlIdx,
        cached: CachedResult,
        source: Option<Source>,
    ) {
        let r = &cached.result;
        let final_url = r
            .final_url
            .as_deref()
            .filter(|_| r.category == Category::Moved)
            .and_then(|f| Url::parse(f).ok())
            .map(|f| self.intern(f));
        let doc = if cached.is_document && r.redirects.is_empty() {
            self.load_doc(&r.url, cached.doc_owner.clone())
        } else {
            None
        };
        let outcome = Outcome {
            category: r.category,
            via_get: r.method == Some("GET") || cached.is_document,
            final_url,
            doc,
            content_type: self.frontier.content_type(r.content_type.as_deref()),
            error: r.error.as_deref().map(Box::from),
            status: r.status,
        };
        let result = source.map(|s| {
            let mut r = cached.result.clone();
            r.source = s;
            if s == Source::NotModified {
                r.checked_at = unix_now();
            }
            r
        });
        self.complete(u, outcome, result);
    }

    /// A document an archive marked completed (seed 001, section 3.2.2)
    /// is not read again: it is settled from the store, its last result
    /// when there is one, and its stored references (the archive's) are
    /// followed, so a document below it whose C line was deleted is read.
    pub(super) fn settle_completed(&mut self, u: UrlIdx) -> bool {
        if self.completed.is_empty() {
            return false;
        }
        let url = self.frontier.get(u).url.to_string();
        if !self.completed.contains(&url) {
            return false;
        }
        if let Ok(Some(cached)) = self.store.latest_result(&url)
            && cached.is_document
            && cached.result.redirects.is_empty()
        {
            self.reused += 1;
            self.complete_cached(u, cached, Some(Source::Reused));
            return true;
        }
        let owner = match self.store.document(&url) {
            Ok(d) => d.and_then(|d| d.owner),
            Err(e) => {
                tracing::warn!("cannot read the stored document {url}: {e}");
                return false;
            }
        };
        let Some(doc) = self.load_doc(&url, owner) else {
            return false;
        };
        let e = self.frontier.get(u);
        let referrer = e.referrer.map(|r| self.frontier.get(r).url.to_string());
        let mut result = CheckResult::unrequested(&url, Category::Ok, "", referrer, unix_now());
        result.error = None;
        result.source = Source::Reused;
        let outcome = Outcome {
            category: Category::Ok,
            via_get: true,
            final_url: None,
            doc: Some(doc),
            content_type: None,
            error: None,
            status: None,
        };
        self.reused += 1;
        self.complete(u, outcome, Some(result));
        true
    }

    pub(super) fn load_doc(&mut self, url: &str, owner: Option<String>) -> Option<Box<DocInfo>> {
        let links = match self.store.riding_out(|s| s.document_links(url)) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("cannot read the stored links of {url}: {e}");
                return None;
            }
        };
        let mut valid = Vec::with_capacity(links.len());
        let mut invalid = Vec::new();
        for (target, kind, _text) in links {
            match Url::parse(&target) {
                Ok(t) => match spinneret_core::urls::mistyped_scheme(&t) {
                    None => valid.push((self.intern(t), kind)),
                    Some(why) => invalid.push((target, why)),
                },
                Err(e) => invalid.push((target, e.to_string())),
            }
        }
        Some(Box::new(DocInfo {
            owner,
            links: valid.into(),
            invalid: invalid.into(),
        }))
    }

    // ----- dispatch -----------------------------------------------------------------------
}
