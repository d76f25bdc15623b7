//! {name}: a spinneret change detector. It reports URLs that answered
//! more slowly than a threshold.
//!
//! Configuration: `slower_than_ms` (default 2000).

use spinneret_sdk::detector::*;

/// The detector's settings.
pub struct Plugin {
    slower_than_ms: u64,
}

impl Detector for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let slower_than_ms = match config.get("slower_than_ms") {
            None => 2000,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("{name}: `slower_than_ms` must be a whole number, not {v}"))?,
        };
        Ok(Plugin { slower_than_ms })
    }

    /// It reads the results only, so the documents' references need not come.
    fn needs(&self) -> Needs {
        Needs::empty()
    }

    fn compare(
        &mut self,
        _task: &TaskInfo,
        _now: i64,
        _previous: Option<&Snapshot>,
        current: &Snapshot,
    ) -> Vec<Finding> {
        let r = &current.outcome;
        match r.elapsed_ms {
            Some(ms) if ms > self.slower_than_ms => vec![Finding {
                kind: "slow".into(),
                url: r.url.clone(),
                referrer: r.referrer.clone(),
                message: format!("answered in {ms} ms"),
                severity: Severity::Warning,
                source: String::new(),
            }],
            _ => Vec::new(),
        }
    }
}

spinneret_sdk::export_detector!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::fixtures;

    #[test]
    fn flags_slow_urls_only() {
        let mut d = Plugin::configure(serde_json::json!({"slower_than_ms": 100})).unwrap();
        let task = fixtures::task("T", "http://a.example/");
        let mut r = fixtures::result("http://a.example/slow", Category::Ok);
        r.elapsed_ms = Some(250);
        let found = d.compare(&task, 0, None, &fixtures::snapshot(r.clone(), None));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].message, "answered in 250 ms");
        r.elapsed_ms = Some(50);
        assert!(d.compare(&task, 0, None, &fixtures::snapshot(r, None)).is_empty());
    }
}
