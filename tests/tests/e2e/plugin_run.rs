//! `spinneret plugin run PLUGIN --input FIXTURE.json`: a plugin called on
//! sample input, as a plugin author tries one, with what it returns
//! printed as JSON and a reporter's files written where it is told.

use crate::common::{expect_exit, spinneret, text};
use serde_json::json;

/// Write `fixture` to a file in `dir`; its path.
fn fixture(dir: &std::path::Path, name: &str, fixture: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, fixture).unwrap();
    path.to_str().unwrap().to_string()
}

/// The JSON `plugin run` printed.
fn answers(out: &std::process::Output) -> serde_json::Value {
    expect_exit(out, 0);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

#[test]
fn a_parser_policy_and_fetch_hook_answer_their_calls() {
    let dir = tempfile::tempdir().unwrap();
    let parse = fixture(
        dir.path(),
        "parse.json",
        r#"{"parse": {"url": "http://a.example/sitemap.xml", "content_type": "application/xml",
            "body": "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://a.example/a</loc></url></urlset>"}}"#,
    );
    assert_eq!(
        answers(&spinneret(&[
            "plugin",
            "run",
            "builtin:sitemap",
            "--input",
            &parse
        ])),
        json!({"accepts": true, "parse": {"title": null, "owner": null, "expires": null,
            "references": [{"target": "http://a.example/a", "kind": "Anchor", "anchor_text": ""}]}})
    );
    let decide = fixture(
        dir.path(),
        "decide.json",
        r#"{"decide": {"depth": 2, "candidates": [
            {"target": "http://a.example/a/a/a/a/x", "kind": "Anchor"},
            {"target": "http://a.example/b", "kind": "Image"}]}}"#,
    );
    assert_eq!(
        answers(&spinneret(&[
            "plugin",
            "run",
            "builtin:trap-guard",
            "-i",
            &decide
        ])),
        json!({"decide": [
            {"Avoid": "trap-guard: the path repeats \"a\" 4 times (a link loop?)"},
            "NoObjection"]})
    );
    // The configuration comes from --config, over the fixture's.
    let hook = fixture(
        dir.path(),
        "hook.json",
        r#"{"config": {"phrases": ["nothing here"]},
            "after_response": {"request": {"url": "http://a.example/x", "method": "GET"},
              "status": 200, "content_type": "text/html", "body": "<title>Nothing here</title>"}}"#,
    );
    assert_eq!(
        answers(&spinneret(&[
            "plugin",
            "run",
            "builtin:soft-404",
            "-i",
            &hook
        ])),
        json!({"after_response": {"category": "Broken",
            "reason": "soft 404: answered 200 but its title says \"Nothing here\" (matches \"nothing here\")"}})
    );
    assert_eq!(
        answers(&spinneret(&[
            "plugin",
            "run",
            "builtin:soft-404",
            "-i",
            &hook,
            "--config",
            r#"{"phrases": ["gone"]}"#
        ])),
        json!({"after_response": null})
    );
}

#[test]
fn a_reporter_writes_its_files_where_it_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let report = fixture(
        dir.path(),
        "report.json",
        r#"{"report": {
          "results": [
            {"outcome": {"url": "http://a.example/", "category": "Ok", "status": 200, "redirects": [], "checked_at": 1795000000}, "role": "Document"},
            {"outcome": {"url": "http://a.example/gone", "category": "Broken", "status": 404, "redirects": [], "checked_at": 1795000000}, "role": "Leaf"}],
          "documents": [
            {"number": 1,
             "document": {"url": "http://a.example/", "title": "Home", "parse_errors": 0,
               "references": [{"target": "http://a.example/gone", "kind": "Anchor", "anchor_text": "gone"}]},
             "outcome": {"url": "http://a.example/", "category": "Ok", "redirects": [], "checked_at": 1795000000},
             "targets": [], "first_reference": 0, "last_part": true, "lines": [4]}],
          "findings": [
            {"number": 1, "finding": {"kind": "broken", "url": "http://a.example/gone", "referrer": "http://a.example/",
              "message": "HTTP 404 Not Found", "severity": "Error", "source": "spinneret"},
             "referred_from": [{"document": 1, "reference": 1}]}]}}"#,
    );
    // `plugin run` of github-annotations on the fixture into `out`.
    let run_into = |out: &std::path::Path| {
        let run = spinneret(&[
            "plugin",
            "run",
            "builtin:github-annotations",
            "-i",
            &report,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(answers(&run), json!({"report": ["annotations.txt"]}));
        run
    };
    let out_dir = dir.path().join("out");
    let out = run_into(&out_dir);
    assert!(
        text(&out.stderr).contains(&format!("files written to {}", out_dir.display())),
        "{}",
        text(&out.stderr)
    );
    // A fixture written for API 0.4 (lines, no columns) still reads.
    assert_eq!(
        std::fs::read_to_string(out_dir.join("annotations.txt")).unwrap(),
        "::error title=Broken link::http://a.example/gone: HTTP 404 Not Found (linked from http://a.example/, line 4)\n"
    );
    // With 0.5's columns beside the lines, the annotation names the column.
    let with_columns = std::fs::read_to_string(&report)
        .unwrap()
        .replace(r#""lines": [4]"#, r#""lines": [4], "columns": [10]"#);
    std::fs::write(&report, with_columns).unwrap();
    let out_dir = dir.path().join("out-0.5");
    run_into(&out_dir);
    assert_eq!(
        std::fs::read_to_string(out_dir.join("annotations.txt")).unwrap(),
        "::error title=Broken link::http://a.example/gone: HTTP 404 Not Found (linked from http://a.example/, line 4, column 10)\n"
    );
}

#[test]
fn a_fixture_that_does_not_fit_is_refused_with_where_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |plugin: &str, name: &str, body: &str| {
        let path = fixture(dir.path(), name, body);
        let out = spinneret(&["plugin", "run", plugin, "-i", &path]);
        let stderr = expect_exit(&out, 2);
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
        (path, stderr)
    };
    let (path, stderr) = refused(
        "builtin:sitemap",
        "typo.json",
        "{\"parse\": {\"url\": \"http://a.example/\",\n \"content-type\": \"text/xml\", \"body\": \"\"}}",
    );
    assert!(
        stderr.contains(&format!("{path}:2:15: unknown field `content-type`, expected one of `url`, `content_type`, `body`")),
        "{stderr}"
    );
    let (_, stderr) = refused(
        "builtin:searxng",
        "wrong.json",
        r#"{"parse": {"url": "u", "content_type": "t", "body": ""}}"#,
    );
    assert!(
        stderr.contains("searxng is a search-engine plugin: the fixture must hold `query_url` or `parse_results`"),
        "{stderr}"
    );
    // A plugin that refuses its configuration fails: exit 3.
    let query = fixture(
        dir.path(),
        "query.json",
        r#"{"query_url": {"keywords": ["rot"]}}"#,
    );
    let out = spinneret(&[
        "plugin",
        "run",
        "builtin:searxng",
        "-i",
        &query,
        "--config",
        r#"{"base": 3}"#,
    ]);
    let stderr = expect_exit(&out, 3);
    assert!(stderr.contains("failed in configure"), "{stderr}");
    let out = spinneret(&[
        "plugin",
        "run",
        "builtin:sitemap",
        "-i",
        "/nonexistent/f.json",
    ]);
    assert!(
        expect_exit(&out, 2).contains("cannot read the fixture /nonexistent/f.json"),
        "{}",
        text(&out.stderr)
    );
}
