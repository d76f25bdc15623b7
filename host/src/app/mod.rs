//! The app layer: what a run of spinneret does, over the crawl, the plugin
//! host, the store and the stages, for the CLI and `watch` to call.

pub use spinneret_collect::{collect, query};
pub mod preflight;
pub mod run;
pub mod stop;
