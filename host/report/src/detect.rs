//! Change detection: every detector of a task compares, for each URL the
//! task reached, what the previous run saw with what this run saw, batch
//! by batch.

use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::detector::{DetectorComparison, DetectorPlugin};
use spinneret_plugin_host::sandbox::PluginFailure;

/// The kind of the finding that records a plugin's failure.
pub const FAILURE_KIND: &str = "plugin-failure";

/// The finding that records a plugin's failure against `url`.
pub fn failure_finding(f: &PluginFailure, url: &str) -> wit::Finding {
    wit::Finding {
        kind: FAILURE_KIND.into(),
        url: url.to_string(),
        referrer: None,
        message: f.to_string(),
        severity: wit::Severity::Error,
        source: f.plugin.clone(),
    }
}

/// Run `detector` over one batch of a task's comparisons. When the batch
/// fails, its URLs are asked about again one at a time, so a failure is
/// recorded as a finding against the URL that caused it and the other URLs'
/// findings are kept; a plugin that cannot start at all is returned as the
/// error.
pub fn detect(
    now: i64,
    task: &wit::TaskInfo,
    comparisons: &[DetectorComparison],
    detector: &mut DetectorPlugin,
    findings: &mut Vec<wit::Finding>,
) -> Result<(), PluginFailure> {
    if compare(detector, task, now, comparisons, findings)?.is_none() {
        return Ok(());
    }
    for c in comparisons {
        let one = std::slice::from_ref(c);
        if let Some(f) = compare(detector, task, now, one, findings)? {
            let url = &c.current.outcome.url;
            tracing::warn!("{}: {f} (comparing {url})", task.name);
            findings.push(failure_finding(&f, url));
        }
    }
    Ok(())
}

/// Ask `detector` to compare `comparisons`, keeping what it finds; its
/// failure is the answer (`Ok(Some)`), unless it cannot start at all (the
/// error).
fn compare(
    detector: &mut DetectorPlugin,
    task: &wit::TaskInfo,
    now: i64,
    comparisons: &[DetectorComparison],
    findings: &mut Vec<wit::Finding>,
) -> Result<Option<PluginFailure>, PluginFailure> {
    match detector.compare(task, now, comparisons) {
        Ok(found) => {
            findings.extend(found);
            Ok(None)
        }
        Err(f) if f.at_start() => Err(f),
        Err(f) => Ok(Some(f)),
    }
}
