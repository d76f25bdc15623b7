//! Loading a configured plugin: its component read (a built-in or a
//! `.wasm` file) and compiled once per process, its world and API version
//! checked, and a sandbox made with its grants.

use super::capabilities::KvSpace;
use super::capabilities::PluginHttp;
use super::engine::PluginEngine;
use super::entry::{PluginConfig, PluginSource};
use super::identify::{Identity, identify};
use super::sandbox::{PluginFailure, Sandbox};
use std::sync::Arc;
use wasmtime::component::Component;

/// A plugin compiled and identified, with its sandbox, ready for the runner
/// of its world.
pub struct Prepared {
    /// The compiled component.
    pub component: Component,
    /// Its world and API version.
    pub identity: Identity,
    /// Its sandbox.
    pub sandbox: Sandbox,
}

/// The component bytes of a plugin source.
pub fn source_bytes(source: &PluginSource) -> Result<Vec<u8>, String> {
    match source {
        PluginSource::Builtin(name) => super::builtin::builtin(name)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                format!(
                    "no built-in plugin `{name}`; the built-ins are {}",
                    super::builtin::names().collect::<Vec<_>>().join(", ")
                )
            }),
        PluginSource::File(path) => {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
    }
}

/// Compile and identify the plugin configured as `p`, with `kv` as its
/// key-value space and `fetch` lent when its grants name hosts.
pub fn prepare(
    engine: &Arc<PluginEngine>,
    p: &PluginConfig,
    kv: KvSpace,
    fetch: Option<PluginHttp>,
) -> Result<Prepared, PluginFailure> {
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
    let sandbox = Sandbox::new(
        &p.name,
        engine.clone(),
        p.config.clone(),
        p.grants.clone(),
        fetch,
        kv,
    );
    Ok(Prepared {
        component,
        identity,
        sandbox,
    })
}

/// A failure to link a prepared plugin with its world's runner.
pub fn link_failure(p: &PluginConfig, e: anyhow::Error) -> PluginFailure {
    PluginFailure {
        plugin: p.name.clone(),
        call: "load".into(),
        reason: format!("cannot be linked: {e:#}"),
    }
}
