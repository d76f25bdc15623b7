//! The engine: one async loop that owns the frontier and the sites, hands
//! requests to workers, and turns their completions into results, documents
//! and task roles for the store.
//!
//! A run has two phases. First every document candidate is fetched with GET
//! and parsed, across all tasks; leaves discovered meanwhile wait. When no GET
//! work is left, the leaves are tested with HEAD. Because a leaf of one task
//! may be a document of another, this order is what lets each URL be
//! requested at most once per run.
//!
//! This module keeps the loop (`run`), the state, and how a task reaches,
//! settles and expands a URL; its children hold the rest of the engine's
//! work: [`dispatch`] (what leaves next), [`answers`] (what a finished
//! request leads to), [`policy_questions`] (asking the policy plugins) and
//! [`earlier_results`] (reusing what earlier runs found), [`shared_run`]
//! (a run shared with other worker processes) and [`sitemaps`] (the pages
//! the tops' sitemaps list).

mod answers;
mod dispatch;
mod earlier_results;
mod policy_questions;
mod shared_run;
mod sitemaps;

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
use super::{CrawlError, CrawlOptions, CrawlPlan, CrawlReport, CrawlSettings, Progress};
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
    /// Further tops (a `web` task's from the library), sorted.
    more_tops: Vec<UrlIdx>,
    /// The task as policy plugins see it.
    info: spinneret_plugin_host::bindings::host::types::TaskInfo,
    /// How far it has traversed, against its bounds.
    traversal: Traversal,
    /// Whether its pages are written by anyone (the library's summary
    /// pages, from postings): their links never open a host to this
    /// machine or its network, however local the pages are themselves.
    hostile_pages: bool,
}

impl TaskRt {
    /// Whether `u` is one of the task's tops: a document of the task
    /// whatever its kind.
    fn is_top(&self, u: UrlIdx) -> bool {
        self.top == u || self.more_tops.binary_search(&u).is_ok()
    }
}

/// From where a task first reached a URL, until its role is settled.
struct Reach {
    referrer: Option<UrlIdx>,
    /// For a worker of a shared run: how the task reached it and what it
    /// decided, to offer the reach to another worker should this one
    /// hand the site back (`shared_run`'s rebalancing).
    offer: Option<Box<(RefKind, Decision)>>,
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
    /// URLs a task did not request for reasons of its own (a form's action,
    /// a local file outside its tree), with the reason: settled as not
    /// checked at the end unless another task had them checked.
    held_back: Vec<(UrlIdx, Category, String)>,
    reaches: HashMap<(u32, UrlIdx), Reach>,
    /// The policies' verdicts and the documents' depths.
    verdicts: Verdicts,
    /// The crawl's plugins, and the calls gathered this turn.
    plugins: PluginTurn,
    invalid_seen: HashSet<String>,
    /// The invalid references each task has counted (a task counts one
    /// once, however many of its pages make it).
    invalid_counted: HashSet<(usize, String)>,
    stats: Vec<TaskSummary>,
    use_cache: bool,
    /// Earlier results asked for together, for the references of the
    /// document being expanded (on a store that prefers batches), until
    /// each is taken (`None`: the store has none); emptied after it.
    prefetched: HashMap<UrlIdx, Option<CachedResult>>,
    /// Documents an archive marked completed: not read again.
    completed: Arc<std::collections::HashSet<String>>,
    progress: Arc<Progress>,
    requests: u64,
    /// Results of earlier runs reused without a request (`result_max_age`).
    reused: u64,
    tx: mpsc::UnboundedSender<Completion>,
    rx: mpsc::UnboundedReceiver<Completion>,
    started: Instant,
    /// The run shared with other workers, for a worker (`spinneret worker`).
    shared: Option<shared_run::SharedCrawl>,
    /// Whether the tops' sitemaps are still to be read (`CrawlOptions::sitemaps`).
    sitemaps_wanted: bool,
}

impl<'a> Engine<'a> {
    /// Load the rules, open the run and seed the frontier with every task's top URL.
    pub(super) fn prepare(
        plan: &CrawlPlan<'_>,
        store: &'a Store,
        ids: RunIds,
        options: &CrawlOptions,
        progress: Arc<Progress>,
    ) -> Result<Engine<'a>, CrawlError> {
        let settings = plan.settings.clone();
        let (rules, robots_files) =
            crate::policy::load_rules(&settings.rule_files, SystemTime::now())?;
        let shared = match &options.shared {
            Some(s) => {
                // A worker waits for a database that went away (its
                // writer, its reads, its meetings), trying again often
                // enough to be back well within its lease.
                store.ride_out(Some(spinneret_store::RideOut {
                    bound: s.ride_out,
                    most_between: (s.lease / 4)
                        .clamp(Duration::from_millis(100), Duration::from_secs(5)),
                }));
                Some(shared_run::SharedCrawl::new(
                    store.shared_run(ids.run, &s.worker, s.lease)?,
                    s.lease,
                ))
            }
            None => None,
        };
        // A worker of a shared run reads earlier runs' results like a crawl;
        // this run's, only on the sites it took over (`shared_run`).
        let use_cache = match shared {
            Some(_) => store.has_results_before(ids.run)?,
            None => store.has_results()?,
        };
        let cached_sites = store.load_sites(unix_now())?;
        let writer = store.writer()?;
        let fetcher = Fetcher::new(&settings.fetch)?.with_local_roots(
            plan.tasks
                .iter()
                .flat_map(|t| std::iter::once(t.top).chain(t.more_tops.iter())),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        // The sites' gates and robots.txt readings, shared with the
        // plugins' `http` when the caller lent them the same.
        let shared_sites = options.sites.clone().unwrap_or_else(|| {
            spinneret_net::sites::Sites::new(crate::plugin_http::network_settings(&settings).gates)
        });
        let site_policy = SitePolicy {
            robot_name: settings.robot_name.clone(),
            robots_rules: settings.robots_rules,
            max_crawl_delay: settings.max_crawl_delay,
            robots_expiry: settings.robots_expiry,
            retries: settings.retries,
            robots_ignored: match options.ignore_robots_for_tops {
                true => plan.tasks.iter().map(|t| urls::site_key(t.top)).collect(),
                false => Default::default(),
            },
        };
        let mut engine = Engine {
            settings,
            store,
            writer,
            fetcher,
            rules,
            tasks: Vec::new(),
            frontier: Frontier::default(),
            sites: SiteTable::new(site_policy, cached_sites, robots_files, shared_sites),
            deferred_leaves: Vec::new(),
            leaf_phase: false,
            in_flight: 0,
            done_queue: VecDeque::new(),
            redirects: Redirects::new(),
            held_back: Vec::new(),
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
            invalid_counted: HashSet::new(),
            stats: Vec::new(),
            use_cache,
            prefetched: HashMap::new(),
            completed: options.completed.clone(),
            progress,
            requests: 0,
            reused: 0,
            tx,
            rx,
            started: Instant::now(),
            ids,
            shared,
            sitemaps_wanted: options.sitemaps,
        };
        for t in &plan.tasks {
            let top = engine.intern(t.top.clone());
            let mut more_tops: Vec<UrlIdx> = t
                .more_tops
                .iter()
                .map(|u| engine.intern(u.clone()))
                .filter(|&u| u != top)
                .collect();
            more_tops.sort_unstable();
            more_tops.dedup();
            engine.tasks.push(TaskRt {
                id: engine.ids.tasks[t.name()],
                scope: Scope::new(t.name(), t.kind(), t.top, t.exclude)
                    .with_patterns(t.patterns.clone())
                    .with_local_root(engine.fetcher.root_dir()),
                top,
                more_tops,
                info: spinneret_plugin_host::reporter::task_info(&t.record),
                traversal: Traversal::new(t.bounds),
                hostile_pages: t.kind() == spinneret_core::model::TaskKind::Library,
            });
            // The user named the top: its site may be on their own machine
            // or network. Further tops (the library's) are anyone's.
            engine.sites.open_site(t.top);
            engine.stats.push(TaskSummary {
                name: t.name().to_string(),
                ..TaskSummary::default()
            });
        }
        Ok(engine)
    }

    /// Crawl until every task is done or `stop` turns true. A worker of a
    /// shared run whose lease on a site was lost stops too, and the site
    /// is returned with the report (it joins the run afresh).
    pub(super) async fn run(
        mut self,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> Result<(CrawlReport, Option<String>), CrawlError> {
        self.plugins.begin();
        for t in 0..self.tasks.len() {
            let top = self.tasks[t].top;
            self.reach(t, top, RefKind::Anchor, None);
            for i in 0..self.tasks[t].more_tops.len() {
                let top = self.tasks[t].more_tops[i];
                self.reach(t, top, RefKind::Anchor, None);
            }
        }
        let mut stopping = *stop.borrow();
        let mut lease_lost = None;
        loop {
            // Dispatching can settle URLs (robots refusals, hops to checked URLs) and
            // settling can queue work: go round until both are quiet.
            loop {
                self.drain_done();
                // A worker requests only while it knows its leases hold
                // (it was stopped, SIGSTOP or a stalled machine, for
                // longer than that: its next meeting says).
                if !stopping && self.leases_fresh() {
                    self.pump();
                }
                if self.done_queue.is_empty() {
                    break;
                }
            }
            // After the first dispatch, which asks for the tops' robots.txt:
            // the sitemaps' reading waits for it rather than asking again.
            if !stopping {
                self.start_sitemaps();
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
            let mut quiet = false;
            if self.in_flight == 0 {
                if stopping {
                    break;
                }
                if self.sites.runnable() > 0 {
                    if self.leases_fresh() {
                        continue;
                    }
                } else if self.sites.timers() == 0 {
                    if self.shared.is_some() {
                        // The phases are the shared run's (`meet_shared_run`).
                        if self.leaf_phase && self.settle_held_back() {
                            continue;
                        }
                        quiet = true;
                    } else if self.leaf_phase {
                        if self.settle_held_back() {
                            continue;
                        }
                        break;
                    }
                    if !quiet {
                        self.start_leaf_phase();
                        continue;
                    }
                }
            }
            let next_timer = self.sites.next_timer();
            let next_sync = self.shared.as_ref().map(|s| s.next_sync());
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
                _ = sleep_until_opt(next_sync), if !stopping => {
                    match self.meet_shared_run(quiet)? {
                        shared_run::Met::Going => {}
                        shared_run::Met::Crawled => break,
                        shared_run::Met::LeaseLost(site) => {
                            tracing::warn!(
                                "another worker took over the site {site} (this worker's lease on it ran out: it was cut off from the database, or stalled, for longer than --lease while the others were not); it stops its work, stores what it checked ({} requests in flight) and joins the run afresh",
                                self.in_flight
                            );
                            stopping = true;
                            lease_lost = Some(site);
                        }
                    }
                }
                changed = stop.changed(), if !stopping => {
                    if changed.is_err() || *stop.borrow() {
                        tracing::warn!("stopping: letting {} requests in flight finish", self.in_flight);
                        stopping = true;
                    }
                }
            }
        }
        let report = self.finish(stopping && lease_lost.is_none(), lease_lost.is_some())?;
        Ok((report, lease_lost))
    }

    /// Store everything and end this process's part: `interrupted` when
    /// stopped (Ctrl-C), `rejoins` when a worker lost a lease and hands
    /// back what it holds to join the run afresh.
    fn finish(self, interrupted: bool, rejoins: bool) -> Result<CrawlReport, CrawlError> {
        let Engine {
            writer,
            store,
            ids,
            tasks,
            mut stats,
            requests,
            reused,
            started,
            sites,
            shared,
            ..
        } = self;
        let worker = shared.is_some();
        for (summary, task) in stats.iter_mut().zip(&tasks) {
            summary.bounds_hit = task.traversal.bounds_hit();
        }
        writer.flush();
        writer.close()?;
        if let Err(e) = sites.save_files(SystemTime::now()) {
            tracing::error!(
                "the avoid and sites files could not be written ({e}); their sites' robots.txt will be read again at the next run"
            );
        }
        // A worker of a shared run ends the run only if it is the last to
        // store what it checked; stopped, it hands its sites back.
        let finishes = match shared {
            None => true,
            Some(mut shared) if rejoins => {
                shared.offer_and_leave()?;
                false
            }
            Some(shared) if interrupted => {
                shared.leave()?;
                false
            }
            Some(shared) => shared.stored_all()?,
        };
        // `crawled`, not `finished`: a run is finished when its report
        // stage and mail are done (the command line marks it); until then
        // `--resume` takes it up again, making no requests for what it stored.
        // (A worker's store connection may have been lost to a restart of
        // the database since it last read: made again here, so that the
        // report stage after it has one too.)
        if !worker || finishes {
            let status = match interrupted {
                true => "interrupted",
                false => "crawled",
            };
            store.riding_out(|s| s.end_run(ids.run, status))?;
        }
        Ok(CrawlReport {
            run: ids.run,
            resumed: ids.resumed,
            interrupted,
            tasks: stats,
            requests,
            reused,
            elapsed: started.elapsed(),
            finishes,
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
        // The top is a document of its own task whatever its kind. Further
        // tops (the library's, which anyone may post) are not: the task's
        // exclusions and bounds hold for them.
        let is_top = self.tasks[t].top == u;
        let decision = if is_top && matches!(decision, Decision::Leaf(_)) {
            Decision::Traverse
        } else {
            decision
        };
        let decision = self.ask_policies(t, u, kind, referrer, decision);
        let decision = self.bounded(t, u, referrer, decision);
        if !self.holds_site_of(u) {
            // Another worker of the shared run requests it.
            self.offer_reach(t, u, kind, referrer, &decision);
            return;
        }
        self.reach_decided(t, u, kind, referrer, decision);
    }

    /// Task `t` reaches `u`, a URL of a site this process requests, with
    /// the `decision` made on it (here, or by the worker that found it).
    fn reach_decided(
        &mut self,
        t: usize,
        u: UrlIdx,
        kind: RefKind,
        referrer: Option<UrlIdx>,
        decision: Decision,
    ) {
        // Every reach counts for the address rule, not only a task's first.
        self.open_if_led_from_here(t, u, referrer);
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
        let offer = self
            .shared
            .is_some()
            .then(|| Box::new((kind, decision.clone())));
        let mut request = true;
        match decision {
            Decision::NotChecked(r)
                if urls::is_checkable(&e.url)
                    && (kind == RefKind::Form || e.url.scheme() == "file") =>
            {
                // Not requested for this task's own reasons (a form's action,
                // a local file outside its tree): another task may still have
                // it checked, so it is not settled for every task now.
                self.held_back.push((u, Category::NotChecked, r));
                request = false;
            }
            Decision::Excluded(r) => {
                // Excluded by this task's patterns: another task may
                // still have it requested.
                self.held_back.push((u, Category::Avoided, r));
                request = false;
            }
            Decision::NotChecked(r) => self.unrequested(u, Category::NotChecked, &r),
            Decision::Avoid(r) => self.unrequested(u, Category::Avoided, &r),
            Decision::Leaf(_) => {}
            Decision::Traverse => {
                self.frontier.get_mut(u).doc_tasks.insert(t);
            }
        }
        self.reaches
            .insert((t as u32, u), Reach { referrer, offer });
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

    /// The address rule: a link from a page on this machine or its network
    /// (a local file, `localhost`, a local address) of a task whose pages
    /// are the user's lets the linked host be there too; a link from a
    /// page from elsewhere does not, so its site's requests connect only to
    /// public addresses.
    fn open_if_led_from_here(&mut self, t: usize, u: UrlIdx, referrer: Option<UrlIdx>) {
        let Some(r) = referrer else {
            return;
        };
        if self.tasks[t].hostile_pages {
            return;
        }
        let page = &self.frontier.get(r).url;
        if urls::local_host(page) && self.sites.is_open_url(page) {
            let url = self.frontier.get(u).url.clone();
            self.sites.open_site(&url);
        }
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
            error: Some(reason.into()),
            status: None,
        };
        self.complete(u, outcome, Some(result));
    }

    /// Make sure a request for `u` is planned, by the method its tasks need.
    fn want(&mut self, u: UrlIdx) {
        let hop_get = self.hop_wants_get(u);
        let (state, need_get, queued_get, site) = {
            let e = self.frontier.get(u);
            (
                e.state,
                hop_get || !e.doc_tasks.is_empty(),
                e.queued_get,
                e.site,
            )
        };
        match state {
            UrlState::New => {
                if self.settle_from_robots(u) {
                    return;
                }
                if self.settle_completed(u) {
                    return;
                }
                if self.may_be_stored(u) && self.try_cache(u, need_get) {
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
        let category = Category::of_status(status, false, self.settings.accept_status);
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
            content_type: self.frontier.content_type(content_type.as_deref()),
            error: result.error.as_deref().map(Box::from),
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

    /// Record the URLs held back that no task had checked, with the reason
    /// they were held back; settle those another task had checked for the
    /// tasks that held them back. True when there were any.
    fn settle_held_back(&mut self) -> bool {
        let held = std::mem::take(&mut self.held_back);
        let mut any = false;
        for (u, category, reason) in held {
            if self.frontier.get(u).state == UrlState::New {
                self.unrequested(u, category, &reason);
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
                .map(|doc| task.is_top(u) || task.scope.owns(doc.owner.as_deref())),
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
        self.prefetch_earlier_results(&links);
        for (target, kind) in links {
            self.reach(t, target, kind, Some(d));
        }
        self.prefetched.clear();
        let source = self.frontier.get(d).url.to_string();
        for (raw, why) in invalid {
            if self.invalid_counted.insert((t, raw.clone())) {
                self.stats[t].broken += 1;
                self.stats[t].leafed += 1;
            }
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
