//! The crawl's side of the plugins' `http` capability: a plugin's request
//! goes through the crawler's own fetcher (polite headers, body cap,
//! decompression), after the avoid rules and the site's robots.txt (read
//! once per run and site, shared by every plugin instance) allow it, and
//! waits its turn at the site like any other request.

use super::CrawlSettings;
use crate::fetch::robots::{RobotsFetch, fetch_robots};
use crate::fetch::{BodyWanted, FetchRequest, FetchResponse, Fetcher, Method, Validators};
use crate::policy::robots::{RobotsMode, RobotsRules};
use crate::policy::rules::{PrefixRules, RuleAction};
use spinneret_plugin_host::capabilities::{HostHttp, HttpAnswer};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use url::Url;

/// The host's polite fetcher, lent to plugins whose grants name hosts.
pub struct PoliteHttp {
    fetcher: Fetcher,
    handle: tokio::runtime::Handle,
    robot_name: String,
    user_agent: String,
    from: Option<String>,
    robots_mode: RobotsMode,
    max_body: u64,
    rules: PrefixRules,
    delay: Duration,
    /// Requests in flight to one site at most (`per_site_connections`).
    per_site: usize,
    /// When each site may be asked next.
    next: Mutex<HashMap<String, Instant>>,
    /// Each site's robots.txt, once read.
    robots: Mutex<HashMap<String, Arc<RobotsRules>>>,
}

impl PoliteHttp {
    /// The fetcher of a crawl with these settings, on `handle`.
    pub fn new(
        settings: &CrawlSettings,
        handle: tokio::runtime::Handle,
    ) -> Result<PoliteHttp, crate::CrawlError> {
        let (rules, _) =
            crate::policy::load_rules(&settings.rule_files, std::time::SystemTime::now())?;
        // A plugin's requests never carry the user's `[[request]]` headers,
        // credentials and cookies: those are for the crawl's own requests.
        let fetch = crate::fetch::FetchSettings {
            requests: Vec::new(),
            cookies: None,
            ..settings.fetch.clone()
        };
        Ok(PoliteHttp {
            fetcher: Fetcher::new(&fetch)?,
            handle,
            robot_name: settings.robot_name.clone(),
            user_agent: settings.fetch.user_agent.clone(),
            from: settings.fetch.from.clone(),
            robots_mode: settings.robots_rules,
            max_body: settings.fetch.max_body,
            rules,
            delay: settings.per_site_delay,
            per_site: settings.per_site_connections.max(1),
            next: Mutex::default(),
            robots: Mutex::default(),
        })
    }

    /// Wait until `site` may be asked again; refused at once when that
    /// comes after `deadline` (the caller's time is up by then).
    fn wait_turn(&self, site: &str, deadline: Option<Instant>) -> Result<(), String> {
        let now = Instant::now();
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let at = next.get(site).copied().filter(|t| *t > now).unwrap_or(now);
            if let Some(d) = deadline.filter(|d| at >= *d) {
                return Err(format!(
                    "{site}'s next turn comes in {:?}, after the time left for this call ({:?})",
                    at - now,
                    d.saturating_duration_since(now)
                ));
            }
            next.insert(site.to_string(), at + self.delay);
            at
        };
        if at > now {
            std::thread::sleep(at - now);
        }
        Ok(())
    }

    /// Run `work` on the crawl's runtime, given up at `deadline`.
    fn block_on<T>(
        &self,
        deadline: Option<Instant>,
        work: impl std::future::Future<Output = T>,
    ) -> Result<T, String> {
        match deadline {
            None => Ok(self.handle.block_on(work)),
            Some(d) => self
                .handle
                .block_on(async { tokio::time::timeout_at(d.into(), work).await })
                .map_err(|_| "given up: the caller's time ran out while it was fetched".into()),
        }
    }

    /// The robots.txt rules of `url`'s site, read on first use. A site
    /// whose robots.txt forbids everything or cannot be read is refused
    /// (and asked again next time).
    fn robots(
        &self,
        url: &Url,
        site: &str,
        public_only: bool,
        deadline: Option<Instant>,
    ) -> Result<Arc<RobotsRules>, String> {
        let known = self.robots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rules) = known.get(site) {
            return Ok(rules.clone());
        }
        drop(known);
        let rules = match spinneret_core::urls::robots_url(url) {
            Some(r) => {
                match self.block_on(deadline, fetch_robots(&self.fetcher, r, public_only))? {
                    RobotsFetch::Found { body, .. } => {
                        RobotsRules::parse(&body, &self.robot_name, self.robots_mode)
                    }
                    RobotsFetch::Missing { .. } => RobotsRules::default(),
                    RobotsFetch::Forbidden { status } => {
                        return Err(format!(
                            "robots.txt of {site} answered {status}: the site is off limits"
                        ));
                    }
                    RobotsFetch::Refused { reason } => return Err(reason),
                    RobotsFetch::Unavailable { reason, .. } => {
                        return Err(format!("robots.txt of {site} could not be read ({reason})"));
                    }
                }
            }
            None => RobotsRules::default(),
        };
        let rules = Arc::new(rules);
        self.robots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(site.to_string(), rules.clone());
        Ok(rules)
    }
}

impl PoliteHttp {
    /// GET `url` politely: refused by an avoid rule or the site's
    /// robots.txt, else after the site's turn; conditional when
    /// `validators` are given, with every response header kept when
    /// `keep_headers` (for an archive of the exchange), and connecting only
    /// to public addresses when `public_only` (a URL a page from elsewhere
    /// led to: its robots.txt is asked the same way), and given up at
    /// `deadline` if one is set. A response of any status is an answer; no
    /// response is an error saying why.
    pub fn fetch(
        &self,
        url: &Url,
        validators: Option<Validators>,
        keep_headers: bool,
        public_only: bool,
        deadline: Option<Instant>,
    ) -> Result<FetchResponse, String> {
        if let Some(rule) = self.rules.lookup(url.as_str())
            && rule.action == RuleAction::Avoid
        {
            return Err(format!(
                "the avoid-file entry `{}` forbids {url}",
                rule.prefix
            ));
        }
        let site = spinneret_core::urls::site_key(url);
        if public_only && let Some(refusal) = self.fetcher.address_refusal(url) {
            return Err(refusal.to_string());
        }
        if !self.robots(url, &site, public_only, deadline)?.allows(url) {
            return Err(format!("robots.txt of {site} disallows {url}"));
        }
        self.wait_turn(&site, deadline)?;
        let req = FetchRequest {
            url: url.clone(),
            method: Method::Get,
            referrer: None,
            validators,
            body: BodyWanted::Always(self.max_body),
            extra_headers: Vec::new(),
            keep_headers,
            public_only,
        };
        self.block_on(deadline, self.fetcher.fetch(&req, self.max_body))?
            .map_err(|e| e.to_string())
    }

    /// How many requests a caller running several at once may have in
    /// flight to one site (the settings' `per_site_connections`).
    pub fn per_site_connections(&self) -> usize {
        self.per_site
    }

    /// The headers every request of this fetcher carries besides those of
    /// the HTTP layer: `User-Agent` and `From` (when set).
    pub fn identity_headers(&self) -> Vec<(String, String)> {
        let mut h = vec![("User-Agent".to_string(), self.user_agent.clone())];
        if let Some(from) = &self.from {
            h.push(("From".to_string(), from.clone()));
        }
        h
    }
}

impl HostHttp for PoliteHttp {
    fn get(&self, url: &Url, deadline: Instant) -> Result<HttpAnswer, String> {
        let resp = self.fetch(url, None, false, false, Some(deadline))?;
        let body = resp.body.unwrap_or_default();
        Ok(HttpAnswer {
            status: resp.status,
            content_type: resp.headers.content_type,
            location: resp.headers.location,
            truncated: body.truncated,
            body: body.bytes.into(),
        })
    }
}
