//! The store on PostgreSQL (`store = "postgres://…"`, `--store URL`)
//! against a real server the test suite starts: a crawl finds there what
//! it finds in an SQLite file, and `results` reads it back the same.

use crate::common::{command, expect_exit, spinneret, text};
use spinneret_store::testing::TestPg;
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::Setup;
use spinneret_tests::server::TestWeb;

const TASK: &str =
    "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\n";

/// `results --json` of a store, each line without what differs between
/// two crawls of one web: the run's number, the times, and the referrer
/// (the page whose answer came first; every referring page is listed in
/// `referrers`, which is compared).
fn results(store_args: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["results", "--json"];
    args.extend_from_slice(store_args);
    let out = spinneret(&args);
    expect_exit(&out, 1);
    text(&out.stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("JSON");
            let o = v.as_object_mut().expect("an object");
            for volatile in ["run", "checked_at", "checked", "elapsed_ms", "referrer"] {
                o.remove(volatile);
            }
            v
        })
        .collect()
}

#[test]
fn a_crawl_on_postgres_finds_what_one_on_sqlite_does() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    let config = setup.config_path.to_str().unwrap();
    let sqlite_run = command().args(["-q", "crawl", config]).output().unwrap();
    expect_exit(&sqlite_run, 1);
    let on_sqlite = results(&["-c", config]);

    let url = pg.database_url();
    let pg_run = command()
        .args(["-q", "crawl", config, "--store", &url])
        .output()
        .unwrap();
    expect_exit(&pg_run, 1);
    // The summary names the store without a password, and says the same.
    // The summary names the store, and how long the run took: neither is
    // compared.
    let said = |out: &std::process::Output, store: &str| {
        let text = text(&out.stdout).replace(store, "STORE");
        text.lines()
            .map(|l| match (l.find(" in "), l.find("s;")) {
                (Some(a), Some(b)) if a < b => format!("{} in Ts{}", &l[..a], &l[b + 1..]),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        said(&pg_run, &url),
        said(
            &sqlite_run,
            &setup.path().join("store.db").display().to_string()
        ),
    );
    let on_postgres = results(&["--store", &url]);
    assert!(on_sqlite.len() > 5, "{on_sqlite:?}");
    assert_eq!(on_postgres, on_sqlite);

    // The next run reuses the earlier results from the database (a page's
    // references ask for theirs together) as from the file.
    for store in [&["--store", url.as_str()][..], &[]] {
        let again = command()
            .args(["-q", "crawl", config, "--max-age", "1h"])
            .args(store)
            .output()
            .unwrap();
        expect_exit(&again, 1);
    }
    let again_on_sqlite = results(&["-c", config]);
    assert!(
        again_on_sqlite.iter().any(|r| r["source"] == "reused"),
        "the second run used the first's results: {again_on_sqlite:?}"
    );
    assert_eq!(results(&["--store", &url]), again_on_sqlite);
}

/// The Worm's search on a PostgreSQL store: a crawl of a `web` task keeps
/// the index (in the data directory, named after the database), and
/// `search`, `index --rebuild` and `serve` answer from it what they answer
/// on a store file.
#[test]
fn the_worm_searches_a_postgres_store_as_a_store_file() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://a.example:{PORT}/index.html\"\nlevels = 2\n",
    );
    let config = setup.config_path.to_str().unwrap();
    let url = pg.database_url();
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        command()
            .env("XDG_DATA_HOME", data.path())
            .args(args)
            .output()
            .unwrap()
    };
    expect_exit(&run(&["-q", "crawl", config]), 1);
    let out = run(&["-q", "crawl", config, "--store", &url]);
    expect_exit(&out, 1);
    // On a database the index is the searching machine's: the crawl left
    // none, the first search builds it.
    let kept = || -> Vec<String> {
        match std::fs::read_dir(data.path().join("spinneret/search")) {
            // The indexes, not the locks their updates take beside them.
            Ok(dir) => dir
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| !name.ends_with(".lock"))
                .collect(),
            Err(_) => Vec::new(),
        }
    };
    assert_eq!(kept(), Vec::<String>::new());
    let out = run(&["search", "--store", &url, "--urls", "url:html"]);
    expect_exit(&out, 0);
    assert!(
        text(&out.stderr).contains("search index built"),
        "{}",
        text(&out.stderr)
    );
    // Named after the store's identity (32 hex digits), not its URL: the
    // same database spelt another way finds the same index.
    let named = kept();
    assert_eq!(named.len(), 1, "{named:?}");
    let id = named[0].strip_suffix(".search").unwrap();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{named:?}"
    );
    let spelt_otherwise = url.replacen("postgres://", "postgresql://", 1);
    let out = run(&["search", "--store", &spelt_otherwise, "--urls", "url:html"]);
    expect_exit(&out, 0);
    assert!(
        !text(&out.stderr).contains("search index"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(kept(), named);

    // The same URLs for the same queries (ties may rank in another order:
    // the URL ids are given in the order each crawl met them).
    let found = |store: &[&str], query: &str| {
        let mut args = vec!["search", "--json", "--urls", "--limit", "200"];
        args.extend_from_slice(store);
        args.push(query);
        let out = run(&args);
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stderr)));
        let mut urls: Vec<String> = v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["url"].as_str().unwrap().to_string())
            .collect();
        urls.sort();
        (v["total"].as_u64().unwrap(), urls)
    };
    let on_file = ["-c", config];
    let on_pg = ["--store", url.as_str()];
    for query in [
        "url:html",
        "host:a",
        "anchor:broken OR title:home",
        "url:/p.*/",
    ] {
        let (total, urls) = found(&on_file, query);
        assert!(total > 0, "{query}");
        assert_eq!(found(&on_pg, query), (total, urls), "{query}");
    }
    let out = run(&["index", "--rebuild", "--store", &url]);
    assert!(
        text(&out.stderr).starts_with("built "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(found(&on_pg, "url:html"), found(&on_file, "url:html"));

    // `serve` on the database answers the API from the same index.
    let mut cmd = command();
    cmd.env("XDG_DATA_HOME", data.path());
    let served = crate::common::serve_with(cmd, &[std::ffi::OsStr::new("--store"), url.as_ref()]);
    let (status, _, body) =
        crate::common::get(&served, "/api/search?q=url%3Ahtml&mode=urls&limit=200");
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["total"].as_u64(), Some(found(&on_file, "url:html").0));
}

/// `serve` on a database whose server ended its sessions (a restart, or an
/// administrator's `pg_terminate_backend`) answers the next requests from a
/// new connection: before, its reports, results and library pages kept the
/// closed one and failed until `serve` itself was restarted.
#[test]
fn serve_connects_again_when_the_database_ends_its_sessions() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    let config = setup.config_path.to_str().unwrap();
    let url = pg.database_url();
    let data = tempfile::tempdir().unwrap();
    let out = command()
        .env("XDG_DATA_HOME", data.path())
        .args(["-q", "crawl", config, "--store", &url])
        .output()
        .unwrap();
    expect_exit(&out, 1);
    let mut cmd = command();
    cmd.env("XDG_DATA_HOME", data.path());
    let served = crate::common::serve_with(cmd, &[std::ffi::OsStr::new("--store"), url.as_ref()]);
    let pages = |when: &str| {
        for (path, shows) in [
            ("/reports", "<th scope=\"row\">A</th>"),
            ("/reports/1/index.html", "missing.html"),
            ("/results/1", "missing.html"),
            ("/library/1", "<h1>"),
        ] {
            let (status, _, body) = crate::common::get(&served, path);
            assert_eq!(status, 200, "{path} {when}: {body}");
            assert!(body.contains(shows), "{path} {when}: {body}");
        }
    };
    pages("before");
    // The pages' connection and the library's, at least.
    assert!(pg.end_sessions(&url) >= 2);
    // A post first, then every page.
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = crate::library::Client::new(&served).await;
        let r = c
            .post(
                "/library/1/point",
                &[("title", "Posted after"), ("url", "http://b.example/")],
            )
            .await;
        // At its line (its id is 2: the root is 1).
        assert_eq!(
            (r.status, r.location.as_deref()),
            (303, Some("/library/1#p2"))
        );
        assert_eq!(c.postings(1).await, [(1, "Posted after".to_string())]);
    });
    pages("after the database ended its sessions");
}

#[test]
fn a_postgres_store_never_takes_a_password_from_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    let task = TASK.replace("{PORT}", "8080");
    std::fs::write(
        &config,
        format!("store = \"postgres://crawler:hunter2@127.0.0.1/spin\"\n{task}"),
    )
    .unwrap();
    let out = command()
        .args(["-q", "crawl", config.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = expect_exit(&out, 2);
    assert!(
        stderr.contains("c.toml:1:9: the store's URL holds a password"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let out = spinneret(&[
        "results",
        "--store",
        "postgres://crawler:hunter2@127.0.0.1/spin",
    ]);
    let stderr = expect_exit(&out, 2);
    assert!(
        stderr.contains("never read from the configuration"),
        "{stderr}"
    );
}

#[test]
fn a_store_over_tls_is_encrypted_and_its_certificate_checked() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let Some(ca) = pg.root_cert() else {
        eprintln!("openssl made no certificates: the TLS test is skipped");
        return;
    };
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, TASK);
    let config = setup.config_path.to_str().unwrap();
    let plain = pg.database_url();
    let database = plain.rsplit('/').next().unwrap().to_string();
    // libpq's spelling: the certificate and the server's name are checked.
    let url = format!("{plain}?sslmode=verify-full");
    let out = command()
        .args(["-q", "crawl", config, "--store", &url])
        .env("PGSSLROOTCERT", ca)
        .output()
        .unwrap();
    expect_exit(&out, 1);
    let log = pg.log();
    let ours: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("database={database} ")))
        .collect();
    assert!(!ours.is_empty(), "{log}");
    assert!(ours.iter().all(|l| l.contains("SSL enabled")), "{log}");
    // A certificate nobody trusts: refused, and said why.
    let out = command()
        .args(["-q", "crawl", config, "--store", &url])
        .env_remove("PGSSLROOTCERT")
        .output()
        .unwrap();
    let stderr = expect_exit(&out, 2);
    assert!(stderr.contains("certificate"), "{stderr}");
}

/// `archive import` into a database, of an archive whose lines for one
/// document are spread over more documents than a batch of the import
/// holds: the database's export is the file store's, each document's
/// lines gathered; and a bad last line keeps none of a second import.
#[test]
fn a_spread_archive_imports_into_postgres_as_into_a_file() {
    let Some(pg) = TestPg::shared() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let filler: String = (0..10_500)
        .map(|i| format!("T http://f.example/{i:05} F\n"))
        .collect();
    let archive = format!(
        "T http://a.example/ A\nR http://x.example/1 http://a.example/ one\n\
         {filler}R http://x.example/2 http://a.example/ two\nT http://a.example/ A again\n\
         C http://a.example/\n"
    );
    let file = dir.path().join("spread.wwww");
    std::fs::write(&file, archive).unwrap();
    let file = file.to_str().unwrap();
    let sqlite = dir.path().join("s.db");
    let url = pg.database_url();
    let mut exports = Vec::new();
    for store in [sqlite.to_str().unwrap(), url.as_str()] {
        let out = spinneret(&["archive", "import", file, "--store", store]);
        let said = expect_exit(&out, 0);
        assert!(said.contains("10501 documents of 10501 were new"), "{said}");
        let out = spinneret(&["archive", "export", "--store", store]);
        expect_exit(&out, 0);
        exports.push(text(&out.stdout));
    }
    assert_eq!(exports[0], exports[1]);
    assert!(exports[1].starts_with(
        "T http://a.example/ A again\nR http://x.example/1 http://a.example/ one\n\
         R http://x.example/2 http://a.example/ two\nC http://a.example/\n"
    ));
    let bad = dir.path().join("bad.wwww");
    let lines: String = (0..10_500)
        .map(|i| format!("T http://g.example/{i:05} G\n"))
        .collect();
    std::fs::write(&bad, format!("{lines}Q\n")).unwrap();
    let out = spinneret(&["archive", "import", bad.to_str().unwrap(), "--store", &url]);
    let err = expect_exit(&out, 2);
    assert!(err.contains(":10501: `Q` is not a line kind"), "{err}");
    let out = spinneret(&["archive", "export", "--store", &url]);
    assert_eq!(text(&out.stdout), exports[1]);
}
