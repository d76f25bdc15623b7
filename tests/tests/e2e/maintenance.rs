//! The maintenance crawl over the fixture web: which links are broken, moved,
//! blocked, avoided and leafed; HEAD vs GET; polite headers; task boundaries;
//! one request per URL across overlapping tasks.

use crate::common;
use spinneret_core::model::Category;
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::{Setup, urls_in};
use spinneret_tests::server::TestWeb;
use std::collections::BTreeMap;

fn site_task(name: &str, kind: &str, top: &str) -> String {
    format!(
        "[[task]]\nname = \"{name}\"\nkind = \"{kind}\"\ntop = \"http://a.example:{{PORT}}{top}\"\n\n"
    )
}

fn a(web: &TestWeb, path: &str) -> String {
    web.url("a.example", path)
}

fn b(web: &TestWeb, path: &str) -> String {
    web.url("b.example", path)
}

/// Three tasks over one web (site, a tree inside it, an owner's documents):
/// MOMspider's overlapping infostructures.
fn overlapping_tasks() -> String {
    format!(
        "{}{}{}",
        site_task("A", "site", "/index.html"),
        site_task("Docs", "tree", "/docs/index.html"),
        site_task("Alice", "owner", "/index.html"),
    )
}

/// How many times each (method, host, path) was requested.
fn request_counts(web: &TestWeb) -> BTreeMap<(String, String, String), usize> {
    let mut m = BTreeMap::new();
    for r in web.requests() {
        *m.entry((r.method, r.host, r.path)).or_insert(0) += 1;
    }
    m
}

#[test]
fn site_task_finds_exactly_what_is_wrong() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    let report = setup.crawl();
    let results = setup.results();

    assert_eq!(
        urls_in(&results, Category::Broken),
        vec![
            a(&web, "/docs/faq.html"),
            a(&web, "/loop1.html"),
            a(&web, "/missing.html"),
            b(&web, "/gone.html"),
        ]
    );
    assert_eq!(
        urls_in(&results, Category::Moved),
        vec![a(&web, "/chain1.html"), a(&web, "/old.html")]
    );
    assert_eq!(
        urls_in(&results, Category::Blocked),
        vec![a(&web, "/forbidden.html")]
    );
    assert_eq!(
        urls_in(&results, Category::Avoided),
        vec![a(&web, "/private/secret.html")]
    );
    assert_eq!(
        urls_in(&results, Category::NotChecked),
        vec![a(&web, "/search"), "mailto:alice@a.example".to_string()]
    );
    assert_eq!(
        urls_in(&results, Category::Ok),
        vec![
            a(&web, "/about.html"),
            a(&web, "/docs/guide.html"),
            a(&web, "/docs/index.html"),
            a(&web, "/docs/report.pdf"),
            a(&web, "/index.html"),
            a(&web, "/logo.png"),
            a(&web, "/new.html"),
            a(&web, "/style.css"),
            b(&web, "/page.html"),
        ]
    );

    // Moved: the chain and the final URL are recorded.
    let old = &results[&a(&web, "/old.html")];
    assert_eq!(
        old.final_url.as_deref(),
        Some(a(&web, "/new.html").as_str())
    );
    assert_eq!(old.redirects.len(), 1);
    assert_eq!(old.redirects[0].status, 301);
    let chain = &results[&a(&web, "/chain1.html")];
    assert_eq!(
        chain.final_url.as_deref(),
        Some(a(&web, "/docs/guide.html").as_str())
    );
    let hops: Vec<(&str, u16)> = chain
        .redirects
        .iter()
        .map(|h| (h.url.as_str(), h.status))
        .collect();
    assert_eq!(
        hops,
        vec![
            (a(&web, "/chain1.html").as_str(), 302),
            (a(&web, "/chain2.html").as_str(), 302)
        ]
    );
    let looped = &results[&a(&web, "/loop1.html")];
    assert!(
        looped
            .error
            .as_deref()
            .unwrap()
            .starts_with("redirect loop:"),
        "{looped:?}"
    );

    // Reasons say why.
    assert_eq!(
        results[&a(&web, "/private/secret.html")].error.as_deref(),
        Some(
            format!(
                "robots.txt of a.example:{} disallows it (Disallow: /private/)",
                web.port()
            )
            .as_str()
        )
    );
    assert_eq!(
        results[&a(&web, "/missing.html")].error.as_deref(),
        Some("HTTP 404 Not Found")
    );

    // The summary counts the same things.
    let s = &report.tasks[0];
    assert_eq!(
        (
            s.documents,
            s.references,
            s.broken,
            s.moved,
            s.blocked,
            s.avoided,
            s.not_checked
        ),
        (5, 21, 4, 2, 1, 1, 2)
    );
    assert!(report.any_broken());
}

#[test]
fn head_for_leaves_get_for_documents_once_each() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    setup.crawl();
    let counts = request_counts(&web);
    let get = |h: &str, p: &str| {
        counts
            .get(&("GET".into(), h.into(), p.into()))
            .copied()
            .unwrap_or(0)
    };
    let head = |h: &str, p: &str| {
        counts
            .get(&("HEAD".into(), h.into(), p.into()))
            .copied()
            .unwrap_or(0)
    };

    for p in [
        "/index.html",
        "/about.html",
        "/docs/index.html",
        "/docs/guide.html",
        "/new.html",
    ] {
        assert_eq!(
            (get("a.example", p), head("a.example", p)),
            (1, 0),
            "{p} is a document"
        );
    }
    for (h, p) in [
        ("a.example", "/logo.png"),
        ("a.example", "/style.css"),
        ("b.example", "/page.html"),
    ] {
        assert_eq!((get(h, p), head(h, p)), (0, 1), "{h}{p} is a leaf");
    }
    // A leaf whose HEAD answers an error is asked once more, with GET,
    // before it is called broken.
    assert_eq!(
        (
            get("b.example", "/gone.html"),
            head("b.example", "/gone.html")
        ),
        (1, 1)
    );
    // Nothing is requested twice, and what robots.txt forbids is never requested.
    for ((m, h, p), n) in &counts {
        assert_eq!(*n, 1, "{m} {h}{p} requested {n} times");
    }
    assert_eq!(get("a.example", "/private/secret.html"), 0);
    assert_eq!(get("a.example", "/search"), 0);
}

#[test]
fn robots_txt_comes_first_and_headers_are_polite() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    setup.crawl();
    let requests = web.requests();
    for host in ["a.example", "b.example"] {
        let first = requests.iter().find(|r| r.host == host).unwrap();
        assert_eq!(
            first.path, "/robots.txt",
            "{host}: robots.txt before anything else"
        );
        assert_eq!(
            requests
                .iter()
                .filter(|r| r.host == host && r.path == "/robots.txt")
                .count(),
            1
        );
    }
    for r in &requests {
        assert_eq!(
            r.header("user-agent"),
            Some("spinneret-test/1.0"),
            "{} {}",
            r.method,
            r.path
        );
        assert_eq!(
            r.header("from"),
            Some("tester@example.org"),
            "{} {}",
            r.method,
            r.path
        );
    }
    let referer = |host: &str, path: &str| {
        requests
            .iter()
            .find(|r| r.host == host && r.path == path)
            .and_then(|r| r.header("referer").map(str::to_string))
    };
    assert_eq!(referer("a.example", "/index.html"), None);
    assert_eq!(
        referer("a.example", "/about.html"),
        Some(a(&web, "/index.html"))
    );
    assert_eq!(
        referer("a.example", "/docs/faq.html"),
        Some(a(&web, "/docs/index.html"))
    );
    assert_eq!(
        referer("b.example", "/gone.html"),
        Some(a(&web, "/index.html"))
    );
}

#[test]
fn tree_task_stops_at_its_directory() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &site_task("Docs", "tree", "/docs/index.html"));
    let report = setup.crawl();
    let roles: Vec<(String, String)> = setup
        .task_results("Docs")
        .into_iter()
        .map(|(u, (_, role))| (u, role))
        .collect();
    assert_eq!(
        roles,
        vec![
            (a(&web, "/docs/faq.html"), "leaf".to_string()),
            (a(&web, "/docs/guide.html"), "document".to_string()),
            (a(&web, "/docs/index.html"), "document".to_string()),
            (a(&web, "/docs/report.pdf"), "leaf".to_string()),
            (a(&web, "/index.html"), "leaf".to_string()),
        ]
    );
    // The home page is outside the tree: tested with HEAD, never parsed.
    assert_eq!(web.methods("a.example", "/index.html"), vec!["HEAD"]);
    assert_eq!(
        web.methods("a.example", "/about.html"),
        Vec::<String>::new()
    );
    assert_eq!((report.tasks[0].documents, report.tasks[0].broken), (2, 1));
}

#[test]
fn owner_task_keeps_to_its_owners_documents() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &site_task("Alice", "owner", "/index.html"));
    setup.crawl();
    let task = setup.task_results("Alice");
    let documents: Vec<&String> = task
        .iter()
        .filter(|(_, (_, r))| r == "document")
        .map(|(u, _)| u)
        .collect();
    assert_eq!(
        documents,
        vec![
            &a(&web, "/about.html"),
            &a(&web, "/index.html"),
            &a(&web, "/new.html")
        ]
    );
    // Bob's documents are leaves of Alice's infostructure: their links are not followed.
    assert_eq!(task[&a(&web, "/docs/index.html")].1, "leaf");
    assert!(!task.contains_key(&a(&web, "/docs/faq.html")));
}

#[test]
fn overlapping_tasks_share_every_request() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &overlapping_tasks());
    let report = setup.crawl();
    for ((m, h, p), n) in request_counts(&web) {
        assert_eq!(n, 1, "{m} {h}{p} requested {n} times across three tasks");
    }
    // The tree task's view is complete although the site task fetched its pages.
    assert_eq!(
        report.tasks.iter().map(|t| t.documents).collect::<Vec<_>>(),
        vec![5, 2, 3]
    );
    assert_eq!(
        setup.task_results("Docs")[&a(&web, "/docs/guide.html")].1,
        "document"
    );
    // The home page is a leaf of the tree task and a document of the site task: one GET serves both.
    assert_eq!(web.methods("a.example", "/index.html"), vec!["GET"]);
}

/// The URLs of the documents listed in a maintenance index, in order.
fn index_documents(index: &str) -> Vec<String> {
    index
        .split("<article class=\"document\"")
        .skip(1)
        .filter_map(|a| {
            let start = a.find("<h3><a href=\"")? + "<h3><a href=\"".len();
            Some(a[start..start + a[start..].find('"')?].to_string())
        })
        .collect()
}

#[test]
fn three_owners_share_one_crawl_and_a_second_run_asks_nothing() {
    // The seed's efficiency claim, measured on the server: a site task, a
    // tree task inside it and an owner task over the same pages.
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &overlapping_tasks());
    common::expect_exit(&common::crawl(&setup, &[]), 1);
    let mut per_url: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in web.requests() {
        *per_url.entry((r.host, r.path)).or_insert(0) += 1;
    }
    for ((h, p), n) in &per_url {
        assert_eq!(
            *n, 1,
            "{h}{p} requested {n} times in one run of three tasks"
        );
    }
    // Each task's index lists every document of that task.
    for task in ["A", "Docs", "Alice"] {
        let mut documents: Vec<String> = setup
            .task_results(task)
            .into_iter()
            .filter(|(_, (_, role))| role == "document")
            .map(|(url, _)| url)
            .collect();
        documents.sort();
        let mut listed = index_documents_of(&setup, task);
        listed.sort();
        assert_eq!(listed, documents, "the index of {task}");
    }
    assert_eq!(index_documents_of(&setup, "Docs").len(), 2);
    // A second run within the given result age asks the server nothing,
    // and each index is written again, complete.
    web.clear_log();
    common::expect_exit(&common::crawl(&setup, &["--max-age", "1h"]), 1);
    let asked: Vec<String> = web
        .requests()
        .iter()
        .filter(|r| r.header("if-none-match").is_none() && r.header("if-modified-since").is_none())
        .map(|r| format!("{} {}{}", r.method, r.host, r.path))
        .collect();
    assert!(asked.is_empty(), "unconditional requests: {asked:?}");
    assert_eq!(index_documents_of(&setup, "A").len(), 5);
    assert_eq!(index_documents_of(&setup, "Alice").len(), 3);
}

fn index_documents_of(setup: &Setup, task: &str) -> Vec<String> {
    let index =
        std::fs::read_to_string(setup.path().join(format!("reports/{task}/index.html"))).unwrap();
    index_documents(&index)
}

#[test]
fn excluded_prefixes_are_leafed_for_that_task_only() {
    let web = TestWeb::start(maintenance_web());
    let tasks = site_task("A", "site", "/index.html").replace(
        "top =",
        "exclude = [\"http://a.example:{PORT}/docs/\"]\ntop =",
    );
    let setup = Setup::new(&web, &tasks);
    setup.crawl();
    // docs/index.html is tested with HEAD only, so docs/faq.html is never reached.
    assert_eq!(web.methods("a.example", "/docs/index.html"), vec!["HEAD"]);
    assert!(web.methods("a.example", "/docs/faq.html").is_empty());
}

#[test]
fn avoid_and_leaf_files_apply() {
    let web = TestWeb::start(maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let avoid = dir.path().join("avoid.mom");
    std::fs::write(
        &avoid,
        format!(
            "# user avoid file\nAvoid http://b.example:{p}/ [*]\nLeaf http://a.example:{p}/about.html [*]\nAvoid http://a.example:{p}/missing.html [Sat, 02 Apr 1994 00:00:00 GMT]\n",
            p = web.port()
        ),
    )
    .unwrap();
    let text = format!(
        "avoid_files = [\"{}\"]\n{}",
        avoid.display(),
        site_task("A", "site", "/index.html")
    );
    let setup = Setup::new(&web, &text);
    setup.crawl();
    let results = setup.results();
    // Avoid: no request at all, not even robots.txt for a site with nothing else to check.
    assert!(web.requests().iter().all(|r| r.host != "b.example"));
    assert_eq!(results[&b(&web, "/page.html")].category, Category::Avoided);
    assert!(
        results[&b(&web, "/page.html")]
            .error
            .as_deref()
            .unwrap()
            .starts_with("avoid rule")
    );
    // Leaf: HEAD only, so its links are not followed.
    assert_eq!(web.methods("a.example", "/about.html"), vec!["HEAD"]);
    // An expired entry no longer applies.
    assert_eq!(web.methods("a.example", "/missing.html"), vec!["GET"]);
}

/// A run tests every URL again by default (a fixed page shows as fixed at
/// once); reusing earlier results is asked for with `--max-age` (or
/// `result_max_age`), and the summary says how many were reused.
#[test]
fn a_rerun_tests_again_unless_reuse_is_asked_for() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    setup.crawl();
    let asked = |web: &TestWeb| {
        let mut asked: Vec<String> = web
            .requests()
            .into_iter()
            .filter(|r| r.path != "/robots.txt")
            .map(|r| format!("{} {}{}", r.method, r.host, r.path))
            .collect();
        asked.sort();
        asked
    };
    let first = asked(&web);
    web.clear_log();
    setup.crawl();
    assert_eq!(asked(&web), first, "every URL is asked again");
    assert!(
        setup
            .results()
            .values()
            .all(|r| r.source != spinneret_core::model::Source::Reused)
    );
    // Within the given age nothing is requested again, and the report is the same.
    web.clear_log();
    let out = common::command()
        .args(["crawl", "--max-age", "1h"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    common::expect_exit(&out, 1);
    assert!(
        web.requests().is_empty(),
        "{:?}",
        web.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let reused = setup
        .results()
        .values()
        .filter(|r| r.method.is_some())
        .inspect(|r| assert_eq!(r.source, spinneret_core::model::Source::Reused, "{}", r.url))
        .count();
    let stdout = common::text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "; {reused} results reused from earlier runs (younger than 1h; --max-age 0 tests them again); store "
        )),
        "{stdout}"
    );
}

#[test]
fn a_form_action_also_linked_is_still_checked() {
    let site = spinneret_tests::server::Site::new()
        .page(
            "/index.html",
            &spinneret_tests::fixtures::page(
                "Forms",
                None,
                r#"<form action="/search.html"></form><a href="/search.html">search page</a>
                   <form action="/only-form.cgi"></form>"#,
            ),
        )
        .page(
            "/search.html",
            &spinneret_tests::fixtures::page("Search", None, ""),
        );
    let web = TestWeb::start(spinneret_tests::server::Web::new().site("a.example", site));
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    setup.crawl();
    let results = setup.results();
    assert_eq!(results[&a(&web, "/search.html")].category, Category::Ok);
    assert_eq!(web.methods("a.example", "/search.html"), vec!["GET"]);
    assert_eq!(
        results[&a(&web, "/only-form.cgi")].category,
        Category::NotChecked
    );
    assert!(web.methods("a.example", "/only-form.cgi").is_empty());
}

/// Seed 000, section 6: `<META HEADER NAME="Owner" VALUE="…">` and the same
/// for Expires give the document its owner (an `owner` task takes it in)
/// and its expiry.
#[test]
fn the_seeds_meta_header_form_names_the_owner_and_the_expiry() {
    let home = "<html><head><title>Home</title>\
        <META HEADER NAME=\"Owner\" VALUE=\"Fielding\">\
        <META HEADER NAME=\"Expires\" VALUE=\"Fri, 01 Apr 2033 00:00:00 GMT\">\
        </head><body><a href=\"other.html\">other</a></body></html>";
    let web = TestWeb::start(
        spinneret_tests::server::Web::new().site(
            "a.example",
            spinneret_tests::server::Site::new()
                .page("/index.html", home)
                .page(
                    "/other.html",
                    &spinneret_tests::fixtures::page("Other", Some("Someone"), ""),
                ),
        ),
    );
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Fielding\"\nkind = \"owner\"\ntop = \"http://a.example:{PORT}/index.html\"\n",
    );
    let report = setup.crawl();
    let doc = setup
        .store()
        .document(&web.url("a.example", "/index.html"))
        .unwrap()
        .unwrap();
    assert_eq!(doc.owner.as_deref(), Some("Fielding"));
    assert_eq!(
        doc.expires.as_deref(),
        Some("Fri, 01 Apr 2033 00:00:00 GMT")
    );
    // The home page is the owner's document; the other page is someone else's.
    assert_eq!(report.tasks[0].documents, 1);
}

/// A 304 carries the resource's headers as they are now: its new
/// `Expires` replaces the stored one, so a document whose expiry was put
/// off is no longer reported as expiring (before, run 2 still said
/// "expires in 0 days").
#[test]
fn a_304_refreshes_the_stored_expiry() {
    use spinneret_tests::server::{Route, Site, Web};
    let now = std::time::SystemTime::now();
    let soon = httpdate::fmt_http_date(now + std::time::Duration::from_secs(2 * 86_400));
    let later = httpdate::fmt_http_date(now + std::time::Duration::from_secs(60 * 86_400));
    let home = spinneret_tests::fixtures::page("Home", None, "");
    let web = TestWeb::start(Web::new().site(
        "a.example",
        Site::new().route(
            "/index.html",
            Route::Sequence(vec![
                Route::html(home.clone()).etag("\"v1\"").header("Expires", &soon),
                Route::html(home).etag("\"v1\"").header("Expires", &later),
            ]),
        ),
    ));
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    common::expect_exit(&common::crawl(&setup, &[]), 0);
    let expiring = |setup: &Setup| -> Vec<String> {
        common::last_findings(setup, "expiring")
            .into_iter()
            .map(|f| f.message)
            .collect()
    };
    assert_eq!(expiring(&setup), [format!("expires in 2 days ({soon})")]);
    common::expect_exit(&common::crawl(&setup, &[]), 0);
    let r = &setup.results()[&a(&web, "/index.html")];
    assert_eq!(
        (r.source, r.expires.as_deref()),
        (
            spinneret_core::model::Source::NotModified,
            Some(later.as_str())
        )
    );
    assert_eq!(expiring(&setup), Vec::<String>::new());
}

/// After a redirect the stored validators are the target's: the next run
/// asks the URL that redirected without them (before, it sent the
/// target's date, was answered 304 by a URL that serves a page again, and
/// kept "moved").
#[test]
fn validators_of_a_redirect_target_are_not_sent_to_the_url_that_redirected() {
    use spinneret_tests::server::{Route, Site, Web};
    let date = "Sun, 06 Nov 1994 08:49:37 GMT";
    let page = |t: &str| spinneret_tests::fixtures::page(t, None, "");
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/index.html",
                    &spinneret_tests::fixtures::page("Home", None, "<a href=\"/old.html\">old</a>"),
                )
                .route(
                    "/old.html",
                    Route::Sequence(vec![
                        Route::redirect(301, "/new.html"),
                        Route::html(page("Old, back")).last_modified(date),
                    ]),
                )
                .route("/new.html", Route::html(page("New")).last_modified(date)),
        ),
    );
    let setup = Setup::new(&web, &site_task("A", "site", "/index.html"));
    setup.crawl();
    assert_eq!(
        setup.results()[&a(&web, "/old.html")].category,
        Category::Moved
    );
    web.clear_log();
    setup.crawl();
    let asked: Vec<_> = web
        .requests()
        .into_iter()
        .filter(|r| r.path == "/old.html")
        .collect();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].header("if-modified-since"), None);
    let r = &setup.results()[&a(&web, "/old.html")];
    assert_eq!((r.category, r.status), (Category::Ok, Some(200)), "{r:?}");
}
