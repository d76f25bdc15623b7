//! Asking one search engine once (`spinneret query`): the engine plugin
//! builds the query URL, spinneret fetches it through its polite fetcher
//! (the engine's robots.txt and the avoid files apply; a refused query is
//! reported, never forced), and the plugin reads the result page into
//! ranked hits or the engine's "no results". WebSnatcher's interests ask
//! their engines this way.

use crate::profile::Engine;
use spinneret_config::Settings;
use spinneret_crawl::plugin_http::PoliteHttp;
use spinneret_plugin_host::capabilities::KvSpace;
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::entry::{PluginConfig, PluginSource};
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::load::Prepared;
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_plugin_host::search::{
    SearchAnswer, SearchEngineOptions, SearchEnginePlugin, SearchHit, option_names, options_used,
};
use std::sync::Arc;

/// What one query found.
#[derive(Debug)]
pub struct Answer {
    /// The URL the engine was asked.
    pub query_url: url::Url,
    /// Its hits, best first, at most as many as asked for.
    pub hits: Vec<SearchHit>,
    /// The engine said it found nothing (its words, if any). No hits and
    /// no such answer means the page had none the plugin could read.
    pub no_results: Option<String>,
    /// The options asked for that the engine does not map (it searched
    /// without them).
    pub ignored: Vec<&'static str>,
}

/// Search options: `max_results` hits of the first page, no language and
/// no advanced option; set the others as wanted.
pub fn plain_options(max_results: u32) -> SearchEngineOptions {
    SearchEngineOptions {
        max_results,
        language: None,
        page: 1,
        phrase: None,
        exclude: Vec::new(),
        site: None,
    }
}

/// `builtin:NAME`, an installed plugin (`NAME@^1.0`) or the path of a
/// `.wasm` component, as a plugin source (as a profile's `source` is read).
pub fn engine_source(s: &str) -> Result<PluginSource, String> {
    spinneret_config::plugin_source::resolve(s, &|r| r.into()).map(|(source, _manifest)| source)
}

/// What asking search engines needs: the polite fetcher on a runtime of
/// its own, and the plugins loaded so far, each compiled once by one plugin
/// engine. One serves a single query and a run's many alike, so that a
/// run's queries to one engine share its robots.txt and per-site turns; a
/// collection's run loads its change detectors and index plugin through it
/// too ([`Asker::plugin`]).
pub struct Asker {
    // Declared before the runtime it fetches on: it is dropped first. The
    // registry lends it to engines whose `hosts` grant them the network.
    http: Arc<PoliteHttp>,
    registry: Registry,
    /// The fetch hooks the network asks, if the profile has any.
    hooks: Option<Arc<spinneret_crawl::hooks::CrawlHooks>>,
    /// Kept alive for `http`, which holds a handle to it.
    _runtime: tokio::runtime::Runtime,
}

impl Asker {
    /// A fetcher with `settings`, and no engine loaded yet.
    pub fn new(settings: &Settings) -> anyhow::Result<Asker> {
        // A worker per core: a collection's fetches (and the bodies'
        // decoding) run on it while the walk saves and reads the answers.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let http = Arc::new(PoliteHttp::new(
            &settings.crawl(),
            runtime.handle().clone(),
        )?);
        let lent = http.clone() as spinneret_plugin_host::capabilities::PluginHttp;
        Ok(Asker {
            http,
            registry: Registry::new(Arc::new(PluginEngine::new()?), Some(lent)),
            hooks: None,
            _runtime: runtime,
        })
    }

    /// The plugin `source` configured with `config`, which must be of
    /// `kind`: loaded (compiled and identified) once however often it is
    /// asked for, and prepared with a fresh sandbox of the default grants
    /// and the network to `hosts` alone (none: no network). Its
    /// configuration as the registry knows it comes with it (to name it in
    /// a link failure).
    pub fn plugin(
        &mut self,
        source: PluginSource,
        config: serde_json::Value,
        hosts: &[String],
        kind: PluginKind,
    ) -> Result<(PluginConfig, Prepared), PluginFailure> {
        let name = match &source {
            PluginSource::Builtin(b) => b.clone(),
            PluginSource::File(f) => f.display().to_string(),
        };
        let plugin = PluginConfig {
            name: name.clone(),
            source,
            config,
            grants: spinneret_core::grants::Grants {
                hosts: hosts.to_vec(),
                ..Default::default()
            },
            tasks: None,
            defined_at: None,
        };
        let found = self.registry.add(&plugin)?.identity.kind;
        if found != kind {
            return Err(PluginFailure {
                plugin: name,
                call: "load".into(),
                reason: format!(
                    "it implements the `{}` world, not `{}`",
                    found.world(),
                    kind.world()
                ),
            });
        }
        let prepared = self.registry.prepare(&plugin, KvSpace::default())?;
        Ok((plugin, prepared))
    }

    /// The search-engine plugin `engine`, ready to be asked (see
    /// [`Asker::plugin`]); its name.
    pub fn engine(
        &mut self,
        engine: &Engine,
    ) -> Result<(String, SearchEnginePlugin), PluginFailure> {
        let (plugin, prepared) = self.plugin(
            engine.source.clone(),
            engine.config.clone(),
            &engine.hosts,
            PluginKind::SearchEngine,
        )?;
        let engine = SearchEnginePlugin::new(prepared.sandbox, &prepared.component)
            .map_err(|e| spinneret_plugin_host::load::link_failure(&plugin, e))?;
        Ok((plugin.name, engine))
    }

    /// The polite fetcher, for the pages the answers lead to.
    pub fn http(&self) -> &PoliteHttp {
        &self.http
    }

    /// Have `hooks` asked about every request from now on (a profile's
    /// `[[fetch_hook]]`s), the queries' and the pages' alike, and their
    /// policies (`[[policy]]`) about the links a collection would follow.
    pub fn use_hooks(&mut self, hooks: spinneret_crawl::hooks::CrawlHooks) {
        let hooks = Arc::new(hooks);
        if self.http.network().set_hook(hooks.clone()).is_ok() {
            self.hooks = Some(hooks);
        }
    }

    /// The profile's policies, asked about the links a collection would
    /// follow; none when it has none.
    pub fn policies(&self) -> Option<Arc<spinneret_crawl::hooks::CrawlHooks>> {
        self.hooks.clone().filter(|h| h.has_policies())
    }

    /// What the fetch hooks failed at since last asked: each plugin's
    /// failure with the URL it was asked about.
    pub fn hook_failures(&self) -> Vec<String> {
        self.hooks.as_ref().map_or_else(Vec::new, |h| {
            h.take_failures()
                .into_iter()
                .map(|(url, f)| format!("{url}: {f}"))
                .collect()
        })
    }

    /// Ask the search-engine plugin `engine` for `keywords` with
    /// `options`, taking at most `options.max_results` hits. When the
    /// engine names its `hosts`, its query must go to one of them. A
    /// failure of the plugin's is a [`PluginFailure`] (downcast the error
    /// to tell it from a query the engine did not answer).
    pub fn ask(
        &mut self,
        spec: &Engine,
        keywords: &[String],
        options: &SearchEngineOptions,
    ) -> anyhow::Result<Answer> {
        self.ask_excluding(spec, keywords, options, &|_| false)
            .map(|e| e.answer)
    }

    /// [`Asker::ask`], leaving out the hits `excluded` says are not of
    /// interest (a profile's `exclude`; each hit's URL is handed over
    /// without its fragment) before the cut at `options.max_results`, so
    /// that none takes the place of a hit that is. When some were left out
    /// and too few remain, an engine that can page is asked for its next
    /// pages, at most [`MORE_PAGES`] of them, for hits to take their
    /// places; one that cannot gives fewer. Ranks stay the engine's: a
    /// further page's hits rank after the page before.
    pub fn ask_excluding(
        &mut self,
        spec: &Engine,
        keywords: &[String],
        options: &SearchEngineOptions,
        excluded: &dyn Fn(&url::Url) -> bool,
    ) -> anyhow::Result<Excluding> {
        let (name, mut engine) = self.engine(spec)?;
        let supports = engine.supports()?;
        let ignored = option_names(options_used(options) & !supports);
        let pages = supports.contains(spinneret_plugin_host::search::SearchOptionSupport::PAGE);
        let (query_url, first) = self.results_page(&name, spec, &mut engine, keywords, options)?;
        let no_results = match &first {
            SearchAnswer::NoResults(words) => Some(words.clone()),
            SearchAnswer::Hits(_) => None,
        };
        let wanted = options.max_results as usize;
        let mut hits: Vec<SearchHit> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut left_out = 0;
        // The last rank of the pages read so far.
        let mut ranked = 0;
        let mut asked = options.clone();
        let mut page = first;
        loop {
            let listed = match page {
                SearchAnswer::Hits(listed) => listed,
                SearchAnswer::NoResults(_) => Vec::new(),
            };
            let (before, offset) = (left_out, ranked);
            for hit in listed {
                let Some(url) = url::Url::parse(&hit.url)
                    .ok()
                    .filter(|u| matches!(u.scheme(), "http" | "https"))
                else {
                    continue;
                };
                // A further page may repeat hits of the pages before (an
                // engine may even give the same page again).
                if !seen.insert(hit.url.clone()) && asked.page > options.page {
                    continue;
                }
                let rank = offset + hit.rank;
                ranked = ranked.max(rank);
                if excluded(&spinneret_core::urls::normalize(url)) {
                    left_out += 1;
                    continue;
                }
                hits.push(SearchHit { rank, ..hit });
            }
            // Another page while this one left hits out, too few remain,
            // and the engine can page.
            let more = hits.len() < wanted
                && left_out > before
                && pages
                && asked.page < options.page.saturating_add(MORE_PAGES);
            if !more {
                break;
            }
            asked.page += 1;
            // A further page is a bonus: the hits so far stand without it.
            match self.results_page(&name, spec, &mut engine, keywords, &asked) {
                Ok((_, next)) => page = next,
                Err(_) => break,
            }
        }
        hits.truncate(wanted);
        Ok(Excluding {
            answer: Answer {
                query_url,
                hits,
                no_results,
                ignored,
            },
            excluded: left_out,
        })
    }

    /// One page of `engine`'s results for `keywords` with `options` (its
    /// `page`): the URL asked and what the plugin read in the answer.
    fn results_page(
        &self,
        name: &str,
        spec: &Engine,
        engine: &mut SearchEnginePlugin,
        keywords: &[String],
        options: &SearchEngineOptions,
    ) -> anyhow::Result<(url::Url, SearchAnswer)> {
        let query_url = engine.query_url(keywords, options)?;
        let query_url = url::Url::parse(&query_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| {
                anyhow::anyhow!("{name} asked for `{query_url}`, which is no http or https URL")
            })?;
        let host = query_url.host_str().unwrap_or("");
        anyhow::ensure!(
            spec.hosts.is_empty() || spec.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)),
            "{name} asked for {query_url}, but {host} is not among the engine's hosts ({}); add it to `hosts` if the engine should ask it",
            spec.hosts.join(", ")
        );
        // The plugin host's blocking fetch is called off the runtime's threads.
        // The engine's URL is the user's word: it may be on their network.
        let ask = spinneret_net::network::Ask {
            public_only: false,
            ..spinneret_net::network::Ask::get(query_url.clone())
        };
        let answer = self
            .http
            .fetch(&ask)
            .map_err(|e| anyhow::anyhow!("{query_url}: {e}"))?;
        anyhow::ensure!(
            (200..300).contains(&answer.status),
            "{query_url} answered {}; the engine gave no results page",
            answer.status
        );
        let read = engine.parse_results(
            answer.body.as_ref().map_or(&[][..], |b| &b.bytes[..]),
            answer.headers.content_type.as_deref().unwrap_or(""),
        )?;
        Ok((query_url, read))
    }
}

/// How many further pages of results [`Asker::ask_excluding`] asks at
/// most, for hits to take the places of those it left out.
pub const MORE_PAGES: u32 = 3;

/// What [`Asker::ask_excluding`] found.
#[derive(Debug)]
pub struct Excluding {
    /// The answer, without the hits left out.
    pub answer: Answer,
    /// How many hits were left out as not of interest.
    pub excluded: usize,
}

/// Ask one engine once (see [`Asker::ask`]) with `settings`' polite fetcher.
pub fn query(
    engine: &Engine,
    keywords: &[String],
    options: &SearchEngineOptions,
    settings: &Settings,
) -> anyhow::Result<Answer> {
    Asker::new(settings)?.ask(engine, keywords, options)
}
