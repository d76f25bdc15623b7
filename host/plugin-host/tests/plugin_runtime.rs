//! The plugin runtime with the embedded built-ins, one test per world:
//! reporter (json-report), change detector (maintenance), parser (sitemap),
//! search engine (searxng).

use spinneret_core::model::{Category, CheckResult};
use spinneret_plugin_host::bindings::reporter::spinneret::plugin::types as wit;
use spinneret_plugin_host::builtin::builtin;
use spinneret_plugin_host::capabilities::{Grants, KvSpace};
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::identify::{PluginKind, identify};
use spinneret_plugin_host::reporter::{
    Reached, ReporterPlugin, Role, Target, TaskCounts, TaskDocument, to_wit_result,
};
use spinneret_plugin_host::sandbox::Sandbox;
use std::sync::Arc;

fn run_info() -> wit::RunInfo {
    wit::RunInfo {
        id: 7,
        started_at: 1_700_000_000,
        previous_run: None,
        host_version: "0.2.0".into(),
        options: "{}".into(),
    }
}

fn task_info() -> wit::TaskInfo {
    wit::TaskInfo {
        name: "A".into(),
        kind: wit::TaskKind::Site,
        top: "http://a.example/".into(),
        email: None,
        changed_days: 7,
        expiring_days: 7,
    }
}

fn counts(urls: u64, documents: u64) -> TaskCounts {
    TaskCounts {
        urls,
        documents,
        references: documents,
        by_category: vec![],
        by_role: vec![],
        findings: vec![],
    }
}

#[test]
fn json_report_runs_in_the_sandbox() {
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine
        .compile(builtin("json-report").expect("json-report is built in"))
        .unwrap();
    let id = identify(&engine, &component).unwrap();
    assert_eq!((id.kind, id.api), (PluginKind::Reporter, (0, 5, 0)));

    let plugin = ReporterPlugin::new(
        Sandbox::new(
            "json-report",
            engine.clone(),
            serde_json::json!({}),
            Grants::default(),
            None,
            KvSpace::default(),
        ),
        &component,
    )
    .unwrap();
    let top = CheckResult::unrequested("http://a.example/", Category::Ok, "", None, 1);
    let gone = CheckResult::unrequested(
        "http://a.example/gone",
        Category::Broken,
        "HTTP 404 Not Found",
        Some("http://a.example/".into()),
        1,
    );
    let doc = TaskDocument {
        number: 1,
        document: wit::Document {
            url: "http://a.example/".into(),
            title: Some("Home".into()),
            owner: None,
            expires: None,
            parse_errors: 0,
            references: vec![wit::Reference {
                target: "http://a.example/gone".into(),
                kind: wit::RefKind::Anchor,
                anchor_text: "Gone".into(),
            }],
        },
        outcome: to_wit_result(&top),
        targets: vec![Target {
            category: Some(wit::Category::Broken),
            status: None,
            error: Some("HTTP 404 Not Found".into()),
            final_url: None,
            last_modified: None,
            document: None,
            title: None,
        }],
        first_reference: 0,
        last_part: true,
        lines: Vec::new(),
        columns: Vec::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("A");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("report.jsonl"), "the previous report\n").unwrap();
    let report = |finish: bool| {
        let mut s = plugin
            .begin(
                &run_info(),
                &task_info(),
                &counts(2, 1),
                out.clone(),
                1 << 20,
            )
            .unwrap();
        s.results(&[
            Reached {
                outcome: to_wit_result(&top),
                role: Role::Document,
            },
            Reached {
                outcome: to_wit_result(&gone),
                role: Role::Leaf,
            },
        ])
        .unwrap();
        s.documents(std::slice::from_ref(&doc)).unwrap();
        // Until the report finishes, the previous one is what is there.
        assert_eq!(
            std::fs::read_to_string(out.join("report.jsonl")).unwrap(),
            "the previous report\n"
        );
        if finish {
            s.finish().unwrap();
        }
    };
    // A report that does not finish (its reporter failed) leaves no trace.
    report(false);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    report(true);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    let text = std::fs::read_to_string(dir.path().join("A/report.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(lines[0]["schema"], "spinneret.report/1");
    assert_eq!(lines[0]["run"], 7);
    assert_eq!(lines[2]["url"], "http://a.example/gone");
    assert_eq!(lines[2]["category"], "broken");
    assert_eq!(lines[2]["error"], "HTTP 404 Not Found");
    assert_eq!(lines[3]["references"][0]["text"], "Gone");
    // The kind's stable name (it once came out as `refkind::anchor`).
    assert_eq!(lines[3]["references"][0]["kind"], "anchor");
    assert_eq!(lines[4]["by_category"]["broken"], 1);
}

#[test]
fn a_refused_configuration_is_reported_with_the_plugins_message() {
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine.compile(builtin("json-report").unwrap()).unwrap();
    let plugin = ReporterPlugin::new(
        Sandbox::new(
            "json-report",
            engine,
            serde_json::json!({"fiel": 1}),
            Grants::default(),
            None,
            KvSpace::default(),
        ),
        &component,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = plugin
        .begin(
            &run_info(),
            &task_info(),
            &counts(0, 0),
            dir.path().to_path_buf(),
            1 << 20,
        )
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "plugin json-report failed in configure: json-report: unknown setting `fiel`; the only setting is `file`"
    );
}

fn sandbox(name: &str, engine: &Arc<PluginEngine>, config: serde_json::Value) -> Sandbox {
    Sandbox::new(
        name,
        engine.clone(),
        config,
        Grants::default(),
        None,
        KvSpace::default(),
    )
}

#[test]
fn maintenance_compares_in_the_sandbox() {
    use spinneret_plugin_host::detector::{DetectorComparison, DetectorPlugin, DetectorSnapshot};
    use spinneret_plugin_host::reporter::to_wit_result;
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine.compile(builtin("maintenance").unwrap()).unwrap();
    assert_eq!(
        identify(&engine, &component).unwrap().kind,
        PluginKind::ChangeDetector
    );
    let mut d = DetectorPlugin::new(
        sandbox("maintenance", &engine, serde_json::json!({})),
        &component,
    )
    .unwrap();
    let task = task_info();
    let ok = CheckResult::unrequested("http://a.example/gone", Category::Ok, "", None, 1);
    let gone = CheckResult::unrequested(
        "http://a.example/gone",
        Category::Broken,
        "HTTP 404 Not Found",
        Some("http://a.example/".into()),
        1,
    );
    let snap = |r: &CheckResult| DetectorSnapshot {
        outcome: to_wit_result(r),
        document: None,
    };
    let fine = CheckResult::unrequested("http://a.example/fine", Category::Ok, "", None, 1);
    let comparisons = [
        DetectorComparison {
            previous: Some(snap(&ok)),
            current: snap(&gone),
        },
        DetectorComparison {
            previous: None,
            current: snap(&fine),
        },
    ];
    let found = d.compare(&task, 1_700_000_000, &comparisons).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].url, "http://a.example/gone");
    assert_eq!(found[0].kind, "broken");
    assert_eq!(
        found[0].message,
        "broken: HTTP 404 Not Found; new since the previous run"
    );
    assert_eq!(found[0].source, "maintenance", "the host names the source");
    assert_eq!(found[0].referrer.as_deref(), Some("http://a.example/"));

    let mut refused = DetectorPlugin::new(
        sandbox("maintenance", &engine, serde_json::json!({"brokn": true})),
        &component,
    )
    .unwrap();
    let err = refused.compare(&task, 0, &comparisons[..1]).unwrap_err();
    assert!(err.at_start());
    assert!(
        err.reason
            .starts_with("maintenance: unknown setting `brokn`")
    );
}

#[test]
fn sitemap_parses_in_the_sandbox() {
    use spinneret_plugin_host::parser::ParserPlugin;
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine.compile(builtin("sitemap").unwrap()).unwrap();
    assert_eq!(
        identify(&engine, &component).unwrap().kind,
        PluginKind::Parser
    );
    let mut p = ParserPlugin::new(
        sandbox("sitemap", &engine, serde_json::json!({})),
        &component,
    )
    .unwrap();
    assert!(
        p.accepts("application/xml", "http://a.example/sitemap.xml")
            .unwrap()
    );
    assert!(!p.accepts("text/html", "http://a.example/").unwrap());
    let parsed = p
        .parse(
            "http://a.example/sitemap.xml",
            "application/xml",
            b"<urlset><url><loc>/a.html</loc></url><url><loc>http://a.example/b.html</loc></url></urlset>",
        )
        .unwrap();
    let targets: Vec<&str> = parsed
        .references
        .iter()
        .map(|r| r.target.as_str())
        .collect();
    assert_eq!(
        targets,
        ["http://a.example/a.html", "http://a.example/b.html"]
    );
    let err = p
        .parse("http://a.example/sitemap.xml", "text/xml", b"<html/>")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin sitemap failed in parse: http://a.example/sitemap.xml: not a sitemap: the root element is neither <urlset> nor <sitemapindex>"
    );
}

#[test]
fn searxng_queries_and_reads_results_in_the_sandbox() {
    use spinneret_plugin_host::search::{
        SearchAnswer, SearchEngineOptions, SearchEnginePlugin, option_names,
    };
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine.compile(builtin("searxng").unwrap()).unwrap();
    assert_eq!(
        identify(&engine, &component).unwrap().kind,
        PluginKind::SearchEngine
    );
    let mut s = SearchEnginePlugin::new(
        sandbox(
            "searxng",
            &engine,
            serde_json::json!({"base": "http://127.0.0.1:8888/"}),
        ),
        &component,
    )
    .unwrap();
    let mut options = SearchEngineOptions {
        max_results: 10,
        language: None,
        page: 1,
        phrase: None,
        exclude: Vec::new(),
        site: None,
    };
    assert_eq!(
        s.query_url(&["link".into(), "checker".into()], &options)
            .unwrap(),
        "http://127.0.0.1:8888/search?q=link+checker&format=json&pageno=1"
    );
    options.site = Some("w3.org".into());
    assert_eq!(
        s.query_url(&["link".into()], &options).unwrap(),
        "http://127.0.0.1:8888/search?q=link+site%3Aw3.org&format=json&pageno=1"
    );
    assert_eq!(
        option_names(s.supports().unwrap()),
        ["language", "page", "phrase", "exclude", "site"]
    );
    let SearchAnswer::Hits(hits) = s
        .parse_results(
            br#"{"results": [{"url": "http://a.example/", "title": "A", "content": "first"}, {"url": "http://b.example/", "title": "B", "content": "second"}]}"#,
            "application/json",
        )
        .unwrap()
    else {
        panic!("hits expected")
    };
    let got: Vec<(u32, &str, &str)> = hits
        .iter()
        .map(|h| (h.rank, h.url.as_str(), h.snippet.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (1, "http://a.example/", "first"),
            (2, "http://b.example/", "second")
        ]
    );
    let err = s.parse_results(b"<html>", "text/html").unwrap_err();
    assert!(
        err.reason.contains("search: formats: [html, json]"),
        "{err}"
    );
}
