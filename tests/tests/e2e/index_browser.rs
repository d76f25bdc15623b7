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
    jump(&mut b, "document.querySelector('td a[href^=\"#d\"]')");
    assert_eq!(b.problems(), Vec::<String>::new());
}

/// Click the in-page link `link` (a script's expression): the page goes
/// to its `#id`, and an element has that id; the id.
fn jump(b: &mut Browser, link: &str) -> String {
    let target = b.eval(&format!("{link}.getAttribute('href')"));
    let target = target.as_str().unwrap().to_string();
    b.eval(&format!("{link}.click()"));
    assert_eq!(b.eval("location.hash"), target.as_str());
    let id = target[1..].to_string();
    assert_eq!(
        b.eval(&format!("document.getElementById('{id}') !== null")),
        true,
        "the element {target} exists"
    );
    id
}

/// Where `SCREENSHOTS` (an environment variable naming a directory) asks
/// for the screens a test looked at, for a person to look at too.
fn screenshot(b: &mut Browser, name: &str) {
    let Some(dir) = std::env::var_os("SCREENSHOTS") else {
        return;
    };
    let shot = b.call("Page.captureScreenshot", json!({"format": "png"}));
    let data = shot["data"].as_str().expect("a PNG");
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
}

#[test]
fn a_thousand_page_index_shows_its_problems_in_the_first_screen() {
    let Some(chromium) = chromium() else {
        return;
    };
    // A tree of 1,000 pages: the home page links to every page, each page
    // to the next; every 100th page also to a page that is not there, and
    // every 250th to a place its next page lacks.
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let page = |n: u32| format!("p{n:04}.html");
    let mut home = String::from("<!DOCTYPE html>\n<title>Home</title>\n<ul>\n");
    for n in 1..1000 {
        home.push_str(&format!("<li><a href=\"{}\">Page {n}</a>\n", page(n)));
    }
    std::fs::write(site.join("index.html"), home + "</ul>\n").unwrap();
    for n in 1..1000 {
        let mut body = format!(
            "<!DOCTYPE html>\n<title>Page {n}</title>\n<h1 id=\"top-{n}\">Page {n}</h1>\n\
             <a href=\"index.html\">home</a>\n<a href=\"{}\">next</a>\n",
            page(n % 999 + 1)
        );
        if n % 100 == 0 {
            body.push_str(&format!("<a href=\"gone-{n}.html\">gone</a>\n"));
        }
        if n % 250 == 0 {
            body.push_str(&format!(
                "<a href=\"{}#nowhere\">nowhere</a>\n",
                page(n + 1)
            ));
        }
        std::fs::write(site.join(page(n)), body).unwrap();
    }
    let out = crate::common::command()
        .current_dir(dir.path())
        .env("TMPDIR", dir.path())
        .args(["check", "site", "--store", "check.db"])
        .output()
        .unwrap();
    expect_exit(&out, 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "  TASK: DIR/ (PLUGINS)" under "reports:".
    let reports = stdout
        .lines()
        .filter(|l| l.starts_with("  "))
        .find_map(|l| l.split_once("/ (").and_then(|(l, _)| l.rsplit_once(": ")))
        .map(|(_, dir)| std::path::PathBuf::from(dir))
        .filter(|dir| dir.join("index.html").is_file())
        .unwrap_or_else(|| panic!("where the reports are: {stdout}"));
    let index = reports.join("index.html");

    let mut b = Browser::start(&chromium);
    for (width, height, mobile) in [(390, 844, true), (1600, 900, false)] {
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        );
        b.open(&format!("file://{}", index.display()));
        screenshot(&mut b, &format!("index-1000-{width}.png"));
        assert_eq!(
            b.eval("document.querySelectorAll('article.document').length"),
            1000,
            "{width}px: every document has its entry"
        );
        // The problems: nine broken links, then the broken fragments'
        // kind is not among the table's (they are in their change table).
        let rows = b.eval(
            "[...document.querySelectorAll('table.problems tbody tr')].map(r => r.className + ' ' + r.cells[1].textContent.replace(/^.*\\//, ''))",
        );
        let expected: Vec<String> = (1..10)
            .map(|k| format!("broken gone-{}.html", k * 100))
            .collect();
        assert_eq!(rows, json!(expected), "{width}px");
        // Laid out for the screen's width: a long title wraps rather than
        // widening the page (which a phone then shows zoomed out).
        assert_eq!(
            b.eval("window.innerWidth"),
            width,
            "{width}px: the layout's width"
        );
        // The table's head and first row are within the first screen.
        assert_eq!(
            b.eval(
                "document.querySelector('table.problems tbody tr').getBoundingClientRect().bottom <= window.innerHeight"
            ),
            true,
            "{width}px: the first problem ends at {} px of {}",
            b.eval("document.querySelector('table.problems tbody tr').getBoundingClientRect().bottom"),
            b.eval("window.innerHeight")
        );
        assert_eq!(
            b.eval("document.documentElement.scrollWidth <= window.innerWidth"),
            true,
            "{width}px: the page is {} px wide",
            b.eval("document.documentElement.scrollWidth")
        );
    }
    // A problem's "linked from" leads to the reference row in its page's entry.
    let target = jump(
        &mut b,
        "document.querySelector('table.problems tbody tr td:last-child a')",
    );
    assert_eq!(
        b.eval(&format!(
            "document.getElementById('{target}').innerHTML.includes('gone-100.html')"
        )),
        true,
        "the row {target} is the link to gone-100.html"
    );
    assert_eq!(b.problems(), Vec::<String>::new());
}
