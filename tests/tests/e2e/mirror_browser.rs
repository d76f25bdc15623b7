//! WebSnatcher's mirror as a person browses it: in headless Chromium with
//! the network off, the index opens, its link leads to the saved page, and
//! every image and stylesheet of that page loads from the mirror.

use crate::common::{collect, expect_exit};
use spinneret_tests::browser::{Browser, chromium};
use spinneret_tests::server::{Route, Site, TestWeb, Web};

/// A 1×1 GIF.
const GIF: &[u8] = &[
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
];

#[test]
fn the_mirror_browses_offline_in_chromium_with_every_requisite_from_disk() {
    let Some(chromium) = chromium() else {
        return;
    };
    let web = TestWeb::start(Web::new().site("127.0.0.1", a_guide_with_requisites()));
    let dir = tempfile::tempdir().unwrap();
    let out = collect(
        dir.path(),
        &format!(
            "[[url]]\nurl = \"http://127.0.0.1:{}/docs/guide.html\"\ndepth = 1\ncategory = \"Reading\"\n",
            web.port()
        ),
    );
    expect_exit(&out, 0);
    // The web is gone: what shows must come from the disk.
    drop(web);

    screenshot_the_index(&chromium, dir.path());
    let mut b = Browser::start(&chromium);
    b.offline();
    let index = dir.path().join("mirror/index.html");
    b.open(&format!("file://{}", index.display()));
    assert!(
        b.eval("document.title")
            .as_str()
            .unwrap()
            .starts_with("Collection of ")
    );
    assert_eq!(
        b.eval("document.querySelector('h2').firstChild.textContent.trim()"),
        "Reading"
    );
    assert_eq!(
        b.eval("document.querySelector('a.local').textContent"),
        "The guide"
    );
    b.follow("document.querySelector('a.local').click()");
    assert_eq!(b.eval("document.title"), "The guide");
    assert!(
        b.eval("location.href")
            .as_str()
            .unwrap()
            .starts_with("file://")
    );
    // Every image shows, the stylesheet and the one it imports apply.
    assert_eq!(
        b.eval("[...document.images].map(i => i.complete && i.naturalWidth === 1)"),
        serde_json::json!([true, true])
    );
    assert_eq!(
        b.eval("getComputedStyle(document.querySelector('h1')).color"),
        "rgb(1, 2, 3)"
    );
    assert!(
        b.eval("getComputedStyle(document.body).backgroundImage")
            .as_str()
            .unwrap()
            .contains("/img/bg.gif")
    );
    // The link to the next page is converted and works (its query kept apart).
    b.follow("document.getElementById('next').click()");
    assert_eq!(
        b.eval("document.getElementById('here').textContent"),
        "second page"
    );
    every_requisite_came_from_disk(&mut b);
    assert_eq!(b.problems(), Vec::<String>::new());
}

/// A guide whose page needs images (`src`, `srcset`, a `<picture>`'s
/// source), a stylesheet that imports another and has a background, an
/// icon and a frame with requisites of its own; it links to a next page
/// by a URL with a query.
fn a_guide_with_requisites() -> Site {
    Site::new()
        .page(
            "/docs/guide.html",
            r#"<!DOCTYPE html><html><head><title>The guide</title>
<link rel="stylesheet" href="/css/site.css"><link rel="icon" href="/favicon.gif"></head>
<body><h1>Guide</h1><img id="logo" src="../img/logo.gif" srcset="../img/logo.gif 1x, ../img/logo2x.gif 2x">
<picture><source srcset="/img/wide.gif" media="(min-width: 1px)"><img id="pic" src="/img/logo.gif"></picture>
<p><a id="next" href="next.html?page=2">next</a></p>
<iframe id="frame" src="/frame/inner.html"></iframe></body></html>"#,
        )
        .page(
            "/frame/inner.html",
            r#"<!DOCTYPE html><html><head><title>Framed</title><link rel="stylesheet" href="frame.css"></head><body><img src="../img/inner.gif"></body></html>"#,
        )
        .route("/frame/frame.css", Route::file("text/css", "img { border: 1px solid }"))
        .route("/img/inner.gif", Route::file("image/gif", GIF.to_vec()))
        .page(
            "/docs/next.html?page=2",
            r#"<!DOCTYPE html><html><head><title>Next</title><link rel="stylesheet" href="/css/site.css"></head><body><p id="here">second page</p></body></html>"#,
        )
        .route(
            "/css/site.css",
            Route::file(
                "text/css",
                "@import url(\"base.css\");\nbody { background: url(../img/bg.gif) }\n",
            ),
        )
        .route("/css/base.css", Route::file("text/css", "h1 { color: rgb(1, 2, 3) }"))
        .route("/img/logo.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/img/logo2x.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/img/wide.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/img/bg.gif", Route::file("image/gif", GIF.to_vec()))
        .route("/favicon.gif", Route::file("image/gif", GIF.to_vec()))
}

/// A screenshot of the index of the mirror in `dir`, into the directory
/// SPINNERET_SCREENSHOTS names if it is set: for a person to look at while
/// working on the index.
fn screenshot_the_index(chromium: &std::path::Path, dir: &std::path::Path) {
    if let Some(shots) = std::env::var_os("SPINNERET_SCREENSHOTS") {
        let _ = std::process::Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=1000,600",
            ])
            .arg(format!(
                "--screenshot={}",
                std::path::Path::new(&shots)
                    .join("mirror-index.png")
                    .display()
            ))
            .arg(format!(
                "file://{}",
                dir.join("mirror/index.html").display()
            ))
            .output();
    }
}

/// Everything the browser loaded came from the mirror on disk, the
/// frame's page and its requisites and the stylesheet's import among them.
fn every_requisite_came_from_disk(b: &mut Browser) {
    let requested = b.requested();
    assert!(
        requested.iter().all(|u| u.starts_with("file://")),
        "{requested:?}"
    );
    for want in [
        // The frame's page and what it needs come from the mirror too.
        "/frame/inner.html",
        "/frame/frame.css",
        "/img/inner.gif",
        "/img/logo.gif",
        "/img/bg.gif",
        "/css/site.css",
        "/css/base.css",
    ] {
        assert!(
            requested.iter().any(|u| u.ends_with(want)),
            "{want} not loaded: {requested:?}"
        );
    }
}
