//! Every crawl ends: a path trap stops at the task's `max_depth`, a task
//! stops traversing at its `max_documents`, and trap-guard's defaults stop
//! an endless calendar. Each bound is reported as its own reason.

use crate::common;
use spinneret_core::model::Category;
use spinneret_tests::fixtures::page;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::collections::BTreeSet;
use std::sync::Arc;

const TASK: &str =
    "[[task]]\nname = \"T\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/t/\"\n";

/// Every directory under /t/ links one level deeper, without end.
fn path_trap() -> Web {
    Web::new().site(
        "a.example",
        Site::new().generated(Arc::new(|path: &str| {
            path.starts_with("/t/")
                .then(|| Route::html(page("Deeper", None, r#"<a href="x/">deeper</a>"#)))
        })),
    )
}

fn paths(web: &TestWeb) -> BTreeSet<String> {
    web.requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .map(|r| r.path)
        .collect()
}

#[test]
fn a_path_trap_ends_at_the_default_max_depth() {
    let web = TestWeb::start(path_trap());
    let setup = Setup::new(&web, TASK);
    let report = setup.crawl();
    // The top (depth 0) and 50 levels below it are documents; the 51st
    // level is tested with HEAD and nothing deeper is asked for.
    assert_eq!(report.tasks[0].documents, 51);
    assert_eq!(paths(&web).len(), 52);
    let deepest = format!("/t/{}", "x/".repeat(51));
    assert_eq!(web.methods("a.example", &deepest), vec!["HEAD"]);
    let roles = setup.task_results("T");
    assert_eq!(roles[&web.url("a.example", &deepest)].1, "leaf");
    assert_eq!(
        report.tasks[0].bounds_hit,
        vec![format!(
            "reached its max_depth (50 links from the top) at {}; documents beyond it are tested as leaves, not traversed",
            web.url("a.example", &deepest)
        )]
    );
}

#[test]
fn max_documents_bounds_a_task_and_is_said_in_the_summary() {
    let links: String = (0..30)
        .map(|i| format!("<a href=\"p{i}.html\">{i}</a>"))
        .collect();
    let mut site = Site::new().page("/t/", &page("Top", None, &links));
    for i in 0..30 {
        site = site.page(&format!("/t/p{i}.html"), &page("P", None, ""));
    }
    let web = TestWeb::start(Web::new().site("a.example", site));
    let setup = Setup::new(&web, &format!("{TASK}max_documents = 10\n"));
    let out = common::spinneret(&["crawl", setup.config_path.to_str().unwrap()]);
    let stdout = common::text(&out.stdout);
    common::expect_exit(&out, 0);
    let roles = setup.task_results("T");
    let documents = roles
        .values()
        .filter(|(_, role)| role == "document")
        .count();
    let leaves = roles.values().filter(|(_, role)| role == "leaf").count();
    assert_eq!((documents, leaves), (10, 21), "{stdout}");
    assert!(
        roles.values().all(|(r, _)| r.category == Category::Ok),
        "every page is still checked"
    );
    assert!(
        stdout.contains("T: reached its max_documents (10) at http://a.example:"),
        "{stdout}"
    );
}

#[test]
fn trap_guard_stops_an_endless_calendar_by_default() {
    let web = TestWeb::start(
        Web::new().site(
            "a.example",
            Site::new()
                .page(
                    "/t/",
                    &page("Top", None, r#"<a href="/cal?d=1">calendar</a>"#),
                )
                .generated(Arc::new(|path: &str| {
                    let d: u64 = path.strip_prefix("/cal?d=")?.parse().ok()?;
                    let links = format!(
                        r#"<a href="/cal?d={}">next</a> <a href="/cal?d={}">previous</a>"#,
                        d + 1,
                        d.saturating_sub(1)
                    );
                    Some(Route::html(page("Day", None, &links)))
                })),
        ),
    );
    // A calendar is a chain as deep as it is long: lift the task's own
    // depth bound so that trap-guard is what stops it.
    let setup = Setup::new(
        &web,
        &format!(
            "{TASK}max_depth = 1000\n\n[[plugin]]\nname = \"guard\"\nsource = \"builtin:trap-guard\"\n"
        ),
    );
    common::expect_exit(&common::crawl(&setup, &[]), 0);
    let requested = paths(&web);
    assert!(
        (100..=102).contains(&requested.len()),
        "{} URLs requested",
        requested.len()
    );
    let results = setup.results();
    let cut: Vec<_> = results
        .values()
        .filter(|r| r.category == Category::Avoided)
        .collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert_eq!(
        cut[0].error.as_deref(),
        Some(
            "trap-guard: more than 100 URLs differ only in the value of `d` (an endless calendar or series?) (policy guard)"
        )
    );
}
