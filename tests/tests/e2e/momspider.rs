//! MOMspider's own formats (seeds 000 and 003): an instruction file runs
//! as it is, its IndexFile/IndexTitle/IndexURL drive the index, and the
//! avoid and sites files are written as a pair, honoured on the next run
//! and re-read when a site's line is deleted by hand.

use crate::common::{self, text};
use spinneret_tests::fixtures::page;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::path::Path;

/// A web on `localhost` (which needs no `[resolve]`: instruction files have none).
fn web() -> Web {
    let site = Site::new()
        .robots("User-agent: *\nDisallow: /private/\n")
        .page(
            "/index.html",
            &page(
                "Home",
                Some("Local"),
                r#"<a href="missing.html">Missing</a> <a href="private/x.html">Private</a> <a href="about.html">About</a>"#,
            ),
        )
        .page("/about.html", &page("About", Some("Local"), "about"))
        .route("/private/x.html", Route::html(page("X", None, "")));
    Web::new().site("localhost", site)
}

fn instructions(port: u16) -> String {
    format!(
        "# spinneret test instructions\n\
AvoidFile avoid.mom\n\
SitesFile sites.mom\n\
SitesCheck 3\n\
<Site\n\
  Name      Local\n\
  TopURL    http://localhost:{port}/index.html\n\
  IndexURL  http://www.test.example/MOM/Local.html\n\
  IndexFile MOM/Local.html\n\
  IndexTitle MOMspider Index for Local\n\
  EmailAddress owner@test.example\n\
  EmailBroken\n\
>\n"
    )
}

fn crawl(dir: &Path) -> std::process::Output {
    common::command()
        .args(["-q", "crawl", "--dry-run-mail", "--store"])
        .arg(dir.join("store.db"))
        .arg(dir.join("mom.txt"))
        .output()
        .unwrap()
}

fn requested(web: &TestWeb, path: &str) -> usize {
    web.methods("localhost", path).len()
}

#[test]
fn an_instruction_file_runs_and_keeps_its_avoid_and_sites_files() {
    let web = TestWeb::start(web());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("mom.txt"), instructions(web.port())).unwrap();

    // First run: robots.txt is read, the index goes where IndexFile says,
    // the owner's message links to IndexURL.
    let out = crawl(d);
    common::expect_exit(&out, 1);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("To: owner@test.example\nSubject: spinneret: Local: 1 broken\n"),
        "{stdout}"
    );
    assert!(stdout.contains("index entry: http://www.test.example/MOM/Local.html#f"));
    let index = std::fs::read_to_string(d.join("MOM/Local.html")).unwrap();
    assert!(index.contains("<title>MOMspider Index for Local</title>"));
    assert_eq!(requested(&web, "/robots.txt"), 1);
    assert_eq!(requested(&web, "/private/x.html"), 0);

    // The pair: the site's line and its restriction expire together.
    let sites = std::fs::read_to_string(d.join("sites.mom")).unwrap();
    let site_line = sites
        .lines()
        .find(|l| l.starts_with("Site "))
        .unwrap()
        .to_string();
    let date = &site_line[site_line.find('[').unwrap()..];
    assert_eq!(site_line, format!("Site localhost:{} {date}", web.port()));
    let avoid = std::fs::read_to_string(d.join("avoid.mom")).unwrap();
    assert!(
        avoid.contains(&format!(
            "Avoid http://localhost:{}/private/ {date}\n",
            web.port()
        )),
        "{avoid}"
    );

    // Second run: the sites file holds, so robots.txt is not asked again and
    // the avoid file keeps the private page unrequested; the prior index is linked.
    web.clear_log();
    common::expect_exit(&crawl(d), 1);
    assert_eq!(requested(&web, "/robots.txt"), 0);
    assert_eq!(requested(&web, "/private/x.html"), 0);
    let index = std::fs::read_to_string(d.join("MOM/Local.html")).unwrap();
    assert!(index.contains("<a rel=\"prev\" href=\"Local.prior.html\">"));
    assert!(d.join("MOM/Local.prior.html").is_file());

    // Hand edits between runs: a new avoid entry, and the site's line
    // deleted to force robots.txt to be read again.
    let hand = format!("Avoid http://localhost:{}/about.html [*]\n", web.port());
    std::fs::write(d.join("avoid.mom"), format!("{avoid}{hand}")).unwrap();
    std::fs::write(
        d.join("sites.mom"),
        sites.replace(&format!("{site_line}\n"), ""),
    )
    .unwrap();
    web.clear_log();
    common::expect_exit(&crawl(d), 1);
    assert_eq!(requested(&web, "/robots.txt"), 1);
    assert_eq!(requested(&web, "/about.html"), 0);
    let avoid = std::fs::read_to_string(d.join("avoid.mom")).unwrap();
    assert!(avoid.contains(&hand), "{avoid}");
    assert_eq!(
        avoid
            .matches(&format!("# robots.txt of localhost:{}", web.port()))
            .count(),
        1,
        "{avoid}"
    );
    let sites = std::fs::read_to_string(d.join("sites.mom")).unwrap();
    assert_eq!(sites.matches("Site localhost:").count(), 1, "{sites}");
}

#[test]
fn convert_writes_toml_and_bad_instructions_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("mom.txt"), instructions(8080)).unwrap();
    let out = common::spinneret(&["convert", d.join("mom.txt").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let toml = text(&out.stdout);
    for line in [
        "robots_expiry = \"3d\"".to_string(),
        format!("avoid_file = \"{}\"", d.join("avoid.mom").display()),
        format!("sites_file = \"{}\"", d.join("sites.mom").display()),
        "name = \"Local\"".to_string(),
        "kind = \"site\"".to_string(),
        "top = \"http://localhost:8080/index.html\"".to_string(),
        format!("index_file = \"{}\"", d.join("MOM/Local.html").display()),
        "index_url = \"http://www.test.example/MOM/Local.html\"".to_string(),
        "index_title = \"MOMspider Index for Local\"".to_string(),
        "email_broken = true".to_string(),
    ] {
        assert!(toml.lines().any(|l| l == line), "no `{line}` in\n{toml}");
    }
    // The converted file is a configuration crawl accepts.
    std::fs::write(d.join("converted.toml"), &toml).unwrap();
    spinneret::config::load(&d.join("converted.toml")).unwrap();

    std::fs::write(
        d.join("bad.txt"),
        "SitesCheck 7\n<Tree\n Name T\n TopURL http://localhost/\n MaxDepth 3\n>\n",
    )
    .unwrap();
    let out = common::spinneret(&["crawl", d.join("bad.txt").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "spinneret: {}:5:1: unknown directive `MaxDepth`",
            d.join("bad.txt").display()
        )),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(
        d.join("bad.avoid"),
        "Avoid http://localhost/x [next week]\n",
    )
    .unwrap();
    std::fs::write(
        d.join("bad-avoid.txt"),
        "AvoidFile bad.avoid\nSitesFile s.mom\n<Site\n Name S\n TopURL http://localhost:9/\n>\n",
    )
    .unwrap();
    let out = common::command()
        .args(["crawl", "--store"])
        .arg(d.join("store.db"))
        .arg(d.join("bad-avoid.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "{}:1: the expiry date `next week` cannot be read; write `*` (never expires), or a date in GMT",
            d.join("bad.avoid").display()
        )),
        "{}",
        text(&out.stderr)
    );
}

/// Each task of an instruction file gets its own index file and title, and
/// each owner's mail links to the index of that owner's task.
#[test]
fn each_task_writes_its_own_index_file_with_its_own_title() {
    let mut site = Site::new();
    for t in ["a", "b", "c"] {
        site = site.page(
            &format!("/{t}/index.html"),
            &page(t, None, r#"<a href="missing.html">Missing</a>"#),
        );
    }
    let web = TestWeb::start(Web::new().site("localhost", site));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = web.port();
    let tasks: String = ["a", "b", "c"]
        .iter()
        .map(|t| {
            format!(
                "<Tree\n  Name Task{t}\n  TopURL http://localhost:{port}/{t}/index.html\n  IndexFile MOM/{t}.html\n  IndexTitle The index of {t}\n  EmailAddress {t}@test.example\n  EmailBroken\n>\n"
            )
        })
        .collect();
    std::fs::write(d.join("mom.txt"), tasks).unwrap();
    let out = crawl(d);
    let stdout = text(&out.stdout);
    common::expect_exit(&out, 1);
    for t in ["a", "b", "c"] {
        let file = d.join(format!("MOM/{t}.html"));
        let index = std::fs::read_to_string(&file).unwrap();
        assert!(
            index.contains(&format!("<title>The index of {t}</title>")),
            "{t}: {index}"
        );
        assert!(index.contains(&format!("/{t}/missing.html")), "{t}");
        for other in ["a", "b", "c"].iter().filter(|o| **o != t) {
            assert!(
                !index.contains(&format!("/{other}/missing.html")),
                "{t} holds {other}"
            );
        }
        // The owner's message names this task's index, which exists.
        let message = stdout
            .split("To: ")
            .find(|m| m.starts_with(&format!("{t}@test.example")))
            .unwrap_or_else(|| panic!("no mail to {t}: {stdout}"));
        let link = message
            .lines()
            .find_map(|l| l.trim().strip_prefix("index entry: "))
            .unwrap_or_else(|| panic!("{message}"));
        let path = url::Url::parse(link).unwrap().to_file_path().unwrap();
        assert_eq!(path, file, "{message}");
        // Its JSON report is its own too, beside the index (before, the
        // three tasks wrote one report.jsonl, spliced and half lost).
        let report = std::fs::read_to_string(d.join(format!("MOM/{t}.jsonl"))).unwrap();
        let lines: Vec<serde_json::Value> = report
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(lines[0]["task"], format!("Task{t}"), "{report}");
        assert!(report.contains(&format!("/{t}/missing.html")), "{t}");
    }
    assert!(!d.join("MOM/report.jsonl").exists());

    // Two tasks that would write one index are refused.
    let clash = std::fs::read_to_string(d.join("mom.txt"))
        .unwrap()
        .replace("IndexFile MOM/b.html", "IndexFile MOM/a.html");
    std::fs::write(d.join("mom.txt"), clash).unwrap();
    let out = crawl(d);
    let stderr = common::expect_exit(&out, 2);
    assert!(
        stderr.contains(&format!(
            "tasks `Taska` and `Taskb` both write their index to {}; give each its own IndexFile",
            d.join("MOM/a.html").display()
        )),
        "{stderr}"
    );
}

/// MOMspider sent `From` with every request; an instruction file names no
/// address, so it comes from --from, else EMAIL, and a run without one says so.
#[test]
fn instruction_file_runs_send_from_given_by_flag_or_email() {
    let web = TestWeb::start(web());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("mom.txt"), instructions(web.port())).unwrap();
    let run = |extra: &[&str], email: Option<&str>| {
        web.clear_log();
        let mut cmd = common::command();
        cmd.args(["crawl", "--dry-run-mail", "--store"])
            .arg(d.join("store.db"))
            .args(extra)
            .arg(d.join("mom.txt"))
            .env_remove("EMAIL");
        if let Some(e) = email {
            cmd.env("EMAIL", e);
        }
        let out = cmd.output().unwrap();
        let froms: Vec<Option<String>> = web
            .requests()
            .iter()
            .map(|r| r.header("from").map(str::to_string))
            .collect();
        assert!(!froms.is_empty());
        (text(&out.stderr), froms)
    };
    let warning = "requests go without a From header";
    let (stderr, froms) = run(&["--from", "ops@test.example"], Some("env@test.example"));
    assert!(
        froms
            .iter()
            .all(|f| f.as_deref() == Some("ops@test.example")),
        "{froms:?}"
    );
    assert!(!stderr.contains(warning), "{stderr}");
    let (stderr, froms) = run(&[], Some("env@test.example"));
    assert!(
        froms
            .iter()
            .all(|f| f.as_deref() == Some("env@test.example")),
        "{froms:?}"
    );
    assert!(!stderr.contains(warning), "{stderr}");
    let (stderr, froms) = run(&[], None);
    assert!(froms.iter().all(Option::is_none), "{froms:?}");
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    // A bad address is a usage error.
    let out = common::command()
        .args(["crawl", "--from", "not an address"])
        .arg(d.join("mom.txt"))
        .output()
        .unwrap();
    let stderr = common::expect_exit(&out, 2);
    assert!(
        stderr.contains("--from: `not an address` is not an e-mail address"),
        "{stderr}"
    );
}
