//! Running a change detector: one live instance compares batch after batch
//! of snapshots; a call that traps, hangs or overspends fails for that batch
//! only, and the next call gets a fresh instance.

use super::bindings::detector::exports::spinneret::plugin::detector_api::{
    Comparison, Needs, Snapshot,
};
use super::bindings::detector::{ChangeDetector, ChangeDetectorPre};
use super::bindings::host::types as wit;
use super::bindings::since_v0_2_0::detector::exports::spinneret::plugin::detector_api as v2;
use super::bindings::since_v0_2_0::detector::{
    ChangeDetector as Detector2, ChangeDetectorPre as DetectorPre2,
};
use super::bindings::since_v0_3_0::detector::exports::spinneret::plugin::detector_api as v3;
use super::bindings::since_v0_3_0::detector::{
    ChangeDetector as Detector3, ChangeDetectorPre as DetectorPre3,
};
use super::bindings::since_v0_4_0::detector::exports::spinneret::plugin::detector_api as v4;
use super::bindings::since_v0_4_0::detector::{
    ChangeDetector as Detector4, ChangeDetectorPre as DetectorPre4,
};
use super::runner::{Versioned, by_version, same_flags, world};
use super::sandbox::{PluginFailure, Sandbox};

world!(
    ChangeDetector,
    ChangeDetectorPre,
    spinneret_plugin_detector_api
);
world!(Detector2, DetectorPre2, spinneret_plugin_detector_api);
world!(Detector3, DetectorPre3, spinneret_plugin_detector_api);
world!(Detector4, DetectorPre4, spinneret_plugin_detector_api);

/// What one run saw of a URL, for a detector.
pub type DetectorSnapshot = Snapshot;

/// A URL's previous and current snapshots, for a detector.
pub type DetectorComparison = Comparison;

/// What a detector needs in the snapshots beyond the results.
pub type DetectorNeeds = Needs;

/// A change detector ready to run.
pub struct DetectorPlugin {
    runner: Versioned<Detector2, Detector3, Detector4, ChangeDetector>,
    /// What it declared it needs, once asked.
    needs: Option<Needs>,
}

impl DetectorPlugin {
    /// Prepare a detector from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<DetectorPlugin> {
        Ok(DetectorPlugin {
            runner: Versioned::new(sandbox, component)?,
            needs: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.runner.sandbox().name()
    }

    /// Instantiate and configure it: whether it accepts its configuration.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        self.runner.start()
    }

    /// What the detector needs in the snapshots (asked once, then remembered).
    pub fn needs(&mut self) -> Result<Needs, PluginFailure> {
        if let Some(needs) = self.needs {
            return Ok(needs);
        }
        let needs = by_version!(
            &mut self.runner,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let n = r.call("declare", |b, s| {
                    b.spinneret_plugin_detector_api().call_declare(s)
                })?;
                same_flags!(n, old::Needs => Needs: REFERENCES)
            },
            |r| r.call("declare", |b, s| {
                b.spinneret_plugin_detector_api().call_declare(s)
            })?,
        );
        self.needs = Some(needs);
        Ok(needs)
    }

    /// Compare each URL's previous snapshot with its current one. The host
    /// fills in each finding's `source` with the plugin's name.
    pub fn compare(
        &mut self,
        task: &wit::TaskInfo,
        now: i64,
        comparisons: &[Comparison],
    ) -> Result<Vec<wit::Finding>, PluginFailure> {
        let mut findings = by_version!(
            &mut self.runner,
            [v2],
            [v3],
            [v4],
            |r, old| {
                let old_snapshot = |s: &Snapshot| old::Snapshot {
                    outcome: s.outcome.clone(),
                    document: s.document.clone(),
                };
                let comparisons: Vec<old::Comparison> = comparisons
                    .iter()
                    .map(|c| old::Comparison {
                        previous: c.previous.as_ref().map(old_snapshot),
                        current: old_snapshot(&c.current),
                    })
                    .collect();
                r.call("compare", |b, s| {
                    b.spinneret_plugin_detector_api()
                        .call_compare(s, task, now, &comparisons)
                })?
            },
            |r| r.call("compare", |b, s| {
                b.spinneret_plugin_detector_api()
                    .call_compare(s, task, now, comparisons)
            })?,
        );
        for f in &mut findings {
            f.source = self.name().to_string();
        }
        Ok(findings)
    }
}
