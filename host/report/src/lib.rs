//! The report stage, after a crawl: for each task, the change detectors
//! compare this run with the previous one and produce findings, then the
//! reporters are told the task's results, documents and findings and write
//! into the task's output directory.
//!
//! The tasks are shared out among worker threads, one per core, by how much
//! each has to report ([`reach`] works out first, for all tasks, which
//! tasks reached each URL); each worker keeps its tasks' plugin instances
//! (plugins never run on the crawl's async reactor). A reading thread, one
//! for every two workers, reads the store through its own connection, in
//! URL order, a row at a time, skipping the URLs none of its workers' tasks
//! reached; converts each URL's result once and hands it, in batches, to
//! every task that reached it, through that task's worker. One reader for
//! several workers reads a URL reached by tasks of both once, not twice
//! (on the benchmark's 20 site tasks, 0.50 CPU-s of reading against 0.73
//! for two readers); its workers' queues are deep enough that the reader,
//! in a site's stretch of URL order, can run ahead for one worker while the
//! other works through what it was given. Three passes:
//! the results with their documents for the detectors; then, with each
//! task's findings sorted and counted, the results and the documents (each
//! reference joined with what the run found at its target) for the
//! reporters, and the findings with where they are referred to from.
//! Nothing of a task is held whole, so a task of a million URLs costs its
//! plugins no more memory than one of ten. A plugin that fails is recorded
//! as a finding and everything else goes on.
//! Findings and the plugins' key-value spaces are stored last.

pub mod bad_html;
pub mod detect;
pub mod fragments;
pub mod load;
pub mod notify;
pub mod reach;
pub mod worker;

use load::Plugins;
use reach::Reach;
use smallvec::SmallVec;
use spinneret_config::{Config, TaskConfig};
use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::detector::{DetectorComparison, DetectorNeeds, DetectorSnapshot};
use spinneret_plugin_host::entry::PluginConfig;
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::reporter::{
    Place, Reached, Role, TaskDocument, TaskFinding, Wants, into_wit_result, task_info, to_wit_kind,
};
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_store::{FindingRow, Scan, Store, StoreError, StoredDocument};
use std::collections::HashMap;
use std::sync::{Arc, mpsc};
use worker::{Reply, TaskSetup, Work, Worker};

/// What the report stage did.
#[derive(Debug, Default)]
pub struct ReportSummary {
    /// (task, plugin) pairs that wrote their report.
    pub written: Vec<(String, String)>,
    /// Plugins that failed, for which task.
    pub failures: Vec<(String, PluginFailure)>,
    /// Findings per task, in the order found.
    pub findings: Vec<(String, usize)>,
    /// Reporters whose writes the file system refused (a full disk, a
    /// read-only directory), for which task, with the first refusal: the
    /// report stage has not done its work.
    pub unwritten: Vec<(String, String)>,
}

/// How many results or comparisons one plugin call hands over.
const BATCH: usize = 256;
/// How many references one plugin call hands over (about): a document with
/// more comes in parts of this many.
const REFERENCES_PER_CALL: usize = 1024;
/// How many batches may wait for a worker: enough for the reader to run
/// ahead through a stretch of URLs that are all one worker's.
const QUEUE: usize = 32;

/// The finding kinds reporters are told first, in this order (the seed's
/// changes); other kinds follow alphabetically. The WIT's `on-findings` says
/// so, and the SDK's copy for plugin authors is the same (a test checks all three).
pub const FINDING_KIND_ORDER: [&str; 6] = [
    "broken",
    "blocked",
    "moved",
    "expiring",
    "recently-modified",
    "content-changed",
];

/// Where a finding kind goes in [`FINDING_KIND_ORDER`].
fn kind_rank(kind: &str) -> (usize, &str) {
    match FINDING_KIND_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, ""),
        None => (FINDING_KIND_ORDER.len(), kind),
    }
}

fn severity_name(s: wit::Severity) -> &'static str {
    match s {
        wit::Severity::Info => "info",
        wit::Severity::Warning => "warning",
        wit::Severity::Error => "error",
    }
}

/// The plugins of `task` that run in the report stage: its configured
/// plugins but those that ran inside the crawl (fetch hooks, parsers and
/// policies, named in `in_crawl`).
fn report_plugins(config: &Config, task: &TaskConfig, in_crawl: &[String]) -> Vec<PluginConfig> {
    config
        .plugins_for(task)
        .into_iter()
        .filter(|p| !in_crawl.contains(&p.name))
        .collect()
}

/// A stored document as the plugins see it, its strings moved; the URLs of
/// its references come from the run's results (or the store, for a target
/// the run has no result for).
fn wit_document(
    store: &Store,
    reach: &Reach,
    url: &str,
    d: StoredDocument,
) -> Result<wit::Document, StoreError> {
    let references = d
        .links
        .into_iter()
        .map(|(target, kind, anchor_text)| {
            let target = match reach.url(target) {
                Some(u) => u.to_string(),
                None => store.url_by_id(target)?.unwrap_or_default(),
            };
            Ok(wit::Reference {
                target,
                kind: to_wit_kind(
                    spinneret_core::document::RefKind::from_name(&kind)
                        .unwrap_or(spinneret_core::document::RefKind::Link),
                ),
                anchor_text,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(wit::Document {
        url: url.to_string(),
        title: d.title,
        owner: d.owner,
        expires: d.expires,
        parse_errors: d.parse_errors,
        references,
    })
}

/// A reading thread's side of its workers: the queue to each, and which
/// worker keeps each task (by its place in the run).
struct Dispatch<'c> {
    queues: Vec<mpsc::SyncSender<Work<'c>>>,
    worker_of: Vec<usize>,
}

impl<'c> Dispatch<'c> {
    /// Hand `work` to the worker of its task.
    fn send(&self, work: Work<'c>) -> anyhow::Result<()> {
        self.queues[self.worker_of[work.task()]]
            .send(work)
            .map_err(|_| anyhow::anyhow!("a worker of the report stage stopped"))
    }

    /// Hand task `t`'s `batch` over, as the work `wrap` makes of it, when
    /// `due` (it is full, or the pass is over) and it holds anything.
    fn flush<T>(
        &self,
        t: usize,
        batch: &mut Vec<T>,
        due: bool,
        wrap: impl FnOnce(usize, Vec<T>) -> Work<'c>,
    ) -> anyhow::Result<()> {
        if due && !batch.is_empty() {
            self.send(wrap(t, std::mem::take(batch)))?;
        }
        Ok(())
    }

    /// Add `item` to task `t`'s `batch`, handing the batch over once it
    /// holds [`BATCH`] items.
    fn push<T>(
        &self,
        t: usize,
        batch: &mut Vec<T>,
        item: T,
        wrap: impl FnOnce(usize, Vec<T>) -> Work<'c>,
    ) -> anyhow::Result<()> {
        batch.push(item);
        let full = batch.len() >= BATCH;
        self.flush(t, batch, full, wrap)
    }

    /// The pass is over: hand every task's remaining batch over.
    fn flush_all<T>(
        &self,
        batches: &mut [Vec<T>],
        wrap: impl Fn(usize, Vec<T>) -> Work<'c>,
    ) -> anyhow::Result<()> {
        for (t, batch) in batches.iter_mut().enumerate() {
            self.flush(t, batch, true, &wrap)?;
        }
        Ok(())
    }
}

/// Whether a finding's URL is a document of the task (its number), and the
/// references of the task's documents to it.
type Referred = (Option<u32>, Vec<Place>);

/// Share the tasks out among at most `workers`: the heaviest first, each
/// to the share with the least work so far. Each share lists its tasks in
/// the run's order; a share with no task is left out.
fn share_out(weights: &[(usize, u64)], workers: usize) -> Vec<Vec<usize>> {
    let mut order = weights.to_vec();
    order.sort_by_key(|&(_, w)| std::cmp::Reverse(w));
    let mut load = vec![0u64; workers];
    let mut shares = vec![Vec::new(); workers];
    for (t, w) in order {
        let least = (0..workers).min_by_key(|&i| load[i]).unwrap_or(0);
        shares[least].push(t);
        load[least] += w + 1;
    }
    shares.retain(|mine| !mine.is_empty());
    for mine in &mut shares {
        mine.sort_unstable();
    }
    shares
}

/// Run the detectors and reporters of every task of `run`, instantiated
/// from the run's `registry`. `in_crawl` names
/// the plugins that already ran inside the crawl (a task with no other
/// plugin is not read from the store at all). `crawl_failures` are their
/// failures against the URLs they happened for: each becomes a finding of
/// every task that reached the URL.
pub fn run_reporters(
    config: &Config,
    store: &Store,
    run: i64,
    registry: &Arc<Registry>,
    in_crawl: &[String],
    crawl_failures: &[(String, PluginFailure)],
) -> anyhow::Result<ReportSummary> {
    let names: Vec<String> = config
        .tasks
        .iter()
        .flat_map(|t| report_plugins(config, t, in_crawl))
        .map(|p| p.name)
        .collect();
    if names.is_empty() && crawl_failures.is_empty() {
        return Ok(ReportSummary::default());
    }
    let kv = Arc::new(load::load_kv(store, names.iter().map(String::as_str))?);
    let snapshot = store.read_snapshot()?;
    let rows = store.run_tasks(run)?;
    // The run's tasks, in the configuration's order.
    let tasks: Vec<(&TaskConfig, &spinneret_store::TaskRow)> = config
        .tasks
        .iter()
        .filter_map(|t| rows.iter().find(|r| r.name == t.name).map(|r| (t, r)))
        .collect();
    let n = tasks.len();
    let plugins_of: Vec<Vec<PluginConfig>> = tasks
        .iter()
        .map(|(t, _)| report_plugins(config, t, in_crawl))
        .collect();
    // A task with no plugin to run is read only if the crawl's plugin
    // failures may be findings of it.
    let active: Vec<usize> = (0..n)
        .filter(|&t| !plugins_of[t].is_empty() || !crawl_failures.is_empty())
        .collect();
    let started = std::time::Instant::now();
    let task_rows: Vec<&spinneret_store::TaskRow> = tasks.iter().map(|(_, r)| *r).collect();
    let reach = Reach::read(store, run, &task_rows)?;
    tracing::debug!(
        "report stage: what {n} tasks reached read in {:.2?} ({} URLs)",
        started.elapsed(),
        reach.urls.len()
    );
    let info = store.run_info(run)?;
    let run_info = wit::RunInfo {
        id: run,
        started_at: info.started_at,
        previous_run: info.previous_run,
        host_version: env!("CARGO_PKG_VERSION").to_string(),
        options: info.options.unwrap_or_else(|| "{}".into()),
    };
    // One share per core unless SPINNERET_REPORT_WORKERS says otherwise.
    let workers = std::env::var("SPINNERET_REPORT_WORKERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(active.len())
        .max(1);
    let weights: Vec<(usize, u64)> = active
        .iter()
        .map(|&t| (t, reach.tasks[t].weight()))
        .collect();
    // The tasks shared out among the workers, and a reader for every two
    // of them (the last alone with an odd number): each worker has its
    // share of the work whoever reads for it.
    let shares: Vec<Vec<Vec<usize>>> = share_out(&weights, workers)
        .chunks(2)
        .map(<[Vec<usize>]>::to_vec)
        .collect();
    // Each share reads through its own connection (one cannot be shared
    // between threads), opened here so that a failure stops the stage early.
    let readers = shares
        .iter()
        .map(|_| store.reader())
        .collect::<Result<Vec<Store>, StoreError>>()?;
    let stage = Stage {
        run,
        run_info,
        plugins_of,
        reach,
        crawl_failed: crawl_failures
            .iter()
            .fold(HashMap::new(), |mut m, (url, f)| {
                m.entry(url.as_str()).or_default().push(f);
                m
            }),
        bad_html: store.bad_html_of_run(run)?,
        broken_fragments: match config.settings.check_fragments {
            true => store.broken_fragments_of_run(run)?,
            false => Vec::new(),
        },
        registry,
        kv: kv.clone(),
    };
    let mut reports: Vec<TaskReport> = (0..n).map(|_| TaskReport::default()).collect();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let mut running = Vec::new();
        for (w, (groups, reader)) in shares.iter().zip(readers).enumerate() {
            let stage = &stage;
            let tasks = &tasks;
            running.push(
                std::thread::Builder::new()
                    .name(format!("report-read-{w}"))
                    .spawn_scoped(scope, move || {
                        report_share(stage, tasks, &reader, w, groups)
                    })?,
            );
        }
        for share in running {
            let done = share
                .join()
                .map_err(|_| anyhow::anyhow!("a thread of the report stage panicked"))??;
            for (t, report) in done {
                reports[t] = report;
            }
        }
        Ok(())
    })?;
    drop(snapshot);

    let mut summary = ReportSummary::default();
    for &t in &active {
        let (task, row) = tasks[t];
        let TaskReport {
            findings,
            failures,
            written,
            unwritten,
        } = std::mem::take(&mut reports[t]);
        summary
            .unwritten
            .extend(unwritten.into_iter().map(|u| (task.name.clone(), u)));
        for f in &failures {
            tracing::error!("{}: {f}", task.name);
        }
        summary
            .written
            .extend(written.into_iter().map(|p| (task.name.clone(), p)));
        summary
            .failures
            .extend(failures.into_iter().map(|f| (task.name.clone(), f)));
        summary.findings.push((task.name.clone(), findings.len()));
        let rows: Vec<FindingRow> = findings
            .into_iter()
            .map(|f| FindingRow {
                task: task.name.clone(),
                kind: f.kind,
                url: f.url,
                referrer: f.referrer,
                message: f.message,
                severity: severity_name(f.severity).to_string(),
                source: f.source,
            })
            .collect();
        store.save_findings(run, row.id, &rows)?;
    }
    for f in load::save_kv(store, &kv) {
        tracing::error!("{f}");
        summary.failures.push((String::new(), f));
    }
    Ok(summary)
}

/// What every share of the stage reads: the run, the tasks' plugins, what
/// the tasks reached, and the crawl's plugin failures by URL.
struct Stage<'c> {
    run: i64,
    run_info: wit::RunInfo,
    plugins_of: Vec<Vec<PluginConfig>>,
    reach: Reach,
    crawl_failed: HashMap<&'c str, Vec<&'c PluginFailure>>,
    /// The run's documents with syntax faults.
    bad_html: Vec<spinneret_store::BadDocument>,
    /// The run's links whose fragment names no place in their target.
    broken_fragments: Vec<spinneret_store::BrokenFragment>,
    registry: &'c Arc<Registry>,
    kv: Arc<load::KvSpaces>,
}

/// What a share brings back of one of its tasks.
#[derive(Default)]
struct TaskReport {
    /// Its findings, grouped by kind as reporters are told them.
    findings: Vec<wit::Finding>,
    /// Its plugins that failed.
    failures: Vec<PluginFailure>,
    /// Its reporters that wrote their report.
    written: Vec<String>,
    /// Its reporters whose writes the file system refused, and why.
    unwritten: Vec<String>,
}

/// Run the detectors and reporters of the tasks in `groups` (places in
/// `tasks`), a group to a worker thread that keeps their plugins: this
/// thread reads their URLs from `store` (skipping the others' before
/// decoding them) and hands them, in batches, to the worker of each task
/// that reached them.
fn report_share(
    stage: &Stage<'_>,
    tasks: &[(&TaskConfig, &spinneret_store::TaskRow)],
    store: &Store,
    w: usize,
    groups: &[Vec<usize>],
) -> anyhow::Result<Vec<(usize, TaskReport)>> {
    let (run, n, reach) = (stage.run, stage.plugins_of.len(), &stage.reach);
    let mut mine: Vec<usize> = groups.concat();
    mine.sort_unstable();
    let mine = mine.as_slice();
    let mut is_mine = vec![false; n];
    let mut worker_of = vec![0; n];
    for (g, group) in groups.iter().enumerate() {
        for &t in group {
            is_mine[t] = true;
            worker_of[t] = g;
        }
    }
    // The scans read the URLs this share's tasks reached, no others.
    let reached = reach.reached_by(|t| is_mine[t as usize]);
    // The documents pass takes the workers' documents in turns: in URL
    // order a site's documents, all of one task, come together, and would
    // keep one worker busy while the other waits.
    let mut documents_of_worker: Vec<Vec<i64>> = vec![Vec::new(); groups.len()];
    for &id in &reached {
        for &(t, role) in reach.members(id) {
            if role != Role::Document || !is_mine[t as usize] {
                continue;
            }
            // Once for a worker, however many of its tasks it is a document of.
            let list = &mut documents_of_worker[worker_of[t as usize]];
            if list.last() != Some(&id) {
                list.push(id);
            }
        }
    }
    let documents_in_turns = &store.document_scan_set(in_turns(&documents_of_worker))?;
    let keep = &store.scan_set(reached)?;
    let _snapshot = store.read_snapshot()?;
    let mut out: Vec<TaskReport> = (0..n).map(|_| TaskReport::default()).collect();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let (reply_tx, replies) = mpsc::channel::<Reply>();
        let mut queues = Vec::with_capacity(groups.len());
        for g in 0..groups.len() {
            let (tx, rx) = mpsc::sync_channel::<Work<'_>>(QUEUE);
            let worker = Worker::new(
                Plugins::new(stage.registry.clone(), stage.kv.clone()),
                &stage.run_info,
            );
            let reply_tx = reply_tx.clone();
            std::thread::Builder::new()
                .name(format!("report-{w}-{g}"))
                .spawn_scoped(scope, move || worker.serve(rx, reply_tx))?;
            queues.push(tx);
        }
        // The workers hold the only senders: once they are done, the
        // replies end.
        drop(reply_tx);
        // Owned here, so that leaving early (a store error) closes the
        // queues and the workers finish instead of waiting for work.
        let dispatch = Dispatch { queues, worker_of };
        let mut detects: Vec<Option<DetectorNeeds>> = vec![None; n];
        let mut reports = vec![false; n];
        for &t in mine {
            let (task, _) = tasks[t];
            let setup = TaskSetup {
                config: task,
                info: task_info(&task.record()),
                plugins: stage.plugins_of[t].clone(),
                items: reach.tasks[t].weight(),
            };
            dispatch.send(Work::Start(t, Box::new(setup)))?;
        }
        for _ in mine {
            if let Reply::Started {
                task,
                detects: d,
                reports: r,
            } = next_reply(&replies)?
            {
                detects[task] = d;
                reports[task] = r;
            }
        }

        // 1. The detectors, and the crawl's plugin failures.
        let crawl_failed = &stage.crawl_failed;
        let mut crawl_findings: Vec<Vec<wit::Finding>> = vec![Vec::new(); n];
        // The share's tasks that URL `id` is a document of: a document's
        // faults and broken fragments are findings of those tasks.
        let documents_of = |id: i64| {
            reach
                .members(id)
                .iter()
                .filter(|&&(t, role)| role == Role::Document && is_mine[t as usize])
                .map(|&(t, _)| t as usize)
        };
        for d in &stage.bad_html {
            for t in documents_of(d.url_id) {
                crawl_findings[t].push(bad_html::finding(&d.url, &d.faults));
            }
        }
        for b in &stage.broken_fragments {
            for t in documents_of(b.source_id) {
                crawl_findings[t].push(fragments::finding(b));
            }
        }
        let needing =
            |t: usize, needs: DetectorNeeds| detects[t].is_some_and(|d| d.contains(needs));
        if detects.iter().any(Option::is_some) || !crawl_failed.is_empty() {
            let started = std::time::Instant::now();
            let previous_runs = store.has_results_before(run)?;
            let mut batches: Vec<Vec<DetectorComparison>> = vec![Vec::new(); n];
            let scan = if (0..n).any(|t| needing(t, DetectorNeeds::REFERENCES)) {
                Scan::ResultsAndDocuments
            } else if detects.iter().any(Option::is_some) {
                Scan::ResultsAndDocumentHeads
            } else {
                Scan::Results
            };
            store.scan_run_with_previous(
                run,
                scan,
                keep,
                |id| reach.url(id),
                previous_runs,
                |id, result, previous, document| -> anyhow::Result<()> {
                    let members = reach.members(id);
                    if let Some(fs) = crawl_failed.get(result.url.as_str()) {
                        for &(t, _) in members.iter().filter(|&&(t, _)| is_mine[t as usize]) {
                            crawl_findings[t as usize]
                                .extend(fs.iter().map(|f| detect::failure_finding(f, &result.url)));
                        }
                    }
                    if !members.iter().any(|&(t, _)| detects[t as usize].is_some()) {
                        return Ok(());
                    }
                    let previous = previous.map(|p| DetectorSnapshot {
                        outcome: into_wit_result(p),
                        document: None,
                    });
                    let document = match document {
                        Some(d) if members.iter().any(|(_, r)| *r == Role::Document) => {
                            Some(wit_document(store, reach, &result.url, d)?)
                        }
                        _ => None,
                    };
                    let takers = takers(members, |t| detects[t].is_some());
                    let snapshots = copies((previous, into_wit_result(result)), takers.len());
                    for ((t, role), (previous, outcome)) in takers.into_iter().zip(snapshots) {
                        let document = document.as_ref().filter(|_| role == Role::Document);
                        let comparison = DetectorComparison {
                            previous,
                            current: DetectorSnapshot {
                                outcome,
                                document: match needing(t, DetectorNeeds::REFERENCES) {
                                    true => document.cloned(),
                                    false => document.map(doc_head),
                                },
                            },
                        };
                        dispatch.push(t, &mut batches[t], comparison, Work::Compare)?;
                    }
                    Ok(())
                },
            )?;
            dispatch.flush_all(&mut batches, Work::Compare)?;
            tracing::debug!(
                "report stage, share {w}: results read for the detectors in {:.2?}",
                started.elapsed()
            );
        }
        for &t in mine {
            dispatch.send(Work::Detected(t))?;
        }
        for _ in mine {
            if let Reply::Detected {
                task,
                findings: found,
                failures: failed,
            } = next_reply(&replies)?
            {
                let mut all = std::mem::take(&mut crawl_findings[task]);
                all.extend(found);
                // Grouped by kind, as reporters are told them (and stored).
                all.sort_by(|a, b| kind_rank(&a.kind).cmp(&kind_rank(&b.kind)));
                out[task].findings = all;
                out[task].failures = failed;
            }
        }

        // 2. The reporters: counts, results, documents, findings.
        let reporting: Vec<usize> = mine.iter().copied().filter(|&t| reports[t]).collect();
        if !reporting.is_empty() {
            let started = std::time::Instant::now();
            for &t in &reporting {
                let mut kinds: Vec<(String, u64)> = Vec::new();
                for f in &out[t].findings {
                    match kinds.last_mut() {
                        Some((k, c)) if *k == f.kind => *c += 1,
                        _ => kinds.push((f.kind.clone(), 1)),
                    }
                }
                dispatch.send(Work::Begin(t, reach.tasks[t].counts(kinds)))?;
            }
            // What each task's reporters want handed over.
            let mut wants = vec![Wants::empty(); n];
            for _ in &reporting {
                if let Reply::Begun { task, wants: w } = next_reply(&replies)? {
                    wants[task] = w;
                }
            }
            let wanting = |t: usize, kind: Wants| reports[t] && wants[t].contains(kind);
            let mut batches: Vec<Vec<Reached>> = vec![Vec::new(); n];
            let results_wanted = reporting.iter().any(|&t| wanting(t, Wants::RESULTS));
            if results_wanted {
                store.scan_run(
                    run,
                    Scan::Results,
                    keep,
                    |id| reach.url(id),
                    |id, result, _| -> anyhow::Result<()> {
                        let members = reach.members(id);
                        if !members
                            .iter()
                            .any(|&(t, _)| wanting(t as usize, Wants::RESULTS))
                        {
                            return Ok(());
                        }
                        let takers = takers(members, |t| wanting(t, Wants::RESULTS));
                        let outcomes = copies(into_wit_result(result), takers.len());
                        for ((t, role), outcome) in takers.into_iter().zip(outcomes) {
                            let reached = Reached { outcome, role };
                            dispatch.push(t, &mut batches[t], reached, Work::Results)?;
                        }
                        Ok(())
                    },
                )?;
                dispatch.flush_all(&mut batches, Work::Results)?;
                tracing::debug!(
                    "report stage, share {w}: results handed to the reporters in {:.2?}",
                    started.elapsed()
                );
            }
            // Where each finding's URL is referred to from, and whether it
            // is a document, by URL id; the ids of the findings' referrers
            // too (one pass over the run's URLs for both), for every task of
            // the share (each needs its own referrers, reporters or not).
            let finding_ids = reach.ids_of(mine.iter().flat_map(|&t| {
                out[t]
                    .findings
                    .iter()
                    .flat_map(|f| std::iter::once(f.url.as_str()).chain(f.referrer.as_deref()))
            }));
            let mut places: Vec<foldhash::HashMap<i64, Referred>> =
                vec![foldhash::HashMap::default(); n];
            // The first of each task's documents (URL id) to refer to a
            // finding's URL, by the URL's id: the referrer its finding names
            // when the run's first referrer of the URL is a page of another
            // task. For every task of the share, whatever its reporters want
            // (the mail reads the stored findings).
            let mut first_referrer: Vec<foldhash::HashMap<i64, Option<i64>>> =
                vec![foldhash::HashMap::default(); n];
            for &t in mine {
                for f in &out[t].findings {
                    if let Some(&id) = finding_ids.get(f.url.as_str()) {
                        first_referrer[t].insert(id, None);
                        if reports[t] {
                            places[t].insert(id, (None, Vec::new()));
                        }
                    }
                }
            }
            // A broken fragment is about the links of one document (its
            // referrer) to the target page: its places are the referrer's
            // references to the page, and their line and column are those
            // of the first link to a place the page lacks. By referrer:
            // (page, (line, column)).
            type LinePlace = (u32, u32);
            let mut fragment_targets: foldhash::HashMap<i64, SmallVec<[(i64, LinePlace); 2]>> =
                foldhash::HashMap::default();
            for b in &stage.broken_fragments {
                let targets = fragment_targets.entry(b.source_id).or_default();
                let at = (b.line, b.column);
                match targets.iter_mut().find(|(t, _)| *t == b.target_id) {
                    Some((_, first)) if first.0 == 0 || (at.0 != 0 && at < *first) => *first = at,
                    Some(_) => {}
                    None => targets.push((b.target_id, at)),
                }
            }
            let mut fragment_places: Vec<foldhash::HashMap<(i64, i64), Vec<Place>>> =
                vec![foldhash::HashMap::default(); n];
            let mut batches: Vec<(Vec<TaskDocument>, usize)> =
                (0..n).map(|_| (Vec::new(), 0)).collect();
            let scan = match reporting.iter().any(|&t| wanting(t, Wants::LINES)) {
                true => Scan::DocumentsWithLines,
                false => Scan::Documents,
            };
            store.scan_run(
                run,
                scan,
                documents_in_turns,
                |id| reach.url(id),
                |id, result, document| -> anyhow::Result<()> {
                    let Some(mut d) = document else {
                        return Ok(());
                    };
                    for &(t, role) in reach.members(id) {
                        let firsts = &mut first_referrer[t as usize];
                        if role != Role::Document || firsts.is_empty() {
                            continue;
                        }
                        for l in &d.links {
                            if let Some(first) = firsts.get_mut(&l.0) {
                                first.get_or_insert(id);
                            }
                        }
                    }
                    // The tasks it is a document of that want documents, by number.
                    let takers: SmallVec<[(usize, u32); 2]> = reach
                        .members(id)
                        .iter()
                        .filter(|&&(t, role)| {
                            role == Role::Document && wanting(t as usize, Wants::DOCUMENTS)
                        })
                        .filter_map(|&(t, _)| {
                            let t = t as usize;
                            reach.tasks[t].numbers.get(&id).map(|&number| (t, number))
                        })
                        .collect();
                    if takers.is_empty() {
                        return Ok(());
                    }
                    // The targets' ids and the places, before the document's strings move.
                    let links: Vec<i64> = d.links.iter().map(|l| l.0).collect();
                    let mut lines = std::mem::take(&mut d.lines);
                    let mut columns = std::mem::take(&mut d.columns);
                    let fragments = fragment_targets.get(&id);
                    if let Some(fragments) = fragments {
                        for (j, target) in links.iter().enumerate() {
                            if let Some(&(_, (line, column))) =
                                fragments.iter().find(|(t, _)| t == target)
                                && line != 0
                                && let Some(l) = lines.get_mut(j)
                            {
                                *l = line;
                                if let Some(c) = columns.get_mut(j) {
                                    *c = column;
                                }
                            }
                        }
                    }
                    let mut doc = Some(wit_document(store, reach, &result.url, d)?);
                    let mut outcome = Some(into_wit_result(result));
                    for (k, &(t, number)) in takers.iter().enumerate() {
                        let last_taker = k + 1 == takers.len();
                        let doc_ref = doc.as_ref().expect("taken by the last taker only");
                        if let Some(p) = places[t].get_mut(&id) {
                            p.0 = Some(number);
                        }
                        for (j, target) in links.iter().enumerate() {
                            let place = Place {
                                document: number,
                                reference: j as u32 + 1,
                            };
                            if let Some(p) = places[t].get_mut(target) {
                                p.1.push(place);
                            }
                            if fragments.is_some_and(|f| f.iter().any(|(t, _)| t == target)) {
                                fragment_places[t]
                                    .entry((id, *target))
                                    .or_default()
                                    .push(place);
                            }
                        }
                        let targets = |links: &[i64]| match wanting(t, Wants::TARGETS) {
                            true => links.iter().map(|&l| reach.target(t, l)).collect(),
                            false => Vec::new(),
                        };
                        // The lines or columns (`of`) of the references
                        // `range` (0 where unknown).
                        let places_of = |of: &[u32], range: std::ops::Range<usize>| match wanting(
                            t,
                            Wants::LINES,
                        ) {
                            true => range.map(|j| of.get(j).copied().unwrap_or(0)).collect(),
                            false => Vec::new(),
                        };
                        let (batch, held) = &mut batches[t];
                        if doc_ref.references.len() <= REFERENCES_PER_CALL {
                            // One part: the last taker gets the document itself.
                            *held += doc_ref.references.len() + 1;
                            let (document, outcome) = match last_taker {
                                true => (doc.take(), outcome.take()),
                                false => (doc.clone(), outcome.clone()),
                            };
                            batch.push(TaskDocument {
                                number,
                                document: document.expect("present until the last taker"),
                                outcome: outcome.expect("present until the last taker"),
                                targets: targets(&links),
                                first_reference: 0,
                                last_part: true,
                                lines: places_of(&lines, 0..links.len()),
                                columns: places_of(&columns, 0..links.len()),
                            });
                        } else {
                            let parts = doc_ref
                                .references
                                .chunks(REFERENCES_PER_CALL)
                                .zip(links.chunks(REFERENCES_PER_CALL));
                            let last = doc_ref.references.len().div_ceil(REFERENCES_PER_CALL) - 1;
                            for (i, (references, links)) in parts.enumerate() {
                                *held += references.len() + 1;
                                let first = i * REFERENCES_PER_CALL;
                                let range = first..first + links.len();
                                batch.push(TaskDocument {
                                    number,
                                    document: wit::Document {
                                        references: references.to_vec(),
                                        ..doc_head(doc_ref)
                                    },
                                    outcome: outcome.clone().expect("present until the last taker"),
                                    targets: targets(links),
                                    first_reference: first as u32,
                                    last_part: i == last,
                                    lines: places_of(&lines, range.clone()),
                                    columns: places_of(&columns, range),
                                });
                                if *held >= REFERENCES_PER_CALL {
                                    *held = 0;
                                    dispatch.flush(t, batch, true, Work::Documents)?;
                                }
                            }
                        }
                        if *held >= REFERENCES_PER_CALL || batch.len() >= BATCH {
                            *held = 0;
                            dispatch.flush(t, batch, true, Work::Documents)?;
                        }
                    }
                    Ok(())
                },
            )?;
            for (t, (batch, _)) in batches.iter_mut().enumerate() {
                dispatch.flush(t, batch, true, Work::Documents)?;
            }
            // A broken fragment's finding by (referrer, target, fragment).
            let fragment_links: foldhash::HashMap<(&str, &str, &str), (i64, i64)> = stage
                .broken_fragments
                .iter()
                .map(|b| {
                    let key = (b.source.as_str(), b.target.as_str(), b.fragment.as_str());
                    (key, (b.source_id, b.target_id))
                })
                .collect();
            let fragment_link = |f: &wit::Finding| {
                let (target, fragment) = f.url.split_once('#')?;
                let key = (f.referrer.as_deref()?, target, fragment);
                (f.kind == fragments::BROKEN_FRAGMENT_KIND)
                    .then(|| fragment_links.get(&key).copied())
                    .flatten()
            };
            // Findings whose referrer is no document of their task, by
            // task: (finding, a referrer of the task's own).
            let mut own_referrers: foldhash::HashMap<(usize, usize), String> =
                foldhash::HashMap::default();
            for &t in mine {
                for (i, f) in out[t].findings.iter().enumerate() {
                    let own = |r: &str| {
                        finding_ids
                            .get(r)
                            .is_some_and(|id| reach.tasks[t].numbers.contains_key(id))
                    };
                    if f.referrer.as_deref().is_none_or(own) || fragment_link(f).is_some() {
                        continue;
                    }
                    if let Some(url) = finding_ids
                        .get(f.url.as_str())
                        .and_then(|id| first_referrer[t].get(id).copied().flatten())
                        .and_then(|r| reach.url(r))
                    {
                        own_referrers.insert((t, i), url.to_string());
                    }
                }
            }
            for &t in &reporting {
                let mut batch = Vec::new();
                let told = match wanting(t, Wants::FINDINGS) {
                    true => out[t].findings.as_slice(),
                    false => &[],
                };
                for (i, f) in told.iter().enumerate() {
                    let (document, referred_from) = match fragment_link(f) {
                        Some((source, target)) => (
                            reach.tasks[t].numbers.get(&target).copied(),
                            fragment_places[t]
                                .get(&(source, target))
                                .cloned()
                                .unwrap_or_default(),
                        ),
                        None => finding_ids
                            .get(f.url.as_str())
                            .and_then(|id| places[t].get(id))
                            .cloned()
                            .unwrap_or_default(),
                    };
                    let mut finding = TaskFinding {
                        number: i as u32 + 1,
                        finding: f.clone(),
                        document,
                        referred_from,
                    };
                    if let Some(r) = own_referrers.get(&(t, i)) {
                        finding.finding.referrer = Some(r.clone());
                    }
                    dispatch.push(t, &mut batch, finding, Work::Findings)?;
                }
                dispatch.flush(t, &mut batch, true, Work::Findings)?;
                dispatch.send(Work::Finish(t))?;
            }
            for ((t, i), r) in own_referrers {
                out[t].findings[i].referrer = Some(r);
            }
            tracing::debug!(
                "report stage, share {w}: reporters fed in {:.2?}",
                started.elapsed()
            );
        }
        drop(dispatch);
        for reply in replies {
            if let Reply::Reported {
                task,
                written,
                failures,
                unwritten,
            } = reply
            {
                out[task].written = written;
                out[task].unwritten = unwritten;
                for f in failures {
                    out[task]
                        .findings
                        .push(detect::failure_finding(&f, tasks[task].0.top.as_ref()));
                    out[task].failures.push(f);
                }
            }
        }
        Ok(())
    })?;
    Ok(mine
        .iter()
        .map(|&t| (t, std::mem::take(&mut out[t])))
        .collect())
}

/// The ids of `lists` (each in an order of its own, an id in several lists
/// coming in the same order relative to the others in each) in one order
/// that takes the lists in turns, the next id of each at a time, and keeps
/// each list's order: an id in several lists comes once, when it is next in
/// all of them.
fn in_turns(lists: &[Vec<i64>]) -> Vec<i64> {
    let mut containing: foldhash::HashMap<i64, u32> = foldhash::HashMap::default();
    for id in lists.iter().flatten() {
        *containing.entry(*id).or_default() += 1;
    }
    // How many lists each id is next in.
    let mut next_in: foldhash::HashMap<i64, u32> = foldhash::HashMap::default();
    for list in lists {
        if let Some(&id) = list.first() {
            *next_in.entry(id).or_default() += 1;
        }
    }
    let mut at = vec![0usize; lists.len()];
    let mut order = Vec::with_capacity(containing.len());
    while order.len() < containing.len() {
        let mut took = false;
        for g in 0..lists.len() {
            let Some(&id) = lists[g].get(at[g]) else {
                continue;
            };
            if next_in.get(&id) != containing.get(&id) {
                continue;
            }
            order.push(id);
            for (h, list) in lists.iter().enumerate() {
                if list.get(at[h]) == Some(&id) {
                    at[h] += 1;
                    if let Some(&next) = list.get(at[h]) {
                        *next_in.entry(next).or_default() += 1;
                    }
                }
            }
            took = true;
        }
        if !took {
            // Lists in orders that disagree: the rest in list order, each id once.
            let seen: std::collections::HashSet<i64> = order.iter().copied().collect();
            let mut rest: Vec<i64> = lists.iter().flatten().copied().collect();
            rest.retain(|id| !seen.contains(id));
            let mut once = std::collections::HashSet::new();
            rest.retain(|id| once.insert(*id));
            order.extend(rest);
            break;
        }
    }
    order
}

/// The next reply of a share's workers: an error once one of them stopped
/// (it panicked), rather than a wait for replies that will not come.
fn next_reply(replies: &mpsc::Receiver<Reply>) -> anyhow::Result<Reply> {
    match replies.recv() {
        Ok(Reply::Stopped) | Err(_) => Err(anyhow::anyhow!("a worker of the report stage stopped")),
        Ok(reply) => Ok(reply),
    }
}

/// The tasks among `members` that `taking` says yes to, with their roles.
fn takers(members: &[(u32, Role)], taking: impl Fn(usize) -> bool) -> SmallVec<[(usize, Role); 2]> {
    members
        .iter()
        .map(|&(t, role)| (t as usize, role))
        .filter(|&(t, _)| taking(t))
        .collect()
}

/// `value` once for each of `n` takers: a copy for each but the last,
/// which gets `value` itself.
fn copies<T: Clone>(value: T, n: usize) -> impl Iterator<Item = T> {
    let mut value = Some(value);
    (1..=n).filter_map(move |i| match i == n {
        true => value.take(),
        false => value.clone(),
    })
}

/// A document's fields but its references.
fn doc_head(d: &wit::Document) -> wit::Document {
    wit::Document {
        url: d.url.clone(),
        title: d.title.clone(),
        owner: d.owner.clone(),
        expires: d.expires.clone(),
        parse_errors: d.parse_errors,
        references: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_taker_gets_the_value_once_the_last_without_a_copy() {
        assert_eq!(copies(String::from("x"), 0).count(), 0);
        assert_eq!(copies(String::from("x"), 1).collect::<Vec<_>>(), ["x"]);
        assert_eq!(copies(7, 3).collect::<Vec<_>>(), [7, 7, 7]);
    }

    #[test]
    fn lists_are_taken_in_turns_each_in_its_order() {
        assert_eq!(in_turns(&[vec![1, 2, 3], vec![10, 11]]), [1, 10, 2, 11, 3]);
        // 5 is in both: it waits until it is next in each.
        assert_eq!(in_turns(&[vec![1, 2, 5, 6], vec![5, 7]]), [1, 2, 5, 6, 7]);
        assert_eq!(in_turns(&[vec![4, 8], vec![1, 4, 9]]), [1, 4, 9, 8]);
        assert_eq!(in_turns(&[vec![], vec![3]]), [3]);
        assert!(in_turns(&[]).is_empty());
        // Orders that disagree lose nothing and repeat nothing.
        let mut all = in_turns(&[vec![1, 2], vec![2, 1]]);
        all.sort_unstable();
        assert_eq!(all, [1, 2]);
    }

    #[test]
    fn the_heaviest_tasks_are_shared_out_first() {
        assert_eq!(
            share_out(&[(0, 10), (1, 1), (2, 9), (3, 1)], 2),
            [vec![0, 3], vec![1, 2]]
        );
        assert_eq!(share_out(&[(0, 5)], 4), [vec![0]]);
    }
}
