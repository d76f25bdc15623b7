//! Running a change detector: one live instance compares batch after batch
//! of snapshots; a call that traps, hangs or overspends fails for that batch
//! only, and the next call gets a fresh instance.

use super::bindings::detector::exports::spinneret::plugin::detector_api::{Comparison, Snapshot};
use super::bindings::detector::{ChangeDetector, ChangeDetectorPre};
use super::bindings::host::types as wit;
use super::runner::{Runner, world};
use super::sandbox::{PluginFailure, Sandbox};

world!(
    ChangeDetector,
    ChangeDetectorPre,
    spinneret_plugin_detector_api
);

/// What one run saw of a URL, for a detector.
pub type DetectorSnapshot = Snapshot;

/// A URL's previous and current snapshots, for a detector.
pub type DetectorComparison = Comparison;

/// A change detector ready to run.
pub struct DetectorPlugin(Runner<ChangeDetector>);

impl DetectorPlugin {
    /// Prepare a detector from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<DetectorPlugin> {
        Runner::new(sandbox, component).map(DetectorPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Compare each URL's previous snapshot with its current one. The host
    /// fills in each finding's `source` with the plugin's name.
    pub fn compare(
        &mut self,
        task: &wit::TaskInfo,
        now: i64,
        comparisons: &[Comparison],
    ) -> Result<Vec<wit::Finding>, PluginFailure> {
        let mut findings = self.0.call("compare", |b, s| {
            b.spinneret_plugin_detector_api()
                .call_compare(s, task, now, comparisons)
        })?;
        for f in &mut findings {
            f.source = self.name().to_string();
        }
        Ok(findings)
    }
}
