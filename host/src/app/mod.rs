//! The app layer: what a run of spinneret does, over the crawl, the plugin
//! host, the store and the stages, for the CLI and `watch` to call.

pub mod collect;
pub mod preflight;
pub mod query;
pub mod run;
