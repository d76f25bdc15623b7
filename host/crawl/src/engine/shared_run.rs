//! A run shared by workers (`spinneret worker`): this worker requests the
//! URLs of the sites it holds a lease on, and only those. What its tasks
//! reach on other sites it offers to the shared frontier, decided as one
//! process would decide it (scope, rules, policies, bounds); what the
//! other workers offer for its sites it takes and settles as if found
//! here. A redirect hop to a site another worker holds is offered to that
//! worker too, and the chain waits for its stored answer.
//!
//! Every `SYNC_EVERY` the worker meets the run (`Engine::meet_shared_run`):
//! it offers, claims sites when it has room (a fair share of those
//! waiting), takes its sites' reaches, reads the answers it waits for,
//! says whether it is idle, and moves the run's phase on when every worker
//! is idle in it. The run's phases replace the engine's own: the leaves
//! are tested when no worker has a document left, and the crawl ends when
//! no worker has anything left. The database side is
//! `spinneret_store::SharedRun`; its leases are renewed there, by a thread
//! of their own, whatever the crawl is doing.
//!
//! The database going away is waited out (`Store::ride_out`): a meeting,
//! a read of the store or a batch of the writer waits for it, the crawl
//! makes no request meanwhile, and nothing it checked is lost. A worker
//! that finds a site it held taken over (it was cut off from the database,
//! or stalled, for longer than its lease, while the others were not) stops
//! its work at once: no request leaves after it knows, those in flight are
//! stored, it hands back what it still holds and joins the run afresh
//! (`Met::LeaseLost`; `crate::run` starts it again), as a new worker would,
//! so the sites are shared out again among the live workers.

use super::*;
use spinneret_store::{HeldSite, SharedPhase, SharedReach, SharedRun};

/// How often a worker meets the shared run.
const SYNC_EVERY: Duration = Duration::from_millis(100);

/// The most sites a worker claims at once.
const MOST_CLAIMED: i64 = 64;

/// How long a worker waits before its first claim, so that workers
/// started together are all counted when the first sites are shared out.
const GATHERING: Duration = Duration::from_millis(300);

/// What a worker knows of the run it shares.
pub(super) struct SharedCrawl {
    run: SharedRun,
    /// The sites it holds, by key (`urls::site_key`), with the generation
    /// of each lease.
    held: HashMap<String, i64>,
    /// Sites the database says this worker holds that it did not know it
    /// claimed (a claim whose answer was lost with the connection): taken
    /// up at the next meeting as claimed.
    found: Vec<HeldSite>,
    /// The sites it took over from another worker (a subset of `held`):
    /// what that worker checked there is in the store.
    taken_over: HashSet<String>,
    /// Per site of the site table: 0 not known, 1 held, 2 not held, 3
    /// held and taken over.
    site_held: Vec<u8>,
    /// Reaches found for other workers' sites, not offered yet.
    outgoing: Vec<SharedReach>,
    /// What was offered already (URL, task, traverse): offered once.
    offered: HashSet<(Box<str>, i64, bool)>,
    /// Redirect hops whose answer another worker gives.
    awaited: HashSet<UrlIdx>,
    /// URLs offered as hops to check by GET (a document's chain goes through them).
    hop_get: HashSet<UrlIdx>,
    phase: SharedPhase,
    next_sync: Instant,
}

impl SharedCrawl {
    pub(super) fn new(run: SharedRun) -> Self {
        SharedCrawl {
            run,
            held: HashMap::new(),
            found: Vec::new(),
            taken_over: HashSet::new(),
            site_held: Vec::new(),
            outgoing: Vec::new(),
            offered: HashSet::new(),
            awaited: HashSet::new(),
            hop_get: HashSet::new(),
            phase: SharedPhase::Documents,
            next_sync: Instant::now() + GATHERING,
        }
    }

    /// Offer a reach of `url` (task 0: a hop) to the worker holding its
    /// site, once per (URL, task, traverse).
    #[allow(clippy::too_many_arguments)]
    fn offer(
        &mut self,
        url: &Url,
        task: i64,
        traverse: bool,
        kind: RefKind,
        referrer: Option<String>,
        decision: &str,
        reason: &str,
        depth: i64,
    ) {
        if !self.offered.insert((url.as_str().into(), task, traverse)) {
            return;
        }
        self.outgoing.push(SharedReach {
            site: urls::site_key(url),
            url: url.to_string(),
            task,
            traverse,
            kind: kind.as_str().to_string(),
            referrer,
            decision: decision.to_string(),
            reason: reason.to_string(),
            depth,
        });
    }

    /// When the worker next meets the run.
    pub(super) fn next_sync(&self) -> Instant {
        self.next_sync
    }

    /// Leave the run before its end (stopped): what this worker held goes
    /// back to the others.
    pub(super) fn leave(&self) -> Result<(), CrawlError> {
        Ok(self.run.leave()?)
    }

    /// The run is crawled and everything this worker checked is stored:
    /// whether it is the worker that finishes the run.
    pub(super) fn stored_all(&self) -> Result<bool, CrawlError> {
        Ok(self.run.stored_all()?)
    }

    /// Offer what is left to offer, then leave the run: a worker whose
    /// lease was lost, before it joins the run afresh.
    pub(super) fn offer_and_leave(&mut self) -> Result<(), CrawlError> {
        let out = std::mem::take(&mut self.outgoing);
        self.run.offer(&out)?;
        self.leave()
    }
}

/// What a meeting with the shared run found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Met {
    /// Work goes on.
    Going,
    /// The run is crawled: the worker's loop ends.
    Crawled,
    /// Another worker took over this site of this worker's (its lease had
    /// run out): the worker stops its work and joins the run afresh.
    LeaseLost(String),
}

/// A decision, as offered.
fn decision_name(d: &Decision) -> &'static str {
    match d {
        Decision::Traverse => "traverse",
        Decision::Leaf(_) => "leaf",
        Decision::Avoid(_) => "avoid",
        Decision::Excluded(_) => "excluded",
        Decision::NotChecked(_) => "not_checked",
    }
}

/// A decision offered by another worker (an unknown name is the most
/// careful one: no request).
fn decision_of(name: &str, reason: String) -> Decision {
    match name {
        "traverse" => Decision::Traverse,
        "leaf" => Decision::Leaf(reason),
        "excluded" => Decision::Excluded(reason),
        "not_checked" => Decision::NotChecked(reason),
        _ => Decision::Avoid(reason),
    }
}

impl Engine<'_> {
    /// Whether this process requests `u`'s site: always, unless it is a
    /// worker of a shared run that does not hold the site.
    pub(super) fn holds_site_of(&mut self, u: UrlIdx) -> bool {
        self.site_standing(u).is_none_or(|s| s == 1 || s == 3)
    }

    /// Whether `u`'s site is one this worker took over from another.
    pub(super) fn site_taken_over(&mut self, u: UrlIdx) -> bool {
        self.site_standing(u) == Some(3)
    }

    /// Where `u`'s site stands for this worker (see `site_held`); `None`
    /// when the run is not shared.
    fn site_standing(&mut self, u: UrlIdx) -> Option<u8> {
        let shared = self.shared.as_mut()?;
        let e = self.frontier.get(u);
        let s = e.site as usize;
        if shared.site_held.len() <= s {
            shared.site_held.resize(s + 1, 0);
        }
        if shared.site_held[s] == 0 {
            let key = urls::site_key(&e.url);
            shared.site_held[s] = match (
                shared.held.contains_key(&key),
                shared.taken_over.contains(&key),
            ) {
                (true, true) => 3,
                (true, false) => 1,
                (false, _) => 2,
            };
        }
        Some(shared.site_held[s])
    }

    /// Offer task `t`'s reach of `u`, decided here, to the worker that
    /// holds `u`'s site.
    pub(super) fn offer_reach(
        &mut self,
        t: usize,
        u: UrlIdx,
        kind: RefKind,
        referrer: Option<UrlIdx>,
        decision: &Decision,
    ) {
        let task = self.tasks[t].id;
        let traverse = *decision == Decision::Traverse;
        let depth = match traverse {
            true => i64::from(self.verdicts.depth_of(t, u)),
            false => 0,
        };
        let referrer = referrer.map(|r| self.frontier.get(r).url.to_string());
        let url = &self.frontier.get(u).url;
        if let Some(shared) = self.shared.as_mut() {
            shared.offer(
                url,
                task,
                traverse,
                kind,
                referrer,
                decision_name(decision),
                decision.reason().unwrap_or_default(),
                depth,
            );
        }
    }

    /// A redirect hop to a site another worker holds: the chain waits for
    /// that worker's answer (or ends now, if this worker has it already).
    pub(super) fn await_hop(&mut self, job: Box<Job>) {
        let f = self.intern(job.request.clone());
        if self.frontier.get(f).state == UrlState::Done {
            self.finish_chain_at(job, f);
            return;
        }
        let get = job.method == Method::Get;
        let referrer = self.frontier.get(job.url).url.to_string();
        self.redirects.park(f, *job);
        let url = &self.frontier.get(f).url;
        let Some(shared) = self.shared.as_mut() else {
            return;
        };
        shared.awaited.insert(f);
        shared.offer(url, 0, get, RefKind::Anchor, Some(referrer), "hop", "", 0);
    }

    /// Whether `u` is a hop another worker asked this one to check by GET.
    pub(super) fn hop_wants_get(&self, u: UrlIdx) -> bool {
        self.shared.as_ref().is_some_and(|s| s.hop_get.contains(&u))
    }

    /// Take a reach another worker (or this one) offered for a site this
    /// worker holds, and go on from it as from one found here.
    fn take_reach(&mut self, r: SharedReach) {
        let Ok(url) = Url::parse(&r.url) else {
            tracing::warn!("the shared frontier holds {:?}, which is not a URL", r.url);
            return;
        };
        let u = self.intern(url);
        if r.task == 0 {
            if r.traverse
                && let Some(shared) = self.shared.as_mut()
            {
                shared.hop_get.insert(u);
            }
            self.want(u);
            return;
        }
        let Some(t) = self.tasks.iter().position(|task| task.id == r.task) else {
            tracing::warn!(
                "the shared frontier holds {} for task id {}, which this worker's configuration has not: start every worker with the same configuration",
                r.url,
                r.task
            );
            return;
        };
        let referrer = r
            .referrer
            .as_deref()
            .and_then(|s| Url::parse(s).ok())
            .map(|x| self.intern(x));
        let kind = RefKind::from_name(&r.kind).unwrap_or(RefKind::Anchor);
        let decision = decision_of(&r.decision, r.reason);
        if decision == Decision::Traverse && !self.verdicts.counted(t, u) {
            let depth = u32::try_from(r.depth).unwrap_or(u32::MAX);
            self.verdicts.count(t, u, depth);
        }
        self.reach_decided(t, u, kind, referrer, decision);
    }

    /// Meet the shared run (see the module's documentation); `quiet` is
    /// whether this worker had nothing left to do. A failure (the database
    /// away for longer than the worker waits for it, or a batch of results
    /// lost) stores what this worker checked and hands its sites back, as
    /// far as the database lets it, before it is returned.
    pub(super) fn meet_shared_run(&mut self, quiet: bool) -> Result<Met, CrawlError> {
        let met = self.meet(quiet).map_err(|e| match e {
            CrawlError::Store(e) => CrawlError::SharedRun(e),
            other => other,
        });
        if met.is_err() {
            self.writer.flush();
            if let Some(shared) = &self.shared
                && let Err(e) = shared.leave()
            {
                tracing::debug!("could not hand the sites back: {e}");
            }
        }
        met
    }

    fn meet(&mut self, quiet: bool) -> Result<Met, CrawlError> {
        if self.writer.lost_writes() {
            return Err(CrawlError::WritesLost);
        }
        let room = self.sites.queued() + self.in_flight < self.settings.concurrency;
        let Some(shared) = self.shared.as_mut() else {
            return Ok(Met::Going);
        };
        shared.next_sync = Instant::now() + SYNC_EVERY;
        let out = std::mem::take(&mut shared.outgoing);
        shared.run.offer(&out)?;
        // Claim sites when there is room: up to a fair share of all the
        // sites live workers hold or could (a lease is kept to the end of
        // the run, so that a site's robots.txt is read once).
        let mut claimed: Vec<HeldSite> = std::mem::take(&mut shared.found);
        if room {
            let (waiting, held, workers) = shared.run.claimable()?;
            if waiting > 0 {
                let workers = workers.max(1);
                let fair = (waiting + held + workers - 1) / workers;
                let share = fair - shared.held.len() as i64;
                claimed.extend(shared.run.claim(share.clamp(1, MOST_CLAIMED) as usize)?);
            }
        }
        let held: Vec<String> = shared.held.keys().cloned().collect();
        let mut taken = shared.run.take(&held, false)?;
        let mut taken_over = Vec::new();
        let claimed_any = !claimed.is_empty();
        if claimed_any {
            let sites: Vec<String> = claimed.iter().map(|(s, _)| s.clone()).collect();
            tracing::debug!("claimed {} site(s): {}", sites.len(), sites.join(", "));
            taken.extend(shared.run.take(&sites, true)?);
            for (site, generation) in claimed {
                // A worker held it before: what it checked is stored.
                if generation > 1 {
                    tracing::info!("took over the site {site} from another worker");
                    shared.taken_over.insert(site.clone());
                    taken_over.push(site.clone());
                }
                shared.held.insert(site, generation);
            }
            // Sites not held before may be held now.
            for h in &mut shared.site_held {
                if *h == 2 {
                    *h = 0;
                }
            }
        }
        let mut busy = !taken.is_empty() || claimed_any;
        let any_taken_over = !shared.taken_over.is_empty();
        // The robots.txt an earlier holder stored is not read again.
        for site in taken_over {
            let cached = self.store.riding_out(|s| s.load_site(&site, unix_now()))?;
            if let Some(cached) = cached {
                self.sites.adopt_cached(&site, cached);
            }
        }
        // On a site taken over, the earlier holder's results settle most of
        // the reaches: asked for together, not a round trip each.
        if any_taken_over {
            let urls: Vec<(UrlIdx, RefKind)> = taken
                .iter()
                .filter_map(|r| Url::parse(&r.url).ok())
                .map(|url| (self.intern(url), RefKind::Anchor))
                .collect();
            self.prefetch_earlier_results(&urls);
        }
        for r in taken {
            self.take_reach(r);
        }
        self.prefetched.clear();
        // An answered hop ends a chain, whose settling may offer or queue
        // more: this worker is not idle this round.
        busy |= self.read_awaited_answers()? > 0;
        let shared = self.shared.as_mut().expect("a shared run");
        let phase = shared.run.phase()?;
        // Idle only in a phase whose work this worker had begun before
        // this round (a worker that first sees the leaves' phase has not
        // queued its leaves yet).
        let idle = quiet
            && !busy
            && phase == shared.phase
            && shared.outgoing.is_empty()
            && shared.awaited.is_empty();
        let still: HashMap<String, i64> = shared
            .run
            .heartbeat(idle.then_some(phase))?
            .into_iter()
            .collect();
        // A site taken over by another worker (its lease had run out) is
        // that worker's now: this one stops at once.
        let mut lost: Vec<&String> = shared
            .held
            .iter()
            .filter(|(site, generation)| still.get(*site) != Some(*generation))
            .map(|(site, _)| site)
            .collect();
        lost.sort();
        if let Some(site) = lost.first() {
            return Ok(Met::LeaseLost((*site).clone()));
        }
        shared.found = still
            .into_iter()
            .filter(|(site, _)| !shared.held.contains_key(site))
            .collect();
        let phase = match idle && shared.found.is_empty() && shared.run.advance(phase)? {
            true => shared.run.phase()?,
            false => phase,
        };
        shared.phase = phase;
        if phase != SharedPhase::Documents && !self.leaf_phase {
            self.start_leaf_phase();
        }
        Ok(
            match matches!(phase, SharedPhase::Crawled | SharedPhase::Finishing) {
                true => Met::Crawled,
                false => Met::Going,
            },
        )
    }

    /// Settle the hops another worker answers, once their answers are
    /// stored; how many were.
    fn read_awaited_answers(&mut self) -> Result<usize, CrawlError> {
        // A hop to a site this worker has come to hold is answered here:
        // its chains go on when the URL is checked.
        let awaited: Vec<UrlIdx> = match self.shared.as_ref() {
            Some(shared) => shared.awaited.iter().copied().collect(),
            None => return Ok(0),
        };
        let mut here = Vec::new();
        for u in awaited {
            if self.frontier.get(u).state == UrlState::Done || self.holds_site_of(u) {
                here.push(u);
            }
        }
        let shared = self.shared.as_mut().expect("a shared run");
        for u in here {
            shared.awaited.remove(&u);
        }
        if shared.awaited.is_empty() {
            return Ok(0);
        }
        let waiting: Vec<UrlIdx> = shared.awaited.iter().copied().collect();
        let urls: Vec<String> = waiting
            .iter()
            .map(|&u| self.frontier.get(u).url.to_string())
            .collect();
        let asked: Vec<&str> = urls.iter().map(String::as_str).collect();
        let mut found = self.store.riding_out(|s| s.latest_results(&asked))?;
        let mut answered = 0;
        for (u, url) in waiting.into_iter().zip(&urls) {
            let Some(mut cached) = found.remove(url).filter(|c| c.run == self.ids.run) else {
                continue;
            };
            // The chains need the answer, not the document: the tasks
            // follow the document at the worker that holds its site (and
            // reading its links here cost three round trips a hop).
            if cached.result.method == Some("GET") {
                cached.is_document = false;
            }
            if let Some(shared) = self.shared.as_mut() {
                shared.awaited.remove(&u);
            }
            self.complete_cached(u, cached, None);
            // The answer ended the chains that waited for it; it is not
            // kept as `u`'s outcome (it has no document): should this
            // worker come to hold `u`'s site, its tasks settle `u` from the
            // store, document and all.
            let e = self.frontier.get_mut(u);
            e.state = UrlState::New;
            e.outcome = None;
            answered += 1;
        }
        Ok(answered)
    }
}
