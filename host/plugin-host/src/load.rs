//! Loading a configured plugin: its component's bytes (a built-in or a
//! `.wasm` file), and what a runner is given ([`Prepared`]). The run's
//! plugins are compiled and identified once, by [`crate::registry`].

use super::entry::{PluginConfig, PluginSource};
use super::identify::Identity;
use super::sandbox::{PluginFailure, Sandbox};
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

/// A failure to link a prepared plugin with its world's runner.
pub fn link_failure(p: &PluginConfig, e: wasmtime::Error) -> PluginFailure {
    PluginFailure {
        plugin: p.name.clone(),
        call: "load".into(),
        reason: format!("cannot be linked: {e:#}"),
    }
}
