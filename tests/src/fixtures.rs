//! Standard fixture webs.

use crate::server::{Route, Site, Web};

/// A page with a title, an optional Owner and a body.
pub fn page(title: &str, owner: Option<&str>, body: &str) -> String {
    let owner = owner
        .map(|o| format!("<meta name=\"owner\" content=\"{o}\">"))
        .unwrap_or_default();
    format!(
        "<!DOCTYPE html><html><head><title>{title}</title>{owner}</head><body>{body}</body></html>"
    )
}

/// The maintenance web: two sites with every kind of link a maintainer meets.
///
/// `a.example` (robots.txt disallows `/private/`):
/// - `/index.html` (top, owner Alice) links: about, docs/index, missing (404),
///   old (301 to new), chain1 (302, 302, to docs/guide), loop1 (loop), forbidden (403),
///   private/secret (robots), logo.png, style.css, mailto, a form, and
///   b.example's page.html and gone.html (404).
/// - `/about.html` (owner Alice) links index and docs/guide.
/// - `/docs/index.html` (owner Bob) links guide, faq (404) and ../index.
/// - `/docs/guide.html` (owner Bob) links report.pdf and index.
/// - `/new.html` (owner Alice): the target of the move.
///
/// `b.example` (no robots.txt): `/page.html` (links back to a.example's index) and 404s.
pub fn maintenance_web() -> Web {
    let a = Site::new()
        .robots("User-agent: *\nDisallow: /private/\n")
        .page(
            "/index.html",
            &page(
                "Home of A",
                Some("Alice"),
                r#"<img src="logo.png" alt="A logo"><link rel="stylesheet" href="style.css">
                <a href="about.html">About A</a>
                <a href="docs/index.html">Docs</a>
                <a href="missing.html">A missing page</a>
                <a href="old.html">An old page</a>
                <a href="chain1.html">A chain</a>
                <a href="loop1.html">A loop</a>
                <a href="forbidden.html">Forbidden</a>
                <a href="private/secret.html">Secret</a>
                <a href="mailto:alice@a.example">Mail Alice</a>
                <form action="/search"></form>
                <a href="http://b.example:{PORT}/page.html">B's page</a>
                <a href="http://b.example:{PORT}/gone.html">B's gone page</a>"#,
            ),
        )
        .page(
            "/about.html",
            &page(
                "About A",
                Some("Alice"),
                r#"<a href="index.html">Home</a> <a href="docs/guide.html">Guide</a>"#,
            ),
        )
        .page(
            "/docs/index.html",
            &page(
                "Docs",
                Some("Bob"),
                r#"<a href="guide.html">Guide</a> <a href="faq.html">FAQ</a> <a href="../index.html">Home</a>"#,
            ),
        )
        .page(
            "/docs/guide.html",
            &page(
                "Guide",
                Some("Bob"),
                r#"<a href="report.pdf">The report</a> <a href="index.html">Docs</a>"#,
            ),
        )
        .page("/new.html", &page("New", Some("Alice"), "moved here"))
        .route("/docs/report.pdf", Route::file("application/pdf", &b"%PDF-1.4"[..]))
        .route("/old.html", Route::redirect(301, "/new.html"))
        .route("/chain1.html", Route::redirect(302, "/chain2.html"))
        .route("/chain2.html", Route::redirect(302, "http://a.example:{PORT}/docs/guide.html"))
        .route("/loop1.html", Route::redirect(302, "/loop2.html"))
        .route("/loop2.html", Route::redirect(302, "/loop1.html"))
        .route("/forbidden.html", Route::status(403))
        .route("/private/secret.html", Route::html(page("Secret", None, "")))
        .route("/logo.png", Route::file("image/png", &b"\x89PNG\r\n\x1a\n"[..]))
        .route("/style.css", Route::file("text/css", "body{}"));
    let b = Site::new().page(
        "/page.html",
        &page(
            "B's page",
            None,
            r#"<a href="http://a.example:{PORT}/index.html">A</a>"#,
        ),
    );
    Web::new().site("a.example", a).site("b.example", b)
}
