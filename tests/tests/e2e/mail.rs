//! Owners are mailed (seed 000, section 5.1): one message per task over
//! SMTP to a real server on loopback, listing what the owner asked for with
//! its referring document and index entry; a mail server that cannot be
//! reached loses nothing and is reported once; `--dry-run-mail` prints.

use crate::common::{self, text};
use spinneret_core::model::Category;
use spinneret_tests::fixtures::maintenance_web;
use spinneret_tests::harness::{Setup, urls_in};
use spinneret_tests::server::TestWeb;
use spinneret_tests::smtp::{SmtpSink, closed_port};

fn config(mail_port: u16) -> String {
    format!(
        "[mail]\nserver = \"127.0.0.1\"\nport = {mail_port}\nfrom = \"spider@test.example\"\n\
[[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\
email = \"alice@a.example\"\nemail_broken = true\nemail_moved = true\n\
index_url = \"http://www.test.example/MOM/A.html\"\n\
[[task]]\nname = \"Docs\"\nkind = \"tree\"\ntop = \"http://a.example:{{PORT}}/docs/index.html\"\n\
email = \"bob@a.example\"\nemail_broken = true\n\
[[task]]\nname = \"Quiet\"\nkind = \"tree\"\ntop = \"http://a.example:{{PORT}}/docs/index.html\"\n\
email = \"carol@a.example\"\n"
    )
}

fn a(web: &TestWeb, path: &str) -> String {
    web.url("a.example", path)
}

#[test]
fn each_owner_gets_one_message_listing_what_they_asked_for() {
    let web = TestWeb::start(maintenance_web());
    let sink = SmtpSink::start();
    let setup = Setup::new(&web, &config(sink.port()));
    let stderr = common::expect_exit(&common::crawl(&setup, &[]), 1);
    let messages = sink.messages();
    // Carol asked for nothing: two messages, in task order.
    assert_eq!(messages.len(), 2, "{messages:?}\n{stderr}");
    let (alice, bob) = (&messages[0], &messages[1]);
    assert_eq!(alice.to, ["alice@a.example"]);
    assert_eq!(alice.from, "spider@test.example");
    assert_eq!(
        alice.header("Subject").as_deref(),
        Some("spinneret: A: 4 broken, 1 blocked, 2 moved")
    );
    assert_eq!(alice.header("To").as_deref(), Some("alice@a.example"));
    assert_eq!(alice.header("MIME-Version").as_deref(), Some("1.0"));
    let id = alice.header("Message-ID").unwrap_or_default();
    assert!(
        id.starts_with('<') && id.ends_with('>') && id.contains('@'),
        "{id:?}"
    );
    assert_ne!(bob.header("Message-ID").unwrap_or_default(), id);
    let body = alice.body();
    assert!(
        body.starts_with(&format!(
            "spinneret checked the site task `A` from {} in the run that started ",
            a(&web, "/index.html")
        )),
        "{body}"
    );
    // Each item: its URL, what is wrong, where it is linked from, its index row.
    let missing = format!(
        "  {}\n    broken: HTTP 404 Not Found\n    referred to from {}\n    index entry: http://www.test.example/MOM/A.html#f",
        a(&web, "/missing.html"),
        a(&web, "/index.html")
    );
    assert!(body.contains(&missing), "{body}");
    assert!(body.contains("Broken links (4)\n"), "{body}");
    // A link the server refuses to the robot is the owner's business too.
    let blocked = format!(
        "Blocked links (the server refused the robot) (1)\n\n  {}\n    blocked: HTTP 403 Forbidden\n    referred to from {}\n    index entry: http://www.test.example/MOM/A.html#f",
        a(&web, "/forbidden.html"),
        a(&web, "/index.html")
    );
    assert!(body.contains(&blocked), "{body}");
    assert!(body.contains("Moved documents (2)\n"), "{body}");
    assert!(
        body.contains(&format!("  {}\n    moved", a(&web, "/old.html"))),
        "{body}"
    );
    assert!(body.contains("The whole maintenance index: http://www.test.example/MOM/A.html\n"));

    // The anchor in the mail is the row of that item in the index.
    let row = body[body.find(&missing).unwrap() + missing.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let index = std::fs::read_to_string(setup.path().join("reports/A/index.html")).unwrap();
    let at = index
        .find(&format!("<tr id=\"f{row}\">"))
        .unwrap_or_else(|| panic!("no row f{row} in the index"));
    assert!(index[at..].starts_with(&format!(
        "<tr id=\"f{row}\"><td><a href=\"{0}\">{0}</a></td><td>broken: HTTP 404 Not Found",
        a(&web, "/missing.html")
    )));
    assert!(index.contains("<li><a href=\"#changes-blocked\">Blocked links</a>: 1</li>"));
    assert!(index.contains(&format!(
        "<td><a href=\"{0}\">{0}</a></td><td>blocked: HTTP 403 Forbidden</td>",
        a(&web, "/forbidden.html")
    )));

    assert_eq!(bob.to, ["bob@a.example"]);
    assert_eq!(
        bob.header("Subject").as_deref(),
        Some("spinneret: Docs: 1 broken")
    );
    let body = bob.body();
    assert!(
        body.contains(&format!(
            "  {}\n    broken: HTTP 404 Not Found\n    referred to from {}\n    index entry: file://",
            a(&web, "/docs/faq.html"),
            a(&web, "/docs/index.html")
        )),
        "{body}"
    );
    assert!(!body.contains("Moved documents"), "{body}");
}

/// A URL two tasks link to is tested once, and its result keeps the page
/// the crawl found it on first: each owner's message still names a page
/// of their own task (before, one of them was sent the other's page).
#[test]
fn each_owner_is_told_of_a_page_of_their_own_that_refers_to_a_shared_link() {
    use spinneret_tests::fixtures::page;
    use spinneret_tests::server::{Site, Web};
    let site = Site::new()
        .page(
            "/x/index.html",
            &page("X", None, r#"<a href="/gone.html">Gone</a>"#),
        )
        .page(
            "/y/index.html",
            &page("Y", None, r#"<a href="deep.html">Deep</a>"#),
        )
        .page(
            "/y/deep.html",
            &page("Deep", None, r#"<a href="/gone.html">Gone</a>"#),
        )
        .page("/z/index.html", &page("Z", None, "nothing linked"));
    let web = TestWeb::start(Web::new().site("a.example", site));
    let task = |name: &str, dir: &str, plugins: &str| {
        format!(
            "[[task]]\nname = \"{name}\"\nkind = \"tree\"\n\
             top = \"http://a.example:{{PORT}}/{dir}/index.html\"\n\
             email = \"{name}@a.example\"\nemail_broken = true\n{plugins}"
        )
    };
    // With the default reporters; with only a reporter that wants no
    // documents (CSV: the report stage reads the documents for it all the
    // same, to find each task's own referrer); and with `x` and `y`
    // reporting nothing at all, sharing the report stage's one worker with
    // a task `z` that does.
    let off = "default_plugins = false\n";
    let plugin = |name: &str, tasks: &str| {
        format!("[[plugin]]\nname = \"{name}\"\nsource = \"builtin:{name}\"\ntasks = [{tasks}]\n")
    };
    let both = "\"x\", \"y\"";
    let csv = plugin("maintenance", both) + &plugin("csv-report", both);
    let z = "[[task]]\nname = \"z\"\nkind = \"tree\"\n\
             top = \"http://a.example:{PORT}/z/index.html\"\ndefault_plugins = false\n";
    let z_reports = format!(
        "{z}{}{}",
        plugin("maintenance", "\"x\", \"y\", \"z\""),
        plugin("momspider-index", "\"z\"")
    );
    for (x_own, y_own, shared) in [
        ("", "", String::new()),
        (off, off, csv),
        (off, off, z_reports),
    ] {
        let sink = SmtpSink::start();
        let config = format!(
            "[mail]\nserver = \"127.0.0.1\"\nport = {}\nfrom = \"spider@test.example\"\n{}{}{shared}",
            sink.port(),
            task("x", "x", x_own),
            task("y", "y", y_own)
        );
        let setup = Setup::new(&web, &config);
        let out = common::crawl_with_report_workers(&setup, 1);
        common::expect_exit(&out, 1);
        let messages = sink.messages();
        assert_eq!(messages.len(), 2, "{config}");
        for (m, referrer) in messages.iter().zip(["/x/index.html", "/y/deep.html"]) {
            let said = format!(
                "  {}\n    broken: HTTP 404 Not Found\n    referred to from {}\n",
                a(&web, "/gone.html"),
                a(&web, referrer)
            );
            assert!(
                m.body().contains(&said),
                "{config}\n{:?}: {}",
                m.to,
                m.body()
            );
        }
    }
}

#[test]
fn an_unreachable_server_is_reported_once_and_the_messages_wait() {
    let web = TestWeb::start(maintenance_web());
    let setup = Setup::new(&web, &config(closed_port()));
    let out = common::crawl(&setup, &[]);
    let stderr = common::expect_exit(&out, 1);
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("cannot reach the mail server"))
        .collect();
    assert_eq!(reports.len(), 1, "{stderr}");
    assert!(
        reports[0].starts_with("spinneret: mail: cannot reach the mail server 127.0.0.1:"),
        "{stderr}"
    );
    // The run itself is complete.
    let results = setup.results();
    assert_eq!(urls_in(&results, Category::Broken).len(), 4);
    assert_eq!(urls_in(&results, Category::Moved).len(), 2);
    let store = setup.store();
    assert_eq!(store.queued_mail().unwrap().len(), 2);

    // The next run reaches the server: the waiting messages go first, then its own.
    let sink = SmtpSink::start();
    let text = std::fs::read_to_string(&setup.config_path).unwrap();
    let port_line = text
        .lines()
        .find(|l| l.starts_with("port = "))
        .unwrap()
        .to_string();
    std::fs::write(
        &setup.config_path,
        text.replace(&port_line, &format!("port = {}", sink.port())),
    )
    .unwrap();
    common::expect_exit(&common::crawl(&setup, &[]), 1);
    let to: Vec<String> = sink.messages().iter().map(|m| m.to.join(",")).collect();
    assert_eq!(
        to,
        [
            "alice@a.example",
            "bob@a.example",
            "alice@a.example",
            "bob@a.example"
        ]
    );
    assert!(setup.store().queued_mail().unwrap().is_empty());
}

#[test]
fn dry_run_mail_prints_and_sends_nothing() {
    let web = TestWeb::start(maintenance_web());
    let sink = SmtpSink::start();
    let setup = Setup::new(&web, &config(sink.port()));
    let out = common::command()
        .args(["crawl", "--dry-run-mail"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    let stderr = common::expect_exit(&out, 1);
    assert!(
        stderr.contains("--dry-run-mail: 2 message(s) printed, none sent"),
        "{stderr}"
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "From: spider@test.example\nTo: alice@a.example\nSubject: spinneret: A: 4 broken, 1 blocked, 2 moved\n\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("To: bob@a.example\nSubject: spinneret: Docs: 1 broken\n"));
    assert!(sink.messages().is_empty());
    assert!(setup.store().queued_mail().unwrap().is_empty());
}

/// A link the server answers with 401 (a login wall) is blocked to every
/// reader without an account, as a 403 is: both reach the owner's mail
/// and the index's table of blocked links, each with its own status.
#[test]
fn links_behind_a_login_or_forbidden_are_mailed_as_blocked() {
    use spinneret_tests::fixtures::page;
    use spinneret_tests::server::{Route, Site, Web};
    let site = Site::new()
        .page(
            "/index.html",
            &page(
                "Home",
                None,
                r#"<a href="/members.html">Members</a> <a href="/staff.html">Staff</a>"#,
            ),
        )
        .route(
            "/members.html",
            Route::status(401).header("WWW-Authenticate", "Basic realm=\"members\""),
        )
        .route("/staff.html", Route::status(403));
    let web = TestWeb::start(Web::new().site("a.example", site));
    let sink = SmtpSink::start();
    let config = format!(
        "[mail]\nserver = \"127.0.0.1\"\nport = {}\nfrom = \"spider@test.example\"\n\
         [[task]]\nname = \"A\"\nkind = \"site\"\ntop = \"http://a.example:{{PORT}}/index.html\"\n\
         email = \"alice@a.example\"\nemail_broken = true\n",
        sink.port()
    );
    let setup = Setup::new(&web, &config);
    let stderr = common::expect_exit(&common::crawl(&setup, &[]), 0);
    let messages = sink.messages();
    assert_eq!(messages.len(), 1, "{messages:?}\n{stderr}");
    assert_eq!(
        messages[0].header("Subject").as_deref(),
        Some("spinneret: A: 2 blocked")
    );
    let body = messages[0].body();
    for (path, status) in [
        ("/members.html", "HTTP 401 Unauthorized"),
        ("/staff.html", "HTTP 403 Forbidden"),
    ] {
        let item = format!(
            "  {}\n    blocked: {status}\n    referred to from {}\n",
            a(&web, path),
            a(&web, "/index.html")
        );
        assert!(body.contains(&item), "{body}");
    }
    assert!(
        body.contains("Blocked links (the server refused the robot) (2)\n"),
        "{body}"
    );
    let index = std::fs::read_to_string(setup.path().join("reports/A/index.html")).unwrap();
    assert!(
        index.contains("<li><a href=\"#changes-blocked\">Blocked links</a>: 2</li>"),
        "{index}"
    );
    for (path, status) in [
        ("/members.html", "HTTP 401 Unauthorized"),
        ("/staff.html", "HTTP 403 Forbidden"),
    ] {
        let row = format!(
            "<td><a href=\"{0}\">{0}</a></td><td>blocked: {status}</td>",
            a(&web, path)
        );
        assert!(index.contains(&row), "{row}\n{index}");
    }
    let results = setup.results();
    assert_eq!(
        urls_in(&results, Category::Blocked),
        [a(&web, "/members.html"), a(&web, "/staff.html")]
    );
}

/// An instruction file names its mail server (`MailServer HOST:PORT`;
/// before, its mail always went to localhost:25), and `EmailBroken` mail
/// lists the links whose fragment names no place in their page (before,
/// they were in the index and left out of the mail).
#[test]
fn an_instruction_file_names_its_mail_server_and_broken_fragments_are_mailed() {
    use spinneret_tests::fixtures::page;
    use spinneret_tests::server::{Site, Web};
    let site = Site::new()
        .page(
            "/index.html",
            &page(
                "Home",
                None,
                r#"<a href="/about.html#team">The team</a> <a href="/about.html#history">History</a>"#,
            ),
        )
        .page(
            "/about.html",
            &page("About", None, r#"<h2 id="history">History</h2>"#),
        );
    let web = TestWeb::start(Web::new().site("127.0.0.1", site));
    let sink = SmtpSink::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mom.instructions");
    std::fs::write(
        &file,
        format!(
            "MailServer 127.0.0.1:{}\n<Site\n Name A\n TopURL http://127.0.0.1:{}/index.html\n IndexFile {}\n EmailAddress alice@a.example\n EmailBroken\n>\n",
            sink.port(),
            web.port(),
            dir.path().join("A.html").display()
        ),
    )
    .unwrap();
    let store = dir.path().join("s.db");
    let out = common::command()
        .args(["-q", "crawl"])
        .arg(&file)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let messages = sink.messages();
    assert_eq!(messages.len(), 1, "{messages:?}\n{stderr}");
    assert_eq!(
        messages[0].header("Subject").as_deref(),
        Some("spinneret: A: 1 broken fragment")
    );
    let body = messages[0].body();
    assert!(
        body.contains(
            "Broken fragments (the page is there, the place the link names is not) (1)\n"
        ),
        "{body}"
    );
    assert!(
        body.contains(&format!("  {}\n", web.url("127.0.0.1", "/about.html#team"))),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "    referred to from {}\n",
            web.url("127.0.0.1", "/index.html")
        )),
        "{body}"
    );
    assert!(!body.contains("#history"), "{body}");
    // `convert` carries the server into the TOML form.
    let out = common::spinneret(&["convert", file.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains(&format!(
            "[mail]\nserver = \"127.0.0.1\"\nport = {}\n",
            sink.port()
        )),
        "{}",
        text(&out.stdout)
    );
}
