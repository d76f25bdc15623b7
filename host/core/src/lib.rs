//! spinneret's bottom layer: the plain records that flow forward through a
//! crawl (what checking a URL found, what a parsed document holds), URL
//! helpers, the configuration's self-validating values, plugin grants,
//! schedules, content hashes, the one atomic file write and the TLS setup. It depends on
//! no other crate of the workspace; every other crate may depend on it.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod client;
pub mod digest;
pub mod document;
pub mod fs;
pub mod grants;
pub mod model;
pub mod schedule;
pub mod tls;
pub mod url_attributes;
pub mod urls;
pub mod values;
