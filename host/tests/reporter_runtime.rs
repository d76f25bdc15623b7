//! The reporter runtime with the embedded json-report plugin.

use spinneret::model::{Category, CheckResult};
use spinneret::plugin::bindings::reporter::spinneret::plugin::types as wit;
use spinneret::plugin::builtin::builtin;
use spinneret::plugin::engine::PluginEngine;
use spinneret::plugin::identify::{PluginKind, identify};
use spinneret::plugin::reporter::{ReporterPlugin, TaskReport};
use spinneret::plugin::sandbox::Sandbox;
use spinneret::plugin::state::{Grants, KvSpace};
use std::sync::Arc;

fn task_report<'a>(
    results: &'a [(CheckResult, Option<String>)],
    docs: &'a [wit::Document],
) -> TaskReport<'a> {
    TaskReport {
        run: wit::RunInfo {
            id: 7,
            started_at: 1_700_000_000,
            previous_run: None,
            host_version: "0.1.0".into(),
            options: "{}".into(),
        },
        task: wit::TaskInfo {
            name: "A".into(),
            kind: wit::TaskKind::Site,
            top: "http://a.example/".into(),
            email: None,
            changed_days: 7,
            expiring_days: 7,
        },
        results,
        documents: docs,
        findings: &[],
    }
}

#[test]
fn json_report_runs_in_the_sandbox() {
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine
        .compile(builtin("json-report").expect("json-report is built in"))
        .unwrap();
    let id = identify(&engine, &component).unwrap();
    assert_eq!((id.kind, id.api), (PluginKind::Reporter, (0, 1, 0)));

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
    let results = vec![
        (
            CheckResult::unrequested("http://a.example/", Category::Ok, "", None, 1),
            Some("document".to_string()),
        ),
        (
            CheckResult::unrequested(
                "http://a.example/gone",
                Category::Broken,
                "HTTP 404 Not Found",
                Some("http://a.example/".into()),
                1,
            ),
            Some("leaf".to_string()),
        ),
    ];
    let docs = vec![wit::Document {
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
    }];
    let dir = tempfile::tempdir().unwrap();
    plugin
        .report(&task_report(&results, &docs), dir.path().join("A"))
        .unwrap();
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
        .report(&task_report(&[], &[]), dir.path().to_path_buf())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plugin json-report failed in configure: json-report: unknown setting `fiel`; the only setting is `file`"
    );
}
