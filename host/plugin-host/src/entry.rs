//! A plugin as a run uses it: where its component comes from, its
//! configuration, its grants and its tasks. The configuration file's
//! `[[plugin]]` entries and the default built-ins both become these.

use std::path::PathBuf;

/// Where a plugin's component comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginSource {
    /// One of the plugins embedded in spinneret (`builtin:NAME`).
    Builtin(String),
    /// A `.wasm` component file.
    File(PathBuf),
}

/// A `[[plugin]]` entry.
#[derive(Clone, Debug)]
pub struct PluginConfig {
    /// The name it is known by in logs and reports.
    pub name: String,
    /// Where its component comes from.
    pub source: PluginSource,
    /// Its `config` table, handed to it as JSON.
    pub config: serde_json::Value,
    /// Memory, time per call, output bytes, network hosts.
    pub grants: spinneret_core::grants::Grants,
    /// The tasks it runs for (none: every task).
    pub tasks: Option<Vec<String>>,
    /// `FILE:LINE` of its `[[plugin]]` entry (none for a default built-in).
    pub defined_at: Option<String>,
}
