//! Loading the plugins a run uses: each `[[plugin]]` source read and
//! compiled once, its world checked, and its key-value space read from the
//! store.

use crate::config::PluginConfig;
use crate::plugin::detector::DetectorPlugin;
use crate::plugin::engine::PluginEngine;
use crate::plugin::identify::PluginKind;
use crate::plugin::load::{Prepared, link_failure, prepare};
use crate::plugin::reporter::ReporterPlugin;
use crate::plugin::sandbox::PluginFailure;
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
    /// A fetch hook, parser or policy: it ran during the crawl.
    CrawlHook,
}

/// The plugins of one run, each loaded once, by `[[plugin]]` name.
pub struct Plugins {
    engine: Arc<PluginEngine>,
    fetch: Option<HostFetch>,
    loaded: HashMap<String, Result<Loaded, PluginFailure>>,
    kv: Vec<(String, KvSpace)>,
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
        let kv = KvSpace::with(store.load_kv(&p.name).map_err(|e| PluginFailure {
            plugin: p.name.clone(),
            call: "load".into(),
            reason: format!("cannot read its key-value space: {e}"),
        })?);
        let prepared = prepare(&self.engine, p, kv.clone(), self.fetch.clone())?;
        self.kv.push((p.name.clone(), kv));
        let Prepared {
            component,
            identity,
            sandbox,
        } = prepared;
        match identity.kind {
            PluginKind::Reporter => ReporterPlugin::new(sandbox, &component)
                .map(|r| Loaded::Reporter(Box::new(r)))
                .map_err(|e| link_failure(p, e)),
            PluginKind::ChangeDetector => DetectorPlugin::new(sandbox, &component)
                .map(|d| Loaded::Detector(Box::new(d)))
                .map_err(|e| link_failure(p, e)),
            // They ran during the crawl.
            PluginKind::FetchHook | PluginKind::Parser | PluginKind::Policy => {
                Ok(Loaded::CrawlHook)
            }
            other => Err(PluginFailure {
                plugin: p.name.clone(),
                call: "load".into(),
                reason: format!(
                    "it implements the `{}` world, which `spinneret crawl` does not run; \
                     crawl configurations take reporters, change detectors, fetch hooks, parsers and policies",
                    other.world()
                ),
            }),
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
