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

pub use crate::output::{HostOutput, Output};

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

/// The kind of the host's own finding for a link whose fragment names no
/// place in its target (`page.html#section` with no `id="section"` there):
/// its `url` is the link, its `referrer` the page with the link.
pub const BROKEN_FRAGMENT: &str = "broken-fragment";

/// How many URLs of the task `counts` are in `category`.
pub fn category_count(counts: &TaskCounts, category: Category) -> u64 {
    counts
        .by_category
        .iter()
        .find(|(c, _)| *c == category)
        .map_or(0, |(_, n)| *n)
}

/// How many findings of `kind` the task has, as `counts` tells.
pub fn finding_count(counts: &TaskCounts, kind: &str) -> u64 {
    counts
        .findings
        .iter()
        .find(|(k, _)| k == kind)
        .map_or(0, |(_, n)| *n)
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
