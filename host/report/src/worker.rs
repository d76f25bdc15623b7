//! A worker of the report stage: the tasks it was given, their plugins
//! (each loaded on first use and kept for its other tasks), and the work the
//! reading thread hands it for them, in order. A task's detectors compare
//! batch after batch; its reporters each keep one live session from
//! `begin` to `finish`. A plugin that fails is recorded and skipped for the
//! rest of that task; everything else goes on.

use super::detect;
use super::load::{Loaded, Plugins};
use spinneret_config::TaskConfig;
use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::detector::{DetectorComparison, DetectorNeeds, DetectorSnapshot};
use spinneret_plugin_host::entry::PluginConfig;
use spinneret_plugin_host::reporter::{
    Reached, ReporterSession, TaskCounts, TaskDocument, TaskFinding, Wants,
};
use spinneret_plugin_host::sandbox::PluginFailure;
use std::collections::HashMap;
use std::sync::mpsc;

/// What a worker is handed for one of its tasks (by the task's place in the run).
pub enum Work<'c> {
    /// The task begins: its plugins are loaded (one that cannot load is a finding).
    Start(usize, Box<TaskSetup<'c>>),
    /// URLs for the task's detectors to compare.
    Compare(usize, Vec<DetectorComparison>),
    /// Detection is over: send back the task's findings.
    Detected(usize),
    /// The task's reports begin, with its counts.
    Begin(usize, TaskCounts),
    /// URLs the task reached, for its reporters.
    Results(usize, Vec<Reached>),
    /// Documents of the task, for its reporters.
    Documents(usize, Vec<TaskDocument>),
    /// Findings of the task, for its reporters.
    Findings(usize, Vec<TaskFinding>),
    /// The task's reports are complete: send back what was written.
    Finish(usize),
}

impl Work<'_> {
    /// The task (its place in the run) the work is for.
    pub fn task(&self) -> usize {
        match self {
            Work::Start(t, _)
            | Work::Compare(t, _)
            | Work::Detected(t)
            | Work::Begin(t, _)
            | Work::Results(t, _)
            | Work::Documents(t, _)
            | Work::Findings(t, _)
            | Work::Finish(t) => *t,
        }
    }
}

/// What a worker sends back.
pub enum Reply {
    /// A task's plugins are loaded: whether it has detectors and reporters.
    Started {
        /// The task's place in the run.
        task: usize,
        /// What its detectors that loaded need, together (none: it has none).
        detects: Option<DetectorNeeds>,
        /// Whether it has a reporter that loaded.
        reports: bool,
    },
    /// A task's findings and the detectors' failures.
    Detected {
        /// The task's place in the run.
        task: usize,
        /// What the detectors found, in the order found.
        findings: Vec<wit::Finding>,
        /// Detectors (and other plugins) that failed.
        failures: Vec<PluginFailure>,
    },
    /// A task's reporters began: what any of them wants handed over.
    Begun {
        /// The task's place in the run.
        task: usize,
        /// What the task's reporters want, together.
        wants: Wants,
    },
    /// A task's reports.
    Reported {
        /// The task's place in the run.
        task: usize,
        /// The reporters that wrote their report.
        written: Vec<String>,
        /// The reporters that failed.
        failures: Vec<PluginFailure>,
        /// The reporters that could not write their report, and why.
        unwritten: Vec<String>,
    },
    /// The worker panicked: no more replies come from it. (Its reader
    /// shares the reply channel with other workers, which keep it open, so
    /// without this it would wait for replies that never come.)
    Stopped,
}

/// Sends [`Reply::Stopped`] when dropped by a panicking thread.
struct StopNotice(mpsc::Sender<Reply>);

impl Drop for StopNotice {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.0.send(Reply::Stopped);
        }
    }
}

/// What a worker needs to know of a task.
pub struct TaskSetup<'c> {
    /// The task.
    pub config: &'c TaskConfig,
    /// Its record for plugins.
    pub info: wit::TaskInfo,
    /// Its plugins that run in the report stage.
    pub plugins: Vec<PluginConfig>,
    /// URLs and references it has: a reporter's output cap grows with them.
    pub items: u64,
}

/// One task's state in a worker.
struct TaskWork<'c> {
    setup: TaskSetup<'c>,
    /// Its detectors, by their place in `setup.plugins`, while they work.
    detectors: Vec<usize>,
    findings: Vec<wit::Finding>,
    failures: Vec<PluginFailure>,
    /// Its reporters' live sessions.
    sessions: Vec<ReporterSession>,
    written: Vec<String>,
    /// Its reporters whose writes the file system refused, each with the
    /// first refusal.
    unwritten: Vec<String>,
}

/// A worker: its plugins and its tasks.
pub struct Worker<'c> {
    plugins: Plugins,
    tasks: HashMap<usize, TaskWork<'c>>,
    run: &'c wit::RunInfo,
}

impl<'c> Worker<'c> {
    /// A worker with no task yet.
    pub fn new(plugins: Plugins, run: &'c wit::RunInfo) -> Worker<'c> {
        Worker {
            plugins,
            tasks: HashMap::new(),
            run,
        }
    }

    /// Do the work handed over until the reading thread is done.
    pub fn serve(mut self, work: mpsc::Receiver<Work<'c>>, reply: mpsc::Sender<Reply>) {
        let _notice = StopNotice(reply.clone());
        for w in work {
            if let Some(r) = self.handle(w)
                && reply.send(r).is_err()
            {
                return;
            }
        }
    }

    fn handle(&mut self, work: Work<'c>) -> Option<Reply> {
        match work {
            Work::Start(t, setup) => return Some(self.start(t, *setup)),
            Work::Compare(t, batch) => self.compare(t, &batch),
            Work::Detected(t) => {
                let task = self.tasks.get_mut(&t)?;
                return Some(Reply::Detected {
                    task: t,
                    findings: std::mem::take(&mut task.findings),
                    failures: std::mem::take(&mut task.failures),
                });
            }
            Work::Begin(t, counts) => return Some(self.begin(t, &counts)),
            Work::Results(t, batch) => {
                self.feed(t, |w| w.contains(Wants::RESULTS), |s| s.results(&batch))
            }
            Work::Documents(t, mut batch) => {
                // Those that want the targets first, then the others without them.
                let with_targets = Wants::DOCUMENTS | Wants::TARGETS;
                self.feed(t, |w| w.contains(with_targets), |s| s.documents(&batch));
                for d in &mut batch {
                    d.targets = Vec::new();
                }
                let without =
                    |w: Wants| w.contains(Wants::DOCUMENTS) && !w.contains(Wants::TARGETS);
                self.feed(t, without, |s| s.documents(&batch));
            }
            Work::Findings(t, batch) => {
                self.feed(t, |w| w.contains(Wants::FINDINGS), |s| s.findings(&batch))
            }
            Work::Finish(t) => {
                let mut task = self.tasks.remove(&t)?;
                for mut session in std::mem::take(&mut task.sessions) {
                    let name = session.name().to_string();
                    let started = std::time::Instant::now();
                    match session.finish() {
                        Ok(()) => {
                            tracing::debug!(
                                "{}: {name} finished its report in {} in {:.2?}",
                                task.setup.config.name,
                                task.setup.config.output.display(),
                                started.elapsed()
                            );
                            task.written.push(name);
                        }
                        Err(f) => {
                            if let Some(e) = session.unwritten() {
                                task.unwritten.push(format!("{name}: {e}"));
                            }
                            task.failures.push(f);
                        }
                    }
                }
                return Some(Reply::Reported {
                    task: t,
                    written: task.written,
                    failures: task.failures,
                    unwritten: task.unwritten,
                });
            }
        }
        None
    }

    /// Load the task's plugins; those that cannot load are its findings.
    fn start(&mut self, t: usize, setup: TaskSetup<'c>) -> Reply {
        let mut task = TaskWork {
            setup,
            detectors: Vec::new(),
            findings: Vec::new(),
            failures: Vec::new(),
            sessions: Vec::new(),
            written: Vec::new(),
            unwritten: Vec::new(),
        };
        let mut reports = false;
        let mut needs = DetectorNeeds::empty();
        for (i, p) in task.setup.plugins.iter().enumerate() {
            let failure = match self.plugins.get(p) {
                Ok(Loaded::Detector(d)) => match d.needs() {
                    Ok(n) => {
                        needs |= n;
                        task.detectors.push(i);
                        None
                    }
                    Err(f) => Some(f),
                },
                Ok(Loaded::Reporter(_)) => {
                    reports = true;
                    None
                }
                Ok(Loaded::CrawlHook) => None,
                Err(f) => Some(f.clone()),
            };
            if let Some(f) = failure {
                task.findings
                    .push(detect::failure_finding(&f, &task.setup.info.top));
                task.failures.push(f);
            }
        }
        let detects = (!task.detectors.is_empty()).then_some(needs);
        self.tasks.insert(t, task);
        Reply::Started {
            task: t,
            detects,
            reports,
        }
    }

    /// Hand a batch to each of the task's detectors still working.
    fn compare(&mut self, t: usize, batch: &[DetectorComparison]) {
        let Some(task) = self.tasks.get_mut(&t) else {
            return;
        };
        let now = self.run.started_at;
        let mut failed = Vec::new();
        // The batch without the documents' references, for the detectors
        // that do not need them (made when the first of them asks, and only
        // if it has references: when none of the task's detectors needs
        // them, the reading thread left them out already).
        let has_references = batch.iter().any(|c| {
            c.current
                .document
                .as_ref()
                .is_some_and(|d| !d.references.is_empty())
        });
        let mut heads: Option<Vec<DetectorComparison>> = None;
        for &i in &task.detectors {
            let p = &task.setup.plugins[i];
            let Ok(Loaded::Detector(d)) = self.plugins.get(p) else {
                continue;
            };
            let needs = d.needs().unwrap_or(DetectorNeeds::REFERENCES);
            let given = match has_references && !needs.contains(DetectorNeeds::REFERENCES) {
                true => heads.get_or_insert_with(|| without_references(batch)),
                false => batch,
            };
            if let Err(f) = detect::detect(now, &task.setup.info, given, d, &mut task.findings) {
                // It cannot start at all: recorded once, not asked again.
                tracing::error!("{}: {f}", task.setup.config.name);
                task.findings
                    .push(detect::failure_finding(&f, &task.setup.info.top));
                task.failures.push(f);
                failed.push(i);
            }
        }
        task.detectors.retain(|i| !failed.contains(i));
    }

    /// Begin a session of each of the task's reporters.
    fn begin(&mut self, t: usize, counts: &TaskCounts) -> Reply {
        let mut wants = Wants::empty();
        let Some(task) = self.tasks.get_mut(&t) else {
            return Reply::Begun { task: t, wants };
        };
        for p in &task.setup.plugins {
            let Ok(Loaded::Reporter(reporter)) = self.plugins.get(p) else {
                continue;
            };
            let cap = p
                .grants
                .output
                .saturating_add(p.grants.output_per_item.saturating_mul(task.setup.items));
            match reporter.begin(
                self.run,
                &task.setup.info,
                counts,
                task.setup.config.output.clone(),
                cap,
            ) {
                Ok(session) => {
                    wants |= session.wants;
                    task.sessions.push(session);
                }
                Err(f) => task.failures.push(f),
            }
        }
        Reply::Begun { task: t, wants }
    }

    /// Hand something to each live session of the task's reporters whose
    /// wants are `wanted`; a session that fails ends (what it appended is
    /// thrown away).
    fn feed(
        &mut self,
        t: usize,
        wanted: impl Fn(Wants) -> bool,
        mut call: impl FnMut(&mut ReporterSession) -> Result<(), PluginFailure>,
    ) {
        let Some(task) = self.tasks.get_mut(&t) else {
            return;
        };
        let mut i = 0;
        while i < task.sessions.len() {
            if !wanted(task.sessions[i].wants) {
                i += 1;
                continue;
            }
            match call(&mut task.sessions[i]) {
                Ok(()) => i += 1,
                Err(f) => {
                    let session = task.sessions.remove(i);
                    if let Some(e) = session.unwritten() {
                        task.unwritten.push(format!("{}: {e}", session.name()));
                    }
                    task.failures.push(f);
                }
            }
        }
    }
}

/// `batch` with every document's references left out.
fn without_references(batch: &[DetectorComparison]) -> Vec<DetectorComparison> {
    batch
        .iter()
        .map(|c| DetectorComparison {
            previous: c.previous.clone(),
            current: DetectorSnapshot {
                outcome: c.current.outcome.clone(),
                document: c.current.document.as_ref().map(super::doc_head),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_that_panics_says_it_stopped() {
        let (tx, rx) = mpsc::channel();
        let other = tx.clone();
        let died = std::thread::spawn(move || {
            let _notice = StopNotice(tx);
            panic!("a bug in a worker");
        })
        .join();
        assert!(died.is_err());
        // Another worker still holds the channel open: the notice is what
        // tells the reader.
        assert!(matches!(rx.try_recv(), Ok(Reply::Stopped)));
        drop(other);
        // A worker that ends well sends nothing.
        let (tx, rx) = mpsc::channel::<Reply>();
        drop(StopNotice(tx));
        assert!(rx.try_recv().is_err());
    }
}
