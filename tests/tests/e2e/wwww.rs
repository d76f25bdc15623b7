//! The World Wide Web Worm (seed 001, part 2): the `web` task kind, the
//! archive of Table 4 exported, imported and resumed from, and bad HTML.

use crate::common::{self, expect_exit, text};
use spinneret_tests::harness::Setup;
use spinneret_tests::server::{Route, Site, TestWeb, Web};

/// Four hosts, a chain of documents from a.example's index: b.example is
/// one link away, c.example two, d.example three (beyond `levels = 2`).
fn worm_web() -> Web {
    let a = Site::new()
        .page(
            "/index.html",
            "<html><head><title>Worm Home</title></head><body>\
             <a href=\"http://b.example:{PORT}/b.html\">B's page</a>\
             <a href=\"/photo.html\"><img src=\"/photo.gif\">McBryan's photo</a>\
             <img src=\"/logo.png\">\
             <a href=\"/bad.html\">bad</a>\
             <form action=\"/search\"><input name=q></form></body></html>",
        )
        .page(
            "/photo.html",
            "<html><head><title>Photo</title></head><body><a href=\"/index.html\">Home</a></body></html>",
        )
        // No title, an attribute running into the next, a <b> never closed.
        .page(
            "/bad.html",
            "<html><body><b>bold <a href=\"/index.html\" title=\"home\"x>Home</a></body></html>",
        )
        .route("/photo.gif", Route::file("image/gif", &b"GIF89a"[..]))
        .route("/logo.png", Route::file("image/png", &b"\x89PNG"[..]));
    let b = Site::new().page(
        "/b.html",
        "<html><head><title>B</title></head><body><a href=\"http://c.example:{PORT}/c.html\">Deeper</a></body></html>",
    );
    let c = Site::new().page(
        "/c.html",
        "<html><head><title>C</title></head><body><a href=\"http://d.example:{PORT}/d.html\">Too deep</a></body></html>",
    );
    let d = Site::new().page("/d.html", "<html><head><title>D</title></head></html>");
    Web::new()
        .site("a.example", a)
        .site("b.example", b)
        .site("c.example", c)
        .site("d.example", d)
}

fn start() -> TestWeb {
    TestWeb::start(worm_web())
}

const WORM_TASK: &str = "accept = \"text/html\"\nfrom = \"worm@example.org\"\n\n\
    [[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://a.example:{PORT}/index.html\"\nlevels = 2\n";

/// `spinneret archive export` with `args`: its standard output.
fn export(args: &[&str]) -> String {
    let mut all = vec!["archive", "export"];
    all.extend_from_slice(args);
    let out = common::spinneret(&all);
    expect_exit(&out, 0);
    text(&out.stdout)
}

/// The archive the Worm's crawl of `web` writes, as the seed's Table 4
/// defines it, documents in URL order.
fn expected_archive(web: &TestWeb) -> String {
    let u = |host: &str, path: &str| web.url(host, path);
    let (index, photo, bad) = (
        u("a.example", "/index.html"),
        u("a.example", "/photo.html"),
        u("a.example", "/bad.html"),
    );
    let (b, c, d) = (
        u("b.example", "/b.html"),
        u("c.example", "/c.html"),
        u("d.example", "/d.html"),
    );
    [
        format!("T {bad} Zero Length Title"),
        format!("R {index} {bad} Home"),
        format!("C {bad}"),
        format!("T {index} Worm Home"),
        format!("R {b} {index} B's page"),
        format!("R {photo} {index} McBryan's photo"),
        // An image in a link takes the link's anchor text; one alone, the title.
        format!("I {} {index} McBryan's photo", u("a.example", "/photo.gif")),
        format!("I {} {index} Worm Home", u("a.example", "/logo.png")),
        format!("R {bad} {index} bad"),
        format!("C {index}"),
        format!("T {photo} Photo"),
        format!("R {index} {photo} Home"),
        format!("C {photo}"),
        format!("T {b} B"),
        format!("R {c} {b} Deeper"),
        format!("C {b}"),
        format!("T {c} C"),
        format!("R {d} {c} Too deep"),
        format!("C {c}"),
    ]
    .map(|l| l + "\n")
    .concat()
}

#[test]
fn the_worm_crawls_any_host_to_its_levels_and_exports_table_4() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    let out = common::crawl(&setup, &[]);
    expect_exit(&out, 0);
    let config = setup.config_path.to_str().unwrap();
    assert_eq!(export(&["-c", config]), expected_archive(&web));

    // d.example is three links away: tested as a leaf (HEAD), not read.
    assert_eq!(web.methods("d.example", "/d.html"), vec!["HEAD"]);
    assert_eq!(web.methods("c.example", "/c.html"), vec!["GET"]);
    // The Worm's headers: the configured Accept, and From.
    let get = web
        .requests()
        .into_iter()
        .find(|r| r.path == "/index.html")
        .unwrap();
    assert_eq!(get.header("accept"), Some("text/html"));
    assert_eq!(get.header("from"), Some("worm@example.org"));
}

#[test]
fn export_import_export_gives_the_same_lines_in_both_formats() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let config = setup.config_path.to_str().unwrap();
    for format in ["wwww", "jsonl"] {
        let first = export(&["-c", config, "--format", format]);
        let file = setup.path().join(format!("archive.{format}"));
        std::fs::write(&file, &first).unwrap();
        let empty = setup.path().join(format!("empty-{format}.db"));
        let empty = empty.to_str().unwrap();
        let out = common::spinneret(&[
            "archive",
            "import",
            file.to_str().unwrap(),
            "--store",
            empty,
        ]);
        let said = expect_exit(&out, 0);
        assert!(said.contains("5 documents of 5 were new"), "{said}");
        assert_eq!(
            export(&["--store", empty, "--format", format]),
            first,
            "{format}"
        );
    }
    let jsonl = export(&["-c", config, "--format", "jsonl"]);
    let bad = jsonl.lines().next().unwrap();
    let v: serde_json::Value = serde_json::from_str(bad).unwrap();
    assert_eq!(v["type"], "T");
    assert_eq!(v["title"], "Zero Length Title");
    assert_eq!(
        v["bad_html"],
        serde_json::json!({"missing-quote": 1, "unclosed-element": 1, "no-title": 1})
    );
}

#[test]
fn a_crawl_given_the_archive_rereads_only_documents_whose_c_line_was_deleted() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let config = setup.config_path.to_str().unwrap();
    let photo = web.url("a.example", "/photo.html");
    let b = web.url("b.example", "/b.html");
    let archive: String = export(&["-c", config])
        .lines()
        .filter(|l| *l != format!("C {photo}") && *l != format!("C {b}"))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = setup.path().join("old.archive");
    std::fs::write(&file, archive).unwrap();
    web.clear_log();
    let out = common::crawl(&setup, &["--archive", file.to_str().unwrap()]);
    expect_exit(&out, 0);
    let gets: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path != "/robots.txt")
        .map(|r| format!("{}{}", r.host, r.path))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // The two documents whose C lines went are read again, nothing else:
    // the index and c.html are followed through their archived references.
    assert_eq!(gets, vec!["a.example/photo.html", "b.example/b.html"]);
    // And the new run's export marks all completed again.
    assert_eq!(export(&["-c", config]), expected_archive(&web));
}

#[test]
fn bad_html_is_listed_in_the_maintenance_index() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let index = std::fs::read_to_string(setup.path().join("reports/Worm/index.html")).unwrap();
    assert!(index.contains("Bad HTML (1)"), "{index}");
    assert!(
        index.contains(
            "missing-quote ×1 (an attribute value&#39;s quote is missing or misplaced); \
             unclosed-element ×1 (an element that needs an end tag was left open); \
             no-title ×1 (the document has no title)"
        ),
        "{index}"
    );
}

#[test]
fn bad_archive_lines_and_misplaced_levels_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.archive");
    std::fs::write(&file, "T http://a.example/ A\nQ what\n").unwrap();
    let store = dir.path().join("s.db");
    let out = common::spinneret(&[
        "archive",
        "import",
        file.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    let err = expect_exit(&out, 2);
    assert!(
        err.contains(&format!(
            "{}:2: `Q` is not a line kind; an archive line starts with T, R, I or C and a space",
            file.display()
        )),
        "{err}"
    );
    let config = dir.path().join("c.toml");
    std::fs::write(
        &config,
        "[[task]]\nname = \"S\"\nkind = \"site\"\ntop = \"http://a.example/\"\nlevels = 2\n",
    )
    .unwrap();
    let out = common::spinneret(&["crawl", config.to_str().unwrap()]);
    let err = expect_exit(&out, 2);
    assert!(
        err.contains("c.toml:5:10: `levels` is the recursion depth of a `web` task; for this task write `max_depth`"),
        "{err}"
    );
}

/// A new store `s.db` in a temporary directory, holding the archive
/// `text` (imported from a file `name`, whose extension tells its form):
/// the directory and the store's path.
fn store_of(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db").to_str().unwrap().to_string();
    let file = dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    expect_exit(
        &common::spinneret(&[
            "archive",
            "import",
            file.to_str().unwrap(),
            "--store",
            &store,
        ]),
        0,
    );
    (dir, store)
}

/// Hostile archives (found by a hostile trial): a URL with a line break
/// in it is refused at its line (it would have been a forged line of an
/// export), URLs are kept in the crawl's form (`HTTP://` and `:80` name the
/// same document as a crawl's), a title is held to what a crawl keeps, an
/// empty store name is refused, and an import waits for no crawl: while a
/// crawl holds the store it is refused, touching nothing.
#[test]
fn hostile_archives_are_refused_or_kept_as_a_crawl_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let store_arg = store.to_str().unwrap();
    let import = |name: &str, body: &str, store: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, body).unwrap();
        common::spinneret(&[
            "archive",
            "import",
            file.to_str().unwrap(),
            "--store",
            store,
        ])
    };
    let forged = "{\"type\":\"R\",\"url\":\"http://b.example/\",\"html\":\"http://a.example/\\nC http://victim.example/\",\"text\":\"\"}\n";
    let err = expect_exit(&import("forged.jsonl", forged, store_arg), 2);
    assert!(
        err.contains("forged.jsonl:1: the document URL `http://a.example/\\nC http://victim.example/` holds the character '\\n'; a URL has none"),
        "{err}"
    );
    let typed = "{\"type\":\"T\",\"html\":\"http://a.example/\",\"title\":12345}\n";
    let err = expect_exit(&import("typed.jsonl", typed, store_arg), 2);
    assert!(
        err.contains("typed.jsonl:1: `title` is a number; it must be a string"),
        "{err}"
    );
    let err = expect_exit(
        &import("extra.wwww", "C http://a.example/ extra stuff\n", store_arg),
        2,
    );
    assert!(
        err.contains(
            "extra.wwww:1: the document URL `http://a.example/ extra stuff` holds a space"
        ),
        "{err}"
    );
    let long = "word ".repeat(200);
    let body = format!(
        "T HTTP://A.example:80/x/../page.html {long}\nR http://b.example/ http://a.example/page.html Bee\nC http://a.example/page.html\n"
    );
    let err = expect_exit(&import("upper.wwww", &body, store_arg), 0);
    assert!(err.contains("1 documents of 1 were new"), "{err}");
    let exported = export(&["--store", store_arg]);
    let title = &long[..512];
    assert_eq!(
        exported,
        format!(
            "T http://a.example/page.html {title}\nR http://b.example/ http://a.example/page.html Bee\nC http://a.example/page.html\n"
        )
    );
    let err = expect_exit(&import("empty.wwww", "C http://a.example/\n", ""), 2);
    assert!(err.contains("the store is empty; name a file"), "{err}");
    // A crawl holds the store: refused, naming it, and nothing is written.
    let held = spinneret_store::CrawlLock::acquire(&store).unwrap();
    let err = expect_exit(&import("new.wwww", "C http://new.example/\n", store_arg), 2);
    assert!(err.contains("is in use by another crawl"), "{err}");
    drop(held);
    assert!(!export(&["--store", store_arg]).contains("new.example"));
}

/// `spinneret archive import FILE --store STORE`.
fn import_into(file: &std::path::Path, store: &str) -> std::process::Output {
    common::spinneret(&[
        "archive",
        "import",
        file.to_str().unwrap(),
        "--store",
        store,
    ])
}

/// An archive whose lines for one document are spread over it (a `T`
/// line, twelve thousand other documents, then more of its references and
/// a second `T`), more documents than one batch of the import writes:
/// each document is exported as its lines gathered make it, as when the
/// import read the file whole. A document the store held before an import
/// keeps what it had; its `C` line is kept.
#[test]
fn a_documents_lines_spread_over_the_archive_are_imported_together() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let store = store.to_str().unwrap();
    let filler = |from: usize, to: usize| -> String {
        (from..to)
            .map(|i| format!("T http://f.example/{i:05} F\n"))
            .collect()
    };
    let archive = format!(
        "R http://x.example/1 http://a.example/ one\n\
         T http://b.example/ B\n\
         T http://a.example/ A\n\
         {}\
         R http://x.example/2 http://b.example/ b's\n\
         I http://x.example/i.gif http://a.example/ img\n\
         C http://c.example/\n\
         {}\
         R http://x.example/3 http://a.example/ three\n\
         T http://b.example/ B again\n\
         C http://a.example/\n\
         R http://b.example/ http://c.example/ back\n",
        filler(0, 6_000),
        filler(6_000, 12_000)
    );
    let file = dir.path().join("spread.wwww");
    std::fs::write(&file, archive).unwrap();
    let said = expect_exit(&import_into(&file, store), 0);
    assert!(said.contains("12003 documents of 12003 were new"), "{said}");
    let expected = format!(
        "T http://a.example/ A\n\
         R http://x.example/1 http://a.example/ one\n\
         I http://x.example/i.gif http://a.example/ img\n\
         R http://x.example/3 http://a.example/ three\n\
         C http://a.example/\n\
         T http://b.example/ B again\n\
         R http://x.example/2 http://b.example/ b's\n\
         T http://c.example/ Zero Length Title\n\
         R http://b.example/ http://c.example/ back\n\
         C http://c.example/\n\
         {}",
        filler(0, 12_000)
    );
    assert_eq!(export(&["--store", store]), expected);
    // Imported again: b, held before, keeps what it had, and its C line.
    let again = dir.path().join("again.wwww");
    std::fs::write(
        &again,
        "T http://b.example/ Changed\nT http://n.example/ N\n\
         R http://y.example/ http://b.example/ not kept\nC http://b.example/\n",
    )
    .unwrap();
    let said = expect_exit(&import_into(&again, store), 0);
    assert!(said.contains("1 documents of 2 were new"), "{said}");
    let expected = expected.replace(
        "R http://x.example/2 http://b.example/ b's\n",
        "R http://x.example/2 http://b.example/ b's\nC http://b.example/\n",
    ) + "T http://n.example/ N\n";
    assert_eq!(export(&["--store", store]), expected);
}

/// The import reads a line at a time, within a bound: `/dev/zero`, one
/// endless line, is refused at its first line at once (it was read to a
/// 4 GiB cap, 8.4 GB of memory); and a bad line after more documents than
/// a batch holds keeps none of them (the import is one transaction).
#[test]
fn an_endless_line_and_a_bad_last_line_are_refused_keeping_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let store = store.to_str().unwrap();
    let err = expect_exit(&import_into(std::path::Path::new("/dev/zero"), store), 2);
    assert!(
        err.contains(
            "/dev/zero:1: the line is longer than 1 MiB; an archive line is its kind, one or two URLs and a title (at most 512 characters) or an anchor text (256)"
        ),
        "{err}"
    );
    let mut archive: String = (0..25_000)
        .map(|i| format!("T http://a.example/{i} A\nC http://a.example/{i}\n"))
        .collect();
    archive.push_str("Q http://a.example/\n");
    let file = dir.path().join("bad-end.wwww");
    std::fs::write(&file, archive).unwrap();
    let err = expect_exit(&import_into(&file, store), 2);
    assert!(
        err.contains(&format!("{}:50001: `Q` is not a line kind", file.display())),
        "{err}"
    );
    assert_eq!(export(&["--store", store]), "");
}

/// `archive export -o` never writes over the store it reads (it replaced
/// it with the archive), makes no directory, writes through a symbolic link
/// and to a device as it is.
#[test]
fn export_never_writes_over_its_store() {
    let expected = "T http://a.example/ A\nC http://a.example/\n";
    let (dir, s) = store_of("a.wwww", expected);
    let store = std::path::PathBuf::from(&s);
    let s = s.as_str();
    let to = |out: &std::path::Path| {
        common::spinneret(&[
            "archive",
            "export",
            "--store",
            s,
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let err = expect_exit(&to(&store), 2);
    assert!(err.contains("it is the store being read"), "{err}");
    let link = dir.path().join("store-link.db");
    std::os::unix::fs::symlink(&store, &link).unwrap();
    let err = expect_exit(&to(&link), 2);
    assert!(err.contains("it is the store being read"), "{err}");
    assert_eq!(export(&["--store", s]), expected, "the store is intact");
    let err = expect_exit(&to(&dir.path().join("no/such/dir/a.wwww")), 2);
    assert!(err.contains("there is no directory"), "{err}");
    assert!(!dir.path().join("no").exists());
    // Through a link to a file: the file is replaced, the link kept.
    let target = dir.path().join("target.wwww");
    std::fs::write(&target, "old").unwrap();
    let via = dir.path().join("via.wwww");
    std::os::unix::fs::symlink(&target, &via).unwrap();
    expect_exit(&to(&via), 0);
    assert!(
        std::fs::symlink_metadata(&via)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), expected);
    // A device is written to, not replaced.
    expect_exit(&to(std::path::Path::new("/dev/null")), 0);
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// A search that finds the index being updated by another process waits
/// for it and then answers (two searches at once on a store whose index
/// was behind: one failed on tantivy's writer lock).
#[test]
fn a_search_waits_for_another_process_updating_the_index() {
    let (dir, s) = store_of(
        "a.wwww",
        "T http://a.example/ Waiting room\nC http://a.example/\n",
    );
    let s = s.as_str();
    // Another process's update, as its lock says.
    let lock = std::fs::File::create(dir.path().join("s.db.search.lock")).unwrap();
    lock.lock().unwrap();
    let mut search = common::command()
        .args(["search", "--store", s, "waiting"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(search.try_wait().unwrap().is_none(), "it waits");
    drop(lock);
    let mut out = String::new();
    use std::io::Read;
    search
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    search
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(search.wait().unwrap().code(), Some(0), "{err}");
    assert!(out.starts_with("1. Waiting room\n"), "{out}");
    assert!(
        err.contains("another process is updating the search index"),
        "{err}"
    );
}

/// A damaged index (its files overwritten in part) is a one-line error
/// that says to rebuild it, not a crash (tantivy panics on some damage),
/// and the rebuild mends it.
#[test]
fn a_damaged_index_says_to_rebuild_it() {
    let words = ["alpha", "beta", "gamma", "delta", "omega"];
    let mut archive = String::new();
    for i in 0..3000 {
        let w = |k: usize| words[(i * 7 + k * 3) % words.len()];
        archive.push_str(&format!(
            "T http://h{}.example/p{i}.html {} {} {}\nR http://h{}.example/p{}.html http://h{}.example/p{i}.html {}\nC http://h{}.example/p{i}.html\n",
            i % 50, w(0), w(1), w(2), (i + 1) % 50, i + 1, i % 50, w(3), i % 50
        ));
    }
    let (dir, s) = store_of("a.wwww", &archive);
    let s = s.as_str();
    expect_exit(&common::spinneret(&["index", "--store", s]), 0);
    for ext in ["idx", "term"] {
        let part = std::fs::read_dir(dir.path().join("s.db.search"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == ext))
            .unwrap();
        let mut bytes = std::fs::read(&part).unwrap();
        let n = bytes.len();
        bytes[n / 4..n / 2].fill(0xff);
        std::fs::write(&part, bytes).unwrap();
        let out = common::spinneret(&["search", "--store", s, "alpha"]);
        let err = expect_exit(&out, 2);
        assert!(
            err.contains("rebuild it with `spinneret index --rebuild`"),
            "{ext}: {err}"
        );
        assert!(!err.contains("panicked"), "{ext}: {err}");
        assert_eq!(err.lines().count(), 1, "{ext}: {err}");
        expect_exit(&common::spinneret(&["index", "--rebuild", "--store", s]), 0);
        let out = common::spinneret(&["search", "--store", s, "alpha"]);
        expect_exit(&out, 0);
    }
}

/// Text from pages reaches a terminal with its control characters
/// escaped: a title cannot clear the screen of the person searching.
#[test]
fn search_shows_control_characters_as_escapes() {
    let (_dir, s) = store_of(
        "a.jsonl",
        "{\"type\":\"T\",\"html\":\"http://a.example/\",\"title\":\"esc \\u001b[2J\\u001b]0;PWNED\\u0007 end\"}\n",
    );
    let out = common::spinneret(&["search", "--store", &s, "end"]);
    let shown = text(&out.stdout);
    assert!(
        shown.starts_with("1. esc \\u{1b}[2J\\u{1b}]0;PWNED\\u{7} end\n"),
        "{shown:?}"
    );
    assert!(!shown.contains('\u{1b}'));
}

/// `spinneret search ARGS` on `setup`'s store: (exit code, stdout, stderr).
fn search(setup: &Setup, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["search", "-c", setup.config_path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = common::spinneret(&all);
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The URLs of a `--json` search, in rank order.
fn ranked(setup: &Setup, args: &[&str]) -> Vec<String> {
    // Options first: what follows the query's first word is the query.
    let (options, query): (Vec<&str>, Vec<&str>) = args.iter().partition(|a| a.starts_with("--"));
    let mut all = vec!["--json", "--limit", "50"];
    all.extend(options);
    all.extend(query);
    let (code, out, err) = search(setup, &all);
    assert!(code == 0 || code == 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["schema"], "spinneret.search/1");
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["url"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn search_finds_titles_anchor_text_citing_documents_url_parts_and_bad_html() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let u = |host: &str, path: &str| web.url(host, path);
    // The crawl of a web task built the index: the search says nothing of building it.
    let (code, out, err) = search(&setup, &["worm"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("search index"), "{err}");
    // The title's document first; the documents it cites match on `cited-by`
    // (equally: their order among themselves is not asserted).
    assert!(
        out.starts_with(&format!(
            "1. Worm Home\n   {}\n",
            u("a.example", "/index.html")
        )),
        "{out}"
    );
    assert!(out.contains("4 results, 1–4 shown ("), "{out}");
    let mut all = ranked(&setup, &["worm"]);
    all.sort();
    assert_eq!(
        all,
        vec![
            u("a.example", "/bad.html"),
            u("a.example", "/index.html"),
            u("a.example", "/photo.html"),
            u("b.example", "/b.html"),
        ]
    );
    // "All MPEG movies in Finland", here: GIFs on a.example, with the anchor
    // text and the citing document.
    let (code, out, _) = search(&setup, &["--urls", "ext:gif", "host:a"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(&format!(
            "1. McBryan's photo\n   {}\n   cited by: Worm Home <{}>\n1 result, 1–1 shown",
            u("a.example", "/photo.gif"),
            u("a.example", "/index.html")
        )),
        "{out}"
    );
    // Documents only (the default) leave the images out.
    assert_eq!(ranked(&setup, &["ext:gif"]), Vec::<String>::new());
    assert_eq!(
        ranked(&setup, &["bad:no-title"]),
        vec![u("a.example", "/bad.html")]
    );
    assert_eq!(
        ranked(&setup, &["bad:missing-quote"]),
        vec![u("a.example", "/bad.html")]
    );
    assert_eq!(
        ranked(&setup, &["anchor:\"too deep\""]),
        Vec::<String>::new()
    );
    assert_eq!(
        ranked(&setup, &["--urls", "anchor:\"too deep\""]),
        vec![u("d.example", "/d.html")]
    );
    assert_eq!(ranked(&setup, &["title:c", "OR", "title:b"]).len(), 2);
    assert_eq!(
        ranked(&setup, &["host:example", "-host:a"]),
        vec![u("b.example", "/b.html"), u("c.example", "/c.html")]
    );
    // A regular expression on a field's words, as the Worm's egrep.
    let mut photos = ranked(&setup, &["--urls", "url:/pho[a-z]+/"]);
    photos.sort();
    assert_eq!(
        photos,
        vec![u("a.example", "/photo.gif"), u("a.example", "/photo.html")]
    );
    // --explain shows the BM25 terms and the prior.
    let (_, out, _) = search(&setup, &["--explain", "title:photo"]);
    assert!(out.contains("= BM25 "), "{out}");
    assert!(
        out.contains("× prior 1.0693 (1 + 0.1 × ln(1 + 1 references))"),
        "{out}"
    );
    assert!(
        out.contains("TermQuery, product of...  [title:\"photo\"]"),
        "{out}"
    );
    // Nothing found: exit 1.
    assert_eq!(search(&setup, &["zzyzx"]).0, 1);
}

#[test]
fn queries_beyond_the_bounds_are_refused_with_the_reason() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let (code, _, err) = search(&setup, &["url:/a/ url:/b/ url:/c/ url:/d/"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the query has 4 regular expressions; at most 3 are allowed"),
        "{err}"
    );
    let long = "x".repeat(513);
    let (code, _, err) = search(&setup, &[&long]);
    assert_eq!(code, 2);
    assert!(
        err.contains("the query is longer than 512 characters"),
        "{err}"
    );
    let (code, _, err) = search(&setup, &["--limit", "1000", "worm"]);
    assert_eq!(code, 2);
    assert!(err.contains("a page holds 1 to 200 results"), "{err}");
}

/// `serve`'s JSON API answers as `search --json` does, with its schema,
/// and refuses what it cannot answer with the reason, as JSON.
#[test]
fn the_json_api_answers_the_seed_s_searches_and_says_what_it_refuses() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let s = common::serve(&["-c".as_ref(), setup.config_path.as_os_str()]);
    let json = |path: &str| {
        let (status, headers, body) = common::get(&s, path);
        let kind = headers.iter().find(|(n, _)| n == "content-type");
        assert_eq!(kind.map(|(_, v)| v.as_str()), Some("application/json"));
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["schema"], "spinneret.search/1", "{body}");
        (status, v)
    };
    let u = |host: &str, path: &str| web.url(host, path);
    let (status, v) = json("/api/search?mode=urls&q=ext%3Agif+host%3Aa");
    assert_eq!(status, 200);
    assert_eq!(
        (v["mode"].as_str(), v["total"].as_u64()),
        (Some("urls"), Some(1))
    );
    let hit = &v["hits"][0];
    assert_eq!(hit["url"], u("a.example", "/photo.gif"));
    assert_eq!(hit["anchor"], "McBryan's photo");
    assert_eq!(hit["cited_by"], u("a.example", "/index.html"));
    assert_eq!(hit["cited_by_title"], "Worm Home");
    // Documents, a page at a time.
    let (status, v) = json("/api/search?q=worm&limit=2&page=2");
    assert_eq!(status, 200);
    assert_eq!(
        (v["total"].as_u64(), v["page"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(v["hits"].as_array().unwrap().len(), 2);
    for (query, said) in [
        (
            "q=worm&mode=bogus",
            "mode must be documents or urls, not \"bogus\"",
        ),
        ("q=worm&limit=1000", "a page holds 1 to 200 results"),
        ("q=worm&page=x", "the parameters cannot be read"),
    ] {
        let (status, v) = json(&format!("/api/search?{query}"));
        assert_eq!(status, 400, "{query}");
        assert!(
            v["error"].as_str().unwrap().starts_with(said),
            "{query}: {v}"
        );
    }
    // The page says the same of a mode it does not know.
    let (status, _, page) = common::get(&s, "/?q=worm&mode=bogus");
    assert_eq!(status, 400);
    assert!(
        page.contains("mode must be documents or urls, not &#34;bogus&#34;"),
        "{page}"
    );
}

/// `search_index` puts the index where the user chooses (a faster disk, a
/// shared directory; for a database store, not the data directory): the
/// crawl keeps it there, `search` and `index` read it there, nothing is
/// made beside the store, and `--index` names another for one command.
#[test]
fn the_index_lives_where_search_index_says() {
    let web = start();
    let setup = Setup::new(&web, &format!("search_index = \"worm-index\"\n{WORM_TASK}"));
    expect_exit(&common::crawl(&setup, &[]), 0);
    let chosen = setup.path().join("worm-index");
    let beside = setup.path().join("store.db.search");
    assert!(chosen.join("spinneret-index.json").is_file());
    assert!(!beside.exists());
    let (code, _, err) = search(&setup, &["worm"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("search index"), "built nothing: {err}");
    assert_eq!(ranked(&setup, &["worm"]).len(), 4);
    let config = setup.config_path.to_str().unwrap();
    let out = common::spinneret(&["index", "-c", config]);
    let said = expect_exit(&out, 0);
    assert!(
        said.starts_with(&format!("updated {}: ", chosen.display())),
        "{said}"
    );
    // Another directory for one command: built there, from the same store.
    let other = setup.path().join("elsewhere");
    let out = common::spinneret(&[
        "search",
        "-c",
        config,
        "--index",
        other.to_str().unwrap(),
        "--urls",
        "worm",
    ]);
    let said = expect_exit(&out, 0);
    assert!(other.join("spinneret-index.json").is_file(), "{said}");
    assert!(!beside.exists());
}

#[test]
fn the_index_is_updated_with_only_what_changed() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let index = web.url("a.example", "/index.html");
    assert_eq!(ranked(&setup, &["--urls", "novel"]), Vec::<String>::new());
    // One new document, from an archive, citing the index with new words.
    let file = setup.path().join("new.archive");
    std::fs::write(
        &file,
        format!("T http://new.example/n.html New\nR {index} http://new.example/n.html Novel name\nC http://new.example/n.html\n"),
    )
    .unwrap();
    let config = setup.config_path.to_str().unwrap();
    expect_exit(
        &common::spinneret(&["archive", "import", file.to_str().unwrap(), "-c", config]),
        0,
    );
    let (code, out, err) = search(&setup, &["--urls", "novel"]);
    assert_eq!(code, 0, "{err}");
    // Two entries: the new document and the URL it cites; nothing else.
    assert!(
        err.contains("search index updated: 2 entries from 1 of 6 documents"),
        "{err}"
    );
    // A URL result shows the anchor text of a reference to it and the
    // document it is from (the first citing document the store met).
    assert!(
        out.starts_with(&format!(
            "1. Home\n   {index}\n   cited by: Photo <{}>\n",
            web.url("a.example", "/photo.html")
        )),
        "{out}"
    );
    // A second archive: its one document is all the update reads (the
    // first import's documents are not read again).
    let second = setup.path().join("second.archive");
    std::fs::write(
        &second,
        format!(
            "T http://new.example/m.html More\nR {index} http://new.example/m.html Further name\n"
        ),
    )
    .unwrap();
    expect_exit(
        &common::spinneret(&["archive", "import", second.to_str().unwrap(), "-c", config]),
        0,
    );
    let (code, _, err) = search(&setup, &["--urls", "further"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("search index updated: 2 entries from 1 of 7 documents"),
        "{err}"
    );
    // The index still knows the rest, and a rebuild gives the same answers.
    let before = ranked(&setup, &["--urls", "example"]);
    let out = common::spinneret(&["index", "--rebuild", "-c", config]);
    let err = expect_exit(&out, 0);
    assert!(err.contains("built "), "{err}");
    // Seven documents and the three other URLs they reference.
    assert!(err.contains(": 10 entries from 7 of 7 documents"), "{err}");
    assert_eq!(ranked(&setup, &["--urls", "example"]), before);
}

#[test]
fn an_update_reads_only_what_was_written_since_and_drops_references_no_longer_made() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    // The home page cites /old.html until it is edited to cite /new.html.
    let edited = Arc::new(AtomicBool::new(false));
    let now = edited.clone();
    let site = Site::new()
        .generated(Arc::new(move |path: &str| {
            let first = match now.load(Ordering::SeqCst) {
                false => "<a href=\"/old.html\">Old words</a>",
                true => "<a href=\"/new.html\">Fresh words</a>",
            };
            (path == "/index.html").then(|| {
                Route::html(format!(
                    "<html><head><title>Home</title></head><body>{first}<a href=\"/keep.html\">Kept link</a></body></html>"
                ))
            })
        }))
        .page(
            "/keep.html",
            "<html><head><title>Keep</title></head><body><a href=\"/index.html\">Back home</a></body></html>",
        )
        .page("/old.html", "<html><head><title>Old page</title></head></html>")
        .page("/new.html", "<html><head><title>New page</title></head></html>");
    let web = TestWeb::start(Web::new().site("a.example", site));
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://a.example:{PORT}/index.html\"\nlevels = 1\n",
    );
    let u = |path: &str| web.url("a.example", path);
    expect_exit(&common::crawl(&setup, &[]), 0);
    assert_eq!(
        ranked(&setup, &["--urls", "anchor:words"]),
        vec![u("/old.html")]
    );

    edited.store(true, Ordering::SeqCst);
    let config = setup.config_path.to_str().unwrap();
    let err = expect_exit(&common::spinneret(&["crawl", config]), 0);
    // The second run read three documents (not /old.html, cited no more),
    // two of them changed (the home page, and /new.html read for the first
    // time; /keep.html reads as before): the update reads those two and
    // rewrites the entries of the four URLs they are, cite or cited.
    assert!(
        err.contains("search index updated: 4 entries from 2 of 4 documents"),
        "{err}"
    );
    assert_eq!(
        ranked(&setup, &["--urls", "anchor:words"]),
        vec![u("/new.html")]
    );
    assert_eq!(
        ranked(&setup, &["--urls", "anchor:old"]),
        Vec::<String>::new()
    );
    // /old.html keeps its entry, as a document no one cites now.
    assert_eq!(ranked(&setup, &["title:old"]), vec![u("/old.html")]);

    // A third run reads the same three documents, unchanged: the index has
    // nothing to do.
    let err = expect_exit(&common::spinneret(&["crawl", config]), 0);
    assert!(!err.contains("search index"), "{err}");

    // A rebuild from the whole store gives the same answers.
    let queries: [&[&str]; 6] = [
        &["--urls", "anchor:words"],
        &["--urls", "cited-by:home"],
        &["--urls", "page"],
        &["--urls", "home"],
        &["--urls", "kept"],
        &["keep"],
    ];
    let before: Vec<Vec<String>> = queries.iter().map(|q| ranked(&setup, q)).collect();
    let err = expect_exit(&common::spinneret(&["index", "--rebuild", "-c", config]), 0);
    assert!(err.contains(": 4 entries from 4 of 4 documents"), "{err}");
    let after: Vec<Vec<String>> = queries.iter().map(|q| ranked(&setup, q)).collect();
    assert_eq!(before, after);
}

#[test]
fn an_index_ahead_of_its_store_is_rebuilt() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    // A copy of the store as it is now, put back after an import the index
    // has seen (a store restored from a backup).
    let files = ["store.db", "store.db-wal", "store.db-shm"];
    let saved = setup.path().join("saved");
    std::fs::create_dir(&saved).unwrap();
    for f in files {
        if setup.path().join(f).exists() {
            std::fs::copy(setup.path().join(f), saved.join(f)).unwrap();
        }
    }
    let file = setup.path().join("new.archive");
    std::fs::write(
        &file,
        "T http://new.example/n.html Novel\nR http://new.example/x.html http://new.example/n.html Novel name\n",
    )
    .unwrap();
    let config = setup.config_path.to_str().unwrap();
    expect_exit(
        &common::spinneret(&["archive", "import", file.to_str().unwrap(), "-c", config]),
        0,
    );
    assert_eq!(ranked(&setup, &["--urls", "novel"]).len(), 2);
    for f in files {
        let _ = std::fs::remove_file(setup.path().join(f));
        if saved.join(f).exists() {
            std::fs::copy(saved.join(f), setup.path().join(f)).unwrap();
        }
    }
    let (code, _, err) = search(&setup, &["--urls", "novel"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("search index built"), "{err}");
}

/// What a person types is searched (issue 52): text with an apostrophe
/// or brackets as words, a name that is no field as part of a word, and a
/// mistake in an operator mended and said beside the results, never a
/// refusal; alike from `search`, the page and `/api/search`.
#[test]
fn a_query_a_person_types_is_searched_and_its_mistakes_said() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let u = |host: &str, path: &str| web.url(host, path);
    let photo = u("a.example", "/photo.html");
    // The seed's own anchor text, apostrophe and all.
    let (code, out, err) = search(&setup, &["McBryan's photo"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.starts_with(&format!("1. Photo\n   {photo}\n1 result, 1–1 shown (")),
        "{out}"
    );
    assert_eq!(
        ranked(&setup, &["--urls", "McBryan's", "photo"]),
        vec![photo.clone(), u("a.example", "/photo.gif")]
    );
    // Brackets and braces are text: searched, found nothing, said nothing.
    for query in ["[test]", "{x}"] {
        let (code, out, err) = search(&setup, &[query]);
        assert_eq!((code, err.as_str()), (1, ""), "{query}");
        assert!(out.starts_with("0 results ("), "{query}: {out}");
    }
    // Mistakes in operators: searched around, and said on standard error.
    for (query, code, first, note) in [
        (
            "title:",
            1,
            None,
            "note: `title:` has nothing after it; it was searched as the word title\n",
        ),
        (
            "a:b",
            1,
            None,
            "note: `a:` is not a field (the fields are title: anchor: cited-by: url: host: ext: bad:); `a:b` was searched as words\n",
        ),
        (
            "title:(worm",
            0,
            Some("Worm Home"),
            "note: a `(` is not closed; it was left out\n",
        ),
    ] {
        let (got, out, err) = search(&setup, &[query]);
        assert_eq!((got, err.as_str()), (code, note), "{query}");
        match first {
            Some(t) => assert!(out.starts_with(&format!("1. {t}\n")), "{query}: {out}"),
            None => assert!(out.starts_with("0 results ("), "{query}: {out}"),
        }
    }
    // The page and the API answer the same, with the note.
    let s = common::serve(&["-c".as_ref(), setup.config_path.as_os_str()]);
    let (status, _, page) = common::get(&s, "/?q=McBryan%27s+photo");
    assert_eq!(status, 200);
    assert!(page.contains("1 result, 1–1 shown"), "{page}");
    assert!(
        page.contains(&format!("href=\"{photo}\">Photo</a>")),
        "{page}"
    );
    let (status, _, page) = common::get(&s, "/?q=title%3A(worm");
    assert_eq!(status, 200);
    assert!(
        page.contains(
            "<ul class=\"notes\" role=\"status\"><li>a `(` is not closed; it was left out</li></ul>"
        ),
        "{page}"
    );
    assert!(page.contains(">Worm Home</a>"), "{page}");
    let (status, _, body) = common::get(&s, "/api/search?q=%5Btest%5D+title%3A");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["total"], 0);
    assert_eq!(
        v["notes"],
        serde_json::json!(["`title:` has nothing after it; it was searched as the word title"])
    );
}

/// A regular expression ignores case (the words indexed are lower-cased:
/// `title:/Wor.*/` found nothing), one on `url:` that spans words is
/// matched anywhere in the URL as the seed's egrep matched its lines
/// (`url:/photo\.gif/` found nothing), and one that can match no word of
/// another field says so rather than answer nothing without a word.
#[test]
fn regular_expressions_ignore_case_and_never_fail_without_a_word() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let u = |host: &str, path: &str| web.url(host, path);
    assert_eq!(
        ranked(&setup, &["title:/Wor.*/"]),
        vec![u("a.example", "/index.html")]
    );
    assert_eq!(
        ranked(&setup, &["--urls", r"url:/photo\.gif/"]),
        vec![u("a.example", "/photo.gif")]
    );
    assert_eq!(
        ranked(&setup, &["--urls", r"url:/^http:\/\/b\.example:[0-9]+\//"]),
        vec![u("b.example", "/b.html")]
    );
    let (code, out, err) = search(&setup, &["title:/worm home/"]);
    assert_eq!(code, 1);
    assert!(out.starts_with("0 results ("), "{out}");
    assert_eq!(
        err,
        "note: `title:/worm home/` can match nothing: a regular expression is matched against each word of its field (letters and digits, case ignored), and no word holds ' '; search the words, or \"a phrase\" of them\n"
    );
}

/// A page whose title is empty or white space is named by its URL, as a
/// page without a title is: in `search` (it was a blank line), on the
/// page (an empty link) and in the API (`"title": null`, not `""`).
#[test]
fn a_page_with_a_blank_title_is_shown_by_its_url() {
    let site = Site::new()
        .page(
            "/index.html",
            "<html><head><title>Home</title></head><body><a href=\"/blank.html\">b</a> <a href=\"/spaces.html\">s</a> <a href=\"/untitled.html\">u</a></body></html>",
        )
        .page("/blank.html", "<html><head><title></title></head><body>page</body></html>")
        .page(
            "/spaces.html",
            "<html><head><title> \n\t </title></head><body>page</body></html>",
        )
        .page("/untitled.html", "<html><head></head><body>page</body></html>");
    let web = TestWeb::start(Web::new().site("a.example", site));
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://a.example:{PORT}/index.html\"\nlevels = 1\n",
    );
    expect_exit(&common::crawl(&setup, &[]), 0);
    let u = |path: &str| web.url("a.example", path);
    for (path, query) in [
        ("/blank.html", "url:blank"),
        ("/spaces.html", "url:spaces"),
        ("/untitled.html", "url:untitled"),
    ] {
        let (code, out, err) = search(&setup, &[query]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.starts_with(&format!("1. {0}\n   {0}\n1 result", u(path))),
            "{query}: {out}"
        );
    }
    let s = common::serve(&["-c".as_ref(), setup.config_path.as_os_str()]);
    let (_, _, page) = common::get(&s, "/?q=url%3Aspaces");
    let url = u("/spaces.html");
    assert!(
        page.contains(&format!("<a class=\"result\" href=\"{url}\">{url}</a>")),
        "{page}"
    );
    let (_, _, body) = common::get(&s, "/api/search?q=url%3Ablank");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["hits"][0]["url"], u("/blank.html"));
    assert_eq!(v["hits"][0]["title"], serde_json::Value::Null);
}

/// The fields of a table in docs/wwww.md: the names in its first column,
/// in the table that follows the line `heading`.
fn documented_fields(heading: &str) -> Vec<String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/wwww.md")).unwrap();
    let at = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/wwww.md has {heading:?}"));
    doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            let name = l.split('|').nth(1).unwrap().trim();
            name.trim_matches('`').to_string()
        })
        .collect()
}

/// The keys of a JSON object.
fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

/// `search --json` and `/api/search` write one object, `spinneret.search/1`
/// (`search --json` wrote `offset` where the API wrote `page`, `limit` and
/// `took_ms`), with the fields docs/wwww.md lists, and answer alike.
#[test]
fn search_json_and_the_api_write_the_one_documented_schema() {
    let web = start();
    let setup = Setup::new(&web, WORM_TASK);
    expect_exit(&common::crawl(&setup, &[]), 0);
    let s = common::serve(&["-c".as_ref(), setup.config_path.as_os_str()]);
    let mut fields = documented_fields("### The JSON of a search");
    let mut hit_fields = documented_fields("Each hit:");
    fields.sort();
    hit_fields.sort();
    assert!(fields.contains(&"took_ms".to_string()), "{fields:?}");
    for (args, path) in [
        (
            vec!["--json", "--limit", "2", "--page", "2", "worm"],
            "/api/search?q=worm&limit=2&page=2",
        ),
        (
            vec!["--json", "--urls", "title:(worm"],
            "/api/search?q=title%3A(worm&mode=urls",
        ),
    ] {
        let (code, out, err) = search(&setup, &args);
        assert_eq!(code, 0, "{err}");
        let mut cli: serde_json::Value = serde_json::from_str(&out).unwrap();
        let (status, _, body) = common::get(&s, path);
        assert_eq!(status, 200, "{body}");
        let mut api: serde_json::Value = serde_json::from_str(&body).unwrap();
        for v in [&cli, &api] {
            let mut k = keys(v);
            k.sort();
            assert_eq!(k, fields, "{v}");
            assert!(v["took_ms"].as_f64().is_some_and(|t| t >= 0.0), "{v}");
            for hit in v["hits"].as_array().unwrap() {
                let mut k = keys(hit);
                k.sort();
                assert_eq!(k, hit_fields, "{hit}");
            }
        }
        // The same answer, but for the time each took.
        cli["took_ms"] = 0.into();
        api["took_ms"] = 0.into();
        assert_eq!(cli, api, "{path}");
    }
    let (_, out, _) = search(&setup, &["--json", "--limit", "2", "--page", "2", "worm"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            &v["schema"],
            &v["mode"],
            &v["page"],
            &v["limit"],
            &v["total"]
        ),
        (
            &serde_json::json!("spinneret.search/1"),
            &serde_json::json!("documents"),
            &serde_json::json!(2),
            &serde_json::json!(2),
            &serde_json::json!(4)
        )
    );
    assert_eq!(v["hits"].as_array().unwrap().len(), 2);
}

/// `archive export` says what it leaves out: a reference whose URL holds
/// a space (a link the crawl could not read as a URL, kept as written)
/// has no place on a line of fields separated by spaces, and an import
/// refuses it; it was dropped without a word.
#[test]
fn archive_export_counts_and_says_the_references_it_leaves_out() {
    let site = Site::new().page(
        "/index.html",
        "<html><head><title>Home</title></head><body>\
         <a href=\"http://bad host.example/x\">spaced</a>\
         <a href=\"http://a b.example/\">another</a>\
         <a href=\"/ok.html\">fine</a></body></html>",
    );
    let web = TestWeb::start(Web::new().site("a.example", site));
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://a.example:{PORT}/index.html\"\nlevels = 1\n",
    );
    common::crawl(&setup, &[]);
    let index = web.url("a.example", "/index.html");
    let config = setup.config_path.to_str().unwrap();
    let said = format!(
        "spinneret: 2 references left out of the archive: their URLs hold white space (the first: \"http://bad host.example/x\" in {index})\n"
    );
    for format in ["wwww", "jsonl"] {
        let out = common::spinneret(&["archive", "export", "-c", config, "--format", format]);
        let err = expect_exit(&out, 0);
        assert_eq!(err, said, "{format}");
        let lines = text(&out.stdout);
        assert!(!lines.contains("example/x"), "{lines}");
        assert!(lines.contains("/ok.html"), "{lines}");
    }
    let file = setup.path().join("out.wwww");
    let out = common::spinneret(&[
        "archive",
        "export",
        "-c",
        config,
        "-o",
        file.to_str().unwrap(),
    ]);
    let err = expect_exit(&out, 0);
    assert_eq!(
        err,
        format!(
            "{} lines of 1 documents written to {}\n{said}",
            std::fs::read_to_string(&file).unwrap().lines().count(),
            file.display()
        )
    );
}
