//! Per-site politeness: how many requests a site may have in flight and when
//! the next one may start. The crawl engine asks a site's [`SiteGate`] before
//! every request; one slow site only ever holds its own gate. The plugins'
//! fetcher runs outside the engine's loop, on plugin threads: it and the
//! engine keep each site's interval between their requests through
//! [`SiteTurns`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The next start each site has booked, shared by the crawl's loop and the
/// plugins' fetcher, so that a plugin's request and the crawl's own keep
/// the site's interval between them (seed 000: one robot, one pace per
/// site, whoever asks).
#[derive(Debug, Default)]
pub struct SiteTurns {
    next: Mutex<HashMap<String, Instant>>,
}

impl SiteTurns {
    fn next(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.next.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The earliest start a request to `site` may have, if one is booked.
    pub fn booked(&self, site: &str) -> Option<Instant> {
        self.next().get(site).copied()
    }

    /// A request to `site` starts at `at`: the next may start `interval` later.
    pub fn started(&self, site: &str, at: Instant, interval: Duration) {
        let next = at + interval;
        let mut map = self.next();
        match map.get_mut(site) {
            Some(t) if *t >= next => {}
            Some(t) => *t = next,
            None => {
                map.insert(site.to_string(), next);
            }
        }
    }

    /// Take the next turn at `site` for a request made at `now` from outside
    /// the crawl's loop: when it may start (now, or the turn booked), the
    /// turn after it booked `interval` later.
    pub fn take(&self, site: &str, now: Instant, interval: Duration) -> Instant {
        let mut map = self.next();
        let at = map.get(site).copied().filter(|t| *t > now).unwrap_or(now);
        map.insert(site.to_string(), at + interval);
        at
    }
}

/// The politeness state of one site.
#[derive(Debug)]
pub struct SiteGate {
    /// Requests in flight.
    pub active: usize,
    /// The earliest start of the next request (none: any time).
    pub next_start: Option<Instant>,
    /// When the last request started.
    last_start: Option<Instant>,
    max_active: usize,
    interval: Duration,
}

impl SiteGate {
    /// A gate allowing `max_active` requests in flight, started at least `interval` apart.
    pub fn new(max_active: usize, interval: Duration) -> Self {
        SiteGate {
            active: 0,
            next_start: None,
            last_start: None,
            max_active: max_active.max(1),
            interval,
        }
    }

    /// Honour a robots.txt `Crawl-delay`, capped at `cap`: the interval becomes the longer of the two.
    /// A crawl delay also means one request at a time.
    pub fn apply_crawl_delay(&mut self, delay: Duration, cap: Duration) {
        let delay = delay.min(cap);
        if delay > self.interval {
            self.interval = delay;
        }
        if !delay.is_zero() {
            self.max_active = 1;
        }
        // The request that brought the delay (robots.txt) counts as the last one.
        if let Some(last) = self.last_start {
            self.hold_until(last + self.interval);
        }
    }

    /// The interval between request starts in force.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// When a request may start: `Ok(())` now, `Err(Some(t))` at `t`, `Err(None)` when a slot frees.
    pub fn check(&self, now: Instant) -> Result<(), Option<Instant>> {
        if self.active >= self.max_active {
            Err(None)
        } else if let Some(t) = self.next_start.filter(|t| now < *t) {
            Err(Some(t))
        } else {
            Ok(())
        }
    }

    /// Record that a request starts now.
    pub fn start(&mut self, now: Instant) {
        self.active += 1;
        self.last_start = Some(now);
        self.next_start = Some(now + self.interval);
    }

    /// Record that a request finished.
    pub fn finish(&mut self) {
        self.active = self.active.saturating_sub(1);
    }

    /// Push the next start back (after 429/503 with Retry-After, the whole site waits).
    pub fn hold_until(&mut self, t: Instant) {
        if self.next_start.is_none_or(|n| t > n) {
            self.next_start = Some(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crawl_and_the_plugins_take_turns_at_a_site() {
        let now = Instant::now();
        let second = Duration::from_secs(1);
        let turns = SiteTurns::default();
        assert_eq!(turns.booked("http://a.example"), None);
        // A plugin's request goes at once and books the next turn.
        assert_eq!(turns.take("http://a.example", now, second), now);
        assert_eq!(turns.booked("http://a.example"), Some(now + second));
        // The crawl's own request starts later still: the plugin's next
        // turn is after it.
        turns.started("http://a.example", now + second, 2 * second);
        assert_eq!(
            turns.take("http://a.example", now, second),
            now + 3 * second
        );
        // A start that frees the site earlier than booked does not undo a booking.
        turns.started("http://a.example", now, second);
        assert_eq!(turns.booked("http://a.example"), Some(now + 4 * second));
        // Other sites are apart.
        assert_eq!(turns.take("http://b.example", now, second), now);
    }

    #[test]
    fn connections_and_interval() {
        let now = Instant::now();
        let mut g = SiteGate::new(2, Duration::from_millis(100));
        assert_eq!(g.check(now), Ok(()));
        g.start(now);
        assert_eq!(g.check(now), Err(Some(now + Duration::from_millis(100))));
        let later = now + Duration::from_millis(100);
        assert_eq!(g.check(later), Ok(()));
        g.start(later);
        assert_eq!(g.check(later + Duration::from_secs(1)), Err(None));
        g.finish();
        assert_eq!(g.check(later + Duration::from_secs(1)), Ok(()));
    }

    #[test]
    fn crawl_delay_counts_from_the_request_that_brought_it() {
        let now = Instant::now();
        let mut g = SiteGate::new(2, Duration::ZERO);
        g.start(now);
        g.finish();
        g.apply_crawl_delay(Duration::from_secs(2), Duration::from_secs(30));
        assert_eq!(
            g.check(now + Duration::from_secs(1)),
            Err(Some(now + Duration::from_secs(2)))
        );
    }

    #[test]
    fn crawl_delay_is_capped_and_serialises() {
        let mut g = SiteGate::new(4, Duration::from_millis(10));
        g.apply_crawl_delay(Duration::from_secs(100), Duration::from_secs(5));
        assert_eq!(g.interval(), Duration::from_secs(5));
        let now = Instant::now() + Duration::from_secs(10);
        g.start(now);
        assert_eq!(g.check(now + Duration::from_secs(6)), Err(None));
    }
}
