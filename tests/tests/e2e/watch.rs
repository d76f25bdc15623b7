//! `spinneret watch`: runs on a schedule until SIGTERM, which it obeys
//! cleanly; a task without a schedule is a usage error.

use crate::common::{self, text};
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;
use std::time::{Duration, Instant};

const TASK: &str =
    "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n";

#[test]
fn watch_runs_again_and_again_until_sigterm() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(
        &web,
        &format!("schedule = \"1s\"\nresult_max_age = \"0s\"\n{TASK}"),
    );
    let child = common::command()
        .args(["-q", "watch"])
        .arg(&setup.config_path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let last = setup.store().last_run().unwrap();
        if last.is_some_and(|r| r.id >= 2 && r.status == "finished") {
            break;
        }
        assert!(Instant::now() < deadline, "no second run within 30 s");
    }
    // SAFETY: sending a signal to our own child process.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let stopped_at = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stopped_at.elapsed() < Duration::from_secs(10));
    // Every run it started is stored, finished or cleanly interrupted; the
    // server saw robots.txt and the pages again in the later runs.
    let last = setup.store().last_run().unwrap().unwrap();
    assert!(
        matches!(last.status.as_str(), "finished" | "interrupted"),
        "{last:?}"
    );
    assert!(web.methods("a.example", "/index.html").len() >= 2);
    // Each run wrote the index again; the prior version is kept.
    assert!(setup.path().join("reports/A/index.prior.html").is_file());
}

#[test]
fn a_task_without_a_schedule_is_refused() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    let out = common::spinneret(&["watch", setup.config_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("spinneret: task `A` has no schedule;"),
        "{}",
        text(&out.stderr)
    );
    let out = common::spinneret(&[
        "watch",
        "--schedule",
        "soon",
        setup.config_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("neither an interval"),
        "{}",
        text(&out.stderr)
    );
}

/// A profile's entries run at their own schedules: the hourly page is
/// collected again, the weekly one is not asked again but carried forward,
/// so the newest run (the only one kept) and its index still have it.
#[test]
fn watch_collects_each_profile_entry_at_its_own_schedule() {
    use spinneret_tests::server::{Route, Site, Web};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let n = Arc::new(AtomicUsize::new(0));
    let m = n.clone();
    let site = Site::new()
        .page("/weekly.html", "<title>Weekly</title><img src=\"w.png\">")
        .route("/w.png", Route::file("image/png", "PNG"))
        .generated(Arc::new(move |path: &str| {
            (path == "/news.html").then(|| {
                Route::html(format!(
                    "<title>News</title>edition {}",
                    m.fetch_add(1, Ordering::SeqCst)
                ))
            })
        }));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        format!(
            "keep_runs = 1\n\n[[url]]\nurl = \"{base}/news.html\"\nschedule = \"1s\"\n\n\
             [[url]]\nurl = \"{base}/weekly.html\"\ncategory = \"Reference\"\nschedule = \"7d\"\n"
        ),
    )
    .unwrap();
    let mut child = common::command()
        .args(["-q", "watch"])
        .arg(&profile)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mirror = dir.path().join("mirror");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !mirror.join("runs/0003/index.html").is_file() {
        std::thread::sleep(Duration::from_millis(100));
        if Instant::now() >= deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("no third run within 30 s: {}", text(&out.stderr));
        }
    }
    // SAFETY: sending a signal to our own child process.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked = |p: &str| web.requests().iter().filter(|r| r.path == p).count();
    assert_eq!(asked("/weekly.html"), 1, "the weekly page is asked once");
    assert_eq!(asked("/w.png"), 1);
    assert!(asked("/news.html") >= 3);
    // keep_runs = 1: the first run is gone, its weekly files live on.
    assert!(!mirror.join("runs/0001").exists());
    let host = format!("127.0.0.1_{}", web.port());
    let newest = (3..100)
        .take_while(|n| mirror.join(format!("runs/{n:04}/index.html")).is_file())
        .last()
        .unwrap();
    let run = mirror.join(format!("runs/{newest:04}"));
    assert_eq!(
        std::fs::read_to_string(run.join(format!("Reference/{host}/weekly.html"))).unwrap(),
        "<title>Weekly</title><img src=\"w.png\">"
    );
    assert!(run.join(format!("Reference/{host}/w.png")).is_file());
    let index = std::fs::read_to_string(run.join("index.html")).unwrap();
    assert!(
        index.contains(&format!(
            "<li class=\"carried\"><a class=\"local\" href=\"Reference/{host}/weekly.html\">Weekly</a>"
        )),
        "{index}"
    );
    assert!(
        index.contains("<li class=\"changed\"><a class=\"local\" href=\"URLs/"),
        "the news changed again: {index}"
    );
    // The run that fetched the weekly files is gone, and its WARC with it:
    // their records were copied into each later run's.
    assert!(!mirror.join("runs/0001.warc.gz").exists());
    if let Some(warcio) = crate::snatch::warcio() {
        let warc = mirror.join(format!("runs/{newest:04}.warc.gz"));
        let records = crate::snatch::warc_records(&warcio, &warc);
        let of = |path: &str| -> Vec<(String, String)> {
            records
                .iter()
                .filter(|r| r.1 == format!("{base}{path}"))
                .map(|r| (r.0.clone(), r.2.clone()))
                .collect()
        };
        let exchange = [
            ("request".to_string(), String::new()),
            ("response".to_string(), "200".to_string()),
        ];
        assert_eq!(of("/weekly.html"), exchange, "{records:?}");
        assert_eq!(of("/w.png"), exchange, "{records:?}");
    }
}

#[test]
fn a_profile_entry_without_a_schedule_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(&profile, "[[url]]\nurl = \"https://e.example/\"\n").unwrap();
    let out = common::spinneret(&["watch", profile.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "spinneret: url https://e.example/ (URLs) has no schedule; give it `schedule = \"6h\"` (or \"02:30\"), set `schedule` for the whole profile, or pass --schedule\n"
    );
}
