//! `spinneret serve` as a person uses it: in headless Chromium, the search
//! page opens, a sample search runs, a typed query is submitted with the
//! keyboard, the results page through, a result and a citing link lead to
//! their pages, with nothing failing and no console error; the page's
//! accessibility is checked in the same test.

use crate::common::{self, expect_exit, serve};
use spinneret_tests::browser::{Browser, chromium};
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Site, TestWeb, Web};

/// Sixteen documents with "worm" in their title on one site, one linking
/// to the others, and a second site that cites it.
fn web() -> Web {
    let mut links = String::new();
    let mut a = Site::new();
    for i in 1..=15 {
        links.push_str(&format!("<a href=\"/p{i}.html\">Segment {i}</a> "));
        a = a.page(
            &format!("/p{i}.html"),
            &format!("<html lang=en><head><link rel=icon href=\"data:,\"><title>Worm segment {i}</title></head><body><p id=here>segment {i}</p></body></html>"),
        );
    }
    a = a.page(
        "/index.html",
        &format!("<html lang=en><head><link rel=icon href=\"data:,\"><title>Worm index</title></head><body>{links}</body></html>"),
    );
    let b = Site::new().page(
        "/b.html",
        "<html lang=en><head><link rel=icon href=\"data:,\"><title>Citing page</title></head><body><a href=\"http://a.example:{PORT}/index.html\">the worm's index</a></body></html>",
    );
    Web::new().site("a.example", a).site("b.example", b)
}

#[test]
fn the_search_page_works_in_chromium_with_the_keyboard_and_nothing_failing() {
    let Some(chromium) = chromium() else {
        return;
    };
    let web = TestWeb::start(web());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://b.example:{PORT}/b.html\"\nlevels = 3\n",
    );
    expect_exit(&common::crawl(&setup, &[]), 0);
    let served = serve(&[std::ffi::OsStr::new("-c"), setup.config_path.as_os_str()]);
    let mut b = Browser::start_with(
        &chromium,
        &["--host-resolver-rules=MAP *.example 127.0.0.1"],
    );

    b.open(&format!("{}/", served.base));
    assert_eq!(
        b.eval("document.querySelector('h1').textContent"),
        "Search the Worm's archive"
    );
    // Accessibility: a language, one h1, a label for every control, a
    // legend for the radio group, text on every link; focus starts in the
    // query box.
    assert_eq!(b.eval("document.documentElement.lang"), "en");
    assert_eq!(b.eval("document.querySelectorAll('h1').length"), 1);
    assert_eq!(
        b.eval("[...document.querySelectorAll('input')].filter(i => i.labels.length == 0).length"),
        0
    );
    assert_eq!(
        b.eval("document.querySelector('fieldset legend').textContent"),
        "Search in"
    );
    assert_eq!(
        b.eval(
            "[...document.querySelectorAll('a')].filter(a => a.textContent.trim() == '').length"
        ),
        0
    );
    // Autofocus is applied at a rendering update: after two frames.
    b.settle();
    assert_eq!(b.eval("document.activeElement.id"), "q");

    // A sample search, clicked.
    b.follow("[...document.querySelectorAll('.samples a')].find(a => a.textContent == 'Documents without a title').click()");
    assert_eq!(b.eval("document.querySelector('#q').value"), "bad:no-title");
    assert_eq!(
        b.eval("document.querySelector('#results').textContent.split(' (')[0]"),
        "0 results"
    );

    // A query typed and submitted with the keyboard.
    b.eval("document.querySelector('#q').value = ''; document.querySelector('#q').focus()");
    b.call("Input.insertText", serde_json::json!({"text": "worm"}));
    assert_eq!(b.eval("document.querySelector('#q').value"), "worm");
    assert_eq!(b.eval("document.hasFocus()"), true);
    b.settle();
    let loads = b.events.len();
    b.call("Input.dispatchKeyEvent", serde_json::json!({"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r", "unmodifiedText": "\r"}));
    b.call("Input.dispatchKeyEvent", serde_json::json!({"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13}));
    b.wait_for_load_after(loads);
    assert_eq!(
        b.eval("document.querySelector('#results').textContent.split(' (')[0]"),
        "16 results, 1–10 shown"
    );
    assert_eq!(
        b.eval("document.querySelector('ol a.result').textContent"),
        "Worm index"
    );
    // Page through: the second page holds the last six, and leads back.
    b.follow("document.querySelector('a[rel=next]').click()");
    assert_eq!(
        b.eval("document.querySelector('#results').textContent.split(' (')[0]"),
        "16 results, 11–16 shown"
    );
    assert_eq!(b.eval("document.querySelectorAll('ol li').length"), 6);
    assert_eq!(
        b.eval("document.querySelector('a[rel=next]')"),
        serde_json::Value::Null
    );
    b.follow("document.querySelector('a[rel=prev]').click()");
    assert_eq!(b.eval("document.querySelectorAll('ol li').length"), 10);

    // A result leads to its document.
    b.follow("[...document.querySelectorAll('a.result')].find(a => a.textContent == 'Worm segment 7').click()");
    assert_eq!(
        b.eval("document.querySelector('#here').textContent"),
        "segment 7"
    );

    // Every URL: the index with the anchor text citing it, and the citing
    // document's link.
    b.open(&format!("{}/?q=anchor%3Aindex&mode=urls", served.base));
    assert_eq!(
        b.eval("document.querySelector('a.result').textContent"),
        "the worm's index"
    );
    assert_eq!(
        b.eval("document.querySelector('a.citing').textContent"),
        "Citing page"
    );
    b.follow("document.querySelector('a.citing').click()");
    assert_eq!(b.eval("document.title"), "Citing page");

    // The reports page links the task's maintenance index.
    b.open(&format!("{}/reports", served.base));
    b.follow("document.querySelector('td a[href$=\"index.html\"]').click()");
    assert!(
        b.eval("document.body.textContent")
            .as_str()
            .unwrap()
            .contains("Worm")
    );

    let missing: Vec<String> = b
        .events
        .iter()
        .filter(|(m, p)| m == "Network.responseReceived" && p["response"]["status"] == 404)
        .map(|(_, p)| p["response"]["url"].to_string())
        .collect();
    assert_eq!(b.problems(), Vec::<String>::new(), "{missing:?}");
    let elsewhere: Vec<String> = b
        .requested()
        .into_iter()
        .filter(|u| !u.starts_with(&served.base) && !u.contains(".example:"))
        .collect();
    assert_eq!(
        elsewhere,
        Vec::<String>::new(),
        "the pages load nothing from elsewhere"
    );
}

/// `b`'s viewport made `width` pixels wide (a phone's when `mobile`).
fn viewport(b: &mut Browser, width: u32, mobile: bool) {
    b.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": mobile}),
    );
}

/// How far the page, and each element `selector` picks, reach past the
/// right edge of the window, in pixels (0 when they fit), and how far a
/// table's content reaches past its own box (a table that scrolls).
fn overflow(b: &mut Browser, selector: &str) -> serde_json::Value {
    b.eval(&format!(
        "(() => {{ const w = document.documentElement.clientWidth; \
         return {{ page: Math.max(0, document.documentElement.scrollWidth - w), \
           elements: [...document.querySelectorAll({selector:?})].map(e => Math.max(0, Math.ceil(e.getBoundingClientRect().right) - w)), \
           tables: [...document.querySelectorAll('table')].map(t => t.scrollWidth - t.clientWidth) }}; }})()"
    ))
}

/// The pages fit the window, 1280 pixels wide as 390 (issue 52): on
/// `/results/N` a URL without a place to break (a long path, its
/// referrer as long) widened the table past the page and cut off the
/// "Referred to from" column; at 390 pixels the search box ran off the
/// screen. Now the URLs break, and nothing reaches past the right edge.
#[test]
fn the_pages_fit_a_window_1280_and_390_pixels_wide() {
    let Some(chromium) = chromium() else {
        return;
    };
    let deep = "d".repeat(150);
    let gone = "g".repeat(150);
    let site = Site::new()
        .page(
            "/index.html",
            &format!("<html lang=en><head><title>Home</title></head><body><a href=\"/{deep}/page.html\">deep</a> <a href=\"/missing.html\">missing</a></body></html>"),
        )
        .page(
            &format!("/{deep}/page.html"),
            &format!("<html lang=en><head><title>Deep</title></head><body><a href=\"/{gone}.html\">gone</a></body></html>"),
        );
    let web = TestWeb::start(Web::new().site("a.example", site));
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Site\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n",
    );
    expect_exit(&common::crawl(&setup, &[]), 1);
    let served = serve(&[std::ffi::OsStr::new("-c"), setup.config_path.as_os_str()]);
    let mut b = Browser::start_with(
        &chromium,
        &["--host-resolver-rules=MAP *.example 127.0.0.1"],
    );
    b.open(&format!("{}/reports", served.base));
    let results = b.eval("document.querySelector('a[href^=\"/results/\"]').getAttribute('href')");
    let results = results.as_str().unwrap().to_string();
    let fits = serde_json::json!({"page": 0, "elements": [0], "tables": [0]});
    for (width, mobile) in [(1280, false), (390, true)] {
        viewport(&mut b, width, mobile);
        b.open(&format!("{}{results}", served.base));
        // Both broken links, each with the document referring to it.
        assert_eq!(
            b.eval("[...document.querySelectorAll('#broken + table tbody tr')].map(r => r.cells[2].textContent)"),
            serde_json::json!([
                web.url("a.example", &format!("/{deep}/page.html")),
                web.url("a.example", "/index.html")
            ])
        );
        assert_eq!(
            overflow(&mut b, "#broken + table"),
            fits,
            "{results} at {width}"
        );
        // The column holding the referrers is inside the window.
        let right = b.eval("Math.ceil(document.querySelector('#broken + table th:last-child').getBoundingClientRect().right) <= document.documentElement.clientWidth");
        assert_eq!(right, true, "{width}");
        // The search box, and a page of results holding the long URLs.
        b.open(&format!("{}/?q=anchor%3Agone&mode=urls", served.base));
        assert_eq!(
            b.eval("document.querySelector('#results').textContent.split(' (')[0]"),
            "1 result, 1–1 shown"
        );
        assert_eq!(
            overflow(&mut b, "#q"),
            serde_json::json!({"page": 0, "elements": [0], "tables": []}),
            "the search page at {width}"
        );
        assert_eq!(
            overflow(&mut b, "ol .url")["elements"],
            serde_json::json!([0])
        );
        if width == 390 {
            let shot = b.call(
                "Page.captureScreenshot",
                serde_json::json!({"format": "png"}),
            );
            use base64::Engine;
            let png = base64::engine::general_purpose::STANDARD
                .decode(shot["data"].as_str().unwrap())
                .unwrap();
            assert!(png.starts_with(b"\x89PNG"), "a screenshot of the page");
            if let Some(dir) = std::env::var_os("SPINNERET_SCREENSHOTS") {
                std::fs::write(std::path::Path::new(&dir).join("search-390.png"), png).unwrap();
            }
        }
    }
    assert_eq!(b.problems(), Vec::<String>::new());
}
