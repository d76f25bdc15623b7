//! Report generators (the `reporter` world).
//!
//! Implement [`Reporter`] and call [`export_reporter!`](crate::export_reporter).
//! The host calls, for each task: [`Reporter::begin`], [`Reporter::on_result`]
//! for every URL the task reached, [`Reporter::on_document`] for each of its
//! documents, [`Reporter::on_finding`] for each finding, then
//! [`Reporter::finish`], which writes files through an [`Output`]. (The host
//! hands results, documents and findings over in batches; the export macro
//! calls the trait's method for each.)

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
pub use bindings::exports::spinneret::plugin::reporter_api::{Reached, Role, TaskDocument};

/// Where a reporter writes: the task's output directory through the host, or
/// memory in tests ([`crate::testing::MemoryOutput`]). Paths are relative and use `/`.
pub trait Output {
    /// Write a whole file (atomically, in the host).
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String>;
    /// Read a file written earlier (e.g. by the previous run).
    fn read(&self, path: &str) -> Option<Vec<u8>>;
    /// Rename a file (e.g. keep the prior version of an index).
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String>;
}

/// The task's output directory, through the host.
pub struct HostOutput;

#[cfg(target_arch = "wasm32")]
impl Output for HostOutput {
    fn write(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        bindings::spinneret::plugin::output::write(path, contents)
    }
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        bindings::spinneret::plugin::output::read(path)
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        bindings::spinneret::plugin::output::rename(from, to)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Output for HostOutput {
    fn write(&mut self, _path: &str, _contents: &[u8]) -> Result<(), String> {
        Err("HostOutput exists only inside the host; use testing::MemoryOutput in tests".into())
    }
    fn read(&self, _path: &str) -> Option<Vec<u8>> {
        None
    }
    fn rename(&mut self, _from: &str, _to: &str) -> Result<(), String> {
        Err("HostOutput exists only inside the host; use testing::MemoryOutput in tests".into())
    }
}

/// A report generator.
pub trait Reporter: Sized + 'static {
    /// Build the reporter from its configuration (the `config` table of its
    /// `[[plugin]]` entry, as JSON); an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// A task's report begins (reset per-task state here).
    fn begin(&mut self, run: RunInfo, task: TaskInfo) -> Result<(), String>;
    /// A URL the task reached, what checking it found, and its role.
    fn on_result(&mut self, outcome: CheckResult, role: Role) {
        let _ = (outcome, role);
    }
    /// A document of the task.
    fn on_document(&mut self, document: Document, outcome: CheckResult) {
        let _ = (document, outcome);
    }
    /// A finding about the task.
    fn on_finding(&mut self, finding: Finding) {
        let _ = finding;
    }
    /// Write the report.
    fn finish(&mut self, out: &mut dyn Output) -> Result<(), String>;
}

/// Export a [`Reporter`] implementation as the component's `reporter-api`.
#[macro_export]
macro_rules! export_reporter {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretReporterExport;

        $crate::__plugin_state!($t, $crate::reporter::Reporter);

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
            ) -> ::std::result::Result<(), $crate::reporter::PluginError> {
                __spinneret_with(|r| $crate::reporter::Reporter::begin(r, run, task))?
                    .map_err(|message| $crate::reporter::PluginError { message })
            }
            fn on_results(results: ::std::vec::Vec<$crate::reporter::Reached>) {
                let _ = __spinneret_with(|r| {
                    for reached in results {
                        $crate::reporter::Reporter::on_result(r, reached.outcome, reached.role);
                    }
                });
            }
            fn on_documents(documents: ::std::vec::Vec<$crate::reporter::TaskDocument>) {
                let _ = __spinneret_with(|r| {
                    for d in documents {
                        $crate::reporter::Reporter::on_document(r, d.document, d.outcome);
                    }
                });
            }
            fn on_findings(findings: ::std::vec::Vec<$crate::reporter::Finding>) {
                let _ = __spinneret_with(|r| {
                    for finding in findings {
                        $crate::reporter::Reporter::on_finding(r, finding);
                    }
                });
            }
            fn finish() -> ::std::result::Result<(), $crate::reporter::PluginError> {
                __spinneret_with(|r| {
                    $crate::reporter::Reporter::finish(r, &mut $crate::reporter::HostOutput)
                })?
                .map_err(|message| $crate::reporter::PluginError { message })
            }
        }

        // The component's exports exist only in the wasm build; natively the
        // logic is tested through `spinneret_sdk::testing`.
        #[cfg(target_arch = "wasm32")]
        $crate::reporter::bindings::export_reporter_bindings!(__SpinneretReporterExport);
    };
}
