//! Running a change detector: one live instance compares snapshot after
//! snapshot; a call that traps, hangs or overspends fails for that URL only,
//! and the next call gets a fresh instance.

use super::bindings::detector::exports::spinneret::plugin::detector_api::Snapshot;
use super::bindings::detector::{ChangeDetector, ChangeDetectorPre};
use super::bindings::host::types as wit;
use super::sandbox::{PluginFailure, Sandbox};
use super::state::PluginState;
use wasmtime::Store;
use wasmtime::component::HasSelf;

/// A change detector ready to run.
pub struct DetectorPlugin {
    sandbox: Sandbox,
    pre: ChangeDetectorPre<PluginState>,
    live: Option<(Store<PluginState>, ChangeDetector)>,
}

/// What one run saw of a URL, for a detector.
pub type DetectorSnapshot = Snapshot;

impl DetectorPlugin {
    /// Prepare a detector from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<DetectorPlugin> {
        let mut linker = sandbox.linker()?;
        ChangeDetector::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = ChangeDetectorPre::new(linker.instantiate_pre(component)?)?;
        Ok(DetectorPlugin {
            sandbox,
            pre,
            live: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    /// Instantiate and configure, unless an instance is live.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        if self.live.is_some() {
            return Ok(());
        }
        let sb = &self.sandbox;
        let mut store = sb.store(None);
        let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
        sb.call(&mut store, "configure", |s| {
            bindings
                .spinneret_plugin_detector_api()
                .call_configure(s, sb.config())
        })?
        .map_err(|e| sb.failed("configure", e.message))?;
        self.live = Some((store, bindings));
        Ok(())
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
        self.start()?;
        let (store, bindings) = self.live.as_mut().expect("started above");
        let outcome = self.sandbox.call(store, "compare", |s| {
            bindings
                .spinneret_plugin_detector_api()
                .call_compare(s, task, now, previous, current)
        });
        match outcome {
            Ok(mut findings) => {
                for f in &mut findings {
                    f.source = self.sandbox.name().to_string();
                }
                Ok(findings)
            }
            Err(e) => {
                // The instance may be in any state after a trap: start afresh.
                self.live = None;
                Err(e)
            }
        }
    }
}
