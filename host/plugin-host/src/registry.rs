//! The run's plugins, loaded once before the first request: each distinct
//! configured plugin (a `[[plugin]]` entry, or a task's built-in with that
//! task's settings) read, compiled by the run's engine and identified. The
//! crawl's hooks and the report stage instantiate from here, so what runs
//! is exactly what was checked at the start, even if a `.wasm` file
//! changes on disk during the run.

use super::capabilities::{KvSpace, PluginHttp};
use super::engine::PluginEngine;
use super::entry::PluginConfig;
use super::identify::{Identity, PluginKind, identify};
use super::load::{Prepared, source_bytes};
use super::sandbox::{PluginFailure, Sandbox};
use std::sync::Arc;
use wasmtime::component::Component;

/// A plugin of the run, compiled and identified.
pub struct Registered {
    /// How it is configured.
    pub config: PluginConfig,
    /// Its compiled component.
    pub component: Component,
    /// Its world and API version.
    pub identity: Identity,
}

/// Every plugin of a run, in the order first registered, with the run's
/// engine (which compiled them) and the fetcher lent to those whose grants
/// name hosts.
pub struct Registry {
    engine: Arc<PluginEngine>,
    fetch: Option<PluginHttp>,
    entries: Vec<Registered>,
}

impl Registry {
    /// An empty registry of a run with `engine`, lending `fetch`.
    pub fn new(engine: Arc<PluginEngine>, fetch: Option<PluginHttp>) -> Registry {
        Registry {
            engine,
            fetch,
            entries: Vec::new(),
        }
    }

    /// Load `p` (read its component, compile it, check its world and API
    /// version) unless a plugin of the same name and configuration is
    /// registered already, and return it.
    pub fn add(&mut self, p: &PluginConfig) -> Result<&Registered, PluginFailure> {
        let engine = &self.engine;
        if let Some(i) = self.position(p) {
            return Ok(&self.entries[i]);
        }
        let fail = |reason: String| PluginFailure {
            plugin: p.name.clone(),
            call: "load".into(),
            reason,
        };
        let bytes = source_bytes(&p.source).map_err(fail)?;
        let component = engine
            .compile(&bytes)
            .map_err(|e| fail(format!("not a valid WebAssembly component: {e:#}")))?;
        let identity = identify(engine, &component).map_err(|e| fail(e.to_string()))?;
        self.entries.push(Registered {
            config: p.clone(),
            component,
            identity,
        });
        Ok(self.entries.last().expect("pushed above"))
    }

    fn position(&self, p: &PluginConfig) -> Option<usize> {
        self.entries
            .iter()
            .position(|r| r.config.name == p.name && r.config.config == p.config)
    }

    /// The plugin registered for `p` (same name and configuration).
    pub fn get(&self, p: &PluginConfig) -> Option<&Registered> {
        self.position(p).map(|i| &self.entries[i])
    }

    /// The registered plugins of `kind`, in the order registered.
    pub fn of_kind(&self, kind: PluginKind) -> impl Iterator<Item = &Registered> {
        self.entries.iter().filter(move |r| r.identity.kind == kind)
    }

    /// The plugin configured as `p`, ready for its world's runner: its
    /// component with a fresh sandbox of its grants, `kv` as its key-value
    /// space and the run's fetcher lent when its grants name hosts. A plugin
    /// the run did not register is a failure, said as such.
    pub fn prepare(&self, p: &PluginConfig, kv: KvSpace) -> Result<Prepared, PluginFailure> {
        let r = self.get(p).ok_or_else(|| PluginFailure {
            plugin: p.name.clone(),
            call: "load".into(),
            reason: "it was not loaded before the run (this is a bug of spinneret's: every plugin of a run is loaded before its first request)".into(),
        })?;
        Ok(Prepared {
            component: r.component.clone(),
            identity: r.identity.clone(),
            sandbox: Sandbox::new(
                &p.name,
                self.engine.clone(),
                p.config.clone(),
                p.grants.clone(),
                self.fetch.clone(),
                kv,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::PluginSource;

    fn plugin(name: &str, source: PluginSource, config: serde_json::Value) -> PluginConfig {
        PluginConfig {
            name: name.into(),
            source,
            config,
            grants: Default::default(),
            tasks: None,
            defined_at: None,
        }
    }

    #[test]
    fn each_plugin_is_loaded_once_and_runs_as_it_was_checked() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Arc::new(PluginEngine::with_cache(Some(dir.path().join("cache"))).unwrap());
        let mut registry = Registry::new(engine, None);
        let file = dir.path().join("hook.wasm");
        std::fs::write(&file, crate::builtin::builtin("soft-404").unwrap()).unwrap();
        let hook = plugin(
            "hook",
            PluginSource::File(file.clone()),
            serde_json::json!({}),
        );
        let index = |title: &str| {
            plugin(
                "index",
                PluginSource::Builtin("momspider-index".into()),
                serde_json::json!({ "title": title }),
            )
        };
        registry.add(&hook).unwrap();
        registry.add(&hook).unwrap();
        registry.add(&index("A")).unwrap();
        // One plugin configured twice (two tasks' index titles): two entries.
        registry.add(&index("B")).unwrap();
        assert_eq!(registry.of_kind(PluginKind::FetchHook).count(), 1);
        assert_eq!(registry.of_kind(PluginKind::Reporter).count(), 2);

        // The file changes during the run: what runs is what was checked.
        std::fs::write(&file, b"not a component").unwrap();
        let prepared = registry.prepare(&hook, KvSpace::default()).unwrap();
        assert_eq!(prepared.identity.kind, PluginKind::FetchHook);

        // A plugin the run did not register is refused, not loaded late.
        let late = plugin("late", PluginSource::File(file), serde_json::json!({}));
        let Err(f) = registry.prepare(&late, KvSpace::default()) else {
            panic!("an unregistered plugin was prepared");
        };
        assert_eq!(f.plugin, "late");
        assert!(f.reason.contains("not loaded before the run"), "{f}");

        // A component that is none fails to register, naming the plugin.
        let Err(f) = registry.add(&late) else {
            panic!("garbage registered");
        };
        assert_eq!((f.plugin.as_str(), f.call.as_str()), ("late", "load"));
        assert!(
            f.reason.contains("not a valid WebAssembly component"),
            "{f}"
        );
    }
}
