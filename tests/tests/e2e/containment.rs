//! What a remote page must never make the crawler do: open local files.

use spinneret_core::model::Category;
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};

const TASK: &str =
    "[[task]]\nname = \"T\"\nkind = \"owner\"\ntop = \"http://a.example:{PORT}/index.html\"\n";

#[test]
fn a_remote_page_cannot_make_the_crawler_open_local_files() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.html");
    std::fs::write(
        &secret,
        page("Secret", None, r#"<a href="file:///etc/hostname">more</a>"#),
    )
    .unwrap();
    let secret_url = url::Url::from_file_path(&secret).unwrap().to_string();
    let home = page(
        "Home",
        Some("T"),
        r#"<a href="file:///etc/passwd">passwd</a> <a href="/r">r</a> <img src="file:///etc/hostname">"#,
    );
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page("/index.html", &home)
                .route("/r", Route::redirect(302, &secret_url)),
        ),
    );
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let results = setup.results();
    for url in ["file:///etc/passwd", "file:///etc/hostname"] {
        let r = &results[url];
        assert_eq!(r.category, Category::NotChecked, "{url}");
        assert_eq!(
            r.error.as_deref(),
            Some("local file referenced from a remote page")
        );
        assert_eq!(
            (
                r.size,
                r.content_length,
                &r.content_hash,
                &r.last_modified,
                r.method
            ),
            (None, None, &None, &None, None),
            "{url} was opened"
        );
    }
    let r = &results[&web.url("a.example", "/r")];
    assert_eq!(r.category, Category::NotChecked);
    assert_eq!(
        r.error.as_deref(),
        Some(
            format!("redirected to {secret_url}: local file referenced from a remote page")
                .as_str()
        )
    );
    assert_eq!((r.size, &r.content_hash), (None, &None));
    assert!(
        !results.contains_key(&secret_url),
        "the redirect target was checked"
    );
    let store = setup.store();
    assert!(
        store.document(&secret_url).unwrap().is_none(),
        "secret.html was parsed"
    );
    assert!(
        store
            .document(&web.url("a.example", "/r"))
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_local_tree_opens_only_files_inside_its_tree() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("site")).unwrap();
    std::fs::write(dir.path().join("outside.html"), page("Outside", None, "")).unwrap();
    std::fs::write(dir.path().join("site/in.html"), page("In", None, "")).unwrap();
    std::fs::write(
        dir.path().join("site/index.html"),
        page(
            "Local",
            None,
            r#"<a href="in.html">in</a> <a href="../outside.html">out</a>"#,
        ),
    )
    .unwrap();
    let top = url::Url::from_file_path(dir.path().join("site/index.html")).unwrap();
    let web = TestWeb::start(Web::new());
    let setup = Setup::new(
        &web,
        &format!("[[task]]\nname = \"L\"\nkind = \"site\"\ntop = \"{top}\"\n"),
    );
    setup.crawl();
    let results = setup.results();
    let url = |p: &str| top.join(p).unwrap().to_string();
    assert_eq!(results[&url("in.html")].category, Category::Ok);
    let out = &results[&url("../outside.html")];
    assert_eq!(
        (out.category, out.size, out.last_modified.as_deref()),
        (Category::NotChecked, None, None)
    );
    assert!(
        out.error
            .as_deref()
            .unwrap()
            .starts_with("local file outside the task's tree"),
        "{:?}",
        out.error
    );
}

/// Two local tasks over one tree: a page inside the site task's tree but
/// outside the tree task's is not opened for the tree task, and that must
/// not settle it for the site task, which reaches it later (the tree task's
/// top links to it at once; the site task only two links down). It was
/// recorded "not checked" for both, and the bundled example lost its top
/// page the same way whenever the docs task got there first.
#[test]
fn a_local_file_outside_one_tasks_tree_is_still_checked_for_the_task_it_belongs_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        page("Home", None, r#"<a href="a.html">a</a>"#),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.html"),
        page("A", None, r#"<a href="other.html">other</a>"#),
    )
    .unwrap();
    std::fs::write(dir.path().join("other.html"), page("Other", None, "")).unwrap();
    std::fs::write(
        dir.path().join("docs/index.html"),
        page("Docs", None, r#"<a href="../other.html">other</a>"#),
    )
    .unwrap();
    let site = url::Url::from_file_path(dir.path().join("index.html")).unwrap();
    let docs = url::Url::from_file_path(dir.path().join("docs/index.html")).unwrap();
    let web = TestWeb::start(Web::new());
    let setup = Setup::new(
        &web,
        &format!(
            "[[task]]\nname = \"Docs\"\nkind = \"tree\"\ntop = \"{docs}\"\n\n[[task]]\nname = \"Site\"\nkind = \"site\"\ntop = \"{site}\"\n"
        ),
    );
    let report = setup.crawl();
    let other = site.join("other.html").unwrap().to_string();
    let (result, role) = &setup.task_results("Site")[&other];
    assert_eq!((result.category, role.as_str()), (Category::Ok, "document"));
    assert_eq!(result.method, Some("GET"));
    // The tree task sees the site task's result, as a leaf of its own.
    let (result, role) = &setup.task_results("Docs")[&other];
    assert_eq!((result.category, role.as_str()), (Category::Ok, "leaf"));
    let site_summary = report.tasks.iter().find(|t| t.name == "Site").unwrap();
    assert_eq!(
        (site_summary.documents, site_summary.not_checked),
        (3, 0),
        "{site_summary:?}"
    );
}

/// A remote robots.txt that redirects to a local file: the file is never
/// opened, and the site is off limits for the run.
#[test]
fn a_robots_txt_redirect_to_a_local_file_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("robots-secret.txt");
    std::fs::write(&secret, "User-agent: *\nDisallow:\n").unwrap();
    let secret_url = url::Url::from_file_path(&secret).unwrap().to_string();
    let web = TestWeb::start(
        Web::new()
            .site(
                "a.example",
                Site::new().page(
                    "/index.html",
                    &page(
                        "Home",
                        Some("T"),
                        r#"<a href="http://b.example:{PORT}/page.html">b</a>"#,
                    ),
                ),
            )
            .site(
                "b.example",
                Site::new()
                    .route("/robots.txt", Route::redirect(302, &secret_url))
                    .page("/page.html", &page("B", None, "")),
            ),
    );
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let r = &setup.results()[&web.url("b.example", "/page.html")];
    assert_eq!(r.category, Category::Avoided);
    let reason = r.error.as_deref().unwrap();
    assert!(
        reason.contains(&format!(
            "robots.txt redirected to {secret_url}, which is never requested"
        )),
        "{reason}"
    );
    assert!(web.methods("b.example", "/page.html").is_empty());
}
