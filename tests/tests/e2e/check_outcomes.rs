//! `spinneret check` as a newcomer meets it: the exit status of every
//! outcome (nothing checked is never success), a local tree's root, one
//! document per page, and what each `--format` writes to standard output.

use crate::common::{command, text};
use crate::formats::python;
use spinneret_core::model::Category;
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::path::{Path, PathBuf};
use std::process::Output;

/// `spinneret ARGS --store DIR/check.db`, run in `DIR/cwd` with `TMPDIR`
/// at `DIR/tmp` (where `check` once put its reports).
fn check_in(dir: &Path, cwd: &str, args: &[&str]) -> Output {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    command()
        .current_dir(dir.join(cwd))
        .env("TMPDIR", &tmp)
        .args(args)
        .args(["--store", dir.join("check.db").to_str().unwrap()])
        .output()
        .unwrap()
}

/// The newest run of `DIR/check.db`: each URL with its category, in URL
/// order.
fn categories(dir: &Path) -> Vec<(String, Category)> {
    let store = spinneret_store::Store::open(&dir.join("check.db")).unwrap();
    spinneret_tests::harness::results_of(&store, None)
        .values()
        .map(|r| (r.url.clone(), r.category))
        .collect()
}

/// `file:` URL of `path` under `root`.
fn file(root: &Path, path: &str) -> String {
    url::Url::from_file_path(root.join(path))
        .unwrap()
        .to_string()
}

/// Write `files` (path, content) under `root`, making directories.
fn tree(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// The line a check of a local tree without `--root-dir` ends with.
fn root_line(root: &Path) -> String {
    format!(
        "root-relative links (/page.html) read against {}/, the checked directory; --root-dir DIR to change\n",
        root.display()
    )
}

/// Before, every root-relative link of a local tree checked without
/// `--root-dir` was "not checked" and the run passed with 0 broken; `-q`
/// hid even the hint.
#[test]
fn a_local_trees_root_relative_links_read_against_the_checked_directory() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    tree(
        &site,
        &[
            (
                "index.html",
                "<title>Home</title><a href=\"/p1.html\">one</a> <a href=\"/sub/p2.html\">two</a> \
                 <a href=\"/missing.html\">gone</a>",
            ),
            ("p1.html", "<title>One</title>"),
            (
                "sub/p2.html",
                "<title>Two</title><a href=\"/index.html\">home</a>",
            ),
        ],
    );
    let out = check_in(
        dir.path(),
        ".",
        &["check", "site", "--from", "t@example.org"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        categories(dir.path()),
        [
            (file(&site, "index.html"), Category::Ok),
            (file(&site, "missing.html"), Category::Broken),
            (file(&site, "p1.html"), Category::Ok),
            (file(&site, "sub/p2.html"), Category::Ok),
        ]
    );
    let stdout = text(&out.stdout);
    assert!(stdout.ends_with(&root_line(&site)), "{stdout}");

    // -q: the one-line summary, and the root that decided it.
    let out = check_in(
        dir.path(),
        ".",
        &["-q", "check", "site", "--from", "t@example.org"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("run 2: 1 task, ")
            && lines[0].contains(", 1 broken, 0 blocked; store "),
        "{stdout}"
    );
    assert_eq!(format!("{}\n", lines[1]), root_line(&site));
    // Nothing under the temporary directory: the reports are the store's.
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
        0
    );
}

#[test]
fn root_dir_still_stands_over_the_checked_directory_and_trees_side_by_side_need_it() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    tree(
        &site,
        &[
            (
                "docs/index.html",
                "<title>Docs</title><a href=\"/p1.html\">root</a>",
            ),
            ("p1.html", "<title>One</title>"),
        ],
    );
    // The checked directory is docs/: /p1.html is docs/p1.html, missing.
    let out = check_in(
        dir.path(),
        ".",
        &["check", "site/docs", "--from", "t@example.org"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        categories(dir.path()),
        [
            (file(&site, "docs/index.html"), Category::Ok),
            (file(&site, "docs/p1.html"), Category::Broken),
        ]
    );
    assert!(text(&out.stdout).ends_with(&root_line(&site.join("docs"))));
    // The site is deployed from site/: said, and no root line.
    let out = check_in(
        dir.path(),
        ".",
        &[
            "check",
            "site/docs",
            "--root-dir",
            "site",
            "--from",
            "t@example.org",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        categories(dir.path()),
        [
            (file(&site, "docs/index.html"), Category::Ok),
            (file(&site, "p1.html"), Category::Ok),
        ]
    );
    assert!(
        !text(&out.stdout).contains("root-relative links"),
        "{}",
        text(&out.stdout)
    );
    // Two trees side by side have no one checked directory.
    tree(
        dir.path(),
        &[
            ("a/index.html", "<title>A</title>"),
            ("b/index.html", "<title>B</title>"),
        ],
    );
    let out = check_in(dir.path(), ".", &["-qq", "check", "a", "b"]);
    crate::common::expect_refusal(
        &out,
        &format!(
            "the local trees in {} and {} lie side by side: root-relative links (/page.html) need the one directory they are deployed from; give it with --root-dir DIR, or check each tree on its own",
            dir.path().join("a").display(),
            dir.path().join("b").display()
        ),
    );
}

/// A staging site behind `Disallow: /`, linking to a page of its own, a
/// missing one and a page of another site that forbids robots too.
fn staging_web() -> TestWeb {
    TestWeb::start(
        Web::new()
            .site(
                "staging.example",
                Site::new()
                    .robots("User-agent: *\nDisallow: /\n")
                    .page(
                        "/index.html",
                        &page(
                            "Staging",
                            None,
                            "<a href=\"/a.html\">a</a> <a href=\"/gone.html\">gone</a> \
                             <a href=\"http://other.example:{PORT}/x.html\">other</a>",
                        ),
                    )
                    .page("/a.html", &page("A", None, ""))
                    .route("/gone.html", Route::status(404)),
            )
            .site(
                "other.example",
                Site::new()
                    .robots("User-agent: *\nDisallow: /\n")
                    .page("/x.html", &page("X", None, "")),
            ),
    )
}

/// Before, a top robots.txt keeps out checked nothing and exited 0, and
/// there was no way to check one's own staging site.
#[test]
fn a_top_robots_txt_keeps_out_exits_4_and_the_flag_opens_the_tops_site_alone() {
    let web = staging_web();
    let dir = tempfile::tempdir().unwrap();
    let top = web.url("staging.example", "/index.html");
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check",
            top.as_str(),
            "--delay",
            "0s",
            "--from",
            "t@example.org",
        ];
        args.extend(["--resolve", "staging.example=127.0.0.1"]);
        args.extend(["--resolve", "other.example=127.0.0.1"]);
        args.extend(extra);
        check_in(dir.path(), ".", &args)
    };
    let port = web.port();
    let line = format!(
        "spinneret: nothing checked from {top}: it is avoided (robots.txt of staging.example:{port} disallows it (Disallow: /)); \
         a site of your own is checked with `spinneret check --ignore-robots-for-tops`; exit status 4\n"
    );
    for quiet in [&[][..], &["-q"][..]] {
        let out = check(quiet);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert_eq!(
            stderr.matches("spinneret: nothing checked").count(),
            1,
            "one line says why: {stderr}"
        );
        assert!(stderr.ends_with(&line), "{stderr}");
    }
    let asked: Vec<(String, String)> = web
        .requests()
        .into_iter()
        .map(|r| (r.host, r.path))
        .collect();
    assert_eq!(
        asked,
        [("staging.example".to_string(), "/robots.txt".to_string())],
        "robots.txt once (the store keeps it), no page"
    );
    let out = check(&["-qq"]);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(text(&out.stderr), "");

    // The user's word opens the tops' site, and no other.
    web.clear_log();
    let out = check(&["--ignore-robots-for-tops"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let a = |p: &str| web.url("staging.example", p);
    let x = web.url("other.example", "/x.html");
    assert_eq!(
        categories(dir.path()),
        [
            (x.clone(), Category::Avoided),
            (a("/a.html"), Category::Ok),
            (a("/gone.html"), Category::Broken),
            (a("/index.html"), Category::Ok),
        ]
    );
    let mut asked: Vec<(String, String)> = web
        .requests()
        .into_iter()
        .map(|r| (r.host, r.path))
        .collect();
    asked.sort();
    asked.dedup();
    assert_eq!(
        asked,
        [
            ("other.example".to_string(), "/robots.txt".to_string()),
            ("staging.example".to_string(), "/a.html".to_string()),
            ("staging.example".to_string(), "/gone.html".to_string()),
            ("staging.example".to_string(), "/index.html".to_string()),
            // Its sitemap is looked for (not robots.txt's lines: unread).
            ("staging.example".to_string(), "/sitemap.xml".to_string()),
        ]
    );
}

/// Before, a top that is no page (a text file; a Markdown one, before
/// Markdown was read) was read, said to be left unparsed, and the run
/// that had checked nothing exited 0.
#[test]
fn a_top_that_is_not_a_page_exits_4_unless_something_is_broken() {
    let web = TestWeb::start(
        Web::new().site(
            "127.0.0.1",
            Site::new()
                .route("/notes.txt", Route::file("text/plain", "see index.html"))
                .page(
                    "/index.html",
                    &page("Home", None, "<a href=\"/gone.html\">gone</a>"),
                )
                .route("/gone.html", Route::status(404)),
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    let notes = web.url("127.0.0.1", "/notes.txt");
    let why = format!(
        "spinneret: nothing checked from {notes}: it is text/plain, not an HTML page: no link in it was followed"
    );
    let out = check_in(dir.path(), ".", &["check", &notes, "--delay", "0s"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.ends_with(&format!("{why}; exit status 4\n")),
        "{stderr}"
    );
    // The text says it once, on standard error, not again as a note.
    assert!(
        !text(&out.stdout).contains("not parsed"),
        "{}",
        text(&out.stdout)
    );
    // Beside a page with a broken link: the run fails for that (1), and
    // the line still says what was not checked.
    let index = web.url("127.0.0.1", "/index.html");
    let out = check_in(
        dir.path(),
        ".",
        &["-q", "check", &notes, &index, "--delay", "0s"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.ends_with(&format!("{why}\n")), "{stderr}");
}

/// A local tree whose pages link to `./`, `sub/` and `../`: before,
/// `site/` and `site/index.html` were two documents, each finding was
/// reported twice, and SARIF and GitHub pointed at `site/`.
#[test]
fn a_local_directory_is_its_index_one_document_and_one_finding() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    tree(
        &site,
        &[
            (
                "index.html",
                "<title>Home</title>\n<a href=\"./\">home</a>\n<a href=\"sub/\">sub</a>\n<a href=\"gone.html\">gone</a>\n",
            ),
            (
                "sub/index.html",
                "<title>Sub</title>\n<a href=\"../\">up</a>\n",
            ),
        ],
    );
    let out = check_in(
        dir.path(),
        ".",
        &[
            "check",
            "site",
            "--format",
            "sarif",
            "--from",
            "t@example.org",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        categories(dir.path()),
        [
            (file(&site, "gone.html"), Category::Broken),
            (file(&site, "index.html"), Category::Ok),
            (file(&site, "sub/index.html"), Category::Ok),
        ]
    );
    let stderr = text(&out.stderr);
    let row = stderr
        .lines()
        .find(|l| l.starts_with("file:"))
        .unwrap_or_default()
        .to_string();
    assert!(
        row.split_whitespace().skip(1).take(3).eq(["2", "4", "1"]),
        "2 documents, 4 references, 1 broken: {stderr}"
    );
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let places: Vec<(String, String, u64)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let p = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                p["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [("broken".to_string(), "site/index.html".to_string(), 4)]
    );
    let out = check_in(dir.path(), ".", &["check", "site", "--format", "github"]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "::error file=site/index.html,line=4,col=10,title=Broken link::{}: broken: file not found; broken in the previous run too\n",
            file(&site, "gone.html")
        )
    );
}

/// Before, `--dry-run-mail` printed its messages on standard output ahead
/// of `--format junit`'s XML, which then did not parse.
#[test]
fn mail_printed_goes_to_standard_error_when_a_format_has_standard_output() {
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/index.html",
                    &page("Home", None, "<a href=\"/gone.html\">gone</a>"),
                )
                .route("/gone.html", Route::status(404)),
        ),
    );
    let setup = Setup::new(
        &web,
        &format!(
            "[mail]\nserver = \"127.0.0.1\"\nport = {}\nfrom = \"spider@test.example\"\n\
             [[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\
             email = \"alice@a.example\"\nemail_broken = true\n",
            spinneret_tests::smtp::closed_port()
        ),
    );
    let out = command()
        .args(["crawl", "--dry-run-mail", "--format", "junit"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "From: spider@test.example\nTo: alice@a.example\nSubject: spinneret: A: 1 broken\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("--dry-run-mail: 1 message(s) printed, none sent"),
        "{stderr}"
    );
    let script = r#"
import sys
from junitparser import JUnitXml
xml = JUnitXml.fromstring(sys.stdin.buffer.read())
for suite in xml:
    print(f"suite {suite.name} tests={suite.tests} failures={suite.failures}")
"#;
    if let Some(read) = python("junitparser", script, &out.stdout) {
        assert_eq!(
            read,
            "suite A tests=2 failures=1\n",
            "{}",
            text(&out.stdout)
        );
    }
}

/// A site whose page links to a page, one behind a login (401) and a
/// forbidden one (403).
fn refusing_web() -> TestWeb {
    TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/index.html",
                    &page(
                        "Home",
                        None,
                        "<a href=\"/ok.html\">ok</a> <a href=\"/members.html\">members</a> \
                         <a href=\"/secret.html\">secret</a>",
                    ),
                )
                .page("/ok.html", &page("Ok", None, ""))
                .route("/members.html", Route::status(401))
                .route("/secret.html", Route::status(403)),
        ),
    )
}

/// `check TOP --format FORMAT` of [`refusing_web`] in `dir`.
fn check_refusing(web: &TestWeb, dir: &Path, format: &str) -> Output {
    check_in(
        dir,
        ".",
        &[
            "check",
            &web.url("a.example", "/index.html"),
            "--resolve",
            "a.example=127.0.0.1",
            "--delay",
            "0s",
            "--format",
            format,
        ],
    )
}

/// Before, the text called 401 and 403 links "a reader cannot follow
/// these links" while JUnit skipped them and the run passed.
#[test]
fn a_blocked_link_is_a_warning_in_the_text_every_format_and_the_exit_status() {
    let web = refusing_web();
    let dir = tempfile::tempdir().unwrap();
    let out = check_refusing(&web, dir.path(), "junit");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "\nbroken: 0, blocked: 2 (their servers refused the robot, 401, 403 or 429: not verified, and no failure; \
             open them in a browser, or --accept the status to count it ok):\n"
        ),
        "{stderr}"
    );
    let script = r#"
import sys
from junitparser import JUnitXml
xml = JUnitXml.fromstring(sys.stdin.buffer.read())
for suite in xml:
    print(f"tests={suite.tests} failures={suite.failures} skipped={suite.skipped}")
    for case in suite:
        for r in case.result:
            print(f"  {case.name} {type(r).__name__}({r.type}: {r.message})")
"#;
    let a = |p: &str| web.url("a.example", p);
    if let Some(read) = python("junitparser", script, &out.stdout) {
        assert_eq!(
            read,
            format!(
                "tests=4 failures=0 skipped=2\n\
                 \x20 {} Skipped(blocked: HTTP 401 Unauthorized)\n\
                 \x20 {} Skipped(blocked: HTTP 403 Forbidden)\n",
                a("/members.html"),
                a("/secret.html")
            )
        );
    }
    let out = check_refusing(&web, dir.path(), "sarif");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let levels: Vec<(&str, &str)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["ruleId"].as_str().unwrap(), r["level"].as_str().unwrap()))
        .collect();
    assert_eq!(levels, [("blocked", "warning"), ("blocked", "warning")]);
    let out = check_refusing(&web, dir.path(), "json");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings: Vec<(&str, &str)> = json["tasks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "blocked")
        .map(|f| (f["url"].as_str().unwrap(), f["severity"].as_str().unwrap()))
        .collect();
    let (members, secret) = (a("/members.html"), a("/secret.html"));
    assert_eq!(
        findings,
        [(members.as_str(), "warning"), (secret.as_str(), "warning")]
    );
}

/// Before, `--format json` printed JSON Lines (no JSON reader takes it
/// whole) and there was no `jsonl`.
#[test]
fn json_is_one_document_and_jsonl_its_lines() {
    let web = refusing_web();
    let dir = tempfile::tempdir().unwrap();
    let top = web.url("a.example", "/index.html");
    let out = check_refusing(&web, dir.path(), "json");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("one JSON document: {e}\n{}", text(&out.stdout)));
    assert_eq!(json["schema"], "spinneret.reports/1");
    let tasks = json["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1);
    let task = &tasks[0];
    assert_eq!(
        (&task["task"], &task["kind"], &task["top"]),
        (&top.clone().into(), &"site".into(), &top.clone().into())
    );
    let urls: Vec<(&str, &str, &str)> = task["urls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["url"].as_str().unwrap(),
                u["role"].as_str().unwrap(),
                u["category"].as_str().unwrap(),
            )
        })
        .collect();
    let a = |p: &str| web.url("a.example", p);
    let (index, members, ok, secret) = (
        a("/index.html"),
        a("/members.html"),
        a("/ok.html"),
        a("/secret.html"),
    );
    assert_eq!(
        urls,
        [
            (index.as_str(), "document", "ok"),
            (members.as_str(), "leaf", "blocked"),
            (ok.as_str(), "document", "ok"),
            (secret.as_str(), "leaf", "blocked"),
        ]
    );
    assert_eq!(task["documents"][0]["url"], index.as_str());
    assert_eq!(task["summary"]["urls"], 4);
    assert_eq!(json["summary"]["urls"], 4);
    assert_eq!(
        json["summary"]["by_category"],
        serde_json::json!({"blocked": 2, "ok": 2})
    );

    let out = check_refusing(&web, dir.path(), "jsonl");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"task"));
    assert_eq!(types.last(), Some(&"summary"));
    assert_eq!(types.iter().filter(|t| **t == "url").count(), 4);
    assert_eq!(lines[0]["schema"], "spinneret.report/1");
}

/// Where `check`'s reports for `top` are, as the run's text says.
fn reports_dir(out: &Output, top: &str) -> PathBuf {
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    said.lines()
        .find_map(|l| l.strip_prefix(&format!("  {top}: ")))
        .and_then(|l| l.split_once("/ ("))
        .map(|(dir, _)| PathBuf::from(dir))
        .unwrap_or_else(|| panic!("where the reports are: {said}"))
}

/// Before, every check's reports went to `$TMPDIR/spinneret-check/HOST-PORT/`
/// whatever the store: a `junit.xml` of an earlier run sat beside a fresh
/// index, whose "prior version" was another store's.
#[test]
fn checks_reports_are_their_stores_and_an_earlier_runs_report_does_not_stay() {
    let web = refusing_web();
    let dir = tempfile::tempdir().unwrap();
    let top = web.url("a.example", "/index.html");
    let run = |store: &str, format: &str| {
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        command()
            .env("TMPDIR", &tmp)
            .args([
                "check",
                &top,
                "--resolve",
                "a.example=127.0.0.1",
                "--delay",
                "0s",
            ])
            .args(["--format", format, "--store"])
            .arg(dir.path().join(store))
            .output()
            .unwrap()
    };
    let out = run("a.db", "junit");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let reports = dir
        .path()
        .join("a.db.check-reports")
        .join(format!("a.example-{}_index.html", web.port()));
    assert_eq!(reports_dir(&out, &top), reports);
    let listed = |d: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        listed(&reports),
        ["index.html", "junit.xml", "report.jsonl"]
    );
    // Text this time: no junit.xml left looking current; the index's
    // prior version is this store's first run.
    let out = run("a.db", "text");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        listed(&reports),
        ["index.html", "index.prior.html", "report.jsonl"]
    );
    let index = std::fs::read_to_string(reports.join("index.html")).unwrap();
    assert!(
        index.contains(
            "<a rel=\"prev\" href=\"index.prior.html\">The prior version of this index</a>"
        ),
        "{index:.600}"
    );
    // Another store: reports of its own, a first version again.
    let out = run("b.db", "text");
    let other = reports_dir(&out, &top);
    assert_eq!(
        other,
        dir.path()
            .join("b.db.check-reports")
            .join(format!("a.example-{}_index.html", web.port()))
    );
    let index = std::fs::read_to_string(other.join("index.html")).unwrap();
    assert!(
        index.contains("This is the first version of this index."),
        "{index:.600}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
        0
    );
}
