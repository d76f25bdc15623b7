//! The World Wide Web Worm (seed 001, part 2): its archive file and, built
//! on the store, the search over titles, anchor text and URL components.

pub mod archive;
