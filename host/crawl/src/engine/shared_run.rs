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
use crate::sites::RobotsState;
use crate::taskset::TaskSet;
use spinneret_store::{ClaimedSite, HeldSite, SharedPhase, SharedReach, SharedRun};

/// How often a worker meets the shared run.
const SYNC_EVERY: Duration = Duration::from_millis(100);

/// The most sites a worker claims at once.
const MOST_CLAIMED: i64 = 64;

/// How long a worker waits before its first claim, so that workers
/// started together are all counted when the first sites are shared out.
const GATHERING: Duration = Duration::from_millis(300);

/// How often a worker asks whether it holds more than its share of the
/// sites (and hands the excess back).
const BALANCE_EVERY: Duration = Duration::from_secs(1);

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
    /// Hops once awaited whose site this worker came to hold: their
    /// chains wait for the URL to be checked here (awaited again should
    /// the site be handed back first).
    awaited_here: HashSet<UrlIdx>,
    /// URLs offered as hops to check by GET (a document's chain goes through them).
    hop_get: HashSet<UrlIdx>,
    phase: SharedPhase,
    next_sync: Instant,
    /// How long its leases last.
    lease: Duration,
    /// When its last meeting found every site it held still its own: it
    /// sends requests only within half a lease of that.
    confirmed: Instant,
    /// The site table's index of each site met, by key.
    site_index: HashMap<String, u32>,
    /// Sites it is handing back (it holds more than its share), by key:
    /// nothing new is requested there, what is not started is offered to
    /// the run, and the site is let go once the URLs in flight there when
    /// it decided (listed) and every request to it are answered.
    releasing: HashMap<String, Vec<UrlIdx>>,
    /// When it next asks whether it holds more than its share.
    next_balance: Instant,
}

impl SharedCrawl {
    pub(super) fn new(run: SharedRun, lease: Duration) -> Self {
        let now = Instant::now();
        SharedCrawl {
            run,
            held: HashMap::new(),
            found: Vec::new(),
            taken_over: HashSet::new(),
            site_held: Vec::new(),
            outgoing: Vec::new(),
            offered: HashSet::new(),
            awaited: HashSet::new(),
            awaited_here: HashSet::new(),
            hop_get: HashSet::new(),
            phase: SharedPhase::Documents,
            next_sync: now + GATHERING,
            lease,
            confirmed: now,
            site_index: HashMap::new(),
            releasing: HashMap::new(),
            next_balance: now + GATHERING + BALANCE_EVERY,
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

    /// Claim sites when there is `room`: up to a fair share of all the
    /// sites live workers hold or could (held and waiting, over the live
    /// workers, rounded up). A worker at its share claims none: a worker
    /// below it will (there is one while any site waits). Returns the
    /// sites claimed (with those found claimed by a claim whose answer was
    /// lost), and, once a `BALANCE_EVERY`, the fair share, for a worker
    /// holding more than one site to hand back what is beyond it.
    fn claim_fair_share(
        &mut self,
        room: bool,
    ) -> Result<(Vec<ClaimedSite>, Option<i64>), CrawlError> {
        let mut claimed: Vec<ClaimedSite> = std::mem::take(&mut self.found)
            .into_iter()
            .map(|(site, generation)| (site, generation, Duration::ZERO))
            .collect();
        let now = Instant::now();
        let balance = now >= self.next_balance;
        if balance {
            self.next_balance = now + BALANCE_EVERY;
        }
        let balance = balance && self.held.len() > 1;
        if !room && !balance {
            return Ok((claimed, None));
        }
        let (waiting, held, workers) = self.run.claimable()?;
        let workers = workers.max(1);
        let fair = (waiting + held + workers - 1) / workers;
        let share = fair - self.held.len() as i64;
        if room && waiting > 0 && share > 0 {
            claimed.extend(self.run.claim(share.min(MOST_CLAIMED) as usize)?);
        }
        Ok((claimed, balance.then_some(fair)))
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
            let held = shared.held.contains_key(&key) && !shared.releasing.contains_key(&key);
            shared.site_held[s] = match (held, shared.taken_over.contains(&key)) {
                (true, true) => 3,
                (true, false) => 1,
                (false, _) => 2,
            };
            shared.site_index.entry(key).or_insert(e.site);
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
        if let Some(shared) = self.shared.as_mut() {
            let site = self.frontier.get(u).site;
            shared.site_index.entry(r.site.clone()).or_insert(site);
        }
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
        let (claimed, fair) = shared.claim_fair_share(room)?;
        let held: Vec<String> = shared
            .held
            .keys()
            .filter(|site| !shared.releasing.contains_key(*site))
            .cloned()
            .collect();
        let mut taken = shared.run.take(&held, false)?;
        let mut taken_over = Vec::new();
        let claimed_any = !claimed.is_empty();
        // Sites handed back by a worker over its share: their next
        // request waits what their last holder's politeness asked.
        let mut pauses: Vec<(String, Duration)> = Vec::new();
        if claimed_any {
            let sites: Vec<String> = claimed.iter().map(|(s, _, _)| s.clone()).collect();
            tracing::debug!("claimed {} site(s): {}", sites.len(), sites.join(", "));
            taken.extend(shared.run.take(&sites, true)?);
            for (site, generation, pause) in claimed {
                if !pause.is_zero() {
                    pauses.push((site.clone(), pause));
                }
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
        let now = Instant::now();
        for (site, pause) in pauses {
            let index = self.shared.as_ref().and_then(|s| s.site_index.get(&site));
            if let Some(&s) = index {
                self.sites.hold_until(s, now + pause);
            }
        }
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
        let asked = Instant::now();
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
        shared.confirmed = asked;
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
        if matches!(phase, SharedPhase::Documents | SharedPhase::Leaves) {
            if let Some(fair) = fair {
                self.hand_back_beyond(fair);
            }
            self.release_drained()?;
        }
        Ok(
            match matches!(phase, SharedPhase::Crawled | SharedPhase::Finishing) {
                true => Met::Crawled,
                false => Met::Going,
            },
        )
    }

    /// Whether this worker may send requests: always, unless it is a
    /// worker whose last meeting that found its leases whole was more than
    /// half a lease ago (it was stopped, or its machine stalled: another
    /// worker may have taken its sites over; its next meeting says).
    pub(super) fn leases_fresh(&self) -> bool {
        self.shared
            .as_ref()
            .is_none_or(|s| s.confirmed.elapsed() < s.lease / 2)
    }

    /// Rebalancing: holding more than `fair` sites (the run's held and
    /// waiting sites over its live workers, rounded up), begin handing
    /// the excess back, those with the most work queued first, so that a
    /// worker with fewer (one that joined late, or came back) claims them.
    fn hand_back_beyond(&mut self, fair: i64) {
        let Some(shared) = self.shared.as_ref() else {
            return;
        };
        let keeping = shared.held.len() - shared.releasing.len();
        let excess = keeping as i64 - fair;
        if excess <= 0 {
            return;
        }
        let mut candidates: Vec<(usize, String, Option<u32>)> = shared
            .held
            .keys()
            .filter(|site| !shared.releasing.contains_key(*site))
            .map(|site| {
                let s = shared.site_index.get(site).copied();
                let queued = s.map_or(0, |s| {
                    let site = self.sites.site(s);
                    site.get_queue.len() + site.head_queue.len()
                });
                (queued, site.clone(), s)
            })
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        candidates.truncate(excess as usize);
        tracing::info!(
            "this worker holds {keeping} sites, more than its share ({fair}): handing {} back to the run ({})",
            candidates.len(),
            candidates
                .iter()
                .map(|(_, site, _)| site.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        for (_, site, s) in candidates {
            self.pause_site(site, s);
        }
    }

    /// Stop requesting site `key` (index `s`, if met) to hand it back:
    /// what its queues hold that has not started goes back to the run (the
    /// tasks' reaches offered as found), and so do the reaches found from
    /// now on. The requests in flight there finish here.
    fn pause_site(&mut self, key: String, s: Option<u32>) {
        let mut in_flight = Vec::new();
        if let Some(s) = s {
            let mut continued = Vec::new();
            while let Some(q) = self.sites.pop(s) {
                match q {
                    Queued::Initial(u) => {
                        let e = self.frontier.get_mut(u);
                        if e.state == UrlState::Waiting {
                            e.state = UrlState::New;
                            e.queued_get = false;
                        }
                    }
                    // A retry or a hop of a request that began here.
                    q @ Queued::Continue(_) => continued.push(q),
                }
            }
            for q in continued {
                self.sites.push_get(s, q);
            }
            let mut here: Vec<(u32, UrlIdx)> = self
                .reaches
                .keys()
                .filter(|(_, u)| self.frontier.get(*u).site == s)
                .copied()
                .collect();
            here.sort_unstable();
            for (t, u) in here {
                if self.frontier.get(u).state == UrlState::InFlight {
                    in_flight.push(u);
                    continue;
                }
                let Some(reach) = self.reaches.remove(&(t, u)) else {
                    continue;
                };
                let t = t as usize;
                if let Some(offer) = reach.offer {
                    let (kind, decision) = *offer;
                    self.offer_reach(t, u, kind, reach.referrer, &decision);
                }
                let e = self.frontier.get_mut(u);
                e.reached = without(&e.reached, t);
                e.doc_tasks = without(&e.doc_tasks, t);
                if e.state == UrlState::Waiting {
                    e.state = UrlState::New;
                    e.queued_get = false;
                }
            }
            let frontier = &self.frontier;
            self.held_back
                .retain(|(u, _, _)| frontier.get(*u).site != s);
            in_flight.dedup();
        }
        let Some(shared) = self.shared.as_mut() else {
            return;
        };
        if let Some(s) = s {
            // Chains waiting for a hop to be checked here wait for its
            // next holder's answer, as they did before this one held it.
            let frontier = &self.frontier;
            let back: Vec<UrlIdx> = shared
                .awaited_here
                .iter()
                .copied()
                .filter(|&u| {
                    let e = frontier.get(u);
                    e.site == s && !matches!(e.state, UrlState::Done | UrlState::InFlight)
                })
                .collect();
            for u in back {
                shared.awaited_here.remove(&u);
                shared.awaited.insert(u);
            }
            shared
                .awaited_here
                .retain(|&u| frontier.get(u).state != UrlState::Done);
            if shared.site_held.len() <= s as usize {
                shared.site_held.resize(s as usize + 1, 0);
            }
            shared.site_held[s as usize] = 2;
        }
        shared.releasing.insert(key, in_flight);
    }

    /// Let go of the sites being handed back whose requests are all
    /// answered: what was checked there is stored first (the writer
    /// flushed), so that their next holder settles it from the store
    /// (robots.txt included) and requests nothing twice; each keeps its
    /// politeness (the next holder waits what is left of its interval).
    fn release_drained(&mut self) -> Result<(), CrawlError> {
        let Some(shared) = self.shared.as_ref() else {
            return Ok(());
        };
        if shared.releasing.is_empty() {
            return Ok(());
        }
        let now = Instant::now();
        let mut drained: Vec<(String, Duration)> = Vec::new();
        for (key, in_flight) in &shared.releasing {
            let s = shared.site_index.get(key).copied();
            let quiet = s.is_none_or(|s| {
                let site = self.sites.site(s);
                site.own_active == 0
                    && !site.has_work()
                    && !matches!(site.robots, RobotsState::Fetching)
            }) && in_flight
                .iter()
                .all(|&u| self.frontier.get(u).state != UrlState::InFlight);
            if quiet {
                let pause = s
                    .and_then(|s| self.sites.site(s).shared.lock().gate.next_start)
                    .map_or(Duration::ZERO, |t| t.saturating_duration_since(now));
                drained.push((key.clone(), pause));
            }
        }
        if drained.is_empty() {
            return Ok(());
        }
        drained.sort();
        self.writer.flush();
        let shared = self.shared.as_mut().expect("a shared run");
        let out = std::mem::take(&mut shared.outgoing);
        let let_go = shared.run.release(&drained, &out)?;
        for (key, _) in &drained {
            shared.releasing.remove(key);
            shared.held.remove(key);
            shared.taken_over.remove(key);
        }
        tracing::info!(
            "handed back to the run: {} (what was checked there is stored)",
            let_go.join(", ")
        );
        Ok(())
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
            if self.frontier.get(u).state != UrlState::Done {
                shared.awaited_here.insert(u);
            }
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

/// `set` without task `t`.
fn without(set: &TaskSet, t: usize) -> TaskSet {
    let mut rest = TaskSet::default();
    for i in set.iter().filter(|&i| i != t) {
        rest.insert(i);
    }
    rest
}
