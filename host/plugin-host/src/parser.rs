//! Running a parser plugin: formats the host does not parse itself (a
//! sitemap, say) read into references and metadata.

use super::bindings::parser::exports::spinneret::plugin::parser_api::Parsed;
use super::bindings::parser::{Parser, ParserPre};
use super::bindings::since_v0_2_0::parser::{Parser as Parser2, ParserPre as ParserPre2};
use super::bindings::since_v0_3_0::parser::{Parser as Parser3, ParserPre as ParserPre3};
use super::bindings::since_v0_4_0::parser::{Parser as Parser4, ParserPre as ParserPre4};
use super::runner::{Versioned, by_version, world};
use super::sandbox::{PluginFailure, Sandbox};

world!(Parser, ParserPre, spinneret_plugin_parser_api);
world!(Parser2, ParserPre2, spinneret_plugin_parser_api);
world!(Parser3, ParserPre3, spinneret_plugin_parser_api);
world!(Parser4, ParserPre4, spinneret_plugin_parser_api);

/// What a parser read from a resource.
pub type ParsedResource = Parsed;

/// A parser ready to run.
pub struct ParserPlugin(Versioned<Parser2, Parser3, Parser4, Parser>);

impl ParserPlugin {
    /// Prepare a parser from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<ParserPlugin> {
        Versioned::new(sandbox, component).map(ParserPlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// Instantiate and configure it: whether it accepts its configuration.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        self.0.start()
    }

    /// Whether the parser reads `content_type` at `url`.
    pub fn accepts(&mut self, content_type: &str, url: &str) -> Result<bool, PluginFailure> {
        let url = url.to_string();
        by_version!(
            &mut self.0,
            |r| r.call("accepts", |b, s| {
                b.spinneret_plugin_parser_api()
                    .call_accepts(s, content_type, &url)
            }),
            |r| r.call("accepts", |b, s| {
                b.spinneret_plugin_parser_api()
                    .call_accepts(s, content_type, &url)
            }),
        )
    }

    /// Parse a fetched resource. A refusal (the plugin's own error) and a
    /// trap are both failures; after a trap the next call starts afresh.
    pub fn parse(
        &mut self,
        url: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<Parsed, PluginFailure> {
        let url = url.to_string();
        by_version!(
            &mut self.0,
            |r| r
                .call_refusable("parse", |b, s| {
                    b.spinneret_plugin_parser_api()
                        .call_parse(s, &url, content_type, body)
                })
                .map(|p| Parsed {
                    title: p.title,
                    owner: p.owner,
                    expires: p.expires,
                    references: p.references,
                }),
            |r| r.call_refusable("parse", |b, s| {
                b.spinneret_plugin_parser_api()
                    .call_parse(s, &url, content_type, body)
            }),
        )
    }
}
