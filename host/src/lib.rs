//! spinneret: a polite web-maintenance spider (MOMspider's design, in Rust).
//!
//! The crawl is a pipeline, one module per stage, data flowing forward:
//!
//! ```text
//! config -> crawl (frontier, tasks) -> policy -> fetch -> parse -> store
//! ```
//!
//! - [`config`]: the TOML configuration, validated with located errors.
//! - [`policy`]: task scope, robots.txt (Koster's draft), avoid and leaf rules.
//! - [`fetch`]: polite HTTP and `file://` requests, politeness and retries.
//! - [`parse`]: html5ever extraction of titles, metadata and references.
//! - [`store`]: the embedded SQLite store.
//! - [`crawl`]: the engine that runs every task over one shared frontier.
//! - [`cli`]: the `spinneret` command line.
#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod app;
pub mod bundle;
pub mod cli;
pub mod config;
pub mod crawl;
pub mod fetch;
pub mod notify;
pub mod parse;
pub mod policy;
pub mod report;
