//! The network layer: everything between a stage that wants a URL and the
//! bytes of its answer, shared by every stage that fetches (the crawl, the
//! collector, the search-engine queries and the plugins' `http`).
//!
//! - [`fetch`]: one request as asked (polite headers, the body cap, decoding,
//!   `file:` URLs, the address rule at connection time, typed errors).
//! - [`robots`]: robots.txt read as rules, in both readings.
//! - [`sites`]: each site's politeness state (connections, interval,
//!   Crawl-delay, Retry-After) and robots.txt reading, one per site for a
//!   whole run, whoever asks first.
//! - [`redirect`]: the one rule for following a redirect.
//! - [`network`]: the polite path for a stage that does not run its own
//!   scheduler: avoid rules, the address rule, robots.txt, the site's turn,
//!   the fetch and its retries, each refusal a [`NetError`].

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod fetch;
pub mod network;
pub mod redirect;
pub mod robots;
pub mod sites;

pub use network::{NetError, Network, NetworkSettings};
