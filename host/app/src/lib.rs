//! The app layer: what a run of spinneret does, over the crawl, the plugin
//! host, the store and the stages, for the command line (`crawl`,
//! `check`, `worker`, `watch`, `collect`) to call: a whole run
//! ([`run::run_once`]), the checks before its first request
//! ([`preflight`]), and how a person stops it ([`stop`]). It prints
//! nothing of its own but what a signal is answered with; what a run did
//! comes back for the command line to say and to turn into an exit code.

// Each dependency listed is used.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub use spinneret_collect::{collect, query};
pub mod preflight;
pub mod run;
pub mod stop;
