//! What every end-to-end test needs: the spinneret binary built for the
//! tests, run the way a user runs it.

use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_tests::harness::Setup;
use std::process::{Command, Output};

/// A command for the spinneret binary built for these tests.
pub(crate) fn command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spinneret-e2e"))
}

/// Runs spinneret with `args` and waits for it.
pub(crate) fn spinneret(args: &[&str]) -> Output {
    command().args(args).output().expect("run spinneret")
}

/// Writes `profile` as `dir/profile.toml` and runs `spinneret collect` on it.
pub(crate) fn collect(dir: &std::path::Path, profile: &str) -> Output {
    let path = dir.join("profile.toml");
    std::fs::write(&path, profile).expect("write the profile");
    spinneret(&["collect", path.to_str().expect("a UTF-8 path")])
}

/// `spinneret -q crawl CONFIG EXTRA...` on a test setup.
pub(crate) fn crawl(setup: &Setup, extra: &[&str]) -> Output {
    crawl_command(setup, extra)
        .output()
        .expect("run spinneret crawl")
}

/// [`crawl`] with the report stage's plugins on `workers` threads
/// (`SPINNERET_REPORT_WORKERS`), whatever the machine's cores.
pub(crate) fn crawl_with_report_workers(setup: &Setup, workers: usize) -> Output {
    crawl_command(setup, &[])
        .env("SPINNERET_REPORT_WORKERS", workers.to_string())
        .output()
        .expect("run spinneret crawl")
}

fn crawl_command(setup: &Setup, extra: &[&str]) -> Command {
    let mut command = command();
    command
        .args(["-q", "crawl"])
        .arg(&setup.config_path)
        .args(extra);
    command
}

/// Asserts the exit status (showing stderr when it differs) and returns
/// stderr.
pub(crate) fn expect_exit(out: &Output, code: i32) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    stderr
}

/// Assert that `out` is a refusal (exit status 2) whose message says
/// `why`; its standard error.
pub(crate) fn expect_refusal(out: &Output, why: &str) -> String {
    let stderr = expect_exit(out, 2);
    assert!(stderr.contains(why), "expected `{why}` in: {stderr}");
    stderr
}

/// Bytes as text, lossily.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The last run's plugin failures in `setup`'s store, as (URL, plugin,
/// message), sorted.
pub(crate) fn plugin_failures(setup: &Setup) -> Vec<(String, String, String)> {
    let mut failures: Vec<_> = last_findings(setup, "plugin-failure")
        .into_iter()
        .map(|f| (f.url, f.source, f.message))
        .collect();
    failures.sort();
    failures
}

/// The last run's findings of `kind` in `setup`'s store, in their order.
pub(crate) fn last_findings(setup: &Setup, kind: &str) -> Vec<spinneret_store::FindingRow> {
    let store = setup.store();
    let run_id = store.last_run().unwrap().unwrap().id;
    store
        .findings(run_id, None)
        .unwrap()
        .into_iter()
        .filter(|f| f.kind == kind)
        .collect()
}

/// The run a plugin test hands a reporter: run 1, started at 0.
pub(crate) fn plugin_run() -> wit::RunInfo {
    wit::RunInfo {
        id: 1,
        started_at: 0,
        previous_run: None,
        host_version: "0.3.0".into(),
        options: "{}".into(),
    }
}

/// The task a plugin test hands a plugin: site task `T` of
/// `http://a.example/`.
pub(crate) fn plugin_task() -> wit::TaskInfo {
    wit::TaskInfo {
        name: "T".into(),
        kind: wit::TaskKind::Site,
        top: "http://a.example/".into(),
        email: None,
        changed_days: 7,
        expiring_days: 7,
    }
}

/// A running `spinneret serve` and where it listens (`base`, without a
/// trailing slash); stopped when dropped.
pub(crate) struct Served {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `spinneret serve ARGS` on a free loopback port.
pub(crate) fn serve(args: &[&std::ffi::OsStr]) -> Served {
    serve_with(command(), args)
}

/// [`serve`] as `cmd` runs it (with its environment).
pub(crate) fn serve_with(mut cmd: Command, args: &[&std::ffi::OsStr]) -> Served {
    use std::io::{BufRead, BufReader};
    let mut child = cmd
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spinneret serve starts");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines.next().expect("serve says where it listens").unwrap();
        if let Some(rest) = line.strip_prefix("serving ") {
            break rest
                .split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches('/')
                .to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Served { child, base }
}

/// The bundled example (its path) and a copy of it in a temporary
/// directory, as the repository holds it: no store, report or mirror of an
/// earlier run (so a test leaves the working tree clean).
pub(crate) fn example_copy() -> (std::path::PathBuf, tempfile::TempDir) {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../example");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut todo = vec![std::path::PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for e in std::fs::read_dir(example.join(&rel)).unwrap().flatten() {
            let name = rel.join(e.file_name());
            let top = rel.as_os_str().is_empty();
            let s = name.to_string_lossy();
            if top && (s == "mirror" || s == "report" || s.contains(".db")) {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(dir.path().join(&name)).unwrap();
                todo.push(name);
            } else {
                std::fs::copy(e.path(), dir.path().join(&name)).unwrap();
            }
        }
    }
    (example, dir)
}

/// `GET path` from a [`Served`] server, over a connection of its own:
/// the status, the headers (lower-case names) and the body.
pub(crate) fn get(s: &Served, path: &str) -> (u16, Vec<(String, String)>, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(s.base.trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    stream.read_to_end(&mut got).unwrap();
    let got = String::from_utf8(got).unwrap();
    let (head, body) = got.split_once("\r\n\r\n").expect("a response head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
        .collect();
    (status, headers, body.to_string())
}

/// A profile's `[[engine]]` entries, each `(name, path)` a SearXNG engine
/// whose `base` is `base` + `/path/` (the test web's results there).
pub(crate) fn searxng_engines(base: &str, engines: &[(&str, &str)]) -> String {
    engines
        .iter()
        .map(|(name, path)| {
            format!(
                "[[engine]]\nname = \"{name}\"\nsource = \"builtin:searxng\"\nconfig = {{ base = \"{base}/{path}/\" }}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
