//! WebSnatcher's output read by the tools made for it: the WARC file by
//! `warcio` (PyPI; `.ci/run` installs it).

use spinneret::snatch::warc::{Original, WarcWriter, payload_digest};
use std::process::Command;

/// `warcio` on the PATH, or `None` with a note (a failure under CI).
fn warcio() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("warcio"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "warcio is not installed; .ci/run installs it (pip install warcio)"
        );
        eprintln!(
            "SKIPPED: warcio is not installed (pip install warcio); the WARC check did not run"
        );
    }
    found
}

#[test]
fn a_runs_warc_is_valid_for_warcio_with_every_digest_checked() {
    let Some(warcio) = warcio() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-1.warc");
    let now = 1_795_000_000;
    let file = std::fs::File::create(&path).unwrap();
    let mut w = WarcWriter::new(file, "run-1.warc", "spinneret/test", now).unwrap();
    let page: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 25\r\n\r\n<p>hello, <b>web</b></p>\n";
    let image: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 4\r\n\r\n\x89PNG";
    for (url, response) in [("https://e.org/", page), ("https://e.org/a.png", image)] {
        let path = url.trim_start_matches("https://e.org");
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: e.org\r\nUser-Agent: spinneret/test\r\n\r\n");
        let req = w.request(url, request.as_bytes(), now).unwrap();
        let resp = w.response(url, response, &req, now).unwrap();
        if url == "https://e.org/" {
            // The next run's unchanged page: a revisit of this response.
            w.request(url, request.as_bytes(), now + 86_400).unwrap();
            let digest = payload_digest(page);
            let original = Original {
                record: &resp,
                uri: url,
                date: now,
                payload_digest: &digest,
            };
            w.revisit(
                url,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n",
                &original,
                now + 86_400,
            )
            .unwrap();
        }
    }
    w.metadata(
        "https://e.org/",
        &[("category", "URLs"), ("depth", "0")],
        now,
    )
    .unwrap();
    w.finish().unwrap();

    let check = Command::new(&warcio)
        .args(["check", "-v"])
        .arg(&path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "warcio check failed:\n{said}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Every record's digests are checked and pass (a revisit's name a body
    // stored elsewhere, which warcio does not check).
    assert_eq!(said.matches("digest pass").count(), 7, "{said}");
    assert_eq!(said.matches("not checked (revisit)").count(), 1, "{said}");
    let index = Command::new(&warcio)
        .args(["index", "-f", "warc-type,warc-target-uri,http:status"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        index.status.success(),
        "{}",
        String::from_utf8_lossy(&index.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&index.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let f = |k: &str| l.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
            (f("warc-type"), f("warc-target-uri"), f("http:status"))
        })
        .collect();
    let e = |t: &str, u: &str, s: &str| (t.to_string(), u.to_string(), s.to_string());
    assert_eq!(
        seen,
        [
            e("warcinfo", "", ""),
            e("request", "https://e.org/", ""),
            e("response", "https://e.org/", "200"),
            e("request", "https://e.org/", ""),
            e("revisit", "https://e.org/", "200"),
            e("request", "https://e.org/a.png", ""),
            e("response", "https://e.org/a.png", "200"),
            e("metadata", "https://e.org/", ""),
        ]
    );
}

/// A SearXNG instance on loopback answering every search with the same
/// JSON page; its robots.txt forbids `/private`.
fn searx() -> spinneret_tests::server::TestWeb {
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    let page = r#"{"query": "rust wasm", "results": [
        {"url": "https://a.example/one", "title": "One", "content": "the first"},
        {"url": "javascript:alert(1)", "title": "Not a page", "content": ""},
        {"url": "https://b.example/two", "title": "Two", "content": ""},
        {"url": "https://c.example/three", "title": "Three", "content": "the third"}]}"#;
    let site = Site::new()
        .robots("User-agent: *\nDisallow: /private\n")
        .generated(std::sync::Arc::new(move |path: &str| {
            (path.starts_with("/search?") || path.starts_with("/private/search?"))
                .then(|| Route::file("application/json", page.to_string()))
        }));
    TestWeb::start(Web::new().site("127.0.0.1", site))
}

#[test]
fn query_asks_one_engine_and_prints_its_ranked_hits() {
    use crate::common::{expect_exit, spinneret, text};
    let web = searx();
    let base = format!("http://127.0.0.1:{}/", web.port());
    let config = format!(r#"{{"base": "{base}"}}"#);
    let out = spinneret(&[
        "query",
        "builtin:searxng",
        "--config",
        &config,
        "--json",
        "--max",
        "2",
        "rust",
        "wasm",
    ]);
    let stderr = expect_exit(&out, 0);
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Only http(s) hits, at most --max of them, best first.
    let seen: Vec<(u64, &str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["rank"].as_u64().unwrap(),
                l["url"].as_str().unwrap(),
                l["title"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (1, "https://a.example/one", "One"),
            (2, "https://b.example/two", "Two")
        ],
        "{stderr}"
    );
    let asked: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/search"))
        .map(|r| r.path)
        .collect();
    assert_eq!(asked, ["/search?q=rust+wasm&format=json&pageno=1"]);
    // The text form, for a person.
    let out = spinneret(&["query", "builtin:searxng", "--config", &config, "rust"]);
    expect_exit(&out, 0);
    assert!(
        text(&out.stdout).starts_with("  1. One\n     https://a.example/one\n     the first\n"),
        "{}",
        text(&out.stdout)
    );

    // robots.txt applies to the engine: the query is reported, not forced.
    let private = format!(r#"{{"base": "{base}private/"}}"#);
    let out = spinneret(&["query", "builtin:searxng", "--config", &private, "rust"]);
    let stderr = expect_exit(&out, 1);
    assert!(stderr.contains("disallows"), "{stderr}");
    assert!(
        !web.requests()
            .iter()
            .any(|r| r.path.starts_with("/private"))
    );
    // A plugin of another kind, and bad input.
    let out = spinneret(&["query", "builtin:maintenance", "rust"]);
    assert!(
        expect_exit(&out, 3)
            .contains("implements the `change-detector` world, not `search-engine`")
    );
    let out = spinneret(&["query", "builtin:searxng", "--config", "[1]", "rust"]);
    assert!(expect_exit(&out, 2).contains("--config must be a JSON object"));
    let out = spinneret(&["query", "builtin:nope", "rust"]);
    assert!(expect_exit(&out, 2).contains("there is no built-in plugin `nope`"));
    let out = spinneret(&["query", "builtin:searxng", "rust"]);
    assert!(expect_exit(&out, 3).contains("searxng: set `base`"));
}
