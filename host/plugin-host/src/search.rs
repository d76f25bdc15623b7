//! Running a search-engine plugin: the URL that asks an engine for some
//! keywords, and the ranked hits of its result page.

use super::bindings::search_engine::exports::spinneret::plugin::search_engine_api::{
    Hit, SearchOptions,
};
use super::bindings::search_engine::{SearchEngine, SearchEnginePre};
use super::runner::{Runner, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::search_engine::exports::spinneret::plugin::search_engine_api::{
    Hit as SearchHit, SearchOptions as SearchEngineOptions,
};

world!(
    SearchEngine,
    SearchEnginePre,
    spinneret_plugin_search_engine_api
);

/// A search engine ready to run.
pub struct SearchEnginePlugin(Runner<SearchEngine>);

impl SearchEnginePlugin {
    /// Prepare a search engine from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<SearchEnginePlugin> {
        Runner::new(sandbox, component).map(SearchEnginePlugin)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.0.sandbox().name()
    }

    /// The URL asking the engine for `keywords`.
    pub fn query_url(
        &mut self,
        keywords: &[String],
        options: &SearchOptions,
    ) -> Result<String, PluginFailure> {
        self.0.call_refusable("query-url", |b, s| {
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
        self.0.call_refusable("parse-results", |b, s| {
            b.spinneret_plugin_search_engine_api()
                .call_parse_results(s, body, content_type)
        })
    }
}
