//! WebSnatcher's output read by the tools made for it: the WARC file by
//! `warcio` (PyPI; `.ci/run` installs it).

use crate::common::collect;
use spinneret::snatch::warc::{Original, WarcWriter, payload_digest};
use std::process::Command;

/// `warcio` on the PATH, or `None` with a note (a failure under CI).
pub(crate) fn warcio() -> Option<std::path::PathBuf> {
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
        None,
        &[("category", "URLs"), ("depth", "0")],
        now,
    )
    .unwrap();
    w.finish().unwrap();

    let said = warcio_check(&warcio, &path);
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

/// A small site on loopback: a page with a stylesheet (which references an
/// image), an image, a same-site link, a link elsewhere, a page robots.txt
/// forbids and a page the profile excludes.
/// The home page of [`small_site`].
const HOME: &str = r#"<html><head><title>Home</title><link rel="stylesheet" href="/style/site.css"></head>
<body><img src="img/a.png"><a href="about.html">about</a> <a href="https://x.example/">x</a>
<a href="/private/p.html">p</a> <a href="/ads/buy.html">ads</a></body></html>"#;

/// The stylesheet of [`small_site`].
const SITE_CSS: &str = "body { background: url(../img/bg.png) }";

fn small_site() -> spinneret_tests::server::TestWeb {
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    let site = Site::new()
        .robots("User-agent: *\nDisallow: /private/\n")
        .page("/index.html", HOME)
        .page(
            "/about.html",
            r#"<title>About</title><a href="index.html">home</a><a href="deeper.html">deeper</a>"#,
        )
        .page("/deeper.html", "<title>Deeper</title>")
        .page("/private/p.html", "<title>Private</title>")
        .page("/ads/buy.html", "<title>Ads</title>")
        .route("/style/site.css", Route::file("text/css", SITE_CSS))
        .route(
            "/img/a.png",
            Route::file("image/png", "PNG-a").etag("\"a1\""),
        )
        .route("/img/bg.png", Route::file("image/png", "PNG-bg"));
    TestWeb::start(Web::new().site("127.0.0.1", site))
}

#[test]
fn collect_mirrors_a_profiles_pages_with_their_requisites_and_converted_links() {
    use crate::common::{expect_exit, text};
    let web = small_site();
    let port = web.port();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bookmarks.html"),
        format!(
            r#"<DL><p><DT><H3>Reading</H3><DL><p>
<DT><A HREF="http://127.0.0.1:{port}/about.html">About</A>
<DT><A HREF="javascript:void(0)">Bookmarklet</A></DL><p></DL>"#
        ),
    )
    .unwrap();
    let out = collect(
        dir.path(),
        &format!(
            r#"mirror = "mirror"
exclude = ["http://127.0.0.1:{port}/ads/"]

[[url]]
url = "http://127.0.0.1:{port}/index.html"
depth = 1

[[bookmarks]]
file = "bookmarks.html"
"#
        ),
    );
    // Some links could not be collected (robots.txt, the exclusion): exit 1.
    let stderr = expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    let host = format!("127.0.0.1_{port}");
    let files = run_files(&dir.path().join("mirror"), 1);
    let mut expected: Vec<String> = [
        "Bookmarks/Reading/HOST/about.html",
        "URLs/HOST/about.html",
        "URLs/HOST/img/a.png",
        "URLs/HOST/img/bg.png",
        "URLs/HOST/index.html",
        "URLs/HOST/style/site.css",
    ]
    .iter()
    .map(|f| f.replace("HOST", &host))
    .collect();
    expected.sort();
    assert_eq!(files, expected, "{stdout}\n{stderr}");
    // depth 1 from index reaches about, not deeper; the exclusion and
    // robots.txt are reported, not fetched.
    assert!(stdout.contains("1 bookmarks of other schemes"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "not collected: http://127.0.0.1:{port}/private/p.html: robots.txt"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "not collected: http://127.0.0.1:{port}/ads/buy.html: excluded by the profile"
        )),
        "{stdout}"
    );
    let paths: Vec<String> = web.requests().into_iter().map(|r| r.path).collect();
    assert!(
        !paths
            .iter()
            .any(|p| p.starts_with("/private") || p.starts_with("/ads") || p == "/deeper.html"),
        "{paths:?}"
    );
    // Each URL once, whichever items reached it (about.html: the URL's link and the bookmark).
    assert_eq!(
        paths.iter().filter(|p| *p == "/about.html").count(),
        1,
        "{paths:?}"
    );
    // Links point into the mirror, or to absolute URLs.
    let read = |f: &str| {
        std::fs::read_to_string(
            dir.path()
                .join("mirror/runs/0001")
                .join(f.replace("HOST", &host)),
        )
        .unwrap()
    };
    let index = read("URLs/HOST/index.html");
    for expected in [
        r#"href="style/site.css""#,
        r#"src="img/a.png""#,
        r#"href="about.html""#,
        r#"href="https://x.example/""#,
        &format!(r#"href="http://127.0.0.1:{port}/private/p.html""#),
    ] {
        assert!(index.contains(expected), "{expected} not in {index}");
    }
    assert_eq!(
        read("URLs/HOST/style/site.css"),
        "body { background: url(../img/bg.png) }"
    );
    // The bookmark's copy links back to index.html, which that category does not hold.
    assert!(
        read("Bookmarks/Reading/HOST/about.html")
            .contains(&format!(r#"href="http://127.0.0.1:{port}/index.html""#))
    );
}

/// The files run `n` saved in the mirror at `mirror` (its index aside),
/// sorted.
pub(crate) fn run_files(mirror: &std::path::Path, n: u32) -> Vec<String> {
    let mut files: Vec<String> = walk(&mirror.join(format!("runs/{n:04}")))
        .into_iter()
        .filter(|f| f != "index.html")
        .collect();
    files.sort();
    files
}

/// Every file under `root`, relative and `/`-separated.
fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out
}

#[test]
fn collect_asks_an_interests_engines_and_collects_their_hits_once() {
    use crate::common::{expect_exit, text};
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    use std::sync::{Arc, OnceLock};
    let port: Arc<OnceLock<u16>> = Arc::new(OnceLock::new());
    let p = port.clone();
    let site = Site::new()
        .page("/one.html", "<title>One</title><img src=\"one.png\">")
        .page("/two.html", "<title>Two</title>")
        .route("/one.png", Route::file("image/png", "PNG"))
        .generated(Arc::new(move |path: &str| {
            let port = p.get().copied().unwrap_or(0);
            // Both engines find one.html; the second also two.html.
            let results = match path {
                x if x.starts_with("/a/search?") => format!(r#"[{{"url": "http://127.0.0.1:{port}/one.html", "title": "One"}}]"#),
                x if x.starts_with("/b/search?") => format!(
                    r#"[{{"url": "http://127.0.0.1:{port}/two.html", "title": "Two"}}, {{"url": "http://127.0.0.1:{port}/one.html#top", "title": "One"}}]"#
                ),
                // The third finds nothing: a note, not a failed run.
                x if x.starts_with("/c/search?") => "[]".to_string(),
                _ => return None,
            };
            Some(Route::file("application/json", format!(r#"{{"results": {results}}}"#)))
        }));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let _ = port.set(web.port());
    let base = format!("http://127.0.0.1:{}", web.port());
    let engines = crate::common::searxng_engines(&base, &[("a", "a"), ("b", "b"), ("c", "c")]);
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            r#"[[interest]]
title = "Rust"
keywords = ["rust"]
engines = ["a", "b", "c"]

{engines}"#
        ),
    );
    let stderr = expect_exit(&out, 0);
    assert!(
        text(&out.stdout).contains("note: interest `Rust`, engine `c`: the engine found nothing\n"),
        "{}",
        text(&out.stdout)
    );
    let host = format!("127.0.0.1_{}", web.port());
    let files = run_files(&dir.path().join("mirror"), 1);
    assert_eq!(
        files,
        [
            format!("Rust/{host}/one.html"),
            format!("Rust/{host}/one.png"),
            format!("Rust/{host}/two.html")
        ],
        "{}\n{stderr}",
        text(&out.stdout)
    );
    let mut asked: Vec<String> = web
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p.ends_with(".html"))
        .collect();
    asked.sort();
    assert_eq!(asked, ["/one.html", "/two.html"], "each hit once");
    // The index: each engine's hits in its rank order, one.html (found by
    // both, once with a fragment) under each with that engine's rank.
    let index = std::fs::read_to_string(dir.path().join("mirror/index.html")).unwrap();
    let mut ranked = Vec::new();
    for chunk in index.split("<h3>").skip(1) {
        let engine = chunk.split("</h3>").next().unwrap();
        if chunk.contains("No results.") {
            ranked.push(format!("{engine}: none"));
        }
        for li in chunk.split("<li value=\"").skip(1) {
            let rank = li.split('"').next().unwrap();
            let url = li.split("class=\"url\" href=\"").nth(1).unwrap();
            ranked.push(format!(
                "{engine} {rank} {}",
                url.split('"').next().unwrap()
            ));
        }
    }
    assert_eq!(
        ranked,
        [
            format!("a 1 {base}/one.html"),
            format!("b 1 {base}/two.html"),
            format!("b 2 {base}/one.html"),
            "c: none".to_string(),
        ]
    );
}

/// Requisites on another host (a CDN) are collected by default and left to
/// the web under `requisites = "same-site"`; links to another site are
/// never followed.
#[test]
fn requisites_come_from_any_host_unless_the_profile_says_same_site() {
    use crate::common::{spinneret, text};
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    use std::sync::{Arc, OnceLock};
    let port: Arc<OnceLock<u16>> = Arc::new(OnceLock::new());
    let p = port.clone();
    let web = TestWeb::start(
        Web::new()
            .site(
                "www.news.test",
                Site::new()
                    .generated(Arc::new(move |path: &str| {
                        let port = p.get().copied().unwrap_or(0);
                        (path == "/index.html").then(|| Route::file("text/html", format!(
                            r#"<title>News</title><link rel="stylesheet" href="http://cdn.news.test:{port}/s.css">
<img src="http://cdn.news.test:{port}/a.png"><img src="/local.png"><a href="http://other.test:{port}/">elsewhere</a>"#
                        )))
                    }))
                    .route("/local.png", Route::file("image/png", "PNG")),
            )
            .site(
                "cdn.news.test",
                Site::new()
                    .route("/s.css", Route::file("text/css", "p { background: url(bg.png) }"))
                    .route("/a.png", Route::file("image/png", "PNG"))
                    .route("/bg.png", Route::file("image/png", "PNG")),
            )
            .site("other.test", Site::new().page("/", "<title>Other</title>")),
    );
    let _ = port.set(web.port());
    let port = web.port();
    let mut files_of = Vec::new();
    for requisites in ["any-host", "same-site"] {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("profile.toml");
        std::fs::write(
            &profile,
            format!(
                "requisites = \"{requisites}\"\nper_site_delay = \"0s\"\n[[url]]\nurl = \"http://www.news.test:{port}/index.html\"\ndepth = 1\n"
            ),
        )
        .unwrap();
        let mut args = vec!["collect", profile.to_str().unwrap()];
        let resolves: Vec<String> = ["www.news.test", "cdn.news.test", "other.test"]
            .iter()
            .map(|h| format!("{h}=127.0.0.1"))
            .collect();
        for r in &resolves {
            args.extend(["--resolve", r.as_str()]);
        }
        let out = spinneret(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
        let files = run_files(&dir.path().join("mirror"), 1);
        let page = std::fs::read_to_string(
            dir.path()
                .join("mirror/runs/0001/URLs")
                .join(format!("www.news.test_{port}/index.html")),
        )
        .unwrap();
        files_of.push((files, page, text(&out.stdout)));
    }
    let (any, page, _) = &files_of[0];
    assert_eq!(
        any,
        &[
            format!("URLs/cdn.news.test_{port}/a.png"),
            format!("URLs/cdn.news.test_{port}/bg.png"),
            format!("URLs/cdn.news.test_{port}/s.css"),
            format!("URLs/www.news.test_{port}/index.html"),
            format!("URLs/www.news.test_{port}/local.png"),
        ]
    );
    assert!(
        page.contains(&format!(r#"href="../cdn.news.test_{port}/s.css""#))
            && page.contains(&format!(r#"<a href="http://other.test:{port}/">"#)),
        "{page}"
    );
    let (same, page, _) = &files_of[1];
    assert_eq!(
        same,
        &[
            format!("URLs/www.news.test_{port}/index.html"),
            format!("URLs/www.news.test_{port}/local.png"),
        ]
    );
    assert!(
        page.contains(&format!(r#"<img src="http://cdn.news.test:{port}/a.png">"#)),
        "{page}"
    );
    // The other site was never asked, under either setting; the CDN once
    // per file under any-host only.
    let hosts: Vec<(String, String)> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| (r.host.split(':').next().unwrap().to_string(), r.path))
        .collect();
    assert!(!hosts.iter().any(|(h, _)| h == "other.test"), "{hosts:?}");
    assert_eq!(
        hosts.iter().filter(|(h, _)| h == "cdn.news.test").count(),
        3,
        "{hosts:?}"
    );
}

/// `site` served on 127.0.0.1 and collected by a profile of its
/// `/index.html` alone: the web, the profile's directory and the run.
fn collect_index_of(
    site: spinneret_tests::server::Site,
) -> (
    spinneret_tests::server::TestWeb,
    tempfile::TempDir,
    std::process::Output,
) {
    use spinneret_tests::server::{TestWeb, Web};
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            "[[url]]\nurl = \"http://127.0.0.1:{}/index.html\"\n",
            web.port()
        ),
    );
    (web, dir, out)
}

/// A frame's page is collected with what it needs, frames inside frames
/// two deep: a page that frames itself again and again ends there. The
/// run's log in the WARC names the profile's file, not where it lives.
#[test]
fn frames_are_collected_two_deep_and_no_deeper() {
    use crate::common::expect_exit;
    use spinneret_tests::server::{Route, Site};
    use std::sync::Arc;
    let site = Site::new()
        .page(
            "/index.html",
            r#"<title>Top</title><iframe src="/f/1.html"></iframe>"#,
        )
        .route("/f/i.png", Route::file("image/png", "PNG"))
        .generated(Arc::new(|path: &str| {
            let n: u32 = path
                .strip_prefix("/f/")?
                .strip_suffix(".html")?
                .parse()
                .ok()?;
            Some(Route::file(
                "text/html",
                format!(r#"<img src="i.png"><iframe src="{}.html"></iframe>"#, n + 1),
            ))
        }));
    let (web, dir, out) = collect_index_of(site);
    expect_exit(&out, 0);
    let mut asked: Vec<String> = web
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p != "/robots.txt")
        .collect();
    asked.sort();
    assert_eq!(
        asked,
        [
            "/f/1.html",
            "/f/2.html",
            "/f/3.html",
            "/f/i.png",
            "/index.html"
        ]
    );
    let warc = {
        use std::io::Read;
        let mut t = String::new();
        let file = dir.path().join("mirror/runs/0001.warc.gz");
        flate2::read::MultiGzDecoder::new(std::fs::File::open(file).unwrap())
            .read_to_string(&mut t)
            .unwrap();
        t
    };
    let log = warc.split("WARC/1.1\r\n").last().unwrap();
    assert!(
        log.contains("metadata://spinneret/collect/log")
            && log.contains("\r\nprofile: profile.toml\r\n"),
        "{log}"
    );
}

#[test]
fn collect_stops_an_item_at_max_pages_and_says_so() {
    use crate::common::{expect_exit, text};
    let web = small_site();
    let port = web.port();
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            "max_pages = 2\nrequisites = \"same-site\"\n\n[[url]]\nurl = \"http://127.0.0.1:{port}/index.html\"\ndepth = 5\n"
        ),
    );
    expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("/index.html already has 2 pages (`max_pages`)"),
        "{stdout}"
    );
    let pages: Vec<String> = web
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p.ends_with(".html"))
        .collect();
    // The two pages, then nothing more for that item.
    assert_eq!(pages, ["/index.html", "/about.html"], "{stdout}");
}

#[test]
fn collect_follows_redirects_politely_and_keeps_the_found_pages_base() {
    use crate::common::{expect_exit, text};
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    let site = Site::new()
        .route("/start", Route::redirect(301, "/dir/page.html"))
        .page("/dir/page.html", r#"<title>Page</title><img src="a.png">"#)
        .route("/dir/a.png", Route::file("image/png", "PNG"))
        .route("/loop", Route::redirect(302, "/loop"));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let port = web.port();
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            "[[url]]\nurl = \"http://127.0.0.1:{port}/start\"\n\n[[url]]\nurl = \"http://127.0.0.1:{port}/loop\"\n"
        ),
    );
    expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "not collected: http://127.0.0.1:{port}/loop: redirect loop: http://127.0.0.1:{port}/loop -> http://127.0.0.1:{port}/loop"
        )),
        "{stdout}"
    );
    let host = format!("127.0.0.1_{port}");
    let files = run_files(&dir.path().join("mirror"), 1);
    assert_eq!(
        files,
        [
            format!("URLs/{host}/dir/a.png"),
            format!("URLs/{host}/start.html")
        ],
        "{stdout}"
    );
    let page = std::fs::read_to_string(
        dir.path()
            .join("mirror/runs/0001")
            .join(format!("URLs/{host}/start.html")),
    )
    .unwrap();
    assert_eq!(page, r#"<title>Page</title><img src="dir/a.png">"#);
    let loop_requests = web.requests().iter().filter(|r| r.path == "/loop").count();
    assert_eq!(
        loop_requests, 1,
        "a redirect to itself is a loop, seen at the first answer"
    );
}

/// What `warcio check -v` says of a WARC file that passes it.
fn warcio_check(warcio: &std::path::Path, warc: &std::path::Path) -> String {
    let check = Command::new(warcio)
        .args(["check", "-v"])
        .arg(warc)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        check.status.success(),
        "warcio check failed:\n{said}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    said
}

/// `warcio index` of a WARC file: (type, target URI, HTTP status, profile) per record.
pub(crate) fn warc_records(
    warcio: &std::path::Path,
    warc: &std::path::Path,
) -> Vec<(String, String, String, String)> {
    let said = warcio_check(warcio, warc);
    assert!(!said.contains("fail"), "{said}");
    let index = Command::new(warcio)
        .args([
            "index",
            "-f",
            "warc-type,warc-target-uri,http:status,warc-profile",
        ])
        .arg(warc)
        .output()
        .unwrap();
    assert!(
        index.status.success(),
        "{}",
        String::from_utf8_lossy(&index.stderr)
    );
    String::from_utf8_lossy(&index.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let f = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
            let profile = f("warc-profile");
            let profile = profile.rsplit('/').next().unwrap_or("").to_string();
            (
                f("warc-type"),
                f("warc-target-uri"),
                f("http:status"),
                profile,
            )
        })
        .collect()
}

/// With the default `keep_runs = 1`, the last run's files go before a run
/// writes, but its WARC file stays until the run ends: an unchanged image
/// is still asked conditionally, and the records its revisits refer to are
/// taken into the new run's WARC file, which stands alone once the old one
/// is gone.
#[test]
fn a_run_that_replaces_the_last_one_still_asks_conditionally_and_archives_whole() {
    use crate::common::{expect_exit, spinneret};
    let web = small_site();
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let mirror = dir.path().join("mirror");
    let profile = dir.path().join("profile.toml");
    std::fs::write(&profile, format!("[[url]]\nurl = \"{base}/index.html\"\n")).unwrap();
    let p = profile.to_str().unwrap();
    expect_exit(&spinneret(&["collect", p]), 0);
    collect_again_unchanged(&web, p, 1);
    assert!(!mirror.join("runs/0001").exists() && !mirror.join("runs/0001.warc.gz").exists());
    assert_eq!(
        run_files(&mirror, 2),
        [
            "URLs/127.0.0.1_PORT/img/a.png",
            "URLs/127.0.0.1_PORT/img/bg.png",
            "URLs/127.0.0.1_PORT/index.html",
            "URLs/127.0.0.1_PORT/style/site.css",
        ]
        .map(|f| f.replace("PORT", &web.port().to_string()))
    );
    let Some(warcio) = warcio() else {
        return;
    };
    let warc = mirror.join("runs/0002.warc.gz");
    let records = warc_records(&warcio, &warc);
    let kinds = |kind: &str| -> Vec<String> {
        let mut v: Vec<String> = records
            .iter()
            .filter(|r| r.0 == kind)
            .map(|r| r.1.trim_start_matches(&base).to_string())
            .collect();
        v.sort();
        v
    };
    // Each unchanged resource a revisit, each revisit's original taken in.
    let unchanged = [
        "/img/a.png",
        "/img/bg.png",
        "/index.html",
        "/style/site.css",
    ];
    assert_eq!(kinds("revisit"), unchanged, "{records:?}");
    assert_eq!(kinds("response"), unchanged, "{records:?}");
    // The revisits name records of this file.
    let text = {
        use std::io::Read;
        let mut t = String::new();
        flate2::read::MultiGzDecoder::new(std::fs::File::open(&warc).unwrap())
            .read_to_string(&mut t)
            .unwrap();
        t
    };
    let field = |rec: &str, name: &str| -> Option<String> {
        rec.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_string))
    };
    let records: Vec<&str> = text.split("WARC/1.1\r\n").skip(1).collect();
    let ids: Vec<String> = records
        .iter()
        .filter_map(|r| field(r, "WARC-Record-ID"))
        .collect();
    let refers: Vec<String> = records
        .iter()
        .filter_map(|r| field(r, "WARC-Refers-To"))
        .collect();
    assert_eq!(refers.len(), 4);
    assert!(refers.iter().all(|r| ids.contains(r)), "{refers:?} {ids:?}");
    // A third run finds them again in the second's file.
    let out = spinneret(&["collect", p]);
    expect_exit(&out, 0);
    assert_eq!(
        kinds_of(
            &warc_records(&warcio, &mirror.join("runs/0003.warc.gz")),
            "revisit"
        ),
        4
    );
}

/// Collect profile `p` again from `web`, unchanged since the last run:
/// `unchanged` main pages said unchanged, and small_site's image asked
/// conditionally with the ETag it sent.
fn collect_again_unchanged(web: &spinneret_tests::server::TestWeb, p: &str, unchanged: usize) {
    use crate::common::{expect_exit, spinneret, text};
    web.clear_log();
    let out = spinneret(&["collect", p]);
    expect_exit(&out, 0);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "since the last run: 0 new, 0 changed, {unchanged} unchanged, 0 gone"
        )),
        "{stdout}"
    );
    let img = web
        .requests()
        .into_iter()
        .find(|r| r.path == "/img/a.png")
        .unwrap();
    assert_eq!(img.header("if-none-match"), Some("\"a1\""));
}

fn kinds_of(records: &[(String, String, String, String)], kind: &str) -> usize {
    records.iter().filter(|r| r.0 == kind).count()
}

#[test]
fn collect_books_runs_writes_warc_and_index_and_cleans_up_and_archives() {
    let web = small_site();
    let port = web.port();
    let dir = tempfile::tempdir().unwrap();
    let books = Books::new(dir.path(), port);
    books.first_run_saves_the_url_and_the_bookmark();
    books.first_runs_warc_holds_each_retrieved_url();
    books.an_unchanged_run_revisits(&web);
    books.the_third_run_removes_the_first();
    let day = jiff::Zoned::now().date().to_string();
    books.archive_keeps_the_page(&day);
    books.clean_leaves_only_the_archive(&day);
    books.purge_before_tomorrow_leaves_nothing();
}

/// The collection of [`collect_books_runs_writes_warc_and_index_and_cleans_up_and_archives`]:
/// a URL of the small site and a bookmark file with one of its pages, two
/// runs kept.
struct Books {
    /// The profile's path.
    profile: String,
    /// The mirror's directory.
    mirror: std::path::PathBuf,
    /// The site's directory name in the mirror (`127.0.0.1_PORT`).
    host: String,
    /// The site's base URL.
    base: String,
}

impl Books {
    /// The profile and the bookmark file, in `dir`, for the small site on
    /// `port`.
    fn new(dir: &std::path::Path, port: u16) -> Books {
        let base = format!("http://127.0.0.1:{port}");
        std::fs::write(
            dir.join("bookmarks.html"),
            format!(r#"<DL><p><DT><H3>Reading</H3><DL><p><DT><A HREF="{base}/about.html">About</A></DL><p></DL>"#),
        )
        .unwrap();
        let profile = dir.join("profile.toml");
        std::fs::write(
            &profile,
            format!("keep_runs = 2\n\n[[url]]\nurl = \"{base}/index.html\"\n\n[[bookmarks]]\nfile = \"bookmarks.html\"\n"),
        )
        .unwrap();
        Books {
            profile: profile.to_str().unwrap().to_string(),
            mirror: dir.join("mirror"),
            host: format!("127.0.0.1_{port}"),
            base,
        }
    }

    /// Run 1 saves the URL's page with its requisites and the bookmark's
    /// page, and indexes them by category, with their titles and bytes.
    fn first_run_saves_the_url_and_the_bookmark(&self) {
        use crate::common::{expect_exit, spinneret, text};
        let (p, mirror, host) = (
            self.profile.as_str(),
            self.mirror.as_path(),
            self.host.as_str(),
        );
        // Run 1: robots.txt keeps /private/ out, so it exits 1; all else is saved.
        let out = spinneret(&["collect", p]);
        let stderr = expect_exit(&out, 0);
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("since the last run: 2 new, 0 changed, 0 unchanged, 0 gone"),
            "{stdout}\n{stderr}"
        );
        assert_eq!(
            run_files(mirror, 1),
            [
                format!("Bookmarks/Reading/{host}/about.html"),
                format!("URLs/{host}/img/a.png"),
                format!("URLs/{host}/img/bg.png"),
                format!("URLs/{host}/index.html"),
                format!("URLs/{host}/style/site.css"),
            ]
        );
        // The index: categories, titles, local copies that exist, byte counts.
        let index = std::fs::read_to_string(mirror.join("index.html")).unwrap();
        for want in [
            format!(r#"<a class="local" href="runs/0001/URLs/{host}/index.html">Home</a>"#),
            format!(
                r#"<a class="local" href="runs/0001/Bookmarks/Reading/{host}/about.html">About</a>"#
            ),
            "<h2>URLs <span class=\"bytes\">".to_string(),
            "<h2>Bookmarks/Reading <span class=\"bytes\">".to_string(),
            r#"<span id="new">2 new</span>"#.to_string(),
            r#"href="runs/0001.warc.gz""#.to_string(),
        ] {
            assert!(index.contains(&want), "{want} not in {index}");
        }
        let run_index = std::fs::read_to_string(mirror.join("runs/0001/index.html")).unwrap();
        assert!(
            run_index.contains(&format!(r#"href="URLs/{host}/index.html""#)),
            "{run_index}"
        );
        // The URL's page, its stylesheet, its background and its image, as
        // retrieved, are its bytes.
        let urls_bytes = HOME.len() + SITE_CSS.len() + "PNG-a".len() + "PNG-bg".len();
        assert!(
            index.contains(&format!(
                "<span class=\"bytes\">{urls_bytes} B</span> <span class=\"change\">new</span>"
            )),
            "{urls_bytes}: {index}"
        );
    }

    /// Run 1's WARC: one response per retrieved URL, every digest checked.
    fn first_runs_warc_holds_each_retrieved_url(&self) {
        let (mirror, base) = (self.mirror.as_path(), self.base.as_str());
        if let Some(warcio) = warcio() {
            let records = warc_records(&warcio, &mirror.join("runs/0001.warc.gz"));
            let mut responses: Vec<String> = records
                .iter()
                .filter(|r| r.0 == "response")
                .map(|r| format!("{} {}", r.2, r.1.trim_start_matches(base)))
                .collect();
            responses.sort();
            assert_eq!(
                responses,
                [
                    "200 /about.html",
                    "200 /img/a.png",
                    "200 /img/bg.png",
                    "200 /index.html",
                    "200 /style/site.css"
                ],
                "{records:?}"
            );
            assert_eq!(records.iter().filter(|r| r.0 == "request").count(), 5);
            // Beside each main page's answer, why the run has it; at the end,
            // the run's log.
            // (The pages' records come in the order their answers did.)
            let mut metadata: Vec<&str> = records
                .iter()
                .filter(|r| r.0 == "metadata")
                .map(|r| r.1.trim_start_matches(base))
                .collect();
            let pages = metadata.len().saturating_sub(1);
            metadata[..pages].sort_unstable();
            assert_eq!(
                metadata,
                [
                    "/about.html",
                    "/index.html",
                    "metadata://spinneret/collect/log"
                ],
                "{records:?}"
            );
        }
    }

    /// Run 2: nothing changed. The image is asked conditionally (304), the
    /// rest compared by digest; the WARC holds revisits, the image is the
    /// same file on disk.
    fn an_unchanged_run_revisits(&self, web: &spinneret_tests::server::TestWeb) {
        let (p, mirror, host, base) = (
            self.profile.as_str(),
            self.mirror.as_path(),
            self.host.as_str(),
            self.base.as_str(),
        );
        collect_again_unchanged(web, p, 2);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ino = |n: u32| {
                std::fs::metadata(mirror.join(format!("runs/{n:04}/URLs/{host}/img/a.png")))
                    .unwrap()
                    .ino()
            };
            assert_eq!(ino(1), ino(2), "one body on disk for both runs");
        }
        if let Some(warcio) = warcio() {
            let records = warc_records(&warcio, &mirror.join("runs/0002.warc.gz"));
            let revisits: Vec<(String, String)> = records
                .iter()
                .filter(|r| r.0 == "revisit")
                .map(|r| (r.1.trim_start_matches(base).to_string(), r.3.clone()))
                .collect();
            // A 304 too is a revisit replay tools serve (the stored 200's head).
            assert!(
                revisits.contains(&("/img/a.png".into(), "identical-payload-digest".into())),
                "{records:?}"
            );
            assert!(
                revisits.contains(&("/index.html".into(), "identical-payload-digest".into())),
                "{records:?}"
            );
            assert_eq!(
                records.iter().filter(|r| r.0 == "response").count(),
                0,
                "{records:?}"
            );
        }
        assert_eq!(run_files(mirror, 2), run_files(mirror, 1));
    }

    /// Run 3: keep_runs = 2, so run 1 is removed before it writes.
    fn the_third_run_removes_the_first(&self) {
        use crate::common::{expect_exit, spinneret, text};
        let (p, mirror) = (self.profile.as_str(), self.mirror.as_path());
        let out = spinneret(&["collect", p]);
        expect_exit(&out, 0);
        assert!(text(&out.stdout).contains("files of earlier runs removed (keep_runs = 2)"));
        assert!(!mirror.join("runs/0001").exists() && !mirror.join("runs/0001.warc.gz").exists());
        assert!(
            mirror.join("runs/0002/index.html").exists()
                && mirror.join("runs/0003/index.html").exists()
        );
    }

    /// The copy of `f` of the site archived on `day`.
    fn archived(&self, day: &str, f: &str) -> std::path::PathBuf {
        self.mirror
            .join(format!("Archive/{day}/URLs/{}/{f}", self.host))
    }

    /// Archive the page (on `day`, today); its link to a page not archived
    /// is its URL again.
    fn archive_keeps_the_page(&self, day: &str) {
        use crate::common::{expect_exit, spinneret, text};
        let (p, mirror, host, base) = (
            self.profile.as_str(),
            self.mirror.as_path(),
            self.host.as_str(),
            self.base.as_str(),
        );
        let out = spinneret(&["collect", p, "--archive", &format!("{base}/index.html")]);
        expect_exit(&out, 0);
        let archived = |f: &str| self.archived(day, f);
        for f in ["index.html", "style/site.css", "img/a.png", "img/bg.png"] {
            assert!(archived(f).is_file(), "{f}: {}", text(&out.stdout));
        }
        let page = std::fs::read_to_string(archived("index.html")).unwrap();
        assert!(
            page.contains(&format!(r#"href="{base}/about.html""#)),
            "{page}"
        );
        assert!(page.contains(r#"src="img/a.png""#), "{page}");
        let list = std::fs::read_to_string(mirror.join("Archive/archive.html")).unwrap();
        assert!(
            list.contains(&format!(
                r#"<a href="{day}/URLs/{host}/index.html">Home</a>"#
            )),
            "{list}"
        );
    }

    /// --clean leaves only the archive made on `day` (and the mirror's
    /// bookkeeping).
    fn clean_leaves_only_the_archive(&self, day: &str) {
        use crate::common::{expect_exit, spinneret};
        let (p, mirror, host) = (
            self.profile.as_str(),
            self.mirror.as_path(),
            self.host.as_str(),
        );
        let out = spinneret(&["collect", p, "--clean"]);
        expect_exit(&out, 0);
        let mut left: Vec<String> = walk(mirror)
            .into_iter()
            .filter(|f| !f.starts_with(".spinneret/"))
            .collect();
        left.sort();
        let mut want: Vec<String> = ["index.html", "style/site.css", "img/a.png", "img/bg.png"]
            .iter()
            .map(|f| format!("Archive/{day}/URLs/{host}/{f}"))
            .chain(["Archive/archive.html".to_string()])
            .collect();
        want.sort();
        assert_eq!(left, want);
        assert!(!mirror.join("runs").exists());
        // The archived image outlives its runs' objects.
        assert_eq!(
            std::fs::read(self.archived(day, "img/a.png")).unwrap(),
            b"PNG-a"
        );
    }

    /// Purge what was archived before tomorrow: nothing is left; a day
    /// must be a date.
    fn purge_before_tomorrow_leaves_nothing(&self) {
        use crate::common::{expect_exit, spinneret, text};
        let (p, mirror) = (self.profile.as_str(), self.mirror.as_path());
        let tomorrow = jiff::Zoned::now().date().tomorrow().unwrap().to_string();
        let out = spinneret(&["collect", p, "--purge-before", &tomorrow]);
        expect_exit(&out, 0);
        assert!(text(&out.stdout).contains("1 archived pages from before"));
        assert!(!mirror.join("Archive").exists());
        let out = spinneret(&["collect", p, "--purge-before", "yesterday"]);
        assert!(expect_exit(&out, 2).contains("--purge-before takes a day as YYYY-MM-DD"));
    }
}

#[test]
fn a_hostile_site_cannot_escape_the_mirror_collide_names_loop_or_fill_the_disk() {
    use crate::common::{expect_exit, text};
    use spinneret_tests::server::{Route, Site};
    let long = "x".repeat(400);
    let page = format!(
        r#"<title>Hostile</title>
<img src="/%2e%2e/%2e%2e/escape.png"><img src="/a/..%2f..%2fescape2.png"><img src="/CON"><img src="/{long}.png">
<img src="/same"><img src="/same/"><img src="/same.html"><img src="/q?a=1"><img src="/q@a=1">
<link rel="stylesheet" href="/loop-a.css"><img src="/huge.png">"#
    );
    let site = Site::new()
        .page("/index.html", &page)
        .route(
            "/loop-a.css",
            Route::file("text/css", "@import url(loop-b.css);"),
        )
        .route(
            "/loop-b.css",
            Route::file("text/css", "@import url(loop-a.css);"),
        )
        .route(
            "/huge.png",
            Route::Endless {
                content_type: "image/png".into(),
                declared: 10_000_000_000,
            },
        )
        .generated(std::sync::Arc::new(|path: &str| {
            (path != "/robots.txt").then(|| Route::file("image/png", format!("PNG {path}")))
        }));
    let (web, dir, out) = collect_index_of(site);
    // The 10 GB image is the one failure: cut at the body cap, not saved.
    expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    let failures: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("not collected"))
        .collect();
    assert_eq!(failures.len(), 1, "{stdout}");
    assert!(
        failures[0].contains("/huge.png: larger than the body cap (10485760 bytes): not saved"),
        "{stdout}"
    );
    // Nothing outside the mirror; every file inside the run's directory.
    assert!(!dir.path().join("escape.png").exists() && !dir.path().join("escape2.png").exists());
    let files = run_files(&dir.path().join("mirror"), 1);
    let host = format!("URLs/127.0.0.1_{}/", web.port());
    assert!(files.iter().all(|f| f.starts_with(&host)), "{files:?}");
    // Each distinct URL its own file, none cut off mid-name or over 255 bytes.
    let requested: std::collections::HashSet<String> = web
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p != "/robots.txt" && p != "/huge.png")
        .collect();
    assert_eq!(files.len(), requested.len(), "{files:?}\n{requested:?}");
    assert!(
        files.iter().all(|f| f
            .split('/')
            .all(|part| part.len() <= 255 && part != ".." && part != "CON")),
        "{files:?}"
    );
    // The loop of stylesheets: each asked once.
    for css in ["/loop-a.css", "/loop-b.css"] {
        assert_eq!(web.requests().iter().filter(|r| r.path == css).count(), 1);
    }
}

/// The built-in engines read their engine's own format: each fixture (a
/// page as the engine sends it, in the plugin's `fixtures/`) is served on
/// loopback under the engine's host name with `.test` for its top-level
/// domain, and `spinneret query` asks it there with `--resolve`.
/// The search engines of the built-in plugins (DuckDuckGo, MediaWiki,
/// arXiv), each on a host of its own answering from the plugin's
/// fixtures: its "nothing found" page for the query `qqzxqqzx`.
fn engines_web() -> spinneret_tests::server::TestWeb {
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    let plugins = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins");
    let fixture = |p: &str| std::fs::read_to_string(plugins.join(p)).unwrap();
    // (host, path prefix, content type, fixture, its "nothing found" fixture)
    let engines = [
        (
            "html.duckduckgo.test",
            "/html/?",
            "text/html; charset=UTF-8",
            fixture("duckduckgo/fixtures/results.html"),
            fixture("duckduckgo/fixtures/no-results.html"),
        ),
        (
            "en.wikipedia.test",
            "/w/api.php?",
            "application/json; charset=utf-8",
            fixture("mediawiki/fixtures/search.json"),
            fixture("mediawiki/fixtures/no-results.json"),
        ),
        (
            "export.arxiv.test",
            "/api/query?",
            "application/atom+xml; charset=utf-8",
            fixture("arxiv/fixtures/query.atom"),
            fixture("arxiv/fixtures/empty.atom"),
        ),
    ];
    let mut web = Web::new();
    for (host, prefix, ct, found, nothing) in engines.iter().cloned() {
        let prefix: &'static str = prefix;
        let ct: &'static str = ct;
        web = web.site(
            host,
            Site::new().generated(std::sync::Arc::new(move |path: &str| {
                path.starts_with(prefix).then(|| {
                    let body = if path.contains("qqzxqqzx") {
                        &nothing
                    } else {
                        &found
                    };
                    Route::file(ct, body.clone())
                })
            })),
        );
    }
    TestWeb::start(web)
}

/// The DuckDuckGo plugin's configuration for [`engines_web`] on `port`.
fn duckduckgo_config(port: u16) -> String {
    format!(r#"{{"base": "http://html.duckduckgo.test:{port}/html/"}}"#)
}

/// The MediaWiki plugin's configuration for [`engines_web`] on `port`.
fn mediawiki_config(port: u16) -> String {
    format!(
        r#"{{"api": "http://en.wikipedia.test:{port}/w/api.php", "article_path": "https://en.wikipedia.org/wiki/$1"}}"#
    )
}

/// The arXiv plugin's configuration for [`engines_web`] on `port`.
fn arxiv_config(port: u16) -> String {
    format!(r#"{{"base": "http://export.arxiv.test:{port}/api/query"}}"#)
}

/// `--resolve HOST=127.0.0.1` for the host of the engine's configured URL.
fn resolve_for(config: &str) -> String {
    let host = config
        .split("://")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap();
    format!("{host}=127.0.0.1")
}

/// `spinneret query ENGINE --json WORDS`, the engine configured with
/// `config` and its host resolved to the test web: the hits (rank, URL)
/// and what was said on standard error.
fn ask(engine: &str, config: &str, words: &[&str]) -> (Vec<(u64, String)>, String) {
    use crate::common::{expect_exit, spinneret, text};
    let resolve = resolve_for(config);
    let mut args = vec![
        "query",
        engine,
        "--config",
        config,
        "--resolve",
        &resolve,
        "--json",
    ];
    args.extend_from_slice(words);
    let out = spinneret(&args);
    let stderr = expect_exit(&out, 0);
    let hits: Vec<(u64, String)> = text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["rank"].as_u64().unwrap(),
                v["url"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (hits, stderr)
}

#[test]
fn the_built_in_engines_read_their_engines_pages() {
    let web = engines_web();
    let port = web.port();
    let ddg = duckduckgo_config(port);
    let (hits, _) = ask("builtin:duckduckgo", &ddg, &["robots", "exclusion"]);
    assert_eq!(
        hits,
        [
            (1, "https://en.wikipedia.org/wiki/Robots.txt".to_string()),
            (2, "https://www.robotstxt.org/orig.html".to_string()),
            (3, "https://www.rfc-editor.org/rfc/rfc9309.html".to_string()),
            (
                4,
                "https://en.wikipedia.org/wiki/Robots.txt#History".to_string()
            ),
        ]
    );
    let wiki = mediawiki_config(port);
    let (hits, _) = ask("builtin:mediawiki", &wiki, &["web", "crawler"]);
    let urls: Vec<&str> = hits.iter().map(|h| h.1.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://en.wikipedia.org/wiki/Web_crawler",
            "https://en.wikipedia.org/wiki/Robots.txt",
            "https://en.wikipedia.org/wiki/MOMspider",
            "https://en.wikipedia.org/wiki/C%2B%2B/CLI_%26_%22quotes%22%3F",
        ]
    );
    let arxiv = arxiv_config(port);
    let (hits, stderr) = ask("builtin:arxiv", &arxiv, &["crawler", "--site", "arxiv.org"]);
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[0].1, "http://arxiv.org/abs/2101.00001v2");
    assert!(
        stderr.contains("builtin:arxiv cannot restrict its results by site; it searched without"),
        "{stderr}"
    );
    // The query each engine was sent.
    let asked: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt" && !r.path.contains("qqzxqqzx"))
        .map(|r| r.path)
        .collect();
    assert_eq!(
        asked,
        [
            "/html/?q=robots+exclusion".to_string(),
            "/w/api.php?action=query&list=search&srsearch=web+crawler&srlimit=10&sroffset=0&srnamespace=0&srprop=snippet&format=json&formatversion=2".to_string(),
            "/api/query?search_query=all%3Acrawler&start=0&max_results=10&sortBy=relevance&sortOrder=descending".to_string(),
        ]
    );
}

#[test]
fn the_built_in_engines_say_when_nothing_is_found() {
    use crate::common::{expect_exit, spinneret, text};
    let web = engines_web();
    let port = web.port();
    // Each engine's "nothing found", in the engine's words where it has some.
    for (engine, config, said) in [
        (
            "builtin:duckduckgo",
            &duckduckgo_config(port),
            "no results (the engine says: No results.)\n",
        ),
        (
            "builtin:mediawiki",
            &mediawiki_config(port),
            "no results (the engine says: did you mean: web crawler?)\n",
        ),
        ("builtin:arxiv", &arxiv_config(port), "no results\n"),
    ] {
        let resolve = resolve_for(config);
        let out = spinneret(&[
            "query",
            engine,
            "--config",
            config,
            "--resolve",
            &resolve,
            "qqzxqqzx",
        ]);
        let stderr = expect_exit(&out, 0);
        assert_eq!(text(&out.stdout), said, "{engine}: {stderr}");
        assert!(!stderr.contains("may have changed"), "{engine}: {stderr}");
    }
}

#[test]
fn an_engines_hosts_bound_where_its_query_goes() {
    use crate::common::{expect_exit, spinneret};
    let web = engines_web();
    let port = web.port();
    // An engine's `hosts` (its network grant): its query goes to one of
    // them or nowhere.
    let wiki = mediawiki_config(port);
    let resolve = resolve_for(&wiki);
    let with_host = |host: &str| {
        spinneret(&[
            "query",
            "builtin:mediawiki",
            "--config",
            &wiki,
            "--resolve",
            &resolve,
            "--host",
            host,
            "web",
        ])
    };
    let before = web.requests().len();
    let stderr = expect_exit(&with_host("en.wikipedia.org"), 1);
    assert!(
        stderr.contains(&format!(
            "mediawiki asked for http://en.wikipedia.test:{port}/w/api.php?"
        )) && stderr
            .contains("but en.wikipedia.test is not among the engine's hosts (en.wikipedia.org)"),
        "{stderr}"
    );
    assert_eq!(web.requests().len(), before, "nothing was asked");
    expect_exit(&with_host("EN.wikipedia.test"), 0);
}

/// `spinneret profile ARGS…`.
fn profile(args: &[&str]) -> std::process::Output {
    let mut all = vec!["profile"];
    all.extend_from_slice(args);
    crate::common::spinneret(&all)
}

/// `spinneret profile` writes a profile and edits it keeping the user's
/// comments; an edit that would break the profile changes nothing.
#[test]
fn a_profile_is_written_and_edited_from_the_command_line() {
    use crate::common::{expect_exit, text};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("news.toml");
    let f = file.to_str().unwrap();
    profile_new_writes_a_profile_once(&file);
    let edited = edits_keep_the_users_comment(&file);
    let out = profile(&["show", f]);
    expect_exit(&out, 0);
    let shown = text(&out.stdout);
    let mirror = dir.path().join("mirror");
    assert_eq!(
        shown,
        format!(
            "mirror:      {}\nkeep runs:   2\nmax pages:   1000 per item\nrequisites:  from any host\nschedule:    every 1day\nexcluded:    https://news.example/ads/\n\nURLs:\n  https://news.example/  (depth 0, category URLs)\n  https://blog.example/  (depth 1, category Blogs; every 7days)\n\nInterests:\n  Crawlers: web crawler  (engines wiki; 5 results each; depth 0; daily at 06:30)\n    phrase \"robots exclusion\"\n\nEngines:\n  wiki  (builtin:mediawiki) hosts en.wikipedia.org\n\nIndex: builtin:websnatcher-index\nChange detectors: builtin:maintenance\n",
            mirror.display()
        )
    );

    edits_that_would_break_it_change_nothing(&file, &edited);
    let last = removing_is_by_name(&file);
    the_index_and_detector_plugins_are_added_and_removed(&file, &last);
}

/// `profile new` off a terminal names what is missing, writes the profile
/// at `file` once given a URL, and refuses to write over it.
fn profile_new_writes_a_profile_once(file: &std::path::Path) {
    use crate::common::{expect_exit, text};
    let f = file.to_str().unwrap();
    // Off a terminal nothing is asked: what is missing is named.
    let out = profile(&["new", f]);
    assert!(
        expect_exit(&out, 2)
            .contains("a profile needs something to collect: give --url (not on a terminal"),
    );
    assert!(!file.exists());
    let out = profile(&["new", f, "--url", "https://news.example/"]);
    assert!(
        text(&out.stdout).starts_with(&format!("wrote {f}; its mirror is ")),
        "{}",
        expect_exit(&out, 0)
    );
    let out = profile(&["new", f, "--url", "https://x.example/"]);
    assert!(
        expect_exit(&out, 2).contains("exists; edit it with `spinneret profile add|remove|set`")
    );
}

/// Add a URL, an engine, an interest and an exclusion, and set the
/// schedule and keep_runs, in the profile at `file` whose `mirror` line
/// has a comment of the user's: the comment is kept. The profile edited.
fn edits_keep_the_users_comment(file: &std::path::Path) -> String {
    use crate::common::expect_exit;
    let f = file.to_str().unwrap();
    // The user's own comment, kept through every edit.
    let mut written = std::fs::read_to_string(file).unwrap();
    written = written.replace(
        "mirror = \"mirror\"",
        "mirror = \"mirror\"  # on the big disk",
    );
    std::fs::write(file, &written).unwrap();
    for args in [
        &[
            "add",
            f,
            "url",
            "https://blog.example/",
            "--depth",
            "1",
            "--category",
            "Blogs",
            "--schedule",
            "7d",
        ][..],
        &[
            "add",
            f,
            "engine",
            "wiki",
            "--source",
            "builtin:mediawiki",
            "--host",
            "en.wikipedia.org",
        ],
        &[
            "add",
            f,
            "interest",
            "Crawlers",
            "--keyword",
            "web crawler",
            "--engine",
            "wiki",
            "--phrase",
            "robots exclusion",
            "--max",
            "5",
            "--schedule",
            "06:30",
        ],
        &["add", f, "exclude", "https://news.example/ads/"],
        &["set", f, "schedule", "1d"],
        &["set", f, "keep_runs", "2"],
    ] {
        expect_exit(&profile(args), 0);
    }
    let edited = std::fs::read_to_string(file).unwrap();
    assert!(
        edited.contains("mirror = \"mirror\"  # on the big disk\n"),
        "{edited}"
    );
    edited
}

/// Edits that would break the profile at `file` (holding `edited`)
/// change nothing, and say why.
fn edits_that_would_break_it_change_nothing(file: &std::path::Path, edited: &str) {
    use crate::common::expect_exit;
    let f = file.to_str().unwrap();
    for (args, says) in [
        (
            &["remove", f, "engine", "wiki"][..],
            "no `[[engine]]` is named `wiki`",
        ),
        (&["set", f, "keep_runs", "0"], "`keep_runs` is 0"),
        (&["add", f, "url", "ftp://files.example/"], "ftp"),
        (
            &["remove", f, "url", "https://nowhere.example/"],
            "has no [[url]] with url = \"https://nowhere.example/\"; it has \"https://news.example/\", \"https://blog.example/\"",
        ),
        (&["set", f, "colour", "blue"], "`colour` is not a setting"),
        (
            &["add", f, "interest", "Rust"],
            "give --keyword (not on a terminal",
        ),
    ] {
        let stderr = expect_exit(&profile(args), 2);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(std::fs::read_to_string(file).unwrap(), edited, "{args:?}");
    }
}

/// Removing is by name; the engine goes once no interest names it, and
/// the user's comment stays. The profile then.
fn removing_is_by_name(file: &std::path::Path) -> String {
    use crate::common::expect_exit;
    let f = file.to_str().unwrap();
    for args in [
        &["remove", f, "interest", "Crawlers"][..],
        &["remove", f, "engine", "wiki"],
        &["remove", f, "exclude", "https://news.example/ads/"],
    ] {
        expect_exit(&profile(args), 0);
    }
    let last = std::fs::read_to_string(file).unwrap();
    assert!(
        !last.contains("[[interest]]") && !last.contains("[[engine]]"),
        "{last}"
    );
    assert!(last.contains("# on the big disk"), "{last}");
    last
}

/// The plugins that write the index and say what changed are added with
/// their configuration (a JSON object) and removed again, leaving the
/// profile at `file` as it was (`before`).
fn the_index_and_detector_plugins_are_added_and_removed(file: &std::path::Path, before: &str) {
    use crate::common::{expect_exit, text};
    let f = file.to_str().unwrap();
    for args in [
        &[
            "add",
            f,
            "index",
            "builtin:websnatcher-index",
            "--config",
            r#"{"title": "Mine"}"#,
        ][..],
        &[
            "add",
            f,
            "detector",
            "builtin:maintenance",
            "--config",
            r#"{"content_changed": false}"#,
        ],
    ] {
        expect_exit(&profile(args), 0);
    }
    let shown = text(&profile(&["show", f]).stdout);
    assert!(
        shown.ends_with("Index: builtin:websnatcher-index {\"title\":\"Mine\"}\nChange detectors: builtin:maintenance {\"content_changed\":false}\n"),
        "{shown}"
    );
    let with = std::fs::read_to_string(file).unwrap();
    assert!(
        with.contains(
            "[index]\nsource = \"builtin:websnatcher-index\"\nconfig = { title = \"Mine\" }\n"
        ) && with.contains(
            "[[detector]]\nsource = \"builtin:maintenance\"\nconfig = { content_changed = false }\n"
        ),
        "{with}"
    );
    let out = profile(&[
        "add",
        f,
        "detector",
        "builtin:maintenance",
        "--config",
        "[1]",
    ]);
    assert!(expect_exit(&out, 2).contains("--config is not a JSON object: [1]"));
    for args in [
        &["remove", f, "index"][..],
        &["remove", f, "detector", "builtin:maintenance"],
    ] {
        expect_exit(&profile(args), 0);
    }
    assert_eq!(std::fs::read_to_string(file).unwrap(), before);
}

/// The index is the profile's index plugin's, what changed its change
/// detectors' word; an index or detector the profile gets wrong is said
/// before anything is fetched.
#[test]
fn the_index_and_the_changes_come_from_the_profiles_plugins() {
    use crate::common::{expect_exit, spinneret, text};
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let asked = Arc::new(AtomicUsize::new(0));
    let a = asked.clone();
    let yesterday = httpdate::fmt_http_date(
        std::time::SystemTime::now() - std::time::Duration::from_secs(86_400),
    );
    let site = Site::new()
        .page("/old.html", "<title>Old</title>")
        .generated(Arc::new(move |path: &str| {
            // Each run reads different news.
            (path == "/news.html").then(|| {
                let n = a.fetch_add(1, Ordering::SeqCst);
                Route::html(format!("<title>News</title><p>edition {n}")).last_modified(&yesterday)
            })
        }));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    let p = profile.to_str().unwrap();
    let write = |urls: &[&str], index: &str| {
        let mut t = String::new();
        for u in urls {
            t.push_str(&format!("[[url]]\nurl = \"{base}{u}\"\n\n"));
        }
        t.push_str(index);
        std::fs::write(&profile, t).unwrap();
    };
    let titled =
        "[index]\nsource = \"builtin:websnatcher-index\"\nconfig = { title = \"Snatched\" }\n";
    write(&["/news.html", "/old.html"], titled);
    expect_exit(&spinneret(&["collect", p]), 0);

    // Run 2: the news changed, the old page is no longer asked for. The
    // profile named another way is the same profile, with the same history.
    write(&["/news.html"], titled);
    let other = dir.path().join(".").join("profile.toml");
    let out = spinneret(&["collect", other.to_str().unwrap()]);
    expect_exit(&out, 0);
    assert!(
        text(&out.stdout).contains("since the last run: 0 new, 1 changed, 0 unchanged, 1 gone"),
        "{}",
        text(&out.stdout)
    );
    let index = std::fs::read_to_string(dir.path().join("mirror/index.html")).unwrap();
    assert!(index.contains("<h1>Snatched of "), "{index}");
    assert!(
        index.contains("<li class=\"changed\"><a class=\"local\" href=\"runs/0002/URLs/"),
        "{index}"
    );
    assert!(
        index.contains(
            "<span class=\"finding\" data-kind=\"recently-modified\">modified 1 day ago ("
        ),
        "the maintenance detector's words: {index}"
    );
    assert!(
        index.contains(&format!(
            "<li>Old <a class=\"url\" href=\"{base}/old.html\">"
        )),
        "{index}"
    );

    // An index source that is no collection index, and a detector the
    // profile misconfigures: said before anything is fetched.
    write(
        &["/news.html"],
        "[index]\nsource = \"builtin:maintenance\"\n\n[[detector]]\nsource = \"builtin:maintenance\"\nconfig = { changed = false }\n",
    );
    web.clear_log();
    let out = spinneret(&["collect", p]);
    let stderr = expect_exit(&out, 2);
    assert!(
        stderr.contains("profile.toml:8): configure failed: maintenance: unknown setting `changed`")
            && stderr.contains("spinneret: the index builtin:maintenance (")
            && stderr.contains("profile.toml:5): it implements the `change-detector` world, not `collection-index`\n"),
        "{stderr}"
    );
    assert!(web.requests().is_empty() && !dir.path().join("mirror/runs/0003").exists());

    // Run 3: a detector of the profile's own choosing.
    write(
        &["/news.html"],
        "[[detector]]\nsource = \"builtin:maintenance\"\nconfig = { content_changed = false }\n",
    );
    let out = spinneret(&["collect", p]);
    expect_exit(&out, 0);
    assert!(
        text(&out.stdout).contains("since the last run: 0 new, 0 changed, 1 unchanged, 0 gone"),
        "without content-changed, no detector says it changed: {}",
        text(&out.stdout)
    );
}

/// A detector that fails on one page loses only that page's word: the
/// other pages keep their findings in the index, the failure is a finding
/// against the page that caused it, and the run says so and exits 1.
#[test]
fn a_detector_failing_on_one_page_keeps_the_others_findings() {
    use crate::common::{expect_exit, spinneret, text};
    use spinneret_tests::server::{Site, TestWeb, Web};
    const TRAPS_ON: &str = env!("TEST_PLUGIN_HOSTILE_DETECTOR");
    let site = Site::new()
        .page("/a.html", "<title>A</title>")
        .page("/b.html", "<title>B</title>")
        .page("/c.html", "<title>C</title>");
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    let mut t = String::new();
    for u in ["/a.html", "/b.html", "/c.html"] {
        t.push_str(&format!("[[url]]\nurl = \"{base}{u}\"\n\n"));
    }
    t.push_str(&format!(
        "[[detector]]\nsource = \"{TRAPS_ON}\"\nconfig = {{ trap_on = [\"/b.html\"] }}\n"
    ));
    std::fs::write(&profile, t).unwrap();
    let out = spinneret(&["collect", profile.to_str().unwrap()]);
    let stderr = expect_exit(&out, 1);
    assert!(
        stderr.contains(&format!(
            "profile.toml:11) failed on {base}/b.html: plugin {TRAPS_ON} failed in compare: trapped: "
        )),
        "{stderr}\n{}",
        text(&out.stdout)
    );
    let index = std::fs::read_to_string(dir.path().join("mirror/index.html")).unwrap();
    let seen = index
        .matches("<span class=\"finding\" data-kind=\"seen\">compared</span>")
        .count();
    assert_eq!(seen, 2, "a and c keep their findings: {index}");
    assert_eq!(
        index
            .matches("<span class=\"finding\" data-kind=\"plugin-failure\">")
            .count(),
        1,
        "{index}"
    );
}

/// A site of `n` pages that each take `ms` to answer, all linked from its
/// top page, and a profile that collects them (depth 1, no interval).
fn slow_pages(
    n: usize,
    ms: u64,
) -> (
    spinneret_tests::server::TestWeb,
    tempfile::TempDir,
    std::path::PathBuf,
) {
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    let links: String = (0..n)
        .map(|i| format!("<a href=\"/slow/{i}.html\">{i}</a>"))
        .collect();
    let mut site = Site::new().page("/", &format!("<title>Top</title>{links}"));
    for i in 0..n {
        site = site.route(
            &format!("/slow/{i}.html"),
            Route::Delay(
                std::time::Duration::from_millis(ms),
                Box::new(Route::html(format!("<title>{i}</title>"))),
            ),
        );
    }
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        format!(
            "per_site_delay = \"0s\"\n\n[[url]]\nurl = \"http://127.0.0.1:{}/\"\ndepth = 1\n",
            web.port()
        ),
    )
    .unwrap();
    (web, dir, profile)
}

/// A collection is as polite as a crawl: however many pages of one site
/// it has to fetch, no more than two requests are in flight to the site
/// at once (with no interval asked for, all eight fetchers could be).
#[test]
fn a_collection_has_at_most_two_requests_in_flight_to_a_site() {
    use crate::common::{expect_exit, spinneret};
    let (web, _dir, profile) = slow_pages(8, 150);
    expect_exit(&spinneret(&["collect", profile.to_str().unwrap()]), 0);
    let slow = web
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/slow/"))
        .count();
    assert_eq!(slow, 8);
    assert_eq!(web.most_in_flight("127.0.0.1"), 2);
}

/// A profile holds a crawl's concurrency settings: `per_site_connections`
/// lets more requests to a site be in flight at once, and `concurrency`
/// bounds them in all (each set with `profile set`, as a user would).
#[test]
fn a_profiles_connections_and_concurrency_bound_the_requests_in_flight() {
    use crate::common::{expect_exit, spinneret};
    let (web, _dir, profile) = slow_pages(12, 300);
    let file = profile.to_str().unwrap();
    expect_exit(
        &spinneret(&["profile", "set", file, "per_site_connections", "4"]),
        0,
    );
    expect_exit(&spinneret(&["collect", file]), 0);
    assert_eq!(web.most_in_flight("127.0.0.1"), 4);

    let (web, _dir, profile) = slow_pages(12, 300);
    let file = profile.to_str().unwrap();
    expect_exit(
        &spinneret(&["profile", "set", file, "per_site_connections", "4"]),
        0,
    );
    expect_exit(&spinneret(&["profile", "set", file, "concurrency", "3"]), 0);
    expect_exit(&spinneret(&["collect", file]), 0);
    assert_eq!(web.most_in_flight("127.0.0.1"), 3);
}

/// A page from elsewhere may not make the collector reach this machine,
/// however the address is spelt: an IPv4-mapped IPv6 address of loopback
/// is loopback. (Names that resolve there are refused by the fetcher's
/// public-only resolver, tested with the fetcher.)
#[test]
fn a_page_from_elsewhere_cannot_reach_loopback_by_a_mapped_address() {
    use crate::common::{expect_exit, spinneret, text};
    use spinneret_tests::server::{Route, Site, TestWeb, Web};
    // This machine's secret, and a page elsewhere that names it.
    let home = TestWeb::start(Web::new().site(
        "127.0.0.1",
        Site::new().route("/secret.png", Route::file("image/png", "SECRET")),
    ));
    let port = home.port();
    let away = TestWeb::start(
        Web::new().site(
            "away.example",
            Site::new()
                .page(
                    "/",
                    &format!(
                        "<title>Away</title><img src=\"http://[::ffff:127.0.0.1]:{port}/secret.png\"><img src=\"/fine.png\">"
                    ),
                )
                .route("/fine.png", Route::file("image/png", "PNG")),
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        format!("[[url]]\nurl = \"http://away.example:{}/\"\n", away.port()),
    )
    .unwrap();
    let out = spinneret(&[
        "collect",
        profile.to_str().unwrap(),
        "--resolve",
        "away.example=127.0.0.1",
    ]);
    expect_exit(&out, 1);
    assert!(home.requests().is_empty(), "{:?}", home.requests());
    assert!(
        text(&out.stdout).contains(&format!(
            "not collected: http://[::ffff:7f00:1]:{port}/secret.png: referenced by http://away.example:{}/: a page from elsewhere may not reach this machine or its network\n",
            away.port()
        )),
        "{}",
        text(&out.stdout)
    );
    let fine = away
        .requests()
        .iter()
        .filter(|r| r.path == "/fine.png")
        .count();
    assert_eq!(fine, 1);
}

/// SIGTERM (or Ctrl-C) stops a collection mid-run: no new request starts,
/// and what was fetched is saved, archived and indexed; the run says so.
#[test]
fn a_signal_stops_a_collection_with_what_it_fetched_kept() {
    use crate::common::{command, text};
    use std::time::{Duration, Instant};
    let (web, dir, profile) = slow_pages(40, 300);
    let child = command()
        .arg("collect")
        .arg(&profile)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !web.requests().iter().any(|r| r.path.starts_with("/slow/")) {
        assert!(Instant::now() < deadline, "no slow page was asked for");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sending a signal to our own child process.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    assert!(
        stderr.contains("spinneret: stopping: no new request starts"),
        "{stderr}"
    );
    let slow = web
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/slow/"))
        .count();
    assert!(slow < 40, "{slow} slow pages were asked for");
    assert!(
        stdout.contains(" URLs queued were not fetched; 0 of 1 items have no page this run\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("not collected:"), "{stdout}");
    let mirror = dir.path().join("mirror");
    let index = std::fs::read_to_string(mirror.join("index.html")).unwrap();
    assert!(index.contains(">Top</a>"), "{index}");
    assert!(mirror.join("runs/0001.warc.gz").is_file());
    let saved =
        std::fs::read_dir(mirror.join(format!("runs/0001/URLs/127.0.0.1_{}/slow", web.port())))
            .map_or(0, |d| d.count());
    assert!(saved >= 1 && saved <= slow, "{saved} of {slow}");
}

/// A local file of the profile leads only to files under the directory of
/// the profile's local files: a saved page's `../secret.txt`, `file:///…`
/// or CSS `url()` may not copy the machine's other files into the mirror.
#[test]
fn a_local_page_reaches_only_files_under_its_own_directory() {
    use crate::common::{expect_exit, text};
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("pics")).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "SECRET").unwrap();
    std::fs::write(site.join("pics/a.png"), "PNG").unwrap();
    let secret = url::Url::from_file_path(dir.path().join("secret.txt")).unwrap();
    std::fs::write(
        site.join("style.css"),
        "body { background: url(../secret.txt) }",
    )
    .unwrap();
    std::fs::write(
        site.join("index.html"),
        format!(
            "<title>Local</title><link rel=stylesheet href=style.css><img src=\"pics/a.png\"><img src=\"../secret.txt\"><img src=\"{secret}\">"
        ),
    )
    .unwrap();
    let out = collect(
        dir.path(),
        "[[url]]\nurl = \"site/index.html\"\ncategory = \"Local\"\n",
    );
    expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout
            .matches(&format!("not collected: {secret}: referenced by "))
            .count(),
        2,
        "the page's (two spellings of one URL) and the stylesheet's: {stdout}"
    );
    let site_dir = url::Url::from_directory_path(&site).unwrap();
    assert!(
        stdout.contains(&format!(
            "outside {}, the directory of the profile's local files",
            site_dir.path()
        )),
        "{stdout}"
    );
    let mut saved: Vec<String> = walk(&dir.path().join("mirror/runs/0001"));
    saved.retain(|f| !f.ends_with("index.html") || f.contains("Local"));
    assert!(saved.iter().any(|f| f.ends_with("pics/a.png")), "{saved:?}");
    assert!(!saved.iter().any(|f| f.contains("secret")), "{saved:?}");
}

/// An engine the profile misconfigures is said before anything is fetched
/// or an earlier run's files removed, as a misconfigured index or detector
/// is.
#[test]
fn a_misconfigured_engine_is_said_before_the_run() {
    use crate::common::{expect_exit, spinneret};
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        "[[engine]]\nname = \"w\"\nsource = \"builtin:searxng\"\n\n[[interest]]\ntitle = \"Rust\"\nkeywords = [\"rust\"]\nengines = [\"w\"]\n",
    )
    .unwrap();
    let stderr = expect_exit(&spinneret(&["collect", profile.to_str().unwrap()]), 2);
    assert!(
        stderr.contains("spinneret: engine `w` (")
            && stderr.contains("profile.toml:2): configure failed: searxng: set `base`")
            && stderr.contains(
                "spinneret: nothing collected; fix the profile's plugins above and run again\n"
            ),
        "{stderr}"
    );
    assert!(!dir.path().join("mirror/runs").exists());
}

/// A mirror that is a directory of the user's own files is refused: no
/// run overwrites (nor `--clean` removes) a file spinneret did not write.
#[test]
fn a_directory_of_the_users_files_is_no_mirror() {
    use crate::common::{expect_exit, spinneret};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "mine").unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        "mirror = \"\"\n\n[[url]]\nurl = \"https://e.example/\"\n",
    )
    .unwrap();
    let stderr = expect_exit(&spinneret(&["collect", profile.to_str().unwrap()]), 2);
    assert!(
        stderr.contains("holds files that are not a mirror's (no .spinneret in it); give `mirror` a new or empty directory"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("index.html")).unwrap(),
        "mine"
    );
}
