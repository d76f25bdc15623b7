//! A plugin built against `spinneret:plugin@0.2.0`, as a third party's
//! component shared as a bundle before 0.3.0 was released would be: its
//! bindings come straight from `wit/since_v0.2.0` (not the SDK, which
//! follows the newest API). It exports every 0.2 plugin interface at once,
//! so one component exercises each world's 0.2 arm in the host; it imports
//! only what every world's linker offers (`log`, `kv`). The search engine
//! comes first, so the host identifies the component as one (`spinneret
//! query` runs it).
//!
//! What each part does, so the tests can tell it ran:
//! - reporter: counts what it is handed and, at `finish`, stores
//!   `results=R documents=D findings=F roles=…` under the kv key `report`;
//! - detector: needs references; a URL whose content hash changed is a
//!   `legacy-changed` warning naming how many references it has now;
//! - policy: uses the task and depth; avoids `/private/`, makes images
//!   leaves below depth 1;
//! - fetch hook: vetoes URLs holding `veto`, adds `x-legacy: 0.2`, calls a
//!   200 whose body holds "not found" broken;
//! - parser: reads `text/uri-list` (one URL a line, `#` comments);
//! - search engine: asks `BASE/find?q=…&n=N` and reads `URL<TAB>TITLE`
//!   lines; `base` is its configuration.

// wit-bindgen's exports are `#[export_name]` functions, which the workspace's
// `unsafe_code` lint counts as unsafe; the SDK's plugins get them from the
// SDK's macros, this one straight from wit-bindgen.
#![allow(unsafe_code, missing_docs)]

wit_bindgen::generate!({
    inline: "
        package test:legacy;
        world legacy {
            import spinneret:plugin/log@0.2.0;
            import spinneret:plugin/kv@0.2.0;
            export spinneret:plugin/search-engine-api@0.2.0;
            export spinneret:plugin/reporter-api@0.2.0;
            export spinneret:plugin/detector-api@0.2.0;
            export spinneret:plugin/policy-api@0.2.0;
            export spinneret:plugin/fetch-hook-api@0.2.0;
            export spinneret:plugin/parser-api@0.2.0;
        }
    ",
    path: "../../../wit/since_v0.2.0",
    world: "legacy",
    generate_all,
});

use exports::spinneret::plugin::{
    detector_api, fetch_hook_api, parser_api, policy_api, reporter_api, search_engine_api,
};
use spinneret::plugin::types::{Category, PluginError, RefKind, Reference, Severity};
use spinneret::plugin::{kv, log};
use std::cell::RefCell;

/// The API version the fetch hook names in its header.
const API: &str = "0.2";

/// What the reporter wants beyond results, documents and findings: nothing
/// more (0.2's documents have no lines).
fn more_wants() -> reporter_api::Wants {
    reporter_api::Wants::empty()
}

/// A document's lines: 0.2's documents have none.
fn lines_of(_d: &reporter_api::TaskDocument) -> &[u32] {
    &[]
}

include!("shared.rs");

impl search_engine_api::Guest for Legacy {
    fn configure(config: String) -> Result<(), PluginError> {
        configure_base(&config)
    }
    fn query_url(
        keywords: Vec<String>,
        options: search_engine_api::SearchOptions,
    ) -> Result<String, PluginError> {
        let q: Vec<String> = keywords
            .iter()
            .flat_map(|k| k.split_whitespace())
            .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect())
            .collect();
        Ok(BASE.with(|b| {
            format!(
                "{}find?q={}&n={}",
                b.borrow(),
                q.join("+"),
                options.max_results
            )
        }))
    }
    fn parse_results(
        body: Vec<u8>,
        _content_type: String,
    ) -> Result<Vec<search_engine_api::Hit>, PluginError> {
        let text = String::from_utf8_lossy(&body);
        Ok(text
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .enumerate()
            .map(|(i, (url, title))| search_engine_api::Hit {
                rank: i as u32 + 1,
                url: url.to_string(),
                title: title.to_string(),
                snippet: String::new(),
            })
            .collect())
    }
}

#[cfg(target_arch = "wasm32")]
export!(Legacy);
