//! The `clock` capability: the host's time, in seconds since the Unix epoch.

use super::PluginState;
use crate::bindings::reporter::spinneret::plugin::clock;

impl clock::Host for PluginState {
    fn now(&mut self) -> wasmtime::Result<i64> {
        Ok(spinneret_core::model::unix_now())
    }
}
