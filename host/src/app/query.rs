//! Asking one search engine once (`spinneret query`): the engine plugin
//! builds the query URL, spinneret fetches it through its polite fetcher
//! (the engine's robots.txt and the avoid files apply; a refused query is
//! reported, never forced), and the plugin reads the result page into
//! ranked hits. WebSnatcher's interests ask their engines this way.

use crate::config::Settings;
use spinneret_crawl::plugin_http::PoliteHttp;
use spinneret_plugin_host::capabilities::{HostHttp, KvSpace};
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::entry::{PluginConfig, PluginSource};
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_plugin_host::search::{SearchEngineOptions, SearchEnginePlugin, SearchHit};
use std::sync::Arc;

/// What one query found.
#[derive(Debug)]
pub struct Answer {
    /// The URL the engine was asked.
    pub query_url: url::Url,
    /// Its hits, best first, at most as many as asked for.
    pub hits: Vec<SearchHit>,
}

/// `builtin:NAME` or the path of a `.wasm` component, as a plugin source.
pub fn engine_source(s: &str) -> anyhow::Result<PluginSource> {
    match s.strip_prefix("builtin:") {
        Some(b) => {
            spinneret_plugin_host::builtin::known(b).map_err(anyhow::Error::msg)?;
            Ok(PluginSource::Builtin(b.to_string()))
        }
        None if std::path::Path::new(s).is_file() => Ok(PluginSource::File(s.into())),
        None => {
            anyhow::bail!("the engine `{s}` is neither `builtin:NAME` nor an existing .wasm file")
        }
    }
}

/// Ask the search-engine plugin `source` (configured with `config`) for
/// `keywords`, taking at most `max_results` hits, with `settings`' polite
/// fetcher. A failure of the plugin's is a [`PluginFailure`] (downcast the
/// error to tell it from a query the engine did not answer).
pub fn query(
    source: PluginSource,
    config: serde_json::Value,
    keywords: &[String],
    max_results: u32,
    settings: &Settings,
) -> anyhow::Result<Answer> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let plan_settings = settings.crawl();
    let http = PoliteHttp::new(&plan_settings, runtime.handle().clone())?;
    let name = match &source {
        PluginSource::Builtin(b) => b.clone(),
        PluginSource::File(f) => f.display().to_string(),
    };
    let plugin = PluginConfig {
        name: name.clone(),
        source,
        config,
        grants: Default::default(),
        tasks: None,
        defined_at: None,
    };
    let mut registry = Registry::new(Arc::new(PluginEngine::new()?), None);
    let kind = registry.add(&plugin)?.identity.kind;
    if kind != PluginKind::SearchEngine {
        return Err(PluginFailure {
            plugin: name,
            call: "load".into(),
            reason: format!(
                "it implements the `{}` world, not `search-engine`",
                kind.world()
            ),
        }
        .into());
    }
    let prepared = registry.prepare(&plugin, KvSpace::default())?;
    let mut engine = SearchEnginePlugin::new(prepared.sandbox, &prepared.component)
        .map_err(|e| spinneret_plugin_host::load::link_failure(&plugin, e))?;
    let options = SearchEngineOptions {
        max_results,
        language: None,
        page: 1,
    };
    let query_url = engine.query_url(keywords, &options)?;
    let query_url = url::Url::parse(&query_url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| {
            anyhow::anyhow!("{name} asked for `{query_url}`, which is no http or https URL")
        })?;
    // The plugin host's blocking fetch is called off the runtime's threads.
    let answer = http
        .get(&query_url)
        .map_err(|e| anyhow::anyhow!("{query_url}: {e}"))?;
    anyhow::ensure!(
        (200..300).contains(&answer.status),
        "{query_url} answered {}; the engine gave no results page",
        answer.status
    );
    let mut hits =
        engine.parse_results(&answer.body, answer.content_type.as_deref().unwrap_or(""))?;
    hits.retain(|h| url::Url::parse(&h.url).is_ok_and(|u| matches!(u.scheme(), "http" | "https")));
    hits.truncate(max_results as usize);
    drop(runtime);
    Ok(Answer { query_url, hits })
}
