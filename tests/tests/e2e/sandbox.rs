//! Hostile plugins are contained: a loop is cut off at its time limit, a
//! memory hog at its memory cap, a trap is reported, writing past the output
//! cap is stopped, the file system, environment and network are out of reach,
//! and a component built against another API version is refused before it
//! runs. Other plugins and the crawl's results are untouched.

use crate::common;
use spinneret_core::model::{Category, CheckResult};
use spinneret_plugin_host::bindings::reporter::spinneret::plugin::types as wit;
use spinneret_plugin_host::capabilities::{Grants, KvSpace};
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::identify::{IdentifyError, identify};
use spinneret_plugin_host::reporter::{
    PluginFailure, Reached, ReporterPlugin, Role, TaskCounts, to_wit_result,
};
use spinneret_plugin_host::sandbox::Sandbox;
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;
use std::sync::Arc;
use std::time::Duration;

const HOSTILE: &str = env!("TEST_PLUGIN_HOSTILE_REPORTER");
const FUTURE: &str = env!("TEST_PLUGIN_FUTURE_API");
const TRAPS_ON: &str = env!("TEST_PLUGIN_HOSTILE_DETECTOR");

fn grants() -> Grants {
    Grants {
        memory: 16 << 20,
        time: Duration::from_millis(300),
        output: 100 * 1024,
        output_per_item: 0,
        hosts: Vec::new(),
    }
}

fn report(behave: &str, dir: &std::path::Path) -> Result<(), PluginFailure> {
    let engine = Arc::new(PluginEngine::new().unwrap());
    let component = engine.compile(&std::fs::read(HOSTILE).unwrap()).unwrap();
    let plugin = ReporterPlugin::new(
        Sandbox::new(
            "hostile",
            engine,
            serde_json::json!({ "behave": behave }),
            grants(),
            None,
            KvSpace::default(),
        ),
        &component,
    )
    .unwrap();
    let result = CheckResult::unrequested("http://a.example/", Category::Ok, "", None, 0);
    let run = common::plugin_run();
    let task = common::plugin_task();
    let counts = TaskCounts {
        urls: 1,
        documents: 0,
        references: 0,
        by_category: vec![(wit::Category::Ok, 1)],
        by_role: vec![(Role::Document, 1)],
        findings: vec![],
    };
    let cap = grants().output;
    let mut session = plugin.begin(&run, &task, &counts, dir.to_path_buf(), cap)?;
    session.results(&[Reached {
        outcome: to_wit_result(&result),
        role: Role::Document,
    }])?;
    session.finish()
}

#[test]
fn an_endless_loop_is_cut_off_at_its_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let err = report("loop", dir.path()).unwrap_err();
    assert_eq!(err.call, "finish");
    assert_eq!(err.reason, "cut off after its time limit of 300ms per call");
}

#[test]
fn a_memory_hog_is_cut_off_at_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let err = report("hog", dir.path()).unwrap_err();
    assert_eq!(
        (err.call.as_str(), err.reason.as_str()),
        ("finish", "cut off at its memory limit of 16 MiB")
    );
}

#[test]
fn a_trap_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let err = report("trap", dir.path()).unwrap_err();
    assert_eq!(err.call, "finish");
    assert!(err.reason.starts_with("trapped:"), "{}", err.reason);
}

#[test]
fn writing_past_the_output_cap_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let err = report("flood", dir.path()).unwrap_err();
    assert_eq!(err.reason, "cut off at its output limit of 102400 bytes");
    let written: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(written <= 100 * 1024, "{written} bytes on disk");
}

#[test]
fn files_environment_and_network_are_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    report("escape", dir.path()).unwrap();
    let text = std::fs::read_to_string(dir.path().join("escape.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("file: denied"), "{text}");
    assert!(lines[1].starts_with("dir: denied"), "{text}");
    assert_eq!(lines[2], "env: 0", "{text}");
    assert!(lines[3].starts_with("net: denied"), "{text}");
}

#[test]
fn a_well_behaved_plugin_runs_after_hostile_ones() {
    let dir = tempfile::tempdir().unwrap();
    assert!(report("trap", dir.path()).is_err());
    report("well", dir.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ok.txt")).unwrap(),
        "ok"
    );
}

#[test]
fn an_incompatible_api_version_is_refused_before_it_runs() {
    let engine = PluginEngine::new().unwrap();
    let component = engine.compile(&std::fs::read(FUTURE).unwrap()).unwrap();
    let err = identify(&engine, &component).unwrap_err();
    assert_eq!(err, IdentifyError::Incompatible(0, 6, 0));
    assert_eq!(
        err.to_string(),
        "it was built against plugin API 0.6.0, but this spinneret runs 0.2.x, 0.3.x, 0.4.x, 0.5.x; it needs a spinneret that runs 0.6.x"
    );
}

#[test]
fn a_failing_plugin_leaves_the_crawl_and_other_reports_intact() {
    let web = TestWeb::start(maintenance_web());
    let text = format!(
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\n[[plugin]]\nname = \"hostile\"\nsource = \"{HOSTILE}\"\ntime = \"200ms\"\n[plugin.config]\nbehave = \"loop\"\n"
    );
    let setup = Setup::new(&web, &text);
    let run = |strict: bool| {
        let extra: &[&str] = if strict { &["--strict-plugins"] } else { &[] };
        common::crawl(&setup, extra)
    };
    let out = run(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "broken links, plugin failure not strict: {stderr}"
    );
    assert!(stderr.contains("task A: plugin hostile failed in finish: cut off after its time limit of 200ms per call"), "{stderr}");
    // The crawl's results are complete and the default json-report still wrote its report.
    assert_eq!(
        setup
            .results()
            .values()
            .filter(|r| r.category == Category::Broken)
            .count(),
        4
    );
    let report = std::fs::read_to_string(setup.path().join("reports/A/report.jsonl")).unwrap();
    assert!(report.lines().count() > 10);
    assert!(setup.path().join("reports/A/index.html").exists());
    // The failure is recorded as a finding against the task's top and the plugin.
    let failures = common::plugin_failures(&setup);
    assert_eq!(
        failures,
        vec![(
            web.url("a.example", "/index.html"),
            "hostile".to_string(),
            "plugin hostile failed in finish: cut off after its time limit of 200ms per call"
                .to_string()
        )]
    );
    // --strict-plugins makes it a failed run.
    assert_eq!(run(true).status.code(), Some(3));
}

#[test]
fn a_plugins_key_value_space_lasts_from_run_to_run() {
    let web = TestWeb::start(maintenance_web());
    let text = format!(
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\ndefault_plugins = false\n\n[[plugin]]\nname = \"counter\"\nsource = \"{HOSTILE}\"\n[plugin.config]\nbehave = \"count\"\n"
    );
    let setup = Setup::new(&web, &text);
    for expected in ["1", "2", "3"] {
        common::expect_exit(&common::crawl(&setup, &[]), 1);
        let runs = std::fs::read_to_string(setup.path().join("reports/A/runs.txt")).unwrap();
        assert_eq!(runs, expected);
    }
    assert_eq!(
        setup.store().load_kv("counter").unwrap(),
        std::collections::BTreeMap::from([("runs".to_string(), b"3".to_vec())])
    );
}

#[test]
fn a_plugin_fetches_only_granted_hosts_and_only_politely() {
    let web = TestWeb::start(maintenance_web());
    let a = |p: &str| web.url("a.example", p);
    let urls = [
        a("/about.html"),
        web.url("b.example", "/page.html"),
        a("/private/secret.html"),
        a("/docs/guide.html"),
    ];
    let text = format!(
        "avoid_files = [\"avoid.txt\"]\n\n[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\ndefault_plugins = false\n\n[[plugin]]\nname = \"fetcher\"\nsource = \"{HOSTILE}\"\nhosts = [\"a.example\"]\n[plugin.config]\nbehave = \"fetch\"\nurls = {urls:?}\n"
    );
    let setup = Setup::new(&web, &text);
    std::fs::write(
        setup.path().join("avoid.txt"),
        format!("Avoid {} [*]\n", a("/docs/")),
    )
    .unwrap();
    common::expect_exit(&common::crawl(&setup, &[]), 1);
    let got = std::fs::read_to_string(setup.path().join("reports/A/fetch.txt")).unwrap();
    let expected = format!(
        "{} -> status 200\n\
         {} -> error: network access to b.example is not granted to plugin fetcher; list the host in the plugin's `hosts`\n\
         {} -> error: robots.txt of a.example:{port} disallows {} (Disallow: /private/)\n\
         {} -> error: the avoid rule {} ({}:1) forbids {}\n",
        urls[0],
        urls[1],
        urls[2],
        urls[2],
        urls[3],
        a("/docs/"),
        setup.path().join("avoid.txt").display(),
        urls[3],
        port = web.port(),
    );
    assert_eq!(got, expected);
    // The crawl and the plugin read a.example's robots.txt once between
    // them: one network layer, one reading per site.
    let robots = web
        .requests()
        .iter()
        .filter(|r| r.host == "a.example" && r.path == "/robots.txt")
        .count();
    assert_eq!(robots, 1, "robots.txt of a.example asked {robots} times");
}

#[test]
fn a_detector_failing_on_one_url_is_recorded_against_that_url_only() {
    let web = TestWeb::start(maintenance_web());
    let text = format!(
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\n[[plugin]]\nname = \"traps\"\nsource = \"{TRAPS_ON}\"\n[plugin.config]\ntrap_on = [\"/about.html\"]\n"
    );
    let setup = Setup::new(&web, &text);
    let out = common::crawl(&setup, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
    let store = setup.store();
    let run_id = store.last_run().unwrap().unwrap().id;
    let findings = store.findings(run_id, None).unwrap();
    let of = |source: &str, kind: &str| -> Vec<String> {
        findings
            .iter()
            .filter(|f| f.source == source && f.kind == kind)
            .map(|f| f.url.clone())
            .collect()
    };
    // The URLs come in one batch, which fails; asked again one at a time,
    // only /about.html fails, and every other URL was compared.
    let about = web.url("a.example", "/about.html");
    assert_eq!(of("traps", "plugin-failure"), vec![about.clone()]);
    let mut expected: Vec<String> = setup
        .results()
        .into_keys()
        .filter(|u| *u != about)
        .collect();
    expected.sort();
    let mut seen = of("traps", "seen");
    seen.sort();
    assert_eq!(seen, expected);
    assert!(seen.len() > 10, "{seen:?}");
}

/// A detector gets each document's references only when it declares it
/// needs them: `refs` (the default) is handed every reference of the top
/// page, `heads` (`references = false`) the same document without them, in
/// one run and in a run where no detector needs them.
#[test]
fn a_detector_gets_the_references_only_when_it_needs_them() {
    let web = TestWeb::start(maintenance_web());
    let entry = |name: &str, references: bool| {
        format!(
            "[[plugin]]\nname = \"{name}\"\nsource = \"{TRAPS_ON}\"\n[plugin.config]\ntrap_on = []\nreferences = {references}\n\n"
        )
    };
    let task =
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n\n";
    let top = web.url("a.example", "/index.html");
    for (plugins, expected) in [
        (
            vec![("refs", true), ("heads", false)],
            vec![("refs", true), ("heads", false)],
        ),
        (vec![("heads", false)], vec![("heads", false)]),
    ] {
        let text = format!(
            "{task}{}",
            plugins
                .iter()
                .map(|(n, r)| entry(n, *r))
                .collect::<String>()
        );
        let setup = Setup::new(&web, &text);
        common::expect_exit(&common::crawl(&setup, &[]), 1);
        let store = setup.store();
        let references = store.document_links(&top).unwrap().len();
        assert!(references > 10, "{references}");
        let run_id = store.last_run().unwrap().unwrap().id;
        let findings = store.findings(run_id, None).unwrap();
        for (source, with_references) in expected {
            let said: Vec<&str> = findings
                .iter()
                .filter(|f| f.source == source && f.url == top)
                .map(|f| f.message.as_str())
                .collect();
            let n = if with_references { references } else { 0 };
            assert_eq!(
                said,
                vec![format!("document with {n} references")],
                "{source}"
            );
        }
    }
}

/// A plugin that cannot run is a configuration error found before the
/// first request: exit 2, one line naming the `[[plugin]]` entry and why.
#[test]
fn a_misconfigured_plugin_stops_the_crawl_before_it_starts() {
    let web = TestWeb::start(maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.wasm");
    std::fs::write(&fake, "this is no WebAssembly\n".repeat(100)).unwrap();
    let cases = [
        (
            format!("source = {:?}", fake.display().to_string()),
            "plugin p: not a valid WebAssembly component: ",
        ),
        (
            "source = \"builtin:searxng\"".to_string(),
            "plugin p: it implements the `search-engine` world, which `spinneret crawl` does not run (a WebSnatcher profile does); a crawl takes reporters, change detectors, fetch hooks, parsers and policies",
        ),
        (
            format!(
                "source = {:?}\n[plugin.config]\nreads_context = \"sometimes\"",
                env!("TEST_PLUGIN_RECORDING_POLICY")
            ),
            "plugin p: configure failed: recorder: `reads_context` must be true or false, not \"sometimes\"",
        ),
    ];
    for (source, reason) in cases {
        let text = format!(
            "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\n[[plugin]]\nname = \"p\"\n{source}\n"
        );
        let setup = Setup::new(&web, &text);
        web.clear_log();
        let out = common::crawl(&setup, &[]);
        let stderr = common::expect_exit(&out, 2);
        let config = std::fs::read_to_string(&setup.config_path).unwrap();
        let line = config.lines().position(|l| l == "name = \"p\"").unwrap() + 1;
        let expect = format!(
            "spinneret: {}:{line}: {reason}",
            setup.config_path.display()
        );
        assert!(stderr.starts_with(&expect), "{stderr}\nexpected: {expect}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(web.requests().is_empty(), "requests were made");
        assert!(
            !setup.path().join("store.db").exists(),
            "the store was touched"
        );
    }
}

/// A plugin's time per call holds while it waits on the host's `http`:
/// with `time = "1s"`, a fetch of a page that answers after ten minutes is
/// given up when the second is over, and the plugin is cut off (before,
/// the report stage waited for the page, or the fetch's own timeout).
#[test]
fn a_plugins_time_limit_holds_through_its_http_calls() {
    use spinneret_tests::server::Route;
    let web = TestWeb::start(maintenance_web().site(
        "slow.example",
        spinneret_tests::server::Site::new().route(
            "/never.html",
            Route::Delay(
                std::time::Duration::from_secs(600),
                Box::new(Route::html("late")),
            ),
        ),
    ));
    let urls = [web.url("slow.example", "/never.html")];
    let text = format!(
        "timeout = \"900s\"\n\n[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\ndefault_plugins = false\n\n[[plugin]]\nname = \"fetcher\"\nsource = \"{HOSTILE}\"\nhosts = [\"slow.example\"]\ntime = \"1s\"\n[plugin.config]\nbehave = \"fetch\"\nurls = {urls:?}\n"
    );
    let setup = Setup::new(&web, &text);
    let mut child = common::command()
        .args(["-q", "crawl"])
        .arg(&setup.config_path)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A watchdog, not a measurement: the page answers in ten minutes.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the report stage waited on the plugin's fetch past its time limit");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", common::text(&out.stderr));
    let failures = common::plugin_failures(&setup);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].1, "fetcher");
    assert!(
        failures[0]
            .2
            .contains("cut off after its time limit of 1s per call"),
        "{failures:?}"
    );
}
