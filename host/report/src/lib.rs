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

// Each dependency listed is used (tests' own are dev-dependencies).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod bad_html;
pub mod detect;
pub mod fragments;
pub mod load;
pub mod notify;
pub mod reach;
mod share;
pub mod worker;

use reach::Reach;
use smallvec::SmallVec;
use spinneret_config::{Config, TaskConfig};
use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::entry::PluginConfig;
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::reporter::{Place, Role, to_wit_kind};
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_store::{FindingRow, Store, StoreError, StoredDocument};
use std::collections::HashMap;
use std::sync::{Arc, mpsc};
use worker::{Reply, Work};

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
    let run_info = run_info(store, run)?;
    let weights: Vec<(usize, u64)> = active
        .iter()
        .map(|&t| (t, reach.tasks[t].weight()))
        .collect();
    // The tasks shared out among the workers, and a reader for every two
    // of them (the last alone with an odd number): each worker has its
    // share of the work whoever reads for it.
    let shares: Vec<Vec<Vec<usize>>> = share_out(&weights, workers_for(active.len()))
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
    let mut reports = run_shares(&stage, &tasks, &shares, readers)?;
    drop(snapshot);
    let mut summary = ReportSummary::default();
    for &t in &active {
        let (task, row) = tasks[t];
        summary.add(store, run, task, row, std::mem::take(&mut reports[t]))?;
    }
    for f in load::save_kv(store, &kv) {
        tracing::error!("{f}");
        summary.failures.push((String::new(), f));
    }
    Ok(summary)
}

/// The run as the plugins are told it.
fn run_info(store: &Store, run: i64) -> Result<wit::RunInfo, StoreError> {
    let info = store.run_info(run)?;
    Ok(wit::RunInfo {
        id: run,
        started_at: info.started_at,
        previous_run: info.previous_run,
        host_version: env!("CARGO_PKG_VERSION").to_string(),
        options: info.options.unwrap_or_else(|| "{}".into()),
    })
}

/// How many worker threads report on `tasks` tasks: one per core unless
/// SPINNERET_REPORT_WORKERS says otherwise, at least one and no more than
/// there are tasks.
fn workers_for(tasks: usize) -> usize {
    std::env::var("SPINNERET_REPORT_WORKERS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(tasks)
        .max(1)
}

/// Run each of the `shares` (groups of tasks, a group to a worker) on a
/// reading thread of its own, through its connection of `readers`: what
/// each task of the stage brought back (nothing for a task of no share).
fn run_shares(
    stage: &Stage<'_>,
    tasks: &[(&TaskConfig, &spinneret_store::TaskRow)],
    shares: &[Vec<Vec<usize>>],
    readers: Vec<Store>,
) -> anyhow::Result<Vec<TaskReport>> {
    let mut reports: Vec<TaskReport> = (0..tasks.len()).map(|_| TaskReport::default()).collect();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let mut running = Vec::new();
        for (w, (groups, reader)) in shares.iter().zip(readers).enumerate() {
            running.push(
                std::thread::Builder::new()
                    .name(format!("report-read-{w}"))
                    .spawn_scoped(scope, move || {
                        share::report_share(stage, tasks, &reader, w, groups)
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
    Ok(reports)
}

impl ReportSummary {
    /// Add what `task` (its `row` of run `run`) brought back, and store
    /// its findings.
    fn add(
        &mut self,
        store: &Store,
        run: i64,
        task: &TaskConfig,
        row: &spinneret_store::TaskRow,
        report: TaskReport,
    ) -> Result<(), StoreError> {
        let TaskReport {
            findings,
            failures,
            written,
            unwritten,
        } = report;
        self.unwritten
            .extend(unwritten.into_iter().map(|u| (task.name.clone(), u)));
        for f in &failures {
            tracing::error!("{}: {f}", task.name);
        }
        self.written
            .extend(written.into_iter().map(|p| (task.name.clone(), p)));
        self.failures
            .extend(failures.into_iter().map(|f| (task.name.clone(), f)));
        self.findings.push((task.name.clone(), findings.len()));
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
        store.save_findings(run, row.id, &rows)
    }
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
