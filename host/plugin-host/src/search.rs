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

/// Match on an engine's runner: `$v2` runs for a 0.2 engine, `$since_0_3`
/// for a 0.3 or a 0.4 one with `$old` naming its interface module (the two
/// define the same items: 0.3's options, answers and flags, typed apart),
/// and `$newest` for a 0.5 one.
macro_rules! by_engine_version {
    (
        $runner:expr,
        |$r2:ident| $v2:expr,
        |$r:ident, $old:ident| $since_0_3:expr,
        |$n:ident| $newest:expr $(,)?
    ) => {
        match $runner {
            Versioned::V0_2($r2) => $v2,
            Versioned::V0_3($r) => {
                use v3 as $old;
                $since_0_3
            }
            Versioned::V0_4($r) => {
                use v4 as $old;
                $since_0_3
            }
            Versioned::V0_5($n) => $newest,
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
        let supports = by_engine_version!(
            &mut self.runner,
            |r| {
                r.start()?;
                OptionSupport::LANGUAGE | OptionSupport::PAGE
            },
            |r, old| {
                let s = r.call("supports", |b, s| {
                    b.spinneret_plugin_search_engine_api().call_supports(s)
                })?;
                same_flags!(s, old::OptionSupport => OptionSupport: LANGUAGE, PAGE, PHRASE, EXCLUDE, SITE)
            },
            |r| r.call("supports", |b, s| {
                b.spinneret_plugin_search_engine_api().call_supports(s)
            })?,
        );
        self.supports = Some(supports);
        Ok(supports)
    }

    /// The URL asking the engine for `keywords`.
    pub fn query_url(
        &mut self,
        keywords: &[String],
        options: &SearchOptions,
    ) -> Result<String, PluginFailure> {
        by_engine_version!(
            &mut self.runner,
            |r| {
                let options = v2::SearchOptions {
                    max_results: options.max_results,
                    language: options.language.clone(),
                    page: options.page,
                };
                r.call_refusable("query-url", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_query_url(s, keywords, &options)
                })
            },
            |r, old| {
                let options = old::SearchOptions {
                    max_results: options.max_results,
                    language: options.language.clone(),
                    page: options.page,
                    phrase: options.phrase.clone(),
                    exclude: options.exclude.clone(),
                    site: options.site.clone(),
                };
                r.call_refusable("query-url", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_query_url(s, keywords, &options)
                })
            },
            |r| r.call_refusable("query-url", |b, s| {
                b.spinneret_plugin_search_engine_api()
                    .call_query_url(s, keywords, options)
            }),
        )
    }

    /// What a result page says: its hits, best first, or the engine's "no
    /// results".
    pub fn parse_results(
        &mut self,
        body: &[u8],
        content_type: &str,
    ) -> Result<Answer, PluginFailure> {
        by_engine_version!(
            &mut self.runner,
            |r| {
                let hits = r.call_refusable("parse-results", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_parse_results(s, body, content_type)
                })?;
                Ok(Answer::Hits(hits.into_iter().map(new_hit!()).collect()))
            },
            |r, old| {
                let answer = r.call_refusable("parse-results", |b, s| {
                    b.spinneret_plugin_search_engine_api()
                        .call_parse_results(s, body, content_type)
                })?;
                Ok(match answer {
                    old::Answer::Hits(hits) => {
                        Answer::Hits(hits.into_iter().map(new_hit!()).collect())
                    }
                    old::Answer::NoResults(why) => Answer::NoResults(why),
                })
            },
            |r| r.call_refusable("parse-results", |b, s| {
                b.spinneret_plugin_search_engine_api()
                    .call_parse_results(s, body, content_type)
            }),
        )
    }
}
