//! WebSnatcher's output read by the tools made for it: the WARC file by
//! `warcio` (PyPI; `.ci/run` installs it).

use spinneret::snatch::warc::{Original, WarcWriter, payload_digest};
use std::process::Command;

/// `warcio` on the PATH, or `None` with a note (a failure under CI).
fn warcio() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("warcio"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "warcio is not installed; .ci/run installs it (pip install warcio)"
        );
        eprintln!(
            "SKIPPED: warcio is not installed (pip install warcio); the WARC check did not run"
        );
    }
    found
}

#[test]
fn a_runs_warc_is_valid_for_warcio_with_every_digest_checked() {
    let Some(warcio) = warcio() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run-1.warc");
    let now = 1_795_000_000;
    let file = std::fs::File::create(&path).unwrap();
    let mut w = WarcWriter::new(file, "run-1.warc", "spinneret/test", now).unwrap();
    let page: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 25\r\n\r\n<p>hello, <b>web</b></p>\n";
    let image: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 4\r\n\r\n\x89PNG";
    for (url, response) in [("https://e.org/", page), ("https://e.org/a.png", image)] {
        let path = url.trim_start_matches("https://e.org");
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: e.org\r\nUser-Agent: spinneret/test\r\n\r\n");
        let req = w.request(url, request.as_bytes(), now).unwrap();
        let resp = w.response(url, response, &req, now).unwrap();
        if url == "https://e.org/" {
            // The next run's unchanged page: a revisit of this response.
            w.request(url, request.as_bytes(), now + 86_400).unwrap();
            let digest = payload_digest(page);
            let original = Original {
                record: &resp,
                uri: url,
                date: now,
                payload_digest: &digest,
            };
            w.revisit(
                url,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n",
                &original,
                now + 86_400,
            )
            .unwrap();
        }
    }
    w.metadata(
        "https://e.org/",
        &[("category", "URLs"), ("depth", "0")],
        now,
    )
    .unwrap();
    w.finish().unwrap();

    let check = Command::new(&warcio)
        .args(["check", "-v"])
        .arg(&path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "warcio check failed:\n{said}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Every record's digests are checked and pass (a revisit's name a body
    // stored elsewhere, which warcio does not check).
    assert_eq!(said.matches("digest pass").count(), 7, "{said}");
    assert_eq!(said.matches("not checked (revisit)").count(), 1, "{said}");
    let index = Command::new(&warcio)
        .args(["index", "-f", "warc-type,warc-target-uri,http:status"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        index.status.success(),
        "{}",
        String::from_utf8_lossy(&index.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&index.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let f = |k: &str| l.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
            (f("warc-type"), f("warc-target-uri"), f("http:status"))
        })
        .collect();
    let e = |t: &str, u: &str, s: &str| (t.to_string(), u.to_string(), s.to_string());
    assert_eq!(
        seen,
        [
            e("warcinfo", "", ""),
            e("request", "https://e.org/", ""),
            e("response", "https://e.org/", "200"),
            e("request", "https://e.org/", ""),
            e("revisit", "https://e.org/", "200"),
            e("request", "https://e.org/a.png", ""),
            e("response", "https://e.org/a.png", "200"),
            e("metadata", "https://e.org/", ""),
        ]
    );
}
