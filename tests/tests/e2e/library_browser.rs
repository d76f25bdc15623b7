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
    let physics = create_a_sub_library_with_a_password(&mut b);
    post_a_point_pointers_and_an_input(&mut b, &a);
    create_only_takes_sub_libraries_only(&mut b);
    edit_copy_and_move(&mut b, &physics, &served.base);
    the_spider_marks_what_it_found(&mut b, &setup, &physics, &a);
    the_global_list_is_most_recent_first(&mut b, &served.base);
    delete_needs_the_password(&mut b, &served.base);
    nothing_failed_nor_came_from_elsewhere(&mut b, &served.base);
}

/// Create: a sub-library (Physics) with a password, in bold after an
/// asterisk among the root's postings; its address.
fn create_a_sub_library_with_a_password(b: &mut Browser) -> String {
    click(b, "Add, change or delete");
    submit(
        b,
        &[
            ("create-title", "Physics"),
            ("create-body", "<p>Pages about <em>physics</em>.</p>"),
            ("create-password", "quarks"),
        ],
    );
    assert_eq!(text(b, "h1"), "Test Library");
    // Sub-libraries in bold, after an asterisk (the seed's mark).
    assert_eq!(text(b, "ul.postings li strong a"), "Physics");
    assert_eq!(postings(b), ["1. * Physics"]);
    click(b, "Physics");
    assert_eq!(text(b, ".purpose"), "Pages about physics.");
    b.eval("location.href").as_str().unwrap().to_string()
}

/// Point, Pointers (both line forms) and Input into the sub-library
/// shown; `a` is a page of the test web. An input's HTML is cleaned.
fn post_a_point_pointers_and_an_input(b: &mut Browser, a: &dyn Fn(&str) -> String) {
    click(b, "Add, change or delete");
    submit(
        b,
        &[
            ("point-title", "About page"),
            ("point-url", &a("/about.html")),
        ],
    );
    click(b, "Add, change or delete");
    let list = format!(
        "<a href=\"{}\">Missing page</a>\n{} Old page\n",
        a("/missing.html"),
        a("/old.html")
    );
    submit(b, &[("pointers-list", &list)]);
    click(b, "Add, change or delete");
    submit(
        b,
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
        postings(b),
        [
            "1. About page",
            "4. Field notes",
            "2. Missing page",
            "3. Old page"
        ]
    );
    click(b, "Field notes");
    assert_eq!(text(b, ".text"), "Seen today");
    assert_ne!(b.eval("document.title"), "owned");
    click(b, "Back to Physics");
}

/// Create-Only: such a sub-library (Archive) offers sub-libraries only,
/// and a pointer moved into it is refused, saying why.
fn create_only_takes_sub_libraries_only(b: &mut Browser) {
    click(b, "Add, change or delete");
    submit(b, &[("create-title", "Archive"), ("create-only", "true")]);
    click(b, "Archive");
    assert_eq!(
        text(b, "p.note"),
        "Create-Only: only sub-libraries may be posted here."
    );
    click(b, "Add, change or delete");
    assert_eq!(
        b.eval("document.getElementById('point-title')"),
        serde_json::Value::Null
    );
    click(b, "Back to Archive");
    click(b, "Up: Physics");
    // ... and a pointer moved into it is refused, saying why.
    click(b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Move Old page\"]').click()");
    let archive = b.eval("[...document.querySelectorAll('#to option')].find(o => o.textContent.endsWith('Archive')).value");
    b.eval(&format!("document.getElementById('to').value = {archive}"));
    b.follow("document.querySelector('form button[type=submit]').click()");
    assert_eq!(
        text(b, "#error"),
        "\"Archive\" is Create-Only: only sub-libraries may be posted in it"
    );
}

/// Edit a pointer of the sub-library at `physics`, copy it into the root
/// and move the input there (the library served at `base`).
fn edit_copy_and_move(b: &mut Browser, physics: &str, base: &str) {
    // Edit.
    b.open(physics);
    click(b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Edit About page\"]').click()");
    submit(b, &[("title", "About the site")]);
    assert!(postings(b).contains(&"1. About the site".to_string()));

    // Copy into the root, move the report there.
    click(b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Copy About the site\"]').click()");
    b.eval("document.getElementById('to').selectedIndex = 0");
    b.follow("document.querySelector('form button[type=submit]').click()");
    b.open(physics);
    click(b, "Add, change or delete");
    b.follow("document.querySelector('a[aria-label=\"Move Field notes\"]').click()");
    b.eval("document.getElementById('to').selectedIndex = 0");
    b.follow("document.querySelector('form button[type=submit]').click()");
    b.open(&format!("{base}/library"));
    assert_eq!(
        postings(b),
        ["2. About the site", "3. Field notes", "1. * Physics"]
    );
    click(b, "Physics");
    assert_eq!(
        postings(b),
        [
            "1. About the site",
            "5. * Archive",
            "2. Missing page",
            "3. Old page"
        ]
    );
}

/// The spider (the crawl of `setup`) checks every pointer; the summary of
/// the sub-library at `physics` marks what it found, and a moved pointer
/// is a click away from its new address (`a` of the test web).
fn the_spider_marks_what_it_found(
    b: &mut Browser,
    setup: &Setup,
    physics: &str,
    a: &dyn Fn(&str) -> String,
) {
    expect_exit(&common::crawl(setup, &[]), 1);
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
}

/// The global list of the library served at `base`, most recent first.
fn the_global_list_is_most_recent_first(b: &mut Browser, base: &str) {
    b.open(&format!("{base}/library/1/all"));
    let order: Vec<String> = serde_json::from_value(b.eval(
        "[...document.querySelectorAll('ol.global > li')].map(li => li.querySelector('a').textContent)",
    ))
    .unwrap();
    assert_eq!(order[0], "Old page", "{order:?}");
    assert_eq!(order.len(), 7, "{order:?}");
}

/// Delete: the wrong password refused, the right one takes the
/// sub-library with everything in it.
fn delete_needs_the_password(b: &mut Browser, base: &str) {
    b.open(&format!("{base}/library/1/change"));
    let physics = b.eval("[...document.querySelectorAll('ul.postings label')].find(l => l.textContent.includes('Physics')).htmlFor");
    submit(
        b,
        &[
            (physics.as_str().unwrap(), "true"),
            ("delete-password", "leptons"),
        ],
    );
    assert_eq!(
        text(b, "#error"),
        "Delete: \"Physics\" was not deleted: the password is wrong"
    );
    submit(
        b,
        &[
            (physics.as_str().unwrap(), "true"),
            ("delete-password", "quarks"),
        ],
    );
    assert_eq!(postings(b), ["2. About the site", "3. Field notes"]);
}

/// Nothing failed but the two refusals asked for, and the pages served
/// at `base` loaded nothing from elsewhere.
fn nothing_failed_nor_came_from_elsewhere(b: &mut Browser, base: &str) {
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
        .filter(|u| !u.starts_with(base))
        .collect();
    assert_eq!(
        elsewhere,
        Vec::<String>::new(),
        "the pages load nothing from elsewhere"
    );
}
