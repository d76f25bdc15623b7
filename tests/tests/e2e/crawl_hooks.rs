//! Plugins inside the crawl: a fetch hook (the built-in `soft-404`)
//! reclassifies responses, and a parser (the built-in `sitemap`) turns a
//! resource the host does not parse into references the crawl follows.

use crate::common;
use spinneret_core::model::Category;
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};

fn crawl(setup: &Setup) -> String {
    let out = common::crawl(setup, &[]);
    let stderr = common::text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    stderr
}

fn web() -> Web {
    let a = Site::new()
        .page(
            "/index.html",
            &page(
                "Home",
                None,
                r#"<a href="real.html">Real</a> <a href="soft.html">Soft</a> <a href="sitemap.xml">Map</a>"#,
            ),
        )
        .page("/real.html", &page("Real page", None, "<h1>Welcome</h1>"))
        .page(
            "/soft.html",
            &page("Example shop", None, "<h1>Sorry, this page does not exist</h1>"),
        )
        .route(
            "/sitemap.xml",
            Route::file(
                "application/xml",
                r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://a.example:{PORT}/listed.html</loc></url>
<url><loc>/gone.html</loc></url>
</urlset>"#,
            ),
        )
        .page("/listed.html", &page("Listed", None, r#"<a href="deep.html">Deep</a>"#))
        .page("/deep.html", &page("Deep", None, ""));
    Web::new().site("a.example", a)
}

fn task(top: &str, plugins: &str) -> String {
    format!(
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}{top}\"\n\n{plugins}"
    )
}

#[test]
fn soft_404_reclassifies_a_page_that_says_it_is_missing() {
    let web = TestWeb::start(web());
    let setup = Setup::new(
        &web,
        &task(
            "/index.html",
            "[[plugin]]\nname = \"soft-404\"\nsource = \"builtin:soft-404\"\n",
        ),
    );
    crawl(&setup);
    let results = setup.results();
    let soft = &results[&web.url("a.example", "/soft.html")];
    assert_eq!(soft.category, Category::Broken);
    assert_eq!(soft.status, Some(200));
    assert_eq!(
        soft.error.as_deref(),
        Some(
            "soft 404: answered 200 but its heading says \"Sorry, this page does not exist\" (matches \"does not exist\") (plugin soft-404)"
        )
    );
    assert_eq!(
        results[&web.url("a.example", "/real.html")].category,
        Category::Ok
    );
    // Without the hook it is just a page.
    let plain = Setup::new(&web, &task("/index.html", ""));
    crawl(&plain);
    assert_eq!(
        plain.results()[&web.url("a.example", "/soft.html")].category,
        Category::Ok
    );
}

#[test]
fn the_sitemap_parser_makes_a_sitemap_a_document_the_crawl_follows() {
    let web = TestWeb::start(web());
    let a = |p: &str| web.url("a.example", p);
    let setup = Setup::new(
        &web,
        &task(
            "/sitemap.xml",
            "[[plugin]]\nname = \"sitemap\"\nsource = \"builtin:sitemap\"\n",
        ),
    );
    crawl(&setup);
    let results = setup.results();
    let checked: Vec<(&str, Category)> = results
        .values()
        .map(|r| (r.url.as_str(), r.category))
        .collect();
    assert_eq!(
        checked,
        vec![
            (a("/deep.html").as_str(), Category::Ok),
            (a("/gone.html").as_str(), Category::Broken),
            (a("/listed.html").as_str(), Category::Ok),
            (a("/sitemap.xml").as_str(), Category::Ok),
        ]
    );
    let links = setup.store().document_links(&a("/sitemap.xml")).unwrap();
    assert_eq!(
        links.iter().map(|l| l.0.as_str()).collect::<Vec<_>>(),
        vec![a("/listed.html"), a("/gone.html")]
    );
    // Without the parser the sitemap is read as nothing more than a
    // resource: the run checked nothing, and says so (exit status 4).
    let plain = Setup::new(&web, &task("/sitemap.xml", ""));
    let stderr = common::expect_exit(&common::crawl(&plain, &[]), 4);
    assert!(
        stderr.contains("it is application/xml, not an HTML page: no link in it was followed"),
        "{stderr}"
    );
    assert_eq!(
        plain.results().keys().cloned().collect::<Vec<_>>(),
        vec![a("/sitemap.xml")]
    );
}

#[test]
fn a_policy_narrows_the_crawl_by_depth_and_pattern() {
    let chain = Site::new()
        .page(
            "/index.html",
            &page(
                "Top",
                None,
                r#"<a href="d1.html">1</a> <a href="cal/2026.html">Calendar</a> <a href="next-year.html">Next</a>"#,
            ),
        )
        // A redirect's end is checked with the link, but the policy is asked
        // before the task traverses it: not traversed, as it is avoided.
        .route("/next-year.html", Route::redirect(301, "/cal/2027.html"))
        .page("/d1.html", &page("1", None, r#"<a href="d2.html">2</a>"#))
        .page("/d2.html", &page("2", None, r#"<a href="d3.html">3</a>"#))
        .page("/d3.html", &page("3", None, r#"<a href="d4.html">4</a>"#))
        .page("/d4.html", &page("4", None, ""))
        .page("/cal/2026.html", &page("2026", None, ""))
        .page("/cal/2027.html", &page("2027", None, r#"<a href="d4.html">4</a>"#));
    let web = TestWeb::start(Web::new().site("a.example", chain));
    let a = |p: &str| web.url("a.example", p);
    let setup = Setup::new(
        &web,
        &task(
            "/index.html",
            "[[plugin]]\nname = \"guard\"\nsource = \"builtin:trap-guard\"\n[plugin.config]\nmax_depth = 2\navoid = [\"/cal/\"]\n",
        ),
    );
    crawl(&setup);
    let results = setup.results();
    let seen: Vec<(&str, Category, Option<&str>)> = results
        .values()
        .map(|r| (r.url.as_str(), r.category, r.method))
        .collect();
    assert_eq!(
        seen,
        vec![
            (a("/cal/2026.html").as_str(), Category::Avoided, None),
            (a("/cal/2027.html").as_str(), Category::Ok, Some("GET")),
            (a("/d1.html").as_str(), Category::Ok, Some("GET")),
            (a("/d2.html").as_str(), Category::Ok, Some("GET")),
            (a("/d3.html").as_str(), Category::Ok, Some("HEAD")),
            (a("/index.html").as_str(), Category::Ok, Some("GET")),
            (a("/next-year.html").as_str(), Category::Moved, Some("GET")),
        ]
    );
    assert_eq!(
        results[&a("/cal/2026.html")].error.as_deref(),
        Some("trap-guard: the URL contains \"/cal/\" (policy guard)")
    );
    assert!(
        !web.requests()
            .iter()
            .any(|r| r.path == "/cal/2026.html" || r.path == "/d4.html"),
        "nothing avoided or beyond the leaf was requested, and the avoided end of a redirect was not traversed"
    );
}

/// What each recording policy was asked (from their log lines, `plugin
/// NAME: asked about URL for task TASK`): (plugin, URL) → tasks, sorted.
type Questions = std::collections::BTreeMap<(String, String), Vec<String>>;

fn policy_questions(log: &str) -> Questions {
    let mut asked = Questions::new();
    for line in log.lines() {
        let Some((head, rest)) = line.split_once(": asked about ") else {
            continue;
        };
        let plugin = head.rsplit_once("plugin ").expect("a plugin's log line").1;
        let (url, task) = rest.split_once(" for task ").expect("a recorder log line");
        let key = (plugin.to_string(), url.to_string());
        asked.entry(key).or_default().push(task.trim().to_string());
    }
    asked.values_mut().for_each(|tasks| tasks.sort());
    asked
}

/// A recording policy named `name` (avoiding "private"), declaring whether
/// it reads the context.
fn recorder(name: &str, reads_context: bool) -> String {
    format!(
        "[[plugin]]\nname = \"{name}\"\nsource = {source:?}\n[plugin.config]\nreads_context = {reads_context}\navoid = [\"private\"]\n\n",
        source = env!("TEST_PLUGIN_RECORDING_POLICY"),
    )
}

/// A URL's result: (URL, category, error).
type Seen = (String, Category, Option<String>);

/// Two tasks whose tops both link to the same two pages, crawled with
/// `plugins`; returns the questions the recording policies were asked, the
/// crawl's results (URL, category, error) and the web.
fn two_tasks_with(plugins: &str) -> (Questions, Vec<Seen>, TestWeb) {
    let links = r#"<a href="shared.html">Shared</a> <a href="private.html">Private</a>"#;
    let site = Site::new()
        .page("/a.html", &page("A", None, links))
        .page("/b.html", &page("B", None, links))
        .page("/shared.html", &page("Shared", None, ""))
        .page("/private.html", &page("Private", None, ""));
    let web = TestWeb::start(Web::new().site("a.example", site));
    let config = format!(
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/a.html\"\n\n\
         [[task]]\nname = \"B\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/b.html\"\n\n{plugins}"
    );
    let setup = Setup::new(&web, &config);
    let out = common::spinneret(&["-v", "crawl", setup.config_path.to_str().unwrap()]);
    let log = common::text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{log}");
    (policy_questions(&log), seen_but(&setup, None), web)
}

/// The crawl's results in `setup` as (URL, category, error), in URL order,
/// but for the URL `skip` (a service a plugin consults).
fn seen_but(setup: &Setup, skip: Option<&str>) -> Vec<Seen> {
    setup
        .results()
        .values()
        .filter(|r| Some(r.url.as_str()) != skip)
        .map(|r| (r.url.clone(), r.category, r.error.clone()))
        .collect()
}

/// The questions `plugin` was asked, as (URL, tasks).
fn asked_of(asked: &Questions, plugin: &str) -> Vec<(String, Vec<String>)> {
    asked
        .iter()
        .filter(|((p, _), _)| p == plugin)
        .map(|((_, url), tasks)| (url.clone(), tasks.clone()))
        .collect()
}

fn tasks(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn a_policy_that_judges_urls_alone_is_asked_once_per_url_for_all_tasks() {
    let (asked, results, web) = two_tasks_with(&recorder("free", false));
    let a = |p: &str| web.url("a.example", p).to_string();
    // Whichever task reached the shared pages first asked for both.
    let first = asked[&("free".to_string(), a("/shared.html"))].clone();
    assert!(
        first == tasks(&["A"]) || first == tasks(&["B"]),
        "{first:?}"
    );
    assert_eq!(
        asked_of(&asked, "free"),
        vec![
            (a("/a.html"), tasks(&["A"])),
            (a("/b.html"), tasks(&["B"])),
            (a("/private.html"), first.clone()),
            (a("/shared.html"), first),
        ],
        "each URL asked about once"
    );
    let avoided = "it contains \"private\" (policy free)".to_string();
    assert_eq!(
        results,
        vec![
            (a("/a.html"), Category::Ok, None),
            (a("/b.html"), Category::Ok, None),
            (a("/private.html"), Category::Avoided, Some(avoided)),
            (a("/shared.html"), Category::Ok, None),
        ]
    );
    assert!(!web.requests().iter().any(|r| r.path == "/private.html"));
}

#[test]
fn a_policy_that_reads_the_context_is_asked_once_per_task_and_url_beside_one_that_does_not() {
    let plugins = recorder("reader", true) + &recorder("free", false);
    let (asked, results, web) = two_tasks_with(&plugins);
    let a = |p: &str| web.url("a.example", p).to_string();
    assert_eq!(
        asked_of(&asked, "reader"),
        vec![
            (a("/a.html"), tasks(&["A"])),
            (a("/b.html"), tasks(&["B"])),
            (a("/private.html"), tasks(&["A", "B"])),
            (a("/shared.html"), tasks(&["A", "B"])),
        ]
    );
    let free = asked_of(&asked, "free");
    assert_eq!(
        free.iter().map(|(_, t)| t.len()).collect::<Vec<_>>(),
        vec![1, 1, 1, 1],
        "the other is still asked once per URL: {free:?}"
    );
    assert_eq!(
        results[2],
        (
            a("/private.html"),
            Category::Avoided,
            Some("it contains \"private\" (policy reader)".to_string())
        )
    );
}

/// A policy that consults a slow service (through the host's fetch, for
/// a granted host) about every URL: the first of its calls the engine makes
/// itself (the fetch must work there too), and once one turn's calls take
/// longer than the engine lets them, the rest go to the plugin thread. It
/// is asked about each URL once, consults the service each time, and its
/// verdicts hold.
#[test]
fn a_slow_policy_is_moved_to_the_plugin_thread_and_still_judges_every_url() {
    let site = Site::new()
        .page(
            "/a.html",
            &page(
                "A",
                None,
                r#"<a href="b.html">B</a> <a href="private.html">Private</a>"#,
            ),
        )
        .page("/b.html", &page("B", None, r#"<a href="c.html">C</a>"#))
        .page("/c.html", &page("C", None, ""))
        .page("/private.html", &page("Private", None, ""))
        .route(
            "/service",
            Route::Delay(
                std::time::Duration::from_millis(60),
                Box::new(Route::file("text/plain", "ok")),
            ),
        );
    let web = TestWeb::start(Web::new().site("a.example", site));
    let a = |p: &str| web.url("a.example", p).to_string();
    let plugin = format!(
        "[[plugin]]\nname = \"slow\"\nsource = {source:?}\nhosts = [\"a.example\"]\n[plugin.config]\navoid = [\"private\"]\nconsult = {service:?}\n",
        source = env!("TEST_PLUGIN_RECORDING_POLICY"),
        service = a("/service"),
    );
    let setup = Setup::new(&web, &task("/a.html", &plugin));
    let out = common::spinneret(&["-v", "crawl", setup.config_path.to_str().unwrap()]);
    let log = common::text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{log}");
    assert!(
        log.contains("they run on the plugin thread from now on"),
        "{log}"
    );
    assert!(!log.contains("panicked"), "{log}");
    let asked = policy_questions(&log);
    assert_eq!(
        asked_of(&asked, "slow"),
        vec![
            (a("/a.html"), tasks(&["A"])),
            (a("/b.html"), tasks(&["A"])),
            (a("/c.html"), tasks(&["A"])),
            (a("/private.html"), tasks(&["A"])),
        ]
    );
    let consulted = format!("plugin slow: consulted {}: status 200", a("/service"));
    assert_eq!(log.matches(&consulted).count(), 4, "{log}");
    let results = seen_but(&setup, Some(&a("/service")));
    let avoided = "it contains \"private\" (policy slow)".to_string();
    assert_eq!(
        results,
        vec![
            (a("/a.html"), Category::Ok, None),
            (a("/b.html"), Category::Ok, None),
            (a("/c.html"), Category::Ok, None),
            (a("/private.html"), Category::Avoided, Some(avoided)),
        ]
    );
    assert!(!web.requests().iter().any(|r| r.path == "/private.html"));
}

/// A request hook (`request-hook`, as `gate`) sees each request before it
/// goes, once, with its method: the header it adds goes with every request
/// of the crawl, and a URL it vetoes is never requested and is recorded as
/// avoided with its reason. A second hook that asks for an invalid header
/// is recorded as failing against each URL, and the request goes without it.
#[test]
fn a_request_hook_adds_headers_and_vetoes_requests() {
    request_hooks_in_a_crawl(false);
}

/// The same when the engine's plugin calls move to the plugin thread after
/// the first request (a slow policy beside the hooks).
#[test]
fn a_request_hook_on_the_plugin_thread_adds_headers_and_vetoes_requests() {
    request_hooks_in_a_crawl(true);
}

/// Crawl with the request hooks `gate` and `sloppy` (and, if `slow_policy`,
/// a policy that consults a slow service, objecting to nothing) and check
/// what they did.
fn request_hooks_in_a_crawl(slow_policy: bool) {
    let site = Site::new()
        .page(
            "/index.html",
            &page(
                "Home",
                None,
                r#"<a href="page.html">Page</a> <a href="blocked.html">Blocked</a> <img src="logo.png" alt="">"#,
            ),
        )
        .page("/page.html", &page("Page", None, ""))
        .page("/blocked.html", &page("Blocked", None, ""))
        .route("/logo.png", Route::file("image/png", "PNG"))
        .route(
            "/service",
            Route::Delay(
                std::time::Duration::from_millis(30),
                Box::new(Route::file("text/plain", "ok")),
            ),
        );
    let web = TestWeb::start(Web::new().site("a.example", site));
    let a = |p: &str| web.url("a.example", p).to_string();
    let hook = |name: &str, config: &str| {
        format!(
            "[[plugin]]\nname = \"{name}\"\nsource = {source:?}\n[plugin.config]\n{config}\n\n",
            source = env!("TEST_PLUGIN_REQUEST_HOOK"),
        )
    };
    let plugins = hook(
        "gate",
        "header = [\"X-Checked-By\", \"spinneret test\"]\nveto = [\"blocked\"]",
    ) + &hook("sloppy", "header = [\"X-Bad\", \"two\\nlines\"]");
    let policy = format!(
        "[[plugin]]\nname = \"slow\"\nsource = {source:?}\nhosts = [\"a.example\"]\n[plugin.config]\nconsult = {service:?}\n",
        source = env!("TEST_PLUGIN_RECORDING_POLICY"),
        service = a("/service"),
    );
    let plugins = match slow_policy {
        true => plugins + &policy,
        false => plugins,
    };
    let setup = Setup::new(&web, &task("/index.html", &plugins));
    let out = common::spinneret(&["-v", "crawl", setup.config_path.to_str().unwrap()]);
    let log = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "nothing broken: {log}");
    let moved = log.contains("they run on the plugin thread from now on");
    assert_eq!(moved, slow_policy, "{log}");

    // Each hook saw each request once (the vetoed one too, by the first).
    let seen = |plugin: &str| -> Vec<String> {
        let mark = format!("plugin {plugin}: request ");
        let mut seen: Vec<String> = log
            .lines()
            .filter_map(|l| l.split_once(&mark).map(|(_, r)| r.trim().to_string()))
            .collect();
        seen.sort();
        seen
    };
    let requests = |vetoed: bool| {
        let mut r = vec![
            format!("GET {}", a("/index.html")),
            format!("GET {}", a("/page.html")),
            format!("HEAD {}", a("/logo.png")),
        ];
        if vetoed {
            r.insert(1, format!("GET {}", a("/blocked.html")));
        }
        r.sort();
        r
    };
    assert_eq!(seen("gate"), requests(true), "{log}");
    assert_eq!(seen("sloppy"), requests(false), "{log}");

    // What the web saw: every request but robots.txt with gate's header,
    // none with the invalid one, nothing for the vetoed URL.
    let got: Vec<(String, String, Option<String>)> = web
        .requests()
        .iter()
        .filter(|r| r.path != "/robots.txt" && r.path != "/service")
        .map(|r| {
            let h = r.header("x-checked-by").map(str::to_string);
            (r.method.clone(), r.path.clone(), h)
        })
        .collect();
    let with = Some("spinneret test".to_string());
    let mut got = got;
    got.sort();
    assert_eq!(
        got,
        vec![
            ("GET".to_string(), "/index.html".to_string(), with.clone()),
            ("GET".to_string(), "/page.html".to_string(), with.clone()),
            ("HEAD".to_string(), "/logo.png".to_string(), with),
        ]
    );

    let results = seen_but(&setup, Some(&a("/service")));
    let vetoed = "vetoed by plugin gate: it contains \"blocked\"".to_string();
    assert_eq!(
        results,
        vec![
            (a("/blocked.html"), Category::Avoided, Some(vetoed)),
            (a("/index.html"), Category::Ok, None),
            (a("/logo.png"), Category::Ok, None),
            (a("/page.html"), Category::Ok, None),
        ]
    );

    // The invalid header: a failure of `sloppy` against each URL it saw.
    let failures = common::plugin_failures(&setup);
    let bad =
        "plugin sloppy failed in before-request: asked for an invalid header `X-Bad: two\nlines`";
    assert_eq!(
        failures,
        ["/index.html", "/logo.png", "/page.html"]
            .iter()
            .map(|p| (a(p), "sloppy".to_string(), bad.to_string()))
            .collect::<Vec<_>>()
    );
}

/// A policy or a fetch hook that fails during the crawl is a plugin failure:
/// the crawl goes on and stores everything, and `--strict-plugins` makes
/// the run exit 3 (the report stage's own success must not hide it).
#[test]
fn strict_plugins_counts_failures_during_the_crawl() {
    let web = TestWeb::start(web());
    let a = |p: &str| web.url("a.example", p).to_string();
    let policy = format!(
        "[[plugin]]\nname = \"faulty\"\nsource = {:?}\n[plugin.config]\nfail_on = [\"real.html\"]\n",
        env!("TEST_PLUGIN_RECORDING_POLICY"),
    );
    let hook = format!(
        "[[plugin]]\nname = \"sloppy\"\nsource = {:?}\n[plugin.config]\nheader = [\"X-Bad\", \"two\\nlines\"]\n",
        env!("TEST_PLUGIN_REQUEST_HOOK"),
    );
    // The policy fails for the batch of the home page's references, the
    // hook for the home page's request: both against the home page.
    let home = a("/index.html");
    for (plugins, failing, call) in [
        (policy, "faulty", "decide"),
        (hook, "sloppy", "before-request"),
    ] {
        let setup = Setup::new(&web, &task("/index.html", &plugins));
        let out = common::crawl(&setup, &[]);
        let stderr = common::expect_exit(&out, 0);
        let said = format!("spinneret: {home}: plugin {failing} failed in {call}: ");
        assert!(stderr.contains(&said), "{stderr}");
        assert!(
            common::plugin_failures(&setup)
                .iter()
                .any(|(u, p, _)| *u == home && p == failing),
            "{stderr}"
        );
        // Nothing else is lost: the real page is still checked.
        assert_eq!(setup.results()[&a("/real.html")].category, Category::Ok);
        let out = common::crawl(&setup, &["--strict-plugins"]);
        common::expect_exit(&out, 3);
    }
}

#[test]
fn the_sitemap_parser_knows_a_sitemap_by_its_root_element_whatever_its_path() {
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/index.html",
                    &page(
                        "Home",
                        None,
                        r#"<a href="pages">Pages</a> <a href="feed.xml">Feed</a>"#,
                    ),
                )
                .route(
                    "/pages",
                    Route::file(
                        "text/xml; charset=utf-8",
                        r#"<?xml version="1.0"?><urlset><url><loc>listed.html</loc></url></urlset>"#,
                    ),
                )
                .route(
                    "/feed.xml",
                    Route::file(
                        "application/rss+xml",
                        r#"<rss><channel><link>http://a.example:{PORT}/not-a-reference.html</link></channel></rss>"#,
                    ),
                )
                .page("/listed.html", &page("Listed", None, "")),
        ),
    );
    let a = |p: &str| web.url("a.example", p);
    let setup = Setup::new(
        &web,
        &task(
            "/index.html",
            "[[plugin]]\nname = \"sitemap\"\nsource = \"builtin:sitemap\"\n",
        ),
    );
    let stderr = crawl(&setup);
    let checked: Vec<String> = setup.results().into_keys().collect();
    assert_eq!(
        checked,
        vec![
            a("/feed.xml"),
            a("/index.html"),
            a("/listed.html"),
            a("/pages")
        ],
        "the sitemap's page is checked; the feed's <link> is no reference"
    );
    // The feed, not a sitemap, is no plugin failure.
    assert!(!stderr.contains("plugin"), "{stderr}");
    let store = setup.store();
    let run = store.last_run().unwrap().unwrap().id;
    let findings = store.findings(run, None).unwrap();
    assert!(
        findings.iter().all(|f| f.kind != "plugin-failure"),
        "{findings:?}"
    );
}
