//! Change detectors (the `change-detector` world).
//!
//! Implement [`Detector`] and call [`export_detector!`](crate::export_detector).
//! For each task, the host calls [`Detector::compare`] once per URL the task
//! reached, with what the previous run saw of it (none on its first run)
//! and what this run saw; the findings returned go to the task's reporters
//! and are stored with the run. (The host hands the URLs over in batches;
//! the export macro calls `compare` for each.)

/// The generated bindings of the `change-detector` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "change-detector",
        "export_detector_bindings",
        "spinneret_sdk::detector::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::detector_api::{Comparison, Needs, Snapshot};

/// A change detector.
pub trait Detector: Sized + 'static {
    /// Build the detector from its configuration (the `config` table of its
    /// `[[plugin]]` entry, as JSON); an error is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// What the detector needs in the snapshots beyond the results (all,
    /// unless it says otherwise): without [`Needs::REFERENCES`] each
    /// document's `references` come empty, which saves the host reading them.
    fn needs(&self) -> Needs {
        Needs::REFERENCES
    }
    /// Compare a URL's `previous` snapshot (none on its first run) with its
    /// `current` one, for `task`; `now` is the run's start (Unix seconds).
    /// The host fills in each finding's `source`.
    fn compare(
        &mut self,
        task: &TaskInfo,
        now: i64,
        previous: Option<&Snapshot>,
        current: &Snapshot,
    ) -> Vec<Finding>;
}

/// Export a [`Detector`] implementation as the component's `detector-api`.
#[macro_export]
macro_rules! export_detector {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretDetectorExport;

        $crate::__plugin_state!($t, $crate::detector::Detector);

        impl $crate::detector::bindings::exports::spinneret::plugin::detector_api::Guest
            for __SpinneretDetectorExport
        {
            fn configure(config: String) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn declare() -> $crate::detector::Needs {
                __spinneret_with(|d| $crate::detector::Detector::needs(d))
                    .unwrap_or($crate::detector::Needs::REFERENCES)
            }
            fn compare(
                task: $crate::types::TaskInfo,
                now: i64,
                comparisons: ::std::vec::Vec<$crate::detector::Comparison>,
            ) -> ::std::vec::Vec<$crate::types::Finding> {
                __spinneret_with(|d| {
                    comparisons
                        .iter()
                        .flat_map(|c| {
                            $crate::detector::Detector::compare(
                                d,
                                &task,
                                now,
                                c.previous.as_ref(),
                                &c.current,
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::detector::bindings::export_detector_bindings!(__SpinneretDetectorExport);
    };
}
