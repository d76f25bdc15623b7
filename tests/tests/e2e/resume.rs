//! Nothing checked is lost: a crawl stopped by Ctrl-C or killed outright is
//! continued with `--resume`, without asking again for what it had stored.

use crate::common;
use spinneret_core::model::Category;
use spinneret_crawl::CrawlOptions;
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::{Setup, run_crawl_until};
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const PAGES: usize = 40;

/// A chain of slow pages: each answers after 60 ms and links to the next.
fn slow_web() -> Web {
    let mut site = Site::new();
    for i in 0..PAGES {
        let body = if i + 1 < PAGES {
            format!("<a href=\"/p{}.html\">next</a>", i + 1)
        } else {
            String::new()
        };
        site = site.route(
            &format!("/p{i}.html"),
            Route::Delay(
                Duration::from_millis(60),
                Box::new(Route::html(page(&format!("P{i}"), None, &body))),
            ),
        );
    }
    Web::new().site("a.example", site)
}

const TASK: &str = "per_site_connections = 1\n[[task]]\nname = \"Slow\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/p0.html\"\n";

fn page_requests(web: &TestWeb) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for r in web.requests() {
        if r.path != "/robots.txt" {
            *m.entry(r.path).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn stopped_crawl_resumes_where_it_stopped() {
    let web = TestWeb::start(slow_web());
    let setup = Setup::new(&web, TASK);
    let config = setup.config();
    let (tx, rx) = tokio::sync::watch::channel(false);
    let handle = {
        let config = config.clone();
        std::thread::spawn(move || run_crawl_until(&config, &CrawlOptions::default(), rx))
    };
    std::thread::sleep(Duration::from_millis(600));
    tx.send(true).unwrap();
    let first = handle.join().unwrap();
    assert!(first.interrupted);
    let done_before = page_requests(&web).len();
    assert!(
        done_before > 0 && done_before < PAGES,
        "{done_before} pages before the stop"
    );
    assert_eq!(
        setup.store().last_run().unwrap().unwrap().status,
        "interrupted"
    );

    let second = setup.crawl_with(&CrawlOptions {
        resume: true,
        ..Default::default()
    });
    assert!(second.resumed && !second.interrupted);
    assert_eq!(second.run, first.run, "the same run continues");
    assert_eq!(second.tasks[0].documents, PAGES as u64);
    // Every page was requested exactly once over both processes.
    let counts = page_requests(&web);
    assert_eq!(counts.len(), PAGES);
    assert!(counts.values().all(|n| *n == 1), "{counts:?}");
    let results = setup.results();
    assert_eq!(
        results
            .values()
            .filter(|r| r.category == Category::Ok)
            .count(),
        PAGES
    );
    // Crawled through the library: the report stage (the command line's) is still to come.
    assert_eq!(setup.store().last_run().unwrap().unwrap().status, "crawled");
}

#[test]
fn killed_crawl_loses_nothing_it_had_stored() {
    let web = TestWeb::start(slow_web());
    let setup = Setup::new(&web, TASK);
    let mut child = common::command()
        .args(["-q", "crawl"])
        .arg(&setup.config_path)
        .spawn()
        .expect("start spinneret");
    // Wait until some results are committed, then kill without warning.
    let deadline = Instant::now() + Duration::from_secs(20);
    let stored = loop {
        std::thread::sleep(Duration::from_millis(100));
        let n = setup
            .store()
            .last_run()
            .unwrap()
            .map(|run| setup.store().run_results(run.id, None).unwrap().len())
            .unwrap_or(0);
        if n >= 5 || Instant::now() > deadline {
            break n;
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(stored >= 5, "results were stored while crawling");
    let kept: Vec<String> = setup.results().keys().cloned().collect();
    let killed_at = Instant::now();

    let status = common::command()
        .args(["-q", "crawl", "--resume"])
        .arg(&setup.config_path)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let results = setup.results();
    assert_eq!(
        results
            .values()
            .filter(|r| r.category == Category::Ok)
            .count(),
        PAGES
    );
    // What was stored before the kill was not asked for again.
    for url in kept {
        let path = url
            .rsplit_once(&format!(":{}", web.port()))
            .unwrap()
            .1
            .to_string();
        let again = web
            .requests()
            .into_iter()
            .filter(|r| r.path == path && r.at > killed_at)
            .count();
        assert_eq!(
            again, 0,
            "{path} was stored before the kill but requested again"
        );
    }
}

/// Run `cmd` until the web has answered three pages, then send it
/// `signal`: what it printed and its exit status.
fn signalled_after_three_pages(
    cmd: &mut std::process::Command,
    web: &TestWeb,
    signal: libc::c_int,
) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start spinneret");
    let deadline = Instant::now() + Duration::from_secs(20);
    while page_requests(web).len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sending a signal to our own child process.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0);
    child.wait_with_output().unwrap()
}

#[test]
fn sigterm_stops_cleanly_and_says_how_to_resume() {
    let web = TestWeb::start(slow_web());
    let setup = Setup::new(&web, TASK);
    let mut cmd = common::command();
    cmd.arg("crawl").arg(&setup.config_path);
    let out = signalled_after_three_pages(&mut cmd, &web, libc::SIGTERM);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Stopped is no whole run's verdict: never success.
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    let resume = format!(
        "interrupted: what was checked is stored; continue with `spinneret crawl --resume {} --store {}`",
        setup.config_path.display(),
        setup.path().join("store.db").display()
    );
    assert!(stdout.contains(&resume), "{stdout}");
    let run = setup.store().last_run().unwrap().unwrap();
    assert_eq!(run.status, "interrupted");
    let stored = setup.store().run_results(run.id, None).unwrap().len();
    assert!(
        (3..PAGES).contains(&stored),
        "{stored} results stored before the stop"
    );
}

/// A `check` stopped by Ctrl-C exits 130, never 0, and says what to do
/// (it has no configuration to resume).
#[test]
fn an_interrupted_check_is_no_success() {
    let web = TestWeb::start(slow_web());
    let dir = tempfile::tempdir().unwrap();
    let top = web.url("a.example", "/p0.html");
    let mut cmd = common::command();
    cmd.args(["check", &top, "--delay", "0s", "--no-sitemap"])
        .args(["--resolve", "a.example=127.0.0.1"])
        .arg("--store")
        .arg(dir.path().join("c.db"));
    let out = signalled_after_three_pages(&mut cmd, &web, libc::SIGINT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(
        stdout.contains("interrupted: what was checked is stored; check again to finish"),
        "{stdout}"
    );
}

#[test]
fn a_second_crawl_on_the_same_store_is_refused_until_the_first_is_gone() {
    let web = TestWeb::start(slow_web());
    let setup = Setup::new(&web, TASK);
    let start = || {
        common::command()
            .args(["-q", "crawl"])
            .arg(&setup.config_path)
            .spawn()
            .expect("start spinneret")
    };
    let mut first = start();
    let deadline = Instant::now() + Duration::from_secs(20);
    while page_requests(&web).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let first_run = setup.store().last_run().unwrap().unwrap().id;
    let out = common::crawl(&setup, &[]);
    let stderr = common::expect_exit(&out, 2);
    let store = setup.path().join("store.db");
    assert!(
        stderr.starts_with(&format!(
            "spinneret: the store {} is in use by another crawl (process {} since ",
            store.display(),
            first.id()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("another store (--store)"), "{stderr}");
    // It touched nothing: no run of its own, the first still running.
    let last = setup.store().last_run().unwrap().unwrap();
    assert_eq!((last.id, last.status.as_str()), (first_run, "running"));
    // A crawl killed outright leaves no lock behind.
    first.kill().unwrap();
    first.wait().unwrap();
    let out = common::crawl(&setup, &["--resume"]);
    common::expect_exit(&out, 0);
    let last = setup.store().last_run().unwrap().unwrap();
    assert_eq!((last.id, last.status.as_str()), (first_run, "finished"));
}

/// A run is finished only when its report stage is: killed in the report
/// stage, `--resume` writes the reports without asking the web again.
#[test]
fn a_crawl_killed_in_its_report_stage_writes_its_reports_on_resume() {
    let web = TestWeb::start(spinneret_tests::fixtures::maintenance_web());
    let task =
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n";
    // A reporter that spins in `finish` for a minute holds the report stage open.
    let slow = format!(
        "\n[[plugin]]\nname = \"slow\"\nsource = {:?}\ntime = \"60s\"\n[plugin.config]\nbehave = \"loop\"\n",
        env!("TEST_PLUGIN_HOSTILE_REPORTER")
    );
    let setup = Setup::new(&web, &format!("{task}{slow}"));
    let mut child = common::command()
        .args(["-q", "crawl"])
        .arg(&setup.config_path)
        .spawn()
        .expect("start spinneret");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let status = setup.store().last_run().unwrap().map(|r| r.status);
        if status.as_deref() == Some("crawled") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the crawl did not reach its report stage"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let run = setup.store().last_run().unwrap().unwrap();
    assert_eq!(
        run.status, "crawled",
        "killed in the report stage is not finished"
    );

    // Without the slow reporter, --resume runs the report stage alone.
    let config = std::fs::read_to_string(&setup.config_path).unwrap();
    std::fs::write(&setup.config_path, config.replace(&slow, "\n")).unwrap();
    web.clear_log();
    let out = common::crawl(&setup, &["--resume"]);
    common::expect_exit(&out, 1);
    assert!(
        web.requests().is_empty(),
        "{:?}",
        web.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let store = setup.store();
    let again = store.last_run().unwrap().unwrap();
    assert_eq!((again.id, again.status.as_str()), (run.id, "finished"));
    let findings = store.findings(run.id, None).unwrap();
    assert!(findings.iter().any(|f| f.kind == "broken"), "{findings:?}");
    let index = std::fs::read_to_string(setup.path().join("reports/A/index.html")).unwrap();
    assert!(index.contains("missing.html"));
    assert!(setup.path().join("reports/A/report.jsonl").exists());
}

/// A full disk in the report stage: the stage fails with a clear message
/// and exit 2, the run stays `crawled` and unmailed, and `--resume` writes
/// the reports once there is room, without asking the web again. (The
/// output directory is a 4 KiB tmpfs in a mount namespace of the run's
/// own, made with `unshare`.)
#[test]
fn a_full_disk_in_the_report_stage_fails_the_run_and_resume_writes_the_reports() {
    let web = TestWeb::start(spinneret_tests::fixtures::maintenance_web());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n",
    );
    let out_dir = setup.path().join("reports/A");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg(r#"mount -t tmpfs -o size=4k tmpfs "$1" && shift && exec "$@""#)
        .arg("sh")
        .arg(&out_dir)
        .arg(env!("CARGO_BIN_EXE_spinneret-e2e"))
        .args(["-q", "crawl"])
        .arg(&setup.config_path)
        .output()
        .expect("run unshare");
    let said = common::expect_exit(&out, 2);
    assert!(
        said.contains("the report stage could not write its reports:"),
        "{said}"
    );
    assert!(said.contains("No space left on device"), "{said}");
    assert!(
        said.contains("stays crawled, its results kept and no mail sent: make room (or make the output directory writable), then run the same command with --resume to write the reports"),
        "{said}"
    );
    let run = setup.store().last_run().unwrap().unwrap();
    assert_eq!(run.status, "crawled");
    // The tmpfs went with the namespace: nothing was written here.
    assert!(!out_dir.join("index.html").exists());

    web.clear_log();
    let out = common::crawl(&setup, &["--resume"]);
    common::expect_exit(&out, 1);
    assert!(web.requests().is_empty());
    let again = setup.store().last_run().unwrap().unwrap();
    assert_eq!((again.id, again.status.as_str()), (run.id, "finished"));
    let index = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(index.contains("missing.html"), "{index}");
}

/// What a failed or killed report left is removed by the next run: the
/// new versions a killed run was appending (`.NAME.pending-PID`) and the
/// whole files it had not put in place (`NAME.tmp-PID`), at any depth; and
/// a reporter cut off at its output cap leaves none of its files.
#[test]
fn what_a_failed_or_killed_report_left_is_removed() {
    let web = TestWeb::start(spinneret_tests::fixtures::maintenance_web());
    let flood = format!(
        "\n[[plugin]]\nname = \"flood\"\nsource = {:?}\noutput = \"1MiB\"\n[plugin.config]\nbehave = \"flood\"\n",
        env!("TEST_PLUGIN_HOSTILE_REPORTER")
    );
    let setup = Setup::new(
        &web,
        &format!(
            "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n{flood}"
        ),
    );
    let out_dir = setup.path().join("reports/A");
    std::fs::create_dir_all(out_dir.join("sub")).unwrap();
    let left = [
        ".index.html.pending-4194301",
        ".report.jsonl.pending-4194301",
        "sub/.documents.part.pending-4194302",
        "index.html.tmp-4194301",
    ];
    // Another name, or a running process's (PID 1 always runs), is kept.
    let kept = [
        ".notes.pending-me",
        "mine.tmp-draft",
        "sub/keep.txt",
        ".index.html.pending-1",
        "other.tmp-1",
    ];
    for f in left.iter().chain(&kept) {
        std::fs::write(out_dir.join(f), "x").unwrap();
    }
    let out = common::crawl(&setup, &[]);
    common::expect_exit(&out, 1);
    for f in left {
        assert!(!out_dir.join(f).exists(), "{f} was left");
    }
    for f in kept {
        assert!(out_dir.join(f).exists(), "{f} was removed");
    }
    // The flood reporter was cut off at its cap: none of its files stay,
    // and the other reporters' reports are whole.
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') || n.contains("pending"))
        .collect();
    names.sort();
    assert!(names.iter().all(|n| !n.starts_with("flood-")), "{names:?}");
    assert!(out_dir.join("index.html").exists() && out_dir.join("report.jsonl").exists());
}
