//! GENVL's library as a person uses it, in headless Chromium against a
//! real `spinneret serve`: every operation of Table 3 through its form,
//! the refusals a person meets, the summary's marks after the spider has
//! checked the pointers against the loopback test web, and nothing failing
//! on the way (no console error, nothing loaded from elsewhere).

use crate::common::{self, expect_exit, serve};
use spinneret_tests::browser::{Browser, chromium};
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;

/// Fill the fields of a form (element id, value; the value `true` ticks a
/// box) and submit it with its button, as the first field's form; waits
/// for the page it leads to.
fn submit(b: &mut Browser, fields: &[(&str, &str)]) {
    let mut script = String::new();
    for (id, value) in fields {
        if *value == "true" {
            script.push_str(&format!("document.getElementById('{id}').checked = true;"));
        } else {
            let value = serde_json::to_string(value).unwrap();
            script.push_str(&format!("document.getElementById('{id}').value = {value};"));
        }
    }
    let (first, _) = fields[0];
    script.push_str(&format!(
        "document.getElementById('{first}').form.querySelector('button[type=submit]').click()"
    ));
    b.follow(&script);
}

/// The text of the first element matching `selector`.
fn text(b: &mut Browser, selector: &str) -> String {
    let v = b.eval(&format!(
        "(document.querySelector({}) || {{textContent: '(none)'}}).textContent.trim()",
        serde_json::to_string(selector).unwrap()
    ));
    v.as_str().unwrap_or_default().to_string()
}

/// Click the link whose text is `label`.
fn click(b: &mut Browser, label: &str) {
    b.follow(&format!(
        "[...document.querySelectorAll('a')].find(a => a.textContent.trim() == {}).click()",
        serde_json::to_string(label).unwrap()
    ));
}

/// The postings of the summary page shown, as the page reads them
/// (without the spider's marks).
fn postings(b: &mut Browser) -> Vec<String> {
    let v = b.eval(
        "[...document.querySelectorAll('ul.postings > li')].map(li => { const c = li.cloneNode(true); c.querySelectorAll('.check, .moved-to, form').forEach(e => e.remove()); return c.textContent.replace(/\\s+/g, ' ').trim(); })",
    );
    serde_json::from_value(v).unwrap()
}

#[test]
fn the_library_works_in_chromium_from_posting_to_the_spider_s_marks() {
    let Some(chromium) = chromium() else {
        return;
    };
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Pointers\"\nkind = \"library\"\n\n[library]\ntitle = \"Test Library\"\n",
    );
    let served = serve(&[std::ffi::OsStr::new("-c"), setup.config_path.as_os_str()]);
    let mut b = Browser::start_with(
        &chromium,
        &["--host-resolver-rules=MAP *.example 127.0.0.1"],
    );
    let a = |p: &str| web.url("a.example", p);

    b.open(&format!("{}/library", served.base));
    assert_eq!(text(&mut b, "h1"), "Test Library");
    // Create: a sub-library with a password.
    click(&mut b, "Add, change or delete");
    submit(
        &mut b,
        &[
            ("create-title", "Physics"),
            ("create-body", "<p>Pages about <em>physics</em>.</p>"),
            ("create-password", "quarks"),
        ],
    );
    assert_eq!(text(&mut b, "h1"), "Test Library");
    // Sub-libraries in bold, after an asterisk (the seed's mark).
    assert_eq!(text(&mut b, "ul.postings li strong a"), "Physics");
    assert_eq!(postings(&mut b), ["1. * Physics"]);
    click(&mut b, "Physics");
    assert_eq!(text(&mut b, ".purpose"), "Pages about physics.");
    let physics = b.eval("location.href").as_str().unwrap().to_string();

    // Point, Pointers (both line forms), Input.
    click(&mut b, "Add, change or delete");
    submit(
        &mut b,
        &[
            ("point-title", "About page"),
            ("point-url", &a("/about.html")),
        ],
    );
    click(&mut b, "Add, change or delete");
    let list = format!(
        "<a href=\"{}\">Missing page</a>\n{} Old page\n",
        a("/missing.html"),
        a("/old.html")
    );
    submit(&mut b, &[("pointers-list", &list)]);
    click(&mut b, "Add, change or delete");
    submit(
        &mut b,
        &[
            ("input-title", "Field notes"),
            (
                "input-body",
                "<p>Seen <b>today</b><script>document.title='owned'</script></p>",
            ),
            ("input-author", "Ann"),
        ],
    );
    assert_eq!(
        postings(&mut b),
        [
            "1. About page",
            "4. Field notes",
            "2. Missing page",
            "3. Old page"
        ]
    );
    click(&mut b, "Field notes");
    assert_eq!(text(&mut b, ".text"), "Seen today");
    assert_ne!(b.eval("document.title"), "owned");
    click(&mut b, "Back to Physics");

    // Create-Only: the sub-library takes sub-libraries only.
    click(&mut b, "Add, change or delete");
    submit(
        &mut b,
        &[("create-title", "Archive"), ("create-only", "true")],
    );
    click(&mut b, "Archive");
    assert_eq!(
        text(&mut b, "p.note"),
        "Create-Only: only sub-libraries may be posted here."
    );
    click(&mut b, "Add, change or delete");
    assert_eq!(
        b.eval("document.getElementById('point-title')"),
        serde_json::Value::Null
    );
    click(&mut b, "Back to Archive");
    click(&mut b, "Up: Physics");
    // ... and a pointer moved into it is refused, saying why.
    click(&mut b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Move Old page\"]').click()");
    let archive = b.eval("[...document.querySelectorAll('#to option')].find(o => o.textContent.endsWith('Archive')).value");
    b.eval(&format!("document.getElementById('to').value = {archive}"));
    b.follow("document.querySelector('form button[type=submit]').click()");
    assert_eq!(
        text(&mut b, "#error"),
        "\"Archive\" is Create-Only: only sub-libraries may be posted in it"
    );

    // Edit.
    b.open(&physics);
    click(&mut b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Edit About page\"]').click()");
    submit(&mut b, &[("title", "About the site")]);
    assert!(postings(&mut b).contains(&"1. About the site".to_string()));

    // Copy into the root, move the report there.
    click(&mut b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Copy About the site\"]').click()");
    b.eval("document.getElementById('to').selectedIndex = 0");
    b.follow("document.querySelector('form button[type=submit]').click()");
    b.open(&physics);
    click(&mut b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Move Field notes\"]').click()");
    b.eval("document.getElementById('to').selectedIndex = 0");
    b.follow("document.querySelector('form button[type=submit]').click()");
    b.open(&format!("{}/library", served.base));
    assert_eq!(
        postings(&mut b),
        ["2. About the site", "3. Field notes", "1. * Physics"]
    );
    click(&mut b, "Physics");
    assert_eq!(
        postings(&mut b),
        [
            "1. About the site",
            "5. * Archive",
            "2. Missing page",
            "3. Old page"
        ]
    );

    // The spider checks every pointer; the summary marks what it found.
    expect_exit(&common::crawl(&setup, &[]), 1);
    b.follow("location.reload()");
    let marks = b.eval(
        "Object.fromEntries([...document.querySelectorAll('ul.postings > li')].map(li => [li.querySelector('a').textContent, (li.querySelector('.check') || {className: ''}).className]))",
    );
    assert_eq!(
        marks,
        serde_json::json!({
            "About the site": "check fine",
            "Archive": "",
            "Missing page": "check broken",
            "Old page": "check moved",
        })
    );
    // The moved one is a click away from its new address. (A second
    // later than every other change, so the global list below has it
    // first: changes are dated to the second.)
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let line = b.eval("document.querySelector('.check.moved').closest('li').id");
    b.follow("document.querySelector('.check.moved ~ form button').click()");
    // Back at the pointer's line.
    assert_eq!(
        b.eval("location.href"),
        format!("{physics}#{}", line.as_str().unwrap()).as_str()
    );
    let old = b.eval(
        "[...document.querySelectorAll('ul.postings > li')].find(li => li.textContent.includes('Old page')).querySelector('a').href",
    );
    assert_eq!(old, a("/new.html"));

    // The global list, most recent first.
    b.open(&format!("{}/library/1/all", served.base));
    let order: Vec<String> = serde_json::from_value(b.eval(
        "[...document.querySelectorAll('ol.global > li')].map(li => li.querySelector('a').textContent)",
    ))
    .unwrap();
    assert_eq!(order[0], "Old page", "{order:?}");
    assert_eq!(order.len(), 7, "{order:?}");

    // Delete: the wrong password refused, the right one takes the
    // sub-library with everything in it.
    b.open(&format!("{}/library/1/change", served.base));
    let physics = b.eval("[...document.querySelectorAll('ul.postings label')].find(l => l.textContent.includes('Physics')).htmlFor");
    submit(
        &mut b,
        &[
            (physics.as_str().unwrap(), "true"),
            ("delete-password", "leptons"),
        ],
    );
    assert_eq!(
        text(&mut b, "#error"),
        "Delete: \"Physics\" was not deleted: the password is wrong"
    );
    submit(
        &mut b,
        &[
            (physics.as_str().unwrap(), "true"),
            ("delete-password", "quarks"),
        ],
    );
    assert_eq!(postings(&mut b), ["2. About the site", "3. Field notes"]);

    // Nothing failed but the two refusals asked for (the move into the
    // Create-Only library, the wrong password), which Chromium logs as
    // the 422 and 403 answers they are.
    let refused = |status: &str| {
        format!(
            "console: \"Failed to load resource: the server responded with a status of {status}\""
        )
    };
    assert_eq!(
        b.problems(),
        vec![
            refused("422 (Unprocessable Entity)"),
            refused("403 (Forbidden)")
        ]
    );
    let elsewhere: Vec<String> = b
        .requested()
        .into_iter()
        .filter(|u| !u.starts_with(&served.base))
        .collect();
    assert_eq!(
        elsewhere,
        Vec::<String>::new(),
        "the pages load nothing from elsewhere"
    );
}
