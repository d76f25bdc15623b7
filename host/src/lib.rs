//! spinneret: a polite web-maintenance spider (MOMspider's design, in Rust).
//!
//! A run is a pipeline, data flowing forward; this crate holds its top
//! layers, the crates below hold the rest:
//!
//! ```text
//! config -> crawl (spinneret-crawl) -> store (spinneret-store) -> report -> notify
//!                  plugins: spinneret-plugin-host, shared as bundles: spinneret-bundle
//! ```
//!
//! - [`config`]: the TOML configuration and MOMspider instruction files,
//!   validated with located errors; it makes the crawl's plan.
//! - [`report`]: the report stage, the change detectors and reporters.
//! - [`notify`]: mail to the owners.
//! - [`app`]: a whole run (`app::run::run_once`) and the checks before it.
//! - [`cli`]: the `spinneret` command line.
#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod cli;
pub use spinneret_app as app;
pub use spinneret_collect as snatch;
pub use spinneret_config as config;
pub use spinneret_library as library;
pub use spinneret_report as report;
pub use spinneret_report::notify;
pub use spinneret_serve as serve;
pub use spinneret_worm as wwww;
