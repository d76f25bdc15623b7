//! The World Wide Web Worm (seed 001, part 2): its archive file and, built
//! on the store, the search over titles, anchor text and URL components.

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod archive;
pub mod index;
mod query;
pub mod search;

use spinneret_store::Store;

/// Bring the search index of `store` (at `dir`) up to date when it is
/// behind (a no-op otherwise); `say` hears what was done.
pub fn refresh_index(
    store: &Store,
    dir: &std::path::Path,
    say: &mut dyn FnMut(String),
) -> anyhow::Result<()> {
    if index::is_current(store, dir)? {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let s = index::update(store, dir, false)?;
    let library = match s.postings {
        0 => String::new(),
        n => format!(" and {n} library postings"),
    };
    say(format!(
        "search index {}: {} entries from {} of {} documents{library} in {:.2?}",
        if s.full { "built" } else { "updated" },
        s.entries,
        s.changed_documents,
        s.documents,
        started.elapsed()
    ));
    Ok(())
}
