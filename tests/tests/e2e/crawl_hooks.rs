//! Plugins inside the crawl: a fetch hook (the built-in `soft-404`)
//! reclassifies responses, and a parser (the built-in `sitemap`) turns a
//! resource the host does not parse into references the crawl follows.

use crate::common;
use spinneret::model::Category;
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
    // Without the parser the sitemap is read as nothing more than a resource.
    let plain = Setup::new(&web, &task("/sitemap.xml", ""));
    crawl(&plain);
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
