//! The command line as a user runs it: exit codes, located configuration
//! errors, the summary, `results` as a table and as JSON Lines, `check`.

use crate::common::{command, crawl, expect_exit, expect_refusal, last_findings, spinneret, text};
use spinneret_core::model::Category;
use spinneret_tests::fixtures::{maintenance_web, page};
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Site, TestWeb, Web};

const TASK: &str =
    "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n";

#[test]
fn crawl_exits_1_when_something_is_broken_and_prints_a_summary() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    let out = spinneret(&["crawl", setup.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let header = stdout.lines().next().unwrap();
    assert!(
        header.split_whitespace().eq([
            "task",
            "documents",
            "references",
            "broken",
            "moved",
            "blocked",
            "avoided",
            "leafed",
            "not",
            "checked"
        ]),
        "{stdout}"
    );
    let row: Vec<&str> = stdout.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row, vec!["A", "5", "21", "4", "2", "1", "1", "11", "2"]);
    // Then what a person acts on: each link a reader cannot follow, with
    // the page it is on and its text, and where the reports are.
    let a = |path: &str| web.url("a.example", path);
    let after_table: Vec<&str> = stdout.lines().skip(2).collect();
    let expected = [
        String::new(),
        "broken: 4, blocked: 1 (a reader cannot follow the broken links; the servers of the blocked ones refused the robot, 401, 403 or 429: not verified, and no failure):".to_string(),
        format!(
            "broken       404 GET  {} HTTP 404 Not Found",
            a("/docs/faq.html")
        ),
        format!("    from {} (\"FAQ\")", a("/docs/index.html")),
        format!(
            "blocked      403 GET  {} HTTP 403 Forbidden",
            a("/forbidden.html")
        ),
        format!("    from {} (\"Forbidden\")", a("/index.html")),
        format!(
            "broken       302 GET  {} redirect loop: {} -> {} -> {}",
            a("/loop1.html"),
            a("/loop1.html"),
            a("/loop2.html"),
            a("/loop1.html")
        ),
        format!("    from {} (\"A loop\")", a("/index.html")),
        format!(
            "broken       404 GET  {} HTTP 404 Not Found",
            a("/missing.html")
        ),
        format!("    from {} (\"A missing page\")", a("/index.html")),
        format!(
            "broken       404 GET  {} HTTP 404 Not Found",
            web.url("b.example", "/gone.html")
        ),
        format!("    from {} (\"B's gone page\")", a("/index.html")),
        String::new(),
        "reports:".to_string(),
        format!(
            "  A: {}/ (momspider-index, json-report)",
            setup.path().join("reports").join("A").display()
        ),
        String::new(),
    ];
    assert_eq!(after_table[..expected.len()], expected, "{stdout}");
    assert!(
        after_table[expected.len()].starts_with("run 1: "),
        "{stdout}"
    );
    // The plugins' timings are for -v.
    assert!(
        !text(&out.stderr).contains("finished its report"),
        "{}",
        text(&out.stderr)
    );

    // -q: one line; -qq: nothing.
    let out = spinneret(&["-q", "crawl", setup.config_path.to_str().unwrap()]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "run 2: 1 task, 19 requests, 4 broken, 1 blocked; store {}\n",
            setup.path().join("store.db").display()
        )
    );
    let out = spinneret(&["-qq", "crawl", setup.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        (text(&out.stdout), text(&out.stderr)),
        (String::new(), String::new())
    );
}

/// `crawl` and `worker` take `--resolve HOST=ADDRESS` as `check` and
/// `watch` do (one flag of the shared settings), over the configuration's
/// `[resolve]`: a configuration without one reaches the host by it.
#[test]
fn crawl_takes_resolve_as_check_and_watch_do() {
    let web = one_page_web("<a href=\"/index.html\">me</a>");
    let setup = Setup::new(&web, TASK);
    let config = setup.config_path.to_str().unwrap();
    let text = std::fs::read_to_string(config).unwrap();
    let without: String = text.split("[resolve]").next().unwrap().to_string();
    std::fs::write(config, &without).unwrap();
    let out = spinneret(&["-qq", "crawl", config, "--resolve", "a.example=127.0.0.1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text_of(&out));
    assert_eq!(
        web.requests()
            .iter()
            .filter(|r| r.path == "/index.html")
            .count(),
        1
    );
    let help = text_of(&spinneret(&["worker", "--help"]));
    assert!(help.contains("--resolve <HOST=ADDRESS>"), "{help}");
}

/// `results` gives the same verdict as text and as JSON: a run whose only
/// problem is a broken fragment exits 1 either way.
#[test]
fn results_as_json_exit_as_the_text_does_on_a_broken_fragment() {
    let web = one_page_web("<a href=\"/index.html#nowhere\">me</a>");
    let setup = Setup::new(&web, TASK);
    let config = setup.config_path.to_str().unwrap();
    let _ = spinneret(&["-qq", "crawl", config]);
    let text = spinneret(&["results", "-c", config]);
    assert_eq!(text.status.code(), Some(1), "{}", text_of(&text));
    assert!(text_of(&text).contains("#nowhere"), "{}", text_of(&text));
    let json = spinneret(&["results", "-c", config, "--json"]);
    assert_eq!(json.status.code(), Some(1), "{}", text_of(&json));
}

/// A mistyped `--store` or `--cookie-jar` path is said, not made: its
/// directory must be there.
#[test]
fn a_store_or_cookie_jar_in_a_missing_directory_is_refused_not_made() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "<title>t</title>").unwrap();
    let missing = dir.path().join("no/such");
    let site = dir.path().to_str().unwrap();
    for (flag, file) in [("--store", "s.db"), ("--cookie-jar", "jar.txt")] {
        let path = missing.join(file);
        let out = spinneret(&["check", site, flag, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", text_of(&out));
        let said = format!(
            "the directory {} does not exist; create it first (mkdir -p {}) or give another path",
            missing.display(),
            missing.display()
        );
        assert!(text_of(&out).contains(&said), "{flag}: {}", text_of(&out));
        assert!(!missing.exists(), "{flag} made the directory");
    }
}

/// A link that redirects to a missing page is broken, and the listing
/// says where its chain ended: the page to fix or the link to change.
#[test]
fn a_broken_link_behind_a_redirect_says_where_it_ended() {
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/index.html",
                    &page("Fine", None, "<a href=\"/old\">old</a>"),
                )
                .route(
                    "/old",
                    spinneret_tests::server::Route::redirect(301, "/gone.html"),
                ),
        ),
    );
    let setup = Setup::new(&web, TASK);
    let out = spinneret(&["crawl", setup.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out));
    let gone = web.url("a.example", "/gone.html");
    let line = text(&out.stdout)
        .lines()
        .find(|l| l.starts_with("broken") && l.contains("/old"))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(
        line.ends_with(&format!("HTTP 404 Not Found (at {gone}, after 1 redirect)")),
        "{}",
        text(&out.stdout)
    );
}

/// The web of one page, a.example's `/index.html`, with `body`.
fn one_page_web(body: &str) -> TestWeb {
    TestWeb::start(Web::new().site(
        "a.example",
        Site::new().page("/index.html", &page("Fine", None, body)),
    ))
}

fn text_of(out: &std::process::Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

#[test]
fn crawl_exits_0_when_nothing_is_broken() {
    let web = one_page_web("<a href=\"/index.html\">me</a>");
    let setup = Setup::new(&web, TASK);
    let out = spinneret(&["-qq", "crawl", setup.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "-qq prints nothing");
}

#[test]
fn configuration_errors_exit_2_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "concurrency = 8\nbogus = true\n[[task]]\nname = \"x\"\nkind = \"site\"\ntop = \"http://a.example/\"\n").unwrap();
    let out = spinneret(&["crawl", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:2:1: unknown key `bogus`", path.display())),
        "{stderr}"
    );

    std::fs::write(
        &path,
        "[[task]]\nname = \"x\"\nkind = \"site\"\ntop = \"http://a.example/\"\nchanged_days = -1\n",
    )
    .unwrap();
    let out = spinneret(&["crawl", path.to_str().unwrap()]);
    expect_refusal(
        &out,
        &format!("{}:5:16: -1 is out of range", path.display()),
    );

    // A robot without a name would match no robots.txt record, its own
    // `*` one included; a name of two lines is no header value.
    let task = "[[task]]\nname = \"x\"\nkind = \"site\"\ntop = \"http://a.example/\"\n";
    for (agent, why) in [
        ("\"\"", "the user agent is empty"),
        ("\"   \"", "the user agent is empty"),
        ("\"a\\nb\"", "the user agent contains '\\n'"),
    ] {
        std::fs::write(
            &path,
            format!("concurrency = 8\nuser_agent = {agent}\n{task}"),
        )
        .unwrap();
        let out = spinneret(&["crawl", path.to_str().unwrap()]);
        expect_refusal(&out, &format!("{}:2:14: {why}", path.display()));
    }

    let out = spinneret(&["crawl", dir.path().join("absent.toml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read the configuration"));
}

#[test]
fn usage_errors_exit_2_and_help_teaches() {
    assert_eq!(spinneret(&["crawl"]).status.code(), Some(2));
    assert_eq!(spinneret(&["frobnicate"]).status.code(), Some(2));
    let help = spinneret(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = text(&help.stdout);
    for word in ["crawl", "check", "results", "Exit status"] {
        assert!(help.contains(word), "--help mentions {word}");
    }
}

#[test]
fn results_as_json_lines_follow_the_schema() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    spinneret(&["-q", "crawl", setup.config_path.to_str().unwrap()]);
    let config = setup.config_path.to_str().unwrap();

    let out = spinneret(&["results", "-c", config, "--json"]);
    assert_eq!(out.status.code(), Some(1), "broken results exit 1");
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), setup.results().len());
    for l in &lines {
        assert_eq!(l["schema"], "spinneret.result/1");
        for key in [
            "run",
            "url",
            "category",
            "method",
            "status",
            "error",
            "redirects",
            "final_url",
            "checked_at",
            "checked",
            "source",
        ] {
            assert!(l.get(key).is_some(), "{key} missing in {l}");
        }
    }
    let old = lines
        .iter()
        .find(|l| l["url"] == web.url("a.example", "/old.html"))
        .unwrap();
    assert_eq!(old["category"], "moved");
    assert_eq!(old["final_url"], web.url("a.example", "/new.html"));
    assert_eq!(old["redirects"][0]["status"], 301);

    let out = spinneret(&[
        "results",
        "-c",
        config,
        "--json",
        "--task",
        "A",
        "--category",
        "broken",
    ]);
    let broken: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let urls: Vec<&str> = broken.iter().map(|l| l["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        vec![
            web.url("a.example", "/docs/faq.html"),
            web.url("a.example", "/loop1.html"),
            web.url("a.example", "/missing.html"),
            web.url("b.example", "/gone.html"),
        ]
    );
    assert!(
        broken
            .iter()
            .all(|l| l["task"] == "A" && l["role"] == "leaf")
    );
    // Each URL with every document of the run that refers to it.
    let referrers: Vec<&serde_json::Value> = broken.iter().map(|l| &l["referrers"]).collect();
    let from = |path: &str, text: &str| serde_json::json!([{"document": web.url("a.example", path), "text": text}]);
    assert_eq!(
        referrers,
        vec![
            &from("/docs/index.html", "FAQ"),
            &from("/index.html", "A loop"),
            &from("/index.html", "A missing page"),
            &from("/index.html", "B's gone page"),
        ]
    );
    let guide = lines
        .iter()
        .find(|l| l["url"] == web.url("a.example", "/docs/guide.html"))
        .unwrap();
    assert_eq!(
        guide["referrers"],
        serde_json::json!([
            {"document": web.url("a.example", "/about.html"), "text": "Guide"},
            {"document": web.url("a.example", "/docs/index.html"), "text": "Guide"},
        ]),
        "every referring document, in URL order"
    );

    let table = text(&spinneret(&["results", "-c", config, "--category", "moved"]).stdout);
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(
        rows,
        vec![
            format!(
                "moved        200 GET  {} -> {}",
                web.url("a.example", "/chain1.html"),
                web.url("a.example", "/docs/guide.html")
            ),
            format!(
                "    from {} (\"A chain\")",
                web.url("a.example", "/index.html")
            ),
            format!(
                "moved        200 GET  {} -> {}",
                web.url("a.example", "/old.html"),
                web.url("a.example", "/new.html")
            ),
            format!(
                "    from {} (\"An old page\")",
                web.url("a.example", "/index.html")
            ),
        ],
        "{table}"
    );

    // Read by a reader that went away (`| head -0`): still exit 1, quietly.
    let out = with_closed_stdout(&["results", "-c", config]);
    assert_eq!(expect_exit(&out, 1), "");

    let out = spinneret(&["results", "-c", config, "--task", "Nobody"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("has no task `Nobody`; its tasks are: A"));
}

/// The crawl checks every URL attribute the mirror fetches (one table for
/// both): a video's poster and source, a track, a cell's background, an
/// image button, an SVG `<use>` and a quotation's `cite`, each a leaf
/// asked with HEAD; the broken ones are broken. A `cite` that names a
/// source rather than its address is no link.
#[test]
fn check_checks_media_backgrounds_svg_and_citations() {
    let body = "<video src=\"/v.webm\" poster=\"/gone-poster.jpg\"><track src=\"/t.vtt\"></video>\
        <table><tr><td background=\"/gone-cell.gif\">x</td></tr></table>\
        <input type=\"image\" src=\"/b.png\"><svg><use href=\"/s.svg#i\"></use></svg>\
        <blockquote cite=\"/gone-source.html\">q</blockquote><q cite=\"Albert Einstein\">q</q>";
    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .page("/index.html", &page("Media", None, body))
                .page("/v.webm", "v")
                .page("/t.vtt", "t")
                .page("/b.png", "b")
                .page("/s.svg", "s"),
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("check.db");
    let top = web.url("127.0.0.1", "/index.html");
    let out = spinneret(&[
        "check",
        &top,
        "--store",
        store.to_str().unwrap(),
        "--delay",
        "0s",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut asked: Vec<(String, String)> = web
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| (r.method, r.path))
        .collect();
    asked.sort();
    let head = |p: &str| ("HEAD".to_string(), p.to_string());
    let get = |p: &str| ("GET".to_string(), p.to_string());
    // A leaf whose HEAD fails is asked again with GET (a server may
    // answer HEAD wrongly) before it is called broken.
    assert_eq!(
        asked,
        vec![
            get("/gone-cell.gif"),
            get("/gone-poster.jpg"),
            get("/gone-source.html"),
            get("/index.html"),
            // check looks for the site's sitemap (this one has none).
            get("/sitemap.xml"),
            head("/b.png"),
            head("/gone-cell.gif"),
            head("/gone-poster.jpg"),
            head("/gone-source.html"),
            head("/s.svg"),
            head("/t.vtt"),
            head("/v.webm"),
        ]
    );
    let stdout = text(&out.stdout);
    for gone in ["/gone-poster.jpg", "/gone-cell.gif", "/gone-source.html"] {
        assert!(
            stdout.contains(&web.url("127.0.0.1", gone)),
            "{gone}: {stdout}"
        );
    }
}

#[test]
fn check_needs_no_configuration() {
    let web = TestWeb::start(maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("check.db");
    let top = web.url("a.example", "/about.html");
    let out = spinneret(&[
        "check",
        &top,
        "--store",
        store.to_str().unwrap(),
        "--resolve",
        "a.example=127.0.0.1",
        "--resolve",
        "b.example=127.0.0.1",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&top),
        "the task is named after its URL: {stdout}"
    );
    let ua = web.requests()[0].header("user-agent").unwrap().to_string();
    assert!(ua.starts_with("spinneret/"), "{ua}");
    assert_eq!(spinneret(&["check", "gopher://x/"]).status.code(), Some(2));
}

#[test]
fn check_writes_each_sites_reports_apart_and_says_where() {
    let web = TestWeb::start(maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("check.db");
    let (a, b) = (
        web.url("a.example", "/docs/index.html"),
        web.url("b.example", "/page.html"),
    );
    // Reports go beside the store, a directory per top (none under $TMPDIR).
    let out = command()
        .env("TMPDIR", dir.path())
        .args(["check", &a, &b, "--store", store.to_str().unwrap()])
        .args([
            "--resolve",
            "a.example=127.0.0.1",
            "--resolve",
            "b.example=127.0.0.1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let port = web.port();
    let base = dir.path().join("check.db.check-reports");
    let (dir_a, dir_b) = (
        base.join(format!("a.example-{port}_docs_index.html")),
        base.join(format!("b.example-{port}_page.html")),
    );
    let stdout = text(&out.stdout);
    for (top, d) in [(&a, &dir_a), (&b, &dir_b)] {
        assert!(
            stdout.contains(&format!(
                "  {top}: {}/ (momspider-index, json-report)\n",
                d.display()
            )),
            "{stdout}"
        );
        let index = std::fs::read_to_string(d.join("index.html")).unwrap();
        assert!(
            index.contains(&format!("<title>MOMspider index of {top}</title>")),
            "each index its own: {index:.400}"
        );
    }
}

#[test]
fn plugin_subcommands_list_inspect_and_refuse_clearly() {
    let out = spinneret(&["plugin", "builtins"]);
    assert_eq!(out.status.code(), Some(0));
    let listed: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        listed,
        vec![
            "builtin:arxiv search-engine",
            "builtin:csv-report reporter",
            "builtin:duckduckgo search-engine",
            "builtin:github-annotations reporter",
            "builtin:json-report reporter",
            "builtin:junit-report reporter",
            "builtin:maintenance change-detector",
            "builtin:markdown-report reporter",
            "builtin:mediawiki search-engine",
            "builtin:momspider-index reporter",
            "builtin:sarif-report reporter",
            "builtin:searxng search-engine",
            "builtin:sitemap parser",
            "builtin:soft-404 fetch-hook",
            "builtin:trap-guard policy",
            "builtin:websnatcher-index collection-index",
        ]
    );

    let out = spinneret(&["plugin", "inspect", "builtin:momspider-index"]);
    assert_eq!(out.status.code(), Some(0));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("  world:   reporter\n  api:     0.5.0")
            && shown.contains(
                "spinneret:plugin/reporter-api@0.5.0: configure, begin, on-results, on-documents, on-findings, finish"
            ),
        "{shown}"
    );

    let dir = tempfile::tempdir().unwrap();
    let not_wasm = dir.path().join("x.wasm");
    std::fs::write(&not_wasm, "hello").unwrap();
    let out = spinneret(&["plugin", "inspect", not_wasm.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "spinneret: {} is not a WebAssembly component",
            not_wasm.display()
        )),
        "{}",
        text(&out.stderr)
    );

    let out = spinneret(&["plugin", "new", "Bad_Name"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "spinneret: `Bad_Name` cannot name a plugin: use lower-case letters, digits and `-`, starting with a letter\n"
    );
    let out = spinneret(&[
        "plugin",
        "new",
        "ok",
        "--kind",
        "notifier",
        "--dir",
        dir.path().join("ok").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown plugin kind `notifier`"));
    assert!(
        !dir.path().join("ok").exists(),
        "nothing is written for a refused kind"
    );
}

/// Runs spinneret with `args`, its standard output a pipe whose reader
/// has gone away before it writes (as in `spinneret ... | head -0`).
fn with_closed_stdout(args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    command()
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run spinneret")
}

#[test]
fn a_reader_that_goes_away_is_no_error() {
    // It used to panic ("failed printing to stdout: Broken pipe").
    let out = with_closed_stdout(&["plugin", "builtins"]);
    assert_eq!(expect_exit(&out, 0), "");
}

/// The bundled example, as the README has a newcomer run it (in a copy, so
/// the working tree stays clean): the crawl finds the example web's three
/// broken links on purpose, and the WebSnatcher profile collects its pages
/// into a mirror with an index, missing the two it links to on purpose.
#[test]
fn the_bundled_examples_run_as_the_readme_says() {
    let (example, dir) = crate::common::example_copy();
    let copy = dir.path();
    let config = copy.join("spinneret.toml");
    let out = spinneret(&["crawl", config.to_str().unwrap()]);
    expect_exit(&out, 1);
    // The README's quick start shows this output, with `/…/example` for
    // where the example is and the run's time left out.
    let readme = std::fs::read_to_string(example.join("../README.md")).expect("the README");
    let shown = readme
        .split("crawl example/spinneret.toml`):\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README's quick start shows the example's output");
    let real = text(&out.stdout).replace(
        &copy.canonicalize().unwrap().display().to_string(),
        "/…/example",
    );
    let untimed = |t: &str| {
        t.lines()
            .map(|l| match l.find(" requests in ") {
                Some(i) => l[..i].to_string(),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        untimed(shown),
        untimed(&real),
        "README's quick start against:\n{real}"
    );
    let out = spinneret(&[
        "results",
        "-c",
        config.to_str().unwrap(),
        "--category",
        "broken",
        "--json",
    ]);
    expect_exit(&out, 1);
    let web = format!("file://{}/web", copy.canonicalize().unwrap().display());
    let broken: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["url"].as_str().unwrap().replace(&web, "")
        })
        .collect();
    assert_eq!(
        broken,
        ["/docs/faq.html", "/images/missing.png", "/news.html"]
    );
    assert!(copy.join("report/example/index.html").is_file());

    let profile = copy.join("websnatcher.toml");
    let out = spinneret(&["collect", profile.to_str().unwrap()]);
    expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    let missing: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("not collected: "))
        .collect();
    assert_eq!(
        missing,
        [
            format!("not collected: {web}/news.html: HTTP 404"),
            format!("not collected: {web}/images/missing.png: HTTP 404"),
        ],
        "{stdout}"
    );
    let index = std::fs::read_to_string(copy.join("mirror/index.html")).unwrap();
    for category in ["URLs", "Reading"] {
        assert!(index.contains(&format!("<h2>{category}")), "{index}");
    }
    let run = copy.join("mirror/runs/0001");
    assert!(run.join("index.html").is_file());
    assert!(copy.join("mirror/runs/0001.warc.gz").is_file());
}

#[test]
fn check_takes_the_common_settings_as_flags() {
    let web = TestWeb::start(maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("check.db");
    let top = web.url("a.example", "/docs/index.html");
    let check = |extra: &[&str]| {
        command()
            .env("TMPDIR", dir.path())
            .args(["check", &top, "--store", store.to_str().unwrap()])
            .args([
                "--resolve",
                "a.example=127.0.0.1",
                "--resolve",
                "b.example=127.0.0.1",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = check(&["--max-depth", "1", "--delay", "0s", "--timeout", "2s"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let row: Vec<&str> = stdout.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row[1], "3",
        "the top, and the documents one link from it: {stdout}"
    );
    // Two pages one link from the top each link beyond it (/index.html to
    // /about.html, /docs/guide.html to /docs/report.pdf): the note names
    // the least of those in URL order, whichever page came back first.
    assert_eq!(
        stdout.lines().nth(2).unwrap(),
        format!(
            "{top}: reached its max_depth (1 links from the top) at {}; documents beyond it are tested as leaves, not traversed",
            web.url("a.example", "/about.html")
        )
    );
    let out = check(&[]);
    let row: Vec<String> = text(&out.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(row[1], "5", "without the flag, the default depth: {row:?}");
    for (flag, value, why) in [
        (
            "--timeout",
            "0s",
            "--timeout <DURATION>': 0s is out of range; expected from 100ms to 1h",
        ),
        (
            "--delay",
            "2h",
            "--delay <DURATION>': 2h is out of range; expected from 0s to 1h",
        ),
        (
            "--max-depth",
            "0",
            "--max-depth <N>': 0 is out of range; expected a whole number from 1 to 100000",
        ),
        ("--delay", "soon", "`soon` is not a duration"),
    ] {
        let out = check(&[flag, value]);
        expect_refusal(&out, why);
    }
}

#[test]
fn request_tables_send_headers_and_basic_auth_under_their_prefix_only() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(
        &web,
        &format!(
            "{TASK}\n[[request]]\nprefix = \"http://a.example:{{PORT}}/docs/\"\nheaders = {{ \"X-Test\" = \"yes\" }}\nusername = \"checker\"\npassword_env = \"SPINNERET_TEST_PASSWORD\"\n"
        ),
    );
    let config = setup.config_path.to_str().unwrap();
    let out = command()
        .env("SPINNERET_TEST_PASSWORD", "s3cret")
        .args(["-qq", "crawl", config])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let requests = web.requests();
    let (mut under, mut elsewhere) = (0, 0);
    for r in &requests {
        let docs = r.host.starts_with("a.example") && r.path.starts_with("/docs/");
        let sent = (r.header("x-test"), r.header("authorization"));
        if docs {
            under += 1;
            assert_eq!(
                sent,
                (Some("yes"), Some("Basic Y2hlY2tlcjpzM2NyZXQ=")),
                "{} {}",
                r.host,
                r.path
            );
        } else {
            elsewhere += 1;
            assert_eq!(sent, (None, None), "{} {}", r.host, r.path);
        }
    }
    assert!(
        under >= 3 && elsewhere >= 10,
        "{under} under the prefix, {elsewhere} elsewhere"
    );

    // The password is never in the file, and one that cannot be read stops
    // the run before a request, naming the table's line.
    let out = spinneret(&["crawl", config]);
    assert_eq!(out.status.code(), Some(2));
    let line = std::fs::read_to_string(&setup.config_path)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("password_env"))
        .unwrap()
        + 1;
    assert!(
        text(&out.stderr).contains(&format!(
            "spinneret.toml:{line}:16: the password variable SPINNERET_TEST_PASSWORD (password_env) is not set"
        )),
        "{}",
        text(&out.stderr)
    );
    let text_of = std::fs::read_to_string(&setup.config_path)
        .unwrap()
        .replace(
            "password_env = \"SPINNERET_TEST_PASSWORD\"",
            "password = \"s3cret\"",
        );
    std::fs::write(&setup.config_path, text_of).unwrap();
    let out = spinneret(&["crawl", config]);
    expect_refusal(&out, "a password is never read from the configuration");
}

#[test]
fn url_patterns_keep_urls_from_being_requested_and_say_which_pattern() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(
        &web,
        "exclude_regex = ['\\.png$']\n\
         [[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n\
         exclude_regex = ['/docs/', 'b\\.example']\ninclude_regex = ['gone']\n\
         [[task]]\nname = \"D\"\nkind = \"tree\"\ntop = \"http://a.example:{PORT}/docs/index.html\"\n",
    );
    let config = setup.config_path.to_str().unwrap();
    let written = std::fs::read_to_string(&setup.config_path).unwrap();
    let line_of = |needle: &str| {
        let n = written.lines().position(|l| l.contains(needle)).unwrap() + 1;
        format!("{config}:{n}")
    };
    let out = spinneret(&["-qq", "crawl", config, "--exclude", "loop"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    // Nothing excluded was asked for; what another task (D) traverses,
    // and what an include pattern brings back, was.
    let asked: Vec<(String, String)> = web
        .requests()
        .into_iter()
        .map(|r| (r.host, r.path))
        .collect();
    let was_asked = |host: &str, path: &str| asked.iter().any(|(h, p)| h == host && p == path);
    for (host, path) in [
        ("a.example", "/logo.png"),
        ("a.example", "/loop1.html"),
        ("b.example", "/page.html"),
    ] {
        assert!(!was_asked(host, path), "{host}{path} was requested");
    }
    for (host, path) in [
        ("a.example", "/docs/index.html"),
        ("a.example", "/docs/guide.html"),
        ("b.example", "/gone.html"),
    ] {
        assert!(was_asked(host, path), "{host}{path} was not requested");
    }

    let results = setup.results();
    let reason = |host: &str, path: &str| {
        let r = &results[&web.url(host, path)];
        (r.category, r.error.clone().unwrap_or_default())
    };
    assert_eq!(
        reason("a.example", "/logo.png"),
        (
            Category::Avoided,
            format!(
                "excluded by the pattern `\\.png$` (exclude_regex, {})",
                line_of("exclude_regex = ['\\.png$']")
            )
        )
    );
    assert_eq!(
        reason("b.example", "/page.html"),
        (
            Category::Avoided,
            format!(
                "excluded by the pattern `b\\.example` (exclude_regex, {})",
                line_of("exclude_regex = ['/docs/'")
            )
        )
    );
    assert_eq!(
        reason("a.example", "/loop1.html"),
        (
            Category::Avoided,
            "excluded by the pattern `loop` (--exclude)".to_string()
        )
    );
    assert_eq!(reason("b.example", "/gone.html").0, Category::Broken);
    assert_eq!(reason("a.example", "/docs/index.html").0, Category::Ok);

    // A pattern that is not a regular expression is a located error.
    let bad = Setup::new(&web, &format!("{TASK}exclude_regex = ['(unclosed']\n"));
    let out = spinneret(&["crawl", bad.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    let bad_text = std::fs::read_to_string(&bad.config_path).unwrap();
    let line = bad_text
        .lines()
        .position(|l| l.contains("(unclosed"))
        .unwrap()
        + 1;
    assert!(
        stderr.contains(&format!(
            "{}:{line}:18: exclude_regex: `(unclosed` is not a regular expression the crawler can use (unclosed group)",
            bad.config_path.display()
        )),
        "{stderr}"
    );
    let out = spinneret(&["crawl", config, "--include", "a{99999}{99999}"]);
    expect_refusal(
        &out,
        "--include: `a{99999}{99999}` is not a regular expression",
    );
}

#[test]
fn accepted_statuses_count_as_ok() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &format!("accept_status = 403\n{TASK}"));
    let config = setup.config_path.to_str().unwrap();
    let out = spinneret(&["-qq", "crawl", config]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let results = setup.results();
    let forbidden = &results[&web.url("a.example", "/forbidden.html")];
    assert_eq!(
        (
            forbidden.category,
            forbidden.status,
            forbidden.error.as_deref()
        ),
        (Category::Ok, Some(403), None)
    );
    let missing = &results[&web.url("a.example", "/missing.html")];
    assert_eq!(missing.category, Category::Broken);

    // --accept adds to the configuration's.
    let out = spinneret(&["-qq", "crawl", config, "--accept", "404,410..=410"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the redirect loop is still broken"
    );
    let results = setup.results();
    for path in ["/forbidden.html", "/missing.html"] {
        assert_eq!(
            results[&web.url("a.example", path)].category,
            Category::Ok,
            "{path}"
        );
    }
    assert_eq!(
        results[&web.url("b.example", "/gone.html")].category,
        Category::Ok
    );
    assert_eq!(
        results[&web.url("a.example", "/loop1.html")].category,
        Category::Broken
    );

    let bad = Setup::new(&web, &format!("accept_status = [403, \"40x\"]\n{TASK}"));
    let out = spinneret(&["crawl", bad.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let bad_text = std::fs::read_to_string(&bad.config_path).unwrap();
    let line = bad_text.lines().position(|l| l.contains("40x")).unwrap() + 1;
    assert!(
        text(&out.stderr).contains(&format!(
            "{}:{line}:17: `40x` is not a status or a range of statuses",
            bad.config_path.display()
        )),
        "{}",
        text(&out.stderr)
    );
    let out = spinneret(&["crawl", config, "--accept", "500..=400"]);
    expect_refusal(&out, "--accept: `500..=400` is an empty range of statuses");
}

/// `spinneret check` of a local tree under `dir`: run in a directory of
/// `dir`, reports under `dir` (`TMPDIR`), results in `dir/check.db`.
struct LocalCheck<'a> {
    dir: &'a std::path::Path,
    store: std::path::PathBuf,
}

impl LocalCheck<'_> {
    fn new(dir: &std::path::Path) -> LocalCheck<'_> {
        LocalCheck {
            dir,
            store: dir.join("check.db"),
        }
    }

    /// `spinneret ARGS --store STORE`, run in `dir/cwd`.
    fn run(&self, cwd: &str, args: &[&str]) -> std::process::Output {
        command()
            .current_dir(self.dir.join(cwd))
            .env("TMPDIR", self.dir)
            .args(args)
            .args(["--store", self.store.to_str().unwrap()])
            .output()
            .unwrap()
    }

    /// The newest run's results, by URL.
    fn results(&self) -> std::collections::BTreeMap<String, spinneret_core::model::CheckResult> {
        spinneret_tests::harness::results_of(
            &spinneret_store::Store::open(&self.store).unwrap(),
            None,
        )
    }

    /// The newest run's URLs with their categories, in URL order.
    fn categories(&self) -> Vec<(String, Category)> {
        self.results()
            .values()
            .map(|r| (r.url.clone(), r.category))
            .collect()
    }
}

#[test]
fn check_takes_a_local_tree_by_path_and_its_root_for_root_relative_links() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("sub")).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<title>Home</title><a href=\"/p1.html\">one</a> <a href=\"/sub/p2.html\">two</a> <a href=\"/missing.html\">gone</a>",
    )
    .unwrap();
    std::fs::write(site.join("p1.html"), "<title>One</title>").unwrap();
    std::fs::write(
        site.join("sub/p2.html"),
        "<title>Two</title><a href=\"/index.html\">home</a>",
    )
    .unwrap();
    let local = LocalCheck::new(dir.path());
    let check = |extra: &[&str]| local.run(".", &[&["-qq", "check", "site"][..], extra].concat());
    let file = |p: &str| url::Url::from_file_path(site.join(p)).unwrap().to_string();

    let out = check(&["--root-dir", "site"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        local.categories(),
        [
            (file("index.html"), Category::Ok),
            (file("missing.html"), Category::Broken),
            (file("p1.html"), Category::Ok),
            (file("sub/p2.html"), Category::Ok),
        ]
    );

    // Without the root, the checked directory is the root (before, the
    // links pointed at the file system's root: none was opened, and the
    // run passed).
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        local.categories(),
        [
            (file("index.html"), Category::Ok),
            (file("missing.html"), Category::Broken),
            (file("p1.html"), Category::Ok),
            (file("sub/p2.html"), Category::Ok),
        ]
    );

    for (args, why) in [
        (
            &["-qq", "check", "no-such-site"][..],
            "`no-such-site` is neither a URL nor an existing file or directory",
        ),
        (
            &["-qq", "check", "site", "--root-dir", "nowhere"][..],
            "--root-dir: the root directory",
        ),
        (
            &["-qq", "check", "site", "--root-dir", "site/sub"][..],
            "--root-dir: the top of task",
        ),
        (
            &["-qq", "check", "site/sub/"][..],
            "the directory `site/sub/` has no index.html to start from; give one of its pages (check site/sub/PAGE.html)",
        ),
        (
            &["-qq", "check", "file://srv/share/site/"][..],
            "top URL `file://srv/share/site/` names the host `srv`: a local file is file:///PATH (three slashes), e.g. file:///srv/share/site/",
        ),
        (
            &["-qq", "check", "htps://example.org/"][..],
            "check takes http, https or file URLs, or a path (unknown scheme `htps:`; a typo of `https:`?)",
        ),
        (
            &["-qq", "check", "127.0.0.1:9/x.html"][..],
            "is neither a URL nor an existing file or directory; for a server, write http://127.0.0.1:9/x.html",
        ),
        (
            &["-qq", "check", "localhost:8080/"][..],
            "`localhost:8080/` has scheme `localhost`; check takes http, https or file URLs, or a path; for a server, write http://localhost:8080/",
        ),
    ] {
        let out = command()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        expect_refusal(&out, why);
    }
}

/// A path with `..` names the tree it leads to (before, `check ../site/`
/// made a top whose `..` every link dropped, so nothing was checked and the
/// run passed), and a root directory widens a local tree to the deployed
/// site: a link up out of the top's directory is checked as a leaf.
#[test]
fn check_reads_a_path_with_dots_and_checks_links_up_to_the_root_dir() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("docs")).unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    std::fs::write(
        site.join("docs/index.html"),
        "<title>Docs</title><a href=\"a.html\">a</a> <a href=\"../p1.html\">up</a> \
         <a href=\"../missing.html\">gone</a> <a href=\"/p1.html\">root</a> \
         <a href=\"htps://example.org/\">typo</a>",
    )
    .unwrap();
    std::fs::write(site.join("docs/a.html"), "<title>A</title>").unwrap();
    std::fs::write(site.join("p1.html"), "<title>One</title>").unwrap();
    let local = LocalCheck::new(dir.path());
    let check = |args: &[&str]| {
        let out = local.run("work", &[&["-qq", "check"][..], args].concat());
        (out, local.categories())
    };
    let file = |p: &str| url::Url::from_file_path(site.join(p)).unwrap().to_string();

    let root_url = url::Url::from_directory_path(&site).unwrap().to_string();
    let (out, seen) = check(&[
        "../site/docs/",
        "./../site/docs/index.html",
        "--root-dir",
        &root_url,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let store = spinneret_store::Store::open(&local.store).unwrap();
    let run = store.last_run().unwrap().unwrap();
    assert_eq!(
        store.run_tasks(run.id).unwrap().len(),
        1,
        "two paths of one tree are one task"
    );
    assert_eq!(
        seen,
        [
            (file("docs/a.html"), Category::Ok),
            (file("docs/index.html"), Category::Ok),
            (file("missing.html"), Category::Broken),
            (file("p1.html"), Category::Ok),
            ("htps://example.org/".to_string(), Category::Broken),
        ]
    );
    assert_eq!(
        local.results()["htps://example.org/"].error.as_deref(),
        Some("not a valid URL (unknown scheme `htps:`; a typo of `https:`?)"),
        "a mistyped scheme is a broken link, not one of a scheme not checked"
    );

    // Without a root, the checked directory is the root: a root-relative
    // link reads against it, a link up out of it is not opened (it says
    // why), and the tree itself is checked.
    let (out, seen) = check(&["./../site/docs/../docs/"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        seen,
        [
            (file("docs/a.html"), Category::Ok),
            (file("docs/index.html"), Category::Ok),
            (file("docs/p1.html"), Category::Broken),
            (file("missing.html"), Category::NotChecked),
            (file("p1.html"), Category::NotChecked),
            ("htps://example.org/".to_string(), Category::Broken),
        ]
    );
    // The run's closing text says so, and how to have them checked.
    let out = local.run("work", &["check", "../site/docs/"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "\nnot checked: 2 links to local files outside the root directory, such as {} (from {}); \
             they are outside the deployed site too, unless it is deployed from higher up: \
             then give that directory with --root-dir (or root_dir) \
             (spinneret results --store {} --category not_checked lists them)\n",
            file("missing.html"),
            file("docs/index.html"),
            local.store.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(&format!(
            "root-relative links (/page.html) read against {}/, the checked directory; --root-dir DIR to change\n",
            site.join("docs").display()
        )),
        "{stdout}"
    );
}

/// What a check leaves unread is named as the run ends: a page longer
/// than `max_body` is parsed up to it (the links past the cut were never
/// seen), and a top that is not HTML is not parsed at all.
#[test]
fn what_a_check_leaves_unread_is_named_as_the_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let filler = "<p>words</p>\n".repeat(200);
    std::fs::write(
        site.join("index.html"),
        format!(
            "<title>Long</title><a href=\"a.html\">a</a>{filler}<a href=\"late.html\">late</a>"
        ),
    )
    .unwrap();
    std::fs::write(site.join("a.html"), "<title>A</title>").unwrap();
    let local = LocalCheck::new(dir.path());
    let out = local.run(".", &["check", "site", "--max-body", "1KiB"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let index = url::Url::from_file_path(site.join("index.html")).unwrap();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "\nread in part: 1 page longer than max_body (1KiB), such as {index}; \
             links past that point were not seen (raise it with --max-body or max_body)\n"
        )),
        "{stdout}"
    );
    let results = local.results();
    assert_eq!(
        results.len(),
        2,
        "the top and a.html, not late.html: {results:?}"
    );
    // A top that is no page (HTML or Markdown) is read, and said to be
    // left unparsed: the run checked nothing, its own exit status.
    std::fs::write(site.join("notes.txt"), "see a.html").unwrap();
    let out = local.run(".", &["check", "site/notes.txt"]);
    let notes = url::Url::from_file_path(site.join("notes.txt")).unwrap();
    assert!(
        expect_exit(&out, 4).ends_with(&format!(
            "spinneret: nothing checked from {notes}: it is text/plain, not an HTML page: \
             no link in it was followed; exit status 4\n"
        )),
        "{}",
        text(&out.stderr)
    );
    expect_refusal(
        &local.run(".", &["-qq", "check", "site", "--max-body", "0B"]),
        "--max-body",
    );
}

/// A symbolic link out of a local tree is not followed (the tree is what
/// a check may read: a link to `/etc/passwd` through one would have been
/// read and reported ok), with or without a root directory; a directory
/// without an index.html is a link to a missing file.
#[test]
fn a_symbolic_link_out_of_a_local_tree_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("root/site");
    std::fs::create_dir_all(site.join("empty")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("outside/secret.html"), "<title>S</title>").unwrap();
    std::os::unix::fs::symlink("../../outside/secret.html", site.join("esc.html")).unwrap();
    std::os::unix::fs::symlink("../..", site.join("up")).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<title>Home</title><a href=\"esc.html\">e</a> <a href=\"up/outside/secret.html\">u</a> \
         <a href=\"empty/\">nothing</a>",
    )
    .unwrap();
    let local = LocalCheck::new(dir.path());
    let file = |p: &str| url::Url::from_file_path(site.join(p)).unwrap().to_string();
    let secret = std::fs::canonicalize(dir.path().join("outside/secret.html")).unwrap();
    for root in [None, Some("root")] {
        let mut args = vec!["-qq", "check", "root/site"];
        args.extend(root.map(|r| ["--root-dir", r]).into_iter().flatten());
        let out = local.run(".", &args);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let seen: Vec<(String, Category, Option<String>)> = local
            .results()
            .values()
            .map(|r| (r.url.clone(), r.category, r.error.clone()))
            .collect();
        let out_of_tree = Some(format!(
            "a symbolic link out of the tree (to {}): not followed",
            secret.display()
        ));
        assert_eq!(
            seen,
            [
                // A directory is its index.html, which it lacks.
                (
                    file("empty/index.html"),
                    Category::Broken,
                    Some("file not found".to_string())
                ),
                (file("esc.html"), Category::Avoided, out_of_tree.clone()),
                (file("index.html"), Category::Ok, None),
                (
                    file("up/outside/secret.html"),
                    Category::Avoided,
                    out_of_tree
                ),
            ],
            "root {root:?}"
        );
    }
}

/// A symbolic link back up a local tree (`ln -s . loop`) is not a new tree
/// at each turn: a path through it is moved to the file it names (before,
/// `loop/loop/…/c.html` was read some 40 levels deep, each a broken link
/// more).
#[test]
fn a_symbolic_link_loop_in_a_local_tree_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::os::unix::fs::symlink(".", site.join("loop")).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<title>Home</title><a href=\"c.html\">c</a> <a href=\"loop/c.html\">c again</a>",
    )
    .unwrap();
    std::fs::write(
        site.join("c.html"),
        "<title>C</title><a href=\"loop/c.html\">me</a> <a href=\"loop/gone.html\">gone</a>",
    )
    .unwrap();
    let local = LocalCheck::new(dir.path());
    let out = local.run(".", &["-qq", "check", "site"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let file = |p: &str| url::Url::from_file_path(site.join(p)).unwrap().to_string();
    let seen: Vec<(String, Category, Option<String>)> = local
        .results()
        .values()
        .map(|r| (r.url.clone(), r.category, r.final_url.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (file("c.html"), Category::Ok, None),
            (file("index.html"), Category::Ok, None),
            (file("loop/c.html"), Category::Moved, Some(file("c.html"))),
            (file("loop/gone.html"), Category::Broken, None),
        ]
    );
}

#[test]
fn header_flags_go_to_the_tops_sites_only() {
    let web = TestWeb::start(maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let top = web.url("a.example", "/index.html");
    let check = |extra: &[&str]| {
        command()
            .env("TMPDIR", dir.path())
            .args(["-qq", "check", &top, "--delay", "0s"])
            .args(["--store", dir.path().join("c.db").to_str().unwrap()])
            .args([
                "--resolve",
                "a.example=127.0.0.1",
                "--resolve",
                "b.example=127.0.0.1",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = check(&["--header", "X-Test: from the command line"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let requests = web.requests();
    let (mut a, mut b) = (0, 0);
    for r in &requests {
        match r.host.as_str() {
            "a.example" => {
                a += 1;
                assert_eq!(
                    r.header("x-test"),
                    Some("from the command line"),
                    "{}",
                    r.path
                );
            }
            _ => {
                b += 1;
                assert_eq!(r.header("x-test"), None, "{}{}", r.host, r.path);
            }
        }
    }
    assert!(a > 5 && b > 0, "{a} requests to a.example, {b} elsewhere");
    for (bad, why) in [
        (
            "X-Test",
            "--header: `X-Test` is not a header; write \"Name: value\"",
        ),
        ("User-Agent: me", "--header: `User-Agent` is not set here"),
        ("Bad Name: x", "--header: `Bad Name` is not a header name"),
    ] {
        let out = check(&["--header", bad]);
        expect_refusal(&out, why);
    }
}

#[test]
fn a_cookie_jar_is_sent_to_its_sites_and_keeps_what_they_set() {
    use spinneret_tests::server::Route;
    let web = TestWeb::start(
        Web::new()
            .site(
                "a.example",
                Site::new()
                    .route(
                        "/index.html",
                        Route::html(page(
                            "Home",
                            None,
                            "<a href=\"p.html\">p</a> <a href=\"http://b.example:{PORT}/q.html\">q</a>",
                        ))
                        .header("Set-Cookie", "visit=1; Path=/; Max-Age=86400"),
                    )
                    .page("/p.html", &page("P", None, "")),
            )
            .site("b.example", Site::new().page("/q.html", &page("Q", None, ""))),
    );
    let dir = tempfile::tempdir().unwrap();
    let jar = dir.path().join("cookies.txt");
    std::fs::write(
        &jar,
        "# Netscape HTTP Cookie File\na.example\tFALSE\t/\tFALSE\t0\tmember\tyes\n",
    )
    .unwrap();
    let out = command()
        .env("TMPDIR", dir.path())
        .args(["-qq", "check", &web.url("a.example", "/index.html")])
        .args(["--store", dir.path().join("c.db").to_str().unwrap()])
        .args(["--cookie-jar", jar.to_str().unwrap(), "--delay", "0s"])
        .args([
            "--resolve",
            "a.example=127.0.0.1",
            "--resolve",
            "b.example=127.0.0.1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let cookie_of = |host: &str, path: &str| {
        web.requests()
            .into_iter()
            .find(|r| r.host == host && r.path == path && r.method == "GET")
            .and_then(|r| r.header("cookie").map(String::from))
    };
    assert_eq!(
        cookie_of("a.example", "/index.html").as_deref(),
        Some("member=yes")
    );
    let later = cookie_of("a.example", "/p.html").unwrap_or_default();
    assert!(
        later.contains("member=yes") && later.contains("visit=1"),
        "the cookie the top set goes with the next request: {later}"
    );
    assert!(
        web.requests()
            .iter()
            .filter(|r| r.host == "b.example")
            .all(|r| r.header("cookie").is_none()),
        "another site gets none"
    );
    let kept = std::fs::read_to_string(&jar).unwrap();
    let lines: Vec<&str> = kept.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 2, "{kept}");
    assert_eq!(lines[0], "a.example\tFALSE\t/\tFALSE\t0\tmember\tyes");
    assert!(
        lines[1].starts_with("a.example\tFALSE\t/\tFALSE\t") && lines[1].ends_with("\tvisit\t1"),
        "{kept}"
    );

    std::fs::write(&jar, "a.example\tmaybe\n").unwrap();
    let out = command()
        .args([
            "check",
            "http://a.example/",
            "--cookie-jar",
            jar.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    expect_refusal(
        &out,
        &format!(
            "--cookie-jar: {}:1: not a cookie line: it has 2 tab-separated fields",
            jar.display()
        ),
    );
}

#[test]
fn url_patterns_hold_for_redirects_spare_the_top_and_include_alone_keeps_only_its_own() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    let config = setup.config_path.to_str().unwrap();
    let out = spinneret(&[
        "-qq",
        "crawl",
        config,
        "--exclude",
        "guide",
        "--exclude",
        r"index\.html",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let asked = |path: &str| {
        web.requests()
            .iter()
            .any(|r| r.host == "a.example" && r.path == path)
    };
    assert!(
        asked("/index.html"),
        "the top is requested though a pattern matches it"
    );
    assert!(asked("/chain1.html") && asked("/chain2.html"));
    assert!(!asked("/docs/index.html") && !asked("/docs/guide.html"));
    let results = setup.results();
    let chain = &results[&web.url("a.example", "/chain1.html")];
    assert_eq!(
        (chain.category, chain.error.clone().unwrap_or_default()),
        (
            Category::Avoided,
            format!(
                "redirected to {}, excluded by the pattern `guide` (--exclude)",
                web.url("a.example", "/docs/guide.html")
            )
        )
    );

    let out = spinneret(&["-qq", "crawl", config, "--include", "about"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let results = setup.results();
    let requested: Vec<&str> = results
        .values()
        .filter(|r| r.status.is_some())
        .map(|r| r.url.as_str())
        .collect();
    assert_eq!(
        requested,
        [
            web.url("a.example", "/about.html"),
            web.url("a.example", "/index.html")
        ]
    );
    let missing = &results[&web.url("a.example", "/missing.html")];
    assert_eq!(
        missing.error.as_deref(),
        Some("matches no include pattern (`about`, --include)")
    );
}

#[test]
fn a_link_to_a_place_a_page_does_not_have_is_a_broken_fragment() {
    let web = TestWeb::start(
        Web::new()
            .site(
                "a.example",
                Site::new()
                    .page(
                        "/index.html",
                        &page(
                            "Home",
                            None,
                            "<a name=\"local\"></a>\
                             <a href=\"target.html#intro\">intro</a>\
                             <a href=\"target.html#café\">accented</a>\
                             <a href=\"target.html#missing\">missing</a>\
                             <a href=\"target.html#top\">top</a>\
                             <a href=\"target.html#/route\">route</a>\
                             <a href=\"#local\">here</a> <a href=\"#nowhere\">nowhere</a>\
                             <img src=\"target.html#not-a-place\" alt=\"img\">\
                             <a href=\"http://b.example:{PORT}/out.html#zzz\">out</a>",
                        ),
                    )
                    .page(
                        "/target.html",
                        &page(
                            "Target",
                            None,
                            "<h2 id=\"intro\">I</h2><p id=\"café\">C</p>",
                        ),
                    ),
            )
            .site(
                "b.example",
                Site::new().page("/out.html", &page("Out", None, "")),
            ),
    );
    let setup = Setup::new(&web, TASK);
    let out = command()
        .args(["crawl"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    // A broken fragment fails the run as a broken link does.
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let home = web.url("a.example", "/index.html");
    let target = web.url("a.example", "/target.html");
    let found: Vec<(String, Option<String>, String)> = last_findings(&setup, "broken-fragment")
        .into_iter()
        .map(|f| (f.url, f.referrer, f.message))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                format!("{target}#missing"),
                Some(home.clone()),
                format!("no element with id or name \"missing\" in {target}")
            ),
            (
                format!("{home}#nowhere"),
                Some(home.clone()),
                format!("no element with id or name \"nowhere\" in {home}")
            ),
        ],
        "#top, routes, an image's fragment, a page not parsed (b.example's, a leaf) and \
         the ids and names that are there are not broken fragments"
    );
    // The run's closing list says so, with the page to fix.
    assert!(
        stdout.contains(&format!(
            "broken fragments: 2 (the page is there, the place in it is not):\n\
             {home}#nowhere\n    no element with id or name \"nowhere\" in {home}\n    from {home}\n\
             {target}#missing\n    no element with id or name \"missing\" in {target}\n    from {home}\n"
        )),
        "{stdout}"
    );
    // `results` lists them after the URLs, and exits 1 for them too.
    let config = setup.config_path.to_str().unwrap();
    let out = spinneret(&["results", "-c", config]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!(
            "\nbroken fragments: 2 (the page is there, the place in it is not):\n\
             {home}#nowhere\n"
        )),
        "{}",
        text(&out.stdout)
    );
    expect_refusal(
        &spinneret(&["results", "-c", config, "--category", "broken-fragment"]),
        "(broken fragments are listed at the end of `spinneret results` without --category)",
    );
    // `-q`'s one line counts them: they are why it exits 1.
    let out = command()
        .args(["-q", "crawl"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert!(
        line.contains(" blocked, 2 broken fragments; store "),
        "{line}"
    );
    // The maintenance index has their table.
    let index = std::fs::read_to_string(setup.path().join("reports/A/index.html")).unwrap();
    assert!(index.contains("Broken fragments"), "the index's table");

    // Turned off, they are not looked for.
    let off = Setup::new(&web, &format!("check_fragments = false\n{TASK}"));
    let out = command()
        .args(["-qq", "crawl"])
        .arg(&off.config_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(last_findings(&off, "broken-fragment").is_empty());
}

#[test]
fn a_store_from_before_fragments_were_kept_reads_its_documents_again() {
    use spinneret_tests::server::Route;
    let home = page(
        "Home",
        None,
        "<a href=\"target.html#intro\">ok</a><a href=\"target.html#gone\">missing</a>",
    );
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .route("/index.html", Route::html(home).etag("\"h1\""))
                .route(
                    "/target.html",
                    Route::html(page("Target", None, "<h2 id=\"intro\">I</h2>")).etag("\"t1\""),
                ),
        ),
    );
    let setup = Setup::new(&web, TASK);
    expect_exit(&crawl(&setup, &[]), 1);
    assert_eq!(last_findings(&setup, "broken-fragment").len(), 1);
    // The store as an older spinneret left it: its parses have no places
    // and no fragments (schema 9's columns).
    let db = rusqlite::Connection::open(setup.path().join("store.db")).unwrap();
    db.execute("UPDATE documents SET anchors = NULL, fragments = NULL", [])
        .unwrap();
    drop(db);
    web.clear_log();
    expect_exit(&crawl(&setup, &[]), 1);
    let found: Vec<String> = last_findings(&setup, "broken-fragment")
        .into_iter()
        .map(|f| f.url)
        .collect();
    assert_eq!(found, vec![web.url("a.example", "/target.html#gone")]);
    // Both documents were fetched in full, not revalidated into a 304
    // that would keep the old parse.
    let conditional: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.header("if-none-match").is_some())
        .map(|r| r.path)
        .collect();
    assert_eq!(conditional, Vec::<String>::new());
    // From then on they are revalidated again, and their fragments still checked.
    web.clear_log();
    expect_exit(&crawl(&setup, &[]), 1);
    assert!(
        web.requests()
            .iter()
            .filter(|r| r.method == "GET")
            .all(|r| r.header("if-none-match").is_some()),
        "the third run revalidates"
    );
    assert_eq!(last_findings(&setup, "broken-fragment").len(), 1);
}

/// A store given as a URL is refused, at its line or as the flag's value:
/// before, `store = "postgres://…"` made a SQLite store in a directory
/// called `postgres:` and crawled into it.
#[test]
fn a_store_given_as_a_url_is_refused_and_nothing_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    // A PostgreSQL store no server answers for: said, and no file is made
    // (`postgres:` once made an SQLite file in a directory of that name).
    std::fs::write(
        &config,
        "# a crawl\nstore = \"postgres://spider@127.0.0.1:9/spinneret\"\n\
         [[task]]\nname = \"a\"\nkind = \"site\"\ntop = \"http://127.0.0.1:9/\"\n",
    )
    .unwrap();
    let out = command()
        .current_dir(dir.path())
        .args(["crawl", "c.toml"])
        .output()
        .unwrap();
    let stderr = expect_refusal(
        &out,
        "cannot lock the store postgres://spider@127.0.0.1:9/spinneret for a crawl: store: error connecting to server: ",
    );
    assert!(stderr.contains("onnection refused"), "{stderr}");
    let out = spinneret(&["search", "--store", "sqlite:///tmp/x.db", "worm"]);
    expect_refusal(
        &out,
        "the store is a file path, not a `sqlite://` URL; e.g. \"spinneret.db\"",
    );
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(made, ["c.toml"]);
}

/// A password file that never ends (`/dev/zero`, named by mistake or by
/// someone who may edit the configuration) is read to 4 KiB and refused
/// at once, for a `[[request]]` and for the store: it grew the process
/// to 15 GB before.
#[test]
fn an_endless_password_file_is_refused_after_one_bounded_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pw.toml");
    let task = "[[task]]\nname = \"x\"\nkind = \"site\"\ntop = \"http://a.example/\"\n";
    let why = "its first line is longer than 4096 bytes; a password file holds the password alone on its first line";
    std::fs::write(
        &path,
        format!("[[request]]\nprefix = \"http://a.example/\"\nusername = \"me\"\npassword_file = \"/dev/zero\"\n\n{task}"),
    )
    .unwrap();
    let said = expect_refusal(&spinneret(&["crawl", path.to_str().unwrap()]), why);
    assert!(
        said.contains(&format!(
            "{}:4:17: cannot read the password file /dev/zero",
            path.display()
        )),
        "{said}"
    );
    std::fs::write(
        &path,
        format!("store = \"postgres://me@127.0.0.1:9/spin\"\nstore_password_file = \"/dev/zero\"\n{task}"),
    )
    .unwrap();
    let out = spinneret(&["crawl", path.to_str().unwrap()]);
    let said = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(said.contains(why), "{said}");
}

/// A configuration error found in a file the configuration names (an
/// avoid file or a sites file that cannot be read) stops the run before
/// the store is touched: no store made, no run left `running`.
#[test]
fn a_bad_avoid_or_sites_file_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    let task = "[[task]]\nname = \"x\"\nkind = \"site\"\ntop = \"http://a.example/\"\n";
    std::fs::write(
        dir.path().join("avoid.txt"),
        "Avoid http://a.example/x not-a-date\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("sites.txt"), "not a sites line\n").unwrap();
    for setting in [
        "avoid_files = [\"avoid.txt\"]",
        "system_sites = [\"sites.txt\"]",
        "avoid_files = [\"missing.txt\"]",
        "avoid_files = [\"/dev/zero\"]",
    ] {
        std::fs::write(&path, format!("store = \"s.db\"\n{setting}\n{task}")).unwrap();
        let out = spinneret(&["crawl", path.to_str().unwrap()]);
        let said = expect_exit(&out, 2);
        // /dev/zero is said to be what it is, not to be missing.
        assert!(
            !setting.contains("/dev/zero") || !said.contains("does not exist"),
            "{said}"
        );
        assert!(
            !dir.path().join("s.db").exists(),
            "{setting}: the store was made ({said})"
        );
        assert!(
            !dir.path().join("s.db.lock").exists(),
            "{setting}: a lock was left"
        );
    }
}

/// A URL of a megabyte is shown cut, with how much is left out, in the
/// crawl's closing list and in `results`: before, it was printed twice in
/// full (a line of 2 MB); `results --json` keeps it whole.
#[test]
fn a_huge_url_is_shown_cut_in_the_summary() {
    let long = format!("/{}", "a".repeat(1 << 20));
    let web = TestWeb::start(Web::new().site(
        "a.example",
        Site::new().page(
            "/index.html",
            &page("Home", Some("T"), &format!("<a href=\"{long}\">long</a>")),
        ),
    ));
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"T\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n",
    );
    let out = command()
        .arg("crawl")
        .arg(&setup.config_path)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let longest = stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 1000, "a line of {longest} bytes");
    let url = web.url("a.example", &long);
    let shown = &url[..300];
    assert!(
        stdout.contains(&format!("{shown}… ({} more bytes)", url.len() - 300)),
        "{}",
        &stdout[..stdout.len().min(2000)]
    );
    let out = command()
        .args(["results", "--json", "-c"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    assert!(text(&out.stdout).contains(&url));
}
