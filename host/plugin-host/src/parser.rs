//! Running a parser plugin: formats the host does not parse itself (a
//! sitemap, say) read into references and metadata.

use super::bindings::parser::exports::spinneret::plugin::parser_api::Parsed;
use super::bindings::parser::{Parser, ParserPre};
use super::runner::{Runner, world};
use super::sandbox::{PluginFailure, Sandbox};

world!(Parser, ParserPre, spinneret_plugin_parser_api);

/// What a parser read from a resource.
pub type ParsedResource = Parsed;

/// A parser ready to run.
pub struct ParserPlugin(Runner<Parser>);

impl ParserPlugin {
    /// Prepare a parser from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<ParserPlugin> {
        Runner::new(sandbox, component).map(ParserPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Whether the parser reads `content_type` at `url`.
    pub fn accepts(&mut self, content_type: &str, url: &str) -> Result<bool, PluginFailure> {
        self.0.call("accepts", |b, s| {
            b.spinneret_plugin_parser_api()
                .call_accepts(s, content_type, &url.to_string())
        })
    }

    /// Parse a fetched resource. A refusal (the plugin's own error) and a
    /// trap are both failures; after a trap the next call starts afresh.
    pub fn parse(
        &mut self,
        url: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<Parsed, PluginFailure> {
        self.0.call_refusable("parse", |b, s| {
            b.spinneret_plugin_parser_api()
                .call_parse(s, &url.to_string(), content_type, body)
        })
    }
}
