//! Running a parser plugin: formats the host does not parse itself (a
//! sitemap, say) read into references and metadata.

use super::bindings::host::types as wit;
use super::bindings::parser::exports::spinneret::plugin::parser_api::Parsed;
use super::bindings::parser::{Parser, ParserPre};
use super::sandbox::{PluginFailure, Sandbox};
use super::state::PluginState;
use wasmtime::Store;
use wasmtime::component::HasSelf;

/// What a parser read from a resource.
pub type ParsedResource = Parsed;

/// A parser ready to run.
pub struct ParserPlugin {
    sandbox: Sandbox,
    pre: ParserPre<PluginState>,
    live: Option<(Store<PluginState>, Parser)>,
}

impl ParserPlugin {
    /// Prepare a parser from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<ParserPlugin> {
        let mut linker = sandbox.linker()?;
        Parser::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = ParserPre::new(linker.instantiate_pre(component)?)?;
        Ok(ParserPlugin {
            sandbox,
            pre,
            live: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    fn live(&mut self) -> Result<&mut (Store<PluginState>, Parser), PluginFailure> {
        if self.live.is_none() {
            let sb = &self.sandbox;
            let mut store = sb.store(None);
            let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
            sb.call(&mut store, "configure", |s| {
                bindings
                    .spinneret_plugin_parser_api()
                    .call_configure(s, sb.config())
            })?
            .map_err(|e| sb.failed("configure", e.message))?;
            self.live = Some((store, bindings));
        }
        Ok(self.live.as_mut().expect("set above"))
    }

    /// Whether the parser reads `content_type` at `url`.
    pub fn accepts(&mut self, content_type: &str, url: &str) -> Result<bool, PluginFailure> {
        let sandbox = self.sandbox.clone();
        let (store, bindings) = self.live()?;
        let r = sandbox.call(store, "accepts", |s| {
            bindings
                .spinneret_plugin_parser_api()
                .call_accepts(s, content_type, &url.to_string())
        });
        if r.is_err() {
            self.live = None;
        }
        r
    }

    /// Parse a fetched resource. A refusal (the plugin's own error) and a
    /// trap are both failures; after a trap the next call starts afresh.
    pub fn parse(
        &mut self,
        url: &str,
        content_type: &str,
        body: &[u8],
    ) -> Result<Parsed, PluginFailure> {
        let sandbox = self.sandbox.clone();
        let (store, bindings) = self.live()?;
        let r = sandbox.call(store, "parse", |s| {
            bindings.spinneret_plugin_parser_api().call_parse(
                s,
                &url.to_string(),
                content_type,
                body,
            )
        });
        match r {
            Ok(Ok(parsed)) => Ok(parsed),
            Ok(Err(wit::PluginError { message })) => Err(sandbox.failed("parse", message)),
            Err(e) => {
                self.live = None;
                Err(e)
            }
        }
    }
}
