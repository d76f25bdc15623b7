//! Test support for spinneret: the loopback test web ([`server`]), standard
//! fixture webs ([`fixtures`]), the synthetic web of the benchmark
//! ([`synthetic`]), helpers to run crawls against them ([`harness`]), and
//! headless Chromium for pages a person looks at ([`browser`]).

pub mod browser;
pub mod fixtures;
pub mod harness;
pub mod registry;
pub mod server;
pub mod smtp;
pub mod synthetic;
