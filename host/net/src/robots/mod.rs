//! robots.txt read as rules: Koster's draft ([`rules`]) and RFC 9309
//! ([`rfc9309`]) side by side. Fetching the file is [`crate::fetch::robots`];
//! each site's reading, shared by every caller of a run, is [`crate::sites`].

pub mod rfc9309;
pub mod rules;

pub use rfc9309::RobotsMode;
pub use rules::{RobotsRule, RobotsRules};
