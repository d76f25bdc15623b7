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
//! - [`changes`]: what changed since the last run (the index itself is
//!   written by a collection-index plugin, `builtin:websnatcher-index` by
//!   default); [`archive`]: archived pages and their index; [`runs`]: the
//!   runs' files and the mirror's state.
//! - [`edit`]: the profile file edited from the command line (`spinneret
//!   profile`), its comments and layout kept.
//!
//! - [`collect`]: a run (`spinneret collect`), on the network layer.
//! - [`query`]: one search engine asked (`spinneret query`), and the
//!   engines of a run's interests.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod archive;
pub mod bookmarks;
pub mod changes;
pub mod collect;
pub mod convert;
pub mod edit;
pub mod mirror;
pub mod names;
pub mod profile;
pub mod query;
pub mod runs;
pub mod warc;

/// Text made safe inside HTML elements and quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A byte count as people read it.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}
