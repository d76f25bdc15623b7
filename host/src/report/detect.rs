//! Change detection: every detector of a task compares, for each URL the
//! task reached, what the previous run saw with what this run saw.

use super::task::TaskData;
use crate::plugin::bindings::host::types as wit;
use crate::plugin::detector::{DetectorComparison, DetectorPlugin, DetectorSnapshot};
use crate::plugin::reporter::to_wit_result;
use crate::plugin::sandbox::PluginFailure;
use std::collections::HashMap;

/// The finding that records a plugin's failure against `url`.
pub fn failure_finding(f: &PluginFailure, url: &str) -> wit::Finding {
    wit::Finding {
        kind: "plugin-failure".into(),
        url: url.to_string(),
        referrer: None,
        message: f.to_string(),
        severity: wit::Severity::Error,
        source: f.plugin.clone(),
    }
}

/// How many URLs a detector is asked about in one call.
const BATCH: usize = 256;

/// Run `detector` over a task, in batches. When a batch fails, its URLs are
/// asked about again one at a time, so a failure is recorded as a finding
/// against the URL that caused it and the other URLs' findings are kept; a
/// plugin that cannot start at all is returned as the error.
pub fn detect(
    now: i64,
    task: &TaskData,
    detector: &mut DetectorPlugin,
    findings: &mut Vec<wit::Finding>,
) -> Result<(), PluginFailure> {
    let documents: HashMap<&str, &wit::Document> =
        task.documents.iter().map(|d| (d.url.as_str(), d)).collect();
    let pairs: Vec<_> = task.results.iter().zip(&task.previous).collect();
    for batch in pairs.chunks(BATCH) {
        let comparisons: Vec<DetectorComparison> = batch
            .iter()
            .map(|((r, _), previous)| DetectorComparison {
                previous: previous.as_ref().map(|p| DetectorSnapshot {
                    outcome: to_wit_result(p),
                    document: None,
                }),
                current: DetectorSnapshot {
                    outcome: to_wit_result(r),
                    document: documents.get(r.url.as_str()).map(|d| (*d).clone()),
                },
            })
            .collect();
        if compare(detector, task, now, &comparisons, findings)?.is_none() {
            continue;
        }
        for c in &comparisons {
            let one = std::slice::from_ref(c);
            if let Some(f) = compare(detector, task, now, one, findings)? {
                let url = &c.current.outcome.url;
                tracing::warn!("{}: {f} (comparing {url})", task.info.name);
                findings.push(failure_finding(&f, url));
            }
        }
    }
    Ok(())
}

/// Ask `detector` to compare `comparisons`, keeping what it finds; its
/// failure is the answer (`Ok(Some)`), unless it cannot start at all (the
/// error).
fn compare(
    detector: &mut DetectorPlugin,
    task: &TaskData,
    now: i64,
    comparisons: &[DetectorComparison],
    findings: &mut Vec<wit::Finding>,
) -> Result<Option<PluginFailure>, PluginFailure> {
    match detector.compare(&task.info, now, comparisons) {
        Ok(found) => {
            findings.extend(found);
            Ok(None)
        }
        Err(f) if f.at_start() => Err(f),
        Err(f) => Ok(Some(f)),
    }
}
