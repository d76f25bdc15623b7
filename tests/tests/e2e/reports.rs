//! The report stage end to end: crawl the fixture web with the built-in
//! plugins (the `maintenance` detector, the `momspider-index` and
//! `json-report` reporters), then read the reports back: the HTML index
//! parsed as HTML, with exact rows, jumps and changes; the JSON lines; the
//! stored findings; and the prior version on the second run.

use crate::common;
use scraper::{ElementRef, Html, Selector};
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;
use std::collections::BTreeMap;

const TASK: &str =
    "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n";

fn crawl(setup: &Setup) {
    common::expect_exit(&common::crawl(setup, &[]), 1);
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(e: ElementRef<'_>) -> String {
    e.text().collect::<String>().trim().to_string()
}

/// One reference row of a document's entry.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    id: String,
    class: String,
    kind: String,
    href: String,
    text: String,
    status: String,
    status_link: Option<String>,
    jump: Option<String>,
}

struct Index {
    html: Html,
}

impl Index {
    fn read(path: &std::path::Path) -> Index {
        let text = std::fs::read_to_string(path).unwrap();
        let html = Html::parse_document(&text);
        Index { html }
    }

    /// Document entries: URL → anchor id.
    fn entries(&self) -> BTreeMap<String, String> {
        self.html
            .select(&sel("article.document"))
            .map(|a| {
                let link = a.select(&sel("h3 > a")).next().unwrap();
                (
                    link.attr("href").unwrap().to_string(),
                    a.attr("id").unwrap().to_string(),
                )
            })
            .collect()
    }

    fn rows(&self, entry: &str) -> Vec<Row> {
        let article = self
            .html
            .select(&sel(&format!("article#{entry}")))
            .next()
            .unwrap();
        article
            .select(&sel("table.references tbody tr"))
            .map(|tr| {
                let cells: Vec<ElementRef> = tr.select(&sel("td")).collect();
                let link = cells[1].select(&sel("a")).next().unwrap();
                Row {
                    id: tr.attr("id").unwrap().to_string(),
                    class: tr.attr("class").unwrap().to_string(),
                    kind: text(cells[0]),
                    href: link.attr("href").unwrap().to_string(),
                    text: text(link),
                    status: text(cells[4]),
                    status_link: cells[4]
                        .select(&sel("a"))
                        .next()
                        .map(|a| a.attr("href").unwrap().to_string()),
                    jump: cells[5]
                        .select(&sel("a"))
                        .next()
                        .map(|a| a.attr("href").unwrap().to_string()),
                }
            })
            .collect()
    }

    /// The interesting changes of `kind`: (URL, message, links to rows).
    fn changes(&self, kind: &str) -> Vec<(String, String, Vec<String>)> {
        let heading = self
            .html
            .select(&sel(&format!("h3#changes-{kind}")))
            .next()
            .unwrap_or_else(|| panic!("no changes table for {kind}"));
        let Some(table) = heading
            .next_siblings()
            .filter_map(ElementRef::wrap)
            .next()
            .filter(|e| e.value().name() == "table")
        else {
            return Vec::new();
        };
        table
            .select(&sel("tbody tr"))
            .map(|tr| {
                let cells: Vec<ElementRef> = tr.select(&sel("td")).collect();
                (
                    text(cells[0]),
                    text(cells[1]),
                    cells[2]
                        .select(&sel("a"))
                        .map(|a| a.attr("href").unwrap().to_string())
                        .collect(),
                )
            })
            .collect()
    }
}

#[test]
fn the_index_lists_documents_references_jumps_and_changes() {
    let web = TestWeb::start(maintenance_web());
    let a = |p: &str| web.url("a.example", p);
    let setup = Setup::new(&web, TASK);
    crawl(&setup);
    let index = Index::read(&setup.path().join("reports/A/index.html"));

    let entries = index.entries();
    assert_eq!(
        entries.keys().cloned().collect::<Vec<_>>(),
        vec![
            a("/about.html"),
            a("/docs/guide.html"),
            a("/docs/index.html"),
            a("/index.html"),
            a("/new.html"),
        ]
    );
    let home = &entries[&a("/index.html")];
    let rows = index.rows(home);
    let row = |href: &str| rows.iter().find(|r| r.href == href).unwrap();

    // A broken link's row.
    let missing = row(&a("/missing.html"));
    assert_eq!(
        (
            missing.class.as_str(),
            missing.kind.as_str(),
            missing.text.as_str()
        ),
        ("broken", "get", "A missing page")
    );
    assert_eq!(missing.status, "broken 404: HTTP 404 Not Found");
    assert_eq!(missing.jump, None);
    // A moved link's final URL.
    let old = row(&a("/old.html"));
    assert_eq!(old.class, "moved");
    assert_eq!(old.status_link.as_deref(), Some(a("/new.html").as_str()));
    let chain = row(&a("/chain1.html"));
    assert_eq!(
        chain.status_link.as_deref(),
        Some(a("/docs/guide.html").as_str())
    );
    // Cross-reference jumps to the targets' own entries, and none for leaves.
    assert_eq!(
        row(&a("/about.html")).jump.as_deref(),
        Some(format!("#{}", entries[&a("/about.html")]).as_str())
    );
    assert_eq!(
        row(&a("/docs/index.html")).jump.as_deref(),
        Some(format!("#{}", entries[&a("/docs/index.html")]).as_str())
    );
    assert_eq!(row(&a("/logo.png")).kind, "img");
    assert_eq!(row(&a("/logo.png")).jump, None);
    assert_eq!(row("mailto:alice@a.example").kind, "mailto");
    assert_eq!(row(&a("/forbidden.html")).class, "blocked");
    assert_eq!(row(&a("/private/secret.html")).class, "avoided");

    // The cross-reference table of interesting changes.
    let broken = index.changes("broken");
    assert_eq!(
        broken.iter().map(|c| c.0.clone()).collect::<Vec<_>>(),
        vec![
            a("/docs/faq.html"),
            a("/loop1.html"),
            a("/missing.html"),
            web.url("b.example", "/gone.html"),
        ]
    );
    let missing_change = broken.iter().find(|c| c.0 == a("/missing.html")).unwrap();
    assert_eq!(missing_change.1, "broken: HTTP 404 Not Found");
    assert_eq!(missing_change.2, vec![format!("#{}", missing.id)]);
    let moved = index.changes("moved");
    assert_eq!(
        moved
            .iter()
            .map(|c| (c.0.clone(), c.1.clone()))
            .collect::<Vec<_>>(),
        vec![
            (
                a("/chain1.html"),
                format!("moved to {} (302, 2 redirects)", a("/docs/guide.html"))
            ),
            (a("/old.html"), format!("moved to {} (301)", a("/new.html"))),
        ]
    );
    assert_eq!(index.changes("expiring"), vec![]);
    // The summary counts.
    let summary: BTreeMap<String, String> = index
        .html
        .select(&sel("#summary table tr"))
        .map(|tr| {
            (
                text(tr.select(&sel("th")).next().unwrap()),
                text(tr.select(&sel("td")).next().unwrap()),
            )
        })
        .collect();
    assert_eq!(summary["Broken"], "4");
    assert_eq!(summary["Moved"], "2");
    assert_eq!(summary["Documents"], "5");
    assert_eq!(
        index
            .html
            .select(&sel("#prior"))
            .map(text)
            .collect::<Vec<_>>(),
        vec!["This is the first version of this index."]
    );
}

#[test]
fn findings_reach_the_json_lines_and_the_store() {
    let web = TestWeb::start(maintenance_web());
    let a = |p: &str| web.url("a.example", p);
    let setup = Setup::new(&web, TASK);
    crawl(&setup);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(setup.path().join("reports/A/report.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let mut found: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["type"] == "finding" && l["kind"] != "recently-modified")
        .map(|l| {
            (
                l["kind"].as_str().unwrap().to_string(),
                l["url"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    let expected = vec![
        ("blocked".to_string(), a("/forbidden.html")),
        ("broken".to_string(), a("/docs/faq.html")),
        ("broken".to_string(), a("/loop1.html")),
        ("broken".to_string(), a("/missing.html")),
        ("broken".to_string(), web.url("b.example", "/gone.html")),
        ("moved".to_string(), a("/chain1.html")),
        ("moved".to_string(), a("/old.html")),
    ];
    assert_eq!(found, expected);
    let store = setup.store();
    let run = store.last_run().unwrap().unwrap().id;
    let mut stored: Vec<(String, String)> = store
        .findings(run, None)
        .unwrap()
        .into_iter()
        .filter(|f| f.kind != "recently-modified")
        .map(|f| {
            assert_eq!(f.source, "maintenance");
            assert_eq!(f.task, "A");
            (f.kind, f.url)
        })
        .collect();
    stored.sort();
    assert_eq!(stored, expected);
}

#[test]
fn the_second_run_keeps_and_links_the_prior_index_and_sees_what_changed() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &format!("result_max_age = \"0s\"\n{TASK}"));
    crawl(&setup);
    let dir = setup.path().join("reports/A");
    let first = std::fs::read_to_string(dir.join("index.html")).unwrap();
    crawl(&setup);
    // The first index, kept, says where the current one is (before, it
    // linked to itself as its own prior version).
    assert_eq!(
        std::fs::read_to_string(dir.join("index.prior.html")).unwrap(),
        first.replace(
            "<p id=\"prior\">This is the first version of this index.</p>",
            "<p id=\"prior\">This is the prior version of this index; the current one is <a rel=\"next\" href=\"index.html\">index.html</a> (older versions are not kept).</p>"
        )
    );
    let index = Index::read(&dir.join("index.html"));
    let prior: Vec<(String, String)> = index
        .html
        .select(&sel("#prior a"))
        .map(|a| (a.attr("href").unwrap().to_string(), text(a)))
        .collect();
    assert_eq!(
        prior,
        vec![(
            "index.prior.html".to_string(),
            "The prior version of this index".to_string()
        )]
    );
    // Broken in both runs: the detector says so.
    let broken = index.changes("broken");
    let missing = broken
        .iter()
        .find(|c| c.0 == web.url("a.example", "/missing.html"))
        .unwrap();
    assert_eq!(
        missing.1,
        "broken: HTTP 404 Not Found; broken in the previous run too"
    );
    // Nothing changed in content.
    assert_eq!(index.changes("content-changed"), vec![]);
}

/// A task of about 30,000 URLs (300 pages of 100 leaves each; issue 21
/// found both default reporters out of memory from about 25,000): both
/// write their whole report within their default caps, the index with an
/// entry per document and a row per reference, the JSON lines a line per URL.
#[test]
fn the_default_reporters_write_a_task_of_thirty_thousand_urls() {
    the_default_reporters_write_the_whole_task(spinneret_tests::synthetic::Shape {
        pages: 300,
        sites: 1,
        leaves: 100,
    });
}

/// One page of 25,000 links (issue 21's other case): more references than
/// the host hands a reporter in one call, and both reports hold every one.
#[test]
fn the_default_reporters_write_a_page_of_twenty_five_thousand_links() {
    the_default_reporters_write_the_whole_task(spinneret_tests::synthetic::Shape {
        pages: 1,
        sites: 1,
        leaves: 25_000,
    });
}

/// Crawl the synthetic web of `shape` (one site task, default reporters)
/// and check that both reports hold the whole task: the JSON lines a
/// line per URL in URL order, a document line per page and the summary;
/// the index an entry per page and a row per reference.
fn the_default_reporters_write_the_whole_task(shape: spinneret_tests::synthetic::Shape) {
    use std::sync::{Arc, OnceLock};
    let (pages, leaves) = (shape.pages as usize, shape.leaves as usize);
    let port = Arc::new(OnceLock::new());
    let web = TestWeb::start(shape.web(port.clone()));
    let _ = port.set(web.port());
    let setup = Setup::new(&web, &shape.tasks_toml(web.port(), true));
    let stderr = common::expect_exit(&common::crawl(&setup, &[]), 1);
    assert!(!stderr.contains("failed"), "{stderr}");
    let out = setup.path().join("reports/site0");
    let task = setup.task_results("site0");
    assert!(task.len() > pages * leaves, "{}", task.len());

    let jsonl = std::fs::read_to_string(out.join("report.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let urls: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "url")
        .map(|l| l["url"].as_str().unwrap())
        .collect();
    let mut expected: Vec<&str> = task.keys().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(urls, expected);
    let documents = lines.iter().filter(|l| l["type"] == "document").count();
    assert_eq!(documents, pages);
    let summary = lines.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["urls"], task.len());
    assert_eq!(summary["documents"], pages);

    let index = Index::read(&out.join("index.html"));
    assert_eq!(index.entries().len(), pages);
    let rows = index.html.select(&sel("table.references tbody tr")).count();
    let references: usize = lines
        .iter()
        .filter(|l| l["type"] == "document")
        .map(|l| l["references"].as_array().unwrap().len())
        .sum();
    assert_eq!(rows, references);
    assert!(rows > pages * leaves, "{rows}");
}

/// The order findings are handed to reporters in is written in the WIT's
/// `on-findings` (the contract plugin authors read), in the host (which
/// sorts them) and in the SDK (whose harness mimics the host): all three agree.
#[test]
fn the_host_the_sdk_and_the_wit_agree_on_the_order_of_finding_kinds() {
    let wit = include_str!("../../../wit/since_v0.5.0/plugins.wit");
    let start = wit
        .find("/// Things the change detectors noticed")
        .expect("on-findings is documented");
    let end = start
        + wit[start..]
            .find("on-findings:")
            .expect("on-findings is declared");
    let promised: Vec<&str> = wit[start..end].split('`').skip(1).step_by(2).collect();
    assert_eq!(promised, spinneret::report::FINDING_KIND_ORDER);
    assert_eq!(promised, spinneret_sdk::reporter::FINDING_KIND_ORDER);
}

/// The documents of a task's JSON report, in the order written.
fn report_documents(setup: &Setup, task: &str) -> Vec<String> {
    std::fs::read_to_string(setup.path().join(format!("reports/{task}/report.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "document")
        .map(|l| l["url"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tasks_on_two_workers_sharing_documents_each_get_theirs_in_url_order() {
    let web = TestWeb::start(maintenance_web());
    let a = |p: &str| web.url("a.example", p);
    // Three tasks over two workers (one reader hands both their URLs): the
    // tree's documents are the site's too, whichever worker keeps each.
    let config = format!(
        "{TASK}\n[[task]]\nname = \"Docs\"\nkind = \"tree\"\ntop = \"http://a.example:{{PORT}}/docs/index.html\"\n\n\
         [[task]]\nname = \"Again\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n"
    );
    let setup = Setup::new(&web, &config);
    let out = common::crawl_with_report_workers(&setup, 2);
    common::expect_exit(&out, 1);
    let site = report_documents(&setup, "A");
    let mut sorted = site.clone();
    sorted.sort();
    assert_eq!(site, sorted, "the site's documents in URL order");
    assert!(site.contains(&a("/docs/guide.html")), "{site:?}");
    assert_eq!(report_documents(&setup, "Again"), site);
    assert_eq!(
        report_documents(&setup, "Docs"),
        [a("/docs/guide.html"), a("/docs/index.html")]
    );
    // The index numbers them in the same order.
    for task in ["A", "Docs", "Again"] {
        let index = Index::read(&setup.path().join(format!("reports/{task}/index.html")));
        let numbered: Vec<String> = (1..=index.entries().len())
            .map(|n| {
                index
                    .entries()
                    .into_iter()
                    .find(|(_, id)| *id == format!("d{n}"))
                    .map(|(url, _)| url)
                    .unwrap()
            })
            .collect();
        assert_eq!(numbered, report_documents(&setup, task), "{task}");
    }
}

/// A `web` task's maintenance index and JSON report name its kind (the
/// plugins' task-kind has three; the host writes every task's kind in the
/// run's options): before, the index said "for the Site task".
#[test]
fn a_web_tasks_reports_name_its_kind() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://a.example:{PORT}/index.html\"\nlevels = 1\n",
    );
    crawl(&setup);
    let dir = setup.path().join("reports/Worm");
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        index.contains(" for the Web task <b>Worm</b> "),
        "{index:.2000}"
    );
    assert!(!index.contains("task_kinds"), "{index:.2000}");
    let json = std::fs::read_to_string(dir.join("report.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "web");
}
