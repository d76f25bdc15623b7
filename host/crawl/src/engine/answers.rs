//! Answers: what the engine does with a finished request. robots.txt
//! readings go to the site table; a fetch's answer is classified
//! (`classify`) into a retry, a GET after a refused HEAD, the next
//! hop of a redirect chain, a 304 that keeps the earlier result, or a
//! result, which is stored and settles the URL (and every URL that
//! redirected to it) for each task that reached it.

use super::*;

impl Engine<'_> {
    pub(super) fn handle(&mut self, c: Completion) {
        self.in_flight -= 1;
        match c {
            Completion::Policies(answers) => {
                for PolicyAnswer {
                    task,
                    then,
                    verdicts,
                } in answers
                {
                    for (u, v) in verdicts {
                        self.note_verdict(task, u, v);
                    }
                    match then {
                        AfterVerdicts::Expand(document) => self.expand(task, document),
                        AfterVerdicts::FollowRedirect { from, target } => {
                            self.reach(task, target, RefKind::Anchor, Some(from))
                        }
                    }
                }
            }
            Completion::Screen { fetch, screening } => {
                // Still in flight until the hooks have seen it.
                self.in_flight += 1;
                self.plugins.screen(*fetch, *screening);
            }
            Completion::Sitemaps { tasks, found } => self.sitemaps_found(&tasks, *found),
            Completion::Robots { site, outcome } => {
                Progress::add(&self.progress.in_flight, -1);
                self.robots_done(site, outcome);
            }
            Completion::Fetch {
                site,
                job,
                result,
                parsed,
                hash,
                reclassified,
            } => {
                Progress::add(&self.progress.in_flight, -1);
                self.sites.finished(site);
                self.fetch_done(site, job, *result, parsed, hash, reclassified);
            }
        }
    }

    /// Site `s`'s robots.txt request ended: keep what was read, and let a
    /// link to that robots.txt have this answer.
    pub(super) fn robots_done(&mut self, s: u32, outcome: RobotsFetch) {
        let Some(record) = self.sites.robots_answered(s, outcome, unix_now()) else {
            return;
        };
        self.writer.send(StoreOp::Site(Box::new(record)));
        if let Some(u) = self
            .sites
            .robots_url(s)
            .and_then(|r| self.frontier.lookup(r.as_str()))
            && self.frontier.get(u).state == UrlState::Waiting
        {
            self.settle_from_robots(u);
        }
    }

    /// Put a job back in its site's queue, to start no earlier than `at`.
    pub(super) fn requeue(&mut self, site: u32, mut job: Box<Job>, at: Option<Instant>) {
        job.not_before = at;
        self.frontier.get_mut(job.url).state = UrlState::Waiting;
        self.sites.push_get(site, Queued::Continue(job));
    }

    pub(super) fn fetch_done(
        &mut self,
        site: u32,
        mut job: Box<Job>,
        result: Result<FetchResponse, FetchError>,
        parsed: Option<Box<ParsedDocument>>,
        hash: Option<String>,
        reclassified: Option<(Category, String)>,
    ) {
        let hop_target = job.hop_target.take();
        self.fetch_answered(site, job, result, parsed, hash, reclassified);
        if let Some(f) = hop_target
            && self.redirects.hop_answered(f)
        {
            // The hop did not settle it: its own request goes ahead.
            let site = self.frontier.get(f).site;
            self.sites.push_front(site, Queued::Initial(f));
            self.sites.make_runnable(site);
        }
    }

    pub(super) fn fetch_answered(
        &mut self,
        site: u32,
        mut job: Box<Job>,
        result: Result<FetchResponse, FetchError>,
        parsed: Option<Box<ParsedDocument>>,
        hash: Option<String>,
        reclassified: Option<(Category, String)>,
    ) {
        let state = JobState {
            method: job.method,
            attempt: job.attempt,
            head_fallback: job.head_fallback,
            redirected: !job.hops.is_empty(),
            conditional: job.validators.is_some(),
            local: job.request.scheme() == "file",
        };
        let limits = Limits {
            retries: self.settings.retries,
            max_retry_after: self.settings.max_retry_after,
            accepted: self.settings.accept_status,
        };
        let answer = match &result {
            Err(e) => Answer::Failed(e),
            Ok(r) => Answer::Response {
                status: r.status,
                retry_after: r.headers.retry_after.as_deref(),
                location: r.headers.location.as_deref(),
                reclassified: reclassified.as_ref().map(|(c, why)| (*c, why.as_str())),
            },
        };
        let next = classify(state, answer, limits, SystemTime::now());
        if let Ok(r) = &result {
            job.elapsed += r.elapsed;
        }
        match next {
            Next::Retry { wait, hold_site } => {
                job.attempt += 1;
                let at = Instant::now() + wait;
                if hold_site {
                    // The whole site waits, as the server asked.
                    self.sites.hold_until(site, at);
                }
                tracing::debug!(
                    "{} {}: {}; retry {} in {wait:?}",
                    job.method.as_str(),
                    job.request,
                    match &result {
                        Ok(r) => status_text(r.status),
                        Err(e) => e.to_string(),
                    },
                    job.attempt
                );
                self.requeue(site, job, Some(at));
            }
            Next::FallbackGet => {
                job.method = Method::Get;
                job.body = BodyWanted::No;
                job.head_fallback = true;
                job.attempt = 0;
                tracing::debug!("HEAD {} refused; asking with GET", job.request);
                self.requeue(site, job, None);
            }
            Next::Redirect(location) => {
                let resp = result.expect("a redirect is a response");
                self.follow_redirect(job, resp, &location);
            }
            Next::NotModified { otherwise } => {
                let u = job.url;
                match self.frontier.get_mut(u).cached.take() {
                    Some(mut cached) => {
                        // A 304 carries the resource's headers as they are
                        // now (RFC 9111, 4.3.4): they replace the stored ones.
                        if let Ok(r) = &result {
                            refresh_headers(&mut cached.result, &r.headers);
                        }
                        self.complete_cached(u, *cached, Some(Source::NotModified))
                    }
                    None => {
                        self.finish_job(job, result.ok(), otherwise.0, otherwise.1, parsed, hash)
                    }
                }
            }
            Next::Done(category, error) => {
                self.finish_job(job, result.ok(), category, error, parsed, hash);
            }
        }
    }

    /// Follow a redirect to `location`, or end the chain where it must end.
    pub(super) fn follow_redirect(
        &mut self,
        mut job: Box<Job>,
        resp: FetchResponse,
        location: &str,
    ) {
        let from = job.request.clone();
        job.hops.push(Hop {
            url: from.to_string(),
            status: resp.status,
        });
        let origin = &self.frontier.get(job.url).url;
        let max = self.settings.max_redirects;
        let next = match next_hop(max, origin, &from, location, &job.hops, &self.rules) {
            // A hop every task that reached the URL excludes by its
            // patterns is not requested either.
            Ok(next) => match self.excluded_by_every_task(job.url, &next) {
                Some(why) => {
                    let reason = format!("redirected to {next}, {why}");
                    self.finish_job(job, Some(resp), Category::Avoided, Some(reason), None, None);
                    return;
                }
                None => next,
            },
            Err(end) => {
                let (category, reason) = match end {
                    ChainEnd::Broken(r) => (Category::Broken, r),
                    ChainEnd::NotChecked(r) => (Category::NotChecked, r),
                    ChainEnd::Avoided(r) => (Category::Avoided, r),
                };
                self.finish_job(job, Some(resp), category, Some(reason), None, None);
                return;
            }
        };
        // A redirect opens no site: one of the user's own may redirect
        // anywhere a link from elsewhere asks it to (an open redirect), so
        // its target is held to the rule unless its site is open already.
        let site = self.sites.site_of(&next);
        job.request = next;
        job.validators = None;
        job.attempt = 0;
        if self.shared.is_some() {
            let f = self.intern(job.request.clone());
            if f != job.url && !self.holds_site_of(f) {
                // Another worker of the shared run requests that site.
                self.await_hop(job);
                return;
            }
        }
        self.requeue(site, job, None);
    }

    /// Why `next` is excluded by the patterns of every task that reached
    /// `u`, if it is (the first such task's reason).
    fn excluded_by_every_task(&self, u: UrlIdx, next: &url::Url) -> Option<String> {
        let e = self.frontier.get(u);
        let mut why = None;
        for (t, task) in self.tasks.iter().enumerate() {
            if !e.reached.contains(t) {
                continue;
            }
            match task.scope.excluded_by_pattern(next.as_str()) {
                Some(reason) => {
                    why.get_or_insert(reason);
                }
                None => return None,
            }
        }
        why
    }

    /// Record the end of a job: its result, its document, and the redirect target's content.
    pub(super) fn finish_job(
        &mut self,
        job: Box<Job>,
        resp: Option<FetchResponse>,
        category: Category,
        error: Option<String>,
        parsed: Option<Box<ParsedDocument>>,
        hash: Option<String>,
    ) {
        let u = job.url;
        let url = self.frontier.get(u).url.clone();
        let referrer = self
            .frontier
            .get(u)
            .referrer
            .map(|r| self.frontier.get(r).url.to_string());
        let redirected = !job.hops.is_empty();
        let headers = resp.as_ref().map(|r| &r.headers);
        let content_type = headers.and_then(|h| h.content_type.clone());
        let owner = parsed
            .as_ref()
            .and_then(|d| d.owner.clone())
            .or_else(|| headers.and_then(|h| h.owner.clone()));
        let result = job.result(
            &url,
            resp.as_ref(),
            category,
            error.clone(),
            hash,
            owner.clone(),
            referrer,
        );
        if category == Category::Broken {
            Progress::add(&self.progress.errors, 1);
        }
        let final_idx = redirected.then(|| self.intern(job.request.clone()));
        let doc_here = parsed
            .as_ref()
            .filter(|_| !redirected)
            .map(|d| self.doc_info(d, owner.clone()));
        let via_get = job.method == Method::Get && !job.head_fallback;
        let outcome = Outcome {
            category,
            via_get,
            final_url: final_idx,
            doc: doc_here,
            content_type: self.frontier.content_type(content_type.as_deref()),
            error: error.map(String::into_boxed_str),
            status: resp.as_ref().map(|r| r.status),
        };
        // The parse goes to the store writer whole (not copied: a page of
        // 200,000 links is tens of MiB); a redirect's parse is its target's.
        let parsed = match parsed {
            Some(doc) if !redirected => {
                self.writer.send(StoreOp::Document {
                    run: self.ids.run,
                    url: url.to_string(),
                    doc: Box::new((*doc).into()),
                });
                None
            }
            other => other,
        };
        self.complete(u, outcome, Some(result.clone()));
        // A redirect chain that ended in a document settles the target too, without a request of its own.
        if let (Some(f), Some(resp)) = (final_idx, resp.as_ref()) {
            let fe = self.frontier.get(f);
            if matches!(fe.state, UrlState::New | UrlState::Waiting)
                && via_get
                && matches!(category, Category::Moved)
            {
                let fdoc = parsed.as_ref().map(|d| self.doc_info(d, owner.clone()));
                let mut fr = result;
                fr.url = job.request.to_string();
                fr.category = Category::of_status(resp.status, false, self.settings.accept_status);
                fr.redirects.clear();
                fr.final_url = None;
                fr.attempts = 0;
                fr.referrer = Some(url.to_string());
                if let Some(doc) = parsed {
                    self.writer.send(StoreOp::Document {
                        run: self.ids.run,
                        url: job.request.to_string(),
                        doc: Box::new((*doc).into()),
                    });
                }
                if self.frontier.get(f).referrer.is_none() {
                    self.frontier.get_mut(f).referrer = Some(u);
                }
                let fo = Outcome {
                    category: fr.category,
                    via_get: true,
                    final_url: None,
                    doc: fdoc,
                    content_type: self.frontier.content_type(content_type.as_deref()),
                    error: None,
                    status: Some(resp.status),
                };
                self.complete(f, fo, Some(fr));
            }
        }
    }

    pub(super) fn doc_info(&mut self, doc: &ParsedDocument, owner: Option<String>) -> Box<DocInfo> {
        let mut links = Vec::with_capacity(doc.references.len());
        let mut invalid = Vec::new();
        for r in &doc.references {
            match &r.target {
                Ok(t) => links.push((self.intern(t.clone()), r.kind)),
                Err(b) => invalid.push((b.raw.clone(), b.reason.clone())),
            }
        }
        Box::new(DocInfo {
            owner,
            links: links.into(),
            invalid: invalid.into(),
        })
    }

    /// `u` is checked: store the result (if given) and settle it for its tasks.
    pub(super) fn complete(&mut self, u: UrlIdx, outcome: Outcome, result: Option<CheckResult>) {
        let e = self.frontier.get_mut(u);
        e.state = UrlState::Done;
        e.cached = None;
        e.outcome = Some(Box::new(outcome));
        if let Some(r) = result {
            tracing::debug!(
                "{} {} {}",
                r.method.unwrap_or("-"),
                r.status.map_or("-".to_string(), |s| s.to_string()),
                r.url
            );
            self.writer.send(StoreOp::Result {
                run: self.ids.run,
                result: Box::new(r),
            });
        }
        Progress::add(&self.progress.done, 1);
        self.done_queue.push_back(u);
        for j in self.redirects.take_parked(u) {
            self.finish_chain_at(Box::new(j), u);
        }
    }

    /// End a redirect chain at `f`, a URL already checked in this run, without a request.
    pub(super) fn finish_chain_at(&mut self, job: Box<Job>, f: UrlIdx) {
        let (category, status, error, content_type) = {
            let o = self
                .frontier
                .get(f)
                .outcome
                .as_ref()
                .expect("a checked URL has an outcome");
            (
                o.category,
                o.status,
                o.error.as_deref().map(String::from),
                o.content_type.as_deref().map(String::from),
            )
        };
        let target = self.frontier.get(f).url.clone();
        let (category, error) = match category {
            Category::Ok => (Category::Moved, None),
            other => (
                other,
                Some(format!(
                    "redirected to {target}: {}",
                    error.unwrap_or_default()
                )),
            ),
        };
        let resp = status.map(|status| FetchResponse {
            status,
            headers: crate::fetch::ResponseHeaders {
                content_type,
                ..Default::default()
            },
            body: None,
            elapsed: Duration::ZERO,
            raw_headers: Vec::new(),
        });
        let mut job = job;
        job.request = target;
        self.finish_job(job, resp, category, error, None, None);
    }
}

/// The stored validators and lifetime of `stored` updated from the
/// headers of a 304 answer to it: a header the 304 sends replaces the
/// stored one (a new `Expires`, a new `ETag`); one it does not send stays.
pub(super) fn refresh_headers(stored: &mut CheckResult, now: &crate::fetch::ResponseHeaders) {
    for (kept, fresh) in [
        (&mut stored.expires, &now.expires),
        (&mut stored.etag, &now.etag),
        (&mut stored.last_modified, &now.last_modified),
        (&mut stored.owner, &now.owner),
    ] {
        if let Some(v) = fresh {
            *kept = Some(v.clone());
        }
    }
}
