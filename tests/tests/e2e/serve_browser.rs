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
