//! Loading the plugins a run uses: each `[[plugin]]` source read and
//! compiled once, its world checked, and its key-value space read from the
//! store.

use crate::config::{PluginConfig, PluginSource};
use crate::plugin::detector::DetectorPlugin;
use crate::plugin::engine::PluginEngine;
use crate::plugin::identify::{PluginKind, identify};
use crate::plugin::reporter::ReporterPlugin;
use crate::plugin::sandbox::{PluginFailure, Sandbox};
use crate::plugin::state::{HostFetch, KvSpace};
use crate::store::Store;
use std::collections::HashMap;
use std::sync::Arc;

/// A loaded plugin of a kind the report stage runs.
pub enum Loaded {
    /// A change detector (kept live across the run's tasks).
    Detector(Box<DetectorPlugin>),
    /// A reporter (a fresh instance per task).
    Reporter(Box<ReporterPlugin>),
}

/// The plugins of one run, each loaded once, by `[[plugin]]` name.
pub struct Plugins {
    engine: Arc<PluginEngine>,
    fetch: Option<HostFetch>,
    loaded: HashMap<String, Result<Loaded, PluginFailure>>,
    kv: Vec<(String, KvSpace)>,
}

/// The component bytes of a plugin source.
pub fn source_bytes(source: &PluginSource) -> Result<Vec<u8>, String> {
    match source {
        PluginSource::Builtin(name) => crate::plugin::builtin::builtin(name)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                format!(
                    "no built-in plugin `{name}`; the built-ins are {}",
                    crate::plugin::builtin::names()
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
        PluginSource::File(path) => {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
    }
}

impl Plugins {
    /// No plugins loaded yet.
    pub fn new(fetch: Option<HostFetch>) -> anyhow::Result<Plugins> {
        Ok(Plugins {
            engine: Arc::new(PluginEngine::new()?),
            fetch,
            loaded: HashMap::new(),
            kv: Vec::new(),
        })
    }

    /// The plugin configured as `p`, loaded on first use.
    pub fn get(&mut self, p: &PluginConfig, store: &Store) -> &mut Result<Loaded, PluginFailure> {
        if !self.loaded.contains_key(&p.name) {
            let loaded = self.load(p, store);
            self.loaded.insert(p.name.clone(), loaded);
        }
        self.loaded.get_mut(&p.name).expect("inserted above")
    }

    fn load(&mut self, p: &PluginConfig, store: &Store) -> Result<Loaded, PluginFailure> {
        let fail = |reason: String| PluginFailure {
            plugin: p.name.clone(),
            call: "load".into(),
            reason,
        };
        let bytes = source_bytes(&p.source).map_err(fail)?;
        let component = self
            .engine
            .compile(&bytes)
            .map_err(|e| fail(format!("not a valid WebAssembly component: {e:#}")))?;
        let id = identify(&self.engine, &component).map_err(|e| fail(e.to_string()))?;
        let kv = KvSpace::with(
            store
                .load_kv(&p.name)
                .map_err(|e| fail(format!("cannot read its key-value space: {e}")))?,
        );
        self.kv.push((p.name.clone(), kv.clone()));
        let sandbox = Sandbox::new(
            &p.name,
            self.engine.clone(),
            p.config.clone(),
            p.grants.clone(),
            self.fetch.clone(),
            kv,
        );
        let linked = |e: anyhow::Error| fail(format!("cannot be linked: {e:#}"));
        match id.kind {
            PluginKind::Reporter => ReporterPlugin::new(sandbox, &component)
                .map(|r| Loaded::Reporter(Box::new(r)))
                .map_err(linked),
            PluginKind::ChangeDetector => DetectorPlugin::new(sandbox, &component)
                .map(|d| Loaded::Detector(Box::new(d)))
                .map_err(linked),
            other => Err(fail(format!(
                "it implements the `{}` world, which `spinneret crawl` does not run; \
                 crawl configurations take reporters and change detectors",
                other.world()
            ))),
        }
    }

    /// Store every key-value space a plugin changed.
    pub fn save_kv(&self, store: &Store) -> Vec<PluginFailure> {
        let mut failures = Vec::new();
        for (name, kv) in &self.kv {
            if let Some(entries) = kv.changed()
                && let Err(e) = store.save_kv(name, &entries)
            {
                failures.push(PluginFailure {
                    plugin: name.clone(),
                    call: "kv".into(),
                    reason: format!("its key-value space could not be stored: {e}"),
                });
            }
        }
        failures
    }
}
