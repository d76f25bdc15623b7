//! Loading the plugins the report stage uses: each instantiated from the
//! run's registry (compiled and checked before the first request) and
//! linked with its key-value space, which every worker of the stage shares.

use spinneret_plugin_host::capabilities::KvSpace;
use spinneret_plugin_host::detector::DetectorPlugin;
use spinneret_plugin_host::entry::PluginConfig;
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::load::{Prepared, link_failure};
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::reporter::ReporterPlugin;
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_store::Store;
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

/// The key-value spaces of a run's plugins, by `[[plugin]]` name.
pub type KvSpaces = HashMap<String, KvSpace>;

/// Read the key-value space of every plugin `names` from the store.
pub fn load_kv<'a>(
    store: &Store,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<KvSpaces, spinneret_store::StoreError> {
    let mut spaces = KvSpaces::new();
    for name in names {
        if !spaces.contains_key(name) {
            spaces.insert(name.to_string(), KvSpace::with(store.load_kv(name)?));
        }
    }
    Ok(spaces)
}

/// Store every key-value space a plugin changed.
pub fn save_kv(store: &Store, spaces: &KvSpaces) -> Vec<PluginFailure> {
    let mut failures = Vec::new();
    for (name, kv) in spaces {
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

/// One worker's plugins, each loaded on first use, by `[[plugin]]` name and
/// configuration: tasks may configure one plugin differently (each task's
/// `momspider-index` gets its own index file and title).
pub struct Plugins {
    registry: Arc<Registry>,
    kv: Arc<KvSpaces>,
    loaded: HashMap<(String, String), Result<Loaded, PluginFailure>>,
}

impl Plugins {
    /// No plugins loaded yet; they come from `registry`.
    pub fn new(registry: Arc<Registry>, kv: Arc<KvSpaces>) -> Plugins {
        Plugins {
            registry,
            kv,
            loaded: HashMap::new(),
        }
    }

    /// The plugin configured as `p`, loaded on first use.
    pub fn get(&mut self, p: &PluginConfig) -> &mut Result<Loaded, PluginFailure> {
        let key = (p.name.clone(), p.config.to_string());
        if !self.loaded.contains_key(&key) {
            let loaded = self.load(p);
            self.loaded.insert(key.clone(), loaded);
        }
        self.loaded.get_mut(&key).expect("inserted above")
    }

    fn load(&mut self, p: &PluginConfig) -> Result<Loaded, PluginFailure> {
        let kv = self.kv.get(&p.name).cloned().unwrap_or_default();
        let prepared = self.registry.prepare(p, kv)?;
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
}
