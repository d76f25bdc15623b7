//! The end-to-end tests: spinneret run against the loopback test web, one
//! module per area. One test binary (rather than one per file) so the host
//! is linked once.

mod common;

mod check_flags;
mod check_inputs;
mod check_outcomes;
mod cli;
mod collect_archive;
mod collect_engine;
mod collect_profile;
mod containment;
mod crawl_hooks;
mod docs;
mod fetch_behaviour;
mod formats;
mod index_browser;
mod legacy_api;
mod library;
mod library_browser;
mod mail;
mod maintenance;
mod mirror_browser;
mod momspider;
mod plugin_new;
mod plugin_run;
mod postgres;
mod readme;
mod reports;
mod resume;
mod robots;
mod sandbox;
mod serve;
mod serve_browser;
mod share;
mod snatch;
mod traps;
mod watch;
mod workers;
mod wwww;
