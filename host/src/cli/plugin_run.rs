//! `spinneret plugin run PLUGIN --input FIXTURE.json`: call a plugin ad hoc
//! on sample input, in the sandbox a run gives it (no network), and print
//! what it returns as JSON — a plugin author's quick look, like `extism
//! call`, without a crawl.
//!
//! A fixture is a JSON object naming the calls of the plugin's world with
//! their arguments. Its records are the plugin API's, named as the SDK's
//! Rust types name them (fields in snake case, `"Anchor"`, `"Ok"`, …);
//! fields that are options may be left out. `task` and `run`, where a call
//! takes them, default to a `Site` task named `fixture` and run 1 of now.
//!
//! | world | calls (keys of the fixture) |
//! |---|---|
//! | parser | `parse`: `url`, `content_type`, `body` (text) |
//! | policy | `decide`: `task`, `referrer`, `depth`, `candidates` |
//! | fetch-hook | `before_request`: a request; `after_response`: `request`, `status`, `content_type`, `body` |
//! | search-engine | `query_url`: `keywords`, `options`; `parse_results`: `content_type`, `body` |
//! | change-detector | `compare`: `task`, `now`, `comparisons` |
//! | reporter | `report`: `run`, `task`, `results`, `documents`, `findings` (the files go to `--out`) |
//! | collection-index | `write_index`: `run`, `pages`, `gone`, `paths` (the files go to `--out`) |
//!
//! A fixture may also hold `config`, the plugin's configuration (`--config`
//! overrides it). A document's `targets`, `lines` and `columns` may be
//! left out too (none), so a fixture written for an older API (0.4's
//! documents had no `columns`, 0.3's no `lines`) still reads.

use super::output::outln;
use anyhow::Context as _;
use serde::Deserialize;
use serde_json::{Value, json};
use spinneret_core::model::unix_now;
use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_plugin_host::collection_index::{
    Collection, CollectionIndexPlugin, GonePage, MainPage,
};
use spinneret_plugin_host::detector::{DetectorComparison, DetectorPlugin};
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::entry::{PluginConfig, PluginSource};
use spinneret_plugin_host::fetch_hook::{FetchHookPlugin, HookRequest, HookResponse, HookVerdict};
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::load::Prepared;
use spinneret_plugin_host::parser::ParserPlugin;
use spinneret_plugin_host::policy::{PolicyCandidate, PolicyContext, PolicyPlugin};
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::reporter::{
    Reached, ReporterPlugin, Role, Target, TaskCounts, TaskDocument, TaskFinding,
};
use spinneret_plugin_host::sandbox::PluginFailure;
use spinneret_plugin_host::search::{SearchEngineOptions, SearchEnginePlugin, option_names};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The calls a fixture asks for, by world.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct Fixture {
    /// The plugin's configuration.
    config: Option<Value>,
    parse: Option<Parse>,
    decide: Option<Decide>,
    before_request: Option<HookRequest>,
    after_response: Option<AfterResponse>,
    query_url: Option<QueryUrl>,
    parse_results: Option<Body>,
    compare: Option<Compare>,
    report: Option<Report>,
    write_index: Option<WriteIndex>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Parse {
    url: String,
    content_type: String,
    body: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Decide {
    task: Option<wit::TaskInfo>,
    referrer: Option<String>,
    #[serde(default)]
    depth: u32,
    candidates: Vec<PolicyCandidate>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct AfterResponse {
    request: HookRequest,
    status: u16,
    content_type: Option<String>,
    #[serde(default)]
    body: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct QueryUrl {
    keywords: Vec<String>,
    options: Option<SearchEngineOptions>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Body {
    content_type: String,
    body: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Compare {
    task: Option<wit::TaskInfo>,
    now: Option<i64>,
    comparisons: Vec<DetectorComparison>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Report {
    run: Option<wit::RunInfo>,
    task: Option<wit::TaskInfo>,
    #[serde(default)]
    results: Vec<Reached>,
    #[serde(default)]
    documents: Vec<FixtureDocument>,
    #[serde(default)]
    findings: Vec<TaskFinding>,
}

/// A `task-document` as a fixture gives it: the lists a reporter may not
/// want, or an older API did not have, may be left out.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FixtureDocument {
    number: u32,
    document: wit::Document,
    outcome: wit::CheckResult,
    #[serde(default)]
    targets: Vec<Target>,
    #[serde(default)]
    first_reference: u32,
    #[serde(default = "whole")]
    last_part: bool,
    #[serde(default)]
    lines: Vec<u32>,
    #[serde(default)]
    columns: Vec<u32>,
}

/// A fixture's document comes whole unless it says `last_part: false`.
fn whole() -> bool {
    true
}

impl From<FixtureDocument> for TaskDocument {
    fn from(d: FixtureDocument) -> TaskDocument {
        TaskDocument {
            number: d.number,
            document: d.document,
            outcome: d.outcome,
            targets: d.targets,
            first_reference: d.first_reference,
            last_part: d.last_part,
            lines: d.lines,
            columns: d.columns,
        }
    }
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct WriteIndex {
    run: Option<Collection>,
    #[serde(default)]
    pages: Vec<MainPage>,
    #[serde(default)]
    gone: Vec<GonePage>,
    paths: Vec<String>,
}

/// The calls of `kind`'s world, as a fixture names them.
fn calls_of(kind: PluginKind) -> &'static str {
    match kind {
        PluginKind::Parser => "`parse`",
        PluginKind::Policy => "`decide`",
        PluginKind::FetchHook => "`before_request` or `after_response`",
        PluginKind::SearchEngine => "`query_url` or `parse_results`",
        PluginKind::ChangeDetector => "`compare`",
        PluginKind::Reporter => "`report`",
        PluginKind::CollectionIndex => "`write_index`",
    }
}

/// Read the fixture at `path`: a JSON object of calls, refused with the
/// file, line and column of what is wrong.
pub(super) fn read_fixture(path: &Path) -> anyhow::Result<Fixture> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the fixture {}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        let what = e.to_string();
        let what = what.rsplit_once(" at line ").map_or(what.as_str(), |(w, _)| w);
        anyhow::anyhow!(
            "{}:{}:{}: {what} (the fixture's calls and their records: docs/writing-plugins.md, \"Trying a plugin\")",
            path.display(),
            e.line(),
            e.column(),
        )
    })
}

/// The task a call runs for when the fixture names none.
fn fixture_task(top: &str) -> wit::TaskInfo {
    wit::TaskInfo {
        name: "fixture".into(),
        kind: wit::TaskKind::Site,
        top: top.into(),
        email: None,
        changed_days: 7,
        expiring_days: 7,
    }
}

/// The run a call is part of when the fixture names none.
fn fixture_run() -> wit::RunInfo {
    wit::RunInfo {
        id: 1,
        started_at: unix_now(),
        previous_run: None,
        host_version: env!("CARGO_PKG_VERSION").into(),
        options: String::new(),
    }
}

/// A plugin's failure, as the error `plugin run` exits with (status 3).
fn failed(f: PluginFailure) -> anyhow::Error {
    anyhow::Error::new(f)
}

/// Load `source` with `config` in a sandbox of the default grants (no
/// network): its world and its prepared component.
fn load(source: PluginSource, name: &str, config: Value) -> anyhow::Result<(PluginKind, Prepared)> {
    let plugin = PluginConfig {
        name: name.to_string(),
        source,
        config,
        grants: Default::default(),
        tasks: None,
        defined_at: None,
    };
    let mut registry = Registry::new(Arc::new(PluginEngine::new()?), None);
    let kind = registry.add(&plugin).map_err(failed)?.identity.kind;
    let prepared = registry
        .prepare(
            &plugin,
            spinneret_plugin_host::capabilities::KvSpace::default(),
        )
        .map_err(failed)?;
    Ok((kind, prepared))
}

/// Run the calls of `fixture` that `plugin`'s world has; what each
/// returned, by call, as one JSON object. Files a reporter or collection
/// index writes go to `out`.
pub(super) fn run(
    source: PluginSource,
    name: &str,
    config: Option<Value>,
    fixture: Fixture,
    out: &Path,
) -> anyhow::Result<Value> {
    let config = config
        .or(fixture.config.clone())
        .unwrap_or_else(|| json!({}));
    let (kind, p) = load(source, name, config)?;
    let link = link_failure(name);
    let none = || missing_calls(name, kind);
    let mut answers = serde_json::Map::new();
    match kind {
        PluginKind::Parser => {
            let call = fixture.parse.ok_or_else(none)?;
            let mut parser = ParserPlugin::new(p.sandbox, &p.component).map_err(link)?;
            let accepts = parser
                .accepts(&call.content_type, &call.url)
                .map_err(failed)?;
            answers.insert("accepts".into(), json!(accepts));
            if accepts {
                let parsed = parser
                    .parse(&call.url, &call.content_type, call.body.as_bytes())
                    .map_err(failed)?;
                answers.insert("parse".into(), serde_json::to_value(parsed)?);
            }
        }
        PluginKind::Policy => {
            let call = fixture.decide.ok_or_else(none)?;
            let top = call.candidates.first().map_or("", |c| c.target.as_str());
            let context = PolicyContext {
                task: call.task.clone().unwrap_or_else(|| fixture_task(top)),
                referrer: call.referrer.clone(),
                depth: call.depth,
            };
            let mut policy = PolicyPlugin::new(p.sandbox, &p.component).map_err(link)?;
            let decisions = policy.decide(&context, &call.candidates).map_err(failed)?;
            answers.insert("decide".into(), serde_json::to_value(decisions)?);
        }
        PluginKind::FetchHook => fetch_hook_calls(name, kind, p, fixture, &mut answers)?,
        PluginKind::SearchEngine => search_engine_calls(name, kind, p, fixture, &mut answers)?,
        PluginKind::ChangeDetector => {
            let call = fixture.compare.ok_or_else(none)?;
            let top = call
                .comparisons
                .first()
                .map_or("", |c| c.current.outcome.url.as_str());
            let task = call.task.clone().unwrap_or_else(|| fixture_task(top));
            let mut detector = DetectorPlugin::new(p.sandbox, &p.component).map_err(link)?;
            let findings = detector
                .compare(&task, call.now.unwrap_or_else(unix_now), &call.comparisons)
                .map_err(failed)?;
            answers.insert("compare".into(), serde_json::to_value(findings)?);
        }
        PluginKind::Reporter => reporter_calls(name, kind, p, fixture, out, &mut answers)?,
        PluginKind::CollectionIndex => {
            collection_index_calls(name, kind, p, fixture, out, &mut answers)?
        }
    }
    Ok(Value::Object(answers))
}

/// What a component that does not link says.
fn link_failure(name: &str) -> impl Fn(wasmtime::Error) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("{name}: cannot link it: {e:#}")
}

/// A fixture without the calls `name`'s world has.
fn missing_calls(name: &str, kind: PluginKind) -> anyhow::Error {
    anyhow::anyhow!(
        "{name} is a {} plugin: the fixture must hold {}",
        kind.world(),
        calls_of(kind)
    )
}

/// The calls of a fetch hook the fixture holds.
fn fetch_hook_calls(
    name: &str,
    kind: PluginKind,
    p: Prepared,
    fixture: Fixture,
    answers: &mut serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    if fixture.before_request.is_none() && fixture.after_response.is_none() {
        return Err(missing_calls(name, kind));
    }
    let mut hook = FetchHookPlugin::new(p.sandbox, &p.component).map_err(link_failure(name))?;
    if let Some(request) = &fixture.before_request {
        let verdict: HookVerdict = hook.before_request(request).map_err(failed)?;
        answers.insert("before_request".into(), serde_json::to_value(verdict)?);
    }
    if let Some(call) = fixture.after_response {
        let response = HookResponse {
            status: call.status,
            content_type: call.content_type,
            body_prefix: call.body.into_bytes(),
        };
        let verdict = hook
            .after_response(&call.request, &response)
            .map_err(failed)?;
        answers.insert("after_response".into(), serde_json::to_value(verdict)?);
    }
    Ok(())
}

/// The calls of a search engine the fixture holds.
fn search_engine_calls(
    name: &str,
    kind: PluginKind,
    p: Prepared,
    fixture: Fixture,
    answers: &mut serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    if fixture.query_url.is_none() && fixture.parse_results.is_none() {
        return Err(missing_calls(name, kind));
    }
    let mut engine =
        SearchEnginePlugin::new(p.sandbox, &p.component).map_err(link_failure(name))?;
    let supports = engine.supports().map_err(failed)?;
    answers.insert("supports".into(), json!(option_names(supports)));
    if let Some(call) = fixture.query_url {
        let options = call
            .options
            .unwrap_or_else(|| crate::app::query::plain_options(10));
        let url = engine.query_url(&call.keywords, &options).map_err(failed)?;
        answers.insert("query_url".into(), json!(url));
    }
    if let Some(call) = fixture.parse_results {
        let answer = engine
            .parse_results(call.body.as_bytes(), &call.content_type)
            .map_err(failed)?;
        answers.insert("parse_results".into(), serde_json::to_value(answer)?);
    }
    Ok(())
}

/// A reporter told the fixture's results, documents and findings; the files it wrote.
fn reporter_calls(
    name: &str,
    kind: PluginKind,
    p: Prepared,
    fixture: Fixture,
    out: &Path,
    answers: &mut serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    let call = fixture.report.ok_or_else(|| missing_calls(name, kind))?;
    let top = call.results.first().map_or("", |r| r.outcome.url.as_str());
    let task = call.task.clone().unwrap_or_else(|| fixture_task(top));
    let run = call.run.clone().unwrap_or_else(fixture_run);
    let reporter = ReporterPlugin::new(p.sandbox, &p.component).map_err(link_failure(name))?;
    let counts = counts_of(&call);
    let mut session = reporter
        .begin(&run, &task, &counts, out.to_path_buf(), 64 << 20)
        .map_err(failed)?;
    session.results(&call.results).map_err(failed)?;
    let documents: Vec<TaskDocument> = call.documents.into_iter().map(TaskDocument::from).collect();
    session.documents(&documents).map_err(failed)?;
    session.findings(&call.findings).map_err(failed)?;
    session.finish().map_err(failed)?;
    answers.insert("report".into(), json!(written(out)?));
    Ok(())
}

/// A collection index asked to write the fixture's index; the files it wrote.
fn collection_index_calls(
    name: &str,
    kind: PluginKind,
    p: Prepared,
    fixture: Fixture,
    out: &Path,
    answers: &mut serde_json::Map<String, Value>,
) -> anyhow::Result<()> {
    let call = fixture
        .write_index
        .ok_or_else(|| missing_calls(name, kind))?;
    let run = call.run.clone().unwrap_or_else(|| Collection {
        id: 1,
        profile: "fixture".into(),
        started_at: unix_now(),
        warc: None,
        interests: Vec::new(),
        host_version: env!("CARGO_PKG_VERSION").into(),
    });
    let index = CollectionIndexPlugin::new(p.sandbox, &p.component).map_err(link_failure(name))?;
    index
        .write_index(
            &run,
            &call.pages,
            &call.gone,
            &call.paths,
            out.to_path_buf(),
            64 << 20,
        )
        .map_err(failed)?;
    answers.insert("write_index".into(), json!(written(out)?));
    Ok(())
}

/// The counts a reporter is told at `begin`, from what the fixture hands
/// it: its results by category and role, its documents and their
/// references, its findings by kind.
fn counts_of(call: &Report) -> TaskCounts {
    let mut by_category: Vec<(wit::Category, u64)> = Vec::new();
    let mut by_role: Vec<(Role, u64)> = Vec::new();
    for r in &call.results {
        match by_category
            .iter_mut()
            .find(|(c, _)| *c == r.outcome.category)
        {
            Some((_, n)) => *n += 1,
            None => by_category.push((r.outcome.category, 1)),
        }
        match by_role.iter_mut().find(|(role, _)| *role == r.role) {
            Some((_, n)) => *n += 1,
            None => by_role.push((r.role, 1)),
        }
    }
    let mut findings: Vec<(String, u64)> = Vec::new();
    for f in &call.findings {
        match findings.iter_mut().find(|(k, _)| *k == f.finding.kind) {
            Some((_, n)) => *n += 1,
            None => findings.push((f.finding.kind.clone(), 1)),
        }
    }
    let mut documents: Vec<u32> = call.documents.iter().map(|d| d.number).collect();
    documents.dedup();
    TaskCounts {
        urls: call.results.len() as u64,
        documents: documents.len() as u64,
        references: call
            .documents
            .iter()
            .map(|d| d.document.references.len() as u64)
            .sum(),
        by_category,
        by_role,
        findings,
    }
}

/// The files below `dir`, relative to it, in name order.
fn written(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("{}", d.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                files.push(rel.display().to_string());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `plugin run`'s arguments.
#[derive(clap::Args, Debug)]
pub(super) struct RunArgs {
    /// A WebAssembly component (`.wasm`), or `builtin:NAME`.
    plugin: String,
    /// The fixture: a JSON object naming the calls to make and their
    /// arguments (see docs/writing-plugins.md, "Trying a plugin").
    #[arg(long, short = 'i', value_name = "FIXTURE.json")]
    input: PathBuf,
    /// The plugin's configuration, a JSON object (default: the fixture's
    /// `config`, else `{}`).
    #[arg(long, value_name = "JSON")]
    config: Option<String>,
    /// Where a reporter or collection index writes its files (default: a
    /// new directory under the system's temporary one, printed).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// `spinneret plugin run`: what the plugin returned, as JSON on standard
/// output; where its files are, on standard error. Exit 3 when the plugin
/// fails (refuses its configuration, traps, overspends, errs).
pub(super) fn main(a: RunArgs) -> anyhow::Result<u8> {
    let (source, name) = match a.plugin.strip_prefix("builtin:") {
        Some(b) => (PluginSource::Builtin(b.to_string()), b.to_string()),
        None => (
            PluginSource::File(PathBuf::from(&a.plugin)),
            a.plugin.clone(),
        ),
    };
    let config = match &a.config {
        Some(text) => Some(
            serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object)
                .ok_or_else(|| anyhow::anyhow!("--config must be a JSON object, not {text}"))?,
        ),
        None => None,
    };
    let fixture = read_fixture(&a.input)?;
    let (out, temporary) = match a.out {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            (dir, false)
        }
        None => (
            tempfile::Builder::new()
                .prefix("spinneret-plugin-run-")
                .tempdir()?
                .keep(),
            true,
        ),
    };
    let answers = run(source, &name, config, fixture, &out);
    let wrote = answers
        .as_ref()
        .is_ok_and(|a| a.get("report").is_some() || a.get("write_index").is_some());
    if wrote {
        eprintln!("files written to {}", out.display());
    } else if temporary {
        let _ = std::fs::remove_dir_all(&out);
    }
    let answers = match answers {
        Ok(a) => a,
        Err(e) => match e.downcast_ref::<PluginFailure>() {
            Some(f) => {
                eprintln!("spinneret: {f}");
                return Ok(super::EXIT_PLUGIN);
            }
            None => return Err(e),
        },
    };
    outln!("{}", serde_json::to_string_pretty(&answers)?);
    Ok(super::EXIT_OK)
}
