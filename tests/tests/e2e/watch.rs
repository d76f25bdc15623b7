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
