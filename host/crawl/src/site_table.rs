//! The sites of a run: each site's robots.txt state machine, politeness
//! gate and queues, the list of sites with work that may go, and the
//! timers that wake a site up (a retry's backoff, `Crawl-delay`, a robots.txt
//! tried again). The engine asks it which site goes next and whether a
//! request may leave; everything per-site lives here.
//!
//! robots.txt of a site is read once per run, before its first request
//! (or taken from the store's cache or the user's sites file):
//!
//! ```text
//! Unknown ──start──▶ Fetching ──Found/Missing──▶ Ready(rules)
//!    ▲                   │ ─────Forbidden──────▶ OffLimits
//!    └── RetryAt(t) ◀────┘ Unavailable (retries left)
//!                        │ Unavailable, unreachable ─▶ Unreachable
//!                        └ Unavailable, 5xx ────────▶ OffLimits
//! ```

use super::sites::{Queued, RobotsState, Site};
use crate::fetch::politeness::SiteGate;
use crate::fetch::retry::backoff;
use crate::fetch::robots::RobotsFetch;
use crate::policy::robots::{RobotsMode, RobotsRules};
use crate::policy::robots_files::{RobotsFiles, lines_of};
use foldhash::{HashMap, HashMapExt};
use spinneret_core::model::Category;
use spinneret_core::urls;
use spinneret_net::sites::{Robots, Sites};
use spinneret_store::{CachedSite, SiteRecord};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// The settings the site table follows.
#[derive(Clone, Debug)]
pub(crate) struct SitePolicy {
    /// The robot's name, as robots.txt records are matched against it.
    pub robot_name: String,
    /// Which reading of robots.txt applies.
    pub robots_rules: RobotsMode,
    /// The longest `Crawl-delay` honoured.
    pub max_crawl_delay: Duration,
    /// How long a robots.txt holds when its response does not say.
    pub robots_expiry: Duration,
    /// Attempts at an unavailable robots.txt before the site is given up.
    pub retries: u32,
    /// The sites (their keys) whose robots.txt is not read: the user's
    /// own, by their word (`check --ignore-robots-for-tops`).
    pub robots_ignored: std::collections::HashSet<String>,
}

/// Where a site stands on robots.txt when work is about to leave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RobotsTurn {
    /// Its robots.txt must be read first: [`SiteTable::start_robots`].
    Read,
    /// Its robots.txt is being read, or will be tried again later.
    Wait,
    /// Its requests may go (each still checked by [`SiteTable::refusal`]).
    Go,
}

/// The sites of a run.
pub(crate) struct SiteTable {
    policy: SitePolicy,
    sites: Vec<Site>,
    index: HashMap<String, u32>,
    /// robots.txt of earlier runs, by site, taken as sites are met.
    cached: std::collections::HashMap<String, CachedSite>,
    /// The user's avoid and sites files.
    files: RobotsFiles,
    /// Sites with work that may go, each once.
    runnable: VecDeque<u32>,
    /// When a site may go again.
    timers: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Entries in the sites' queues.
    queued: usize,
    /// The sites (their keys) that may be on this machine or its network:
    /// the user's own (see [`SiteTable::open_site`]). Every other site's
    /// requests are held to the address rule.
    open_sites: std::collections::HashSet<String>,
    /// Every site's politeness gate and robots.txt reading, shared with
    /// the run's other callers (the plugins' `http`).
    shared: Arc<Sites>,
}

/// How soon a site whose connections others hold (a plugin's request) is
/// looked at again: the table is woken by its own requests' ends only.
const OTHERS_HOLD: Duration = Duration::from_millis(20);

/// The longest the store's copy of a robots.txt is used: 24 hours (RFC
/// 9309, section 2.4), even when the server says it may be kept longer.
pub(crate) const MAX_CACHED_ROBOTS: Duration = Duration::from_secs(24 * 3600);

impl SiteTable {
    /// A table with no site yet; `cached` is the store's robots.txt cache,
    /// `files` the user's avoid and sites files.
    pub(crate) fn new(
        policy: SitePolicy,
        cached: std::collections::HashMap<String, CachedSite>,
        files: RobotsFiles,
        shared: Arc<Sites>,
    ) -> Self {
        SiteTable {
            shared,
            policy,
            sites: Vec::new(),
            index: HashMap::new(),
            cached,
            files,
            runnable: VecDeque::new(),
            open_sites: std::collections::HashSet::new(),
            timers: BinaryHeap::new(),
            queued: 0,
        }
    }

    /// Every site's gate and robots.txt reading, as the run's other
    /// callers share them.
    pub(crate) fn shared(&self) -> &Arc<Sites> {
        &self.shared
    }

    /// The site of `url`, met for the first time if need be: its robots.txt
    /// then comes from the sites file, the store's cache, or is to be read.
    pub(crate) fn site_of(&mut self, url: &Url) -> u32 {
        let key = urls::site_key(url);
        if let Some(i) = self.index.get(&key) {
            return *i;
        }
        let i = self.sites.len() as u32;
        let p = &self.policy;
        let local = url.scheme() == "file";
        let shared = self.shared.site(&key);
        let mut guard = shared.lock();
        let gate = &mut guard.gate;
        let cached = self.cached.remove(&key);
        let robots = if local || p.robots_ignored.contains(&key) {
            RobotsState::Ready(Arc::new(RobotsRules::default()))
        } else if self.files.enabled() {
            if self.files.holds(&key) {
                // The avoid file holds the site's restrictions (its robots.txt
                // group, read with robots.txt's own matching); the store
                // still knows its Crawl-delay, and the file itself: while the
                // groups are as they were written from it, the file's own
                // rules decide, exactly as when it was read (a line written
                // as a URL prefix loses how the pattern was spelt: `*` comes
                // back as `/*`, which can turn RFC 9309's longest-match tie).
                // An edited group is the user's word, and decides.
                let read = cached
                    .as_ref()
                    .and_then(|c| c.robots_body.as_deref())
                    .map(|body| RobotsRules::parse(body, &p.robot_name, p.robots_rules));
                if let Some(d) = read.as_ref().and_then(|r| r.crawl_delay) {
                    gate.apply_crawl_delay(d, p.max_crawl_delay);
                }
                let origin = origin_of(url);
                let rules = match read {
                    Some(r)
                        if self.files.holds_as_written(
                            &key,
                            &lines_of(&origin, &r.rules),
                            &lines_of(&origin, &r.rfc9309),
                        ) =>
                    {
                        r
                    }
                    _ => self.files.robots_of(&key, p.robots_rules),
                };
                RobotsState::Ready(Arc::new(rules))
            } else {
                // Not listed in the sites file (or its line was deleted): read it again.
                RobotsState::Unknown
            }
        } else {
            match cached {
                Some(c) => robots_from_cache(p, &key, &c, gate),
                None => RobotsState::Unknown,
            }
        };
        // What another caller of the run read already holds; what this
        // table knows from its files or the store, the others learn.
        let robots = match (robots, &guard.robots) {
            (RobotsState::Unknown, Robots::Ready(r)) => RobotsState::Ready(r.clone()),
            (RobotsState::Unknown, Robots::OffLimits(w)) => RobotsState::OffLimits(w.clone()),
            (RobotsState::Unknown, Robots::Unreachable(w)) => RobotsState::Unreachable(w.clone()),
            (robots, _) => {
                if let Some(known) = published(&robots) {
                    guard.robots = known;
                }
                robots
            }
        };
        drop(guard);
        self.sites.push(Site {
            key: key.clone(),
            origin: url.clone(),
            robots,
            robots_failures: 0,
            robots_answer: None,
            shared,
            own_active: 0,
            get_queue: VecDeque::new(),
            head_queue: VecDeque::new(),
            runnable: false,
        });
        self.index.insert(key, i);
        i
    }

    /// A robots.txt another process stored for the site `key` since this
    /// table was made (a shared run's site taken over): used as the
    /// store's cache is, unless the site's robots.txt is read already or
    /// the avoid and sites files speak for it.
    pub(crate) fn adopt_cached(&mut self, key: &str, cached: CachedSite) {
        if self.files.enabled() {
            return;
        }
        match self.index.get(key) {
            Some(&s) => {
                let p = &self.policy;
                let site = &mut self.sites[s as usize];
                if matches!(site.robots, RobotsState::Unknown) && site.origin.scheme() != "file" {
                    site.robots = robots_from_cache(p, key, &cached, &mut site.shared.lock().gate);
                    if let Some(known) = published(&site.robots) {
                        site.shared.lock().robots = known;
                    }
                }
            }
            None => {
                self.cached.insert(key.to_string(), cached);
            }
        }
    }

    /// Site `s` (a worker handing a site back reads its queues, requests
    /// and gate).
    pub(crate) fn site(&self, s: u32) -> &Site {
        &self.sites[s as usize]
    }

    // ----- which site goes ----------------------------------------------------------------

    /// `s` has work that may go: list it (once).
    pub(crate) fn make_runnable(&mut self, s: u32) {
        let site = &mut self.sites[s as usize];
        if !site.runnable {
            site.runnable = true;
            self.runnable.push_back(s);
        }
    }

    /// The next listed site, taken off the list.
    pub(crate) fn next_runnable(&mut self) -> Option<u32> {
        let s = self.runnable.pop_front()?;
        self.sites[s as usize].runnable = false;
        Some(s)
    }

    /// How many sites are listed.
    pub(crate) fn runnable(&self) -> usize {
        self.runnable.len()
    }

    /// Wake `s` up at `at`.
    pub(crate) fn wake_at(&mut self, at: Instant, s: u32) {
        self.timers.push(Reverse((at, s)));
    }

    /// The earliest wake-up, if any.
    pub(crate) fn next_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((t, _))| *t)
    }

    /// How many wake-ups are set.
    pub(crate) fn timers(&self) -> usize {
        self.timers.len()
    }

    /// List the sites whose wake-up time has come.
    pub(crate) fn fire_timers(&mut self, now: Instant) {
        while let Some(Reverse((t, s))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            self.make_runnable(s);
        }
    }

    // ----- queues -------------------------------------------------------------------------

    /// Queue document work (or a continuation) for `s`, and list it.
    pub(crate) fn push_get(&mut self, s: u32, q: Queued) {
        self.sites[s as usize].get_queue.push_back(q);
        self.queued += 1;
        self.make_runnable(s);
    }

    /// Queue leaf work for `s`, and list it.
    pub(crate) fn push_head(&mut self, s: u32, q: Queued) {
        self.sites[s as usize].head_queue.push_back(q);
        self.queued += 1;
        self.make_runnable(s);
    }

    /// Put work back at the front of `s`'s queue (it could not leave yet).
    pub(crate) fn push_front(&mut self, s: u32, q: Queued) {
        self.sites[s as usize].push_front(q);
        self.queued += 1;
    }

    /// Take `s`'s next piece of work, documents first.
    pub(crate) fn pop(&mut self, s: u32) -> Option<Queued> {
        let q = self.sites[s as usize].pop()?;
        self.queued -= 1;
        Some(q)
    }

    /// Whether `s` has work queued.
    pub(crate) fn has_work(&self, s: u32) -> bool {
        self.sites[s as usize].has_work()
    }

    /// Entries in all the queues (some may be settled meanwhile: they are
    /// dropped when their turn comes).
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    // ----- politeness ---------------------------------------------------------------------

    /// A request to `s` would leave at `now`: true when it may (and it is
    /// counted as started); else the site is woken up when it may.
    pub(crate) fn try_start(&mut self, s: u32, now: Instant) -> bool {
        let site = &mut self.sites[s as usize];
        // One look at the shared gate, under one lock.
        let (checked, others_hold) = {
            let mut shared = site.shared.lock();
            let checked = shared.gate.check(now);
            if checked.is_ok() {
                shared.gate.start(now);
            }
            (checked, shared.gate.active > site.own_active)
        };
        match checked {
            Ok(()) => {
                site.own_active += 1;
                true
            }
            Err(Some(t)) => {
                self.wake_at(t, s);
                false
            }
            Err(None) => {
                // Another caller's request holds a connection: its end
                // does not wake this table.
                if others_hold {
                    self.wake_at(now + OTHERS_HOLD, s);
                }
                false
            }
        }
    }

    /// A request to `s` is answered: the site may go again.
    pub(crate) fn finished(&mut self, s: u32) {
        let site = &mut self.sites[s as usize];
        site.own_active = site.own_active.saturating_sub(1);
        site.shared.finished();
        self.make_runnable(s);
    }

    /// The server asked `s` to wait until `at` (`Retry-After`).
    pub(crate) fn hold_until(&mut self, s: u32, at: Instant) {
        self.sites[s as usize].shared.hold_until(at);
    }

    // ----- robots.txt ---------------------------------------------------------------------

    /// Where `s` stands on robots.txt at `now`.
    pub(crate) fn robots_turn(&mut self, s: u32, now: Instant) -> RobotsTurn {
        let site = &mut self.sites[s as usize];
        if matches!(site.robots, RobotsState::Unknown) {
            // Another caller of the run may have read it, or be reading it.
            match &site.shared.lock().robots {
                Robots::Ready(r) => site.robots = RobotsState::Ready(r.clone()),
                Robots::OffLimits(w) => site.robots = RobotsState::OffLimits(w.clone()),
                Robots::Unreachable(w) => site.robots = RobotsState::Unreachable(w.clone()),
                Robots::Reading => {
                    self.timers.push(Reverse((now + OTHERS_HOLD, s)));
                    return RobotsTurn::Wait;
                }
                Robots::Unknown => {}
            }
        }
        match self.sites[s as usize].robots {
            RobotsState::Unknown => RobotsTurn::Read,
            RobotsState::Fetching => RobotsTurn::Wait,
            RobotsState::RetryAt(t) if t > now => {
                self.wake_at(t, s);
                RobotsTurn::Wait
            }
            RobotsState::RetryAt(_) => RobotsTurn::Read,
            RobotsState::Ready(_)
            | RobotsState::OffLimits(_)
            | RobotsState::Unreachable(_)
            | RobotsState::Refused(_) => RobotsTurn::Go,
        }
    }

    /// Let `url`'s site (scheme, host and port: not the host's other
    /// ports) reach this machine or its network: the user named it (a
    /// task's top), or a page of theirs there links to it. Local files are
    /// the user's already. A site the address rule had refused is asked
    /// for again (its robots.txt first).
    pub(crate) fn open_site(&mut self, url: &Url) {
        let key = urls::site_key(url);
        if let Some(&i) = self.index.get(&key)
            && matches!(self.sites[i as usize].robots, RobotsState::Refused(_))
        {
            self.sites[i as usize].robots = RobotsState::Unknown;
            self.make_runnable(i);
        }
        self.open_sites.insert(key);
    }

    /// Whether site `s` may reach this machine or its network: a local
    /// file, or a site the user's word opened ([`SiteTable::open_site`]).
    pub(crate) fn is_open(&self, s: u32) -> bool {
        self.is_open_url(&self.sites[s as usize].origin)
    }

    /// Whether `url` is on a site the user's word opened.
    pub(crate) fn is_open_url(&self, url: &Url) -> bool {
        url.scheme() == "file" || self.open_sites.contains(&urls::site_key(url))
    }

    /// Keep the run from site `s` before its robots.txt is asked: the
    /// address rule refuses it for `reason`.
    pub(crate) fn refuse(&mut self, s: u32, reason: String) {
        self.sites[s as usize].robots = RobotsState::Refused(reason);
    }

    /// A URL of site `s` (to check the address rule against).
    pub(crate) fn origin(&self, s: u32) -> &Url {
        &self.sites[s as usize].origin
    }

    /// Start reading `s`'s robots.txt at `now`: its URL, to request. `None`
    /// when the site has none to read (its requests go unrestricted).
    pub(crate) fn start_robots(&mut self, s: u32, now: Instant) -> Option<Url> {
        let site = &mut self.sites[s as usize];
        let Some(url) = urls::robots_url(&site.origin) else {
            site.robots = RobotsState::Ready(Arc::new(RobotsRules::default()));
            self.make_runnable(s);
            return None;
        };
        site.robots = RobotsState::Fetching;
        let mut shared = site.shared.lock();
        shared.robots = Robots::Reading;
        shared.gate.start(now);
        drop(shared);
        site.own_active += 1;
        Some(url)
    }

    /// Why robots.txt (or the site's state) forbids requesting `request` on
    /// `s`, if it does: the category to record and the reason.
    pub(crate) fn refusal(&self, s: u32, request: &Url) -> Option<(Category, String)> {
        let site = &self.sites[s as usize];
        match &site.robots {
            RobotsState::OffLimits(reason) => Some((Category::Avoided, reason.clone())),
            RobotsState::Unreachable(reason) => Some((Category::Broken, reason.clone())),
            RobotsState::Refused(reason) => Some((Category::NotChecked, reason.clone())),
            RobotsState::Ready(rules) => {
                rules.forbidding_rule(&path_and_query(request)).map(|rule| {
                    let reason = format!(
                        "robots.txt of {} disallows it (Disallow: {})",
                        site.key, rule.path
                    );
                    (Category::Avoided, reason)
                })
            }
            RobotsState::Unknown | RobotsState::Fetching | RobotsState::RetryAt(_) => None,
        }
    }

    /// The status and type this run's robots.txt request for `s` got: the
    /// answer for a link to that robots.txt.
    pub(crate) fn robots_answer(&self, s: u32) -> Option<(u16, Option<String>)> {
        self.sites[s as usize].robots_answer.clone()
    }

    /// `s`'s robots.txt request ended with `outcome` (at Unix time `now`):
    /// move its state on, and give back what to keep in the store, if
    /// anything was read. The site is listed again, and the run's other
    /// callers waiting for the reading are woken with it (a reading to be
    /// tried again, or refused by the address rule, is theirs to try).
    pub(crate) fn robots_answered(
        &mut self,
        s: u32,
        outcome: RobotsFetch,
        now: i64,
    ) -> Option<SiteRecord> {
        let record = self.read_robots_answer(s, outcome, now);
        let site = &self.sites[s as usize];
        site.shared.lock().robots = published(&site.robots).unwrap_or(Robots::Unknown);
        site.shared.notify();
        record
    }

    /// [`SiteTable::robots_answered`] but for the other callers.
    fn read_robots_answer(&mut self, s: u32, outcome: RobotsFetch, now: i64) -> Option<SiteRecord> {
        let p = &self.policy;
        let default_expiry = p.robots_expiry.as_secs() as i64;
        let site = &mut self.sites[s as usize];
        site.own_active = site.own_active.saturating_sub(1);
        site.shared.lock().gate.finish();
        let (status, body, http, expires, reading) = match outcome {
            RobotsFetch::Found {
                body,
                status,
                max_age,
            } => {
                let rules = RobotsRules::parse(&body, &p.robot_name, p.robots_rules);
                if let Some(d) = rules.crawl_delay {
                    site.shared
                        .lock()
                        .gate
                        .apply_crawl_delay(d, p.max_crawl_delay);
                }
                let expires = now + max_age.map_or(default_expiry, |a| a.as_secs() as i64);
                tracing::debug!(
                    "robots.txt of {}: {} rules for this robot",
                    site.key,
                    rules.rules.len()
                );
                site.robots = RobotsState::Ready(Arc::new(rules.clone()));
                ("ok", Some(body), status, expires, rules)
            }
            RobotsFetch::Missing { status } => {
                site.robots = RobotsState::Ready(Arc::new(RobotsRules::default()));
                let none = RobotsRules::default();
                ("missing", None, status, now + default_expiry, none)
            }
            RobotsFetch::Forbidden { status } => {
                site.robots = RobotsState::OffLimits(format!(
                    "robots.txt of {} answered {status}: the whole site is off limits",
                    site.key
                ));
                let all = RobotsRules::forbid_all();
                ("forbidden", None, status, now + default_expiry, all)
            }
            RobotsFetch::Refused { reason } => {
                site.robots = RobotsState::Refused(reason);
                self.make_runnable(s);
                return None;
            }
            RobotsFetch::Unavailable {
                reason,
                unreachable,
                retryable,
            } => {
                site.robots_failures += 1;
                let key = &site.key;
                if retryable && site.robots_failures <= p.retries {
                    let at = Instant::now() + backoff(site.robots_failures);
                    tracing::info!(
                        "robots.txt of {key} unavailable ({reason}); trying again later"
                    );
                    site.robots = RobotsState::RetryAt(at);
                    self.timers.push(Reverse((at, s)));
                } else if unreachable {
                    tracing::warn!("{key} cannot be reached ({reason}); its links are broken");
                    site.robots =
                        RobotsState::Unreachable(format!("site {key} cannot be reached: {reason}"));
                } else {
                    tracing::warn!(
                        "robots.txt of {key} unavailable ({reason}); the site is off limits for this run"
                    );
                    site.robots = RobotsState::OffLimits(format!(
                        "robots.txt of {key} could not be read ({reason}); the site is off limits for this run"
                    ));
                }
                self.make_runnable(s);
                return None;
            }
        };
        // What was read, with the rules that apply to this robot (kept in
        // the store's sites table and, with a sites file, the avoid file).
        let origin = origin_of(&site.origin);
        site.robots_answer = Some((http, Some("text/plain".to_string())));
        let record = SiteRecord {
            site: site.key.clone(),
            robots_status: status.to_string(),
            robots_body: body,
            http_status: Some(http),
            fetched_at: now,
            // The store's copy is used no longer than RFC 9309 allows
            // (section 2.4), whatever the server's max-age; the sites
            // file keeps the draft's expiry (`robots_expiry`, SitesCheck).
            // (With a sites file the store keeps the file the sites file's
            // line stands for, as long as that line holds.)
            expires_at: match self.files.enabled() {
                true => expires,
                false => expires.min(now + MAX_CACHED_ROBOTS.as_secs() as i64),
            },
            robots_lines: lines_of(&origin, &reading.rules),
        };
        if self.files.enabled() {
            self.files.record(
                &record.site,
                SystemTime::UNIX_EPOCH + Duration::from_secs(expires.max(0) as u64),
                record.robots_lines.clone(),
                lines_of(&origin, &reading.rfc9309),
            );
        }
        self.make_runnable(s);
        Some(record)
    }

    /// The URL of `s`'s robots.txt, if it has one.
    pub(crate) fn robots_url(&self, s: u32) -> Option<Url> {
        urls::robots_url(&self.sites[s as usize].origin)
    }

    /// Write this run's robots.txt readings back to the user's files (at
    /// the end of the run).
    pub(crate) fn save_files(&self, now: SystemTime) -> std::io::Result<()> {
        self.files.save(now)
    }
}

/// What the run's other callers may take of a site's robots.txt state:
/// a reading that holds for everyone (not a retry to come, nor the address
/// rule's refusal, which is this table's own).
fn published(robots: &RobotsState) -> Option<Robots> {
    match robots {
        RobotsState::Ready(r) => Some(Robots::Ready(r.clone())),
        RobotsState::OffLimits(w) => Some(Robots::OffLimits(w.clone())),
        RobotsState::Unreachable(w) => Some(Robots::Unreachable(w.clone())),
        _ => None,
    }
}

/// A site's robots.txt as an earlier run left it in the store.
fn robots_from_cache(
    p: &SitePolicy,
    key: &str,
    c: &CachedSite,
    gate: &mut SiteGate,
) -> RobotsState {
    match c.robots_status.as_str() {
        "ok" => {
            let body = c.robots_body.as_deref().unwrap_or("");
            let rules = RobotsRules::parse(body, &p.robot_name, p.robots_rules);
            if let Some(d) = rules.crawl_delay {
                gate.apply_crawl_delay(d, p.max_crawl_delay);
            }
            RobotsState::Ready(Arc::new(rules))
        }
        "forbidden" => RobotsState::OffLimits(format!(
            "robots.txt of {key} answered 401/403 (cached in the sites table): the whole site is off limits"
        )),
        _ => RobotsState::Ready(Arc::new(RobotsRules::default())),
    }
}

/// `scheme://host[:port]` of a URL.
fn origin_of(url: &Url) -> String {
    let origin = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    match url.port() {
        Some(p) => format!("{origin}:{p}"),
        None => origin,
    }
}

/// The path and query of a URL, as robots.txt rules match them.
fn path_and_query(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::UrlIdx;

    fn initial(u: UrlIdx) -> Queued {
        Queued::Initial(u)
    }

    fn policy() -> SitePolicy {
        SitePolicy {
            robot_name: "spinneret".into(),
            robots_rules: RobotsMode::default(),
            max_crawl_delay: Duration::from_secs(30),
            robots_expiry: Duration::from_secs(3600),
            retries: 2,
            robots_ignored: Default::default(),
        }
    }

    fn sites(delay: Duration) -> Arc<Sites> {
        Sites::new(spinneret_net::sites::GateSettings {
            per_site_connections: 1,
            per_site_delay: delay,
            max_crawl_delay: Duration::from_secs(30),
        })
    }

    fn table() -> SiteTable {
        SiteTable::new(
            policy(),
            Default::default(),
            RobotsFiles::default(),
            sites(Duration::ZERO),
        )
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn one_site_per_host_and_port() {
        let mut t = table();
        let a = t.site_of(&url("http://a.test/x"));
        assert_eq!(t.site_of(&url("http://a.test/y?q")), a);
        assert_ne!(t.site_of(&url("http://a.test:8080/")), a);
        assert_ne!(t.site_of(&url("http://b.test/")), a);
        assert_eq!(t.robots_turn(a, Instant::now()), RobotsTurn::Read);
        let local = t.site_of(&url("file:///tmp/a.html"));
        assert_eq!(t.robots_turn(local, Instant::now()), RobotsTurn::Go);
        assert_eq!(t.start_robots(local, Instant::now()), None);
    }

    #[test]
    fn a_robots_txt_found_is_read_once_and_its_rules_refuse() {
        let mut t = table();
        let now = Instant::now();
        let s = t.site_of(&url("http://a.test/"));
        let robots = t.start_robots(s, now);
        assert_eq!(robots, Some(url("http://a.test/robots.txt")));
        assert_eq!(t.robots_turn(s, now), RobotsTurn::Wait, "being read");
        let body = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n";
        let found = RobotsFetch::Found {
            body: body.into(),
            status: 200,
            max_age: Some(Duration::from_secs(60)),
        };
        let record = t
            .robots_answered(s, found, 1000)
            .expect("kept in the store");
        assert_eq!(record.robots_status, "ok");
        assert_eq!(record.expires_at, 1060, "the response's max-age");
        // A year's max-age is held to RFC 9309's 24 hours in the store.
        let b = t.site_of(&url("http://b.test/"));
        t.start_robots(b, now);
        let year = RobotsFetch::Found {
            body: body.into(),
            status: 200,
            max_age: Some(Duration::from_secs(31_536_000)),
        };
        let held = t.robots_answered(b, year, 1000).unwrap();
        assert_eq!(held.expires_at, 1000 + 24 * 3600);
        assert_eq!(
            record.robots_lines,
            vec![(false, "http://a.test/private/".to_string())]
        );
        assert_eq!(t.robots_turn(s, now), RobotsTurn::Go);
        assert_eq!(t.robots_answer(s), Some((200, Some("text/plain".into()))));
        assert_eq!(
            t.refusal(s, &url("http://a.test/private/x?y")),
            Some((
                Category::Avoided,
                "robots.txt of a.test:80 disallows it (Disallow: /private/)".into()
            ))
        );
        assert_eq!(t.refusal(s, &url("http://a.test/public")), None);
        assert_eq!(
            t.site(s).shared.lock().gate.interval(),
            Duration::from_secs(2)
        );
        assert_eq!(t.next_runnable(), Some(s), "the site goes on");
    }

    #[test]
    fn missing_and_forbidden() {
        let mut t = table();
        let now = Instant::now();
        let (a, b) = (
            t.site_of(&url("http://a.test/")),
            t.site_of(&url("http://b.test/")),
        );
        t.start_robots(a, now);
        t.start_robots(b, now);
        let missing = t.robots_answered(a, RobotsFetch::Missing { status: 404 }, 10);
        assert_eq!(
            missing.map(|r| (r.robots_status, r.expires_at)),
            Some(("missing".into(), 3610))
        );
        assert_eq!(t.refusal(a, &url("http://a.test/anything")), None);
        let forbidden = t.robots_answered(b, RobotsFetch::Forbidden { status: 403 }, 10);
        assert_eq!(
            forbidden.map(|r| (r.robots_status, r.robots_lines)),
            Some((
                "forbidden".into(),
                vec![(false, "http://b.test/".to_string())]
            ))
        );
        assert_eq!(
            t.refusal(b, &url("http://b.test/x")),
            Some((
                Category::Avoided,
                "robots.txt of b.test:80 answered 403: the whole site is off limits".into()
            ))
        );
    }

    #[test]
    fn an_unavailable_robots_txt_is_tried_again_then_given_up() {
        let now = Instant::now();
        for (unreachable, category, reason) in [
            (
                true,
                Category::Broken,
                "site a.test:80 cannot be reached: connection refused",
            ),
            (
                false,
                Category::Avoided,
                "robots.txt of a.test:80 could not be read (connection refused); the site is off limits for this run",
            ),
        ] {
            let mut t = table();
            let s = t.site_of(&url("http://a.test/"));
            let failed = || RobotsFetch::Unavailable {
                reason: "connection refused".into(),
                unreachable,
                retryable: true,
            };
            for attempt in 1..=2 {
                t.start_robots(s, now);
                assert_eq!(t.robots_answered(s, failed(), 0), None);
                let wake = t.next_timer().expect("a wake-up");
                assert!(wake > now, "attempt {attempt} backs off");
                assert_eq!(t.robots_turn(s, now), RobotsTurn::Wait, "backing off");
                let later = now + Duration::from_secs(60);
                assert_eq!(t.robots_turn(s, later), RobotsTurn::Read, "tried again");
            }
            t.start_robots(s, now);
            assert_eq!(t.robots_answered(s, failed(), 0), None);
            assert_eq!(t.robots_turn(s, now), RobotsTurn::Go, "given up");
            assert_eq!(
                t.refusal(s, &url("http://a.test/x")),
                Some((category, reason.to_string()))
            );
        }
    }

    #[test]
    fn a_host_that_does_not_exist_is_given_up_at_once() {
        let now = Instant::now();
        let mut t = table();
        let s = t.site_of(&url("http://nx.test/"));
        t.start_robots(s, now);
        let nxdomain = RobotsFetch::Unavailable {
            reason: "no such host: Name or service not known".into(),
            unreachable: true,
            retryable: false,
        };
        assert_eq!(t.robots_answered(s, nxdomain, 0), None);
        assert_eq!(t.robots_turn(s, now), RobotsTurn::Go, "not tried again");
        assert_eq!(
            t.refusal(s, &url("http://nx.test/x")),
            Some((
                Category::Broken,
                "site nx.test:80 cannot be reached: no such host: Name or service not known".into()
            ))
        );
    }

    #[test]
    fn robots_txt_cached_by_an_earlier_run() {
        let mut cached = std::collections::HashMap::new();
        let site = |status: &str, body: Option<&str>| CachedSite {
            robots_status: status.into(),
            robots_body: body.map(str::to_string),
            expires_at: i64::MAX,
        };
        cached.insert(
            "a.test:80".to_string(),
            site("ok", Some("User-agent: *\nDisallow: /x\n")),
        );
        cached.insert("b.test:80".to_string(), site("forbidden", None));
        let mut t = SiteTable::new(
            policy(),
            cached,
            RobotsFiles::default(),
            sites(Duration::ZERO),
        );
        let now = Instant::now();
        let a = t.site_of(&url("http://a.test/"));
        let b = t.site_of(&url("http://b.test/"));
        assert_eq!(t.robots_turn(a, now), RobotsTurn::Go, "not read again");
        assert!(t.refusal(a, &url("http://a.test/x/1")).is_some());
        assert_eq!(
            t.refusal(b, &url("http://b.test/")).map(|r| r.0),
            Some(Category::Avoided)
        );
    }

    #[test]
    fn queues_count_their_entries_and_list_a_site_once() {
        let mut t = table();
        let s = t.site_of(&url("http://a.test/"));
        t.push_head(s, initial(1));
        t.push_get(s, initial(2));
        t.push_get(s, initial(3));
        assert_eq!((t.queued(), t.runnable()), (3, 1));
        assert_eq!(t.next_runnable(), Some(s));
        assert_eq!(t.next_runnable(), None);
        let order: Vec<UrlIdx> = std::iter::from_fn(|| t.pop(s))
            .map(|q| match q {
                Queued::Initial(u) => u,
                Queued::Continue(j) => j.url,
            })
            .collect();
        assert_eq!(order, vec![2, 3, 1], "documents first");
        assert_eq!(t.queued(), 0);
        t.push_front(s, initial(4));
        assert_eq!(t.queued(), 1);
        assert!(t.has_work(s));
    }

    #[test]
    fn the_gate_holds_a_site_and_a_timer_wakes_it() {
        let mut t = SiteTable::new(
            policy(),
            Default::default(),
            RobotsFiles::default(),
            sites(Duration::from_secs(1)),
        );
        let s = t.site_of(&url("http://a.test/"));
        let now = Instant::now();
        assert!(t.try_start(s, now));
        t.finished(s);
        assert_eq!(t.next_runnable(), Some(s));
        assert!(!t.try_start(s, now), "the per-site delay");
        let wake = t.next_timer().expect("woken when the delay is over");
        t.fire_timers(now);
        assert_eq!(t.runnable(), 0, "not yet");
        t.fire_timers(wake);
        assert_eq!(t.next_runnable(), Some(s));
        assert!(t.try_start(s, wake));
    }

    /// A robots.txt group written to the avoid file and read back in the
    /// next run decides exactly as the file read from the site did, in
    /// every mode, over 300 generated files: before, a pattern `*` came
    /// back as `/*` (one byte longer), which turned RFC 9309's
    /// longest-match tie, and the second run asked for what the first
    /// avoided (7 URLs in 300 files in `rfc9309` mode, 5 in `both`).
    #[test]
    fn robots_rules_read_back_from_the_avoid_file_decide_as_read() {
        let pieces = ["/", "*", "a", "b", "/a", "/b", "$", "%61", "/*", "*a"];
        let paths = [
            "/", "/a", "/ab", "/b", "/aa", "/a/b", "/ba", "/bb", "/a%62", "/x",
        ];
        let bodies =
            crate::policy::robots_files::generated_robots_txt(300, &pieces, 0x9e37_79b9_7f4a_7c15);
        for mode in [RobotsMode::Both, RobotsMode::Rfc9309, RobotsMode::Draft] {
            let dir = tempfile::tempdir().unwrap();
            let files = crate::policy::RuleFiles {
                avoid_files: Vec::new(),
                avoid_file: Some(dir.path().join("avoid")),
                system_sites: Vec::new(),
                sites_file: Some(dir.path().join("sites")),
            };
            let now = SystemTime::now();
            let unix = now
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_secs() as i64;
            let policy = SitePolicy {
                robots_rules: mode,
                ..policy()
            };
            let mut first = SiteTable::new(
                policy.clone(),
                Default::default(),
                RobotsFiles::load(&files, now).unwrap(),
                sites(Duration::ZERO),
            );
            let mut cached = std::collections::HashMap::new();
            for (i, body) in bodies.iter().enumerate() {
                let s = first.site_of(&url(&format!("http://h{i}.test/")));
                first.start_robots(s, Instant::now());
                let found = RobotsFetch::Found {
                    body: body.clone(),
                    status: 200,
                    max_age: None,
                };
                let record = first.robots_answered(s, found, unix).unwrap();
                cached.insert(
                    record.site.clone(),
                    CachedSite {
                        robots_status: record.robots_status,
                        robots_body: record.robots_body,
                        expires_at: record.expires_at,
                    },
                );
            }
            first.save_files(now).unwrap();
            let mut second = SiteTable::new(
                policy,
                cached,
                RobotsFiles::load(&files, now).unwrap(),
                sites(Duration::ZERO),
            );
            let mut flips = Vec::new();
            for (i, body) in bodies.iter().enumerate() {
                let site = format!("http://h{i}.test");
                let (a, b) = (first.site_of(&url(&site)), second.site_of(&url(&site)));
                assert_eq!(second.robots_turn(b, Instant::now()), RobotsTurn::Go);
                for p in paths {
                    let u = url(&format!("{site}{p}"));
                    if first.refusal(a, &u).is_some() != second.refusal(b, &u).is_some() {
                        flips.push(format!("{mode:?} {p} under {body:?}"));
                    }
                }
            }
            assert_eq!(flips, Vec::<String>::new());
        }
    }
}
