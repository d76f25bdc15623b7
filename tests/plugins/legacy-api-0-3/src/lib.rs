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
//! New in 0.3, and so here and in the 0.4 fixture, which includes them
//! (`since_0_3.rs`):
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

/// What the reporter wants beyond results, documents and findings: nothing
/// more (0.3's documents have no lines).
fn more_wants() -> reporter_api::Wants {
    reporter_api::Wants::empty()
}

/// A document's lines: 0.3's documents have none.
fn lines_of(_d: &reporter_api::TaskDocument) -> &[u32] {
    &[]
}

include!("../../legacy-api/src/shared.rs");

include!("since_0_3.rs");

#[cfg(target_arch = "wasm32")]
export!(Legacy);
