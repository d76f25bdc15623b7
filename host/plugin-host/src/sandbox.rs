//! What every plugin kind shares: a named plugin with its grants, how a
//! sandboxed store is made for one of its instances, and how a failed call
//! is explained (time, memory or output overspent, or a trap).

use super::api::ApiVersion;
use super::capabilities::PluginHttp;
use super::capabilities::{Grants, KvSpace, OutputDir, PluginState};
use super::engine::PluginEngine;
use std::sync::Arc;
use wasmtime::Store;
use wasmtime::component::{Component, Linker};

/// A plugin call that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("plugin {plugin} failed in {call}: {reason}")]
pub struct PluginFailure {
    /// The plugin.
    pub plugin: String,
    /// The call that failed (`configure`, `begin`, `compare`, …).
    pub call: String,
    /// What happened.
    pub reason: String,
}

impl PluginFailure {
    /// Whether the plugin could not start at all (loading, linking,
    /// instantiating or configuring it failed), so that no later call
    /// can succeed either.
    pub fn at_start(&self) -> bool {
        matches!(self.call.as_str(), "load" | "instantiate" | "configure")
    }
}

/// One configured plugin: its name, configuration, grants and host services.
#[derive(Clone)]
pub struct Sandbox {
    name: String,
    engine: Arc<PluginEngine>,
    config: String,
    grants: Grants,
    fetch: Option<PluginHttp>,
    kv: KvSpace,
}

impl Sandbox {
    /// A plugin named `name` with its `config` (JSON), grants and services.
    /// The fetcher is lent only when the grants name hosts.
    pub fn new(
        name: &str,
        engine: Arc<PluginEngine>,
        config: serde_json::Value,
        grants: Grants,
        fetch: Option<PluginHttp>,
        kv: KvSpace,
    ) -> Sandbox {
        let fetch = if grants.hosts.is_empty() { None } else { fetch };
        Sandbox {
            name: name.to_string(),
            engine,
            config: config.to_string(),
            grants,
            fetch,
            kv,
        }
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its configuration, as the JSON text `configure` receives.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// Its grants.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// The plugin API version `component` runs under on this host (the
    /// one it was built against), or why it cannot run.
    pub fn api_of(&self, component: &Component) -> wasmtime::Result<ApiVersion> {
        let id = super::identify::identify(&self.engine, component)
            .map_err(|e| wasmtime::format_err!("{e}"))?;
        id.runs_under()
            .ok_or_else(|| wasmtime::format_err!("no API version of this host runs it"))
    }

    /// A linker with the WASI p2 interfaces (a plugin built for
    /// wasm32-wasip2 imports them; its context grants nothing). The world's
    /// own imports are added by the caller.
    pub fn linker(&self) -> wasmtime::Result<Linker<PluginState>> {
        let mut linker: Linker<PluginState> = Linker::new(self.engine.engine());
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        Ok(linker)
    }

    /// A fresh store for one instance, with its memory cap and deadline.
    pub fn store(&self, output: Option<OutputDir>) -> Store<PluginState> {
        let state = PluginState::new(
            &self.name,
            &self.grants,
            output,
            self.fetch.clone(),
            self.kv.clone(),
        );
        let mut store = Store::new(self.engine.engine(), state);
        store.limiter(|s| &mut s.memory);
        store.epoch_deadline_trap();
        self.arm(&mut store);
        store
    }

    /// Give the next call its full time allowance, in the sandbox (epoch
    /// ticks) and for the host calls it makes (their deadline).
    pub fn arm(&self, store: &mut Store<PluginState>) {
        store.set_epoch_deadline(PluginEngine::ticks(self.grants.time));
        store.data_mut().deadline = std::time::Instant::now() + self.grants.time;
    }

    /// Run one call with a fresh deadline; a trap becomes a
    /// [`PluginFailure`] that says which limit was overspent.
    pub fn call<T>(
        &self,
        store: &mut Store<PluginState>,
        call: &str,
        f: impl FnOnce(&mut Store<PluginState>) -> wasmtime::Result<T>,
    ) -> Result<T, PluginFailure> {
        self.arm(store);
        let started = std::time::Instant::now();
        let r = f(store);
        super::stats::record(&self.name, call, started.elapsed());
        r.map_err(|e| self.failure(call, store, e))
    }

    /// Explain a failed call: which limit it overspent, or its trap.
    pub fn failure(
        &self,
        call: &str,
        store: &Store<PluginState>,
        err: wasmtime::Error,
    ) -> PluginFailure {
        let state = store.data();
        let reason = if err.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt) {
            format!(
                "cut off after its time limit of {:?} per call",
                self.grants.time
            )
        } else if state.memory.exceeded {
            format!(
                "cut off at its memory limit of {} MiB",
                self.grants.memory >> 20
            )
        } else if state.output.as_ref().is_some_and(|o| o.exceeded) {
            format!(
                "cut off at its output limit of {} bytes",
                self.grants.output
            )
        } else {
            format!("trapped: {}", err.root_cause())
        };
        self.failed(call, reason)
    }

    /// A failure of `call` for `reason` (e.g. the plugin refused its input).
    pub fn failed(&self, call: &str, reason: impl Into<String>) -> PluginFailure {
        PluginFailure {
            plugin: self.name.clone(),
            call: call.to_string(),
            reason: reason.into(),
        }
    }
}
