//! Per-site politeness: how many requests a site may have in flight and when
//! the next one may start. The crawl engine asks a site's [`SiteGate`] before
//! every request; one slow site only ever holds its own gate.

use std::time::{Duration, Instant};

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
