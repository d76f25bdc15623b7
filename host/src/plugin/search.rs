//! Running a search-engine plugin: the URL that asks an engine for some
//! keywords, and the ranked hits of its result page.

use super::bindings::host::types as wit;
use super::bindings::search_engine::exports::spinneret::plugin::search_engine_api::{
    Hit, SearchOptions,
};
use super::bindings::search_engine::{SearchEngine, SearchEnginePre};
use super::sandbox::{PluginFailure, Sandbox};
use super::state::PluginState;
use wasmtime::Store;
use wasmtime::component::HasSelf;

pub use super::bindings::search_engine::exports::spinneret::plugin::search_engine_api::{
    Hit as SearchHit, SearchOptions as SearchEngineOptions,
};

/// A search engine ready to run.
pub struct SearchEnginePlugin {
    sandbox: Sandbox,
    pre: SearchEnginePre<PluginState>,
    live: Option<(Store<PluginState>, SearchEngine)>,
}

impl SearchEnginePlugin {
    /// Prepare a search engine from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> anyhow::Result<SearchEnginePlugin> {
        let mut linker = sandbox.linker()?;
        SearchEngine::add_to_linker::<PluginState, HasSelf<PluginState>>(&mut linker, |s| s)?;
        let pre = SearchEnginePre::new(linker.instantiate_pre(component)?)?;
        Ok(SearchEnginePlugin {
            sandbox,
            pre,
            live: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.sandbox.name()
    }

    fn run<T>(
        &mut self,
        call: &str,
        f: impl FnOnce(
            &mut Store<PluginState>,
            &SearchEngine,
        ) -> wasmtime::Result<Result<T, wit::PluginError>>,
    ) -> Result<T, PluginFailure> {
        let sb = self.sandbox.clone();
        if self.live.is_none() {
            let mut store = sb.store(None);
            let bindings = sb.call(&mut store, "instantiate", |s| self.pre.instantiate(s))?;
            sb.call(&mut store, "configure", |s| {
                bindings
                    .spinneret_plugin_search_engine_api()
                    .call_configure(s, sb.config())
            })?
            .map_err(|e| sb.failed("configure", e.message))?;
            self.live = Some((store, bindings));
        }
        let (store, bindings) = self.live.as_mut().expect("set above");
        match sb.call(store, call, |s| f(s, bindings)) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(sb.failed(call, e.message)),
            Err(e) => {
                self.live = None;
                Err(e)
            }
        }
    }

    /// The URL asking the engine for `keywords`.
    pub fn query_url(
        &mut self,
        keywords: &[String],
        options: &SearchOptions,
    ) -> Result<String, PluginFailure> {
        self.run("query-url", |s, b| {
            b.spinneret_plugin_search_engine_api()
                .call_query_url(s, keywords, options)
        })
    }

    /// The hits of a result page, best first.
    pub fn parse_results(
        &mut self,
        body: &[u8],
        content_type: &str,
    ) -> Result<Vec<Hit>, PluginFailure> {
        self.run("parse-results", |s, b| {
            b.spinneret_plugin_search_engine_api()
                .call_parse_results(s, body, content_type)
        })
    }
}
