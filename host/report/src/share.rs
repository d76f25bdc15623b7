//! One share of the report stage: a reading thread and the worker
//! threads of its tasks. The reader reads the URLs its tasks reached from
//! the store (skipping the others' before decoding them) and hands them,
//! in batches, to the worker of each task that reached them: first for
//! the detectors ([`Share::detect`]), then for the reporters (results,
//! documents, then findings: [`Share::report`]).

use super::load::Plugins;
use super::reach::Reach;
use super::worker::{Reply, TaskSetup, Work, Worker};
use super::{
    BATCH, Dispatch, QUEUE, REFERENCES_PER_CALL, Referred, Stage, TaskReport, copies, doc_head,
    in_turns, kind_rank, next_reply, takers, wit_document,
};
use super::{bad_html, detect, fragments};
use smallvec::SmallVec;
use spinneret_config::TaskConfig;
use spinneret_core::model::CheckResult;
use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::detector::{DetectorComparison, DetectorNeeds, DetectorSnapshot};
use spinneret_plugin_host::reporter::{
    Place, Reached, Role, TaskDocument, TaskFinding, Wants, into_wit_result, task_info,
};
use spinneret_store::{BrokenFragment, Scan, ScanSet, Store, StoredDocument};
use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Instant;

/// Run the detectors and reporters of the tasks in `groups` (places in
/// `tasks`), a group to a worker thread that keeps their plugins: this
/// thread reads their URLs from `store` (skipping the others' before
/// decoding them) and hands them, in batches, to the worker of each task
/// that reached them.
pub(super) fn report_share(
    stage: &Stage<'_>,
    tasks: &[(&TaskConfig, &spinneret_store::TaskRow)],
    store: &Store,
    w: usize,
    groups: &[Vec<usize>],
) -> anyhow::Result<Vec<(usize, TaskReport)>> {
    let (n, reach) = (stage.plugins_of.len(), &stage.reach);
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
    let documents = documents_of_workers(reach, &reached, &is_mine, &worker_of, groups.len());
    let documents_in_turns = &store.document_scan_set(in_turns(&documents))?;
    let keep = &store.scan_set(reached)?;
    let _snapshot = store.read_snapshot()?;
    let mut out: Vec<TaskReport> = (0..n).map(|_| TaskReport::default()).collect();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let (queues, replies) = start_workers(scope, stage, w, groups.len())?;
        // Owned here, so that leaving early (a store error) closes the
        // queues and the workers finish instead of waiting for work.
        let mut share = Share {
            stage,
            tasks,
            store,
            w,
            mine,
            is_mine,
            dispatch: Dispatch { queues, worker_of },
            replies,
            detects: vec![None; n],
            reports: vec![false; n],
            keep,
            documents_in_turns,
        };
        share.start_tasks()?;
        share.detect(&mut out)?;
        share.report(&mut out)?;
        share.collect_reports(&mut out);
        Ok(())
    })?;
    Ok(mine
        .iter()
        .map(|&t| (t, std::mem::take(&mut out[t])))
        .collect())
}

/// The documents each worker's tasks reached (URL ids, in URL order, once
/// for a worker however many of its tasks it is a document of), to be
/// read in turns: in URL order a site's documents, all of one task, come
/// together, and would keep one worker busy while the other waits.
fn documents_of_workers(
    reach: &Reach,
    reached: &[i64],
    is_mine: &[bool],
    worker_of: &[usize],
    workers: usize,
) -> Vec<Vec<i64>> {
    let mut documents_of_worker: Vec<Vec<i64>> = vec![Vec::new(); workers];
    for &id in reached {
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
    documents_of_worker
}

/// Start the `groups` worker threads of share `w`, each with plugins of
/// its own: the queues to them, and the channel their replies come on
/// (which ends once every worker is done).
fn start_workers<'scope, 'a: 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    stage: &'a Stage<'a>,
    w: usize,
    groups: usize,
) -> anyhow::Result<(Vec<mpsc::SyncSender<Work<'a>>>, mpsc::Receiver<Reply>)> {
    let (reply_tx, replies) = mpsc::channel::<Reply>();
    let mut queues = Vec::with_capacity(groups);
    for g in 0..groups {
        let (tx, rx) = mpsc::sync_channel::<Work<'a>>(QUEUE);
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
    // The workers hold the only senders: once they are done, the replies
    // end.
    drop(reply_tx);
    Ok((queues, replies))
}

/// A share at work: its tasks, the queues to their workers and the
/// workers' replies, and what the tasks' plugins are.
struct Share<'a> {
    stage: &'a Stage<'a>,
    tasks: &'a [(&'a TaskConfig, &'a spinneret_store::TaskRow)],
    /// The reading thread's connection.
    store: &'a Store,
    /// The share's number (in its threads' names and the log).
    w: usize,
    /// The share's tasks (places in `tasks`), in order.
    mine: &'a [usize],
    /// Whether each task of the run is one of the share's.
    is_mine: Vec<bool>,
    dispatch: Dispatch<'a>,
    replies: mpsc::Receiver<Reply>,
    /// What each task's detectors need, together (`None`: it has none).
    detects: Vec<Option<DetectorNeeds>>,
    /// Whether each task has a reporter.
    reports: Vec<bool>,
    /// The URLs the share's tasks reached.
    keep: &'a ScanSet,
    /// Their documents, the workers' in turns.
    documents_in_turns: &'a ScanSet,
}

/// A broken fragment's link, by referrer: (target page, (line, column)) of
/// the first link to a place the page lacks.
type FragmentTargets = foldhash::HashMap<i64, SmallVec<[(i64, (u32, u32)); 2]>>;

impl Share<'_> {
    /// Hand each task to its worker, which loads its plugins; note what
    /// its detectors need and whether it has reporters.
    fn start_tasks(&mut self) -> anyhow::Result<()> {
        for &t in self.mine {
            let (task, _) = self.tasks[t];
            let setup = TaskSetup {
                config: task,
                info: task_info(&task.record()),
                plugins: self.stage.plugins_of[t].clone(),
                items: self.stage.reach.tasks[t].weight(),
            };
            self.dispatch.send(Work::Start(t, Box::new(setup)))?;
        }
        for _ in self.mine {
            if let Reply::Started {
                task,
                detects,
                reports,
            } = next_reply(&self.replies)?
            {
                self.detects[task] = detects;
                self.reports[task] = reports;
            }
        }
        Ok(())
    }

    /// Whether task `t`'s detectors need `needs`.
    fn needing(&self, t: usize, needs: DetectorNeeds) -> bool {
        self.detects[t].is_some_and(|d| d.contains(needs))
    }

    /// The share's tasks that URL `id` is a document of.
    fn documents_of(&self, id: i64) -> impl Iterator<Item = usize> + '_ {
        self.stage
            .reach
            .members(id)
            .iter()
            .filter(|&&(t, role)| role == Role::Document && self.is_mine[t as usize])
            .map(|&(t, _)| t as usize)
    }

    /// The first pass, the detectors' (with the crawl's plugin failures):
    /// each task's findings (the crawl's first), grouped by kind, and its
    /// detectors' failures, into `out`.
    fn detect(&self, out: &mut [TaskReport]) -> anyhow::Result<()> {
        let n = out.len();
        let mut crawl_findings: Vec<Vec<wit::Finding>> = vec![Vec::new(); n];
        // A document's faults and broken fragments are findings of the
        // tasks it is a document of.
        for d in &self.stage.bad_html {
            for t in self.documents_of(d.url_id) {
                crawl_findings[t].push(bad_html::finding(&d.url, &d.faults));
            }
        }
        for b in &self.stage.broken_fragments {
            for t in self.documents_of(b.source_id) {
                crawl_findings[t].push(fragments::finding(b));
            }
        }
        if self.detects.iter().any(Option::is_some) || !self.stage.crawl_failed.is_empty() {
            self.compare(&mut crawl_findings)?;
        }
        for &t in self.mine {
            self.dispatch.send(Work::Detected(t))?;
        }
        for _ in self.mine {
            if let Reply::Detected {
                task,
                findings: found,
                failures: failed,
            } = next_reply(&self.replies)?
            {
                let mut all = std::mem::take(&mut crawl_findings[task]);
                all.extend(found);
                // Grouped by kind, as reporters are told them (and stored).
                all.sort_by(|a, b| kind_rank(&a.kind).cmp(&kind_rank(&b.kind)));
                out[task].findings = all;
                out[task].failures = failed;
            }
        }
        Ok(())
    }

    /// Read the share's URLs for the detectors, each with its previous
    /// result (and its document, whole or its head, as they need), and
    /// hand them to the tasks with detectors; a URL the crawl's plugins
    /// failed on gives each of the share's tasks that reached it a
    /// finding (into `crawl_findings`).
    fn compare(&self, crawl_findings: &mut [Vec<wit::Finding>]) -> anyhow::Result<()> {
        let (store, reach, run) = (self.store, &self.stage.reach, self.stage.run);
        let n = crawl_findings.len();
        let started = Instant::now();
        let previous_runs = store.has_results_before(run)?;
        let mut batches: Vec<Vec<DetectorComparison>> = vec![Vec::new(); n];
        let scan = if (0..n).any(|t| self.needing(t, DetectorNeeds::REFERENCES)) {
            Scan::ResultsAndDocuments
        } else if self.detects.iter().any(Option::is_some) {
            Scan::ResultsAndDocumentHeads
        } else {
            Scan::Results
        };
        store.scan_run_with_previous(
            run,
            scan,
            self.keep,
            |id| reach.url(id),
            previous_runs,
            |id, result, previous, document| -> anyhow::Result<()> {
                let members = reach.members(id);
                if let Some(fs) = self.stage.crawl_failed.get(result.url.as_str()) {
                    for &(t, _) in members.iter().filter(|&&(t, _)| self.is_mine[t as usize]) {
                        crawl_findings[t as usize]
                            .extend(fs.iter().map(|f| detect::failure_finding(f, &result.url)));
                    }
                }
                if !members
                    .iter()
                    .any(|&(t, _)| self.detects[t as usize].is_some())
                {
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
                let takers = takers(members, |t| self.detects[t].is_some());
                let snapshots = copies((previous, into_wit_result(result)), takers.len());
                for ((t, role), (previous, outcome)) in takers.into_iter().zip(snapshots) {
                    let document = document.as_ref().filter(|_| role == Role::Document);
                    let comparison = DetectorComparison {
                        previous,
                        current: DetectorSnapshot {
                            outcome,
                            document: match self.needing(t, DetectorNeeds::REFERENCES) {
                                true => document.cloned(),
                                false => document.map(doc_head),
                            },
                        },
                    };
                    self.dispatch
                        .push(t, &mut batches[t], comparison, Work::Compare)?;
                }
                Ok(())
            },
        )?;
        self.dispatch.flush_all(&mut batches, Work::Compare)?;
        tracing::debug!(
            "report stage, share {}: results read for the detectors in {:.2?}",
            self.w,
            started.elapsed()
        );
        Ok(())
    }

    /// The second pass, the reporters': counts, results, documents,
    /// findings. A finding whose referrer is no document of its task is
    /// given one of the task's own, in `out` too (the mail reads the
    /// stored findings).
    fn report(&self, out: &mut [TaskReport]) -> anyhow::Result<()> {
        let reporting: Vec<usize> = self
            .mine
            .iter()
            .copied()
            .filter(|&t| self.reports[t])
            .collect();
        if reporting.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let reporters = Reporters {
            wants: self.begin_reporters(&reporting, out)?,
            tasks: reporting,
            reports: &self.reports,
        };
        if reporters
            .tasks
            .iter()
            .any(|&t| reporters.wanting(t, Wants::RESULTS))
        {
            self.hand_results(&reporters, started)?;
        }
        // Where each finding's URL is referred to from, and whether it is
        // a document, by URL id; the ids of the findings' referrers too
        // (one pass over the run's URLs for both), for every task of the
        // share (each needs its own referrers, reporters or not).
        let finding_ids = self.stage.reach.ids_of(self.mine.iter().flat_map(|&t| {
            out[t]
                .findings
                .iter()
                .flat_map(|f| std::iter::once(f.url.as_str()).chain(f.referrer.as_deref()))
        }));
        let mut pass = DocumentPass::new(self, out, &finding_ids);
        let fragment_targets = fragment_targets(&self.stage.broken_fragments);
        self.hand_documents(&reporters, &mut pass, &fragment_targets)?;
        let fragment_links = FragmentLinks::new(&self.stage.broken_fragments);
        let own_referrers = self.own_referrers(out, &finding_ids, &pass, &fragment_links);
        self.hand_findings(
            &reporters,
            out,
            |t, f| pass.referred(&self.stage.reach, t, f, &finding_ids, &fragment_links),
            &own_referrers,
        )?;
        for ((t, i), r) in own_referrers {
            out[t].findings[i].referrer = Some(r);
        }
        tracing::debug!(
            "report stage, share {}: reporters fed in {:.2?}",
            self.w,
            started.elapsed()
        );
        Ok(())
    }

    /// Begin the reports of the `reporting` tasks, each with its counts
    /// (its findings, in `out`, by kind): what each task's reporters want
    /// handed over (nothing for the other tasks).
    fn begin_reporters(
        &self,
        reporting: &[usize],
        out: &[TaskReport],
    ) -> anyhow::Result<Vec<Wants>> {
        for &t in reporting {
            let kinds = kind_counts(&out[t].findings);
            let counts = self.stage.reach.tasks[t].counts(kinds);
            self.dispatch.send(Work::Begin(t, counts))?;
        }
        let mut wants = vec![Wants::empty(); out.len()];
        for _ in reporting {
            if let Reply::Begun { task, wants: w } = next_reply(&self.replies)? {
                wants[task] = w;
            }
        }
        Ok(wants)
    }

    /// Read the share's results and hand each to the tasks whose
    /// reporters want results, with the task's role for it.
    fn hand_results(&self, reporters: &Reporters<'_>, started: Instant) -> anyhow::Result<()> {
        let reach = &self.stage.reach;
        let mut batches: Vec<Vec<Reached>> = vec![Vec::new(); reporters.wants.len()];
        self.store.scan_run(
            self.stage.run,
            Scan::Results,
            self.keep,
            |id| reach.url(id),
            |id, result, _| -> anyhow::Result<()> {
                let members = reach.members(id);
                if !members
                    .iter()
                    .any(|&(t, _)| reporters.wanting(t as usize, Wants::RESULTS))
                {
                    return Ok(());
                }
                let takers = takers(members, |t| reporters.wanting(t, Wants::RESULTS));
                let outcomes = copies(into_wit_result(result), takers.len());
                for ((t, role), outcome) in takers.into_iter().zip(outcomes) {
                    let reached = Reached { outcome, role };
                    self.dispatch
                        .push(t, &mut batches[t], reached, Work::Results)?;
                }
                Ok(())
            },
        )?;
        self.dispatch.flush_all(&mut batches, Work::Results)?;
        tracing::debug!(
            "report stage, share {}: results handed to the reporters in {:.2?}",
            self.w,
            started.elapsed()
        );
        Ok(())
    }

    /// Read the share's documents, the workers' in turns, and hand each to
    /// the tasks it is a document of whose reporters want documents; note
    /// in `pass` where the findings' URLs are referred to from.
    fn hand_documents(
        &self,
        reporters: &Reporters<'_>,
        pass: &mut DocumentPass,
        fragment_targets: &FragmentTargets,
    ) -> anyhow::Result<()> {
        let reach = &self.stage.reach;
        let scan = match reporters
            .tasks
            .iter()
            .any(|&t| reporters.wanting(t, Wants::LINES))
        {
            true => Scan::DocumentsWithLines,
            false => Scan::Documents,
        };
        self.store.scan_run(
            self.stage.run,
            scan,
            self.documents_in_turns,
            |id| reach.url(id),
            |id, result, document| {
                let Some(document) = document else {
                    return Ok(());
                };
                pass.take(self, reporters, fragment_targets, id, (result, document))
            },
        )?;
        for (t, (batch, _)) in pass.batches.iter_mut().enumerate() {
            self.dispatch.flush(t, batch, true, Work::Documents)?;
        }
        Ok(())
    }

    /// The findings (place in `out`'s, by task) whose referrer is no
    /// document of their task, with the first of the task's own documents
    /// to refer to the finding's URL, when there is one (a broken
    /// fragment's referrer is its link's and stays).
    fn own_referrers(
        &self,
        out: &[TaskReport],
        finding_ids: &HashMap<&str, i64>,
        pass: &DocumentPass,
        fragment_links: &FragmentLinks<'_>,
    ) -> foldhash::HashMap<(usize, usize), String> {
        let reach = &self.stage.reach;
        let mut own_referrers = foldhash::HashMap::default();
        for &t in self.mine {
            for (i, f) in out[t].findings.iter().enumerate() {
                let own = |r: &str| {
                    finding_ids
                        .get(r)
                        .is_some_and(|id| reach.tasks[t].numbers.contains_key(id))
                };
                if f.referrer.as_deref().is_none_or(own) || fragment_links.of(f).is_some() {
                    continue;
                }
                if let Some(url) = finding_ids
                    .get(f.url.as_str())
                    .and_then(|id| pass.first_referrer[t].get(id).copied().flatten())
                    .and_then(|r| reach.url(r))
                {
                    own_referrers.insert((t, i), url.to_string());
                }
            }
        }
        own_referrers
    }

    /// Hand each reporting task's findings (from `out`) to its reporters
    /// if they want them, numbered, with where each is `referred` from
    /// and its task's own referrer; then finish the task's reports.
    fn hand_findings(
        &self,
        reporters: &Reporters<'_>,
        out: &[TaskReport],
        referred: impl Fn(usize, &wit::Finding) -> Referred,
        own_referrers: &foldhash::HashMap<(usize, usize), String>,
    ) -> anyhow::Result<()> {
        for &t in &reporters.tasks {
            let mut batch = Vec::new();
            let told = match reporters.wanting(t, Wants::FINDINGS) {
                true => out[t].findings.as_slice(),
                false => &[],
            };
            for (i, f) in told.iter().enumerate() {
                let (document, referred_from) = referred(t, f);
                let mut finding = TaskFinding {
                    number: i as u32 + 1,
                    finding: f.clone(),
                    document,
                    referred_from,
                };
                if let Some(r) = own_referrers.get(&(t, i)) {
                    finding.finding.referrer = Some(r.clone());
                }
                self.dispatch.push(t, &mut batch, finding, Work::Findings)?;
            }
            self.dispatch.flush(t, &mut batch, true, Work::Findings)?;
            self.dispatch.send(Work::Finish(t))?;
        }
        Ok(())
    }

    /// Once every worker is done: what each task's reporters wrote or
    /// could not write, and their failures (each a finding too), into
    /// `out`.
    fn collect_reports(self, out: &mut [TaskReport]) {
        let Share {
            tasks,
            dispatch,
            replies,
            ..
        } = self;
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
    }
}

/// The share's tasks with reporters, and what those want handed over.
struct Reporters<'r> {
    /// The tasks, in order.
    tasks: Vec<usize>,
    /// Whether each task of the run has a reporter.
    reports: &'r [bool],
    /// What each task's reporters want, together.
    wants: Vec<Wants>,
}

impl Reporters<'_> {
    /// Whether task `t` has reporters that want `kind` handed over.
    fn wanting(&self, t: usize, kind: Wants) -> bool {
        self.reports[t] && self.wants[t].contains(kind)
    }
}

/// How many of `findings` (grouped by kind) there are of each kind, in
/// their order.
fn kind_counts(findings: &[wit::Finding]) -> Vec<(String, u64)> {
    let mut kinds: Vec<(String, u64)> = Vec::new();
    for f in findings {
        match kinds.last_mut() {
            Some((k, c)) if *k == f.kind => *c += 1,
            _ => kinds.push((f.kind.clone(), 1)),
        }
    }
    kinds
}

/// A broken fragment is about the links of one document (its referrer)
/// to the target page: its places are the referrer's references to the
/// page, and their line and column are those of the first link to a place
/// the page lacks. By referrer: (page, (line, column)).
fn fragment_targets(broken: &[BrokenFragment]) -> FragmentTargets {
    let mut fragment_targets = FragmentTargets::default();
    for b in broken {
        let targets = fragment_targets.entry(b.source_id).or_default();
        let at = (b.line, b.column);
        match targets.iter_mut().find(|(t, _)| *t == b.target_id) {
            Some((_, first)) if first.0 == 0 || (at.0 != 0 && at < *first) => *first = at,
            Some(_) => {}
            None => targets.push((b.target_id, at)),
        }
    }
    fragment_targets
}

/// Set the line and column of each reference of a document to a page its
/// broken fragments are about (`fragments`, its referrer's entry of
/// [`fragment_targets`]) to those of the first such link, when known.
/// `links` are the references' targets (URL ids).
fn at_first_broken_link(
    links: &[i64],
    fragments: &[(i64, (u32, u32))],
    lines: &mut [u32],
    columns: &mut [u32],
) {
    for (j, target) in links.iter().enumerate() {
        if let Some(&(_, (line, column))) = fragments.iter().find(|(t, _)| t == target)
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

/// A broken fragment's link by (referrer, target, fragment), to find the
/// finding of one: the ids of its referrer and target.
struct FragmentLinks<'b>(foldhash::HashMap<(&'b str, &'b str, &'b str), (i64, i64)>);

impl<'b> FragmentLinks<'b> {
    /// The links of the run's `broken` fragments.
    fn new(broken: &'b [BrokenFragment]) -> FragmentLinks<'b> {
        FragmentLinks(
            broken
                .iter()
                .map(|b| {
                    let key = (b.source.as_str(), b.target.as_str(), b.fragment.as_str());
                    (key, (b.source_id, b.target_id))
                })
                .collect(),
        )
    }

    /// The (referrer, target) ids of the link a broken fragment's finding
    /// `f` is about; `None` for any other finding.
    fn of(&self, f: &wit::Finding) -> Option<(i64, i64)> {
        let (target, fragment) = f.url.split_once('#')?;
        let key = (f.referrer.as_deref()?, target, fragment);
        (f.kind == fragments::BROKEN_FRAGMENT_KIND)
            .then(|| self.0.get(&key).copied())
            .flatten()
    }
}

/// A document being handed to the tasks that take it: its references'
/// targets (URL ids) with their lines and columns, and the document and
/// its outcome, until the last taker takes them.
struct Handed {
    links: Vec<i64>,
    lines: Vec<u32>,
    columns: Vec<u32>,
    doc: Option<wit::Document>,
    outcome: Option<wit::CheckResult>,
}

/// What the documents pass keeps, by task (places in the run).
struct DocumentPass {
    /// For a task with reporters, by the URL id of each of its findings:
    /// the number of the document it is, if one, and where the task's
    /// documents refer to it.
    places: Vec<foldhash::HashMap<i64, Referred>>,
    /// The first of each task's documents (URL id) to refer to a
    /// finding's URL, by the URL's id: the referrer its finding names when
    /// the run's first referrer of the URL is a page of another task. For
    /// every task of the share, whatever its reporters want (the mail
    /// reads the stored findings).
    first_referrer: Vec<foldhash::HashMap<i64, Option<i64>>>,
    /// Where a document refers to a page its broken fragments are about,
    /// by (document, page).
    fragment_places: Vec<foldhash::HashMap<(i64, i64), Vec<Place>>>,
    /// The documents waiting to be handed over, with the references they
    /// hold.
    batches: Vec<(Vec<TaskDocument>, usize)>,
}

impl DocumentPass {
    /// The pass of `share`, before any document: the URLs of the findings
    /// in `out` (their ids in `finding_ids`) are waited for.
    fn new(share: &Share<'_>, out: &[TaskReport], finding_ids: &HashMap<&str, i64>) -> Self {
        let n = out.len();
        let mut places = vec![foldhash::HashMap::default(); n];
        let mut first_referrer = vec![foldhash::HashMap::default(); n];
        for &t in share.mine {
            for f in &out[t].findings {
                if let Some(&id) = finding_ids.get(f.url.as_str()) {
                    first_referrer[t].insert(id, None);
                    if share.reports[t] {
                        places[t].insert(id, (None, Vec::new()));
                    }
                }
            }
        }
        DocumentPass {
            places,
            first_referrer,
            fragment_places: vec![foldhash::HashMap::default(); n],
            batches: (0..n).map(|_| (Vec::new(), 0)).collect(),
        }
    }

    /// The document of URL `id` (its result and its stored parse): note
    /// whom it refers to for the tasks it is a document of, and hand it
    /// to those whose reporters want documents, by number.
    fn take(
        &mut self,
        share: &Share<'_>,
        reporters: &Reporters<'_>,
        fragment_targets: &FragmentTargets,
        id: i64,
        (result, mut d): (CheckResult, StoredDocument),
    ) -> anyhow::Result<()> {
        let reach = &share.stage.reach;
        self.note_first_referrers(reach, id, &d);
        // The tasks it is a document of that want documents, by number.
        let takers: SmallVec<[(usize, u32); 2]> = reach
            .members(id)
            .iter()
            .filter(|&&(t, role)| {
                role == Role::Document && reporters.wanting(t as usize, Wants::DOCUMENTS)
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
        let fragments = fragment_targets.get(&id).map(|f| f.as_slice());
        if let Some(fragments) = fragments {
            at_first_broken_link(&links, fragments, &mut lines, &mut columns);
        }
        let mut handed = Handed {
            doc: Some(wit_document(share.store, reach, &result.url, d)?),
            outcome: Some(into_wit_result(result)),
            links,
            lines,
            columns,
        };
        for (k, &(t, number)) in takers.iter().enumerate() {
            self.note_places(t, (id, number), &handed.links, fragments);
            let last_taker = k + 1 == takers.len();
            self.batch(share, reporters, (t, number), &mut handed, last_taker)?;
        }
        Ok(())
    }

    /// For each task document `d` (of URL `id`) is a document of: the
    /// first of its documents to refer to a finding's URL.
    fn note_first_referrers(&mut self, reach: &Reach, id: i64, d: &StoredDocument) {
        for &(t, role) in reach.members(id) {
            let firsts = &mut self.first_referrer[t as usize];
            if role != Role::Document || firsts.is_empty() {
                continue;
            }
            for l in &d.links {
                if let Some(first) = firsts.get_mut(&l.0) {
                    first.get_or_insert(id);
                }
            }
        }
    }

    /// Task `t`'s document `number` (of URL id) refers to `links`: the
    /// places of the findings' URLs among them, and of the pages its
    /// broken fragments are about (`fragments`).
    fn note_places(
        &mut self,
        t: usize,
        (id, number): (i64, u32),
        links: &[i64],
        fragments: Option<&[(i64, (u32, u32))]>,
    ) {
        if let Some(p) = self.places[t].get_mut(&id) {
            p.0 = Some(number);
        }
        for (j, target) in links.iter().enumerate() {
            let place = Place {
                document: number,
                reference: j as u32 + 1,
            };
            if let Some(p) = self.places[t].get_mut(target) {
                p.1.push(place);
            }
            if fragments.is_some_and(|f| f.iter().any(|(t, _)| t == target)) {
                self.fragment_places[t]
                    .entry((id, *target))
                    .or_default()
                    .push(place);
            }
        }
    }

    /// Add the `handed` document to task `t`'s batch as its document
    /// `number`: whole (to the last taker, the document itself), or in
    /// parts of [`REFERENCES_PER_CALL`] references; the batch is handed
    /// over once it holds that many references or [`BATCH`] parts.
    fn batch(
        &mut self,
        share: &Share<'_>,
        reporters: &Reporters<'_>,
        (t, number): (usize, u32),
        handed: &mut Handed,
        last_taker: bool,
    ) -> anyhow::Result<()> {
        let reach = &share.stage.reach;
        let targets = |links: &[i64]| match reporters.wanting(t, Wants::TARGETS) {
            true => links.iter().map(|&l| reach.target(t, l)).collect(),
            false => Vec::new(),
        };
        // The lines or columns (`of`) of the references `range` (0 where
        // unknown).
        let places_of =
            |of: &[u32], range: std::ops::Range<usize>| match reporters.wanting(t, Wants::LINES) {
                true => range.map(|j| of.get(j).copied().unwrap_or(0)).collect(),
                false => Vec::new(),
            };
        let (batch, held) = &mut self.batches[t];
        let doc_ref = handed.doc.as_ref().expect("taken by the last taker only");
        let links = &handed.links;
        if doc_ref.references.len() <= REFERENCES_PER_CALL {
            // One part: the last taker gets the document itself.
            *held += doc_ref.references.len() + 1;
            let (document, outcome) = match last_taker {
                true => (handed.doc.take(), handed.outcome.take()),
                false => (handed.doc.clone(), handed.outcome.clone()),
            };
            batch.push(TaskDocument {
                number,
                document: document.expect("present until the last taker"),
                outcome: outcome.expect("present until the last taker"),
                targets: targets(links),
                first_reference: 0,
                last_part: true,
                lines: places_of(&handed.lines, 0..links.len()),
                columns: places_of(&handed.columns, 0..links.len()),
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
                    outcome: handed
                        .outcome
                        .clone()
                        .expect("present until the last taker"),
                    targets: targets(links),
                    first_reference: first as u32,
                    last_part: i == last,
                    lines: places_of(&handed.lines, range.clone()),
                    columns: places_of(&handed.columns, range),
                });
                if *held >= REFERENCES_PER_CALL {
                    *held = 0;
                    share.dispatch.flush(t, batch, true, Work::Documents)?;
                }
            }
        }
        if *held >= REFERENCES_PER_CALL || batch.len() >= BATCH {
            *held = 0;
            share.dispatch.flush(t, batch, true, Work::Documents)?;
        }
        Ok(())
    }

    /// Where task `t`'s finding `f` is referred to from, and the number of
    /// the document its URL is, if one: a broken fragment's, from its
    /// referrer's links to the page (`fragment_links`); another's, from
    /// every document of the task (its URL's id in `finding_ids`).
    fn referred(
        &self,
        reach: &Reach,
        t: usize,
        f: &wit::Finding,
        finding_ids: &HashMap<&str, i64>,
        fragment_links: &FragmentLinks<'_>,
    ) -> Referred {
        match fragment_links.of(f) {
            Some((source, target)) => (
                reach.tasks[t].numbers.get(&target).copied(),
                self.fragment_places[t]
                    .get(&(source, target))
                    .cloned()
                    .unwrap_or_default(),
            ),
            None => finding_ids
                .get(f.url.as_str())
                .and_then(|id| self.places[t].get(id))
                .cloned()
                .unwrap_or_default(),
        }
    }
}
