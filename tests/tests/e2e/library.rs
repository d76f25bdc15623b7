//! GENVL's library at the HTTP level, against a real `spinneret serve` on
//! loopback: forged posts, hostile text in every field, concurrent posts
//! and edits, passwords guessed, and the operations' refusals.

use crate::common::{Served, serve};
use std::collections::HashMap;

/// A browser-like client: keeps the library's cookie and reads each
/// form's CSRF token.
#[derive(Clone)]
pub(crate) struct Client {
    http: reqwest::Client,
    base: String,
    cookie: String,
}

/// An answer: status, where it redirects, and the page.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    /// The cookie it sets (name=value).
    pub(crate) cookie: Option<String>,
    /// Its `Retry-After`.
    pub(crate) retry_after: Option<String>,
    pub(crate) body: String,
}

impl Client {
    pub(crate) async fn new(served: &Served) -> Client {
        spinneret_core::tls::install_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let mut c = Client {
            http,
            base: served.base.clone(),
            cookie: String::new(),
        };
        let r = c
            .http
            .get(format!("{}/library/1/change", c.base))
            .send()
            .await
            .unwrap();
        let set = r.headers()[reqwest::header::SET_COOKIE]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        c.cookie = set.split(';').next().unwrap().to_string();
        c
    }

    pub(crate) async fn get(&self, path: &str) -> Answer {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .header(reqwest::header::COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    /// The CSRF token of the form on `path`.
    async fn token(&self, path: &str) -> String {
        let page = self.get(path).await.body;
        let at = page.find("name=\"csrf\" value=\"").expect("a form") + 19;
        page[at..at + 64].to_string()
    }

    /// Post `fields` to `path` with this client's token.
    pub(crate) async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let token = self.token("/library/1/change").await;
        self.post_with(path, &token, fields).await
    }

    async fn post_with(&self, path: &str, token: &str, fields: &[(&str, &str)]) -> Answer {
        let mut form: Vec<(&str, &str)> = vec![("csrf", token)];
        form.extend_from_slice(fields);
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .header(reqwest::header::COOKIE, &self.cookie)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    /// The postings of VL `vl` as its summary lists them: (number, title).
    pub(crate) async fn postings(&self, vl: i64) -> Vec<(i64, String)> {
        let page = self.get(&format!("/library/{vl}")).await.body;
        page.split("<span class=\"seq\">")
            .skip(1)
            .map(|item| {
                let (n, rest) = item.split_once(".</span>").unwrap();
                let start = rest.find("\">").unwrap() + 2;
                let end = rest[start..].find("</a>").unwrap();
                (n.parse().unwrap(), rest[start..start + end].to_string())
            })
            .collect()
    }

    /// The id of the posting titled `title` (as the page shows it) in VL `vl`.
    async fn id_of(&self, vl: i64, title: &str) -> i64 {
        let page = self.get(&format!("/library/{vl}")).await.body;
        let at = page.find(&format!(">{title}</a>")).expect(title);
        let li = page[..at].rfind("<li id=\"p").unwrap() + 9;
        page[li..].split('"').next().unwrap().parse().unwrap()
    }
}

async fn answer(r: reqwest::Response) -> Answer {
    Answer {
        status: r.status().as_u16(),
        location: r
            .headers()
            .get(reqwest::header::LOCATION)
            .map(|l| l.to_str().unwrap().to_string()),
        cookie: r
            .headers()
            .get(reqwest::header::SET_COOKIE)
            .map(|c| c.to_str().unwrap().split(';').next().unwrap().to_string()),
        retry_after: r
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .map(|l| l.to_str().unwrap().to_string()),
        body: r.text().await.unwrap(),
    }
}

/// The value of the first hidden field `name` on `page` after `after`.
fn hidden(page: &str, after: &str, name: &str) -> String {
    let from = page
        .find(after)
        .unwrap_or_else(|| panic!("{after}: {page}"));
    let field = format!("name=\"{name}\" value=\"");
    let at = from + page[from..].find(&field).expect(name) + field.len();
    page[at..].split('"').next().unwrap().to_string()
}

/// The moderator's password in [`moderated`].
const MODERATOR_PASSWORD: &str = "correct horse battery";

/// A server whose configuration names moderator `mo`
/// ([`MODERATOR_PASSWORD`]), on a new store.
fn moderated() -> (tempfile::TempDir, Served) {
    let hash = spinneret::library::auth::hash_password(MODERATOR_PASSWORD).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("spinneret.toml");
    std::fs::write(
        &config,
        format!(
            "store = \"lib.db\"\n[[task]]\nname = \"VL\"\nkind = \"library\"\n\n[[library.moderator]]\nname = \"mo\"\npassword_hash = \"{hash}\"\n"
        ),
    )
    .unwrap();
    let s = serve(&[std::ffi::OsStr::new("--config"), config.as_os_str()]);
    (dir, s)
}

impl Client {
    /// Log in as moderator `mo` of [`moderated`]: the session cookie is
    /// sent from then on.
    async fn log_in(&mut self) {
        let r = self
            .post(
                "/library/login",
                &[("name", "mo"), ("password", MODERATOR_PASSWORD)],
            )
            .await;
        assert_eq!(r.status, 303, "{}", r.body);
        self.cookie = format!("{}; {}", self.cookie, r.cookie.expect("a session"));
    }
}

fn served() -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("library.db");
    let s = serve(&[std::ffi::OsStr::new("--store"), store.as_os_str()]);
    (dir, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posts_are_numbered_listed_alphabetically_and_sub_libraries_marked() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    let r = c
        .post(
            "/library/1/point",
            &[("title", "Zoology"), ("url", "http://zoo.example/")],
        )
        .await;
    // One posting: the answer leads to its line.
    assert_eq!(
        (r.status, r.location.as_deref()),
        (303, Some("/library/1#p2"))
    );
    let list = "<li><a href=\"http://a.example/\">Astronomy</a>\nhttp://b.example/ Biology\n";
    assert_eq!(
        c.post("/library/1/pointers", &[("list", list)])
            .await
            .status,
        303
    );
    assert_eq!(
        c.post(
            "/library/1/input",
            &[
                ("title", "Chemistry notes"),
                ("body", "<p>Read <em>this</em>.</p>")
            ]
        )
        .await
        .status,
        303
    );
    assert_eq!(
        c.post(
            "/library/1/create",
            &[("title", "Music"), ("create_only", "1")]
        )
        .await
        .status,
        303
    );
    assert_eq!(
        c.postings(1).await,
        vec![
            (2, "Astronomy".to_string()),
            (3, "Biology".to_string()),
            (4, "Chemistry notes".to_string()),
            (5, "Music".to_string()),
            (1, "Zoology".to_string()),
        ]
    );
    let page = c.get("/library/1").await.body;
    assert!(page.contains("<strong><a href=\"/library/"), "{page}");
    // The seed's sub-VL: an asterisk, then its title in bold.
    assert!(
        page.contains(&format!(
            "* <strong><a href=\"/library/{}\">Music</a></strong>\n",
            c.id_of(1, "Music").await
        )),
        "{page}"
    );

    // Music is Create-Only: a pointer is refused there, a sub-library is not.
    let music = c.id_of(1, "Music").await;
    let r = c
        .post(
            &format!("/library/{music}/point"),
            &[("title", "Bach"), ("url", "http://bach.example/")],
        )
        .await;
    assert_eq!(r.status, 422);
    assert!(
        r.body.contains(
            "Point: &#34;Music&#34; is Create-Only: only sub-libraries may be posted in it"
        ),
        "{}",
        r.body
    );
    let r = c
        .post(&format!("/library/{music}/create"), &[("title", "Baroque")])
        .await;
    assert_eq!(r.status, 303);
    assert_eq!(c.postings(music).await, vec![(1, "Baroque".to_string())]);

    // The report is stored and shown; the global list is newest first.
    let report = c.id_of(1, "Chemistry notes").await;
    let page = c.get(&format!("/library/report/{report}")).await.body;
    assert!(page.contains("<p>Read <em>this</em>.</p>"), "{page}");
    let all = c.get("/library/1/all").await.body;
    let order: Vec<usize> = ["Baroque", "Music", "Chemistry notes", "Zoology"]
        .iter()
        .map(|t| all.find(&format!(">{t}</a>")).expect(t))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_post_is_refused() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    let fields = [("title", "Forged"), ("url", "http://evil.example/")];
    // No token, another client's token, and a token without its cookie.
    let other = Client::new(&s).await;
    let theirs = other.token("/library/1/change").await;
    assert_eq!(
        c.post_with("/library/1/point", "", &fields).await.status,
        403
    );
    assert_eq!(
        c.post_with("/library/1/point", &theirs, &fields)
            .await
            .status,
        403
    );
    let cookieless = Client {
        cookie: String::new(),
        ..c.clone()
    };
    let mine = c.token("/library/1/change").await;
    let r = cookieless
        .post_with("/library/1/point", &mine, &fields)
        .await;
    assert_eq!(r.status, 403);
    assert!(
        r.body.contains("was not sent from this library"),
        "{}",
        r.body
    );
    assert!(c.postings(1).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_text_is_inert_and_sql_is_kept_verbatim() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    let xss = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)>";
    let sql = "Robert'); DROP TABLE library;--";
    let r = c
        .post(
            "/library/1/input",
            &[
                ("title", xss),
                ("url", "http://x.example/?q=\"><script>alert(4)</script>"),
                (
                    "body",
                    &format!("{xss}<a href=\"javascript:alert(5)\">j</a><p>{sql}</p>"),
                ),
                ("author", xss),
                ("email", "a@b.example"),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let r = c
        .post(
            "/library/1/point",
            &[("title", sql), ("url", "http://sql.example/")],
        )
        .await;
    assert_eq!(r.status, 303);
    for path in ["/library/1", "/library/1/all", "/library/1/change"] {
        let page = c.get(path).await.body;
        assert!(!page.contains("<script>alert"), "{path}: {page}");
        assert!(!page.contains("<img src=x"), "{path}");
        assert!(!page.contains("<svg"), "{path}");
        assert!(
            page.contains("Robert&#39;); DROP TABLE library;--"),
            "{path}: {page}"
        );
    }
    let report = c.get("/library/1").await.body;
    let at = report.find("/library/report/").unwrap() + 16;
    let id: String = report[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let page = c.get(&format!("/library/report/{id}")).await.body;
    // The title is there, escaped; the report keeps its harmless image
    // and loses every script, handler and javascript: link.
    assert!(page.contains("<img src=\"x\">"), "{page}");
    for raw in [
        "<script",
        "onerror=\"",
        "onload=\"",
        "<svg",
        "href=\"javascript",
    ] {
        assert!(!page.contains(raw), "{raw}: {page}");
    }
    assert!(
        page.contains("&#60;img src=x onerror=alert(2)&#62;"),
        "{page}"
    );
    assert!(
        page.contains("<p>Robert'); DROP TABLE library;--</p>"),
        "{page}"
    );
    // Only web addresses may be posted.
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<b>x",
    ] {
        let r = c
            .post("/library/1/point", &[("title", "Bad"), ("url", bad)])
            .await;
        assert_eq!(r.status, 422, "{bad}");
        assert!(r.body.contains("is not an http or https URL"), "{}", r.body);
    }
    assert_eq!(c.postings(1).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_posts_get_a_hundred_numbers() {
    // A hundred connections at once from one client: past the default
    // share of one client (32), which this test is not about.
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("library.db");
    let s = serve(&[
        std::ffi::OsStr::new("--store"),
        store.as_os_str(),
        std::ffi::OsStr::new("--max-connections-per-client"),
        std::ffi::OsStr::new("128"),
    ]);
    let c = Client::new(&s).await;
    let token = c.token("/library/1/change").await;
    let posts: Vec<_> = (0..100)
        .map(|i| {
            let c = c.clone();
            let token = token.clone();
            tokio::spawn(async move {
                let title = format!("Posting {i:03}");
                let url = format!("http://p{i}.example/");
                c.post_with(
                    "/library/1/point",
                    &token,
                    &[("title", &title), ("url", &url)],
                )
                .await
                .status
            })
        })
        .collect();
    for p in posts {
        assert_eq!(p.await.unwrap(), 303);
    }
    let listed = c.postings(1).await;
    let mut numbers: Vec<i64> = listed.iter().map(|(n, _)| *n).collect();
    numbers.sort();
    assert_eq!(numbers, (1..=100).collect::<Vec<_>>());
    let titles: std::collections::BTreeSet<&str> = listed.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(titles.len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_editor_is_told_and_nothing_is_overwritten() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    c.post(
        "/library/1/point",
        &[("title", "Original"), ("url", "http://o.example/")],
    )
    .await;
    let id = c.id_of(1, "Original").await;
    let edit = format!("/library/posting/{id}/edit");
    // Both open the form at version 1; the first saves, the second is told.
    let form = c.get(&edit).await.body;
    let (token, opened) = (
        hidden(&form, "<form", "csrf"),
        hidden(&form, "<form", "opened"),
    );
    assert_eq!(hidden(&form, "<form", "read"), "1");
    let first = c
        .post_with(
            &edit,
            &token,
            &[
                ("read", "1"),
                ("opened", &opened),
                ("title", "First"),
                ("url", "http://o.example/"),
            ],
        )
        .await;
    assert_eq!(first.status, 303);
    let second = c
        .post_with(
            &edit,
            &token,
            &[
                ("read", "1"),
                ("opened", &opened),
                ("title", "Second"),
                ("url", "http://o.example/"),
            ],
        )
        .await;
    assert_eq!(second.status, 409);
    assert!(
        second
            .body
            .contains("someone else changed this posting since you opened it"),
        "{}",
        second.body
    );
    // What the second typed is still in the form, for them to redo.
    assert!(second.body.contains("value=\"Second\""));
    assert_eq!(c.postings(1).await, vec![(1, "First".to_string())]);
}

/// A server on loopback answers to loopback names only: a page that
/// points its own name at 127.0.0.1 (DNS rebinding) reads and posts
/// nothing (before, any Host was served, the library's forms included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_answers_to_loopback_names_only() {
    let (_d, s) = served();
    spinneret_core::tls::install_provider();
    let http = reqwest::Client::new();
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let ask = |host: String, post: bool| {
        let url = format!("{}/library/1", s.base);
        let rb = match post {
            true => http
                .post(format!("{url}/point"))
                .body("title=x&url=http://x.example/"),
            false => http.get(&url),
        };
        rb.header(reqwest::header::HOST, host).send()
    };
    for host in [format!("evil.example:{port}"), "evil.example".to_string()] {
        for post in [false, true] {
            let r = ask(host.clone(), post).await.unwrap();
            assert_eq!(r.status(), 421, "{host} post {post}");
            assert!(
                r.text()
                    .await
                    .unwrap()
                    .contains("answers to localhost only"),
                "{host}"
            );
        }
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let r = ask(host.clone(), false).await.unwrap();
        assert_eq!(r.status(), 200, "{host}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_guard_postings_and_guessing_is_cut_off() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    c.post(
        "/library/1/point",
        &[
            ("title", "Guarded"),
            ("url", "http://g.example/"),
            ("password", "open sesame"),
        ],
    )
    .await;
    c.post(
        "/library/1/point",
        &[("title", "Open"), ("url", "http://open.example/")],
    )
    .await;
    let guarded = c.id_of(1, "Guarded").await.to_string();
    let open = c.id_of(1, "Open").await.to_string();
    // Wrong password: nothing is deleted, not even the open posting ticked with it.
    let r = c
        .post(
            "/library/1/delete",
            &[
                ("posting", &guarded),
                ("posting", &open),
                ("password", "guess"),
            ],
        )
        .await;
    assert_eq!(r.status, 403);
    assert!(
        r.body
            .contains("Delete: &#34;Guarded&#34; was not deleted: the password is wrong"),
        "{}",
        r.body
    );
    assert_eq!(c.postings(1).await.len(), 2);
    // A posting without a password anyone may delete.
    let r = c.post("/library/1/delete", &[("posting", &open)]).await;
    assert_eq!(r.status, 303);
    // Guessing: five wrong passwords, then even the right one waits.
    for _ in 0..4 {
        let r = c
            .post(
                "/library/1/delete",
                &[("posting", &guarded), ("password", "guess")],
            )
            .await;
        assert!(r.body.contains("the password is wrong"), "{}", r.body);
    }
    let r = c
        .post(
            "/library/1/delete",
            &[("posting", &guarded), ("password", "open sesame")],
        )
        .await;
    assert!(
        r.body
            .contains("too many wrong passwords; try again in 15 minutes"),
        "{}",
        r.body
    );
    // Answered as Edit and Move answer it, with how long to wait (before,
    // Delete said 422, and none said when to come back).
    let waits = |r: &Answer| {
        let secs: u64 = r
            .retry_after
            .as_deref()
            .expect("Retry-After")
            .parse()
            .unwrap();
        (r.status, (890..=900).contains(&secs))
    };
    assert_eq!(waits(&r), (429, true));
    let edit = format!("/library/posting/{guarded}/edit");
    let form = c.get(&edit).await.body;
    let fields = [
        ("read", hidden(&form, "<form", "read")),
        ("opened", hidden(&form, "<form", "opened")),
        ("title", "Renamed".to_string()),
        ("url", "http://g.example/".to_string()),
        ("password", "open sesame".to_string()),
    ];
    let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = c.post(&edit, &fields).await;
    assert_eq!(waits(&r), (429, true), "{}", r.body);
    let r = c
        .post(
            &format!("/library/posting/{guarded}/move"),
            &[("to", "1"), ("password", "open sesame")],
        )
        .await;
    assert_eq!(waits(&r), (429, true), "{}", r.body);
    assert_eq!(c.postings(1).await, vec![(1, "Guarded".to_string())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postings_move_and_copy_across_the_tree() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    c.post("/library/1/create", &[("title", "Arts")]).await;
    c.post("/library/1/create", &[("title", "Science")]).await;
    c.post(
        "/library/1/point",
        &[
            ("title", "Physics"),
            ("url", "http://physics.example/"),
            ("password", "pw"),
        ],
    )
    .await;
    let arts = c.id_of(1, "Arts").await;
    let science = c.id_of(1, "Science").await;
    let physics = c.id_of(1, "Physics").await;
    let moving = format!("/library/posting/{physics}/move");
    let form = c.get(&moving).await.body;
    assert!(
        form.contains(&format!("<option value=\"{science}\">— Science</option>")),
        "{form}"
    );
    let to = science.to_string();
    let r = c.post(&moving, &[("to", &to), ("password", "wrong")]).await;
    assert_eq!(r.status, 403);
    let r = c.post(&moving, &[("to", &to), ("password", "pw")]).await;
    assert_eq!(
        (r.status, r.location),
        (303, Some(format!("/library/{science}#p{physics}")))
    );
    let to = arts.to_string();
    let r = c
        .post(&format!("/library/posting/{physics}/copy"), &[("to", &to)])
        .await;
    assert_eq!(r.status, 303);
    assert_eq!(c.postings(science).await, vec![(1, "Physics".to_string())]);
    assert_eq!(c.postings(arts).await, vec![(1, "Physics".to_string())]);
    // A library that holds a posting with a password of its own is the
    // moderators' to move or delete: before, anyone could take the
    // protected posting away with its open library.
    let r = c
        .post(
            &format!("/library/posting/{science}/move"),
            &[("to", &arts.to_string())],
        )
        .await;
    assert_eq!(r.status, 403);
    assert!(
        r.body.contains(
            "not moved: it holds postings protected by passwords of their own; only a moderator may move or delete it"
        ),
        "{}",
        r.body
    );
    let r = c
        .post("/library/1/delete", &[("posting", &science.to_string())])
        .await;
    assert_eq!(r.status, 403);
    assert!(
        r.body
            .contains("&#34;Science&#34; was not deleted: it holds postings protected"),
        "{}",
        r.body
    );
    assert_eq!(c.postings(science).await, vec![(1, "Physics".to_string())]);
    // A library cannot go into itself.
    c.post("/library/1/create", &[("title", "Empty")]).await;
    let empty = c.id_of(1, "Empty").await;
    let r = c
        .post(
            &format!("/library/posting/{empty}/move"),
            &[("to", &empty.to_string())],
        )
        .await;
    assert_eq!(r.status, 422);
    assert!(
        r.body.contains("cannot be moved or copied into itself"),
        "{}",
        r.body
    );
    let titles: HashMap<i64, String> = c.postings(1).await.into_iter().collect();
    assert_eq!(titles.len(), 3);
}

/// A library file with postings at the test web: the root holds a fine,
/// a moved and a broken pointer; sub-VL 2 ("Add your page to the Worm")
/// holds one pointer; a report links to a forbidden page.
fn library_file(web: &spinneret_tests::server::TestWeb) -> String {
    let a = |p: &str| web.url("a.example", p);
    let pointer = |seq: i64, title: &str, url: &str| {
        format!(
            r#"{{"kind":"pointer","seq":{seq},"title":"{title}","url":"{url}","created_at":1,"updated_at":1}}"#
        )
    };
    format!(
        r#"{{"format":"spinneret-library","version":1,"root":{{"kind":"vl","seq":0,"title":"Test Library","created_at":1,"updated_at":1,"last_seq":6,"postings":[
{{"kind":"vl","seq":1,"title":"Add your page to the Worm","created_at":1,"updated_at":1,"last_seq":1,"postings":[{}]}},
{},{},{},
{{"kind":"report","seq":6,"title":"Notes","body":"<p>See <a href=\"{}\">this</a>.</p>","created_at":1,"updated_at":1}}]}}}}"#,
        pointer(1, "The guide", &a("/docs/guide.html")),
        pointer(2, "About", &a("/about.html")),
        pointer(3, "Old page", &a("/old.html")),
        pointer(5, "Missing page", &a("/missing.html")),
        a("/forbidden.html"),
    )
}

/// The maintenance web served, a configuration of `tasks` over it, and
/// [`library_file`] imported into its store (the file is left as
/// `library.json` in the setup's directory).
fn imported(
    tasks: &str,
) -> (
    spinneret_tests::server::TestWeb,
    spinneret_tests::harness::Setup,
    std::path::PathBuf,
) {
    let web = spinneret_tests::server::TestWeb::start(spinneret_tests::fixtures::maintenance_web());
    let setup = spinneret_tests::harness::Setup::new(&web, tasks);
    let file = setup.dir.path().join("library.json");
    std::fs::write(&file, library_file(&web)).unwrap();
    let said = with_config(&setup, &["library", "import", file.to_str().unwrap()], 0);
    let store = setup.dir.path().join("store.db");
    assert_eq!(
        said.trim(),
        format!("7 postings imported into {}", store.display())
    );
    (web, setup, file)
}

/// The library on a PostgreSQL store (the suite's server): imported,
/// published and exported as on a store file.
#[test]
fn the_library_is_imported_published_and_exported_on_postgres() {
    let Some(pg) = spinneret_store::testing::TestPg::shared() else {
        return;
    };
    let web = spinneret_tests::server::TestWeb::start(spinneret_tests::fixtures::maintenance_web());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("library.json");
    std::fs::write(&file, library_file(&web)).unwrap();
    let url = pg.database_url();
    let run = |args: &[&str], code: i32| {
        let out = crate::common::command()
            .args(args)
            .args(["--store", &url])
            .output()
            .unwrap();
        (
            crate::common::expect_exit(&out, code),
            crate::common::text(&out.stdout),
        )
    };
    let (said, _) = run(&["library", "import", file.to_str().unwrap()], 0);
    assert_eq!(said.trim(), format!("7 postings imported into {url}"));
    // A second import without --replace is refused, naming the store.
    let (said, _) = run(&["library", "import", file.to_str().unwrap()], 2);
    assert!(
        said.contains(&format!("{url} already has a library")),
        "{said}"
    );
    let site = dir.path().join("site");
    let (said, _) = run(&["library", "publish", site.to_str().unwrap()], 0);
    assert!(said.contains("summary pages"), "{said}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("Test Library"), "{index}");
    assert!(index.contains("Add your page to the Worm"), "{index}");
    let (_, exported) = run(&["library", "export"], 0);
    assert!(
        exported.contains("\"title\": \"Missing page\""),
        "{exported}"
    );
}

/// `spinneret ARGS --config CONFIG`, expecting exit `code`; its stderr.
fn with_config(setup: &spinneret_tests::harness::Setup, args: &[&str], code: i32) -> String {
    let out = crate::common::command()
        .args(args)
        .arg("--config")
        .arg(&setup.config_path)
        .output()
        .unwrap();
    crate::common::expect_exit(&out, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_task_marks_each_pointer_on_the_summary_pages() {
    use spinneret_core::model::Category;
    let (web, setup, _) =
        imported("[[task]]\nname = \"Pointers\"\nkind = \"library\"\noutput = \"lib-report\"\n");

    let out = crate::common::crawl(&setup, &[]);
    crate::common::expect_exit(&out, 1);
    // The published pages were the crawl's input; the pointers its leaves.
    let published = setup.dir.path().join("lib-report/library");
    let index = std::fs::read_to_string(published.join("index.html")).unwrap();
    assert!(
        index.contains(&format!(
            "<a href=\"{}\">Missing page</a>",
            web.url("a.example", "/missing.html")
        )),
        "{index}"
    );
    let results = setup.results();
    let broken = spinneret_tests::harness::urls_in(&results, Category::Broken);
    assert_eq!(broken, vec![web.url("a.example", "/missing.html")]);
    let blocked = spinneret_tests::harness::urls_in(&results, Category::Blocked);
    assert_eq!(blocked, vec![web.url("a.example", "/forbidden.html")]);
    let moved = spinneret_tests::harness::urls_in(&results, Category::Moved);
    assert_eq!(moved, vec![web.url("a.example", "/old.html")]);
    // Pointers are tested as leaves: HEAD, and GET only to confirm an
    // error before it is reported.
    let mut gets: Vec<String> = web
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path != "/robots.txt")
        .map(|r| r.path)
        .collect();
    gets.sort();
    assert_eq!(gets, ["/forbidden.html", "/missing.html"]);

    let served = serve(&[
        std::ffi::OsStr::new("--config"),
        setup.config_path.as_os_str(),
    ]);
    let c = Client::new(&served).await;
    let page = c.get("/library/1").await.body;
    let item = |title: &str| {
        let at = page.find(&format!(">{title}</a>")).expect(title);
        let end = page[at..].find("</li>").unwrap();
        page[at..at + end].to_string()
    };
    assert!(
        item("About").contains("<span class=\"check fine\">fine, checked "),
        "{}",
        item("About")
    );
    assert!(
        item("Missing page")
            .contains("<span class=\"check broken\">broken (HTTP 404 Not Found), checked "),
        "{}",
        item("Missing page")
    );
    let old = item("Old page");
    assert!(old.contains("<span class=\"check moved\">moved"), "{old}");
    assert!(
        old.contains(&format!(
            "now at <a href=\"{0}\">{0}</a>",
            web.url("a.example", "/new.html")
        )),
        "{old}"
    );
    assert!(old.contains("Use the new URL"), "{old}");
}

#[test]
fn the_worm_vl_s_pointers_are_tops_of_the_web_tasks() {
    let (web, setup, _) = imported(
        "[[task]]\nname = \"Worm\"\nkind = \"web\"\ntop = \"http://b.example:{PORT}/page.html\"\nlevels = 1\n\n[library]\nworm = 2\n",
    );
    crate::common::crawl(&setup, &[]);
    // The guide, pointed at in the Worm VL, was read as a document and
    // its references followed as the top's are.
    let out = crate::common::command()
        .args(["archive", "export", "--config"])
        .arg(&setup.config_path)
        .output()
        .unwrap();
    let archive = crate::common::text(&out.stdout);
    let guide = web.url("a.example", "/docs/guide.html");
    assert!(
        archive
            .lines()
            .any(|l| l.starts_with(&format!("T {guide} "))),
        "{archive}"
    );
    assert!(
        archive.lines().any(|l| l == format!("C {guide}")),
        "{archive}"
    );
}

#[test]
fn export_import_round_trips_and_a_hostile_file_imports_nothing() {
    let (web, setup, file) = imported("[[task]]\nname = \"Pointers\"\nkind = \"library\"\n");
    let export = |name: &str| {
        let path = setup.dir.path().join(name);
        with_config(
            &setup,
            &["library", "export", "-o", path.to_str().unwrap()],
            0,
        );
        std::fs::read_to_string(path).unwrap()
    };
    let first = export("first.json");
    // A second import over a library with postings wants --replace.
    let said = with_config(&setup, &["library", "import", file.to_str().unwrap()], 2);
    assert!(said.contains("give --replace to replace it"), "{said}");
    let again = setup.dir.path().join("first.json");
    with_config(
        &setup,
        &["library", "import", again.to_str().unwrap(), "--replace"],
        0,
    );
    assert_eq!(export("second.json"), first);

    // A file with one javascript: pointer deep inside is refused whole.
    let hostile = library_file(&web).replace(
        &web.url("a.example", "/docs/guide.html"),
        "javascript:alert(1)",
    );
    let bad = setup.dir.path().join("hostile.json");
    std::fs::write(&bad, hostile).unwrap();
    let said = with_config(
        &setup,
        &["library", "import", bad.to_str().unwrap(), "--replace"],
        2,
    );
    assert_eq!(
        said.trim(),
        format!(
            "spinneret: {}: the root › 1 › 1 (\"The guide\"): the URL `javascript:alert(1)` is not an http or https URL; only web addresses may be posted; nothing was imported",
            bad.display()
        )
    );
    assert_eq!(export("third.json"), first);
}

#[test]
fn publish_writes_summary_pages_that_link_each_other() {
    let (web, setup, _) = imported("[[task]]\nname = \"Pointers\"\nkind = \"library\"\n");
    let site = setup.dir.path().join("site");
    let said = with_config(&setup, &["library", "publish", site.to_str().unwrap()], 0);
    assert_eq!(
        said.trim(),
        format!(
            "2 summary pages, 1 reports and 4 pointers written to {}",
            site.display()
        )
    );
    let mut names: Vec<String> = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".spinneret-library",
            "index.html",
            "report-7.html",
            "vl-2.html"
        ]
    );
    // Published again unchanged, the pages are left as they were (a
    // library task does not see them all as recently modified).
    let modified = |name: &str| {
        std::fs::metadata(site.join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before = modified("index.html");
    with_config(&setup, &["library", "publish", site.to_str().unwrap()], 0);
    assert_eq!(modified("index.html"), before);
    // A directory of someone else's files is not written into.
    let mine = setup.dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("index.html"), "my own page").unwrap();
    let out = crate::common::command()
        .args(["library", "publish"])
        .arg(&mine)
        .arg("--config")
        .arg(&setup.config_path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        crate::common::text(&out.stderr)
            .contains("holds other files; publish into an empty or new directory"),
        "{}",
        crate::common::text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("index.html")).unwrap(),
        "my own page"
    );
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    // Alphabetical, numbered, the sub-VL bold with an asterisk.
    let order: Vec<&str> = [
        "About",
        "Add your page to the Worm",
        "Missing page",
        "Notes",
        "Old page",
    ]
    .into_iter()
    .collect();
    let mut at = 0;
    for title in &order {
        let i = index[at..]
            .find(&format!(">{title}</a>"))
            .unwrap_or_else(|| panic!("{title} after {at}: {index}"));
        at += i;
    }
    assert!(index.contains("<span class=\"seq\">1.</span>\n* <strong><a href=\"vl-2.html\">Add your page to the Worm</a></strong>"), "{index}");
    let sub = std::fs::read_to_string(site.join("vl-2.html")).unwrap();
    assert!(
        sub.contains("<a href=\"index.html\">Root: Test Library</a>"),
        "{sub}"
    );
    let report = std::fs::read_to_string(site.join("report-7.html")).unwrap();
    assert!(
        report.contains(&format!(
            "See <a href=\"{}\" rel=\"noopener noreferrer nofollow\">this</a>",
            web.url("a.example", "/forbidden.html")
        )),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_moderator_deletes_what_a_password_guards() {
    use std::io::Write;
    // The hash comes from `library hash-password`, the password on stdin.
    let mut child = crate::common::command()
        .args(["library", "hash-password"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"correct horse battery\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    crate::common::expect_exit(&out, 0);
    let hash = crate::common::text(&out.stdout).trim().to_string();
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("spinneret.toml");
    std::fs::write(
        &config,
        format!(
            "store = \"lib.db\"\n[[task]]\nname = \"VL\"\nkind = \"library\"\n\n[library]\ntitle = \"Moderated\"\n\n[[library.moderator]]\nname = \"mo\"\npassword_hash = \"{hash}\"\n"
        ),
    )
    .unwrap();
    let s = serve(&[std::ffi::OsStr::new("--config"), config.as_os_str()]);
    let mut c = Client::new(&s).await;
    assert!(
        c.get("/library/1")
            .await
            .body
            .contains("<h1>Moderated</h1>")
    );
    c.post(
        "/library/1/point",
        &[
            ("title", "Guarded"),
            ("url", "http://g.example/"),
            ("password", "open sesame"),
        ],
    )
    .await;
    let guarded = c.id_of(1, "Guarded").await.to_string();
    let token = c.token("/library/login").await;
    let r = c
        .post_with(
            "/library/login",
            &token,
            &[("name", "mo"), ("password", "wrong horse")],
        )
        .await;
    assert_eq!(r.status, 403);
    assert!(
        r.body.contains("the name or the password is wrong"),
        "{}",
        r.body
    );
    let r = c
        .post_with(
            "/library/login",
            &token,
            &[("name", "mo"), ("password", "correct horse battery")],
        )
        .await;
    assert_eq!(r.status, 303);
    let session = r.cookie.expect("a session");
    c.cookie = format!("{}; {session}", c.cookie);
    assert!(c.get("/library/1").await.body.contains("Moderator: mo"));
    let r = c.post("/library/1/delete", &[("posting", &guarded)]).await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert!(c.postings(1).await.is_empty());
}

#[test]
fn one_search_finds_the_library_s_postings_and_follows_their_changes() {
    let (web, setup, file) = imported("[[task]]\nname = \"Pointers\"\nkind = \"library\"\n");
    let search = |query: &str, code: i32| {
        let out = crate::common::command()
            .args(["search", "--config"])
            .arg(&setup.config_path)
            .arg(query)
            .output()
            .unwrap();
        crate::common::expect_exit(&out, code);
        crate::common::text(&out.stdout)
    };
    let found = search("missing", 0);
    assert_eq!(
        found.lines().take(3).collect::<Vec<_>>(),
        vec![
            "1. Missing page".to_string(),
            format!("   {}", web.url("a.example", "/missing.html")),
            "   in the library: Test Library </library/posting/6>".to_string(),
        ]
    );
    // By the VL it is posted in, and by a sub-VL's title.
    assert!(search("cited-by:worm", 0).starts_with("1. The guide\n"));
    assert!(
        search("title:\"add your page\"", 0)
            .contains("   in the library: Test Library </library/posting/2>")
    );
    // A library changed since is indexed again: the import replaced it.
    let replaced = library_file(&web).replace("Missing page", "Absent page");
    std::fs::write(&file, replaced).unwrap();
    with_config(
        &setup,
        &["library", "import", file.to_str().unwrap(), "--replace"],
        0,
    );
    search("title:missing", 1);
    assert!(search("absent", 0).starts_with("1. Absent page\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_vl_s_summary_comes_in_pages_of_five_hundred() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("big.db");
    let postings: Vec<String> = (1..=1001)
        .map(|i| {
            format!(
                r#"{{"kind":"pointer","seq":{i},"title":"Page {i:04}","url":"http://p.example/{i}","created_at":1,"updated_at":1}}"#
            )
        })
        .collect();
    let file = dir.path().join("big.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"format":"spinneret-library","version":1,"root":{{"kind":"vl","seq":0,"title":"Big","created_at":1,"updated_at":1,"postings":[{}]}}}}"#,
            postings.join(",")
        ),
    )
    .unwrap();
    let out = crate::common::command()
        .args(["library", "import"])
        .arg(&file)
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    crate::common::expect_exit(&out, 0);
    let s = serve(&[std::ffi::OsStr::new("--store"), store.as_os_str()]);
    let c = Client::new(&s).await;
    let first = c.get("/library/1").await.body;
    assert!(first.contains("<h2>Postings (1001)</h2>"), "{first}");
    assert!(first.contains("<span>1–500 shown</span>"), "{first}");
    assert!(first.contains("<a rel=\"next\" href=\"/library/1?from=500\">Next</a>"));
    assert!(!first.contains("rel=\"prev\""));
    let shown = c.postings(1).await;
    assert_eq!(shown.len(), 500);
    assert_eq!(shown[0], (1, "Page 0001".to_string()));
    assert_eq!(shown[499], (500, "Page 0500".to_string()));
    let last = c.get("/library/1?from=1000").await.body;
    assert!(last.contains("<span>1001–1001 shown</span>"), "{last}");
    assert!(last.contains("<a rel=\"prev\" href=\"/library/1?from=500\">Previous</a>"));
    assert!(!last.contains("rel=\"next\""));
    // Past the end, or not a number: the last page, or the first.
    assert!(
        c.get("/library/1?from=99999")
            .await
            .body
            .contains("<span>1001–1001 shown</span>")
    );
    assert!(
        c.get("/library/1?from=x")
            .await
            .body
            .contains("<span>1–500 shown</span>")
    );
    // A posting beyond the first 500 is reached (from a search's "in the
    // library") on the page that shows it, and so is one just posted
    // there: before, both opened page 1, where their anchors are not.
    let r = c.get("/library/posting/751").await;
    assert_eq!(
        (r.status, r.location.as_deref()),
        (303, Some("/library/1?from=500#p751"))
    );
    let second = c.get("/library/1?from=500").await.body;
    assert!(second.contains("<li id=\"p751\" class=\"pointer\"><span class=\"seq\">750.</span>"));
    let r = c
        .post(
            "/library/1/point",
            &[("title", "Page 0750a"), ("url", "http://p.example/a")],
        )
        .await;
    assert_eq!(r.location.as_deref(), Some("/library/1?from=500#p1003"));
}

/// Issue 52: a moderator's edit form, opened for a posting its owner then
/// deleted, overwrote the next posting, which had been given the deleted
/// one's number (SQLite gave the highest ids again, and the version, 1,
/// matched). Ids are never given again, and the form names the posting
/// it was opened for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_opened_for_a_deleted_posting_overwrites_nobody_s_posting() {
    let (_d, s) = moderated();
    let owner = Client::new(&s).await;
    let other = Client::new(&s).await;
    let mut moderator = Client::new(&s).await;
    moderator.log_in().await;
    owner
        .post(
            "/library/1/point",
            &[
                ("title", "Mine"),
                ("url", "http://mine.example/"),
                ("password", "mine"),
            ],
        )
        .await;
    let mine = owner.id_of(1, "Mine").await;
    let edit = format!("/library/posting/{mine}/edit");
    let form = moderator.get(&edit).await.body;
    let token = hidden(&form, "<form", "csrf");
    let (read, opened) = (
        hidden(&form, "<form", "read"),
        hidden(&form, "<form", "opened"),
    );
    let r = owner
        .post(
            "/library/1/delete",
            &[("posting", &mine.to_string()), ("password", "mine")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    other
        .post(
            "/library/1/point",
            &[
                ("title", "Hers"),
                ("url", "http://hers.example/"),
                ("password", "hers"),
            ],
        )
        .await;
    let hers = other.id_of(1, "Hers").await;
    assert_eq!(hers, mine + 1);
    let r = moderator
        .post_with(
            &edit,
            &token,
            &[
                ("read", &read),
                ("opened", &opened),
                ("title", "Moderated"),
                ("url", "http://moderated.example/"),
            ],
        )
        .await;
    assert_eq!(r.status, 410, "{}", r.body);
    assert!(
        r.body.contains(&format!(
            "the posting this form was opened for (number {mine}) has been deleted since, or the library replaced; nothing was changed"
        )),
        "{}",
        r.body
    );
    let page = other.get("/library/1").await.body;
    assert!(
        page.contains("<a href=\"http://hers.example/\">Hers</a>"),
        "{page}"
    );
    assert_eq!(other.postings(1).await, vec![(2, "Hers".to_string())]);
    // The deleted posting's addresses name nothing.
    assert_eq!(other.get(&edit).await.status, 404);
    assert_eq!(
        other.get(&format!("/library/posting/{mine}")).await.status,
        404
    );
}

/// Issue 52: `library export` then `library import` numbered the postings
/// anew (VL 4 became 3), so every link to `/library/N` and `[library]
/// worm = N` named another posting. Ids survive the round trip, gaps
/// included, and the next posting gets one never given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_import_keeps_every_address() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first.db"), dir.path().join("second.db"));
    let s = serve(&[std::ffi::OsStr::new("--store"), first.as_os_str()]);
    let c = Client::new(&s).await;
    for title in ["Arts", "Gone", "Science"] {
        c.post("/library/1/create", &[("title", title)]).await;
    }
    let gone = c.id_of(1, "Gone").await;
    c.post("/library/1/delete", &[("posting", &gone.to_string())])
        .await;
    let science = c.id_of(1, "Science").await;
    c.post(
        &format!("/library/{science}/point"),
        &[("title", "Physics"), ("url", "http://physics.example/")],
    )
    .await;
    let physics = c.id_of(science, "Physics").await;
    assert_eq!((gone, science, physics), (3, 4, 5));
    drop(s);
    let file = dir.path().join("library.json");
    let run = |args: &[&std::ffi::OsStr]| {
        let out = crate::common::command().args(args).output().unwrap();
        crate::common::expect_exit(&out, 0)
    };
    run(&[
        "library".as_ref(),
        "export".as_ref(),
        "--store".as_ref(),
        first.as_os_str(),
        "-o".as_ref(),
        file.as_os_str(),
    ]);
    let said = run(&[
        "library".as_ref(),
        "import".as_ref(),
        file.as_os_str(),
        "--store".as_ref(),
        second.as_os_str(),
    ]);
    assert_eq!(
        said.trim(),
        format!("4 postings imported into {}", second.display())
    );
    let s = serve(&[std::ffi::OsStr::new("--store"), second.as_os_str()]);
    let c = Client::new(&s).await;
    let page = c.get(&format!("/library/{science}")).await.body;
    assert!(page.contains("<h1>Science</h1>"), "{page}");
    assert_eq!(c.id_of(science, "Physics").await, physics);
    assert_eq!(c.get(&format!("/library/{gone}")).await.status, 404);
    c.post("/library/1/create", &[("title", "Later")]).await;
    assert_eq!(c.id_of(1, "Later").await, physics + 1);
}

/// Issue 52: the `library` task's published pages became documents of
/// the Worm: `archive export` wrote T/R/I/C lines for
/// `file:///…/library/index.html`, and a search showed them as hits (with
/// the server's file paths) beside the library's own. They are the
/// library's, never the Worm's.
#[test]
fn a_library_task_s_own_pages_are_not_documents_of_the_worm() {
    let (web, setup, _) =
        imported("[[task]]\nname = \"Pointers\"\nkind = \"library\"\noutput = \"lib-report\"\n");
    crate::common::expect_exit(&crate::common::crawl(&setup, &[]), 1);
    let run = |command: &[&str], query: &[&str]| {
        let out = crate::common::command()
            .args(command)
            .arg("--config")
            .arg(&setup.config_path)
            .args(query)
            .output()
            .unwrap();
        crate::common::expect_exit(&out, 0);
        crate::common::text(&out.stdout)
    };
    let archive = run(&["archive", "export"], &[]);
    assert_eq!(archive, "");
    // One hit, the library's posting: not a second for the missing page
    // as the published index cites it, nor the published pages.
    let found = run(&["search"], &["missing"]);
    let (hits, summary) = found.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(
        hits,
        format!(
            "1. Missing page\n   {}\n   in the library: Test Library </library/posting/6>",
            web.url("a.example", "/missing.html")
        )
    );
    assert!(summary.starts_with("1 result, 1–1 shown ("), "{found}");
    let found = run(&["search"], &["test library"]);
    assert!(!found.contains("file:"), "{found}");
}

/// Issue 52: a search result "In the library: Notes' VL" linked to the
/// report, not to its VL; a link to a posting beyond the first 500 of its
/// VL opened page 1, where its anchor is not; a report's page lacked its
/// VL's image; a sub-VL's asterisk came after its title.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_posting_s_place_is_its_line_in_its_vl_and_a_report_shows_the_vl_s_image() {
    let (_d, s) = served();
    let c = Client::new(&s).await;
    c.post(
        "/library/1/create",
        &[
            ("title", "Physics"),
            ("image", "http://img.example/physics.gif"),
        ],
    )
    .await;
    let physics = c.id_of(1, "Physics").await;
    let r = c
        .post(
            &format!("/library/{physics}/input"),
            &[("title", "Notes"), ("body", "<p>Read this.</p>")],
        )
        .await;
    let notes = c.id_of(physics, "Notes").await;
    assert_eq!(
        r.location.as_deref(),
        Some(format!("/library/{physics}#p{notes}").as_str())
    );
    let report = c.get(&format!("/library/report/{notes}")).await.body;
    assert!(
        report.contains(
            "<img class=\"vl-image\" src=\"http://img.example/physics.gif\" alt=\"\" width=\"64\" height=\"64\">"
        ),
        "{report}"
    );
    let page = c.get("/library/1").await.body;
    assert!(
        page.contains(&format!(
            "<span class=\"seq\">1.</span>\n* <strong><a href=\"/library/{physics}\">Physics</a></strong>\n"
        )),
        "{page}"
    );
    // Where the search's "In the library: Physics" leads: the report's
    // line in Physics.
    let r = c.get(&format!("/library/posting/{notes}")).await;
    assert_eq!(
        (r.status, r.location),
        (303, Some(format!("/library/{physics}#p{notes}")))
    );
    let r = c.get(&format!("/library/posting/{physics}")).await;
    assert_eq!(
        (r.status, r.location),
        (303, Some(format!("/library/1#p{physics}")))
    );
}

/// Issue 52: there was no bound on posting (200 posts from one address in
/// 0.6 s were all taken). A client may post 100 times in 10 minutes, and
/// is then told when it may post again; moderators are not counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posting_is_bounded_per_client_and_the_answer_says_when_to_come_back() {
    let (_d, s) = moderated();
    let c = Client::new(&s).await;
    let token = c.token("/library/1/change").await;
    for i in 0..100 {
        let title = format!("P{i:03}");
        let r = c
            .post_with(
                "/library/1/point",
                &token,
                &[("title", &title), ("url", "http://p.example/")],
            )
            .await;
        assert_eq!(r.status, 303, "{i}: {}", r.body);
    }
    let r = c
        .post_with(
            "/library/1/point",
            &token,
            &[("title", "P100"), ("url", "http://p.example/")],
        )
        .await;
    assert_eq!(r.status, 429);
    let secs: u64 = r.retry_after.as_deref().unwrap().parse().unwrap();
    assert!((590..=600).contains(&secs), "{secs}");
    assert!(
        r.body.contains(
            "this address has posted 100 times within 10 minutes, the most the library takes; post again in 10 minutes, or ask a moderator"
        ),
        "{}",
        r.body
    );
    // A new cookie is the same address; a copy adds postings too.
    let again = Client::new(&s).await;
    let r = again
        .post("/library/1/create", &[("title", "Another")])
        .await;
    assert_eq!(r.status, 429);
    let p0 = c.id_of(1, "P000").await;
    let r = again
        .post(&format!("/library/posting/{p0}/copy"), &[("to", "1")])
        .await;
    assert_eq!(r.status, 429);
    assert!(
        r.body.contains("not copied: this address has posted"),
        "{}",
        r.body
    );
    let mut moderator = Client::new(&s).await;
    moderator.log_in().await;
    let r = moderator
        .post(
            "/library/1/point",
            &[("title", "P100"), ("url", "http://p.example/")],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(c.postings(1).await.len(), 101);
}

/// Issue 52: "Use the new URL" took any address and no version: it is an
/// edit, so it takes only where the spider found the pointer moved, from
/// a summary shown at the pointer's present version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn use_the_new_url_takes_only_what_the_spider_found() {
    let (web, setup, _) =
        imported("[[task]]\nname = \"Pointers\"\nkind = \"library\"\noutput = \"lib-report\"\n");
    crate::common::expect_exit(&crate::common::crawl(&setup, &[]), 1);
    let served = serve(&[
        std::ffi::OsStr::new("--config"),
        setup.config_path.as_os_str(),
    ]);
    let c = Client::new(&served).await;
    let old = c.id_of(1, "Old page").await;
    let follow = format!("/library/posting/{old}/follow");
    let page = c.get("/library/1").await.body;
    let form = format!("action=\"{follow}\"");
    let field = |name: &str| hidden(&page, &form, name);
    let (token, read, opened, to) = (field("csrf"), field("read"), field("opened"), field("to"));
    let new = web.url("a.example", "/new.html");
    assert_eq!(to, new);
    let r = c
        .post_with(
            &follow,
            &token,
            &[
                ("to", "http://elsewhere.example/"),
                ("read", &read),
                ("opened", &opened),
            ],
        )
        .await;
    assert_eq!(r.status, 422);
    assert!(
        r.body.contains(&format!(
            "the spider last found this pointer moved to {new}, not to the address this form gives"
        )),
        "{}",
        r.body
    );
    let r = c
        .post_with(
            &follow,
            &token,
            &[("to", &to), ("read", "7"), ("opened", &opened)],
        )
        .await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.body
            .contains("someone else changed this posting since you opened it (version 1, you edited version 7)"),
        "{}",
        r.body
    );
    let r = c
        .post_with(
            &follow,
            &token,
            &[("to", &to), ("read", &read), ("opened", &opened)],
        )
        .await;
    assert_eq!(
        (r.status, r.location),
        (303, Some(format!("/library/1#p{old}")))
    );
    let page = c.get("/library/1").await.body;
    assert!(
        page.contains(&format!("<a href=\"{new}\">Old page</a>")),
        "{page}"
    );
}

/// Issue 52: on an address other machines reach, the warning spoke of
/// reading only, though the library takes anyone's posts and deletions of
/// postings without a password.
#[test]
fn serving_beyond_loopback_says_that_anyone_may_post_and_delete() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut child = crate::common::command()
        .args(["serve", "--listen", "0.0.0.0:0", "--store"])
        .arg(dir.path().join("s.db"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("serving ");
        said.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        said.contains(&"spinneret: serving on 0.0.0.0:0, reachable from other machines: anyone who reaches it can read the store's reports and search it, post to the library, and edit, move or delete every posting that has no password; to choose who may, listen on 127.0.0.1 behind a reverse proxy that lets only them through".to_string()),
        "{said:#?}"
    );
}
