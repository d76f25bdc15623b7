//! GENVL, the user-edited virtual library (seed 001, part 1), served under
//! `/library` by `spinneret serve`: a tree of virtual libraries whose
//! postings are pointers, reports and sub-libraries, each with its
//! sequence number, changed through HTML forms that need no JavaScript.
//!
//! - [`input`]: what the forms accept (titles, http(s) URLs only, reports'
//!   HTML sanitised, the Pointers operation's pasted list);
//! - [`auth`]: posting passwords (argon2id hashes), moderators' sessions,
//!   the CSRF token of every form, and the bound on wrong passwords;
//! - [`request`]: what every request goes through (who asks, its form
//!   and CSRF check, the store, the answer);
//! - [`pages`]: the pages and the operations of Table 3;
//! - [`publish`]: the library as a static HTML tree (a `library` task
//!   publishes it and checks every pointer on it);
//! - [`transfer`]: the library as one JSON file (export, checked import);
//! - [`coupling`]: what a run takes from the library (the `library`
//!   task's pages, the Worm VL's tops).
//!
//! The library itself lives in the store ([`spinneret_store::Posting`]).

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod auth;
pub mod coupling;
pub mod input;
pub mod pages;
pub mod publish;
pub mod request;
pub mod transfer;

/// The root library's title when a store has no library yet.
pub const DEFAULT_TITLE: &str = "The Virtual Library";
