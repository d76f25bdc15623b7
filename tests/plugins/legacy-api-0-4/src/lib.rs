//! A plugin built against `spinneret:plugin@0.4.0`, as a third party's
//! component shared as a bundle before 0.5.0 was released would be: its
//! bindings come straight from `wit/since_v0.4.0` (not the SDK, which
//! follows the newest API). It exports every 0.4 plugin interface at once,
//! so one component exercises each world's 0.4 arm in the host; it imports
//! only what every world's linker offers (`log`, `kv`). The search engine
//! comes first, so the host identifies the component as one.
//!
//! Every world behaves as the 0.3 fixture's (`../legacy-api/src/shared.rs`
//! and `../legacy-api-0-3/src/since_0_3.rs`, which this one includes); its
//! fetch hook adds `x-legacy: 0.4`. 0.4.0 differs from 0.3.0 on the
//! reporter's side alone (its `task-document`s carry `lines`, which a 0.4
//! reporter asks for with `wants.lines`), and 0.5.0 from 0.4.0 there too
//! (the `columns` beside them): the host's 0.4 arm drops the columns.

// wit-bindgen's exports are `#[export_name]` functions, which the workspace's
// `unsafe_code` lint counts as unsafe; the SDK's plugins get them from the
// SDK's macros, this one straight from wit-bindgen.
#![allow(unsafe_code, missing_docs)]

wit_bindgen::generate!({
    inline: "
        package test:legacy;
        world legacy {
            import spinneret:plugin/log@0.4.0;
            import spinneret:plugin/kv@0.4.0;
            export spinneret:plugin/search-engine-api@0.4.0;
            export spinneret:plugin/reporter-api@0.4.0;
            export spinneret:plugin/detector-api@0.4.0;
            export spinneret:plugin/policy-api@0.4.0;
            export spinneret:plugin/fetch-hook-api@0.4.0;
            export spinneret:plugin/parser-api@0.4.0;
            export spinneret:plugin/collection-index-api@0.4.0;
        }
    ",
    path: "../../../wit/since_v0.4.0",
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
const API: &str = "0.4";

/// What the reporter wants beyond results, documents and findings: the
/// lines of the references (new in 0.4.0).
fn more_wants() -> reporter_api::Wants {
    reporter_api::Wants::LINES
}

/// A document's lines, as a 0.4 reporter is handed them.
fn lines_of(d: &reporter_api::TaskDocument) -> &[u32] {
    &d.lines
}

include!("../../legacy-api/src/shared.rs");

include!("../../legacy-api-0-3/src/since_0_3.rs");

#[cfg(target_arch = "wasm32")]
export!(Legacy);
