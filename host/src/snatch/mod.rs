//! WebSnatcher (seed 004): profile-driven prefetching of URLs, bookmarks and
//! search results into a mirror a person can browse with no network.
//!
//! - [`profile`]: what to collect (URLs, bookmarks, interests, engines).
//! - [`bookmarks`]: a browser's bookmarks (Netscape HTML, Firefox and Chromium JSON).
//! - [`names`]: where each retrieved resource goes in the mirror.
//! - [`mirror`]: the mirror written, category by category, its links converted.
//! - [`warc`]: the WARC 1.1 file of a run.
//! - [`convert`]: what a page links to and needs (its requisites), and saved
//!   pages' links turned into mirror paths or absolute URLs.
//! - [`index`]: the mirror's index page; [`archive`]: archived pages and
//!   their index; [`runs`]: the runs' files and the mirror's state.
//! - [`edit`]: the profile file edited from the command line (`spinneret
//!   profile`), its comments and layout kept.
//!
//! A run (`spinneret collect`) is `crate::app::collect`; its engines are
//! asked by `crate::app::query`.

pub mod archive;
pub mod bookmarks;
pub mod convert;
pub mod edit;
pub mod index;
pub mod mirror;
pub mod names;
pub mod profile;
pub mod runs;
pub mod warc;
