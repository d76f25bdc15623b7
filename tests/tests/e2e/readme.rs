//! The README, line by line: every command of its shell blocks is
//! classified in [`COMMANDS`], and each that runs with no network is run as
//! the README has a reader run it, in a copy of the repository's `example/`
//! (a temporary directory stands for the repository's root), its exit
//! status and what the README shows of its output checked. A command the
//! README gains fails [`every_shell_command_of_the_readme_is_classified`]
//! until it is classified here; one it loses, too.
//!
//! `cargo run --release -- ARGS` runs the binary these tests were built
//! with, as does `spinneret ARGS`. The quick start's configuration runs as
//! the README writes it, but for its tops, which become the bundled
//! example's pages (`https://www.example.org/` is the network), and its
//! `[mail]` server, which becomes a loopback SMTP server of the test's.

use crate::common::{self, expect_exit, text};
use spinneret_tests::smtp::SmtpSink;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the test does with one command of the README.
#[derive(Clone, Copy, Debug)]
enum Way {
    /// Run it and wait: the exit status the README gives it.
    Run(i32),
    /// `watch`: started, its first run awaited, stopped with SIGTERM
    /// (exit status 0).
    Watch,
    /// `serve`: started on a free loopback port (the README's 8080 may be
    /// taken), its pages asked for, stopped.
    Serve,
    /// Not run, and why.
    Skip(&'static str),
}

/// Every command of the README's `sh` blocks, in its order (its comment
/// left out), and what the test does with it.
const COMMANDS: &[(&str, Way)] = &[
    (
        "cargo install --path host",
        Way::Skip(
            "builds the release binary and installs it in ~/.cargo/bin: the test runs the binary it was built with",
        ),
    ),
    (
        "cargo run --release -- crawl example/spinneret.toml",
        Way::Run(1),
    ),
    ("cargo test --workspace", Way::Skip("the test suite itself")),
    (
        "spinneret check https://www.example.org/ --from you@example.org",
        Way::Skip(
            "needs the network (www.example.org); check on sites and local trees: check_outcomes, check_inputs",
        ),
    ),
    ("spinneret crawl spinneret.toml", Way::Run(1)),
    ("spinneret watch spinneret.toml", Way::Watch),
    (
        "spinneret results -c spinneret.toml --category broken",
        Way::Run(1),
    ),
    ("spinneret results -c spinneret.toml --json", Way::Run(1)),
    (
        "cargo run --release -- collect example/websnatcher.toml",
        Way::Run(1),
    ),
    (
        "cargo run --release -- search -c example/spinneret.toml guide",
        Way::Run(0),
    ),
    (
        "cargo run --release -- serve -c example/spinneret.toml",
        Way::Serve,
    ),
];

/// The repository's README.
fn readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    std::fs::read_to_string(path).expect("README.md")
}

/// The fenced blocks of `markdown` whose info string is `lang`, in order.
fn blocks<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = markdown;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let end = after.find("```").expect("a fenced block is closed");
        found.push(&after[..end]);
        rest = &after[end + 3..];
    }
    found
}

/// The commands of the README's `sh` blocks: each line that is not a
/// comment, without its trailing comment.
fn shell_commands(markdown: &str) -> Vec<String> {
    blocks(markdown, "sh")
        .into_iter()
        .flat_map(str::lines)
        .map(|line| match line.find(" #") {
            Some(i) => line[..i].trim(),
            None => line.trim(),
        })
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_shell_command_of_the_readme_is_classified() {
    let found = shell_commands(&readme());
    let classified: Vec<&str> = COMMANDS.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        found, classified,
        "the README's shell commands (left) and those readme.rs classifies (right) differ: \
         classify each new command in COMMANDS (run, or skipped with the reason)"
    );
}

#[test]
fn the_line_reader_takes_commands_and_leaves_comments() {
    let md =
        "x\n```sh\n# a comment\nspinneret a b   # says\n\ncargo c\n```\n```text\nnot this\n```\n";
    assert_eq!(shell_commands(md), ["spinneret a b", "cargo c"]);
}

/// The README's words for the run a command has: the binary's arguments.
fn arguments(line: &str) -> Vec<&str> {
    assert!(
        !line.contains(['"', '\'', '$', '|', '>', '<', '*']),
        "`{line}`: the test splits a command at spaces; teach it quoting first"
    );
    let rest = line
        .strip_prefix("cargo run --release -- ")
        .or_else(|| line.strip_prefix("spinneret "))
        .unwrap_or_else(|| panic!("`{line}` is run, but is no spinneret command"));
    rest.split_whitespace().collect()
}

/// A copy of the repository's `example/` under `root`, as a clean clone
/// has it (no store, report or mirror of an earlier run).
fn copy_example(root: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../example");
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for e in std::fs::read_dir(from.join(&rel)).unwrap().flatten() {
            let name = rel.join(e.file_name());
            let s = name.to_string_lossy();
            if rel.as_os_str().is_empty() && (s == "mirror" || s == "report" || s.contains(".db")) {
                continue;
            }
            let to = root.join("example").join(&name);
            if e.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
                todo.push(name);
            } else {
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(e.path(), &to).unwrap();
            }
        }
    }
}

/// The quick start's configuration as the README writes it, its tops the
/// bundled example's pages and its mail server `smtp`'s.
fn quick_start_config(readme: &str, smtp: &SmtpSink) -> String {
    let mut config = readme
        .split("**A configuration with two tasks**")
        .nth(1)
        .and_then(|rest| blocks(rest, "toml").into_iter().next())
        .expect("the quick start has a configuration")
        .to_string();
    let mail = format!("server = \"127.0.0.1\"\nport = {}", smtp.port());
    for (written, meant) in [
        (
            "\"https://www.example.org/docs/\"",
            "\"example/web/docs/index.html\"",
        ),
        ("\"https://www.example.org/\"", "\"example/web/index.html\""),
        ("server = \"localhost\"", mail.as_str()),
    ] {
        assert!(config.contains(written), "no {written} in:\n{config}");
        config = config.replace(written, meant);
    }
    config
}

/// A spinneret command in the README's working directory `root`, its
/// data and home directories in it too.
fn in_root(root: &Path) -> Command {
    let mut cmd = common::command();
    cmd.current_dir(root)
        .env("HOME", root.join("home"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env_remove("EMAIL");
    cmd
}

/// The README's quick-start output with `/…/example` for where the
/// example is and the run's time left out, against the crawl's.
fn assert_shows(readme: &str, root: &Path, stdout: &str) {
    let shown = readme
        .split("crawl example/spinneret.toml`):\n\n```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README's quick start shows the example's output");
    let example = root.join("example").canonicalize().unwrap();
    let real = stdout.replace(&example.display().to_string(), "/…/example");
    let untimed = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| match l.find(" requests in ") {
                Some(i) => l[..i].to_string(),
                None => l.to_string(),
            })
            .collect()
    };
    assert_eq!(untimed(shown), untimed(&real), "the crawl printed:\n{real}");
}

/// What the README says of a command's output, where it says something.
fn assert_output(line: &str, readme: &str, root: &Path, stdout: &str, stderr: &str) {
    match line {
        "cargo run --release -- crawl example/spinneret.toml" => {
            assert_shows(readme, root, stdout);
            assert!(root.join("example/report/example/index.html").is_file());
        }
        "spinneret crawl spinneret.toml" => {
            // The configuration mails its owner through its [mail] table:
            // no warning that the mail goes nowhere.
            assert!(!stderr.contains("[mail]"), "{stderr}");
            assert!(root.join("report/docs/index.html").is_file());
        }
        "spinneret results -c spinneret.toml --category broken" => {
            // "each with the pages to fix"
            let lines: Vec<&str> = stdout.lines().skip(1).collect();
            assert!(!lines.is_empty(), "{stdout}");
            for pair in lines.chunks(2) {
                assert!(pair[0].starts_with("broken "), "{stdout}");
                assert!(pair[1].starts_with("    from "), "{stdout}");
            }
        }
        "spinneret results -c spinneret.toml --json" => {
            // "JSON Lines, one URL a line"
            for l in stdout.lines() {
                let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
                assert!(v["url"].is_string(), "{l}");
            }
            assert!(stdout.lines().count() > 1, "{stdout}");
        }
        "cargo run --release -- collect example/websnatcher.toml" => {
            assert!(root.join("example/mirror/index.html").is_file());
        }
        "cargo run --release -- search -c example/spinneret.toml guide" => {
            assert!(stdout.contains("The Guide"), "{stdout}");
        }
        _ => {}
    }
}

/// `watch`: its first run, then SIGTERM.
fn watch(root: &Path, args: &[&str]) {
    let mut child = in_root(root)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spinneret watch starts");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.starts_with("run ") => break,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!("watch ran nothing ({e}): {}", text(&out.stderr));
            }
        }
    }
    // SAFETY: sending a signal to our own child process.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    expect_exit(&out, 0);
}

/// `serve`: its pages, then stopped.
fn serve(root: &Path, args: &[&str]) {
    assert_eq!(args[0], "serve");
    let rest: Vec<&std::ffi::OsStr> = args[1..].iter().map(std::ffi::OsStr::new).collect();
    let served = common::serve_with(in_root(root), &rest);
    for (path, status) in [("/", 200), ("/reports", 200), ("/api/search?q=guide", 200)] {
        let (got, _, body) = common::get(&served, path);
        assert_eq!(got, status, "{path}: {body}");
    }
    let (got, _, _) = common::get(&served, "/library");
    assert!(matches!(got, 200 | 303), "/library: {got}");
}

#[test]
fn the_readmes_commands_do_what_it_says() {
    let readme = readme();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_example(root);
    let smtp = SmtpSink::start();
    std::fs::write(
        root.join("spinneret.toml"),
        quick_start_config(&readme, &smtp),
    )
    .unwrap();
    let mut skipped = Vec::new();
    for line in shell_commands(&readme) {
        let way = COMMANDS
            .iter()
            .find(|(c, _)| *c == line)
            .map(|(_, w)| *w)
            .unwrap_or_else(|| panic!("`{line}` is not classified in COMMANDS"));
        match way {
            Way::Skip(why) => skipped.push(format!("{line}: {why}")),
            Way::Watch => watch(root, &arguments(&line)),
            Way::Serve => serve(root, &arguments(&line)),
            Way::Run(status) => {
                let out = in_root(root).args(arguments(&line)).output().unwrap();
                let stderr = text(&out.stderr);
                assert_eq!(
                    out.status.code(),
                    Some(status),
                    "`{line}`: the README says exit status {status}\n{stderr}"
                );
                assert_output(&line, &readme, root, &text(&out.stdout), &stderr);
            }
        }
    }
    // The quick start's owner was mailed about the broken link of the
    // Docs task, through the [mail] table's server (each run).
    let mail = smtp.messages();
    assert!(!mail.is_empty(), "no mail reached the [mail] server");
    assert!(
        mail.iter().all(|m| m.to == ["docs@example.org"]),
        "{mail:?}"
    );
    eprintln!("not run:\n  {}", skipped.join("\n  "));
}

/// The README's exit statuses are those `spinneret --help` gives.
#[test]
fn the_readmes_exit_statuses_are_the_programs() {
    let readme = readme();
    let section = readme
        .split("## Exit status\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the README has an exit status section");
    let statuses: Vec<u8> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next()?.parse().ok())
        .collect();
    let out = common::spinneret(&["--help"]);
    let help = text(&out.stdout).replace('\n', " ");
    let paragraph = help
        .split("Exit status: ")
        .nth(1)
        .expect("--help gives the exit statuses");
    let given: Vec<u8> = (0..=9)
        .chain([130])
        .filter(|n| {
            paragraph.contains(&format!(" {n} when"))
                || paragraph.contains(&format!(" {n} for"))
                || paragraph.starts_with(&format!("{n} when"))
        })
        .collect();
    assert_eq!(statuses, given, "README's statuses against --help's");
}

/// Every link of the README, and of the pages of docs/ it leads to, is
/// there, to the place it names (`check` reads Markdown, its headings the
/// places of `#fragments`; with `--offline` the web's links are left out).
#[test]
fn the_readmes_links_lead_somewhere() {
    let dir = tempfile::tempdir().unwrap();
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let out = common::command()
        .env("HOME", dir.path())
        .args(["check", readme, "--offline", "--from", "t@example.org"])
        .arg("--store")
        .arg(dir.path().join("check.db"))
        .output()
        .unwrap();
    // A broken link or fragment is exit status 1, with the link on stdout.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
