//! WebSnatcher's saved copies as another tool or a person opens them: the
//! `--archive` copies, the mirror opened offline, the WARC replayed by pywb.

use crate::common::{expect_exit, spinneret, text};
use spinneret::snatch::warc::{ReadRecord, WarcReader};
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A program of pywb (PyPI) on the PATH, or `None` with a note (a failure
/// under CI, which installs it).
fn pywb(program: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "pywb's {program} is not installed; .ci/run installs it (pip install pywb)"
        );
        eprintln!("SKIPPED: pywb is not installed (pip install pywb); the replay did not run");
    }
    found
}

/// A PNG's first bytes and then some that are not text.
const IMAGE_A: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR a \xff\xfe";
const IMAGE_B: &[u8] = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00;";
const REPLAYED_PAGE: &str = r#"<!DOCTYPE html><html><head><title>Replayed</title></head>
<body><img src="/img/a.png"><img src="/img/b.gif"></body></html>"#;

/// Every record of the WARC file at `path`.
fn records(path: &Path) -> Vec<ReadRecord> {
    WarcReader::open(path, 1 << 24)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The HTTP head of a response or revisit record's block.
fn http_head(rec: &ReadRecord) -> &[u8] {
    let end = rec
        .block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(rec.block.len(), |i| i + 4);
    &rec.block[..end]
}

/// A free port on 127.0.0.1 (free when asked).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` from `127.0.0.1:port`: the status and the body.
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(120)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut got = Vec::new();
    stream.read_to_end(&mut got)?;
    let end = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no response head"))?;
    let head = String::from_utf8_lossy(&got[..end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {head}")))?;
    let mut body = got[end + 4..].to_vec();
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Ok((status, body))
}

/// A chunked body's bytes.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&raw[..eol]);
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.extend_from_slice(&raw[eol + 2..eol + 2 + size]);
        raw = &raw[eol + 2 + size + 2..];
    }
    out
}

/// A running `wayback` (pywb), stopped when dropped.
struct Wayback(std::process::Child);

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Three runs with the default `keep_runs = 1`, each after the last (2 s
/// apart: a WARC date is to the second), the images answering 304 in the
/// second and the third. pywb replays the third run's WARC file (the only
/// one kept, which holds the records its revisits refer to): the page
/// and both images come back 200 with the bytes the web served. Before,
/// a 304 was archived as a `server-not-modified` revisit whose head was
/// the 304, which pywb replays as an empty 304.
#[test]
fn pywb_replays_a_third_run_whose_images_answered_304() {
    let site = Site::new()
        .page("/index.html", REPLAYED_PAGE)
        .route(
            "/img/a.png",
            Route::file("image/png", IMAGE_A.to_vec()).etag("\"a1\""),
        )
        .route(
            "/img/b.gif",
            Route::file("image/gif", IMAGE_B.to_vec())
                .last_modified("Tue, 03 Nov 2026 10:00:00 GMT"),
        );
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(&profile, format!("[[url]]\nurl = \"{base}/index.html\"\n")).unwrap();
    let p = profile.to_str().unwrap();
    for run in 1..=3 {
        if run > 1 {
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        web.clear_log();
        expect_exit(&spinneret(&["collect", p]), 0);
        if run > 1 {
            let asked = web.requests();
            let header = |path: &str, name: &str| {
                asked
                    .iter()
                    .find(|r| r.path == path)
                    .and_then(|r| r.header(name).map(str::to_string))
            };
            assert_eq!(
                header("/img/a.png", "if-none-match").as_deref(),
                Some("\"a1\"")
            );
            assert_eq!(
                header("/img/b.gif", "if-modified-since").as_deref(),
                Some("Tue, 03 Nov 2026 10:00:00 GMT")
            );
        }
    }
    let mirror = dir.path().join("mirror");
    let mut kept: Vec<PathBuf> = std::fs::read_dir(mirror.join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    kept.sort();
    assert_eq!(kept, [mirror.join("runs/0003.warc.gz")]);

    replay_in_pywb(
        dir.path(),
        &kept,
        &[
            (format!("{base}/index.html"), REPLAYED_PAGE.as_bytes()),
            (format!("{base}/img/a.png"), IMAGE_A),
            (format!("{base}/img/b.gif"), IMAGE_B),
        ],
    );

    // Each image's revisit: the identical-payload-digest profile, the
    // stored response's head, and the record that holds the body named.
    let recs = records(&kept[0]);
    for (path, body, content_type) in [
        ("/img/a.png", IMAGE_A, "image/png"),
        ("/img/b.gif", IMAGE_B, "image/gif"),
    ] {
        let url = format!("{base}{path}");
        let of = |kind: &str| -> Vec<&ReadRecord> {
            recs.iter()
                .filter(|r| r.kind == kind && r.field("WARC-Target-URI") == Some(&url))
                .collect()
        };
        let (revisits, responses) = (of("revisit"), of("response"));
        assert_eq!((revisits.len(), responses.len()), (1, 1), "{url}");
        let (revisit, original) = (revisits[0], responses[0]);
        assert_eq!(
            revisit.field("WARC-Profile"),
            Some("http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
        );
        assert_eq!(
            revisit.field("WARC-Refers-To"),
            original.field("WARC-Record-ID")
        );
        assert_eq!(
            revisit.field("WARC-Refers-To-Target-URI"),
            original.field("WARC-Target-URI")
        );
        assert_eq!(
            revisit.field("WARC-Refers-To-Date"),
            original.field("WARC-Date")
        );
        assert_eq!(
            revisit.field("WARC-Payload-Digest"),
            original.field("WARC-Payload-Digest")
        );
        assert_eq!(revisit.block, http_head(original), "{url}");
        let head = text(&revisit.block);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(
            head.contains(&format!("\r\ncontent-type: {content_type}\r\n"))
                || head.contains(&format!("\r\nContent-Type: {content_type}\r\n")),
            "{head}"
        );
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("\r\ncontent-length: {}\r\n", body.len())),
            "{head}"
        );
        assert_eq!(&original.block[http_head(original).len()..], body);
    }
}

/// Replay `warcs` in pywb (`wb-manager init` and `add`, then `wayback` on a
/// free loopback port) and assert that each of `expect` (a URL and its
/// bytes) comes back 200 with exactly those bytes, as archived (`id_`: not
/// rewritten), from its newest capture. Skipped without pywb.
fn replay_in_pywb(work: &Path, warcs: &[PathBuf], expect: &[(String, &[u8])]) {
    let (Some(wb_manager), Some(wayback)) = (pywb("wb-manager"), pywb("wayback")) else {
        return;
    };
    let archive = work.join("pywb");
    std::fs::create_dir_all(&archive).unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(&wb_manager)
            .args(args)
            .current_dir(&archive)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wb-manager {args:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    };
    run(&["init".as_ref(), "spin".as_ref()]);
    let mut add: Vec<&std::ffi::OsStr> = vec!["add".as_ref(), "spin".as_ref()];
    add.extend(warcs.iter().map(|p| p.as_os_str()));
    run(&add);
    let port = free_port();
    let _wayback = Wayback(
        Command::new(&wayback)
            .args(["-p", &port.to_string(), "-b", "127.0.0.1", "-t", "2"])
            .current_dir(&archive)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Until it listens (its start takes a few seconds).
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed().as_secs() < 120,
            "wayback did not listen on port {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    for (url, body) in expect {
        // The newest capture, as archived (`id_`: not rewritten).
        let (status, got) = http_get(port, &format!("/spin/29991231000000id_/{url}")).unwrap();
        assert_eq!(
            (status, got.as_slice()),
            (200, *body),
            "{url}: {}",
            String::from_utf8_lossy(&got)
        );
    }
}

/// A 1×1 GIF.
const GIF: &[u8] = &[
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
];

/// A hostile page frames, embeds, shows and links files of the machine
/// the mirror is opened on (`file:` URLs, written as a page may write
/// them: in a frame, an object, an `<iframe srcdoc>`'s page, an image, a
/// stylesheet, a link). Opened offline in Chromium from the mirror and
/// from its `--archive` copy, the page loads none of them: every such
/// reference is `about:blank`. Before, the frame showed the file.
#[test]
fn a_hostile_pages_file_references_load_nothing_offline_nor_in_its_archive_copy() {
    use spinneret_tests::browser::{Browser, chromium};
    let dir = tempfile::tempdir().unwrap();
    // The machine's files a page must not reach.
    let secret = dir.path().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("os-release.html"), "<p>SECRET-OS-RELEASE</p>").unwrap();
    std::fs::write(secret.join("pixel.gif"), GIF).unwrap();
    let file = |name: &str| {
        url::Url::from_file_path(secret.join(name))
            .unwrap()
            .to_string()
    };
    let (frame, pixel) = (file("os-release.html"), file("pixel.gif"));
    let page = format!(
        r#"<!DOCTYPE html><html><head><title>Hostile</title><link rel="stylesheet" href="/s.css"></head><body>
<iframe id="frame" src="{frame}"></iframe>
<iframe id="doc" srcdoc="<iframe id=&quot;inner&quot; src=&quot;{frame}&quot;></iframe>"></iframe>
<object id="object" data="{frame}" type="text/html"></object>
<img id="img" src="{pixel}"><img id="set" srcset="{pixel} 1x"><img id="ok" src="/ok.gif">
<a id="link" href="{frame}">the file</a>
<p id="bg" style="background-image: url('{pixel}')">p</p>
</body></html>"#
    );
    let site = Site::new()
        .page("/index.html", &page)
        .route(
            "/s.css",
            Route::file("text/css", format!("body {{ background: url({pixel}) }}")),
        )
        .route("/ok.gif", Route::file("image/gif", GIF.to_vec()));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let url = format!("http://127.0.0.1:{}/index.html", web.port());
    let profile = dir.path().join("profile.toml");
    std::fs::write(&profile, format!("[[url]]\nurl = \"{url}\"\n")).unwrap();
    let p = profile.to_str().unwrap();
    expect_exit(&spinneret(&["collect", p]), 0);
    expect_exit(&spinneret(&["collect", p, "--archive", &url]), 0);
    drop(web);
    let host = format!(
        "127.0.0.1_{}",
        url.split(':').nth(2).unwrap().split('/').next().unwrap()
    );
    let day = jiff::Zoned::now().date().to_string();
    let mirror = dir.path().join("mirror");
    let copies = [
        mirror.join(format!("runs/0001/URLs/{host}/index.html")),
        mirror.join(format!("Archive/{day}/URLs/{host}/index.html")),
    ];
    for copy in &copies {
        let saved = std::fs::read_to_string(copy).unwrap();
        assert!(!saved.contains("file:"), "{}:\n{saved}", copy.display());
    }
    let css = std::fs::read_to_string(mirror.join(format!("runs/0001/URLs/{host}/s.css"))).unwrap();
    assert_eq!(css, "body { background: url(about:blank) }");

    let Some(chromium) = chromium() else {
        return;
    };
    for copy in &copies {
        let mut b = Browser::start(&chromium);
        b.offline();
        b.open(&format!("file://{}", copy.display()));
        assert_eq!(b.eval("document.title"), "Hostile");
        // Frames wait for their own load.
        b.eval("new Promise(r => setTimeout(() => r(true), 300))");
        let requested = b.requested();
        let secret_url = url::Url::from_directory_path(&secret).unwrap().to_string();
        assert!(
            !requested.iter().any(|u| u.starts_with(&secret_url)),
            "{}: {requested:?}",
            copy.display()
        );
        let shown = |b: &mut Browser, script: &str| b.eval(script);
        let text_of = "(f => { try { return f.contentDocument ? f.contentDocument.documentElement.outerHTML : 'no document'; } catch (e) { return 'unreadable: ' + e; } })";
        assert_eq!(
            shown(
                &mut b,
                &format!("{text_of}(document.getElementById('frame'))")
            ),
            "<html><head></head><body></body></html>",
            "{}",
            copy.display()
        );
        assert_eq!(
            shown(
                &mut b,
                &format!(
                    "{text_of}(document.getElementById('doc').contentDocument.getElementById('inner'))"
                )
            ),
            "<html><head></head><body></body></html>"
        );
        assert_eq!(
            shown(
                &mut b,
                "[...document.images].map(i => i.id + ' ' + (i.complete && i.naturalWidth))"
            ),
            serde_json::json!(["img 0", "set 0", "ok 1"])
        );
        assert_eq!(
            shown(
                &mut b,
                "[document.getElementById('link').href, document.getElementById('object').data]"
            ),
            serde_json::json!(["about:blank", "about:blank"])
        );
    }
}

/// The files under `root`, `/`-separated and relative to it, sorted.
fn files_under(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.push(
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    out.sort();
    out
}

/// `--archive` copies a page with everything it shows: its frame, the
/// frame's image, stylesheet and nested frame, and that frame's image. A
/// link to a page not archived, in the page or in its frame, is the
/// page's original URL (the run's copy links to its saved copy, which the
/// archive does not have). Archived again the same day after the page
/// changed, the second copy gets a name of its own, said by the command
/// and by the archive's index, and the first copy is kept as it was.
/// Before, the frame's image, stylesheet and nested frame were left out,
/// the frame's link stayed relative, and the second copy replaced the
/// first.
#[test]
fn an_archived_page_keeps_its_frames_requisites_and_a_second_copy_of_the_day() {
    let frame = r#"<title>Frame</title><link rel="stylesheet" href="frame.css"><img src="/img/in-frame.gif"><iframe src="nested.html"></iframe><a href="/other.html">other</a>"#;
    let site = Site::new()
        .route(
            "/index.html",
            Route::Sequence(vec![
                Route::html(r#"<title>Top</title><img src="/img/top.gif"><iframe src="/f/frame.html"></iframe><a href="other.html">other</a> first"#),
                Route::html(r#"<title>Top</title><img src="/img/top.gif"><iframe src="/f/frame.html"></iframe><a href="other.html">other</a> second"#),
            ]),
        )
        .page("/f/frame.html", frame)
        .page("/f/nested.html", r#"<img src="/img/nested.gif">"#)
        .page("/other.html", "<title>Other</title>")
        .route("/f/frame.css", Route::file("text/css", "body { background: url(../img/bg.gif) }"))
        .route("/img/top.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/img/in-frame.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/img/nested.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/img/bg.gif", Route::file("image/gif", GIF.to_vec()));
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let base = format!("http://127.0.0.1:{}", web.port());
    let host = format!("127.0.0.1_{}", web.port());
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    std::fs::write(
        &profile,
        format!("[[url]]\nurl = \"{base}/index.html\"\ndepth = 1\n"),
    )
    .unwrap();
    let p = profile.to_str().unwrap();
    let mirror = dir.path().join("mirror");
    expect_exit(&spinneret(&["collect", p]), 0);
    // The run's copies link to each other.
    let run_frame =
        std::fs::read_to_string(mirror.join(format!("runs/0001/URLs/{host}/f/frame.html")))
            .unwrap();
    assert!(
        run_frame.contains(r#"<a href="../other.html">"#),
        "{run_frame}"
    );

    let page = format!("{base}/index.html");
    let out = spinneret(&["collect", p, "--archive", &page]);
    expect_exit(&out, 0);
    let day = jiff::Zoned::now().date().to_string();
    let first = mirror.join(format!("Archive/{day}/URLs/{host}/index.html"));
    assert!(
        text(&out.stdout).contains(&format!("archived {page}: {}\n", first.display())),
        "{}",
        text(&out.stdout)
    );
    let archived = files_under(&mirror.join("Archive"));
    let want: Vec<String> = [
        "f/frame.css",
        "f/frame.html",
        "f/nested.html",
        "img/bg.gif",
        "img/in-frame.gif",
        "img/nested.gif",
        "img/top.gif",
        "index.html",
    ]
    .iter()
    .map(|f| format!("{day}/URLs/{host}/{f}"))
    .chain(["archive.html".to_string()])
    .collect::<std::collections::BTreeSet<_>>()
    .into_iter()
    .collect();
    assert_eq!(archived, want);
    let in_archive = |edition: &str, f: &str| {
        std::fs::read_to_string(mirror.join(format!("Archive/{edition}/URLs/{host}/{f}"))).unwrap()
    };
    assert_eq!(
        in_archive(&day, "index.html"),
        format!(
            r#"<title>Top</title><img src="img/top.gif"><iframe src="f/frame.html"></iframe><a href="{base}/other.html">other</a> first"#
        )
    );
    assert_eq!(
        in_archive(&day, "f/frame.html"),
        format!(
            r#"<title>Frame</title><link rel="stylesheet" href="frame.css"><img src="../img/in-frame.gif"><iframe src="nested.html"></iframe><a href="{base}/other.html">other</a>"#
        )
    );

    // The page changes; archived again the same day, beside the first.
    expect_exit(&spinneret(&["collect", p]), 0);
    let out = spinneret(&["collect", p, "--archive", &page]);
    expect_exit(&out, 0);
    let said = text(&out.stdout);
    let again = said
        .lines()
        .find_map(|l| l.strip_prefix(&format!("archived {page}: ")))
        .unwrap_or_else(|| panic!("{said}"))
        .to_string();
    let edition = again
        .strip_prefix(&format!("{}/", mirror.join("Archive").display()))
        .and_then(|rest| rest.strip_suffix(&format!("/URLs/{host}/index.html")))
        .unwrap_or_else(|| panic!("{again}"))
        .to_string();
    let time = edition
        .strip_prefix(&format!("{day}T"))
        .unwrap_or_else(|| panic!("{edition}"));
    assert!(
        time.len() == 6 && time.bytes().all(|b| b.is_ascii_digit()),
        "{edition}"
    );
    assert!(in_archive(&day, "index.html").ends_with("</a> first"));
    assert!(in_archive(&edition, "index.html").ends_with("</a> second"));
    assert_eq!(
        files_under(&mirror.join("Archive").join(&edition)),
        files_under(&mirror.join("Archive").join(&day))
    );
    let index = std::fs::read_to_string(mirror.join("Archive/archive.html")).unwrap();
    let again_at = format!("{}:{}:{}", &time[..2], &time[2..4], &time[4..]);
    for want in [
        format!(r#"<a href="{edition}/URLs/{host}/index.html">Top</a>"#),
        format!(r#"<a href="{day}/URLs/{host}/index.html">Top</a>"#),
        format!("archived again at {again_at}; the earlier copy is kept"),
    ] {
        assert!(index.contains(&want), "{want} not in {index}");
    }
    assert_eq!(index.matches("<h2>").count(), 1, "{index}");
}
