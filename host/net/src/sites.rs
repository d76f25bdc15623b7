//! Each site's state for a whole run, one per site whoever asks: its
//! politeness gate (requests in flight, the interval between their starts,
//! `Crawl-delay`, a server's `Retry-After`) and its robots.txt reading.
//!
//! The crawl's scheduler asks a site's gate without waiting
//! ([`Site::try_start`]) and is woken by its own timers; a stage without a
//! scheduler of its own (the collector, a query, a plugin's `http`) waits
//! its turn ([`Site::turn`]), bounded by its deadline. Both hold the same
//! gate, so a plugin's request during a crawl takes one of the site's
//! connections and keeps its interval like any other, and robots.txt is
//! read once per site, by whoever needs it first: the others wait for that
//! reading ([`Robots::Reading`]) instead of asking again.

use crate::fetch::politeness::SiteGate;
use crate::robots::RobotsRules;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// A site's robots.txt as read this run.
#[derive(Clone, Debug)]
pub enum Robots {
    /// Nobody has read it yet.
    Unknown,
    /// Someone is reading it: wait for [`Site::changed`].
    Reading,
    /// Its rules (none when it has no robots.txt).
    Ready(Arc<RobotsRules>),
    /// The whole site is off limits (robots.txt answered 401 or 403, or
    /// could not be read): why.
    OffLimits(String),
    /// The site cannot be reached: why.
    Unreachable(String),
}

/// What is shared of a site, behind its lock.
#[derive(Debug)]
pub struct SiteState {
    /// When its requests may start.
    pub gate: SiteGate,
    /// Its robots.txt.
    pub robots: Robots,
}

/// One site (scheme, host and port).
#[derive(Debug)]
pub struct Site {
    key: String,
    state: Mutex<SiteState>,
    changed: Notify,
}

/// The site's turn, held while a request is in flight: its end frees the
/// site's connection and wakes those waiting.
#[derive(Debug)]
#[must_use = "the turn ends when it is dropped"]
pub struct Turn {
    site: Arc<Site>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.site.finished();
    }
}

/// Why a turn was not had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{site}'s next turn comes after the time left for this request ({left:?})")]
pub struct TooLate {
    /// The site.
    pub site: String,
    /// The time that was left.
    pub left: Duration,
}

impl Site {
    /// The site's key (`scheme://host:port`, as [`spinneret_core::urls::site_key`]).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Its state, locked (briefly: no waiting while it is held).
    pub fn lock(&self) -> MutexGuard<'_, SiteState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wake everyone waiting on the site: a connection freed, robots.txt read.
    pub fn notify(&self) {
        self.changed.notify_waiters();
    }

    /// Start a request now if the gate allows: `Err(Some(t))` when it may
    /// at `t`, `Err(None)` when a connection must free first.
    pub fn try_start(&self, now: Instant) -> Result<(), Option<Instant>> {
        let mut s = self.lock();
        s.gate.check(now)?;
        s.gate.start(now);
        Ok(())
    }

    /// A request started with [`Site::try_start`] is answered.
    pub fn finished(&self) {
        self.lock().gate.finish();
        self.notify();
    }

    /// The server asked the site to wait until `at` (`Retry-After`).
    pub fn hold_until(&self, at: Instant) {
        self.lock().gate.hold_until(at);
    }

    /// Wait for the site's turn (a connection free and the interval
    /// passed), at most until `deadline`: refused at once when the turn
    /// would come after it.
    pub async fn turn(self: &Arc<Self>, deadline: Option<Instant>) -> Result<Turn, TooLate> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let now = Instant::now();
            let too_late = |at: Instant| TooLate {
                site: self.key.clone(),
                left: deadline.map_or(Duration::ZERO, |d| d.saturating_duration_since(at)),
            };
            match self.try_start(now) {
                Ok(()) => {
                    return Ok(Turn { site: self.clone() });
                }
                Err(Some(at)) => {
                    if deadline.is_some_and(|d| at >= d) {
                        return Err(too_late(now));
                    }
                    tokio::time::sleep_until(at.into()).await;
                }
                Err(None) => match deadline {
                    Some(d) => {
                        if tokio::time::timeout_at(d.into(), changed).await.is_err() {
                            return Err(too_late(Instant::now()));
                        }
                    }
                    None => changed.await,
                },
            }
        }
    }

    /// A future woken the next time something changes on the site
    /// (robots.txt read, a connection freed): made before the state is
    /// looked at, so that no change between the look and the wait is lost.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }
}

/// The gates' settings.
#[derive(Clone, Debug)]
pub struct GateSettings {
    /// Requests at once to one site.
    pub per_site_connections: usize,
    /// The least time between two requests' starts at one site.
    pub per_site_delay: Duration,
    /// The longest `Crawl-delay` honoured.
    pub max_crawl_delay: Duration,
}

/// Every site of a run.
#[derive(Debug)]
pub struct Sites {
    settings: GateSettings,
    sites: Mutex<HashMap<String, Arc<Site>>>,
}

impl Sites {
    /// No site yet.
    pub fn new(settings: GateSettings) -> Arc<Sites> {
        Arc::new(Sites {
            settings,
            sites: Mutex::default(),
        })
    }

    /// The gates' settings.
    pub fn settings(&self) -> &GateSettings {
        &self.settings
    }

    /// The site `key`, met now if it is new. A site of local files
    /// (`file://`) has eight connections, no interval and no robots.txt.
    pub fn site(&self, key: &str) -> Arc<Site> {
        let mut sites = self.sites.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = sites.get(key) {
            return s.clone();
        }
        let p = &self.settings;
        let local = key.starts_with("file:");
        let (gate, robots) = match local {
            true => (
                SiteGate::new(8, Duration::ZERO),
                Robots::Ready(Arc::new(RobotsRules::default())),
            ),
            false => (
                SiteGate::new(p.per_site_connections, p.per_site_delay),
                Robots::Unknown,
            ),
        };
        let site = Arc::new(Site {
            key: key.to_string(),
            state: Mutex::new(SiteState { gate, robots }),
            changed: Notify::new(),
        });
        sites.insert(key.to_string(), site.clone());
        site
    }

    /// Honour `site`'s `Crawl-delay` (capped at `max_crawl_delay`).
    pub fn apply_crawl_delay(&self, site: &Site, delay: Duration) {
        site.lock()
            .gate
            .apply_crawl_delay(delay, self.settings.max_crawl_delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(connections: usize, delay_ms: u64) -> Arc<Sites> {
        Sites::new(GateSettings {
            per_site_connections: connections,
            per_site_delay: Duration::from_millis(delay_ms),
            max_crawl_delay: Duration::from_secs(30),
        })
    }

    #[tokio::test]
    async fn one_site_is_one_state_whoever_asks() {
        let s = sites(1, 0);
        let a = s.site("http://a.test:80");
        assert!(Arc::ptr_eq(&a, &s.site("http://a.test:80")));
        assert!(!Arc::ptr_eq(&a, &s.site("http://b.test:80")));
        // The scheduler's start holds the one connection the waiter wants.
        a.try_start(Instant::now()).unwrap();
        let deadline = Instant::now() + Duration::from_millis(50);
        let refused = a.turn(Some(deadline)).await.unwrap_err();
        assert_eq!(refused.site, "http://a.test:80");
        a.finished();
        let turn = a.turn(Some(Instant::now() + Duration::from_secs(5))).await;
        assert!(turn.is_ok());
        assert_eq!(a.try_start(Instant::now()), Err(None));
        drop(turn);
        assert_eq!(a.try_start(Instant::now()), Ok(()));
    }

    #[tokio::test]
    async fn a_waiter_is_woken_when_a_connection_frees() {
        let s = sites(1, 0);
        let a = s.site("http://a.test:80");
        let held = a.turn(None).await.unwrap();
        let waiter = {
            let a = a.clone();
            tokio::spawn(async move { a.turn(None).await.map(drop) })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        drop(held);
        waiter.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_turn_that_comes_after_the_deadline_is_refused_at_once() {
        let s = sites(2, 10_000);
        let a = s.site("http://a.test:80");
        drop(a.turn(None).await.unwrap());
        let asked = Instant::now();
        let refused = a
            .turn(Some(asked + Duration::from_secs(1)))
            .await
            .unwrap_err();
        assert_eq!(refused.site, "http://a.test:80");
    }
}
