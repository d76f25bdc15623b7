//! The `log` capability: a plugin's log lines go to the host's log, named
//! after the plugin and cut at 4,096 characters. (The shared `types`
//! interface, which has no functions, is implemented here too.)

use super::PluginState;
use crate::bindings::reporter::spinneret::plugin::{log, types};

impl types::Host for PluginState {}

impl log::Host for PluginState {
    fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        let name = &self.name;
        let message: String = message.chars().take(4096).collect();
        match level {
            log::Level::Trace => tracing::trace!("plugin {name}: {message}"),
            log::Level::Debug => tracing::debug!("plugin {name}: {message}"),
            log::Level::Info => tracing::info!("plugin {name}: {message}"),
            log::Level::Warn => tracing::warn!("plugin {name}: {message}"),
            log::Level::Error => tracing::error!("plugin {name}: {message}"),
        }
        Ok(())
    }
}
