//! How the crawler treats servers: rate limits, HEAD refusals, slow and broken
//! responses, compression, bad encodings, conditional requests, local files.

use spinneret_core::model::{Category, Source};
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::time::Duration;

const TASK: &str =
    "[[task]]\nname = \"T\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n";

/// A web whose home page links to `links` on a.example and whose other routes are `routes`.
fn web_with(links: &[&str], routes: Vec<(&str, Route)>) -> Web {
    let body: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a>\n"))
        .collect();
    let mut site = Site::new().page("/index.html", &page("Home", None, &body));
    for (path, route) in routes {
        site = site.route(path, route);
    }
    Web::new().site("a.example", site)
}

/// A `ws:` link to a web server's host and port does not make that server
/// a `ws:` site: before, the site took the scheme of the first URL seen,
/// asked for `ws://…/robots.txt`, failed, and called every later link to
/// the server unreachable.
#[test]
fn a_websocket_link_does_not_take_over_its_servers_site() {
    let web = TestWeb::start(
        Web::new()
            .site(
                "a.example",
                Site::new().page(
                    "/index.html",
                    &page(
                        "Home",
                        None,
                        "<a href=\"ws://b.example:{PORT}/sock\">live</a>\
                         <a href=\"http://b.example:{PORT}/ok.html\">ok</a>",
                    ),
                ),
            )
            .site(
                "b.example",
                Site::new().page("/ok.html", &page("Ok", None, "")),
            ),
    );
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let results = setup.results();
    let ok = &results[&web.url("b.example", "/ok.html")];
    assert_eq!(
        (ok.category, ok.status),
        (Category::Ok, Some(200)),
        "{ok:?}"
    );
    assert!(
        web.requests()
            .iter()
            .any(|r| r.host.starts_with("b.example") && r.path == "/robots.txt"),
        "b.example's robots.txt is asked for over http"
    );
}

#[test]
fn too_many_requests_waits_for_retry_after() {
    let web = TestWeb::start(web_with(
        &["/limited.html"],
        vec![(
            "/limited.html",
            Route::Sequence(vec![
                Route::status(429).header("Retry-After", "1"),
                Route::html(page("Finally", None, "")),
            ]),
        )],
    ));
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let r = &setup.results()[&web.url("a.example", "/limited.html")];
    assert_eq!(
        (r.category, r.status, r.attempts),
        (Category::Ok, Some(200), 2)
    );
    let times: Vec<_> = web
        .requests()
        .into_iter()
        .filter(|r| r.path == "/limited.html")
        .map(|r| r.at)
        .collect();
    assert_eq!(times.len(), 2);
    assert!(
        times[1] - times[0] >= Duration::from_secs(1),
        "Retry-After: 1 was not honoured"
    );
}

#[test]
fn persistent_rate_limiting_is_blocked_not_broken() {
    let web = TestWeb::start(web_with(
        &["/limited.html", "/forbidden.html"],
        vec![
            (
                "/limited.html",
                Route::status(429).header("Retry-After", "0"),
            ),
            ("/forbidden.html", Route::status(403)),
        ],
    ));
    let setup = Setup::new(&web, TASK);
    let report = setup.crawl();
    let results = setup.results();
    let limited = &results[&web.url("a.example", "/limited.html")];
    assert_eq!(
        (limited.category, limited.status, limited.attempts),
        (Category::Blocked, Some(429), 2)
    );
    assert_eq!(
        results[&web.url("a.example", "/forbidden.html")].category,
        Category::Blocked
    );
    assert_eq!((report.tasks[0].blocked, report.tasks[0].broken), (2, 0));
    assert!(!report.any_broken());
}

#[test]
fn retry_after_beyond_the_limit_gives_up_at_once() {
    let web = TestWeb::start(web_with(
        &["/later.html"],
        vec![(
            "/later.html",
            Route::status(503).header("Retry-After", "3600"),
        )],
    ));
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let r = &setup.results()[&web.url("a.example", "/later.html")];
    assert_eq!(
        (r.category, r.status, r.attempts),
        (Category::Broken, Some(503), 1)
    );
    assert_eq!(
        r.error.as_deref(),
        Some(
            "HTTP 503 Service Unavailable; gave up: Retry-After asked for 1h, more than max_retry_after (5s)"
        )
    );
}

#[test]
fn rate_limiting_beyond_the_limit_says_why_it_gave_up() {
    let web = TestWeb::start(web_with(
        &["/limited.html"],
        vec![(
            "/limited.html",
            Route::status(429).header("Retry-After", "600"),
        )],
    ));
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let r = &setup.results()[&web.url("a.example", "/limited.html")];
    assert_eq!(
        (r.category, r.error.as_deref()),
        (
            Category::Blocked,
            Some(
                "HTTP 429 Too Many Requests; gave up: Retry-After asked for 10m, more than max_retry_after (5s)"
            )
        )
    );
}

/// A server that answers something other than HTTP: the result names the
/// protocol error, not a failed connection.
#[test]
fn a_response_that_is_not_http_is_a_protocol_error() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"SPDY/9 nonsense here\r\n\r\n");
        }
    });
    let target = format!("http://127.0.0.1:{port}/x");
    let web = TestWeb::start(web_with(&[&target], vec![]));
    // The server is on this machine, linked from a page from elsewhere:
    // the operator names it, or it would not be requested.
    let setup = Setup::new(
        &web,
        &format!("retries = 0\ninternal_hosts = [\"127.0.0.1\"]\n{TASK}"),
    );
    setup.crawl();
    let r = &setup.results()[&target];
    assert_eq!(r.category, Category::Broken);
    let error = r.error.as_deref().unwrap();
    assert!(
        error.contains("HTTP protocol error: the server's response is not valid HTTP ("),
        "{error}"
    );
}

#[test]
fn head_refused_falls_back_to_get() {
    let refusing = Site::new()
        .route(
            "/doc.pdf",
            Route::HeadStatus(405, Box::new(Route::file("application/pdf", "%PDF"))),
        )
        .route("/cgi", Route::HeadStatus(501, Box::new(Route::status(404))))
        // Frameworks that route GET alone answer HEAD 404 or 403.
        .route(
            "/app",
            Route::HeadStatus(404, Box::new(Route::file("text/plain", "fine"))),
        )
        .route(
            "/guarded",
            Route::HeadStatus(403, Box::new(Route::file("text/plain", "fine"))),
        )
        .route("/gone", Route::status(404));
    let web = Web::new()
        .site(
            "a.example",
            Site::new().page(
                "/index.html",
                &page("Home", None, r#"<a href="http://b.example:{PORT}/doc.pdf">pdf</a> <a href="http://b.example:{PORT}/cgi">cgi</a>
                    <a href="http://b.example:{PORT}/app">app</a> <a href="http://b.example:{PORT}/guarded">guarded</a> <a href="http://b.example:{PORT}/gone">gone</a>"#),
            ),
        )
        .site("b.example", refusing);
    let web = TestWeb::start(web);
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    assert_eq!(web.methods("b.example", "/doc.pdf"), vec!["HEAD", "GET"]);
    let results = setup.results();
    let pdf = &results[&web.url("b.example", "/doc.pdf")];
    assert_eq!(
        (pdf.category, pdf.method, pdf.status),
        (Category::Ok, Some("GET"), Some(200))
    );
    let cgi = &results[&web.url("b.example", "/cgi")];
    assert_eq!((cgi.category, cgi.status), (Category::Broken, Some(404)));
    // An error to a HEAD is confirmed with a GET before it is reported.
    for path in ["/app", "/guarded"] {
        assert_eq!(
            web.methods("b.example", path),
            vec!["HEAD", "GET"],
            "{path}"
        );
        let r = &results[&web.url("b.example", path)];
        assert_eq!(
            (r.category, r.method, r.status),
            (Category::Ok, Some("GET"), Some(200)),
            "{path}"
        );
    }
    let gone = &results[&web.url("b.example", "/gone")];
    assert_eq!(
        (gone.category, gone.method, gone.status),
        (Category::Broken, Some("GET"), Some(404))
    );
}

#[test]
fn timeouts_are_retried_then_broken() {
    let web = TestWeb::start(web_with(
        &["/slow.html"],
        vec![(
            "/slow.html",
            Route::Delay(Duration::from_secs(5), Box::new(Route::html("late"))),
        )],
    ));
    let setup = Setup::new(&web, &format!("timeout = \"300ms\"\n{TASK}"));
    let report = setup.crawl();
    let r = &setup.results()[&web.url("a.example", "/slow.html")];
    assert_eq!(
        (r.category, r.status, r.attempts),
        (Category::Broken, None, 2)
    );
    assert_eq!(
        r.error.as_deref(),
        Some("timed out after 300ms (after 2 attempts)")
    );
    // The time the two attempts took to time out is recorded.
    assert!(
        r.elapsed_ms.is_some_and(|ms| ms >= 600),
        "{:?}",
        r.elapsed_ms
    );
    assert_eq!(report.tasks[0].broken, 1);
}

#[test]
fn connection_refused_is_broken_with_the_reason() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let web = TestWeb::start(Web::new().site(
        "a.example",
        Site::new().page(
            "/index.html",
            &page(
                "Home",
                None,
                &format!("<a href=\"http://a.example:{closed}/x.html\">x</a>"),
            ),
        ),
    ));
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let r = &setup.results()[&format!("http://a.example:{closed}/x.html")];
    assert_eq!((r.category, r.method), (Category::Broken, None));
    let error = r.error.as_deref().unwrap();
    assert!(
        error.starts_with(&format!(
            "site a.example:{closed} cannot be reached: connection failed"
        )),
        "{error}"
    );
}

#[test]
fn truncated_bodies_are_broken() {
    let web = TestWeb::start(web_with(
        &["/cut.html"],
        vec![(
            "/cut.html",
            Route::Truncated {
                declared: 10_000,
                body: "<html><a href=x.html>".into(),
            },
        )],
    ));
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let r = &setup.results()[&web.url("a.example", "/cut.html")];
    assert_eq!(r.category, Category::Broken);
    assert!(
        r.error
            .as_deref()
            .unwrap()
            .starts_with("response body incomplete"),
        "{r:?}"
    );
}

#[test]
fn compression_bombs_stop_at_the_body_cap() {
    let huge = format!(
        "<html><body>{}<a href=\"/never.html\">x</a></body></html>",
        " ".repeat(50 << 20)
    );
    let web = TestWeb::start(web_with(
        &["/bomb.html"],
        vec![("/bomb.html", Route::Gzip(Box::new(Route::html(huge))))],
    ));
    let setup = Setup::new(&web, &format!("max_body = \"1MiB\"\n{TASK}"));
    setup.crawl();
    let r = &setup.results()[&web.url("a.example", "/bomb.html")];
    assert_eq!(
        (r.category, r.truncated, r.size),
        (Category::Ok, true, Some(1 << 20))
    );
    // The link past the cap was never seen.
    assert!(web.methods("a.example", "/never.html").is_empty());
}

#[test]
fn bad_encodings_are_decoded_and_counted() {
    let mut latin1 = b"<html><head><title>Caf\xe9</title></head><body><a href=\"ok.html\">caf\xe9</a></body></html>".to_vec();
    let declared_utf8 = Route::file("text/html; charset=utf-8", std::mem::take(&mut latin1));
    let web = TestWeb::start(web_with(
        &["/bad.html"],
        vec![
            ("/bad.html", declared_utf8),
            ("/ok.html", Route::html(page("OK", None, ""))),
        ],
    ));
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let store = setup.store();
    let links = store
        .document_links(&web.url("a.example", "/bad.html"))
        .unwrap();
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].2, "caf\u{FFFD}");
    let doc = store
        .document(&web.url("a.example", "/bad.html"))
        .unwrap()
        .unwrap();
    assert_eq!(doc.title.as_deref(), Some("Caf\u{FFFD}"));
    assert_eq!(
        (doc.encoding.as_deref(), doc.decode_errors),
        (Some("UTF-8"), true)
    );
    assert!(doc.parse_errors >= 1, "{doc:?}");
    // The link is still followed.
    assert_eq!(web.methods("a.example", "/ok.html"), vec!["GET"]);
}

#[test]
fn stale_results_are_revalidated_conditionally() {
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .route(
                    "/index.html",
                    Route::html(page(
                        "Home",
                        None,
                        r#"<a href="b.html">b</a> <img src="i.png">"#,
                    ))
                    .etag("\"v1\""),
                )
                .route(
                    "/b.html",
                    Route::html(page("B", None, "")).last_modified("Sat, 02 Apr 1994 00:00:00 GMT"),
                )
                .route("/i.png", Route::file("image/png", "png").etag("\"img\"")),
        ),
    );
    let setup = Setup::new(&web, &format!("result_max_age = \"0s\"\n{TASK}"));
    setup.crawl();
    web.clear_log();
    let second = setup.crawl();
    let requests = web.requests();
    let find = |p: &str| requests.iter().find(|r| r.path == p).unwrap().clone();
    assert_eq!(find("/index.html").header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        find("/b.html").header("if-modified-since"),
        Some("Sat, 02 Apr 1994 00:00:00 GMT")
    );
    assert_eq!(find("/i.png").method, "HEAD");
    assert_eq!(find("/i.png").header("if-none-match"), Some("\"img\""));
    let results = setup.results();
    for p in ["/index.html", "/b.html", "/i.png"] {
        assert_eq!(
            results[&web.url("a.example", p)].source,
            Source::NotModified,
            "{p}"
        );
    }
    // 304 for the home page still leads on to its links.
    assert_eq!(second.tasks[0].documents, 2);
}

#[test]
fn local_trees_are_checked_through_file_urls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        page(
            "Local",
            None,
            r#"<a href="sub/">sub</a> <a href="gone.html">gone</a> <img src="pic.png">"#,
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("sub/index.html"),
        page("Sub", None, r#"<a href="../index.html">up</a>"#),
    )
    .unwrap();
    std::fs::write(dir.path().join("pic.png"), "png").unwrap();
    let web = TestWeb::start(Web::new());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"L\"\nkind = \"tree\"\ntop = \"LOCAL/index.html\"\n"
            .replace("LOCAL", &dir.path().display().to_string())
            .as_str(),
    );
    let report = setup.crawl();
    let results = setup.results();
    let url = |p: &str| format!("file://{}/{p}", dir.path().display());
    // A directory is its index.html: one document, however it is linked.
    assert_eq!(results[&url("sub/index.html")].category, Category::Ok);
    assert!(!results.contains_key(&url("sub/")), "{results:?}");
    assert_eq!(results[&url("gone.html")].category, Category::Broken);
    assert_eq!(results[&url("gone.html")].status, Some(404));
    assert_eq!(results[&url("pic.png")].method, Some("HEAD"));
    assert!(
        results[&url("index.html")].last_modified.is_some(),
        "mtime stands in for Last-Modified"
    );
    assert_eq!((report.tasks[0].documents, report.tasks[0].broken), (2, 1));
}

#[test]
fn a_slow_site_does_not_stall_the_others() {
    // Two tasks crawl at once: a fast site of 13 pages and a slow one of 3 chained pages.
    let fast_links: String = (0..12)
        .map(|i| format!("<a href=\"/f{i}.html\">f</a>"))
        .collect();
    let mut fast = Site::new().page("/index.html", &page("Fast", None, &fast_links));
    for i in 0..12 {
        fast = fast.page(&format!("/f{i}.html"), &page("F", None, ""));
    }
    let mut slow = Site::new();
    for i in 0..3 {
        let next = format!("<a href=\"/s{}.html\">next</a>", i + 1);
        slow = slow.route(
            &format!("/s{i}.html"),
            Route::Delay(
                Duration::from_millis(700),
                Box::new(Route::html(page("S", None, &next))),
            ),
        );
    }
    let web = TestWeb::start(
        Web::new()
            .site("a.example", fast)
            .site("slow.example", slow),
    );
    let tasks = format!(
        "concurrency = 3\nper_site_connections = 1\n{TASK}\n[[task]]\nname = \"S\"\nkind = \"site\"\ntop = \"http://slow.example:{{PORT}}/s0.html\"\n"
    );
    let setup = Setup::new(&web, &tasks);
    setup.crawl();
    let requests = web.requests();
    let slow_pages: Vec<_> = requests
        .iter()
        .filter(|r| r.host == "slow.example" && r.path != "/robots.txt")
        .collect();
    assert_eq!(slow_pages.len(), 4, "s0 to s2, and s3 (404)");
    let fast_pages: Vec<_> = requests.iter().filter(|r| r.host == "a.example").collect();
    assert_eq!(fast_pages.len(), 14, "robots.txt, the index and 12 pages");
    let last_fast = fast_pages.iter().map(|r| r.at).max().unwrap();
    assert!(
        slow_pages[0].at < last_fast,
        "both sites were crawled at once"
    );
    assert!(
        last_fast < slow_pages[1].at,
        "the fast site waited for the slow one"
    );
}

/// A body sent with stacked codings (`Content-Encoding: gzip, gzip`) is
/// decoded layer by layer, the cap holding for each: before, the HTTP
/// client left it compressed and it was stored and parsed as such (no
/// title, no links); and a stack of bombs stops at the cap.
#[test]
fn stacked_content_codings_are_decoded_within_the_cap() {
    let twice = |r: Route| Route::Gzip(Box::new(Route::Gzip(Box::new(r))));
    let bomb = format!(
        "<html><body>{}<a href=\"/never.html\">x</a></body></html>",
        " ".repeat(20 << 20)
    );
    let web = TestWeb::start(web_with(
        &["/twice.html", "/bombs.html"],
        vec![
            (
                "/twice.html",
                twice(Route::html(page(
                    "Twice compressed",
                    None,
                    r#"<a href="/inner.html">inner</a>"#,
                ))),
            ),
            ("/inner.html", Route::html(page("Inner", None, ""))),
            ("/bombs.html", twice(Route::html(bomb))),
        ],
    ));
    let setup = Setup::new(&web, &format!("max_body = \"1MiB\"\n{TASK}"));
    setup.crawl();
    let results = setup.results();
    let store = setup.store();
    let doc = store
        .document(&web.url("a.example", "/twice.html"))
        .unwrap()
        .expect("parsed as a document");
    assert_eq!(doc.title.as_deref(), Some("Twice compressed"));
    assert_eq!(
        results[&web.url("a.example", "/inner.html")].category,
        Category::Ok
    );
    let r = &results[&web.url("a.example", "/bombs.html")];
    assert_eq!(
        (r.category, r.truncated, r.size),
        (Category::Ok, true, Some(1 << 20))
    );
    assert!(web.methods("a.example", "/never.html").is_empty());
}
