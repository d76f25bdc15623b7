//! The `output` import of the worlds that write files (`reporter`,
//! `collection-index`): a plugin's own directory, through the host.

/// Where a reporter or a collection index writes: its output directory
/// through the host, or memory in tests ([`crate::testing::MemoryOutput`]). Paths are relative and use `/`.
pub trait Output {
    /// Write a whole file (atomically, in the host).
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String>;
    /// Add to the end of the new version of a file, which replaces the old
    /// one when the report finishes well (a report written as it goes).
    fn append(&mut self, path: &str, contents: &[u8]) -> Result<(), String>;
    /// Add what has been appended to `part` to the end of the new version
    /// of `path`, and drop `part`: a report written in sections out of
    /// order (a table written as findings come, put above the documents
    /// written before them) without holding a section in memory.
    fn append_file(&mut self, path: &str, part: &str) -> Result<(), String>;
    /// Whether a file exists (without reading it).
    fn exists(&self, path: &str) -> bool;
    /// Read a file written earlier (e.g. by the previous run).
    fn read(&self, path: &str) -> Option<Vec<u8>>;
    /// Rename a file (e.g. keep the prior version of an index).
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String>;
}

/// The output directory, through the host. Appends are gathered and
/// handed to the host in pieces of about 64 KiB (one host call each); the
/// export macro flushes at the end of every call.
#[derive(Default)]
pub struct HostOutput {
    /// The path being appended to and what waits to be appended.
    buffer: Option<(String, Vec<u8>)>,
}

/// How much an [`HostOutput`] gathers before it hands an append to the host.
const APPEND_PIECE: usize = 64 * 1024;

impl HostOutput {
    /// Hand what waits to the host.
    pub fn flush(&mut self) -> Result<(), String> {
        match self.buffer.take() {
            Some((path, bytes)) if !bytes.is_empty() => host::append(&path, &bytes),
            _ => Ok(()),
        }
    }
}

impl Output for HostOutput {
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        self.flush()?;
        host::write(path, contents)
    }
    fn append(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        // Nothing to add: no host call, and the gathered piece of another
        // path is not cut short (a report writing to several files in turn
        // often has nothing for one of them).
        if contents.is_empty() {
            return Ok(());
        }
        if self.buffer.as_ref().is_some_and(|(p, _)| p != path) {
            self.flush()?;
        }
        let (_, bytes) = self
            .buffer
            .get_or_insert_with(|| (path.to_string(), Vec::with_capacity(APPEND_PIECE)));
        bytes.extend_from_slice(contents);
        if bytes.len() >= APPEND_PIECE {
            self.flush()?;
        }
        Ok(())
    }
    fn append_file(&mut self, path: &str, part: &str) -> Result<(), String> {
        self.flush()?;
        host::append_file(path, part)
    }
    fn exists(&self, path: &str) -> bool {
        host::exists(path)
    }
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        host::read(path)
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.flush()?;
        host::rename(from, to)
    }
}

/// The `output` import, or (natively) an error that says to use
/// [`crate::testing::MemoryOutput`].
// `pub` for the generated imports' sake, which stand in the same place on
// wasm32; the module itself is private.
#[allow(unreachable_pub)]
mod host {
    // The import as generated for the world the plugin implements (each
    // kind's bindings claim that kind's exports).
    #[cfg(all(
        target_arch = "wasm32",
        feature = "collection-index",
        not(feature = "reporter")
    ))]
    pub use crate::collection_index::bindings::spinneret::plugin::output::{
        append, append_file, exists, read, rename, write,
    };
    #[cfg(all(target_arch = "wasm32", feature = "reporter"))]
    pub use crate::reporter::bindings::spinneret::plugin::output::{
        append, append_file, exists, read, rename, write,
    };

    #[cfg(not(target_arch = "wasm32"))]
    const NATIVE: &str =
        "HostOutput exists only inside the host; use testing::MemoryOutput in tests";
    #[cfg(not(target_arch = "wasm32"))]
    pub fn write(_path: &str, _contents: &[u8]) -> Result<(), String> {
        Err(NATIVE.into())
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn append(_path: &str, _contents: &[u8]) -> Result<(), String> {
        Err(NATIVE.into())
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn append_file(_path: &str, _part: &str) -> Result<(), String> {
        Err(NATIVE.into())
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn exists(_path: &str) -> bool {
        false
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(_path: &str) -> Option<Vec<u8>> {
        None
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub fn rename(_from: &str, _to: &str) -> Result<(), String> {
        Err(NATIVE.into())
    }
}
