//! Running a search-engine plugin: the URL that asks an engine for some
//! keywords, and what its result page says (ranked hits, or the engine's
//! "no results").

use super::bindings::search_engine::exports::spinneret::plugin::search_engine_api::{
    Answer, Hit, OptionSupport, SearchOptions,
};
use super::bindings::search_engine::{SearchEngine, SearchEnginePre};
use super::bindings::since_v0_2_0::search_engine::exports::spinneret::plugin::search_engine_api as v2;
use super::bindings::since_v0_2_0::search_engine::{
    SearchEngine as Engine2, SearchEnginePre as EnginePre2,
};
use super::bindings::since_v0_3_0::search_engine::exports::spinneret::plugin::search_engine_api as v3;
use super::bindings::since_v0_3_0::search_engine::{
    SearchEngine as Engine3, SearchEnginePre as EnginePre3,
};
use super::bindings::since_v0_4_0::search_engine::exports::spinneret::plugin::search_engine_api as v4;
use super::bindings::since_v0_4_0::search_engine::{
    SearchEngine as Engine4, SearchEnginePre as EnginePre4,
};
use super::runner::{Versioned, same_flags, world};
use super::sandbox::{PluginFailure, Sandbox};

pub use super::bindings::search_engine::exports::spinneret::plugin::search_engine_api::{
    Answer as SearchAnswer, Hit as SearchHit, OptionSupport as SearchOptionSupport,
    SearchOptions as SearchEngineOptions,
};

world!(
    SearchEngine,
    SearchEnginePre,
    spinneret_plugin_search_engine_api
);
world!(Engine2, EnginePre2, spinneret_plugin_search_engine_api);
world!(Engine3, EnginePre3, spinneret_plugin_search_engine_api);
world!(Engine4, EnginePre4, spinneret_plugin_search_engine_api);

/// An older version's hit as the newest's (the same fields), as a closure.
macro_rules! new_hit {
    () => {
        |h| Hit {
            rank: h.rank,
            url: h.url,
            title: h.title,
            snippet: h.snippet,
        }
    };
}

/// A search engine ready to run.
pub struct SearchEnginePlugin {
    runner: Versioned<Engine2, Engine3, Engine4, SearchEngine>,
    supports: Option<OptionSupport>,
}

/// The options a person reads: "phrase, site".
pub fn option_names(options: OptionSupport) -> Vec<&'static str> {
    [
        (OptionSupport::LANGUAGE, "language"),
        (OptionSupport::PAGE, "page"),
        (OptionSupport::PHRASE, "phrase"),
        (OptionSupport::EXCLUDE, "exclude"),
        (OptionSupport::SITE, "site"),
    ]
    .into_iter()
    .filter(|(flag, _)| options.contains(*flag))
    .map(|(_, name)| name)
    .collect()
}

/// The options of `options` that are set (beyond the keywords and the
/// number of results).
pub fn options_used(options: &SearchOptions) -> OptionSupport {
    let mut used = OptionSupport::empty();
    if options.language.is_some() {
        used |= OptionSupport::LANGUAGE;
    }
    if options.page > 1 {
        used |= OptionSupport::PAGE;
    }
    if options.phrase.is_some() {
        used |= OptionSupport::PHRASE;
    }
    if !options.exclude.is_empty() {
        used |= OptionSupport::EXCLUDE;
    }
    if options.site.is_some() {
        used |= OptionSupport::SITE;
    }
    used
}

impl SearchEnginePlugin {
    /// Prepare a search engine from a compiled component.
    pub fn new(
        sandbox: Sandbox,
        component: &wasmtime::component::Component,
    ) -> wasmtime::Result<SearchEnginePlugin> {
        Ok(SearchEnginePlugin {
            runner: Versioned::new(sandbox, component)?,
            supports: None,
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        self.runner.sandbox().name()
    }

    /// Instantiate and configure it: whether it accepts its configuration.
    pub fn start(&mut self) -> Result<(), PluginFailure> {
        self.runner.start()
    }

    /// Which advanced options the engine maps (asked once). An engine built
    /// against plugin API 0.2 knew only the language and the page.
    pub fn supports(&mut self) -> Result<OptionSupport, PluginFailure> {
        if let Some(s) = self.supports {
            return Ok(s);
        }
        let supports = match &mut self.runner {
            Versioned::V0_2(r) => {
                r.start()?;
                OptionSupport::LANGUAGE | OptionSupport::PAGE
            }
            // 0.3 and 0.4 alike: the same options, typed apart.
            Versioned::V0_3(r) => {
                let s = r.call("supports", |b, s| {
                    b.spinneret_plugin_search_engine_api().call_supports(s)
                })?;
                same_flags!(s, v3::OptionSupport => OptionSupport: LANGUAGE, PAGE, PHRASE, EXCLUDE, SITE)
            }
            Versioned::V0_4(r) => {
                let s = r.call("supports", |b, s| {
                    b.spinneret_plugin_search_engine_api().call_supports(s)
                })?;
                same_flags!(s, v4::OptionSupport => OptionSupport: LANGUAGE, PAGE, PHRASE, EXCLUDE, SITE)
            }
            Versioned::V0_5(r) => r.call("supports", |b, s| {
                b.spinneret_plugin_search_engine_api().call_supports(s)
            })?,
        };
        self.supports = Some(supports);
        Ok(supports)
    }

    /// The URL asking the engine for `keywords`.
    pub fn query_url(
        &mut self,
        keywords: &[String],
        options: &SearchOptions,
    ) -> Result<String, PluginFailure> {
        // The options as 0.3 and 0.4 type them (the same fields).
        macro_rules! options_as {
            ($old:ident) => {
                $old::SearchOptions {
                    max_results: options.max_results,
                    language: options.language.clone(),
                    page: options.page,
                    phrase: options.phrase.clone(),
                    exclude: options.exclude.clone(),
                    site: options.site.clone(),
                }
            };
        }
        match &mut self.runner {
            Versioned::V0_2(r) => {
                let options = v2::SearchOptions {
                    max_results: options.max_results,
                    language: options.language.clone(),
                    page: options.page,
                };
                r.call_refusable("query-url", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_query_url(s, keywords, &options)
                })
            }
            Versioned::V0_3(r) => {
                let options = options_as!(v3);
                r.call_refusable("query-url", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_query_url(s, keywords, &options)
                })
            }
            Versioned::V0_4(r) => {
                let options = options_as!(v4);
                r.call_refusable("query-url", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_query_url(s, keywords, &options)
                })
            }
            Versioned::V0_5(r) => r.call_refusable("query-url", |b, s| {
                b.spinneret_plugin_search_engine_api()
                    .call_query_url(s, keywords, options)
            }),
        }
    }

    /// What a result page says: its hits, best first, or the engine's "no
    /// results".
    pub fn parse_results(
        &mut self,
        body: &[u8],
        content_type: &str,
    ) -> Result<Answer, PluginFailure> {
        // An answer as 0.3 and 0.4 type it, as the newest's.
        macro_rules! answer_from {
            ($old:ident, $answer:expr) => {
                match $answer {
                    $old::Answer::Hits(hits) => {
                        Answer::Hits(hits.into_iter().map(new_hit!()).collect())
                    }
                    $old::Answer::NoResults(why) => Answer::NoResults(why),
                }
            };
        }
        match &mut self.runner {
            Versioned::V0_2(r) => {
                let hits = r.call_refusable("parse-results", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_parse_results(s, body, content_type)
                })?;
                Ok(Answer::Hits(hits.into_iter().map(new_hit!()).collect()))
            }
            Versioned::V0_3(r) => {
                let answer = r.call_refusable("parse-results", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_parse_results(s, body, content_type)
                })?;
                Ok(answer_from!(v3, answer))
            }
            Versioned::V0_4(r) => {
                let answer = r.call_refusable("parse-results", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_parse_results(s, body, content_type)
                })?;
                Ok(answer_from!(v4, answer))
            }
            Versioned::V0_5(r) => r.call_refusable("parse-results", |b, s| {
                b.spinneret_plugin_search_engine_api()
                    .call_parse_results(s, body, content_type)
            }),
        }
    }
}
