//! What `spinneret check` is given to check, as a lychee user gives it:
//! Markdown files (a README), quoted globs, `-` (standard input) and
//! `--files-from`; how far it goes on a site (`--tree`); and the pages a
//! site lists in its sitemaps that nothing links to (`--no-sitemap`).

use crate::common::{command, text};
use spinneret_core::model::Category;
use spinneret_tests::fixtures::page;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

/// A `check` in its own directory, with its store there.
struct Check {
    dir: tempfile::TempDir,
}

impl Check {
    fn new() -> Check {
        Check {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `files` (path, content) under the directory.
    fn files(&self, files: &[(&str, &str)]) {
        for (path, content) in files {
            let path = self.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
    }

    /// `spinneret check ARGS --store STORE --from …`, run in the
    /// directory, with `stdin` on standard input.
    fn run_with(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = command()
            .current_dir(self.path())
            .env("TMPDIR", self.path())
            .arg("check")
            .args(args)
            .args(["--store", self.path().join("check.db").to_str().unwrap()])
            .args(["--from", "tests@example.org", "--delay", "0s"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, "")
    }

    /// The newest run's results: each URL (a local one relative to the
    /// directory, as `./PATH`) with its category and, for the run's one
    /// task, its role.
    fn results(&self) -> Vec<(String, Category, String)> {
        let store = spinneret_store::Store::open(&self.path().join("check.db")).unwrap();
        let run = store.last_run().unwrap().unwrap();
        let tasks = store.run_tasks(run.id).unwrap();
        assert_eq!(tasks.len(), 1, "one task");
        let prefix = url::Url::from_directory_path(self.path().canonicalize().unwrap())
            .unwrap()
            .to_string();
        let mut rows: Vec<(String, Category, String)> = store
            .run_results(run.id, Some(tasks[0].id))
            .unwrap()
            .into_iter()
            .map(|(r, role)| {
                let url = match r.url.strip_prefix(&prefix) {
                    Some(rest) => format!("./{rest}"),
                    None => r.url.clone(),
                };
                (url, r.category, role.unwrap_or_default())
            })
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows
    }

    /// The tasks of the newest run, by top.
    fn task_tops(&self) -> Vec<String> {
        let store = spinneret_store::Store::open(&self.path().join("check.db")).unwrap();
        let run = store.last_run().unwrap().unwrap();
        store
            .run_tasks(run.id)
            .unwrap()
            .into_iter()
            .map(|t| t.top_url)
            .collect()
    }
}

fn row(url: &str, category: Category, role: &str) -> (String, Category, String) {
    (url.to_string(), category, role.to_string())
}

/// Before, a Markdown top was "not parsed: … text/markdown" and the run
/// exited 4 with nothing checked: now its inline, reference, autolink,
/// image and bare links are checked (not those in code), relative ones
/// against its directory and root-relative ones against the checked
/// directory, its headings are places for fragments, and each link is
/// placed at its line and column.
#[test]
fn a_readme_is_checked_for_its_markdown_links() {
    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .page("/ok.html", &page("Ok", None, ""))
                .route("/gone.html", Route::status(404)),
        ),
    );
    let ok = web.url("127.0.0.1", "/ok.html");
    let gone = web.url("127.0.0.1", "/gone.html");
    let check = Check::new();
    check.files(&[
        (
            "README.md",
            &format!(
                "# Project\n\
                 \n\
                 See the [guide](docs/guide.md#install) and [contributing][c].\n\
                 ![logo](img/logo.png) <{ok}> and {gone}.\n\
                 \n\
                 ```\n\
                 https://example.invalid/in-code\n\
                 ```\n\
                 [Nowhere](#nowhere), [Project](#project) and `https://example.invalid/code`\n\
                 \n\
                 [c]: /CONTRIBUTING.md\n"
            ),
        ),
        (
            "docs/guide.md",
            "# Guide\n\n## Install\n\n[back](../README.md) [gone](../missing.md)\n",
        ),
        ("CONTRIBUTING.md", "# Contributing\n"),
    ]);
    let out = check.run(&["README.md", "--format", "github"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row("./CONTRIBUTING.md", Category::Ok, "document"),
            row("./README.md", Category::Ok, "document"),
            row("./docs/guide.md", Category::Ok, "document"),
            row("./img/logo.png", Category::Broken, "leaf"),
            row("./missing.md", Category::Broken, "leaf"),
            row(&gone, Category::Broken, "leaf"),
            row(&ok, Category::Ok, "leaf"),
        ]
    );
    let annotations = text(&out.stdout);
    let lines: Vec<&str> = annotations.lines().collect();
    assert_eq!(
        lines.len(),
        4,
        "the image, the 404, the missing file and the fragment: {annotations}"
    );
    for place in [
        "::error file=README.md,line=4,col=9,",
        &format!(
            "::error file=README.md,line=4,col={},",
            9 + "img/logo.png) <".len() + ok.len() + "> and ".len()
        ),
        "::error file=docs/guide.md,line=5,col=29,",
        "::error file=README.md,line=9,col=11,title=Broken fragment::",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(place)),
            "{place} in {annotations}"
        );
    }
    // Nothing in code was requested: no result names it.
    assert!(
        !check
            .results()
            .iter()
            .any(|r| r.0.contains("example.invalid"))
    );
}

/// A Markdown page a server sends as `text/markdown` is read the same way.
#[test]
fn a_markdown_page_served_over_http_is_read_for_its_links() {
    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .route(
                    "/notes.md",
                    Route::file(
                        "text/markdown; charset=utf-8",
                        "# Notes\n[a](a.html) [gone](/gone.html)\n",
                    ),
                )
                .page("/a.html", &page("A", None, ""))
                .route("/gone.html", Route::status(404)),
        ),
    );
    let check = Check::new();
    let out = check.run(&[&web.url("127.0.0.1", "/notes.md"), "--no-sitemap"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row(&web.url("127.0.0.1", "/a.html"), Category::Ok, "document"),
            row(
                &web.url("127.0.0.1", "/gone.html"),
                Category::Broken,
                "leaf"
            ),
            row(&web.url("127.0.0.1", "/notes.md"), Category::Ok, "document"),
        ]
    );
}

/// Three pages no page links to, each with a broken link: a quoted glob
/// is expanded by spinneret and its files are one task (one row, one
/// report), each file read as a top.
#[test]
fn a_quoted_glob_is_one_task_of_the_files_it_matches() {
    let check = Check::new();
    check.files(&[
        (
            "site/index.html",
            "<title>Home</title><a href=\"gone1.html\">1</a>",
        ),
        (
            "site/a/x.html",
            "<title>X</title><a href=\"/gone2.html\">2</a>",
        ),
        ("site/b/y.md", "# Y\n[3](gone3.md)\n"),
        ("site/.hidden/z.html", "<a href=\"gone4.html\">4</a>"),
    ]);
    let out = check.run(&["site/**/*.*"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row("./site/a/x.html", Category::Ok, "document"),
            row("./site/b/gone3.md", Category::Broken, "leaf"),
            row("./site/b/y.md", Category::Ok, "document"),
            row("./site/gone1.html", Category::Broken, "leaf"),
            // Root-relative: against the directory holding the files.
            row("./site/gone2.html", Category::Broken, "leaf"),
            row("./site/index.html", Category::Ok, "document"),
        ],
        "hidden files need a literal dot"
    );
    assert_eq!(check.task_tops().len(), 1);
    assert!(
        check.task_tops()[0].ends_with("/site/index.html"),
        "the top nearest the root"
    );
    // A glob that matches nothing says so, from where.
    let out = check.run(&["site/**/*.pdf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`site/**/*.pdf` matches no file"),
        "{}",
        text(&out.stderr)
    );
}

/// `-` reads inputs from standard input and `--files-from` from a file,
/// a line each, `#` comments and blank lines ignored: the local files one
/// task, each URL a task of its own.
#[test]
fn inputs_come_from_standard_input_and_from_a_file() {
    let web =
        TestWeb::start(Web::new().site("127.0.0.1", Site::new().page("/", &page("Web", None, ""))));
    let check = Check::new();
    check.files(&[
        ("docs/a.md", "[b](b.md)\n"),
        ("docs/b.md", "[gone](gone.md)\n"),
        ("docs/c.html", "<a href=\"a.md\">a</a>"),
    ]);
    let list = "# the docs\n\ndocs/c.html\n  docs/b.md  \n";
    let out = check.run_with(&["-"], list);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row("./docs/a.md", Category::Ok, "document"),
            row("./docs/b.md", Category::Ok, "document"),
            row("./docs/c.html", Category::Ok, "document"),
            row("./docs/gone.md", Category::Broken, "leaf"),
        ]
    );
    // The same from a file, and a URL beside them: two tasks.
    std::fs::write(
        check.path().join("inputs.txt"),
        format!("{list}{}\n", web.url("127.0.0.1", "/")),
    )
    .unwrap();
    let out = check.run(&["--files-from", "inputs.txt", "--no-sitemap"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let tops = check.task_tops();
    assert_eq!(tops.len(), 2, "{tops:?}");
    assert!(tops[0].ends_with("/docs/c.html"), "{tops:?}");
    assert_eq!(tops[1], web.url("127.0.0.1", "/"));
    // A line that is no input says where it is.
    std::fs::write(check.path().join("bad.txt"), "docs/a.md\nnot-there.md\n").unwrap();
    let out = check.run(&["--files-from", "bad.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "bad.txt, line 2: `not-there.md` is neither a URL nor an existing file or directory"
        ),
        "{}",
        text(&out.stderr)
    );
    // An empty list is not a silent success.
    let out = check.run_with(&["-"], "# nothing\n\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nothing to check"),
        "{}",
        text(&out.stderr)
    );
}

fn docs_and_blog() -> Web {
    Web::new().site(
        "127.0.0.1",
        Site::new()
            .page(
                "/docs/",
                &page(
                    "Docs",
                    None,
                    "<a href=\"/docs/a.html\">a</a> <a href=\"/blog/post.html\">post</a>",
                ),
            )
            .page("/docs/a.html", &page("A", None, ""))
            .page(
                "/blog/post.html",
                &page("Post", None, "<a href=\"/blog/gone.html\">gone</a>"),
            )
            .route("/blog/gone.html", Route::status(404)),
    )
}

/// `check https://host/docs/` walks the whole site; with `--tree`, only
/// what lies below /docs/: a page elsewhere is tested, not traversed.
#[test]
fn tree_keeps_the_check_below_the_tops_directory() {
    let web = TestWeb::start(docs_and_blog());
    let top = web.url("127.0.0.1", "/docs/");
    let check = Check::new();
    let out = check.run(&[&top, "--no-sitemap"]);
    assert_eq!(out.status.code(), Some(1), "the blog's broken link");
    let out = check.run(&[&top, "--tree", "--no-sitemap"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row(
                &web.url("127.0.0.1", "/blog/post.html"),
                Category::Ok,
                "leaf"
            ),
            row(&web.url("127.0.0.1", "/docs/"), Category::Ok, "document"),
            row(
                &web.url("127.0.0.1", "/docs/a.html"),
                Category::Ok,
                "document"
            ),
        ]
    );
    // The help says which `check` does by default, and what --tree does.
    let help = text(&command().args(["check", "--help"]).output().unwrap().stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Each URL becomes a `site` task"), "{help}");
    assert!(
        help.contains(
            "with --tree, only what lies below its directory (https://host/docs/) is traversed"
        ),
        "{help}"
    );
}

/// A site whose orphan page (linked from nowhere) is listed in a sitemap.
fn orphan_site(robots: Option<&str>, sitemap_path: &str) -> Web {
    let mut site = Site::new()
        .page("/", &page("Home", None, "<a href=\"/a.html\">a</a>"))
        .page("/a.html", &page("A", None, ""))
        .page(
            "/orphan.html",
            &page("Orphan", None, "<a href=\"/orphan-gone.html\">gone</a>"),
        )
        .route("/orphan-gone.html", Route::status(404))
        .route(
            sitemap_path,
            Route::file(
                "application/xml",
                "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
                 <url><loc>/a.html</loc></url><url><loc>/orphan.html</loc></url>\n\
                 <url><loc>https://elsewhere.example/x.html</loc></url></urlset>",
            ),
        );
    if let Some(r) = robots {
        site = site.robots(r);
    }
    Web::new().site("127.0.0.1", site)
}

fn requested(web: &TestWeb, path: &str) -> usize {
    web.requests().iter().filter(|r| r.path == path).count()
}

/// The orphan page of robots.txt's `Sitemap:` line is a document of the
/// task, and its broken link is found; the sitemap itself is no link of
/// the site (no result), and a page elsewhere it lists is not checked.
#[test]
fn an_orphan_page_in_the_sitemap_robots_txt_names_is_checked() {
    let web = TestWeb::start(orphan_site(
        Some("User-agent: *\nDisallow:\nSitemap: /maps/pages.xml\n"),
        "/maps/pages.xml",
    ));
    let top = web.url("127.0.0.1", "/");
    let check = Check::new();
    let out = check.run(&[&top]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row(&top, Category::Ok, "document"),
            row(&web.url("127.0.0.1", "/a.html"), Category::Ok, "document"),
            row(
                &web.url("127.0.0.1", "/orphan-gone.html"),
                Category::Broken,
                "leaf"
            ),
            row(
                &web.url("127.0.0.1", "/orphan.html"),
                Category::Ok,
                "document"
            ),
        ]
    );
    assert_eq!(requested(&web, "/maps/pages.xml"), 1);
    assert_eq!(
        requested(&web, "/robots.txt"),
        1,
        "read once, by the crawl or the sitemaps"
    );
    assert_eq!(
        requested(&web, "/sitemap.xml"),
        1,
        "looked for too: missing, silently"
    );
    assert!(
        !text(&out.stderr).contains("/sitemap.xml"),
        "{}",
        text(&out.stderr)
    );
    // --no-sitemap: only what links reach.
    web.clear_log();
    let out = check.run(&[&top, "--no-sitemap"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(requested(&web, "/orphan.html"), 0);
    assert_eq!(requested(&web, "/maps/pages.xml"), 0);
    assert_eq!(requested(&web, "/sitemap.xml"), 0);
}

/// `/sitemap.xml` is read without robots.txt naming it.
#[test]
fn an_orphan_page_in_sitemap_xml_is_checked() {
    let web = TestWeb::start(orphan_site(None, "/sitemap.xml"));
    let top = web.url("127.0.0.1", "/");
    let check = Check::new();
    let out = check.run(&[&top]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        check.results(),
        [
            row(&top, Category::Ok, "document"),
            row(&web.url("127.0.0.1", "/a.html"), Category::Ok, "document"),
            row(
                &web.url("127.0.0.1", "/orphan-gone.html"),
                Category::Broken,
                "leaf"
            ),
            row(
                &web.url("127.0.0.1", "/orphan.html"),
                Category::Ok,
                "document"
            ),
        ]
    );
}

/// A site without a sitemap: nothing said, nothing counted. A sitemap
/// robots.txt names that is missing is said once, and is no broken link.
#[test]
fn a_missing_sitemap_is_no_broken_link() {
    let web = TestWeb::start(
        Web::new().site("127.0.0.1", Site::new().page("/", &page("Home", None, ""))),
    );
    let top = web.url("127.0.0.1", "/");
    let check = Check::new();
    let out = check.run(&[&top]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.to_lowercase().contains("sitemap"), "{stderr}");
    assert_eq!(check.results(), [row(&top, Category::Ok, "document")]);
    assert_eq!(requested(&web, "/sitemap.xml"), 1);

    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .page("/", &page("Home", None, ""))
                .robots("User-agent: *\nDisallow:\n\nSitemap: /maps/gone.xml\n"),
        ),
    );
    let top = web.url("127.0.0.1", "/");
    let out = check.run(&[&top]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let sitemap = web.url("127.0.0.1", "/maps/gone.xml");
    assert!(
        stderr.contains(&format!(
            "the sitemap {sitemap} that robots.txt of 127.0.0.1:{} names answered 404: the pages it lists were not looked for",
            web.port()
        )),
        "{stderr}"
    );
    assert_eq!(check.results(), [row(&top, Category::Ok, "document")]);
}
