//! The parse stage: turns a fetched HTML body into a [`ParsedDocument`]:
//! title, owner, expiry, and every reference resolved to an absolute URL.

pub mod attribute_urls;
pub mod bad_html;
pub mod charset;
pub mod html;
pub mod markdown;
pub mod position;
pub mod sitemap;

use spinneret_core::document::{BadUrl, ParsedDocument, RawReference, RefKind, Reference};
use std::hash::BuildHasher;
use url::Url;

pub use spinneret_net::fetch::is_html;

/// Parse an HTML body fetched from `url`.
pub fn parse_html(url: &Url, content_type: Option<&str>, body: &[u8]) -> ParsedDocument {
    parse_html_under(url, content_type, body, None)
}

/// Parse an HTML body fetched from `url`, a `file:` document of the local
/// tree whose root is `root` (a `file:` directory URL) if one is given:
/// its root-relative references (`/p1.html`, and a `<base href="/…">`)
/// resolve against that root instead of the file system's.
pub fn parse_html_under(
    url: &Url,
    content_type: Option<&str>,
    body: &[u8],
    root: Option<&Url>,
) -> ParsedDocument {
    let decoded = charset::decode_html(body, content_type);
    let facts = html::extract(&decoded.text);
    let base = facts
        .base
        .as_deref()
        .and_then(|b| {
            tree_root(url, root)
                .and_then(|r| root_relative(b, r))
                .unwrap_or_else(|| url.join(b))
                .ok()
        })
        .filter(|b| b != url);
    let effective = base.as_ref().unwrap_or(url);
    // Whether the references read under the root: decided once, by the
    // effective base (a `<base href="https://…">` keeps its meaning).
    let refs_root = tree_root(effective, root);
    let (references, fragments) = resolve_references(facts.references, effective, refs_root);
    let mut expires_meta = None;
    let mut http_equiv = Vec::new();
    for (k, v) in facts.http_equiv {
        if k == "expires" && expires_meta.is_none() {
            expires_meta = Some(v);
        } else {
            http_equiv.push((k, v));
        }
    }
    ParsedDocument {
        title: facts.title,
        owner: facts.owner,
        expires_meta,
        http_equiv,
        base,
        encoding: decoded.encoding,
        decode_errors: decoded.had_errors,
        parse_errors: facts.parse_errors + u32::from(decoded.had_errors),
        bad_html: bad_html::with_encoding(facts.bad_html, decoded.had_errors),
        references,
        anchors: facts.anchors,
        fragments,
    }
}

/// The fragments a document's links point at: (place in its references,
/// fragment, line, column), as [`ParsedDocument::fragments`] holds them.
pub(crate) type Fragments = Vec<(usize, String, u32, u32)>;

/// `raw` references resolved against `effective` (root-relative ones
/// under `refs_root`, a local tree's root, when given), each target and
/// kind once with its first place and anchor text, and the fragments
/// their links point at (see [`ParsedDocument::fragments`]).
pub(crate) fn resolve_references(
    raw: Vec<RawReference>,
    effective: &Url,
    refs_root: Option<&Url>,
) -> (Vec<Reference>, Fragments) {
    // Unique by target and kind. The set holds positions in `references`,
    // not another copy of each URL (a page may have 200,000 links).
    let mut seen = hashbrown::HashTable::<usize>::new();
    let hasher = foldhash::fast::RandomState::default();
    fn key(r: &Reference) -> (&str, RefKind) {
        let target = match &r.target {
            Ok(u) => u.as_str(),
            Err(b) => b.raw.as_str(),
        };
        (target, r.kind)
    }
    let mut references: Vec<Reference> = Vec::with_capacity(raw.len());
    let mut fragments: Fragments = Vec::new();
    for r in raw {
        let fragment = match r.kind {
            RefKind::Anchor | RefKind::Area if fragments.len() < MAX_FRAGMENTS => {
                checked_fragment(&r.href)
            }
            _ => None,
        };
        let resolved = refs_root
            .and_then(|root| root_relative(&r.href, root))
            .unwrap_or_else(|| spinneret_core::urls::resolve(effective, &r.href));
        let target = match resolved {
            Ok(u) => match spinneret_core::urls::mistyped_scheme(&u) {
                None => Ok(u),
                Some(reason) => Err(BadUrl {
                    raw: r.href,
                    reason,
                }),
            },
            Err(e) => Err(BadUrl {
                raw: r.href,
                reason: e.to_string(),
            }),
        };
        let line = u32::try_from(r.line).unwrap_or(u32::MAX);
        let reference = Reference {
            target,
            kind: r.kind,
            text: r.text,
            line,
            column: r.column,
        };
        let hash = hasher.hash_one(key(&reference));
        let at = match seen.find(hash, |&i| key(&references[i]) == key(&reference)) {
            Some(&i) => i,
            None => {
                seen.insert_unique(hash, references.len(), |&i| {
                    hasher.hash_one(key(&references[i]))
                });
                references.push(reference);
                references.len() - 1
            }
        };
        if let Some(f) = fragment
            && references[at].target.is_ok()
        {
            fragments.push((at, f, line, r.column));
        }
    }
    // By reference, each pair once, with its first place.
    fragments.sort_unstable();
    fragments.dedup_by(|a, b| (a.0, &a.1) == (b.0, &b.1));
    (references, fragments)
}

/// The most fragments of links kept per document: a page of a million
/// `#aN` links is checked for its first ones (fewer checks, never a wrong one).
const MAX_FRAGMENTS: usize = 10_000;

/// The fragment of the link `href` that names a place in the target
/// document, percent-encoded as the URL parser writes it (`#caf%C3%A9`),
/// without a text directive (`#intro:~:text=…` names `intro`, as a browser
/// reads it); `None` for no fragment, an empty one, `#top` (which the HTML
/// standard scrolls to without an element) and an application's route
/// (`#/settings`, `#!/home`), which no element names.
fn checked_fragment(href: &str) -> Option<String> {
    let (_, raw) = href.split_once('#')?;
    let joined = Url::parse("http://f.invalid/")
        .ok()?
        .join(&format!("#{raw}"))
        .ok()?;
    let f = joined.fragment()?;
    let f = f.split(":~:").next().unwrap_or("");
    let decoded = percent_encoding::percent_decode_str(f).decode_utf8_lossy();
    let skipped = f.is_empty() || decoded.eq_ignore_ascii_case("top") || f.starts_with(['/', '!']);
    (!skipped).then(|| f.to_string())
}

/// `root`, when `base` is a `file:` URL under it: the local tree's root
/// that root-relative references read against.
fn tree_root<'r>(base: &Url, root: Option<&'r Url>) -> Option<&'r Url> {
    root.filter(|r| base.scheme() == "file" && base.as_str().starts_with(r.as_str()))
}

/// `href` resolved under `root` when it is root-relative (`/p1.html`, not
/// `//host/…`), read as the URL parser reads it: tabs and newlines dropped,
/// `\` in the path a `/`. `None` for any other reference.
fn root_relative(href: &str, root: &Url) -> Option<Result<Url, url::ParseError>> {
    let href = href.trim();
    if !href.starts_with(['/', '\\']) {
        return None;
    }
    let mut in_path = true;
    let clean: String = href
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .map(|c| {
            in_path &= !matches!(c, '?' | '#');
            if in_path && c == '\\' { '/' } else { c }
        })
        .collect();
    let rest = clean.strip_prefix('/')?;
    (!rest.starts_with('/')).then(|| spinneret_core::urls::resolve(root, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_against_base_and_dedupe() {
        let url = Url::parse("http://a.example/dir/page.html").unwrap();
        let doc = parse_html(
            &url,
            Some("text/html"),
            b"<base href=\"/other/\"><a href=\"x.html\">X</a><a href=\"x.html#frag\">again</a>\
              <a href=\"http://[bad\">bad</a><img src=\"x.html\">",
        );
        assert_eq!(
            doc.base.as_ref().unwrap().as_str(),
            "http://a.example/other/"
        );
        let targets: Vec<String> = doc
            .references
            .iter()
            .map(|r| match &r.target {
                Ok(u) => format!("{} {}", r.kind.as_str(), u),
                Err(b) => format!("{} bad:{}", r.kind.as_str(), b.raw),
            })
            .collect();
        assert_eq!(
            targets,
            vec![
                "a http://a.example/other/x.html",
                "a bad:http://[bad",
                "img http://a.example/other/x.html",
            ]
        );
        assert_eq!(doc.references[0].text, "X");
    }

    #[test]
    fn places_and_the_fragments_links_point_at_are_kept() {
        let url = Url::parse("http://a.example/page.html").unwrap();
        let doc = parse_html(
            &url,
            Some("text/html"),
            "<h1 id=\"intro\">I</h1><a name=\"old-style\"></a><p id=\"\">empty</p>\
              <a href=\"other.html#sec\">1</a><a href=\"other.html#sec\">again</a>\
              <a href=\"other.html#caf\u{e9}\">2</a><a href=\"other.html\">3</a>\
              <a href=\"#top\">top</a><a href=\"#/app\">route</a><a href=\"#!x\">bang</a>\
              <a href=\"#:~:text=hi\">directive</a><a href=\"#\">empty</a>\
              <a href=\"other.html#part:~:text=hi\">place and directive</a><a href=\"#%74op\">top</a>\
              <img src=\"pic.png#xywh=1,2,3,4\"><area href=\"#intro\">"
                .as_bytes(),
        );
        assert_eq!(
            doc.anchors.as_deref(),
            Some(&["intro".to_string(), "old-style".to_string()][..])
        );
        let fragments: Vec<(String, &str)> = doc
            .fragments
            .iter()
            .map(|(i, f, _, _)| {
                (
                    doc.references[*i].target.as_ref().unwrap().to_string(),
                    f.as_str(),
                )
            })
            .collect();
        assert_eq!(
            fragments,
            vec![
                ("http://a.example/other.html".to_string(), "caf%C3%A9"),
                ("http://a.example/other.html".to_string(), "part"),
                ("http://a.example/other.html".to_string(), "sec"),
                ("http://a.example/page.html".to_string(), "intro"),
            ],
            "one per link and fragment; not #top, routes, directives, empty ones or images'"
        );
    }

    #[test]
    fn each_fragment_keeps_the_place_of_its_first_link() {
        let url = Url::parse("http://a.example/page.html").unwrap();
        let doc = parse_html(
            &url,
            Some("text/html"),
            "<title>T</title>\n<a href=\"other.html\">page</a>\n\n<a href=\"other.html#b\">b</a>\n\
             <a href=\"other.html#a\">a</a>\n<a href=\"other.html#b\">b again</a>\n"
                .as_bytes(),
        );
        assert_eq!(doc.references.len(), 1, "one reference to the page");
        assert_eq!(doc.references[0].line, 2, "the page's first link");
        assert_eq!(doc.references[0].column, 10, "where its value starts");
        assert_eq!(
            doc.fragments,
            vec![(0, "a".to_string(), 5, 10), (0, "b".to_string(), 4, 10)],
            "each fragment once, at its own first link"
        );
    }

    /// That the references of the page `html` (at `http://a.example/`)
    /// are, in order, at `want`: each target's path, line and column.
    fn assert_places(html: &str, want: &[(&str, u32, u32)]) {
        let url = Url::parse("http://a.example/page.html").unwrap();
        let doc = parse_html(&url, Some("text/html"), html.as_bytes());
        let got: Vec<(&str, u32, u32)> = doc
            .references
            .iter()
            .map(|r| (r.target.as_ref().unwrap().path(), r.line, r.column))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_reference_is_placed_in_its_own_tag_and_attribute_whatever_the_markup_around() {
        // A `<` in raw text, in a comment and in attribute values; a value
        // that an earlier attribute of the tag also holds.
        assert_places(
            "<title>a<b</title><!-- <a href=\"x.html\"> -->\n\
                 <script>if (a<b) {}</script><a title=\"<\" href=\"gt.html\">g</a>\n\
                 <img alt=\"logo.png\" src=\"logo.png\"><img src=\"heart.png\" alt=\"<3\">",
            &[
                ("/gt.html", 2, 48),
                ("/logo.png", 3, 26),
                ("/heart.png", 3, 46),
            ],
        );
    }

    #[test]
    fn each_reference_has_the_line_and_column_of_its_value() {
        assert_places(
            "<title>T</title>\r\n<p>Voilà: <a href=\"a.html\">a</a> <A HREF = 'b.html'>b</A>\r\n\
                 <img\n  alt=\"x\"\n  src=\"c.png\"><a href=\"d&amp;e.html\">d</a>\n\
                 <meta http-equiv=refresh content=\"5; url=f.html\">",
            &[
                ("/a.html", 2, 20),
                ("/b.html", 2, 45),
                // The value's line, not the line of its tag's `>`.
                ("/c.png", 5, 8),
                // Written with a character reference: where its value
                // starts as written.
                ("/d&e.html", 5, 24),
                (
                    "/f.html",
                    6,
                    1 + "<meta http-equiv=refresh content=\"5; url=".len() as u32,
                ),
            ],
        );
    }

    #[test]
    fn a_document_with_too_many_places_has_them_unknown() {
        let url = Url::parse("http://a.example/page.html").unwrap();
        let body: String = (0..30_000)
            .map(|i| format!("<p id=\"place-{i:06}\">"))
            .collect();
        let doc = parse_html(&url, Some("text/html"), body.as_bytes());
        assert_eq!(
            doc.anchors, None,
            "a partial list would call good links broken"
        );
    }

    #[test]
    fn root_relative_references_of_a_local_tree_resolve_against_its_root() {
        let root = Url::parse("file:///srv/site/").unwrap();
        let page = Url::parse("file:///srv/site/docs/page.html").unwrap();
        let body = b"<a href=\"/p1.html\">1</a><a href=\"//cdn.example/x.js\">cdn</a>\
              <a href=\"up.html\">up</a><img src=\" /img/a.png\">\
              <a href=\"\\p3.html?q=a\\b\">3</a><a href=\"/\t/cdn.example/y.js\">tab</a>";
        let targets = |doc: &ParsedDocument| -> Vec<String> {
            doc.references
                .iter()
                .map(|r| r.target.as_ref().unwrap().to_string())
                .collect()
        };
        let under_root = |html: &[u8]| {
            targets(&parse_html_under(
                &page,
                Some("text/html"),
                html,
                Some(&root),
            ))
        };
        assert_eq!(
            under_root(body),
            [
                "file:///srv/site/p1.html",
                "file://cdn.example/x.js",
                "file:///srv/site/docs/up.html",
                "file:///srv/site/img/a.png",
                "file:///srv/site/p3.html?q=a\\b",
                "file://cdn.example/y.js",
            ]
        );
        // Without a root, and for a document outside the root, as the file system has it.
        let plain = parse_html(&page, Some("text/html"), body);
        assert_eq!(targets(&plain)[0], "file:///p1.html");
        let elsewhere = Url::parse("file:///home/u/page.html").unwrap();
        let outside = parse_html_under(&elsewhere, Some("text/html"), body, Some(&root));
        assert_eq!(targets(&outside)[0], "file:///p1.html");
        // A root-relative base moves under the root too.
        assert_eq!(
            under_root(b"<base href=\"/docs/v2/\"><a href=\"x.html\">x</a>"),
            ["file:///srv/site/docs/v2/x.html"]
        );
        // A base on the web is the web's: the root does not apply.
        assert_eq!(
            under_root(b"<base href=\"https://www.example.org/\"><a href=\"/x.html\">x</a>"),
            ["https://www.example.org/x.html"]
        );
    }

    #[test]
    fn html_content_types() {
        assert!(is_html(Some("text/html; charset=utf-8")));
        assert!(is_html(Some("TEXT/HTML")));
        assert!(is_html(Some("application/xhtml+xml")));
        assert!(!is_html(Some("image/png")));
        assert!(!is_html(None));
    }

    #[test]
    fn kind_names_round_trip() {
        for k in RefKind::ALL {
            assert_eq!(RefKind::from_name(k.as_str()), Some(k));
        }
    }
}
