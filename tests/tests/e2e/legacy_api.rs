//! Plugins built against plugin APIs 0.2.0, 0.3.0 and 0.4.0 keep running
//! on a host whose newest API is 0.5.0: each world's runner takes the
//! older component and converts what its interface defines. The fixtures
//! are built straight from the older WIT and export every world of their
//! version: `tests/plugins/legacy-api` from `wit/since_v0.2.0`,
//! `tests/plugins/legacy-api-0-3` from `wit/since_v0.3.0`,
//! `tests/plugins/legacy-api-0-4` from `wit/since_v0.4.0`. The worlds the
//! versions define alike are tested on each.

use crate::common::{expect_exit, plugin_run, plugin_task, spinneret, text};
use spinneret_core::model::{Category, CheckResult};
use spinneret_plugin_host::bindings::reporter::spinneret::plugin::types as wit;
use spinneret_plugin_host::capabilities::{Grants, KvSpace};
use spinneret_plugin_host::detector::{DetectorComparison, DetectorPlugin, DetectorSnapshot};
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::fetch_hook::{FetchHookPlugin, HookRequest, HookResponse, HookVerdict};
use spinneret_plugin_host::identify::{PluginKind, identify};
use spinneret_plugin_host::parser::ParserPlugin;
use spinneret_plugin_host::policy::{PolicyCandidate, PolicyContext, PolicyDecision, PolicyPlugin};
use spinneret_plugin_host::reporter::{
    Reached, ReporterPlugin, Role, TaskCounts, TaskDocument, to_wit_result,
};
use spinneret_plugin_host::sandbox::Sandbox;
use spinneret_plugin_host::search::{SearchAnswer, SearchEnginePlugin, option_names};
use std::sync::Arc;

const LEGACY: &str = env!("TEST_PLUGIN_LEGACY_API");
const LEGACY_0_3: &str = env!("TEST_PLUGIN_LEGACY_API_0_3");
const LEGACY_0_4: &str = env!("TEST_PLUGIN_LEGACY_API_0_4");

/// Each fixture and the API version it was built against.
const FIXTURES: [(&str, &str); 3] = [(LEGACY, "0.2"), (LEGACY_0_3, "0.3"), (LEGACY_0_4, "0.4")];

/// The fixtures of 0.3 and later, which export the worlds new in 0.3.0
/// (search engine, collection index).
const SINCE_0_3: [&str; 2] = [LEGACY_0_3, LEGACY_0_4];

struct Legacy {
    engine: Arc<PluginEngine>,
    component: wasmtime::component::Component,
    kv: KvSpace,
}

impl Legacy {
    fn load() -> Legacy {
        Legacy::load_from(LEGACY)
    }

    fn load_from(path: &str) -> Legacy {
        let engine = Arc::new(PluginEngine::new().unwrap());
        let component = engine.compile(&std::fs::read(path).unwrap()).unwrap();
        Legacy {
            engine,
            component,
            kv: KvSpace::default(),
        }
    }

    fn sandbox(&self, config: serde_json::Value) -> Sandbox {
        Sandbox::new(
            "legacy",
            self.engine.clone(),
            config,
            Grants::default(),
            None,
            self.kv.clone(),
        )
    }
}

fn outcome(url: &str, hash: &str) -> wit::CheckResult {
    let mut r = CheckResult::unrequested(url, Category::Ok, "", None, 0);
    r.content_hash = Some(hash.into());
    to_wit_result(&r)
}

#[test]
fn the_fixtures_were_built_against_0_2_0_0_3_0_and_0_4_0() {
    let api = |path| {
        let l = Legacy::load_from(path);
        let id = identify(&l.engine, &l.component).unwrap();
        (id.kind, id.api)
    };
    assert_eq!(api(LEGACY), (PluginKind::SearchEngine, (0, 2, 0)));
    assert_eq!(api(LEGACY_0_3), (PluginKind::SearchEngine, (0, 3, 0)));
    assert_eq!(api(LEGACY_0_4), (PluginKind::SearchEngine, (0, 4, 0)));
}

#[test]
fn a_0_2_a_0_3_and_a_0_4_reporter_are_handed_their_task() {
    for (path, api) in FIXTURES {
        reporter_is_handed_its_task(&Legacy::load_from(path), api);
    }
}

/// `api`'s reporter, handed a task: a 0.4 one (which wants `lines`) gets
/// its document's lines without the columns 0.5 added, older ones neither.
fn reporter_is_handed_its_task(l: &Legacy, api: &str) {
    let plugin = ReporterPlugin::new(l.sandbox(serde_json::json!({})), &l.component).unwrap();
    let run = plugin_run();
    let counts = TaskCounts {
        urls: 2,
        documents: 1,
        references: 1,
        by_category: vec![(wit::Category::Ok, 2)],
        by_role: vec![(Role::Document, 1), (Role::Leaf, 1)],
        findings: vec![],
    };
    let dir = tempfile::tempdir().unwrap();
    let mut session = plugin
        .begin(
            &run,
            &plugin_task(),
            &counts,
            dir.path().to_path_buf(),
            1 << 20,
        )
        .unwrap();
    session
        .results(&[
            Reached {
                outcome: outcome("http://a.example/", "h1"),
                role: Role::Document,
            },
            Reached {
                outcome: outcome("http://a.example/x.png", "h2"),
                role: Role::Leaf,
            },
        ])
        .unwrap();
    // A document with its references' lines and columns (0.5's): an older
    // reporter is handed it without what its version lacks.
    session
        .documents(&[TaskDocument {
            number: 1,
            document: wit::Document {
                url: "http://a.example/".into(),
                title: Some("A".into()),
                owner: None,
                expires: None,
                parse_errors: 0,
                references: vec![wit::Reference {
                    target: "http://a.example/x.png".into(),
                    kind: wit::RefKind::Image,
                    anchor_text: String::new(),
                }],
            },
            outcome: outcome("http://a.example/", "h1"),
            targets: vec![],
            first_reference: 0,
            last_part: true,
            lines: vec![3],
            columns: vec![12],
        }])
        .unwrap();
    session.finish().unwrap();
    let stored = l.kv.changed().unwrap();
    let lines = if api == "0.4" { "3" } else { "" };
    assert_eq!(
        String::from_utf8_lossy(&stored["report"]),
        format!("results=2 documents=1 findings=0 roles=document,leaf lines={lines}"),
        "{api}"
    );
}

#[test]
fn a_0_2_a_0_3_and_a_0_4_detector_compare_snapshots() {
    for (path, _) in FIXTURES {
        detector_compares_snapshots(&Legacy::load_from(path));
    }
}

fn detector_compares_snapshots(l: &Legacy) {
    let mut d = DetectorPlugin::new(l.sandbox(serde_json::json!({})), &l.component).unwrap();
    assert_eq!(
        d.needs().unwrap().as_array(),
        spinneret_plugin_host::detector::DetectorNeeds::REFERENCES.as_array()
    );
    let document = wit::Document {
        url: "http://a.example/".into(),
        title: None,
        owner: None,
        expires: None,
        parse_errors: 0,
        references: vec![wit::Reference {
            target: "http://a.example/b".into(),
            kind: wit::RefKind::Anchor,
            anchor_text: "b".into(),
        }],
    };
    let snap = |hash: &str, doc: Option<wit::Document>| DetectorSnapshot {
        outcome: outcome("http://a.example/", hash),
        document: doc,
    };
    let findings = d
        .compare(
            &plugin_task(),
            0,
            &[
                DetectorComparison {
                    previous: Some(snap("old", None)),
                    current: snap("new", Some(document)),
                },
                DetectorComparison {
                    previous: Some(snap("same", None)),
                    current: snap("same", None),
                },
            ],
        )
        .unwrap();
    let got: Vec<(&str, &str, &str, &str)> = findings
        .iter()
        .map(|f| {
            (
                f.kind.as_str(),
                f.url.as_str(),
                f.message.as_str(),
                f.source.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [(
            "legacy-changed",
            "http://a.example/",
            "changed; 1 references now",
            "legacy"
        )]
    );
}

#[test]
fn a_0_2_a_0_3_and_a_0_4_policy_decide() {
    for (path, _) in FIXTURES {
        policy_decides(&Legacy::load_from(path));
    }
}

fn policy_decides(l: &Legacy) {
    let mut p = PolicyPlugin::new(l.sandbox(serde_json::json!({})), &l.component).unwrap();
    let uses = p.context_use().unwrap();
    use spinneret_plugin_host::policy::PolicyContextUse as U;
    assert_eq!(uses.as_array(), (U::TASK | U::DEPTH).as_array());
    let context = PolicyContext {
        task: plugin_task(),
        referrer: None,
        depth: 1,
    };
    let candidate = |target: &str, kind| PolicyCandidate {
        target: target.into(),
        kind,
    };
    let decisions = p
        .decide(
            &context,
            &[
                candidate("http://a.example/private/x", wit::RefKind::Anchor),
                candidate("http://a.example/i.png", wit::RefKind::Image),
                candidate("http://a.example/b", wit::RefKind::Anchor),
            ],
        )
        .unwrap();
    assert!(
        matches!(
            decisions.as_slice(),
            [
                PolicyDecision::Avoid(a),
                PolicyDecision::Leaf(b),
                PolicyDecision::NoObjection
            ] if a == "private in task T" && b == "an image below the top"
        ),
        "{decisions:?}"
    );
}

#[test]
fn a_0_2_a_0_3_and_a_0_4_fetch_hook_see_requests_and_responses() {
    for (path, api) in FIXTURES {
        fetch_hook_sees_requests_and_responses(&Legacy::load_from(path), api);
    }
}

fn fetch_hook_sees_requests_and_responses(l: &Legacy, api: &str) {
    let mut h = FetchHookPlugin::new(l.sandbox(serde_json::json!({})), &l.component).unwrap();
    use spinneret_plugin_host::fetch_hook::HookInterests as I;
    assert_eq!(
        h.interests().unwrap().as_array(),
        (I::REQUESTS | I::RESPONSES).as_array()
    );
    let request = |url: &str| HookRequest {
        url: url.into(),
        method: "GET".into(),
        referrer: None,
    };
    assert!(matches!(
        h.before_request(&request("http://a.example/veto")).unwrap(),
        HookVerdict::Veto(why) if why == "legacy vetoes GET"
    ));
    assert!(matches!(
        h.before_request(&request("http://a.example/")).unwrap(),
        HookVerdict::Proceed(headers) if headers == [("x-legacy".to_string(), api.to_string())]
    ));
    let response = HookResponse {
        status: 200,
        content_type: Some("text/html".into()),
        body_prefix: b"<p>Page Not Found</p>".to_vec(),
    };
    let r = h
        .after_response(&request("http://a.example/gone"), &response)
        .unwrap()
        .unwrap();
    assert_eq!(
        (r.category, r.reason.as_str()),
        (wit::Category::Broken, "a 200 that says not found")
    );
}

#[test]
fn a_0_2_a_0_3_and_a_0_4_parser_read_their_format() {
    for (path, _) in FIXTURES {
        parser_reads_its_format(&Legacy::load_from(path));
    }
}

fn parser_reads_its_format(l: &Legacy) {
    let mut p = ParserPlugin::new(l.sandbox(serde_json::json!({})), &l.component).unwrap();
    assert!(p.accepts("text/uri-list", "http://a.example/l").unwrap());
    assert!(!p.accepts("text/html", "http://a.example/").unwrap());
    let parsed = p
        .parse(
            "http://a.example/l",
            "text/uri-list",
            b"# two\nhttp://a.example/1\n\nhttp://a.example/2\n",
        )
        .unwrap();
    let targets: Vec<&str> = parsed
        .references
        .iter()
        .map(|r| r.target.as_str())
        .collect();
    assert_eq!(targets, ["http://a.example/1", "http://a.example/2"]);
    assert_eq!(parsed.title.as_deref(), Some("uri-list"));
}

#[test]
fn a_0_2_search_engine_runs_in_the_sandbox_and_from_the_cli() {
    let l = Legacy::load();
    let mut s = SearchEnginePlugin::new(
        l.sandbox(serde_json::json!({"base": "http://engine.test/"})),
        &l.component,
    )
    .unwrap();
    // 0.2 had only the language and the page.
    assert_eq!(option_names(s.supports().unwrap()), ["language", "page"]);
    let mut options = spinneret::app::query::plain_options(5);
    options.site = Some("ignored.example".into());
    assert_eq!(
        s.query_url(&["link rot".into()], &options).unwrap(),
        "http://engine.test/find?q=link+rot&n=5"
    );
    match s
        .parse_results(
            b"http://a.example/\tA\nhttp://b.example/\tB\n",
            "text/plain",
        )
        .unwrap()
    {
        SearchAnswer::Hits(hits) => {
            let got: Vec<(u32, &str)> = hits.iter().map(|h| (h.rank, h.url.as_str())).collect();
            assert_eq!(got, [(1, "http://a.example/"), (2, "http://b.example/")]);
        }
        other => panic!("{other:?}"),
    }

    // `spinneret query` runs it against an engine on loopback, and says
    // which asked-for option it could not map.
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    let site = Site::new().generated(Arc::new(|path: &str| {
        path.starts_with("/find?").then(|| {
            Route::file(
                "text/plain",
                "https://one.example/\tOne\nhttps://two.example/\tTwo\n",
            )
        })
    }));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let config = format!(r#"{{"base": "http://127.0.0.1:{}/"}}"#, web.port());
    let out = spinneret(&[
        "query", LEGACY, "--config", &config, "--site", "w3.org", "--max", "3", "link", "rot",
    ]);
    let stderr = expect_exit(&out, 0);
    assert!(
        stderr.contains("cannot restrict its results by site; it searched without"),
        "{stderr}"
    );
    assert_eq!(
        text(&out.stdout),
        "  1. One\n     https://one.example/\n  2. Two\n     https://two.example/\n"
    );
    let asked: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/find"))
        .map(|r| r.path)
        .collect();
    assert_eq!(asked, ["/find?q=link+rot&n=3"]);
}

#[test]
fn a_0_3_and_a_0_4_search_engine_map_their_options_and_say_when_they_found_nothing() {
    for path in SINCE_0_3 {
        search_engine_maps_its_options(&Legacy::load_from(path));
    }
}

fn search_engine_maps_its_options(l: &Legacy) {
    let mut s = SearchEnginePlugin::new(
        l.sandbox(serde_json::json!({"base": "http://engine.test/"})),
        &l.component,
    )
    .unwrap();
    assert_eq!(option_names(s.supports().unwrap()), ["language", "phrase"]);
    let mut options = spinneret::app::query::plain_options(5);
    options.language = Some("de".into());
    options.phrase = Some("dead links".into());
    assert_eq!(
        s.query_url(&["rot".into()], &options).unwrap(),
        "http://engine.test/find?q=rot+%22dead+links%22&n=5&lang=de"
    );
    match s
        .parse_results(b"http://a.example/\tA\n", "text/plain")
        .unwrap()
    {
        SearchAnswer::Hits(hits) => {
            let got: Vec<(u32, &str, &str)> = hits
                .iter()
                .map(|h| (h.rank, h.url.as_str(), h.title.as_str()))
                .collect();
            assert_eq!(got, [(1, "http://a.example/", "A")]);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(
            s.parse_results(b"No results\n", "text/plain").unwrap(),
            SearchAnswer::NoResults(why) if why == "No results"
        ),
        "0.3's answer comes through as the engine's own words"
    );
}

#[test]
fn a_0_3_and_a_0_4_collection_index_are_handed_their_run() {
    for path in SINCE_0_3 {
        collection_index_is_handed_its_run(&Legacy::load_from(path));
    }
}

fn collection_index_is_handed_its_run(l: &Legacy) {
    use spinneret_plugin_host::collection_index::{
        Change, Collection, CollectionIndexPlugin, GonePage, Interest, MainPage,
    };
    let index = CollectionIndexPlugin::new(l.sandbox(serde_json::json!({})), &l.component).unwrap();
    let run = Collection {
        id: 3,
        profile: "news".into(),
        started_at: 1_795_000_000,
        warc: None,
        interests: vec![Interest {
            category: "rust".into(),
            engines: vec!["searxng".into()],
        }],
        host_version: "0.1.0".into(),
    };
    let page = |url: &str, change| MainPage {
        category: "rust".into(),
        url: url.into(),
        title: None,
        local: None,
        bytes: 10,
        found_by: vec![],
        change,
        findings: vec![],
        problem: None,
    };
    let gone = GonePage {
        category: "rust".into(),
        url: "http://a.example/old".into(),
        title: None,
    };
    let mirror = tempfile::tempdir().unwrap();
    index
        .write_index(
            &run,
            &[
                page("http://a.example/", Change::Carried),
                page("http://a.example/b", Change::New),
            ],
            &[gone],
            &["index.html".into(), "rust/index.html".into()],
            mirror.path().to_path_buf(),
            1 << 20,
        )
        .unwrap();
    let stored = l.kv.changed().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&stored["index"]),
        "profile=news pages=2 gone=1 paths=index.html,rust/index.html first=http://a.example/ (carried)"
    );
}
