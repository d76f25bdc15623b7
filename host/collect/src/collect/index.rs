//! The end of a collection's run: what changed in its main pages, in the
//! words of the profile's change detectors (`[[detector]]`, by default
//! `builtin:maintenance`), and the index written by its collection-index
//! plugin (`[index]`, by default `builtin:websnatcher-index`) at the
//! mirror's root and in the run's directory. A plugin that fails is said in
//! `problems`; the run's files stay as they are.

use crate::changes::{Change, change, pair, snapshot};
use crate::profile::{PluginUse, Profile};
use crate::query::Asker;
use spinneret_core::grants::Grants;
use spinneret_plugin_host::bindings::detector::exports::spinneret::plugin::detector_api::{
    Comparison, Snapshot,
};
use spinneret_plugin_host::bindings::host::types::{Finding, TaskInfo, TaskKind};
use spinneret_plugin_host::collection_index::{
    self as wit, CollectionIndexPlugin, FoundBy, GonePage, Interest,
};
use spinneret_plugin_host::detector::DetectorPlugin;
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::load::link_failure;
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_report::detect;
use spinneret_store::{CollectionRow, MainPage, Store};
use std::collections::HashMap;

/// How many pages a detector compares in one call.
const BATCH: usize = 256;

/// What the detectors said of a run's main pages.
pub struct Detected {
    /// What became of each page, in order.
    pub changes: Vec<Change>,
    /// The findings about each page, in order.
    pub findings: Vec<Vec<Finding>>,
    /// The last run's pages this one does not have.
    pub gone: Vec<MainPage>,
}

/// The detectors' record of a collection: named for the profile, with the
/// crawl's defaults for "recently" (7 days) and "expiring" (7 days).
fn task_info(profile: &Profile, pages: &[MainPage]) -> TaskInfo {
    TaskInfo {
        name: profile_name(profile),
        kind: TaskKind::Site,
        top: pages.first().map(|p| p.url.clone()).unwrap_or_default(),
        email: None,
        changed_days: 7,
        expiring_days: 7,
    }
}

/// The profile's file name, as the index and the detectors name the run.
pub fn profile_name(profile: &Profile) -> String {
    profile
        .source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Say how `plugin` failed, where the profile names it.
fn failed(plugin: &PluginUse, f: &PluginFailure) -> String {
    format!("{} ({}): {}", plugin.name(), plugin.defined_at, how(f))
}

/// How a plugin failed: why it could not be loaded, or which call failed
/// and why.
fn how(f: &PluginFailure) -> String {
    match f.call.as_str() {
        "load" => f.reason.clone(),
        call => format!("{call} failed: {}", f.reason),
    }
}

/// Load and configure the profile's search engines, detectors and index
/// plugin before a run, so that a mistake in them is said before anything
/// is fetched (or an earlier run's files removed): what is wrong with
/// each, if anything.
pub fn preflight(asker: &mut Asker, profile: &Profile) -> Vec<String> {
    let mut wrong = Vec::new();
    for e in &profile.engines {
        let started = asker.engine(e).and_then(|(_, mut engine)| engine.start());
        if let Err(f) = started {
            wrong.push(format!(
                "engine `{}` ({}): {}",
                e.name,
                e.defined_at,
                how(&f)
            ));
        }
    }
    for d in &profile.detectors {
        if let Err(f) = detector(asker, d).and_then(|mut d| d.start()) {
            wrong.push(format!("change detector {}", failed(d, &f)));
        }
    }
    let index = &profile.index;
    if let Err(f) = index_plugin(asker, index).and_then(|i| i.configure_only()) {
        wrong.push(format!("the index {}", failed(index, &f)));
    }
    let mut hooks = spinneret_crawl::hooks::CrawlHooks::default();
    for h in &profile.fetch_hooks {
        match fetch_hook(asker, h) {
            Ok(hook) => hooks.add_fetch_hook(hook),
            Err(f) => wrong.push(format!("fetch hook {}", failed(h, &f))),
        }
    }
    for p in &profile.policies {
        match policy(asker, p) {
            Ok(plugin) => hooks.add_policy(plugin),
            Err(f) => wrong.push(format!("policy {}", failed(p, &f))),
        }
    }
    if !hooks.is_empty() {
        asker.use_hooks(hooks);
    }
    wrong
}

/// The fetch hook `h`, loaded through `asker`.
fn fetch_hook(
    asker: &mut Asker,
    h: &PluginUse,
) -> Result<spinneret_plugin_host::fetch_hook::FetchHookPlugin, PluginFailure> {
    let (config, prepared) = asker.plugin(
        h.source.clone(),
        h.config.clone(),
        &[],
        PluginKind::FetchHook,
    )?;
    spinneret_plugin_host::fetch_hook::FetchHookPlugin::new(prepared.sandbox, &prepared.component)
        .map_err(|e| link_failure(&config, e))
}

/// The policy `p`, loaded through `asker`.
fn policy(
    asker: &mut Asker,
    p: &PluginUse,
) -> Result<spinneret_plugin_host::policy::PolicyPlugin, PluginFailure> {
    let (config, prepared) =
        asker.plugin(p.source.clone(), p.config.clone(), &[], PluginKind::Policy)?;
    spinneret_plugin_host::policy::PolicyPlugin::new(prepared.sandbox, &prepared.component)
        .map_err(|e| link_failure(&config, e))
}

/// The change detector `d`, loaded through `asker`.
fn detector(asker: &mut Asker, d: &PluginUse) -> Result<DetectorPlugin, PluginFailure> {
    let (config, prepared) = asker.plugin(
        d.source.clone(),
        d.config.clone(),
        &[],
        PluginKind::ChangeDetector,
    )?;
    DetectorPlugin::new(prepared.sandbox, &prepared.component).map_err(|e| link_failure(&config, e))
}

/// The collection index `index`, loaded through `asker`.
fn index_plugin(
    asker: &mut Asker,
    index: &PluginUse,
) -> Result<CollectionIndexPlugin, PluginFailure> {
    let (config, prepared) = asker.plugin(
        index.source.clone(),
        index.config.clone(),
        &[],
        PluginKind::CollectionIndex,
    )?;
    CollectionIndexPlugin::new(prepared.sandbox, &prepared.component)
        .map_err(|e| link_failure(&config, e))
}

/// Ask each of the profile's detectors about `pages` against the last
/// run's `previous`, at `now`; a detector that fails is said in `problems`
/// and the others go on. Only the first `retrieved` pages are this run's:
/// the rest were carried forward from the last run, unchanged by
/// definition.
pub fn detect(
    asker: &mut Asker,
    profile: &Profile,
    store: &Store,
    (pages, retrieved): (&[MainPage], usize),
    previous: &[MainPage],
    now: i64,
    problems: &mut Vec<String>,
) -> Detected {
    let (paired, gone) = pair(pages, previous);
    let task = task_info(profile, pages);
    let comparisons: Vec<Comparison> = pages[..retrieved]
        .iter()
        .zip(&paired)
        .map(|(p, before)| Comparison {
            previous: before.map(|b| Snapshot {
                outcome: snapshot(b, None, now),
                document: None,
            }),
            current: Snapshot {
                outcome: snapshot(p, store.url_memory(&p.url).ok().flatten().as_ref(), now),
                document: None,
            },
        })
        .collect();
    let mut found: Vec<Finding> = Vec::new();
    for d in &profile.detectors {
        // A batch that fails is asked again a page at a time, so a failure
        // is a finding against the page that caused it and every other
        // page's findings are kept; a detector that cannot start is said
        // once.
        let before = found.len();
        let mut run = |asker: &mut Asker| -> Result<(), PluginFailure> {
            let mut detector = detector(asker, d)?;
            for batch in comparisons.chunks(BATCH) {
                detect::detect(now, &task, batch, &mut detector, &mut found)?;
            }
            Ok(())
        };
        if let Err(f) = run(asker) {
            problems.push(format!("change detector {}", failed(d, &f)));
        }
        let failures: Vec<&Finding> = found[before..]
            .iter()
            .filter(|f| f.kind == detect::FAILURE_KIND)
            .collect();
        if let Some(first) = failures.first() {
            let more = match failures.len() {
                1 => String::new(),
                n => format!(" (and on {} more pages: see the index)", n - 1),
            };
            problems.push(format!(
                "change detector {} ({}) failed on {}: {}{more}",
                d.name(),
                d.defined_at,
                first.url,
                first.message
            ));
        }
    }
    // Each URL's findings, once (a URL in two categories is compared
    // twice), gathered in one pass rather than one per page.
    let mut by_url: HashMap<&str, Vec<&Finding>> = HashMap::new();
    for f in &found {
        let mine = by_url.entry(f.url.as_str()).or_default();
        if !mine
            .iter()
            .any(|m| m.kind == f.kind && m.message == f.message)
        {
            mine.push(f);
        }
    }
    let findings: Vec<Vec<Finding>> = pages
        .iter()
        .map(|p| {
            by_url
                .get(p.url.as_str())
                .map(|fs| fs.iter().map(|f| (*f).clone()).collect())
                .unwrap_or_default()
        })
        .collect();
    let changes = pages
        .iter()
        .zip(&paired)
        .zip(&findings)
        .enumerate()
        .map(|(i, ((p, before), f))| match i < retrieved {
            true => change(p, *before, f),
            false => Change::Carried,
        })
        .collect();
    Detected {
        changes,
        findings,
        gone,
    }
}

fn wit_change(c: Change) -> wit::Change {
    match c {
        Change::New => wit::Change::New,
        Change::Changed => wit::Change::Changed,
        Change::Unchanged => wit::Change::Unchanged,
        Change::NotRetrieved => wit::Change::NotRetrieved,
        Change::Carried => wit::Change::Carried,
    }
}

/// Have the profile's index plugin write the index of `run` at each of
/// `paths` in the profile's mirror.
pub fn write(
    asker: &mut Asker,
    profile: &Profile,
    run: &CollectionRow,
    warc: &str,
    pages: &[MainPage],
    detected: &Detected,
    paths: &[String],
) -> Result<(), String> {
    let index = &profile.index;
    let collection = wit::Collection {
        id: run.id,
        profile: profile_name(profile),
        started_at: run.started_at,
        warc: Some(warc.to_string()),
        interests: profile
            .interests
            .iter()
            .map(|i| Interest {
                category: crate::mirror::category_dir(&[&i.title]),
                engines: i.engines.clone(),
            })
            .collect(),
        host_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let main_pages: Vec<wit::MainPage> = pages
        .iter()
        .zip(&detected.changes)
        .zip(&detected.findings)
        .map(|((p, c), f)| wit::MainPage {
            category: p.category.clone(),
            url: p.url.clone(),
            title: p.title.clone(),
            local: p.path.clone(),
            bytes: p.bytes,
            found_by: p
                .found_by
                .iter()
                .map(|(engine, rank)| FoundBy {
                    engine: engine.clone(),
                    rank: *rank,
                })
                .collect(),
            change: wit_change(*c),
            findings: f.clone(),
            problem: p.problem.clone(),
        })
        .collect();
    let gone: Vec<GonePage> = detected
        .gone
        .iter()
        .map(|p| GonePage {
            category: p.category.clone(),
            url: p.url.clone(),
            title: p.title.clone(),
        })
        .collect();
    let grants = Grants::default();
    let cap = grants
        .output
        .saturating_add(grants.output_per_item.saturating_mul(pages.len() as u64));
    index_plugin(asker, index)
        .and_then(|plugin| {
            plugin.write_index(
                &collection,
                &main_pages,
                &gone,
                paths,
                profile.mirror.clone(),
                cap,
            )
        })
        .map_err(|f| format!("the index {}", failed(index, &f)))
}
