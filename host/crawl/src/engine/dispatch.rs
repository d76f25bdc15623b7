//! Dispatching: which site may send its next request now (its gate, its
//! robots.txt, its queue), the request a queued URL starts as (HEAD for a
//! leaf, GET for a document, conditional where an earlier result lends its
//! validators), and the reading of a site's robots.txt before its first
//! request.

use super::*;

impl Engine<'_> {
    pub(super) fn pump(&mut self) {
        let now = Instant::now();
        let mut budget = self.sites.runnable();
        while self.in_flight < self.settings.concurrency && budget > 0 {
            let Some(s) = self.sites.next_runnable() else {
                break;
            };
            budget -= 1;
            if self.dispatch_one(s, now) && self.sites.has_work(s) {
                self.sites.make_runnable(s);
                budget += 1;
            }
        }
    }

    /// Start one request for site `s` (or settle queued work without one); true when it may go on.
    pub(super) fn dispatch_one(&mut self, s: u32, now: Instant) -> bool {
        match self.sites.robots_turn(s, now) {
            RobotsTurn::Read if !self.sites.is_open(s) && self.address_refused(s) => {}
            RobotsTurn::Read => {
                self.start_robots(s, now);
                return false;
            }
            RobotsTurn::Wait => return false,
            RobotsTurn::Go => {}
        }
        loop {
            let Some(q) = self.sites.pop(s) else {
                return false;
            };
            let Some(job) = self.job_to_send(q) else {
                continue;
            };
            if let Some(t) = job.not_before.filter(|t| *t > now) {
                self.sites.push_front(s, Queued::Continue(job));
                self.sites.wake_at(t, s);
                return false;
            }
            // robots.txt, at the moment the request would leave.
            if let Some((category, reason)) = self.sites.refusal(s, &job.request) {
                self.refused_by_robots(job, category, reason);
                continue;
            }
            if !self.sites.try_start(s, now) {
                let q = match job.hops.is_empty() && job.attempt == 0 && !job.head_fallback {
                    true => Queued::Initial(job.url),
                    false => Queued::Continue(job),
                };
                self.sites.push_front(s, q);
                return false;
            }
            self.send(s, job);
            return true;
        }
    }

    /// The job a queued entry starts or continues, or `None` when there is
    /// nothing to send for it now (settled meanwhile, or waiting on a hop).
    fn job_to_send(&mut self, q: Queued) -> Option<Box<Job>> {
        match q {
            Queued::Initial(u) => {
                let e = self.frontier.get(u);
                if e.state != UrlState::Waiting {
                    // Settled meanwhile (a redirect target, or a duplicate queue entry).
                    return None;
                }
                if self.redirects.wait_for_hop(u) {
                    // A redirect hop is fetching this very URL; its answer may settle it.
                    return None;
                }
                Some(Box::new(self.initial_job(u)))
            }
            Queued::Continue(j) => self.continued_job(j),
        }
    }

    /// A retry or a redirect hop, about to leave: a hop to a URL the run
    /// checks anyway is not requested twice (it ends the chain there when
    /// that URL is done, or waits parked while it is in flight); a hop
    /// that is sent notes the URL it reaches.
    fn continued_job(&mut self, mut j: Box<Job>) -> Option<Box<Job>> {
        if j.hops.is_empty() {
            return Some(j);
        }
        if let Some(f) = self
            .frontier
            .lookup(j.request.as_str())
            .filter(|f| *f != j.url)
        {
            match self.frontier.get(f).state {
                UrlState::Done => {
                    self.finish_chain_at(j, f);
                    return None;
                }
                UrlState::InFlight => {
                    self.redirects.park(f, *j);
                    return None;
                }
                UrlState::New | UrlState::Waiting => {}
            }
        }
        j.hop_target = self
            .frontier
            .lookup(j.request.as_str())
            .filter(|f| *f != j.url);
        if let Some(f) = j.hop_target {
            self.redirects.hop_leaves(f);
        }
        Some(j)
    }

    /// Settle a job whose request robots.txt (or the site's state) refuses:
    /// a first request is recorded as not made; a redirect hop ends its
    /// chain with the refusal.
    fn refused_by_robots(&mut self, job: Box<Job>, category: Category, reason: String) {
        if job.hops.is_empty() {
            self.unrequested(job.url, category, &reason);
        } else {
            let reason = format!("redirected to {}: {reason}", job.request);
            self.finish_job(job, None, category, Some(reason), None, None);
        }
    }

    /// Send `job`'s request to site `s`, whose gate has let it through:
    /// it is counted in flight, and the request hooks see it first (here
    /// while the engine makes the plugin calls itself, else on the plugin
    /// thread).
    fn send(&mut self, s: u32, mut job: Box<Job>) {
        self.in_flight += 1;
        self.requests += 1;
        Progress::add(&self.progress.in_flight, 1);
        self.frontier.get_mut(job.url).state = UrlState::InFlight;
        job.requests += 1;
        let mut req = self.fetch_request(s, &job);
        let fetcher = self.fetcher.clone();
        let hooks = self.plugins.hooks().cloned();
        let tx = self.tx.clone();
        let max_body = self.settings.fetch.max_body;
        if let Some(h) = hooks.as_ref().filter(|h| h.has_request_hooks()) {
            if !self.plugins.here() {
                let h = h.clone();
                let ask = worker::ask_hooks_then_fetch(fetcher, s, job, req, max_body, h, tx);
                tokio::spawn(ask);
                return;
            }
            let verdict = self.plugins.run_here(h, || {
                let (url, method) = (&req.url, req.method.as_str());
                h.before_request(url, method, req.referrer.as_ref())
            });
            if let Some(reason) = worker::heed(Some(verdict), &mut req) {
                let _ = tx.send(worker::vetoed(s, job, reason));
                return;
            }
        }
        tokio::spawn(worker::fetch(fetcher, s, job, req, max_body, hooks, tx));
    }

    /// The request `job` makes of site `s`, with the referrer of its URL.
    fn fetch_request(&self, s: u32, job: &Job) -> FetchRequest {
        let referrer = self
            .frontier
            .get(job.url)
            .referrer
            .map(|r| self.frontier.get(r).url.clone());
        FetchRequest {
            url: job.request.clone(),
            method: job.method,
            referrer,
            validators: job.validators.clone(),
            body: job.body,
            extra_headers: Vec::new(),
            keep_headers: false,
            public_only: !self.sites.is_open(s),
        }
    }

    pub(super) fn initial_job(&mut self, u: UrlIdx) -> Job {
        let hop_get = self.hop_wants_get(u);
        let e = self.frontier.get(u);
        let get = hop_get || !e.doc_tasks.is_empty();
        let validators = e.cached.as_ref().and_then(|c| validators(c, get));
        Job {
            url: u,
            request: e.url.clone(),
            method: if get { Method::Get } else { Method::Head },
            body: if get {
                BodyWanted::IfHtml
            } else {
                BodyWanted::No
            },
            validators,
            hops: Vec::new(),
            attempt: 0,
            requests: 0,
            head_fallback: false,
            not_before: None,
            elapsed: Duration::ZERO,
            hop_target: None,
        }
    }

    /// Read site `s`'s robots.txt before its first request.
    pub(super) fn start_robots(&mut self, s: u32, now: Instant) {
        let Some(url) = self.sites.start_robots(s, now) else {
            return;
        };
        self.in_flight += 1;
        self.requests += 1;
        Progress::add(&self.progress.in_flight, 1);
        let fetcher = self.fetcher.clone();
        let tx = self.tx.clone();
        let public_only = !self.sites.is_open(s);
        tokio::spawn(async move {
            let _ = tx.send(worker::robots(fetcher, s, url, public_only).await);
        });
    }

    /// Whether the address rule keeps the run from site `s` by its host
    /// alone (`localhost`, a local address in the URL), and if so, mark
    /// the site refused: nothing of it is requested, robots.txt included.
    fn address_refused(&mut self, s: u32) -> bool {
        match self.fetcher.address_refusal(self.sites.origin(s)) {
            Some(refusal) => {
                self.sites.refuse(s, refusal.to_string());
                true
            }
            None => false,
        }
    }

    // ----- completions --------------------------------------------------------------------
}
