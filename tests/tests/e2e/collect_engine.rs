//! `collect` on the crawl's engine and network layer: one robots.txt fetch
//! per site, Crawl-delay, fetch hooks, the address rule on every hop, the
//! requisites cap, and a failed run that keeps the last good copy.

use crate::common::{collect, expect_exit, text};
use crate::snatch::run_files;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[test]
fn a_sites_robots_txt_is_read_once_for_the_queries_and_the_pages_and_its_crawl_delay_holds() {
    let port = Arc::new(OnceLock::<u16>::new());
    let p = port.clone();
    let site = Site::new()
        .robots("User-agent: *\nCrawl-delay: 1\nDisallow: /private/\n")
        .page(
            "/one.html",
            r#"<title>One</title><img src="one.png"><a href="private/x.html">x</a>"#,
        )
        .page("/two.html", "<title>Two</title>")
        .route("/one.png", Route::file("image/png", "PNG"))
        .generated(Arc::new(move |path: &str| {
            let port = p.get().copied().unwrap_or(0);
            path.starts_with("/search?").then(|| {
                Route::file(
                    "application/json",
                    format!(
                        r#"{{"results": [{{"url": "http://127.0.0.1:{port}/two.html", "title": "Two"}}]}}"#
                    ),
                )
            })
        }));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let _ = port.set(web.port());
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            r#"max_pages = 5

[[url]]
url = "{base}/one.html"
depth = 1

[[interest]]
title = "Found"
keywords = ["two"]
engines = ["s"]

[[engine]]
name = "s"
source = "builtin:searxng"
config = {{ base = "{base}/" }}
"#
        ),
    );
    let stdout = text(&out.stdout);
    // The link robots.txt disallows is said, and not requested.
    expect_exit(&out, 1);
    assert!(
        stdout.contains(&format!(
            "not collected: {base}/private/x.html: robots.txt of 127.0.0.1:{} disallows {base}/private/x.html (Disallow: /private/)\n",
            web.port()
        )),
        "{stdout}"
    );
    let requests = web.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    // robots.txt once, before anything else; the query, then the pages.
    assert_eq!(
        paths.iter().filter(|p| **p == "/robots.txt").count(),
        1,
        "{paths:?}"
    );
    assert_eq!(paths[0], "/robots.txt", "{paths:?}");
    assert!(paths[1].starts_with("/search?"), "{paths:?}");
    let mut rest = paths[2..].to_vec();
    rest.sort_unstable();
    assert_eq!(rest, ["/one.html", "/one.png", "/two.html"], "{stdout}");
    // Crawl-delay: 1 holds for every request after robots.txt, the query
    // and the collection alike, one at a time.
    assert_eq!(web.most_in_flight("127.0.0.1"), 1);
    for pair in requests.windows(2) {
        let gap = pair[1].at.duration_since(pair[0].at);
        assert!(
            gap >= Duration::from_millis(950),
            "{} came {gap:?} after {}",
            pair[1].path,
            pair[0].path
        );
    }
}

#[test]
fn a_user_named_local_site_leads_nowhere_else_on_this_machine() {
    // Another host of this machine, which nothing the person named is on.
    let inside = TestWeb::start_at(
        "127.0.0.2",
        Web::new().site(
            "127.0.0.2",
            Site::new()
                .page("/inside.html", "<title>INTERNAL</title>")
                .route("/secret.png", Route::file("image/png", "SECRET"))
                .route("/by-redirect.png", Route::file("image/png", "SECRET")),
        ),
    );
    let i = inside.port();
    let site = Site::new()
        .page(
            "/index.html",
            &format!(
                r#"<title>Intranet</title>
                <img src="http://127.0.0.2:{i}/secret.png">
                <img src="/r.png">
                <a href="http://127.0.0.2:{i}/inside.html">inside</a>
                <a href="/about.html">about</a>"#
            ),
        )
        .page("/about.html", "<title>About</title>")
        .route(
            "/r.png",
            Route::redirect(302, &format!("http://127.0.0.2:{i}/by-redirect.png")),
        );
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!("requisites = \"any-host\"\n\n[[url]]\nurl = \"{base}/index.html\"\ndepth = 1\n"),
    );
    let stdout = text(&out.stdout);
    expect_exit(&out, 1);
    assert!(
        inside.requests().is_empty(),
        "127.0.0.2 was asked: {:?}\n{stdout}",
        inside.requests()
    );
    let refused = "not requested: 127.0.0.2 is on this machine or its network, which a page from elsewhere may not reach (to check it, name it as a top, or its host in `internal_hosts`)";
    assert!(
        stdout.contains(&format!("not collected: {base}/r.png: {refused}")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "not collected: http://127.0.0.2:{i}/secret.png: referenced by {base}/index.html: a page from elsewhere may not reach this machine or its network"
        )),
        "{stdout}"
    );
    let host = format!("127.0.0.1_{}", web.port());
    assert_eq!(
        run_files(&dir.path().join("mirror"), 1),
        [
            format!("URLs/{host}/about.html"),
            format!("URLs/{host}/index.html"),
        ]
    );
}

#[test]
fn a_run_while_the_site_is_down_keeps_the_last_good_copy_and_says_so() {
    let site = Site::new()
        .page("/index.html", r#"<title>Home</title><img src="logo.png">"#)
        .route("/logo.png", Route::file("image/png", "PNG"));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let profile = format!("keep_runs = 1\n\n[[url]]\nurl = \"{base}/index.html\"\n");
    expect_exit(&collect(dir.path(), &profile), 0);
    drop(web);
    // The site is gone: nothing answers on its port.
    let out = collect(dir.path(), &profile);
    let stdout = text(&out.stdout);
    expect_exit(&out, 1);
    assert!(
        stdout.contains(
            "since the last run: 0 new, 0 changed, 0 unchanged, 0 gone, 1 not retrieved\n"
        ),
        "{stdout}"
    );
    let mirror = dir.path().join("mirror");
    let host = format!("127.0.0.1_{}", base.rsplit(':').next().unwrap());
    // Run 1 is gone (keep_runs = 1); run 2 holds its copies.
    assert!(!mirror.join("runs/0001").exists());
    assert_eq!(
        run_files(&mirror, 2),
        [
            format!("URLs/{host}/index.html"),
            format!("URLs/{host}/logo.png"),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(mirror.join(format!("runs/0002/URLs/{host}/index.html"))).unwrap(),
        r#"<title>Home</title><img src="logo.png">"#
    );
    let index = std::fs::read_to_string(mirror.join("index.html")).unwrap();
    assert!(
        index.contains(&format!("URLs/{host}/index.html")),
        "{index}"
    );
}

#[test]
fn a_profiles_fetch_hook_sees_every_request_of_the_collection() {
    let site = Site::new()
        .page(
            "/index.html",
            r#"<title>Home</title><img src="logo.png"><a href="about.html">a</a><a href="tracker.html">t</a>"#,
        )
        .page("/about.html", "<title>About</title>")
        .page("/tracker.html", "<title>Tracker</title>")
        .route("/logo.png", Route::file("image/png", "PNG"));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            r#"[[url]]
url = "{base}/index.html"
depth = 1

[[fetch_hook]]
source = "{}"
config = {{ header = ["x-checked-by", "gate"], veto = ["tracker"] }}
"#,
            env!("TEST_PLUGIN_REQUEST_HOOK")
        ),
    );
    let stdout = text(&out.stdout);
    expect_exit(&out, 1);
    assert!(
        stdout.contains(&format!(
            "not collected: {base}/tracker.html: vetoed by plugin {}: it contains \"tracker\"\n",
            env!("TEST_PLUGIN_REQUEST_HOOK")
        )),
        "{stdout}"
    );
    let mut seen: Vec<(String, Option<String>)> = web
        .requests()
        .iter()
        .map(|r| (r.path.clone(), r.header("x-checked-by").map(str::to_string)))
        .collect();
    seen.sort();
    let gate = Some("gate".to_string());
    assert_eq!(
        seen,
        [
            ("/about.html".to_string(), gate.clone()),
            ("/index.html".to_string(), gate.clone()),
            ("/logo.png".to_string(), gate.clone()),
            ("/robots.txt".to_string(), None),
        ],
        "{stdout}"
    );
}

/// A profile's `[[policy]]` is asked about the links a collection would
/// follow, as a crawl's policies are: trap-guard's `avoid` leaves a page
/// out (never requested, said, no failure) and its `max_depth` makes a
/// page deeper than it a leaf (collected, its links not followed).
#[test]
fn a_profiles_policy_avoids_links_and_makes_deep_pages_leaves() {
    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .page(
                    "/",
                    "<title>Top</title><a href=\"/a.html\">a</a><a href=\"/private-x.html\">x</a>",
                )
                .page(
                    "/a.html",
                    "<title>A</title><a href=\"/b.html\">b</a><a href=\"/private-x.html\">x</a>",
                )
                .page("/b.html", "<title>B</title><a href=\"/c.html\">c</a>")
                .page("/c.html", "<title>C</title>")
                .page("/private-x.html", "<title>X</title>"),
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        format!(
            "per_site_delay = \"0s\"\n\n[[url]]\nurl = \"http://127.0.0.1:{}/\"\ndepth = 3\n\n\
             [[policy]]\nsource = \"builtin:trap-guard\"\nconfig = {{ avoid = [\"/private-\"], max_depth = 1 }}\n",
            web.port()
        ),
    )
    .unwrap();
    let run = crate::common::spinneret(&["collect", profile.to_str().unwrap()]);
    expect_exit(&run, 0);
    let out = format!("{}{}", text(&run.stdout), text(&run.stderr));
    let mut pages: Vec<String> = web
        .requests()
        .into_iter()
        .map(|r| r.path)
        .filter(|p| p != "/robots.txt")
        .collect();
    pages.sort();
    assert_eq!(pages, ["/", "/a.html", "/b.html"]);
    let avoided = format!(
        "avoided: {}: trap-guard: the URL contains \"/private-\"",
        web.url("127.0.0.1", "/private-x.html")
    );
    // Said once, though two pages link to it.
    assert_eq!(out.matches(&avoided).count(), 1, "{out}");
    assert!(!out.contains("not collected"), "{out}");
}

/// `per_site_delay` paces each site on its own: requests to one site start
/// at least the interval apart, while the sites go on side by side (a
/// pacer shared by all the sites made 10 sites take 10 times their
/// arithmetic).
#[test]
fn per_site_delay_paces_each_site_and_the_sites_go_side_by_side() {
    let hosts = ["s0.test", "s1.test", "s2.test", "s3.test"];
    let mut web = Web::new();
    for h in hosts {
        let links: String = (0..3)
            .map(|i| format!("<a href=\"/p{i}.html\">{i}</a>"))
            .collect();
        let mut site = Site::new().page("/", &format!("<title>{h}</title>{links}"));
        for i in 0..3 {
            site = site.page(&format!("/p{i}.html"), &format!("<title>{i}</title>"));
        }
        web = web.site(h, site);
    }
    let web = TestWeb::start(web);
    let items: String = hosts
        .iter()
        .map(|h| format!("[[url]]\nurl = \"{}\"\ndepth = 1\n\n", web.url(h, "/")))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let profile = format!(
        "per_site_delay = \"300ms\"\n\n{items}{}",
        web.resolve_toml()
    );
    expect_exit(&collect(dir.path(), &profile), 0);
    let requests: Vec<_> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .collect();
    assert_eq!(requests.len(), 16);
    for h in hosts {
        let at: Vec<_> = requests
            .iter()
            .filter(|r| r.host == h)
            .map(|r| r.at)
            .collect();
        assert_eq!(at.len(), 4, "{h}");
        for pair in at.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(
                gap >= Duration::from_millis(290),
                "{h}: {gap:?} between two requests"
            );
        }
    }
    // The interval is each site's, not one pacer's for all: two
    // different sites' requests start closer together than it.
    let mut all: Vec<_> = requests.iter().map(|r| (r.at, r.host.clone())).collect();
    all.sort();
    assert!(
        all.windows(2)
            .any(|w| w[0].1 != w[1].1 && w[1].0 - w[0].0 < Duration::from_millis(290)),
        "every two requests were an interval apart, whatever their sites"
    );
}
