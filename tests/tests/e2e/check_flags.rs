//! The flags and inputs a lychee or LinkChecker user types into
//! `spinneret check`, and the configuration mistakes a person makes, each
//! with the message they can act on.

use crate::common::{command, expect_exit, expect_refusal, spinneret, text};
use spinneret_core::model::{Category, CheckResult};
use spinneret_tests::harness::{Setup, results_of};
use spinneret_tests::server::{Route, Site, TestWeb, Web};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// A `check` in its own directory: reports there (`TMPDIR`), results in
/// its store.
struct Check {
    dir: tempfile::TempDir,
}

impl Check {
    fn new() -> Check {
        Check {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("check.db")
    }

    /// `spinneret -q check ARGS --store STORE`, run in the directory.
    fn run(&self, args: &[&str]) -> Output {
        command()
            .current_dir(self.dir.path())
            .env("TMPDIR", self.dir.path())
            .env_remove("EMAIL")
            .arg("-q")
            .arg("check")
            .args(args)
            .args(["--store", self.store().to_str().unwrap()])
            .output()
            .unwrap()
    }

    /// The newest run's results, by URL.
    fn results(&self) -> BTreeMap<String, CheckResult> {
        results_of(&spinneret_store::Store::open(&self.store()).unwrap(), None)
    }

    /// A local tree `site/` of these pages.
    fn tree(&self, pages: &[(&str, &str)]) -> PathBuf {
        let site = self.dir.path().join("site");
        for (name, html) in pages {
            let path = site.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, html).unwrap();
        }
        site
    }
}

/// Text with its line breaks and runs of spaces as single spaces (a help
/// text as wrapped to the terminal, unwrapped).
fn words(b: &[u8]) -> String {
    text(b).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn file_url(path: &Path) -> String {
    url::Url::from_file_path(path).unwrap().to_string()
}

/// The `file:` URL of a directory, with its final slash.
fn directory_url(path: &Path) -> String {
    url::Url::from_directory_path(path).unwrap().to_string()
}

/// A site whose top links to a page, a chain of three redirects and a
/// server that is always unavailable.
fn flags_web() -> Web {
    let a = Site::new()
        .robots("User-agent: *\nDisallow:\n")
        .page(
            "/index.html",
            "<title>Top</title><a href=\"/docs/page.html\">page</a> <a href=\"/r1\">chain</a> <a href=\"/busy\">busy</a>",
        )
        .page("/docs/page.html", "<title>Page</title>")
        .route("/r1", Route::redirect(301, "/r2"))
        .route("/r2", Route::redirect(301, "/r3"))
        .route("/r3", Route::redirect(301, "/docs/page.html"))
        .route("/busy", Route::status(503));
    Web::new().site("a.example", a)
}

#[test]
fn lychees_and_linkcheckers_request_flags_set_the_crawls_settings() {
    let web = TestWeb::start(flags_web());
    let top = web.url("a.example", "/index.html");
    let check = Check::new();
    let run = |extra: &[&str]| {
        web.clear_log();
        let out = check.run(
            &[
                &[
                    top.as_str(),
                    "--resolve",
                    "a.example=127.0.0.1",
                    "--delay",
                    "0s",
                ][..],
                extra,
            ]
            .concat(),
        );
        (out, check.results())
    };

    let (out, results) = run(&[
        "--user-agent",
        "LinkBot/2.0 (+https://bot.example/)",
        "--max-concurrency",
        "1",
        "--max-retries",
        "0",
        "--max-redirects",
        "2",
    ]);
    expect_exit(&out, 1);
    for r in web.requests() {
        assert_eq!(
            r.header("user-agent"),
            Some("LinkBot/2.0 (+https://bot.example/)"),
            "{}",
            r.path
        );
    }
    assert_eq!(web.most_in_flight("a.example"), 1);
    assert_eq!(web.methods("a.example", "/busy").len(), 1, "no retry");
    let chain = &results[&web.url("a.example", "/r1")];
    assert_eq!(
        (chain.category, chain.error.as_deref()),
        (Category::Broken, Some("more than 2 redirects"))
    );

    // LinkChecker's and spinneret's own names; the chain followed to its end.
    let (out, results) = run(&["--threads", "1", "--retries", "1", "--max-redirects", "3"]);
    expect_exit(&out, 1);
    assert_eq!(web.methods("a.example", "/busy").len(), 2, "one retry");
    assert_eq!(
        results[&web.url("a.example", "/r1")].category,
        Category::Moved
    );

    for (flag, value, why) in [
        (
            "--max-concurrency",
            "0",
            "'--concurrency <N>': 0 is out of range; expected a whole number from 1 to 4096",
        ),
        (
            "--max-retries",
            "11",
            "'--retries <N>': 11 is out of range; expected a whole number from 0 to 10",
        ),
        (
            "--max-redirects",
            "101",
            "--max-redirects <N>': 101 is out of range; expected a whole number from 0 to 100",
        ),
        ("--user-agent", " ", "--user-agent: the user agent is empty"),
    ] {
        expect_refusal(&check.run(&[&top, flag, value]), why);
    }
}

#[test]
fn basic_auth_goes_with_the_requests_under_its_url_prefix_only() {
    let web = TestWeb::start(flags_web());
    let top = web.url("a.example", "/index.html");
    let prefix = web.url("a.example", "/docs/");
    let check = Check::new();
    let out = check.run(&[
        &top,
        "--resolve",
        "a.example=127.0.0.1",
        "--delay",
        "0s",
        "--max-retries",
        "0",
        "--basic-auth",
        &format!("{prefix} checker:s3cret"),
    ]);
    expect_exit(&out, 1);
    let mut under = 0;
    for r in web.requests() {
        let expected = match r.path.starts_with("/docs/") {
            true => {
                under += 1;
                Some("Basic Y2hlY2tlcjpzM2NyZXQ=")
            }
            false => None,
        };
        assert_eq!(r.header("authorization"), expected, "{}", r.path);
    }
    assert!(under >= 1, "the page under the prefix was requested");

    for (arg, why) in [
        (
            "^https://intranet\\..* u:p",
            "--basic-auth: `^https://intranet\\..*` is not an http or https URL; the credentials go with the requests under a URL prefix (not a pattern): write 'URL USER:PASSWORD'",
        ),
        (
            "https://intranet.example/ checker",
            "--basic-auth: `checker` is not USER:PASSWORD; write 'URL USER:PASSWORD'",
        ),
    ] {
        expect_refusal(&check.run(&[&top, "--basic-auth", arg]), why);
    }
}

#[test]
fn offline_reads_local_files_only_and_scheme_chooses_what_is_requested() {
    let web = TestWeb::start(flags_web());
    let remote = web.url("a.example", "/index.html");
    let check = Check::new();
    let site = check.tree(&[
        (
            "index.html",
            &format!(
                "<title>Home</title><a href=\"p.html\">p</a> <a href=\"gone.html\">gone</a> <a href=\"{remote}\">remote</a>"
            ),
        ),
        ("p.html", "<title>P</title>"),
    ]);
    let resolve = ["--resolve", "a.example=127.0.0.1"];

    let out = check.run(&[&["site", "--offline"][..], &resolve].concat());
    expect_exit(&out, 1);
    assert_eq!(web.requests().len(), 0, "no request left the machine");
    // No request, so no From header to warn of (said without -q).
    let said = command()
        .current_dir(check.dir.path())
        .env_remove("EMAIL")
        .args(["check", "site", "--offline", "--store"])
        .arg(check.dir.path().join("other.db"))
        .output()
        .unwrap();
    let stderr = expect_exit(&said, 1);
    assert!(!stderr.contains("without a From header"), "{stderr}");
    let results = check.results();
    let seen: Vec<(String, Category, Option<String>)> = results
        .values()
        .map(|r| (r.url.clone(), r.category, r.error.clone()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                file_url(&site.join("gone.html")),
                Category::Broken,
                Some("file not found".into())
            ),
            (file_url(&site.join("index.html")), Category::Ok, None),
            (file_url(&site.join("p.html")), Category::Ok, None),
            (
                remote.clone(),
                Category::Avoided,
                Some("excluded by the pattern `^https?:` (--offline)".into())
            ),
        ]
    );
    expect_refusal(
        &check.run(&[&remote, "--offline"]),
        &format!(
            "--offline reads local files only, and {remote} is not one; give a file or directory, or leave out --offline"
        ),
    );

    let out = check.run(&[&["site", "--scheme", "file"][..], &resolve].concat());
    expect_exit(&out, 1);
    assert_eq!(web.requests().len(), 0);
    assert_eq!(
        check.results()[&remote].error.as_deref(),
        Some("excluded by the pattern `^(http|https):` (--scheme)")
    );
    let out = check.run(&[&["site", "--scheme", "http,https,file"][..], &resolve].concat());
    expect_exit(&out, 1);
    assert_eq!(check.results()[&remote].category, Category::Ok);
    expect_refusal(
        &check.run(&["site", "--scheme", "mailto"]),
        "--scheme mailto: spinneret does not check mail addresses (a mailto: link is recorded as not checked); give http, https or file",
    );
}

#[test]
fn include_fragments_turns_the_fragment_check_on_and_off() {
    let check = Check::new();
    check.tree(&[
        (
            "index.html",
            "<title>Home</title><a href=\"p.html#there\">there</a> <a href=\"p.html#nowhere\">nowhere</a>",
        ),
        ("p.html", "<title>P</title><h2 id=\"there\">There</h2>"),
    ]);
    let out = check.run(&["site"]);
    expect_exit(&out, 1);
    assert!(
        text(&out.stdout).contains("1 broken fragment"),
        "{}",
        text(&out.stdout)
    );
    expect_exit(&check.run(&["site", "--include-fragments"]), 1);
    expect_exit(&check.run(&["site", "--include-fragments=anchor-only"]), 1);
    let out = check.run(&["site", "--include-fragments=none"]);
    expect_exit(&out, 0);
    expect_refusal(
        &check.run(&["site", "--include-fragments=full"]),
        "`full`: spinneret checks a fragment's anchor (an `id` or `<a name>` in the page), not text fragments (`#:~:text=`); give anchor-only, or none to check no fragments",
    );
}

#[test]
fn index_files_and_fallback_extensions_say_which_file_a_local_name_reads() {
    let check = Check::new();
    let site = check.tree(&[
        (
            "index.html",
            "<title>Home</title><a href=\"about\">about</a> <a href=\"docs/\">docs</a> <a href=\"empty/\">empty</a>",
        ),
        ("about.html", "<title>About</title>"),
        ("docs/readme.html", "<title>Docs</title>"),
        ("empty/.keep", ""),
    ]);
    // A directory link is recorded as the directory, or as its
    // index.html (one document however a link spells it).
    let outcome = |args: &[&str]| {
        expect_exit(&check.run(&[&["site"][..], args].concat()), 1);
        let results = check.results();
        let result = |url: String, dir: &str| {
            results
                .get(&url)
                .or_else(|| results.get(&format!("{url}index.html")))
                .map(|r| (r.category, r.error.clone().unwrap_or_default()))
                .unwrap_or_else(|| panic!("{dir} not in {:?}", results.keys()))
        };
        [
            result(file_url(&site.join("about")), "about"),
            result(directory_url(&site.join("docs")), "docs"),
            result(directory_url(&site.join("empty")), "empty"),
        ]
    };
    let [about, docs, empty] = outcome(&[]);
    assert_eq!(about, (Category::Broken, "file not found".to_string()));
    assert_eq!((docs.0, empty.0), (Category::Broken, Category::Broken));
    assert_eq!(
        outcome(&[
            "--fallback-extensions",
            "htm,html",
            "--index-files",
            "index.html,readme.html"
        ]),
        [
            (Category::Ok, String::new()),
            (Category::Ok, String::new()),
            (
                Category::Broken,
                "a directory without an index.html or readme.html".to_string()
            ),
        ]
    );
    let [_, docs, empty] = outcome(&["--index-files", "index.html,."]);
    assert_eq!(
        (docs, empty),
        ((Category::Ok, String::new()), (Category::Ok, String::new()))
    );
}

/// A TLS server on 127.0.0.1 presenting `cert` (a file of tests/data/tls)
/// with `key`: every path is a 200 page linking to /ok.html. Its port.
fn tls_server(cert: &str, key: &str) -> u16 {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tls");
    let certs = CertificateDer::pem_file_iter(dir.join(cert))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join(key)).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends here.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tls.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let body = "<title>Secure</title><a href=\"/ok.html\">ok</a>";
                    let is_head = head.starts_with(b"HEAD ");
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                        body.len(),
                        if is_head { "" } else { body }
                    );
                    let _ = tls.write_all(answer.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
    });
    port
}

#[test]
fn an_untrusted_certificate_says_what_to_do_and_insecure_or_cacert_check_the_site() {
    let ca = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/tls/ca.pem");
    let signed = tls_server("server.pem", "server.key");
    let top = format!("https://tls.example:{signed}/");
    let check = Check::new();
    let run = |extra: &[&str]| {
        check.run(
            &[
                &[
                    top.as_str(),
                    "--resolve",
                    "tls.example=127.0.0.1",
                    "--delay",
                    "0s",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let advice = "if the server is yours, give its authority's certificate with --cacert FILE (the configuration's ca_file), or check it without checking certificates with --insecure (insecure = true)";

    let out = run(&[]);
    expect_exit(&out, 1);
    let result = &check.results()[&top];
    assert_eq!(result.category, Category::Broken);
    assert_eq!(
        result.error.as_deref(),
        Some(
            format!(
                "site tls.example:{signed} cannot be reached: the server's certificate is not trusted: it is signed by an authority this machine does not trust (a self-signed certificate, or a private CA) (UnknownIssuer); {advice}"
            )
            .as_str()
        )
    );

    for trust in [&["--cacert", ca.to_str().unwrap()][..], &["--insecure"][..]] {
        let out = run(trust);
        expect_exit(&out, 0);
        let results = check.results();
        let ok = format!("https://tls.example:{signed}/ok.html");
        assert_eq!(
            (results[&top].category, results[&ok].category),
            (Category::Ok, Category::Ok),
            "{trust:?}"
        );
    }

    // The certificate `openssl req -x509` makes: an authority as its own
    // server, which only --insecure gets past.
    let self_signed = tls_server("self-signed.pem", "self-signed.key");
    let top = format!("https://tls.example:{self_signed}/");
    let out = check.run(&[&top, "--resolve", "tls.example=127.0.0.1"]);
    expect_exit(&out, 1);
    assert_eq!(
        check.results()[&top].error.as_deref(),
        Some(
            format!(
                "site tls.example:{self_signed} cannot be reached: the server's certificate is not trusted: the server presents a certificate authority's certificate as its own (a self-signed certificate made with CA:TRUE), which no CA file can vouch for (Other(OtherError(CaUsedAsEndEntity))); {advice}"
            )
            .as_str()
        )
    );
    let out = check.run(&[&top, "--resolve", "tls.example=127.0.0.1", "--insecure"]);
    expect_exit(&out, 0);

    let missing = check.dir.path().join("missing.pem");
    expect_refusal(
        &check.run(&[&top, "--cacert", missing.to_str().unwrap()]),
        &format!("--cacert: cannot read the CA file {}: ", missing.display()),
    );
}

#[test]
fn another_checkers_flag_is_answered_with_spinnerets_way() {
    for (args, said) in [
        (
            &["check", "site", "--base-url", "https://docs.example/"][..],
            "error: `--base-url` is not a flag of spinneret; spinneret reads a local tree as file: URLs, and resolves its root-relative links (/p.html) against --root-dir DIR; to check the site where it is served, give its URL\n",
        ),
        (
            &["check", "site", "--include-mail"][..],
            "error: `--include-mail` is not a flag of spinneret; spinneret does not check mail addresses: a mailto: link is recorded as not checked\n",
        ),
        (
            &["check", "site", "--host-concurrency=4"][..],
            "error: `--host-concurrency` is not a flag of spinneret; set `per_site_connections` in a configuration (docs/configuration.md) and run `spinneret crawl CONFIG`\n",
        ),
        (
            &["check", "site", "--connect-timeout", "3s"][..],
            "error: `--connect-timeout` is not a flag of spinneret; set `connect_timeout` in a configuration (docs/configuration.md) and run `spinneret crawl CONFIG`\n",
        ),
        (
            &["check", "site", "--exclude-regex", "x"][..],
            "error: `--exclude-regex` is not a flag of spinneret; `exclude_regex` is set with --exclude REGEX\n",
        ),
        (
            &["check", "site", "--no-robots"][..],
            "error: `--no-robots` is not a flag of spinneret; robots.txt is obeyed on every site; for a site of your own, check --ignore-robots-for-tops reads none on the sites of the tops you name\n",
        ),
        (
            &["check", "site", "-o", "csv"][..],
            "error: `-o` is not a flag of spinneret; --format FORMAT prints a report (json, jsonl, csv, junit, sarif, github, markdown) on standard output\n",
        ),
        (
            &["check", "site", "--cache"][..],
            "error: `--cache` is not a flag of spinneret; the store keeps every result; --max-age DURATION reuses those younger than it instead of asking again\n",
        ),
    ] {
        let out = spinneret(args);
        let stderr = expect_exit(&out, 2);
        assert_eq!(
            stderr,
            format!("{said}\nFor more information, try '--help'.\n"),
            "{args:?}"
        );
    }
    // Any other unknown flag is clap's own error.
    let stderr = expect_exit(&spinneret(&["check", "site", "--bogus"]), 2);
    assert!(
        stderr.starts_with("error: unexpected argument '--bogus' found"),
        "{stderr}"
    );
}

#[test]
fn the_wait_between_requests_is_said_in_the_progress_line_and_the_help() {
    // One answer slower than the ten seconds between two progress lines
    // in a log (standard error is not a terminal here).
    let slow = Site::new().robots("User-agent: *\nDisallow:\n").route(
        "/index.html",
        Route::Delay(
            Duration::from_millis(10_500),
            Box::new(Route::html("<title>Slow</title>")),
        ),
    );
    let web = TestWeb::start(Web::new().site("a.example", slow));
    let top = web.url("a.example", "/index.html");
    let dir = tempfile::tempdir().unwrap();
    let out = command()
        .env("TMPDIR", dir.path())
        .args(["check", &top, "--resolve", "a.example=127.0.0.1", "--store"])
        .arg(dir.path().join("check.db"))
        .output()
        .unwrap();
    let stderr = expect_exit(&out, 0);
    let line = stderr
        .lines()
        .find(|l| l.contains("progress: "))
        .unwrap_or_else(|| panic!("no progress line in: {stderr}"));
    assert!(
        line.ends_with(
            " broken; 250ms between two requests to one site (--delay 0s for your own servers)"
        ),
        "{line}"
    );

    let help = words(&spinneret(&["check", "--help"]).stdout);
    assert!(
        help.contains("Requests to one site wait 250ms apart, for other people's servers: for your own, --delay 0s checks as fast as --concurrency allows."),
        "{help}"
    );
}

#[test]
fn mail_without_a_mail_table_is_warned_of_as_the_configuration_is_read() {
    let web = TestWeb::start(flags_web());
    let setup = Setup::new(
        &web,
        "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/index.html\"\nemail = \"owner@a.example\"\nemail_broken = true\n",
    );
    let config = std::fs::read_to_string(&setup.config_path).unwrap();
    let line = config
        .lines()
        .position(|l| l.starts_with("email_broken"))
        .unwrap()
        + 1;
    let out = command()
        .args(["crawl", "--dry-run-mail"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    let stderr = expect_exit(&out, 1);
    assert!(
        stderr.contains(&format!(
            "{}:{line}: email_broken mails the owner of task `A`, but there is no [mail] table: the mail goes to an SMTP server on localhost:25, and where none runs it goes nowhere",
            setup.config_path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("\n[mail]\nserver = \"smtp.example.org\"\n"),
        "{stderr}"
    );

    // With the table, nothing to warn of.
    std::fs::write(
        &setup.config_path,
        format!("{config}\n[mail]\nserver = \"127.0.0.1\"\nport = 2525\n"),
    )
    .unwrap();
    let out = command()
        .args(["crawl", "--dry-run-mail"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    assert!(!expect_exit(&out, 1).contains("no [mail] table"));
}

#[test]
fn a_configuration_mistake_is_said_as_what_to_write() {
    let web = TestWeb::start(flags_web());
    for (mistake, said) in [
        (
            "concurency = 4\n[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/\"\n",
            ":1:1: unknown key `concurency`; did you mean `concurrency`? (every key is in docs/configuration.md)",
        ),
        (
            "[task]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/\"\n",
            ":1:1: `[task]` is one table, and `task` is a list of them: write [[task]] (two brackets), once before each of them",
        ),
        (
            "concurrency = \"4\"\n[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{PORT}/\"\n",
            ":1:15: `concurrency` takes a number, written without quotes: concurrency = 4",
        ),
        (
            "[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"127.0.0.1:{PORT}/\"\n",
            ":4:7: top `127.0.0.1:PORT/` is neither a URL nor an existing file or directory; for a server, write http://127.0.0.1:PORT/",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spinneret.toml");
        std::fs::write(&path, mistake.replace("{PORT}", &web.port().to_string())).unwrap();
        let out = spinneret(&["crawl", path.to_str().unwrap()]);
        let stderr = expect_exit(&out, 2);
        let port = web.port().to_string();
        assert_eq!(
            stderr,
            format!(
                "spinneret: {}{}\n",
                path.display(),
                said.replace("PORT", &port)
            ),
            "{mistake}"
        );
    }
}

#[test]
fn the_help_names_the_systems_it_speaks_of_not_their_seeds() {
    for args in [
        &["--help"][..],
        &["collect", "--help"],
        &["archive", "--help"],
        &["archive", "export", "--help"],
        &["search", "--help"],
        &["library", "--help"],
        &["convert", "--help"],
    ] {
        let help = text(&spinneret(args).stdout);
        assert!(!help.is_empty(), "{args:?}");
        for word in ["seed 0", "of the seed"] {
            assert!(!help.contains(word), "{args:?} says `{word}`: {help}");
        }
    }
    let help = words(&spinneret(&["collect", "--help"]).stdout);
    assert!(
        help.starts_with("Collect a WebSnatcher profile (the URLs, bookmarks and search interests you keep) into a mirror that browses offline"),
        "{help}"
    );
}
