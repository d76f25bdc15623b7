//! A plugin built against `spinneret:plugin@0.3.0`, as a third party's
//! component shared as a bundle before 0.4.0 was released would be: its
//! bindings come straight from `wit/since_v0.3.0` (not the SDK, which
//! follows the newest API). It exports every 0.3 plugin interface at once,
//! so one component exercises each world's 0.3 arm in the host; it imports
//! only what every world's linker offers (`log`, `kv`). The search engine
//! comes first, so the host identifies the component as one.
//!
//! The worlds 0.2 and 0.3 define alike (reporter, detector, policy, fetch
//! hook, parser) behave as the 0.2 fixture's, which this one shares
//! (`../legacy-api/src/shared.rs`); its fetch hook adds `x-legacy: 0.3`.
//! New in 0.3, and so here alone:
//! - search engine: maps the language and an exact phrase (`supports`),
//!   asks `BASE/find?q=…&n=N[&lang=L]` and reads `URL<TAB>TITLE` lines; a
//!   page that says `no results` is the engine's own answer;
//! - collection index: stores `profile=… pages=P gone=G paths=…
//!   first=URL (change)` under the kv key `index` (a collection index
//!   with no `output`, so that the other worlds' linkers can instantiate
//!   the component too).

// wit-bindgen's exports are `#[export_name]` functions, which the workspace's
// `unsafe_code` lint counts as unsafe; the SDK's plugins get them from the
// SDK's macros, this one straight from wit-bindgen.
#![allow(unsafe_code, missing_docs)]

wit_bindgen::generate!({
    inline: "
        package test:legacy;
        world legacy {
            import spinneret:plugin/log@0.3.0;
            import spinneret:plugin/kv@0.3.0;
            export spinneret:plugin/search-engine-api@0.3.0;
            export spinneret:plugin/reporter-api@0.3.0;
            export spinneret:plugin/detector-api@0.3.0;
            export spinneret:plugin/policy-api@0.3.0;
            export spinneret:plugin/fetch-hook-api@0.3.0;
            export spinneret:plugin/parser-api@0.3.0;
            export spinneret:plugin/collection-index-api@0.3.0;
        }
    ",
    path: "../../../wit/since_v0.3.0",
    world: "legacy",
    generate_all,
});

use exports::spinneret::plugin::{
    collection_index_api, detector_api, fetch_hook_api, parser_api, policy_api, reporter_api,
    search_engine_api,
};
use spinneret::plugin::types::{Category, PluginError, RefKind, Reference, Severity};
use spinneret::plugin::{kv, log};
use std::cell::RefCell;

/// The API version the fetch hook names in its header.
const API: &str = "0.3";

include!("../../legacy-api/src/shared.rs");

impl search_engine_api::Guest for Legacy {
    fn configure(config: String) -> Result<(), PluginError> {
        configure_base(&config)
    }
    fn supports() -> search_engine_api::OptionSupport {
        search_engine_api::OptionSupport::LANGUAGE | search_engine_api::OptionSupport::PHRASE
    }
    fn query_url(
        keywords: Vec<String>,
        options: search_engine_api::SearchOptions,
    ) -> Result<String, PluginError> {
        let mut q: Vec<String> = keywords
            .iter()
            .flat_map(|k| k.split_whitespace())
            .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect())
            .collect();
        if let Some(phrase) = &options.phrase {
            let words: Vec<String> = phrase
                .split_whitespace()
                .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect())
                .collect();
            q.push(format!("%22{}%22", words.join("+")));
        }
        let lang = options
            .language
            .map(|l| {
                format!(
                    "&lang={}",
                    l.replace(|c: char| !c.is_ascii_alphabetic(), "")
                )
            })
            .unwrap_or_default();
        Ok(BASE.with(|b| {
            format!(
                "{}find?q={}&n={}{lang}",
                b.borrow(),
                q.join("+"),
                options.max_results
            )
        }))
    }
    fn parse_results(
        body: Vec<u8>,
        _content_type: String,
    ) -> Result<search_engine_api::Answer, PluginError> {
        let text = String::from_utf8_lossy(&body);
        if text.trim().eq_ignore_ascii_case("no results") {
            return Ok(search_engine_api::Answer::NoResults(
                text.trim().to_string(),
            ));
        }
        Ok(search_engine_api::Answer::Hits(
            text.lines()
                .filter_map(|l| l.split_once('\t'))
                .enumerate()
                .map(|(i, (url, title))| search_engine_api::Hit {
                    rank: i as u32 + 1,
                    url: url.to_string(),
                    title: title.to_string(),
                    snippet: String::new(),
                })
                .collect(),
        ))
    }
}

impl collection_index_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        Ok(())
    }
    fn write_index(
        run: collection_index_api::Collection,
        pages: Vec<collection_index_api::MainPage>,
        gone: Vec<collection_index_api::GonePage>,
        paths: Vec<String>,
    ) -> Result<(), PluginError> {
        let first = pages.first().map_or_else(String::new, |p| {
            let change = match p.change {
                collection_index_api::Change::New => "new",
                collection_index_api::Change::Changed => "changed",
                collection_index_api::Change::Unchanged => "unchanged",
                collection_index_api::Change::NotRetrieved => "not-retrieved",
                collection_index_api::Change::Carried => "carried",
            };
            format!("{} ({change})", p.url)
        });
        let line = format!(
            "profile={} pages={} gone={} paths={} first={first}",
            run.profile,
            pages.len(),
            gone.len(),
            paths.join(","),
        );
        kv::set("index", line.as_bytes()).map_err(|message| PluginError { message })
    }
}

#[cfg(target_arch = "wasm32")]
export!(Legacy);
