//! How long plugin calls take: every call through a sandbox is timed into a
//! per-process histogram keyed by plugin and call, so that the cost of a hook
//! can be read after a run (`spinneret -v crawl` logs it; the benchmark
//! prints it). The histogram has logarithmic buckets 2% wide, so memory is
//! constant however many calls a run makes and the median it reports is
//! within 2% of the true one.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// Bucket width: each bucket's upper bound is this much above its lower.
const RATIO: f64 = 1.02;
/// Buckets up to about 1000 s (1 ns × 1.02^1400).
const BUCKETS: usize = 1400;

/// The calls of one plugin function.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    calls: u64,
    total: Duration,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            counts: vec![0; BUCKETS],
            calls: 0,
            total: Duration::ZERO,
        }
    }
}

impl Histogram {
    fn bucket(d: Duration) -> usize {
        let ns = d.as_nanos().max(1) as f64;
        ((ns.ln() / RATIO.ln()) as usize).min(BUCKETS - 1)
    }

    /// Count one call that took `d`.
    pub fn record(&mut self, d: Duration) {
        self.counts[Self::bucket(d)] += 1;
        self.calls += 1;
        self.total += d;
    }

    /// How many calls were counted.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// The time of all calls together.
    pub fn total(&self) -> Duration {
        self.total
    }

    /// The `q` quantile (0.5 for the median), as the middle of its bucket.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.calls == 0 {
            return Duration::ZERO;
        }
        let rank = ((self.calls as f64 * q).ceil() as u64).clamp(1, self.calls);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Duration::from_nanos(RATIO.powf(i as f64 + 0.5) as u64);
            }
        }
        Duration::ZERO
    }
}

/// Plugin → call → histogram.
type Calls = BTreeMap<String, BTreeMap<String, Histogram>>;

static CALLS: Mutex<Calls> = Mutex::new(BTreeMap::new());

/// Count a call of `plugin`'s `call` that took `d`.
pub fn record(plugin: &str, call: &str, d: Duration) {
    let mut calls = CALLS.lock().unwrap_or_else(|p| p.into_inner());
    // Looked up by reference: no allocation once a call has been seen.
    let by_call = match calls.get_mut(plugin) {
        Some(c) => c,
        None => calls.entry(plugin.to_string()).or_default(),
    };
    match by_call.get_mut(call) {
        Some(h) => h.record(d),
        None => by_call.entry(call.to_string()).or_default().record(d),
    }
}

/// Every (plugin, call) timed so far in this process, in name order.
pub fn snapshot() -> Vec<(String, String, Histogram)> {
    let calls = CALLS.lock().unwrap_or_else(|p| p.into_inner());
    calls
        .iter()
        .flat_map(|(p, by_call)| {
            by_call
                .iter()
                .map(move |(c, h)| (p.clone(), c.clone(), h.clone()))
        })
        .collect()
}

/// One line per (plugin, call): calls, median, 99th percentile and total.
pub fn table() -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (plugin, call, h) in snapshot() {
        let _ = writeln!(
            out,
            "plugin {plugin} {call}: {} calls, median {:.1} µs, p99 {:.1} µs, total {:.1} ms",
            h.calls(),
            h.quantile(0.5).as_secs_f64() * 1e6,
            h.quantile(0.99).as_secs_f64() * 1e6,
            h.total().as_secs_f64() * 1e3
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_bucket() {
        let mut h = Histogram::default();
        for us in 1..=100u64 {
            h.record(Duration::from_micros(us));
        }
        let median = h.quantile(0.5).as_secs_f64() * 1e6;
        assert!((49.0..=51.5).contains(&median), "{median}");
        let p99 = h.quantile(0.99).as_secs_f64() * 1e6;
        assert!((98.0..=101.0).contains(&p99), "{p99}");
        assert_eq!(h.calls(), 100);
        assert_eq!(h.total(), Duration::from_micros(5050));
    }

    #[test]
    fn an_empty_histogram_has_no_quantile() {
        assert_eq!(Histogram::default().quantile(0.5), Duration::ZERO);
    }
}
