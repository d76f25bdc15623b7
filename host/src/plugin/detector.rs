//! Running a change detector: one live instance compares snapshot after
//! snapshot; a call that traps, hangs or overspends fails for that URL only,
//! and the next call gets a fresh instance.

use super::bindings::detector::exports::spinneret::plugin::detector_api::Snapshot;
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

    /// Compare a URL's previous snapshot with its current one. The host
    /// fills in each finding's `source` with the plugin's name.
    pub fn compare(
        &mut self,
        task: &wit::TaskInfo,
        now: i64,
        previous: Option<&Snapshot>,
        current: &Snapshot,
    ) -> Result<Vec<wit::Finding>, PluginFailure> {
        let mut findings = self.0.call("compare", |b, s| {
            b.spinneret_plugin_detector_api()
                .call_compare(s, task, now, previous, current)
        })?;
        for f in &mut findings {
            f.source = self.name().to_string();
        }
        Ok(findings)
    }
}
