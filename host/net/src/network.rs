//! The polite path, for a stage without a scheduler of its own (the
//! collector, a search-engine query, a plugin's `http`): one call takes a
//! URL through the avoid rules, the address rule, the site's robots.txt
//! (read once per site, whoever asks first, the crawl included), the
//! site's turn (its connections, interval and `Crawl-delay`), the fetch,
//! and the retries a 429, a 503 or a failed connection are worth. Every
//! refusal is a [`NetError`] a caller can match.
//!
//! The crawl schedules its own requests, but on the same [`Sites`]: a
//! [`Network`] made with [`Network::beside`] shares the crawl's gates and
//! robots.txt readings.

use crate::fetch::retry::{backoff, is_retryable_status, parse_retry_after};
use crate::fetch::robots::{RobotsFetch, fetch_robots};
use crate::fetch::{
    BodyWanted, ClientError, FetchError, FetchRequest, FetchResponse, FetchSettings, Fetcher,
    Method, Validators,
};
use crate::robots::{RobotsMode, RobotsRules};
use crate::sites::{GateSettings, Robots, Site, Sites, TooLate};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use url::Url;

/// What a fetch hook says of a request before it leaves: the headers to
/// add, or why it must not be made (a veto). Called for every request of
/// the polite path (redirect hops included, robots.txt not).
pub trait RequestHook: Send + Sync {
    /// The hook's word on a `method` request of `url`.
    fn before(&self, url: &Url, method: &str) -> Result<Vec<(String, String)>, String>;
}

/// Why a URL was not fetched, or no answer came.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// An avoid rule forbids it (the rule, and where it was written).
    #[error("the avoid rule {rule} forbids {url}")]
    Avoided {
        /// The URL.
        url: String,
        /// The rule and where it was written.
        rule: String,
    },
    /// The site's robots.txt disallows it.
    #[error("robots.txt of {site} disallows {url} (Disallow: {rule})")]
    Robots {
        /// The site.
        site: String,
        /// The URL.
        url: String,
        /// The path of the rule that forbids it.
        rule: String,
    },
    /// The whole site is off limits: its robots.txt answered 401 or 403,
    /// or could not be read (the reason says which).
    #[error("{0}")]
    OffLimits(String),
    /// The site cannot be reached at all (robots.txt could not be asked):
    /// why.
    #[error("{0}")]
    Unreachable(String),
    /// The address rule: it was led to from elsewhere and names this
    /// machine or its network (the reason says how to allow it).
    #[error("{0}")]
    AddressRule(String),
    /// The caller's time ran out before the site's turn came.
    #[error("{0}")]
    TooLate(#[from] TooLate),
    /// A fetch hook vetoed it (its reason, naming the plugin).
    #[error("{0}")]
    Vetoed(String),
    /// The caller's time ran out while it was fetched.
    #[error("given up: the time left for this request ran out while it was fetched")]
    GivenUp,
    /// The request was made and failed (connection, timeout, protocol).
    #[error("{0}")]
    Fetch(FetchError),
}

impl NetError {
    /// Whether it is a refusal (robots.txt, an avoid rule, the address
    /// rule): the request was not made, by rule.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            NetError::Avoided { .. }
                | NetError::Robots { .. }
                | NetError::OffLimits(_)
                | NetError::AddressRule(_)
                | NetError::Vetoed(_)
        )
    }
}

impl From<FetchError> for NetError {
    fn from(e: FetchError) -> NetError {
        match e {
            FetchError::AddressRule(r) => NetError::AddressRule(r),
            e => NetError::Fetch(e),
        }
    }
}

/// What the polite path follows.
#[derive(Clone, Debug)]
pub struct NetworkSettings {
    /// The robot's name, as robots.txt records are matched against it.
    pub robot_name: String,
    /// Which reading of robots.txt applies.
    pub robots_mode: RobotsMode,
    /// Each site's gate.
    pub gates: GateSettings,
    /// Attempts after the first at a 429, a 503 or a failed connection.
    pub retries: u32,
    /// The largest body read.
    pub max_body: u64,
    /// The longest `Retry-After` waited out; a longer one is the answer.
    pub max_retry_after: Duration,
    /// Requests in flight at once through this network, all sites together.
    pub concurrency: usize,
}

/// Which avoid rule forbids a URL, if one does (the rule and where it was
/// written): the run's avoid files, as the crawl's policy reads them.
pub type AvoidRule = Arc<dyn Fn(&Url) -> Option<String> + Send + Sync>;

/// One request on the polite path.
#[derive(Clone, Debug)]
pub struct Ask {
    /// The URL.
    pub url: Url,
    /// Validators for a conditional request.
    pub validators: Option<Validators>,
    /// Keep every response header (to archive the exchange).
    pub keep_headers: bool,
    /// Whether it may connect only to public addresses: a page from
    /// elsewhere (or an engine, or a plugin) led to it. Its robots.txt is
    /// asked the same way.
    pub public_only: bool,
    /// When the caller's time is up, if it has a limit.
    pub deadline: Option<Instant>,
}

impl Ask {
    /// A plain GET of `url`, connecting only to public addresses.
    pub fn get(url: Url) -> Ask {
        Ask {
            url,
            validators: None,
            keep_headers: false,
            public_only: true,
            deadline: None,
        }
    }
}

/// The polite path: one per process and run, shared by every stage.
pub struct Network {
    fetcher: Fetcher,
    /// One per request in flight ([`NetworkSettings::concurrency`]).
    slots: tokio::sync::Semaphore,
    sites: Arc<Sites>,
    settings: NetworkSettings,
    avoid: Option<AvoidRule>,
    user_agent: String,
    from: Option<String>,
    /// The fetch hooks' word on each request, once set.
    hook: std::sync::OnceLock<Arc<dyn RequestHook>>,
}

impl Network {
    /// A network with sites of its own.
    pub fn new(
        fetch: &FetchSettings,
        settings: NetworkSettings,
        avoid: Option<AvoidRule>,
    ) -> Result<Network, ClientError> {
        let sites = Sites::new(settings.gates.clone());
        Network::beside(fetch, settings, avoid, sites)
    }

    /// A network on `sites`, which a crawl's scheduler holds too.
    pub fn beside(
        fetch: &FetchSettings,
        settings: NetworkSettings,
        avoid: Option<AvoidRule>,
        sites: Arc<Sites>,
    ) -> Result<Network, ClientError> {
        Ok(Network {
            fetcher: Fetcher::new(fetch)?,
            slots: tokio::sync::Semaphore::new(settings.concurrency.max(1)),
            sites,
            settings,
            avoid,
            user_agent: fetch.user_agent.clone(),
            from: fetch.from.clone(),
            hook: std::sync::OnceLock::new(),
        })
    }

    /// Have `hook` asked about every request from now on (once: a second
    /// hook is refused, given back).
    pub fn set_hook(&self, hook: Arc<dyn RequestHook>) -> Result<(), Arc<dyn RequestHook>> {
        self.hook.set(hook)
    }

    /// The sites it keeps.
    pub fn sites(&self) -> &Arc<Sites> {
        &self.sites
    }

    /// The headers every request carries besides those of the HTTP
    /// layer: `User-Agent` and `From` (when set).
    pub fn identity_headers(&self) -> Vec<(String, String)> {
        let mut h = vec![("User-Agent".to_string(), self.user_agent.clone())];
        if let Some(from) = &self.from {
            h.push(("From".to_string(), from.clone()));
        }
        h
    }

    /// The avoid rule that forbids `url`, if one does.
    pub fn avoided(&self, url: &Url) -> Option<String> {
        self.avoid.as_ref().and_then(|a| a(url))
    }

    /// GET `ask.url` politely. A response of any status is an answer; no
    /// response is a [`NetError`] saying why.
    pub async fn get(&self, ask: &Ask) -> Result<FetchResponse, NetError> {
        let url = &ask.url;
        if let Some(rule) = self.avoided(url) {
            return Err(NetError::Avoided {
                url: url.to_string(),
                rule,
            });
        }
        let mut request = FetchRequest {
            url: url.clone(),
            method: Method::Get,
            referrer: None,
            validators: ask.validators.clone(),
            body: BodyWanted::Always(self.settings.max_body),
            extra_headers: Vec::new(),
            keep_headers: ask.keep_headers,
            public_only: ask.public_only,
        };
        if url.scheme() == "file" {
            return Ok(self
                .within(
                    ask.deadline,
                    self.fetcher.fetch(&request, self.settings.max_body),
                )
                .await??);
        }
        if ask.public_only
            && let Some(refusal) = self.fetcher.address_refusal(url)
        {
            return Err(NetError::AddressRule(refusal.to_string()));
        }
        let site = self.sites.site(&spinneret_core::urls::site_key(url));
        let rules = self
            .robots(&site, url, ask.public_only, ask.deadline)
            .await?;
        if let Some(rule) = rules.forbidding_rule(&path_and_query(url)) {
            return Err(NetError::Robots {
                site: site.key().to_string(),
                url: url.to_string(),
                rule: rule.path.clone(),
            });
        }
        if let Some(hook) = self.hook.get() {
            // A plugin's call: off the runtime's threads' async work.
            let said = tokio::task::block_in_place(|| hook.before(url, Method::Get.as_str()));
            request.extra_headers = said.map_err(NetError::Vetoed)?;
        }
        let mut attempt = 0;
        loop {
            let turn = site.turn(ask.deadline).await?;
            let slot = self.within(ask.deadline, self.slots.acquire()).await?;
            let answer = self
                .within(
                    ask.deadline,
                    self.fetcher.fetch(&request, self.settings.max_body),
                )
                .await?;
            drop((slot, turn));
            attempt += 1;
            let wait = match &answer {
                Ok(r) if is_retryable_status(r.status) => {
                    let asked = r
                        .headers
                        .retry_after
                        .as_deref()
                        .and_then(|v| parse_retry_after(v, SystemTime::now()));
                    if asked.is_some_and(|a| a > self.settings.max_retry_after) {
                        return answer.map_err(NetError::from);
                    }
                    if let Some(after) = asked {
                        site.hold_until(Instant::now() + after);
                    }
                    asked.unwrap_or_else(|| backoff(attempt))
                }
                Err(e) if e.is_retryable() => backoff(attempt),
                _ => return answer.map_err(NetError::from),
            };
            let again = Instant::now() + wait;
            if attempt > self.settings.retries || ask.deadline.is_some_and(|d| again >= d) {
                return answer.map_err(NetError::from);
            }
            tokio::time::sleep_until(again.into()).await;
        }
    }

    /// The robots.txt rules of `url`'s site: as read this run (by anyone,
    /// the crawl included), or read now, in the site's turn.
    pub async fn robots_rules(
        &self,
        url: &Url,
        public_only: bool,
        deadline: Option<Instant>,
    ) -> Result<Arc<RobotsRules>, NetError> {
        let site = self.sites.site(&spinneret_core::urls::site_key(url));
        self.robots(&site, url, public_only, deadline).await
    }

    /// Run `work`, given up at `deadline`.
    async fn within<T>(
        &self,
        deadline: Option<Instant>,
        work: impl std::future::Future<Output = T>,
    ) -> Result<T, NetError> {
        match deadline {
            None => Ok(work.await),
            Some(d) => tokio::time::timeout_at(d.into(), work)
                .await
                .map_err(|_| NetError::GivenUp),
        }
    }

    /// `site`'s robots.txt rules: as read this run (by anyone), or read
    /// now, in its turn; while another caller reads it, wait for that.
    async fn robots(
        &self,
        site: &Arc<Site>,
        url: &Url,
        public_only: bool,
        deadline: Option<Instant>,
    ) -> Result<Arc<RobotsRules>, NetError> {
        loop {
            let changed = site.notified();
            {
                let mut s = site.lock();
                match &s.robots {
                    Robots::Ready(rules) => return Ok(rules.clone()),
                    Robots::OffLimits(why) => return Err(NetError::OffLimits(why.clone())),
                    Robots::Unreachable(why) => return Err(NetError::Unreachable(why.clone())),
                    Robots::Reading => {}
                    Robots::Unknown => {
                        s.robots = Robots::Reading;
                        break;
                    }
                }
            }
            // Another caller reads it: woken when it is done.
            let woken = match deadline {
                Some(d) => tokio::time::timeout_at(d.into(), changed).await.is_ok(),
                None => {
                    changed.await;
                    true
                }
            };
            if !woken {
                return Err(NetError::TooLate(TooLate {
                    site: site.key().to_string(),
                    left: Duration::ZERO,
                }));
            }
        }
        let read = self.read_robots(site, url, public_only, deadline).await;
        let mut s = site.lock();
        let outcome = match read {
            Ok(RobotsFetch::Found { body, .. }) => {
                let rules =
                    RobotsRules::parse(&body, &self.settings.robot_name, self.settings.robots_mode);
                if let Some(d) = rules.crawl_delay {
                    s.gate
                        .apply_crawl_delay(d, self.sites.settings().max_crawl_delay);
                }
                let rules = Arc::new(rules);
                s.robots = Robots::Ready(rules.clone());
                Ok(rules)
            }
            Ok(RobotsFetch::Missing { .. }) => {
                let rules = Arc::new(RobotsRules::default());
                s.robots = Robots::Ready(rules.clone());
                Ok(rules)
            }
            Ok(RobotsFetch::Forbidden { status }) => {
                let why = format!(
                    "robots.txt of {} answered {status}: the whole site is off limits",
                    site.key()
                );
                s.robots = Robots::OffLimits(why.clone());
                Err(NetError::OffLimits(why))
            }
            Ok(RobotsFetch::Unavailable {
                reason,
                unreachable: true,
                ..
            }) => {
                let why = format!("site {} cannot be reached: {reason}", site.key());
                s.robots = Robots::Unreachable(why.clone());
                Err(NetError::Unreachable(why))
            }
            Ok(RobotsFetch::Unavailable { reason, .. }) => {
                let why = format!(
                    "robots.txt of {} could not be read ({reason}); the site is off limits for this run",
                    site.key()
                );
                s.robots = Robots::OffLimits(why.clone());
                Err(NetError::OffLimits(why))
            }
            // The address rule is the caller's, not the site's: another
            // caller may be allowed to read it.
            Ok(RobotsFetch::Refused { reason }) => {
                s.robots = Robots::Unknown;
                Err(NetError::AddressRule(reason))
            }
            Err(e) => {
                s.robots = Robots::Unknown;
                Err(e)
            }
        };
        drop(s);
        site.notify();
        outcome
    }

    /// Read `site`'s robots.txt in its turn, asking again while it is
    /// unavailable and retries are left.
    async fn read_robots(
        &self,
        site: &Arc<Site>,
        url: &Url,
        public_only: bool,
        deadline: Option<Instant>,
    ) -> Result<RobotsFetch, NetError> {
        let Some(robots_url) = spinneret_core::urls::robots_url(url) else {
            return Ok(RobotsFetch::Missing { status: 404 });
        };
        let mut attempt = 0;
        loop {
            let turn = site.turn(deadline).await?;
            let read = self
                .within(
                    deadline,
                    fetch_robots(&self.fetcher, robots_url.clone(), public_only),
                )
                .await?;
            drop(turn);
            attempt += 1;
            let again = Instant::now() + backoff(attempt);
            match read {
                RobotsFetch::Unavailable {
                    retryable: true, ..
                } if attempt <= self.settings.retries && deadline.is_none_or(|d| again < d) => {
                    tokio::time::sleep_until(again.into()).await;
                }
                read => return Ok(read),
            }
        }
    }
}

/// The path and query of `url`, as robots.txt rules match them.
pub fn path_and_query(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}
