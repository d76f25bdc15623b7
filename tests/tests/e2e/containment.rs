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

/// The address rule: what a page from elsewhere leads to (a link, a
/// redirect) may not reach this machine or its network, however the
/// address is written; nothing is requested there, robots.txt included,
/// and each such link is recorded as not checked, saying why and how to
/// allow it.
#[test]
fn a_page_from_elsewhere_cannot_lead_the_crawl_to_this_machine() {
    let home = page(
        "Home",
        Some("T"),
        r#"<a href="http://127.0.0.1:{PORT}/secret.html">ip</a>
           <a href="http://localhost:{PORT}/secret.html">name</a>
           <a href="http://LOCALHOST.:{PORT}/other.html">name spelt otherwise</a>
           <a href="http://[::1]:{PORT}/secret.html">v6</a>
           <a href="http://[::ffff:127.0.0.1]:{PORT}/secret.html">mapped</a>
           <a href="http://0.0.0.0:{PORT}/secret.html">unspecified</a>
           <a href="http://2130706433:{PORT}/decimal.html">decimal</a>
           <a href="/r">r</a>"#,
    );
    let web = TestWeb::start(
        Web::new()
            .site(
                "a.example",
                Site::new().page("/index.html", &home).route(
                    "/r",
                    Route::redirect(302, "http://127.0.0.1:{PORT}/secret.html"),
                ),
            )
            .site(
                "127.0.0.1",
                Site::new().page("/secret.html", &page("SECRET INTERNAL PAGE", None, "")),
            ),
    );
    let setup = Setup::new(&web, TASK);
    setup.crawl();
    let results = setup.results();
    let port = web.port();
    let refused = |host: &str| {
        format!(
            "not requested: {host} is on this machine or its network, which a page from elsewhere may not reach (to check it, name it as a top, or its host in `internal_hosts`)"
        )
    };
    for (url, host) in [
        (format!("http://127.0.0.1:{port}/secret.html"), "127.0.0.1"),
        (format!("http://localhost:{port}/secret.html"), "localhost"),
        (format!("http://localhost.:{port}/other.html"), "localhost."),
        (format!("http://[::1]:{port}/secret.html"), "[::1]"),
        (
            format!("http://[::ffff:7f00:1]:{port}/secret.html"),
            "[::ffff:7f00:1]",
        ),
        (format!("http://0.0.0.0:{port}/secret.html"), "0.0.0.0"),
        (format!("http://127.0.0.1:{port}/decimal.html"), "127.0.0.1"),
    ] {
        let r = results
            .get(&url)
            .unwrap_or_else(|| panic!("{url}: {results:?}"));
        assert_eq!(
            (r.category, r.error.clone(), r.method),
            (Category::NotChecked, Some(refused(host)), None),
            "{url}"
        );
    }
    let r = &results[&web.url("a.example", "/r")];
    assert_eq!(r.category, Category::NotChecked);
    assert_eq!(
        r.error.as_deref(),
        Some(
            format!(
                "redirected to http://127.0.0.1:{port}/secret.html: {}",
                refused("127.0.0.1")
            )
            .as_str()
        )
    );
    // Nothing but the remote site was asked for anything.
    let asked: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.host != "a.example")
        .map(|r| format!("{} {} {}", r.method, r.host, r.path))
        .collect();
    assert_eq!(asked, Vec::<String>::new());
}

/// The operator may name internal hosts (`internal_hosts`): links to them
/// are checked whatever page they are on; and a page on this machine (a
/// top the user gave) may lead anywhere on it.
#[test]
fn internal_hosts_and_the_users_own_local_pages_may_reach_this_machine() {
    let home = page(
        "Home",
        Some("T"),
        r#"<a href="http://127.0.0.1:{PORT}/secret.html">ip</a>"#,
    );
    let local = page(
        "Local",
        Some("T"),
        r#"<a href="http://localhost:{PORT}/other.html">other</a>"#,
    );
    let web = TestWeb::start(
        Web::new()
            .site("a.example", Site::new().page("/index.html", &home))
            .site(
                "127.0.0.1",
                Site::new()
                    .page("/secret.html", &page("Secret", None, ""))
                    .page("/local.html", &local),
            )
            .site(
                "localhost",
                Site::new().page("/other.html", &page("Other", None, "")),
            ),
    );
    let setup = Setup::new(&web, &format!("internal_hosts = [\"127.0.0.1\"]\n{TASK}"));
    setup.crawl();
    let r = &setup.results()[&format!("http://127.0.0.1:{}/secret.html", web.port())];
    assert_eq!((r.category, r.status), (Category::Ok, Some(200)), "{r:?}");

    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"T\"\nkind = \"owner\"\ntop = \"http://127.0.0.1:{PORT}/local.html\"\n",
    );
    setup.crawl();
    let r = &setup.results()[&format!("http://localhost:{}/other.html", web.port())];
    assert_eq!((r.category, r.status), (Category::Ok, Some(200)), "{r:?}");

    // A host that is no host is refused where it is written.
    let bad = Setup::new(
        &web,
        &format!("internal_hosts = [\"http://10.0.0.5/\"]\n{TASK}"),
    );
    let said = crate::common::expect_refusal(
        &crate::common::crawl(&bad, &[]),
        "`http://10.0.0.5/` is not a host name or an IP address; write the host alone, e.g. \"intranet.example\" or \"10.0.0.5\" (no scheme, port or path)",
    );
    assert!(said.contains("spinneret.toml:"), "{said}");
    assert!(!bad.dir.path().join("store.db").exists(), "{said}");
}

/// The library: a pointer to this machine or its network is refused when
/// it is posted (through every form that takes a URL), and one that came
/// in another way (an imported library) is not requested by the library's
/// task nor by a `web` task that takes the Worm VL's pointers as tops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_pointers_to_this_machine_are_refused_and_never_requested() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("library.db");
    let s = crate::common::serve(&[std::ffi::OsStr::new("--store"), store.as_os_str()]);
    let c = crate::library::Client::new(&s).await;
    for url in [
        "http://127.0.0.1:9/",
        "http://localhost/",
        "http://[::1]/x",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://0x7f.1/",
        "http://100.64.0.1/",
    ] {
        let r = c
            .post("/library/1/point", &[("title", "Internal"), ("url", url)])
            .await;
        assert_eq!(r.status, 422, "{url} was accepted");
        assert!(
            r.body
                .contains("which postings may not point at; point at a public address"),
            "{url}: {}",
            r.body
        );
        let r = c
            .post(
                "/library/1/pointers",
                &[("list", &format!("{url} Internal"))],
            )
            .await;
        assert_eq!(r.status, 422, "{url} was accepted in a list");
    }
    assert_eq!(c.postings(1).await, Vec::<(i64, String)>::new());
    drop(s);

    // Imported (the operator's file), and crawled: never requested.
    let web = TestWeb::start(
        Web::new()
            .site(
                "b.example",
                Site::new().page("/page.html", &page("Page", None, "")),
            )
            .site(
                "127.0.0.1",
                Site::new().page("/secret.html", &page("SECRET INTERNAL PAGE", None, "")),
            ),
    );
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Pointers\"\nkind = \"library\"\n\n[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://b.example:{PORT}/page.html\"\nlevels = 1\n\n[library]\nworm = 2\n",
    );
    let secret = format!("http://127.0.0.1:{}/secret.html", web.port());
    let file = setup.dir.path().join("library.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"format":"spinneret-library","version":1,"root":{{"kind":"vl","seq":0,"title":"Test Library","created_at":1,"updated_at":1,"last_seq":2,"postings":[
{{"kind":"vl","seq":1,"title":"Add your page to the Worm","created_at":1,"updated_at":1,"last_seq":1,"postings":[{{"kind":"pointer","seq":1,"title":"Secret","url":"{secret}","created_at":1,"updated_at":1}}]}},
{{"kind":"pointer","seq":2,"title":"Secret too","url":"{secret}","created_at":1,"updated_at":1}}]}}}}"#
        ),
    )
    .unwrap();
    let out = crate::common::command()
        .args(["library", "import", "--config"])
        .arg(&setup.config_path)
        .arg(&file)
        .output()
        .unwrap();
    crate::common::expect_exit(&out, 0);
    crate::common::crawl(&setup, &[]);
    let asked: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.host != "b.example")
        .map(|r| format!("{} {} {}", r.method, r.host, r.path))
        .collect();
    assert_eq!(asked, Vec::<String>::new());
    let r = &setup.results()[&secret];
    assert_eq!(r.category, Category::NotChecked, "{r:?}");
    let out = crate::common::command()
        .args(["search", "--config"])
        .arg(&setup.config_path)
        .arg("SECRET")
        .output()
        .unwrap();
    assert!(
        !crate::common::text(&out.stdout).contains("SECRET INTERNAL PAGE"),
        "{}",
        crate::common::text(&out.stdout)
    );
}

/// The user's local top opens its own site only: not the host's other
/// ports, and not what its redirects lead to (a site of the user's may
/// redirect wherever a link from elsewhere asks it to).
#[test]
fn a_local_top_opens_its_own_site_and_no_redirect_target() {
    let local = page(
        "Local",
        Some("T"),
        r#"<a href="/go">go</a> <a href="http://a.example:{PORT}/index.html">remote</a>"#,
    );
    let remote = page(
        "Remote",
        Some("T"),
        r#"<a href="http://127.0.0.1:1/other-port">other port</a> <a href="http://127.0.0.1:{PORT}/go">the local redirect</a>"#,
    );
    let web = TestWeb::start(
        Web::new()
            .site("a.example", Site::new().page("/index.html", &remote))
            .site(
                "127.0.0.1",
                Site::new().page("/local.html", &local).route(
                    "/go",
                    Route::redirect(302, "http://127.0.0.1:1/inside.html"),
                ),
            ),
    );
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"T\"\nkind = \"owner\"\ntop = \"http://127.0.0.1:{PORT}/local.html\"\n",
    );
    setup.crawl();
    let results = setup.results();
    let other = &results["http://127.0.0.1:1/other-port"];
    assert_eq!(other.category, Category::NotChecked, "{other:?}");
    let go = &results[&format!("http://127.0.0.1:{}/go", web.port())];
    assert_eq!(go.category, Category::NotChecked, "{go:?}");
    assert!(
        go.error
            .as_deref()
            .unwrap()
            .starts_with("redirected to http://127.0.0.1:1/inside.html: not requested"),
        "{go:?}"
    );
    assert_eq!(
        results[&web.url("a.example", "/index.html")].category,
        Category::Ok
    );
}
