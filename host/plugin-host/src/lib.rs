//! The plugin runtime: WebAssembly components that speak the WIT package in
//! `wit/` (one folder per API version, see [`api`]), run by wasmtime in a sandbox — no file system, environment or
//! network unless granted, a deadline on every call, a memory cap per
//! instance, a cap on output written. A plugin that traps, hangs or
//! overspends is cut off; the failure is reported and the crawl's results are
//! untouched.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod api;
pub mod bindings;
pub mod builtin;
pub mod capabilities;
pub mod collection_index;
pub mod detector;
pub mod engine;
pub mod entry;
pub mod fetch_hook;
pub mod identify;
pub mod load;
pub mod parser;
pub mod policy;
pub mod registry;
pub mod reporter;
pub mod runner;
pub mod sandbox;
pub mod search;
pub mod stats;
