//! The engine: one async loop that owns the frontier and the sites, hands
//! requests to workers, and turns their completions into results, documents
//! and task roles for the store.
//!
//! A run has two phases. First every document candidate is fetched with GET
//! and parsed, across all tasks; leaves discovered meanwhile wait. When no GET
//! work is left, the leaves are tested with HEAD. Because a leaf of one task
//! may be a document of another, this order is what lets each URL be
//! requested at most once per run.

use super::classify::{
    Answer, Checked, JobState, Limits, Next, Role, classify, role_of, status_text,
};
use super::frontier::{DocInfo, Frontier, Outcome, UrlIdx, UrlState};
use super::hooks::off_reactor;
use super::plugin_turn::PluginTurn;
use super::redirects::{ChainEnd, Redirects, next_hop};
use super::reuse::{Reuse, reuse, validators};
use super::site_table::{RobotsTurn, SitePolicy, SiteTable};
use super::sites::{Job, Queued};
use super::summary::TaskSummary;
use super::verdicts::{Beyond, Traversal, Verdicts, with_objection};
use super::worker::{self, AfterVerdicts, Completion, PolicyAnswer, PolicyAsk};
use super::{CrawlOptions, CrawlPlan, CrawlReport, CrawlSettings, Progress};
use crate::fetch::robots::RobotsFetch;
use crate::fetch::{BodyWanted, FetchError, FetchRequest, FetchResponse, Fetcher, Method};
use crate::policy::rules::PrefixRules;
use crate::policy::scope::Scope;
use crate::policy::{Decision, decide};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use spinneret_core::document::{ParsedDocument, RefKind};
use spinneret_core::model::{Category, CheckResult, Hop, Source, unix_now};
use spinneret_core::urls;
use spinneret_store::{CachedResult, RunIds, Store, StoreOp, StoreWriter};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc;
use url::Url;

/// A document's references with a URL, and those without.
type ExpandLists = (Vec<(UrlIdx, RefKind)>, Vec<(String, String)>);

/// A task as the engine runs it.
struct TaskRt {
    id: i64,
    scope: Scope,
    top: UrlIdx,
    /// The task as policy plugins see it.
    info: spinneret_plugin_host::bindings::host::types::TaskInfo,
    /// How far it has traversed, against its bounds.
    traversal: Traversal,
}

/// From where a task first reached a URL, until its role is settled.
struct Reach {
    referrer: Option<UrlIdx>,
}

pub(super) struct Engine<'a> {
    settings: CrawlSettings,
    store: &'a Store,
    writer: StoreWriter,
    ids: RunIds,
    fetcher: Fetcher,
    rules: PrefixRules,
    tasks: Vec<TaskRt>,
    frontier: Frontier,
    /// The sites: robots.txt, politeness, queues, timers.
    sites: SiteTable,
    /// Leaves met in the document phase, queued when it ends.
    deferred_leaves: Vec<UrlIdx>,
    leaf_phase: bool,
    in_flight: usize,
    done_queue: VecDeque<UrlIdx>,
    /// Redirect hops in flight and what waits on them.
    redirects: Redirects,
    /// URLs referenced as form actions, settled as not checked at the end unless
    /// another reference had them checked.
    form_targets: Vec<UrlIdx>,
    reaches: HashMap<(u32, UrlIdx), Reach>,
    /// The policies' verdicts and the documents' depths.
    verdicts: Verdicts,
    /// The crawl's plugins, and the calls gathered this turn.
    plugins: PluginTurn,
    invalid_seen: HashSet<String>,
    stats: Vec<TaskSummary>,
    use_cache: bool,
    progress: Arc<Progress>,
    requests: u64,
    /// Results of earlier runs reused without a request (`result_max_age`).
    reused: u64,
    tx: mpsc::UnboundedSender<Completion>,
    rx: mpsc::UnboundedReceiver<Completion>,
    started: Instant,
}

impl<'a> Engine<'a> {
    /// Load the rules, open the run and seed the frontier with every task's top URL.
    pub(super) fn prepare(
        plan: &CrawlPlan<'_>,
        store: &'a Store,
        ids: RunIds,
        options: &CrawlOptions,
        progress: Arc<Progress>,
    ) -> anyhow::Result<Engine<'a>> {
        let settings = plan.settings.clone();
        let (rules, robots_files) =
            crate::policy::load_rules(&settings.rule_files, SystemTime::now())?;
        let use_cache = store.has_results()?;
        let cached_sites = store.load_sites(unix_now())?;
        let writer = store.writer()?;
        let fetcher = Fetcher::new(&settings.fetch)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let site_policy = SitePolicy {
            robot_name: settings.robot_name.clone(),
            robots_rules: settings.robots_rules,
            per_site_connections: settings.per_site_connections,
            per_site_delay: settings.per_site_delay,
            max_crawl_delay: settings.max_crawl_delay,
            robots_expiry: settings.robots_expiry,
            retries: settings.retries,
        };
        let mut engine = Engine {
            settings,
            store,
            writer,
            fetcher,
            rules,
            tasks: Vec::new(),
            frontier: Frontier::default(),
            sites: SiteTable::new(site_policy, cached_sites, robots_files),
            deferred_leaves: Vec::new(),
            leaf_phase: false,
            in_flight: 0,
            done_queue: VecDeque::new(),
            redirects: Redirects::new(),
            form_targets: Vec::new(),
            reaches: HashMap::new(),
            verdicts: Verdicts::new(
                options
                    .hooks
                    .as_ref()
                    .is_some_and(|h| h.policies_judge_urls_alone()),
                options
                    .hooks
                    .as_ref()
                    .is_some_and(|h| h.policies_read_depth()),
            ),
            plugins: PluginTurn::new(options.hooks.clone()),
            invalid_seen: HashSet::new(),
            stats: Vec::new(),
            use_cache,
            progress,
            requests: 0,
            reused: 0,
            tx,
            rx,
            started: Instant::now(),
            ids,
        };
        for t in &plan.tasks {
            let top = engine.intern(t.top.clone());
            engine.tasks.push(TaskRt {
                id: engine.ids.tasks[t.name()],
                scope: Scope::new(t.name(), t.kind(), t.top, t.exclude),
                top,
                info: spinneret_plugin_host::reporter::task_info(&t.record),
                traversal: Traversal::new(t.bounds),
            });
            engine.stats.push(TaskSummary {
                name: t.name().to_string(),
                ..TaskSummary::default()
            });
        }
        Ok(engine)
    }

    /// Crawl until every task is done or `stop` turns true.
    pub(super) async fn run(
        mut self,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> anyhow::Result<CrawlReport> {
        self.plugins.begin();
        for t in 0..self.tasks.len() {
            let top = self.tasks[t].top;
            self.reach(t, top, RefKind::Anchor, None);
        }
        let mut stopping = *stop.borrow();
        loop {
            // Dispatching can settle URLs (robots refusals, hops to checked URLs) and
            // settling can queue work: go round until both are quiet.
            loop {
                self.drain_done();
                if !stopping {
                    self.pump();
                }
                if self.done_queue.is_empty() {
                    break;
                }
            }
            if self.plugins.send(&self.tx) {
                // Counted as in flight, so the crawl waits for the answers.
                self.in_flight += 1;
            }
            self.plugins.end();
            self.progress.queued.store(
                (self.sites.queued() + self.deferred_leaves.len()) as u64,
                std::sync::atomic::Ordering::Relaxed,
            );
            if self.in_flight == 0 {
                if stopping {
                    break;
                }
                if self.sites.runnable() > 0 {
                    continue;
                }
                if self.sites.timers() == 0 {
                    if self.leaf_phase {
                        if self.settle_form_targets() {
                            continue;
                        }
                        break;
                    }
                    self.start_leaf_phase();
                    continue;
                }
            }
            let next_timer = self.sites.next_timer();
            tracing::trace!(
                in_flight = self.in_flight,
                runnable = self.sites.runnable(),
                timers = self.sites.timers(),
                parked = self.redirects.parked(),
                leaf_phase = self.leaf_phase,
                "waiting"
            );
            tokio::select! {
                Some(c) = self.rx.recv() => {
                    self.handle(c);
                    // Take whatever else is ready before dispatching again.
                    while let Ok(c) = self.rx.try_recv() {
                        self.handle(c);
                    }
                }
                _ = sleep_until_opt(next_timer) => self.sites.fire_timers(Instant::now()),
                changed = stop.changed(), if !stopping => {
                    if changed.is_err() || *stop.borrow() {
                        tracing::warn!("stopping: letting {} requests in flight finish", self.in_flight);
                        stopping = true;
                    }
                }
            }
        }
        self.finish(stopping)
    }

    fn finish(self, interrupted: bool) -> anyhow::Result<CrawlReport> {
        let Engine {
            writer,
            store,
            ids,
            stats,
            requests,
            reused,
            started,
            sites,
            ..
        } = self;
        writer.flush();
        writer.close()?;
        if let Err(e) = sites.save_files(SystemTime::now()) {
            tracing::error!(
                "the avoid and sites files could not be written ({e}); their sites' robots.txt will be read again at the next run"
            );
        }
        // `crawled`, not `finished`: a run is finished when its report
        // stage and mail are done (the command line marks it); until then
        // `--resume` takes it up again, making no requests for what it stored.
        store.end_run(
            ids.run,
            if interrupted {
                "interrupted"
            } else {
                "crawled"
            },
        )?;
        Ok(CrawlReport {
            run: ids.run,
            resumed: ids.resumed,
            interrupted,
            tasks: stats,
            requests,
            reused,
            elapsed: started.elapsed(),
        })
    }

    // ----- the frontier -------------------------------------------------------------------

    fn intern(&mut self, url: Url) -> UrlIdx {
        if let Some(i) = self.frontier.lookup(url.as_str()) {
            return i;
        }
        let site = self.sites.site_of(&url);
        self.frontier.intern(url, |_| site)
    }

    /// Task `t` reaches `u` through a reference of `kind` from `referrer`.
    fn reach(&mut self, t: usize, u: UrlIdx, kind: RefKind, referrer: Option<UrlIdx>) {
        let decision = {
            let e = self.frontier.get(u);
            let from = referrer.map(|r| &self.frontier.get(r).url);
            decide(&self.tasks[t].scope, &self.rules, &e.url, kind, from)
        };
        let is_top = self.tasks[t].top == u;
        let decision = if is_top && matches!(decision, Decision::Leaf(_)) {
            // The top is a document of its own task whatever its kind.
            Decision::Traverse
        } else {
            decision
        };
        let decision = self.ask_policies(t, u, kind, referrer, decision);
        let decision = self.bounded(t, u, referrer, decision);
        let e = self.frontier.get_mut(u);
        if e.reached.contains(t) {
            // Reached again: a navigational reference may upgrade a pending leaf to a document.
            if decision == Decision::Traverse
                && !e.doc_tasks.contains(t)
                && !e.finalized.contains(t)
            {
                e.doc_tasks.insert(t);
                if e.state == UrlState::Done {
                    self.done_queue.push_back(u);
                } else {
                    self.want(u);
                }
            }
            return;
        }
        e.reached.insert(t);
        if e.referrer.is_none() {
            e.referrer = referrer;
        }
        let mut request = true;
        match decision {
            Decision::NotChecked(_) if kind == RefKind::Form && urls::is_checkable(&e.url) => {
                // Not requested for the form's sake; another reference may still check it.
                self.form_targets.push(u);
                request = false;
            }
            Decision::NotChecked(r) => self.unrequested(u, Category::NotChecked, &r),
            Decision::Avoid(r) => self.unrequested(u, Category::Avoided, &r),
            Decision::Leaf(_) => {}
            Decision::Traverse => {
                self.frontier.get_mut(u).doc_tasks.insert(t);
            }
        }
        self.reaches.insert((t as u32, u), Reach { referrer });
        if !request {
            return;
        }
        if self.frontier.get(u).state == UrlState::Done {
            // Settled from the done queue, so that reused webs never recurse deeply.
            self.done_queue.push_back(u);
        } else {
            self.want(u);
        }
    }

    /// Policy plugins may make the host's decision more restrictive: a
    /// document candidate a leaf, or any request avoided. Asked once per
    /// task and URL (once per URL when they judge URLs alone): the
    /// references of a document in one batch at the end of the turn
    /// ([`Engine::ask_policies_for_links`]) and a redirect's target likewise
    /// ([`Engine::ask_policies_for_redirect`]); a task's top here, off the
    /// reactor (`block_in_place`).
    fn ask_policies(
        &mut self,
        t: usize,
        u: UrlIdx,
        kind: RefKind,
        referrer: Option<UrlIdx>,
        decision: Decision,
    ) -> Decision {
        if !self.has_policies() || !matches!(decision, Decision::Traverse | Decision::Leaf(_)) {
            return decision;
        }
        let depth = referrer.map_or(0, |r| self.verdicts.depth_below(t, r));
        let verdict = match self.policies_asked(t, u) {
            true => self.verdicts.objection(t, u),
            false => {
                let hooks = self.plugins.hooks().cloned().expect("policies are hooks");
                let target = self.frontier.get(u).url.to_string();
                let from = referrer.map(|r| self.frontier.get(r).url.to_string());
                let info = self.tasks[t].info.clone();
                let v = off_reactor(|| {
                    let candidates = vec![(u, target, kind)];
                    hooks.decide(info, from, depth, candidates).pop().flatten()
                });
                self.note_verdict(t, u, v.clone());
                v
            }
        };
        with_objection(verdict, decision)
    }

    /// A document candidate of task `t` beyond the task's bounds (deeper
    /// than `max_depth`, or past `max_documents`) is a leaf, with the bound
    /// as its reason; within them it counts, and its depth is kept.
    fn bounded(
        &mut self,
        t: usize,
        u: UrlIdx,
        referrer: Option<UrlIdx>,
        decision: Decision,
    ) -> Decision {
        if decision != Decision::Traverse || self.verdicts.counted(t, u) {
            return decision;
        }
        let depth = referrer.map_or(0, |r| self.verdicts.depth_of(t, r) + 1);
        let Beyond { bound, first } = match self.tasks[t].traversal.admit(depth) {
            Ok(()) => {
                self.verdicts.count(t, u, depth);
                return decision;
            }
            Err(beyond) => beyond,
        };
        if first {
            let note = format!(
                "reached its {bound} at {}; documents beyond it are tested as leaves, not traversed",
                self.frontier.get(u).url
            );
            tracing::warn!("task {}: {note}", self.tasks[t].info.name);
            self.stats[t].bounds_hit.push(note);
        }
        Decision::Leaf(format!("beyond the task's {bound}"))
    }

    /// Whether the crawl has policy plugins.
    fn has_policies(&self) -> bool {
        self.plugins.has_policies()
    }

    /// Keep the policies' verdict on `u` for task `t` (unless one was kept
    /// meanwhile: it stands).
    fn note_verdict(&mut self, t: usize, u: UrlIdx, verdict: Option<Decision>) {
        let asked = &mut self.frontier.get_mut(u).policy_asked;
        self.verdicts.note(asked, t, u, verdict);
    }

    /// Whether the policies were asked about `u` for task `t`.
    fn policies_asked(&self, t: usize, u: UrlIdx) -> bool {
        self.verdicts.asked(&self.frontier.get(u).policy_asked, t)
    }

    /// Before task `t` follows the references of document `d`: ask the
    /// policies about those it has not asked about yet, all at once, at the
    /// end of the turn ([`Engine::send_plugin_questions`]). Returns whether it did: the
    /// references are then followed when the verdicts come back
    /// ([`Completion::Policies`]), and [`Engine::ask_policies`] finds them.
    fn ask_policies_for_links(&mut self, t: usize, d: UrlIdx, links: &[(UrlIdx, RefKind)]) -> bool {
        let depth = self.verdicts.depth_below(t, d);
        self.ask_policies_later(t, d, depth, links, AfterVerdicts::Expand(d))
    }

    /// Before task `t` follows the moved URL `from` to its final URL
    /// `target`: ask the policies about it at the end of the turn, as
    /// [`Engine::ask_policies_for_links`] does. Returns whether it did.
    fn ask_policies_for_redirect(&mut self, t: usize, from: UrlIdx, target: UrlIdx) -> bool {
        let depth = self.verdicts.depth_below(t, from);
        let then = AfterVerdicts::FollowRedirect { from, target };
        self.ask_policies_later(t, from, depth, &[(target, RefKind::Anchor)], then)
    }

    /// Ask the policies about those of `links` (found in `referrer` by task
    /// `t`, at `depth`) not asked about yet and that the host would request,
    /// in one call at the end of the turn; `then` is done when the verdicts
    /// are back. Returns whether there was anything to ask.
    fn ask_policies_later(
        &mut self,
        t: usize,
        referrer: UrlIdx,
        depth: u32,
        links: &[(UrlIdx, RefKind)],
        then: AfterVerdicts,
    ) -> bool {
        if !self.has_policies() {
            return false;
        }
        let mut seen = HashSet::new();
        let mut asks = Vec::new();
        let from = &self.frontier.get(referrer).url;
        for &(u, kind) in links {
            let e = self.frontier.get(u);
            if self.policies_asked(t, u) || !seen.insert(u) {
                continue;
            }
            // Asked only where the host would request it (as in ask_policies).
            if matches!(
                decide(&self.tasks[t].scope, &self.rules, &e.url, kind, Some(from)),
                Decision::Traverse | Decision::Leaf(_)
            ) {
                asks.push((u, e.url.as_str().to_string(), kind));
            }
        }
        if asks.is_empty() {
            return false;
        }
        self.plugins.ask(PolicyAsk {
            task: t,
            info: self.tasks[t].info.clone(),
            referrer: self.frontier.get(referrer).url.as_str().to_string(),
            depth,
            asks,
            then,
        });
        true
    }

    /// Record a URL that gets no request (avoided by rule, or not checkable).
    fn unrequested(&mut self, u: UrlIdx, category: Category, reason: &str) {
        let e = self.frontier.get(u);
        if e.state == UrlState::Done {
            return;
        }
        let referrer = e.referrer.map(|r| self.frontier.get(r).url.to_string());
        let result =
            CheckResult::unrequested(e.url.as_str(), category, reason, referrer, unix_now());
        let outcome = Outcome {
            category,
            via_get: true,
            final_url: None,
            doc: None,
            content_type: None,
            error: Some(reason.to_string()),
            status: None,
        };
        self.complete(u, outcome, Some(result));
    }

    /// Make sure a request for `u` is planned, by the method its tasks need.
    fn want(&mut self, u: UrlIdx) {
        let (state, need_get, queued_get, site) = {
            let e = self.frontier.get(u);
            (e.state, !e.doc_tasks.is_empty(), e.queued_get, e.site)
        };
        match state {
            UrlState::New => {
                if self.settle_from_robots(u) {
                    return;
                }
                if self.use_cache && self.try_cache(u, need_get) {
                    return;
                }
                self.frontier.get_mut(u).state = UrlState::Waiting;
                self.enqueue(u, need_get, site);
            }
            UrlState::Waiting if need_get && !queued_get => self.enqueue(u, true, site),
            _ => {}
        }
    }

    /// A link to a site's robots.txt is answered by this run's robots.txt request.
    fn settle_from_robots(&mut self, u: UrlIdx) -> bool {
        let e = self.frontier.get(u);
        let Some((status, content_type)) = self.sites.robots_answer(e.site) else {
            return false;
        };
        if e.url.path() != "/robots.txt" || e.url.query().is_some() {
            return false;
        }
        let referrer = e.referrer.map(|r| self.frontier.get(r).url.to_string());
        let category = Category::of_status(status, false);
        let mut result =
            CheckResult::unrequested(e.url.as_str(), category, "", referrer, unix_now());
        result.method = Some("GET");
        result.status = Some(status);
        result.error = (category != Category::Ok).then(|| status_text(status));
        result.content_type = content_type.clone();
        let outcome = Outcome {
            category,
            via_get: true,
            final_url: None,
            doc: None,
            content_type,
            error: result.error.clone(),
            status: Some(status),
        };
        self.complete(u, outcome, Some(result));
        true
    }

    /// Queue `u`'s request on `site`: a document's now, a leaf's in the
    /// leaf phase.
    fn enqueue(&mut self, u: UrlIdx, need_get: bool, site: u32) {
        if need_get {
            self.frontier.get_mut(u).queued_get = true;
            self.sites.push_get(site, Queued::Initial(u));
        } else if self.leaf_phase {
            self.sites.push_head(site, Queued::Initial(u));
        } else {
            self.deferred_leaves.push(u);
        }
    }

    /// Record the form actions nothing else had checked; true when there were any.
    fn settle_form_targets(&mut self) -> bool {
        let targets = std::mem::take(&mut self.form_targets);
        let mut any = false;
        for u in targets {
            if self.frontier.get(u).state == UrlState::New {
                self.unrequested(u, Category::NotChecked, "form actions are not requested");
                any = true;
            } else if self.frontier.get(u).state == UrlState::Done {
                self.done_queue.push_back(u);
                any = true;
            }
        }
        any
    }

    fn start_leaf_phase(&mut self) {
        self.leaf_phase = true;
        let leaves = std::mem::take(&mut self.deferred_leaves);
        tracing::debug!("documents done; testing {} leaves", leaves.len());
        for u in leaves {
            let e = self.frontier.get(u);
            if e.state == UrlState::Waiting && !e.queued_get {
                self.sites.push_head(e.site, Queued::Initial(u));
            }
        }
    }

    // ----- earlier results ----------------------------------------------------------------

    /// Reuse or prepare to revalidate an earlier result; true when `u` is settled by it.
    fn try_cache(&mut self, u: UrlIdx, need_get: bool) -> bool {
        let url = self.frontier.get(u).url.to_string();
        let cached = match self.store.latest_result(&url) {
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

    /// Settle `u` with an earlier result; `source` is how to record it (None: already recorded in this run).
    fn complete_cached(&mut self, u: UrlIdx, cached: CachedResult, source: Option<Source>) {
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
            content_type: r.content_type.clone(),
            error: r.error.clone(),
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

    fn load_doc(&mut self, url: &str, owner: Option<String>) -> Option<DocInfo> {
        let links = match self.store.document_links(url) {
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
                Ok(t) => valid.push((self.intern(t), kind)),
                Err(e) => invalid.push((target, e.to_string())),
            }
        }
        Some(DocInfo {
            owner,
            links: valid.into(),
            invalid: invalid.into(),
        })
    }

    // ----- dispatch -----------------------------------------------------------------------

    fn pump(&mut self) {
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
    fn dispatch_one(&mut self, s: u32, now: Instant) -> bool {
        match self.sites.robots_turn(s, now) {
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
            let mut job = match q {
                Queued::Initial(u) => {
                    let e = self.frontier.get(u);
                    if e.state != UrlState::Waiting {
                        // Settled meanwhile (a redirect target, or a duplicate queue entry).
                        continue;
                    }
                    if self.redirects.wait_for_hop(u) {
                        // A redirect hop is fetching this very URL; its answer may settle it.
                        continue;
                    }
                    Box::new(self.initial_job(u))
                }
                Queued::Continue(j) => {
                    if !j.hops.is_empty() {
                        // A hop to a URL the run checks anyway is not requested twice.
                        if let Some(f) = self
                            .frontier
                            .lookup(j.request.as_str())
                            .filter(|f| *f != j.url)
                        {
                            match self.frontier.get(f).state {
                                UrlState::Done => {
                                    self.finish_chain_at(j, f);
                                    continue;
                                }
                                UrlState::InFlight => {
                                    self.redirects.park(f, *j);
                                    continue;
                                }
                                UrlState::New | UrlState::Waiting => {}
                            }
                        }
                    }
                    let mut j = j;
                    if !j.hops.is_empty() {
                        j.hop_target = self
                            .frontier
                            .lookup(j.request.as_str())
                            .filter(|f| *f != j.url);
                        if let Some(f) = j.hop_target {
                            self.redirects.hop_leaves(f);
                        }
                    }
                    j
                }
            };
            if let Some(t) = job.not_before.filter(|t| *t > now) {
                self.sites.push_front(s, Queued::Continue(job));
                self.sites.wake_at(t, s);
                return false;
            }
            // robots.txt, at the moment the request would leave.
            let refusal = self.sites.refusal(s, &job.request);
            if let Some((category, reason)) = refusal {
                let u = job.url;
                if job.hops.is_empty() {
                    self.unrequested(u, category, &reason);
                } else {
                    let reason = format!("redirected to {}: {reason}", job.request);
                    self.finish_job(job, None, category, Some(reason), None, None);
                }
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
            self.in_flight += 1;
            self.requests += 1;
            Progress::add(&self.progress.in_flight, 1);
            let u = job.url;
            self.frontier.get_mut(u).state = UrlState::InFlight;
            job.requests += 1;
            let referrer = self
                .frontier
                .get(u)
                .referrer
                .map(|r| self.frontier.get(r).url.clone());
            let mut req = FetchRequest {
                url: job.request.clone(),
                method: job.method,
                referrer,
                validators: job.validators.clone(),
                body: job.body,
                extra_headers: Vec::new(),
            };
            let fetcher = self.fetcher.clone();
            let hooks = self.plugins.hooks().cloned();
            let tx = self.tx.clone();
            let max_body = self.settings.fetch.max_body;
            // The request hooks see it here while the engine makes the
            // plugin calls itself, else on the plugin thread.
            if let Some(h) = hooks.as_ref().filter(|h| h.has_request_hooks()) {
                if !self.plugins.here() {
                    let h = h.clone();
                    let ask = worker::ask_hooks_then_fetch(fetcher, s, job, req, max_body, h, tx);
                    tokio::spawn(ask);
                    return true;
                }
                let verdict = self.plugins.run_here(h, || {
                    let (url, method) = (&req.url, req.method.as_str());
                    h.before_request(url, method, req.referrer.as_ref())
                });
                if let Some(reason) = worker::heed(Some(verdict), &mut req) {
                    let _ = tx.send(worker::vetoed(s, job, reason));
                    return true;
                }
            }
            tokio::spawn(worker::fetch(fetcher, s, job, req, max_body, hooks, tx));
            return true;
        }
    }

    fn initial_job(&mut self, u: UrlIdx) -> Job {
        let e = self.frontier.get(u);
        let get = !e.doc_tasks.is_empty();
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
    fn start_robots(&mut self, s: u32, now: Instant) {
        let Some(url) = self.sites.start_robots(s, now) else {
            return;
        };
        self.in_flight += 1;
        self.requests += 1;
        Progress::add(&self.progress.in_flight, 1);
        let fetcher = self.fetcher.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(worker::robots(fetcher, s, url).await);
        });
    }

    // ----- completions --------------------------------------------------------------------

    fn handle(&mut self, c: Completion) {
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
    fn robots_done(&mut self, s: u32, outcome: RobotsFetch) {
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
    fn requeue(&mut self, site: u32, mut job: Box<Job>, at: Option<Instant>) {
        job.not_before = at;
        self.frontier.get_mut(job.url).state = UrlState::Waiting;
        self.sites.push_get(site, Queued::Continue(job));
    }

    fn fetch_done(
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

    fn fetch_answered(
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
        };
        let limits = Limits {
            retries: self.settings.retries,
            max_retry_after: self.settings.max_retry_after,
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
                    Some(cached) => self.complete_cached(u, *cached, Some(Source::NotModified)),
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
    fn follow_redirect(&mut self, mut job: Box<Job>, resp: FetchResponse, location: &str) {
        let from = job.request.clone();
        job.hops.push(Hop {
            url: from.to_string(),
            status: resp.status,
        });
        let origin = &self.frontier.get(job.url).url;
        let next = match next_hop(origin, &from, location, &job.hops, &self.rules) {
            Ok(next) => next,
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
        let site = self.sites.site_of(&next);
        job.request = next;
        job.validators = None;
        job.attempt = 0;
        self.requeue(site, job, None);
    }

    /// Record the end of a job: its result, its document, and the redirect target's content.
    fn finish_job(
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
            content_type: content_type.clone(),
            error,
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
                fr.category = Category::of_status(resp.status, false);
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
                    content_type,
                    error: None,
                    status: Some(resp.status),
                };
                self.complete(f, fo, Some(fr));
            }
        }
    }

    fn doc_info(&mut self, doc: &ParsedDocument, owner: Option<String>) -> DocInfo {
        let mut links = Vec::with_capacity(doc.references.len());
        let mut invalid = Vec::new();
        for r in &doc.references {
            match &r.target {
                Ok(t) => links.push((self.intern(t.clone()), r.kind)),
                Err(b) => invalid.push((b.raw.clone(), b.reason.clone())),
            }
        }
        DocInfo {
            owner,
            links: links.into(),
            invalid: invalid.into(),
        }
    }

    /// `u` is checked: store the result (if given) and settle it for its tasks.
    fn complete(&mut self, u: UrlIdx, outcome: Outcome, result: Option<CheckResult>) {
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
    fn finish_chain_at(&mut self, job: Box<Job>, f: UrlIdx) {
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
                o.error.clone(),
                o.content_type.clone(),
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
        });
        let mut job = job;
        job.request = target;
        self.finish_job(job, resp, category, error, None, None);
    }

    fn drain_done(&mut self) {
        while let Some(u) = self.done_queue.pop_front() {
            let pending: Vec<usize> = {
                let e = self.frontier.get(u);
                e.reached
                    .iter()
                    .filter(|t| !e.finalized.contains(*t))
                    .collect()
            };
            for t in pending {
                self.settle(t, u);
            }
        }
    }

    /// Settle task `t`'s role for the checked URL `u`: store it, count it, and expand a document.
    fn settle(&mut self, t: usize, u: UrlIdx) {
        let e = self.frontier.get(u);
        if e.finalized.contains(t) {
            return;
        }
        let Some(outcome) = e.outcome.as_ref() else {
            return;
        };
        let wants_doc = e.doc_tasks.contains(t);
        if wants_doc && !outcome.settles_document() {
            // Only a HEAD result is known but this task needs the document: ask with GET.
            let e = self.frontier.get_mut(u);
            e.state = UrlState::New;
            e.outcome = None;
            self.want(u);
            return;
        }
        let category = outcome.category;
        let referrer = self.reaches.remove(&(t as u32, u)).and_then(|r| r.referrer);
        let task = &self.tasks[t];
        let (role, follow) = role_of(Checked {
            category,
            wants_document: wants_doc,
            parsed: outcome
                .doc
                .as_ref()
                .map(|doc| task.top == u || task.scope.owns(doc.owner.as_deref())),
            moved_to: outcome.final_url,
        });
        self.frontier.get_mut(u).finalized.insert(t);
        self.stats[t].count(role, category);
        if role == Role::Document {
            self.writer.send(StoreOp::TaskDocument {
                run: self.ids.run,
                task: self.tasks[t].id,
                url: self.frontier.get(u).url.to_string(),
                referrer: referrer.map(|r| self.frontier.get(r).url.to_string()),
            });
        }
        if let Some(f) = follow {
            // The traversal goes on at the redirect's target, if it lies in
            // the task's scope (once the policies have had their say).
            if !self.ask_policies_for_redirect(t, u, f) {
                self.reach(t, f, RefKind::Anchor, Some(u));
            }
        }
        if role == Role::Document {
            self.expand(t, u);
        }
    }

    /// Task `t` has document `d`: reach every reference it makes.
    fn expand(&mut self, t: usize, d: UrlIdx) {
        let (links, invalid): ExpandLists = {
            let doc = self
                .frontier
                .get(d)
                .outcome
                .as_ref()
                .and_then(|o| o.doc.as_ref());
            match doc {
                Some(doc) => (doc.links.to_vec(), doc.invalid.to_vec()),
                None => return,
            }
        };
        if self.ask_policies_for_links(t, d, &links) {
            // Followed when the verdicts are back.
            return;
        }
        self.stats[t].references += (links.len() + invalid.len()) as u64;
        for (target, kind) in links {
            self.reach(t, target, kind, Some(d));
        }
        let source = self.frontier.get(d).url.to_string();
        for (raw, why) in invalid {
            self.stats[t].broken += 1;
            self.stats[t].leafed += 1;
            let reason = format!("not a valid URL ({why})");
            if self.invalid_seen.insert(raw.clone()) {
                let r = CheckResult::unrequested(
                    &raw,
                    Category::Broken,
                    &reason,
                    Some(source.clone()),
                    unix_now(),
                );
                self.writer.send(StoreOp::Result {
                    run: self.ids.run,
                    result: Box::new(r),
                });
            }
        }
    }
}

async fn sleep_until_opt(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}
