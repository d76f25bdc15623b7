//! WebSnatcher's profiles and command line as a user meets them: editing a
//! profile, quiet output, names a run cannot write, watching with
//! `--resolve`, engines checked when added, exclusions that are no failure.

use crate::common::{command, expect_exit, spinneret, text};
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// `spinneret profile ARGS…`, expected to exit with `code`; its stderr.
fn profile(args: &[&str], code: i32) -> String {
    let mut all = vec!["profile"];
    all.extend_from_slice(args);
    expect_exit(&spinneret(&all), code)
}

/// `profile remove` takes the entry and the comment right above it, and
/// nothing else: not the new profile's commented settings (which sat above
/// its first `[[url]]`), not a comment closing the entry before, not a
/// heading over several entries.
#[test]
fn profile_remove_takes_the_entry_and_its_own_comment_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("news.toml");
    let f = file.to_str().unwrap();
    profile(&["new", f, "--url", "https://news.example/"], 0);
    let template = std::fs::read_to_string(&file).unwrap();
    assert!(
        template.contains("mirror = \"mirror\"\n# keep_runs = 1 ")
            && template.contains("# exclude = []             # URLs not of interest, never fetched\n\n[[url]]\nurl = \"https://news.example/\"\n"),
        "{template}"
    );
    profile(&["add", f, "url", "https://blog.example/"], 0);
    profile(&["remove", f, "url", "https://news.example/"], 0);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        template.replace("https://news.example/", "https://blog.example/")
    );

    let written = "mirror = \"m\"\n\n\
                   # ---- Pages ----\n\n\
                   # The news.\n[[url]]\nurl = \"https://news.example/\"\n# (read daily)\n\n\
                   # The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\ndepth = 1\n\n\
                   # Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n\n\
                   # The end.\n";
    for (removed, left) in [
        (
            &["url", "https://blog.example/"][..],
            "mirror = \"m\"\n\n\
             # ---- Pages ----\n\n\
             # The news.\n[[url]]\nurl = \"https://news.example/\"\n# (read daily)\n\n\
             # Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n\n\
             # The end.\n",
        ),
        (
            &["url", "https://news.example/"],
            "mirror = \"m\"\n\n\
             # ---- Pages ----\n\n\
             # (read daily)\n\n\
             # The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\ndepth = 1\n\n\
             # Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n\n\
             # The end.\n",
        ),
        (
            &["engine", "wiki"],
            "mirror = \"m\"\n\n\
             # ---- Pages ----\n\n\
             # The news.\n[[url]]\nurl = \"https://news.example/\"\n# (read daily)\n\n\
             # The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\ndepth = 1\n\n\
             # The end.\n",
        ),
    ] {
        std::fs::write(&file, written).unwrap();
        let mut args = vec!["remove", f];
        args.extend_from_slice(removed);
        profile(&args, 0);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), left, "{removed:?}");
    }
}

/// A SearXNG engine on loopback for the interests of a profile: under
/// `/found/` it finds the site's page, under `/none/` nothing, and
/// anything else is not there (404). `port` is the web's, set once it
/// runs.
fn engine_site(port: Arc<OnceLock<u16>>) -> Site {
    Site::new()
        .page(
            "/index.html",
            "<title>Home</title><img src=\"a.png\"><a href=\"gone.html\">gone</a>",
        )
        .route("/a.png", Route::file("image/png", "PNG"))
        .generated(Arc::new(move |path: &str| {
            let port = port.get().copied().unwrap_or(0);
            let results = match path {
                p if p.starts_with("/found/search?") => {
                    format!(r#"[{{"url": "http://127.0.0.1:{port}/index.html", "title": "Home"}}]"#)
                }
                p if p.starts_with("/none/search?") => "[]".to_string(),
                _ => return None,
            };
            Some(Route::file(
                "application/json",
                format!(r#"{{"results": {results}}}"#),
            ))
        }))
}

/// `-q` and `-qq` in `collect` as in `crawl`: `-q` says the run in one line
/// and what went wrong (a URL not collected on standard output, an engine
/// that could not be asked on standard error), not the files, the notes or
/// the per-item lines; `-qq` says only the errors. The exit status is the
/// same.
#[test]
fn collect_is_quiet_with_q_and_quieter_with_qq() {
    let port = Arc::new(OnceLock::new());
    let web = TestWeb::start(Web::new().site("127.0.0.1", engine_site(port.clone())));
    let _ = port.set(web.port());
    let base = format!("http://127.0.0.1:{}", web.port());
    let engines = crate::common::searxng_engines(
        &base,
        &[("found", "found"), ("none", "none"), ("broken", "broken")],
    );
    let profile_text = format!(
        r#"per_site_delay = "0s"

[[url]]
url = "{base}/index.html"
depth = 1

[[interest]]
title = "Found"
keywords = ["home"]
engines = ["found", "none", "broken"]

{engines}"#
    );
    let mut said = Vec::new();
    for quiet in [None, Some("-q"), Some("-qq")] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile.toml");
        std::fs::write(&path, &profile_text).unwrap();
        let mut cmd = command();
        cmd.args(quiet).arg("collect").arg(&path);
        let out = cmd.output().unwrap();
        let stderr = expect_exit(&out, 1);
        let mirror = dir.path().join("mirror");
        said.push((text(&out.stdout), stderr, mirror, path, dir));
    }
    let broken = |path: &Path| {
        format!(
            "spinneret: interest `Found`, engine `broken` ({}:23): {base}/broken/search?q=home&format=json&pageno=1 answered 404; the engine gave no results page\n",
            path.display()
        )
    };
    let not_collected = format!("not collected: {base}/gone.html: HTTP 404\n");
    let (stdout, stderr, mirror, path, _dir) = &said[0];
    let run = format!(
        "run 1: 2 items, 4 files, 180 B in {} (3 requests)",
        mirror.join("runs/0001").display()
    );
    let since = "since the last run: 2 new, 0 changed, 0 unchanged, 0 gone";
    assert_eq!(
        stdout,
        &format!(
            "{run}\n{since}\nindex: {}\nweb archive: {}\n{not_collected}note: interest `Found`, engine `none`: the engine found nothing\n",
            mirror.join("index.html").display(),
            mirror.join("runs/0001.warc.gz").display(),
        )
    );
    assert_eq!(stderr, &broken(path));

    let (stdout, stderr, mirror, path, _dir) = &said[1];
    let run = format!(
        "run 1: 2 items, 4 files, 180 B in {} (3 requests)",
        mirror.join("runs/0001").display()
    );
    assert_eq!(stdout, &format!("{run}; {since}\n{not_collected}"));
    assert_eq!(stderr, &broken(path));

    let (stdout, stderr, mirror, path, _dir) = &said[2];
    assert_eq!(stdout, "");
    assert_eq!(stderr, &broken(path));
    // Quiet or not, the run is the same.
    assert!(mirror.join("runs/0001/index.html").is_file());
}

/// `-q` and `-qq` in `query`: `-q` leaves out the URL asked, `-qq` all but
/// errors; `--json`'s lines are what was asked for, and stay.
#[test]
fn query_is_quiet_with_q_and_quieter_with_qq() {
    let port = Arc::new(OnceLock::new());
    let web = TestWeb::start(Web::new().site("127.0.0.1", engine_site(port.clone())));
    let _ = port.set(web.port());
    let base = format!("http://127.0.0.1:{}", web.port());
    let config = format!(r#"{{"base": "{base}/found/"}}"#);
    let query = |quiet: Option<&str>, json: bool| {
        let mut cmd = command();
        cmd.args(quiet)
            .args(["query", "builtin:searxng", "--config", &config, "home"])
            .args(json.then_some("--json"));
        let out = cmd.output().unwrap();
        let stderr = expect_exit(&out, 0);
        (text(&out.stdout), stderr)
    };
    let hits = format!("  1. Home\n     {base}/index.html\n");
    let asked = format!("asked {base}/found/search?q=home&format=json&pageno=1\n");
    assert_eq!(query(None, false), (hits.clone(), asked));
    assert_eq!(query(Some("-q"), false), (hits, String::new()));
    assert_eq!(query(Some("-qq"), false), (String::new(), String::new()));
    let json = format!(
        "{{\"rank\":1,\"snippet\":\"\",\"title\":\"Home\",\"url\":\"{base}/index.html\"}}\n"
    );
    assert_eq!(query(Some("-qq"), true), (json, String::new()));
    // An error is said however quiet.
    let out = spinneret(&[
        "-qq",
        "query",
        "builtin:searxng",
        "--config",
        &format!(r#"{{"base": "{base}/broken/"}}"#),
        "home",
    ]);
    assert_eq!(
        expect_exit(&out, 1),
        format!(
            "spinneret: {base}/broken/search?q=home&format=json&pageno=1 answered 404; the engine gave no results page\n"
        )
    );
    assert_eq!(text(&out.stdout), "");
}

/// A category or an interest titled like the run's own files (its
/// `index.html`, a WARC file, `.spinneret`) is refused when the profile is
/// read, where it is written, before anything is fetched: the run used to
/// fail writing its index.
#[test]
fn a_category_named_like_the_runs_own_files_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.toml");
    let p = path.to_str().unwrap();
    for (profile_text, said) in [
        (
            "[[url]]\nurl = \"http://127.0.0.1:9/\"\n\n[[interest]]\ntitle = \"index.html\"\nkeywords = [\"x\"]\nengines = [\"e\"]\n\n[[engine]]\nname = \"e\"\nsource = \"builtin:searxng\"\nconfig = { base = \"http://127.0.0.1:9/\" }\n",
            format!(
                "spinneret: {p}:5:9: `index.html` cannot be an interest's title (its category): its directory in the run would have the name of the run's index (runs/NNNN/index.html); give the interest another title\n"
            ),
        ),
        (
            "[[url]]\nurl = \"http://127.0.0.1:9/\"\ncategory = \"INDEX.HTML\"\n",
            format!(
                "spinneret: {p}:3:12: `INDEX.HTML` cannot be a category: its directory in the run would have the name of the run's index (runs/NNNN/index.html); give the [[url]] another category\n"
            ),
        ),
        (
            "[[url]]\nurl = \"http://127.0.0.1:9/\"\ncategory = \"0001.warc.gz\"\n",
            format!(
                "spinneret: {p}:3:12: `0001.warc.gz` cannot be a category: its directory in the run would have the name of a run's web archive (runs/NNNN.warc.gz); give the [[url]] another category\n"
            ),
        ),
        (
            "[[url]]\nurl = \"http://127.0.0.1:9/\"\ncategory = \".spinneret\"\n",
            format!(
                "spinneret: {p}:3:12: `.spinneret` cannot be a category: its directory in the run would have the name of the mirror's bookkeeping (.spinneret); give the [[url]] another category\n"
            ),
        ),
    ] {
        std::fs::write(&path, profile_text).unwrap();
        let out = spinneret(&["collect", p]);
        assert_eq!(expect_exit(&out, 2), said);
        assert_eq!(text(&out.stdout), "");
        assert!(!dir.path().join("mirror").exists());
    }
    // Nor does an edit make one.
    std::fs::write(&path, "[[url]]\nurl = \"http://127.0.0.1:9/\"\n").unwrap();
    let stderr = profile(
        &[
            "add",
            p,
            "url",
            "http://127.0.0.1:9/a",
            "--category",
            "index.html",
        ],
        2,
    );
    assert_eq!(
        stderr,
        format!(
            "spinneret: {p}:6:12: `index.html` cannot be a category: its directory in the run would have the name of the run's index (runs/NNNN/index.html); give the [[url]] another category; the profile is unchanged\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "[[url]]\nurl = \"http://127.0.0.1:9/\"\n"
    );
}

/// `watch PROFILE --resolve HOST=ADDRESS` as `collect` takes it, and a
/// profile's own `[resolve]` table under it: the command line's entry
/// stands over the profile's for the same host.
#[test]
fn watch_takes_resolve_and_a_profiles_resolve_table() {
    let web = TestWeb::start(
        Web::new()
            .site("a.test", Site::new().page("/a.html", "<title>A</title>"))
            .site("b.test", Site::new().page("/b.html", "<title>B</title>")),
    );
    let port = web.port();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.toml");
    // b.test's address in the profile is wrong (nothing listens there);
    // the command line's is right.
    std::fs::write(
        &path,
        format!(
            "per_site_delay = \"0s\"\nschedule = \"1h\"\n\n[[url]]\nurl = \"http://a.test:{port}/a.html\"\n\n[[url]]\nurl = \"http://b.test:{port}/b.html\"\n\n[resolve]\n\"a.test\" = \"127.0.0.1\"\n\"B.test\" = \"127.0.0.3\"\n"
        ),
    )
    .unwrap();
    let child = command()
        .args(["-q", "watch"])
        .arg(&path)
        .args(["--resolve", "b.test=127.0.0.1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mirror = dir.path().join("mirror");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !mirror.join("index.html").is_file() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The run is over once it has said so.
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: sending a signal to our own child process.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = expect_exit(&out, 0);
    assert_eq!(
        text(&out.stdout),
        format!(
            "run 1: 2 items, 2 files, 32 B in {} (2 requests); since the last run: 2 new, 0 changed, 0 unchanged, 0 gone\n",
            mirror.join("runs/0001").display()
        ),
        "{stderr}"
    );
    for (host, page, body) in [
        ("a.test", "a.html", "<title>A</title>"),
        ("b.test", "b.html", "<title>B</title>"),
    ] {
        assert_eq!(
            std::fs::read_to_string(mirror.join(format!("runs/0001/URLs/{host}_{port}/{page}")))
                .unwrap(),
            body
        );
    }
    let mut asked: Vec<String> = web
        .requests()
        .into_iter()
        .map(|r| format!("{} {}", r.host, r.path))
        .collect();
    asked.sort();
    assert_eq!(
        asked,
        [
            "a.test /a.html",
            "a.test /robots.txt",
            "b.test /b.html",
            "b.test /robots.txt",
        ]
    );

    // `collect` reads the profile's table too; without the command line's
    // entry, b.test is at the profile's (wrong) address.
    let out = spinneret(&["-q", "collect", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    expect_exit(&out, 1);
    assert!(
        stdout.contains(&format!("not collected: http://b.test:{port}/b.html: "))
            && !stdout.contains("a.test"),
        "{stdout}"
    );
    // A wrong address in the table is said where it is.
    std::fs::write(
        &path,
        "[[url]]\nurl = \"http://a.test/\"\n\n[resolve]\n\"a.test\" = \"a.example\"\n",
    )
    .unwrap();
    let out = spinneret(&["watch", path.to_str().unwrap(), "--schedule", "1h"]);
    assert_eq!(
        expect_exit(&out, 2),
        format!(
            "spinneret: {}:5:12: [resolve]: `a.example` is not an IP address; write e.g. \"a.test\" = \"127.0.0.1\" or \"::1\"\n",
            path.display()
        )
    );
}

/// `profile add … engine` checks the engine's configuration as `collect`
/// would before a run, and refuses one that would not start, naming what
/// is missing; the profile is unchanged.
#[test]
fn an_engine_is_checked_when_it_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("news.toml");
    let f = file.to_str().unwrap();
    profile(&["new", f, "--url", "https://news.example/"], 0);
    let before = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        profile(
            &["add", f, "engine", "searx", "--source", "builtin:searxng"],
            2
        ),
        format!(
            "spinneret: {f}: engine `searx` (no --config): configure failed: searxng: set `base` to the SearXNG instance's URL, e.g. https://searx.example/; the profile is unchanged\n"
        )
    );
    assert_eq!(
        profile(
            &[
                "add",
                f,
                "engine",
                "searx",
                "--source",
                "builtin:searxng",
                "--config",
                r#"{"base": "ftp://searx.example/"}"#
            ],
            2
        ),
        format!(
            "spinneret: {f}: engine `searx` (--config {{\"base\":\"ftp://searx.example/\"}}): configure failed: searxng: `base` must be an http or https URL, not ftp://searx.example/; the profile is unchanged\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    profile(
        &[
            "add",
            f,
            "engine",
            "searx",
            "--source",
            "builtin:searxng",
            "--config",
            r#"{"base": "https://searx.example/"}"#,
        ],
        0,
    );
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("[[engine]]\nname = \"searx\"\nsource = \"builtin:searxng\"\nconfig = { base = \"https://searx.example/\" }\n")
    );
}

/// Each engine's hits in the index of `mirror`, in order: "ENGINE RANK URL".
fn ranked(mirror: &Path) -> Vec<String> {
    let index = std::fs::read_to_string(mirror.join("index.html")).unwrap();
    let mut ranked = Vec::new();
    for chunk in index.split("<h3>").skip(1) {
        let engine = chunk.split("</h3>").next().unwrap();
        if chunk.contains("No results.") {
            ranked.push(format!("{engine}: none"));
        }
        for li in chunk.split("<li value=\"").skip(1) {
            let rank = li.split('"').next().unwrap();
            let url = li.split("class=\"url\" href=\"").nth(1).unwrap();
            ranked.push(format!(
                "{engine} {rank} {}",
                url.split('"').next().unwrap()
            ));
        }
    }
    ranked
}

/// A search hit the profile excludes is no failure: it takes no place
/// among an interest's `max_results` (the engine is asked for its next
/// page when it can page), is not listed as not collected, and the run
/// exits 0.
#[test]
fn an_excluded_hit_takes_no_place_and_fails_nothing() {
    let port: Arc<OnceLock<u16>> = Arc::new(OnceLock::new());
    let p = port.clone();
    let mut site = Site::new();
    for page in ["one", "two", "three", "four"] {
        site = site.page(&format!("/{page}.html"), &format!("<title>{page}</title>"));
    }
    let site = site.generated(Arc::new(move |path: &str| {
        let port = p.get().copied().unwrap_or(0);
        let hit = |page: &str| {
            format!(r#"{{"url": "http://127.0.0.1:{port}/{page}", "title": "{page}"}}"#)
        };
        let results = match path {
            // The first page: an ad first, then one page of interest.
            x if x.starts_with("/p/search?") && x.ends_with("pageno=1") => {
                format!("[{}, {}]", hit("ads/buy.html"), hit("one.html"))
            }
            x if x.starts_with("/p/search?") && x.ends_with("pageno=2") => {
                format!(
                    "[{}, {}, {}]",
                    hit("two.html"),
                    hit("ads/more.html"),
                    hit("three.html")
                )
            }
            x if x.starts_with("/p/search?") => format!("[{}]", hit("four.html")),
            // Nothing but ads.
            x if x.starts_with("/only-ads/search?") => format!("[{}]", hit("ads/buy.html")),
            _ => return None,
        };
        Some(Route::file(
            "application/json",
            format!(r#"{{"results": {results}}}"#),
        ))
    }));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let _ = port.set(web.port());
    let base = format!("http://127.0.0.1:{}", web.port());
    let engines = crate::common::searxng_engines(&base, &[("p", "p"), ("ads", "only-ads")]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.toml");
    std::fs::write(
        &path,
        format!(
            r#"per_site_delay = "0s"
exclude = ["{base}/ads/"]

[[interest]]
title = "Pages"
keywords = ["page"]
engines = ["p", "ads"]
max_results = 3

{engines}"#
        ),
    )
    .unwrap();
    let out = spinneret(&["collect", path.to_str().unwrap()]);
    let stderr = expect_exit(&out, 0);
    let stdout = text(&out.stdout);
    let mirror = dir.path().join("mirror");
    assert_eq!(
        stdout,
        format!(
            "run 1: 3 items, 3 files, 56 B in {} (3 requests)\nsince the last run: 3 new, 0 changed, 0 unchanged, 0 gone\nindex: {}\nweb archive: {}\nnote: interest `Pages`, engine `ads`: the profile excludes every hit the engine found\n",
            mirror.join("runs/0001").display(),
            mirror.join("index.html").display(),
            mirror.join("runs/0001.warc.gz").display(),
        ),
        "{stderr}"
    );
    assert_eq!(stderr, "");
    // The engine's own ranks, the second page's after the first's; the
    // fourth page of interest was not needed.
    assert_eq!(
        ranked(&mirror),
        [
            format!("p 2 {base}/one.html"),
            format!("p 3 {base}/two.html"),
            format!("p 5 {base}/three.html"),
            "ads: none".to_string(),
        ]
    );
    let asked: Vec<String> = web.requests().into_iter().map(|r| r.path).collect();
    assert!(!asked.iter().any(|p| p.starts_with("/ads/")), "{asked:?}");
    assert_eq!(
        asked
            .iter()
            .filter(|p| p.contains("/search?"))
            .cloned()
            .collect::<Vec<_>>(),
        [
            "/p/search?q=page&format=json&pageno=1",
            "/p/search?q=page&format=json&pageno=2",
            // Its next page has no hit but the ad again: no more are asked.
            "/only-ads/search?q=page&format=json&pageno=1",
            "/only-ads/search?q=page&format=json&pageno=2",
        ]
    );
}
