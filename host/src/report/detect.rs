//! Change detection: every detector of a task compares, for each URL the
//! task reached, what the previous run saw with what this run saw.

use super::task::TaskData;
use crate::plugin::bindings::host::types as wit;
use crate::plugin::detector::{DetectorPlugin, DetectorSnapshot};
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

/// Run `detector` over a task. A failure for one URL is recorded as a
/// finding and the next URL goes on; a plugin that cannot start at all is
/// returned as the error.
pub fn detect(
    now: i64,
    task: &TaskData,
    detector: &mut DetectorPlugin,
    findings: &mut Vec<wit::Finding>,
) -> Result<(), PluginFailure> {
    let documents: HashMap<&str, &wit::Document> =
        task.documents.iter().map(|d| (d.url.as_str(), d)).collect();
    for ((r, _), previous) in task.results.iter().zip(&task.previous) {
        let previous = previous.as_ref().map(|p| DetectorSnapshot {
            outcome: to_wit_result(p),
            document: None,
        });
        let current = DetectorSnapshot {
            outcome: to_wit_result(r),
            document: documents.get(r.url.as_str()).map(|d| (*d).clone()),
        };
        match detector.compare(&task.info, now, previous.as_ref(), &current) {
            Ok(found) => findings.extend(found),
            Err(f) if f.at_start() => return Err(f),
            Err(f) => {
                tracing::warn!("{}: {f} (comparing {})", task.info.name, r.url);
                findings.push(failure_finding(&f, &r.url));
            }
        }
    }
    Ok(())
}
