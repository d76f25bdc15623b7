//! The maintenance index as its reader meets it: the bundled example's
//! index in headless Chromium, on a phone's screen and on a wide one, with
//! no error on the console, no request that fails, no page wider than the
//! screen, and its links leading where they say.

use crate::common::{expect_exit, spinneret};
use serde_json::json;
use spinneret_tests::browser::{Browser, chromium};

#[test]
fn the_examples_index_reads_on_a_phone_and_a_wide_screen() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (_, dir) = crate::common::example_copy();
    let copy = dir.path();
    let out = spinneret(&[
        "-qq",
        "crawl",
        copy.join("spinneret.toml").to_str().unwrap(),
    ]);
    expect_exit(&out, 1);
    let index = copy.join("report/example/index.html");

    let mut b = Browser::start(&chromium);
    for (width, height, mobile) in [(390, 844, true), (1600, 900, false)] {
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        );
        b.open(&format!("file://{}", index.display()));
        assert_eq!(b.eval("document.title"), "MOMspider index of Example");
        // Laid out for the screen's width (a viewport), not a desktop's
        // shrunk to fit a phone.
        assert_eq!(
            b.eval("window.innerWidth"),
            width,
            "{width}px: the layout's width"
        );
        // Nothing makes the page wider than the screen: long URLs wrap,
        // wide tables scroll within themselves.
        assert_eq!(
            b.eval("document.documentElement.scrollWidth <= window.innerWidth"),
            true,
            "{width}px: the page is {} px wide",
            b.eval("document.documentElement.scrollWidth")
        );
    }
    // A reference's jump to its target's entry lands on it.
    let target = b.eval("document.querySelector('td a[href^=\"#d\"]').getAttribute('href')");
    let target = target.as_str().unwrap().to_string();
    b.eval("document.querySelector('td a[href^=\"#d\"]').click()");
    assert_eq!(b.eval("location.hash"), target.as_str());
    assert_eq!(
        b.eval(&format!(
            "document.getElementById('{}') !== null",
            &target[1..]
        )),
        true,
        "the entry {target} exists"
    );
    assert_eq!(b.problems(), Vec::<String>::new());
}
