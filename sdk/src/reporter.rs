//! Report generators (the `reporter` world).
//!
//! Implement [`Reporter`] and call [`export_reporter!`](crate::export_reporter).
//! The host calls, for each task: [`Reporter::begin`] (with the task's
//! counts), [`Reporter::on_result`] for every URL the task reached (in URL
//! order), [`Reporter::on_document`] for each of its documents (each with
//! what the run found at its references' targets), [`Reporter::on_finding`]
//! for each finding (with where the documents refer to its URL), then
//! [`Reporter::finish`]. Every call gets the task's [`Output`]: write as the
//! items come with [`Output::append`], and a report of a million URLs needs
//! no more memory than one of ten. (The host hands the items over in
//! batches; the export macro calls the trait's method for each.)

/// The generated bindings of the `reporter` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "reporter",
        "export_reporter_bindings",
        "spinneret_sdk::reporter::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::reporter_api::{
    Place, Reached, Role, Target, TaskCounts, TaskDocument, TaskFinding, Wants,
};

/// Where a reporter writes: the task's output directory through the host, or
/// memory in tests ([`crate::testing::MemoryOutput`]). Paths are relative and use `/`.
pub trait Output {
    /// Write a whole file (atomically, in the host).
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String>;
    /// Add to the end of the new version of a file, which replaces the old
    /// one when the report finishes well (a report written as it goes).
    fn append(&mut self, path: &str, contents: &[u8]) -> Result<(), String>;
    /// Whether a file exists (without reading it).
    fn exists(&self, path: &str) -> bool;
    /// Read a file written earlier (e.g. by the previous run).
    fn read(&self, path: &str) -> Option<Vec<u8>>;
    /// Rename a file (e.g. keep the prior version of an index).
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String>;
}

/// The task's output directory, through the host. Appends are gathered and
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
mod host {
    #[cfg(target_arch = "wasm32")]
    pub use super::bindings::spinneret::plugin::output::{append, exists, read, rename, write};

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

/// The order the host hands findings over in (as the WIT's `on-findings`
/// says): these kinds first, the seed's changes, then any other kind
/// alphabetically.
pub const FINDING_KIND_ORDER: [&str; 6] = [
    "broken",
    "blocked",
    "moved",
    "expiring",
    "recently-modified",
    "content-changed",
];

/// Where a finding kind comes in the host's order: sorting by it puts
/// findings (or counts per kind) in the order they are handed over.
pub fn finding_kind_rank(kind: &str) -> (usize, &str) {
    match FINDING_KIND_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, ""),
        None => (FINDING_KIND_ORDER.len(), kind),
    }
}

/// Every kind of item, documents with their targets: what a reporter wants
/// unless it says otherwise.
pub fn every_item() -> Wants {
    Wants::RESULTS | Wants::DOCUMENTS | Wants::TARGETS | Wants::FINDINGS
}

/// Whether `wants` includes `kind`.
pub fn wanted(wants: Wants, kind: Wants) -> bool {
    wants.bits() & kind.bits() == kind.bits()
}

/// A report generator. Each method but `configure` gets the task's output,
/// so a report can be written as the items come ([`Output::append`]) and
/// nothing needs to be kept for `finish`. An error from `begin` or an
/// `on_*` method ends the task's report: the items after it are not handed
/// over, and it is the report's failure (new versions of files are thrown away).
pub trait Reporter: Sized + 'static {
    /// Build the reporter from its configuration (the `config` table of its
    /// `[[plugin]]` entry, as JSON); an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// A task's report begins (reset per-task state here), with how many
    /// results, documents, references and findings of each kind follow.
    fn begin(
        &mut self,
        run: RunInfo,
        task: TaskInfo,
        counts: TaskCounts,
        out: &mut dyn Output,
    ) -> Result<(), String>;
    /// Which items the reporter wants handed over (all, unless it says
    /// otherwise): the host skips the calls for the others, and without
    /// [`Wants::TARGETS`] hands each document's `targets` over empty.
    fn wants(&self) -> Wants {
        every_item()
    }
    /// A URL the task reached, what checking it found, and its role (in URL order).
    fn on_result(
        &mut self,
        outcome: CheckResult,
        role: Role,
        out: &mut dyn Output,
    ) -> Result<(), String> {
        let _ = (outcome, role, out);
        Ok(())
    }
    /// A document of the task, with what the run found at each of its
    /// references' targets, in URL order (a document with very many
    /// references comes in parts: see [`TaskDocument`]).
    fn on_document(&mut self, document: TaskDocument, out: &mut dyn Output) -> Result<(), String> {
        let _ = (document, out);
        Ok(())
    }
    /// A finding about the task, with where its documents refer to its URL
    /// (grouped by kind, in the order the WIT gives).
    fn on_finding(&mut self, finding: TaskFinding, out: &mut dyn Output) -> Result<(), String> {
        let _ = (finding, out);
        Ok(())
    }
    /// Finish the report.
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String>;
}

#[doc(hidden)]
/// What the export macro keeps for a task: the output, and the first error
/// of an `on_*` call (`finish` returns it).
#[derive(Default)]
pub struct TaskState {
    /// The output directory.
    pub out: HostOutput,
    /// The first error, if any.
    pub failed: Option<String>,
}

impl TaskState {
    /// Run `f` on each item unless an earlier call failed; keep the first error.
    pub fn each<T>(
        &mut self,
        items: Vec<T>,
        mut f: impl FnMut(T, &mut dyn Output) -> Result<(), String>,
    ) {
        if self.failed.is_some() {
            return;
        }
        for item in items {
            if let Err(e) = f(item, &mut self.out) {
                self.failed = Some(e);
                return;
            }
        }
        if let Err(e) = self.out.flush() {
            self.failed = Some(e);
        }
    }
}

/// Export a [`Reporter`] implementation as the component's `reporter-api`.
#[macro_export]
macro_rules! export_reporter {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretReporterExport;

        $crate::__plugin_state!($t, $crate::reporter::Reporter);

        ::std::thread_local! {
            static __SPINNERET_TASK: ::std::cell::RefCell<$crate::reporter::TaskState> =
                ::std::cell::RefCell::new(::std::default::Default::default());
        }

        impl $crate::reporter::bindings::exports::spinneret::plugin::reporter_api::Guest
            for __SpinneretReporterExport
        {
            fn configure(
                config: String,
            ) -> ::std::result::Result<(), $crate::reporter::PluginError> {
                __spinneret_configure(&config)
            }
            fn begin(
                run: $crate::reporter::RunInfo,
                task: $crate::reporter::TaskInfo,
                counts: $crate::reporter::TaskCounts,
            ) -> ::std::result::Result<$crate::reporter::Wants, $crate::reporter::PluginError> {
                __SPINNERET_TASK.with(|t| {
                    let mut t = t.borrow_mut();
                    *t = ::std::default::Default::default();
                    let t = &mut *t;
                    __spinneret_with(|r| {
                        $crate::reporter::Reporter::begin(r, run, task, counts, &mut t.out)
                            .and_then(|()| t.out.flush())
                            .map(|()| $crate::reporter::Reporter::wants(r))
                    })?
                    .map_err(|message| $crate::reporter::PluginError { message })
                })
            }
            fn on_results(results: ::std::vec::Vec<$crate::reporter::Reached>) {
                __SPINNERET_TASK.with(|t| {
                    let _ = __spinneret_with(|r| {
                        t.borrow_mut().each(results, |x, out| {
                            $crate::reporter::Reporter::on_result(r, x.outcome, x.role, out)
                        })
                    });
                })
            }
            fn on_documents(documents: ::std::vec::Vec<$crate::reporter::TaskDocument>) {
                __SPINNERET_TASK.with(|t| {
                    let _ = __spinneret_with(|r| {
                        t.borrow_mut().each(documents, |d, out| {
                            $crate::reporter::Reporter::on_document(r, d, out)
                        })
                    });
                })
            }
            fn on_findings(findings: ::std::vec::Vec<$crate::reporter::TaskFinding>) {
                __SPINNERET_TASK.with(|t| {
                    let _ = __spinneret_with(|r| {
                        t.borrow_mut().each(findings, |f, out| {
                            $crate::reporter::Reporter::on_finding(r, f, out)
                        })
                    });
                })
            }
            fn finish() -> ::std::result::Result<(), $crate::reporter::PluginError> {
                __SPINNERET_TASK.with(|t| {
                    let mut t = t.borrow_mut();
                    if let Some(message) = t.failed.take() {
                        return Err($crate::reporter::PluginError { message });
                    }
                    let t = &mut *t;
                    __spinneret_with(|r| {
                        $crate::reporter::Reporter::finish(r, &mut t.out)
                            .and_then(|()| t.out.flush())
                    })?
                    .map_err(|message| $crate::reporter::PluginError { message })
                })
            }
        }

        // The component's exports exist only in the wasm build; natively the
        // logic is tested through `spinneret_sdk::testing`.
        #[cfg(target_arch = "wasm32")]
        $crate::reporter::bindings::export_reporter_bindings!(__SpinneretReporterExport);
    };
}
