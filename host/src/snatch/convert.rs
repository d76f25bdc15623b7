//! Reading and converting the references of pages and stylesheets. The
//! collector reads what a page links to and what it needs to show
//! ([`references`], [`css_references`]); the mirror converts the links of
//! saved pages (wget's `-k`): in a page or a
//! stylesheet written to the mirror, a reference to a resource the mirror
//! holds becomes a relative path to it, and every other reference becomes
//! an absolute URL, so the mirror browses with no network and nothing in it
//! depends on where the page came from. HTML is rewritten in a stream by
//! lol_html (attributes only; the rest of the page is left byte for byte);
//! CSS `url(…)` and `@import "…"` by a small scanner, in `<style>`
//! elements and `style` attributes too. A `<base href>` is honoured and
//! removed (the saved page's own place is its base).

use lol_html::html_content::{ContentType, Element};
use lol_html::{RewriteStrSettings, element, rewrite_str, text};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use std::cell::RefCell;
use url::Url;

/// What a reference of a page is to the collector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// A link to another page: followed to the item's depth.
    Link,
    /// Something the page needs to show (an image, a stylesheet, a script,
    /// a frame, an icon, a font): fetched with the page.
    Requisite,
    /// Neither (a `<link rel=canonical>`, say): converted, not fetched.
    Other,
}

/// The attributes that hold a URL, by element, and what they are for
/// (`<link>` is decided by its `rel`).
const URL_ATTRIBUTES: [(&str, &str, Role); 29] = [
    ("a", "href", Role::Link),
    ("area", "href", Role::Link),
    ("link", "href", Role::Other),
    ("form", "action", Role::Other),
    ("button", "formaction", Role::Other),
    ("input", "formaction", Role::Other),
    ("blockquote", "cite", Role::Other),
    ("q", "cite", Role::Other),
    ("ins", "cite", Role::Other),
    ("del", "cite", Role::Other),
    ("image", "href", Role::Requisite),
    ("use", "href", Role::Requisite),
    ("image", "xlink:href", Role::Requisite),
    ("use", "xlink:href", Role::Requisite),
    ("img", "src", Role::Requisite),
    ("source", "src", Role::Requisite),
    ("script", "src", Role::Requisite),
    ("iframe", "src", Role::Requisite),
    ("frame", "src", Role::Requisite),
    ("embed", "src", Role::Requisite),
    ("video", "src", Role::Requisite),
    ("video", "poster", Role::Requisite),
    ("audio", "src", Role::Requisite),
    ("track", "src", Role::Requisite),
    ("input", "src", Role::Requisite),
    ("object", "data", Role::Requisite),
    ("body", "background", Role::Requisite),
    ("table", "background", Role::Requisite),
    ("td", "background", Role::Requisite),
];

/// The `rel` values of a `<link>` whose target the page needs.
const REQUISITE_RELS: [&str; 6] = [
    "stylesheet",
    "icon",
    "apple-touch-icon",
    "preload",
    "modulepreload",
    "manifest",
];

/// Characters a relative path must escape to be read back as the same path.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// The mirror-relative path of a saved resource, if the mirror holds `url`.
pub type Saved<'a> = &'a dyn Fn(&Url) -> Option<String>;

/// The path from the file at mirror path `from` to the file at `to`, both
/// `/`-separated and relative to the mirror, escaped for use in a link.
pub fn relative(from: &str, to: &str) -> String {
    let from_dirs: Vec<&str> = from.split('/').collect();
    let from_dirs = &from_dirs[..from_dirs.len().saturating_sub(1)];
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dirs
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to_parts.len().saturating_sub(1));
    let mut parts: Vec<String> = vec!["..".into(); from_dirs.len() - common];
    parts.extend(
        to_parts[common..]
            .iter()
            .map(|p| utf8_percent_encode(p, PATH).to_string()),
    );
    parts.join("/")
}

/// What `reference` (as written in a document at `base`, saved at mirror
/// path `at`) becomes: a relative path into the mirror, the absolute URL,
/// or itself when it is no URL to change (`javascript:`, `data:`, a
/// fragment of the same page, empty).
fn convert_one(reference: &str, base: &Url, at: &str, saved: Saved<'_>) -> String {
    let trimmed = reference.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return reference.to_string();
    }
    let Ok(mut url) = base.join(trimmed) else {
        return reference.to_string();
    };
    if !matches!(url.scheme(), "http" | "https") {
        return reference.to_string();
    }
    let fragment = url.fragment().map(str::to_string);
    url.set_fragment(None);
    match saved(&url) {
        Some(path) => {
            let mut local = relative(at, &path);
            if let Some(f) = fragment {
                local.push('#');
                local.push_str(&f);
            }
            local
        }
        None => {
            url.set_fragment(fragment.as_deref());
            url.to_string()
        }
    }
}

/// What a visitor answers for one reference: the value to write in its
/// place, or none to leave it as it is.
type Visit<'a> = dyn FnMut(Role, &str, &Url) -> Option<String> + 'a;

/// A `srcset` with `visit` asked about each candidate's URL (read as the
/// HTML standard reads them); descriptors kept.
fn walk_srcset(srcset: &str, base: &Url, visit: &mut Visit<'_>) -> String {
    spinneret_crawl::parse::html::srcset_candidates(srcset)
        .into_iter()
        .map(|(url, descriptors)| {
            let new = visit(Role::Requisite, url, base).unwrap_or_else(|| url.to_string());
            match descriptors {
                "" => new,
                d => format!("{new} {d}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A stylesheet (at `base`) with `visit` asked about each `url(…)` and
/// `@import "…"` reference (all requisites).
pub fn walk_css(css: &str, base: &Url, visit: &mut Visit<'_>) -> String {
    // Lower-cased once (ASCII only, so byte offsets are the same in both).
    let lower = css.to_ascii_lowercase();
    let mut out = String::with_capacity(css.len());
    let mut at = 0;
    // Where each of the two next starts, searched again only once passed,
    // so that a sheet with one and not the other is still read in one pass.
    let find = |what: &str, from: usize| lower[from..].find(what).map(|i| from + i);
    let (mut next_url, mut next_import) = (find("url(", 0), find("@import", 0));
    loop {
        if next_url.is_some_and(|u| u < at) {
            next_url = find("url(", at);
        }
        if next_import.is_some_and(|i| i < at) {
            next_import = find("@import", at);
        }
        let (start, is_import) = match (next_url, next_import) {
            (Some(u), Some(i)) if i < u => (i, true),
            (Some(u), _) => (u, false),
            (None, Some(i)) => (i, true),
            (None, None) => break,
        };
        let open = if is_import {
            start + "@import".len()
        } else {
            start + "url(".len()
        };
        out.push_str(&css[at..open]);
        at = open;
        // Whitespace, then a quoted string, or (in url()) a bare URL up to `)`.
        let rest = &css[at..];
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        at += ws;
        let rest = &css[at..];
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
        let (value, after) = match quote {
            Some(q) => match rest[1..].find(q) {
                Some(end) => (&rest[1..1 + end], 1 + end + 1),
                None => break,
            },
            None if is_import => continue, // `@import url(…)`: its url( comes next
            None => match rest.find(')') {
                // Whitespace before the `)` stays where it is.
                Some(end) => {
                    let value = rest[..end].trim_end();
                    (value, value.len())
                }
                None => break,
            },
        };
        let new = visit(Role::Requisite, value, base);
        let written = new.as_deref().unwrap_or(value);
        match quote {
            Some(q) if new.is_some() => {
                out.push(q);
                out.push_str(&written.replace(q, if q == '"' { "%22" } else { "%27" }));
                out.push(q);
            }
            Some(q) => {
                out.push(q);
                out.push_str(written);
                out.push(q);
            }
            None if new.is_some() => out.push_str(&written.replace([')', ' ', '\'', '"'], "_")),
            None => out.push_str(written),
        }
        at += after;
    }
    out.push_str(&css[at..]);
    out
}

/// An attribute's value with its character references decoded (`&amp;`,
/// `&quot;`, `&#39;`, `&#x2F;`, …), as a browser reads it.
fn decode_entities(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains('&') {
        return v.into();
    }
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest[1..].find(';').map(|e| e + 1).filter(|e| *e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                n if n.starts_with("#x") || n.starts_with("#X") => u32::from_str_radix(&n[2..], 16)
                    .ok()
                    .and_then(char::from_u32),
                n if n.starts_with('#') => n[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            c.map(|c| (c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// A page (from `page`) with `visit` asked about each URL reference, with
/// what it is for and the base it is relative to (a `<base href>` is
/// honoured and removed).
pub fn walk_html(html: &str, page: &Url, visit: &mut Visit<'_>) -> Result<String, String> {
    let base = RefCell::new(page.clone());
    let style = RefCell::new(String::new());
    let visit = RefCell::new(visit);
    let attr = |el: &mut Element, name: &str, role: Role| {
        if let Some(raw) = el.get_attribute(name) {
            // lol_html gives the value as written, references undecoded.
            let v = decode_entities(&raw);
            let answer = (visit.borrow_mut())(role, &v, &base.borrow());
            if let Some(new) = answer.filter(|new| *new != *v) {
                el.set_attribute(name, &new)?;
            }
        }
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    };
    let mut handlers = vec![
        element!("base[href]", |el| {
            if let Some(href) = el.get_attribute("href")
                && let Ok(b) = page.join(decode_entities(&href).trim())
            {
                *base.borrow_mut() = b;
            }
            el.remove();
            Ok(())
        }),
        element!("img[srcset], source[srcset]", |el| {
            if let Some(v) = el.get_attribute("srcset") {
                let v = decode_entities(&v);
                let new = walk_srcset(&v, &base.borrow(), &mut *visit.borrow_mut());
                el.set_attribute("srcset", &new)?;
            }
            Ok(())
        }),
        element!("[style]", |el| {
            if let Some(v) = el.get_attribute("style") {
                let v = decode_entities(&v);
                let new = walk_css(&v, &base.borrow(), &mut *visit.borrow_mut());
                if new != *v {
                    el.set_attribute("style", &new)?;
                }
            }
            Ok(())
        }),
        element!("meta[http-equiv][content]", |el| {
            // `<meta http-equiv="refresh" content="5; url=next.html">`: a
            // link the browser follows by itself.
            let refresh = el
                .get_attribute("http-equiv")
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("refresh"));
            let content = el.get_attribute("content").unwrap_or_default();
            let content = decode_entities(&content);
            if let Some((delay, target)) = refresh
                .then(|| spinneret_crawl::parse::html::refresh_target(&content))
                .flatten()
            {
                let answer = (visit.borrow_mut())(Role::Link, target, &base.borrow());
                if let Some(new) = answer.filter(|new| new != target) {
                    el.set_attribute("content", &format!("{delay}; url={new}"))?;
                }
            }
            Ok(())
        }),
        text!("style", |t| {
            // A style sheet may come in several chunks: gather them, and
            // write the whole in place of the last.
            style.borrow_mut().push_str(t.as_str());
            if t.last_in_text_node() {
                let whole = std::mem::take(&mut *style.borrow_mut());
                let new = walk_css(&whole, &base.borrow(), &mut *visit.borrow_mut());
                t.replace(&new, ContentType::Html);
            } else {
                t.remove();
            }
            Ok(())
        }),
    ];
    // One handler for the whole table: lol_html compiles each selector
    // for each page it rewrites, and a page is read twice (for its
    // references, then converted), so one `*` costs less than a selector
    // per row.
    let attr = &attr;
    handlers.push(element!("*", move |el| {
        let tag = el.tag_name().to_ascii_lowercase();
        for (_, name, role) in URL_ATTRIBUTES.iter().filter(|(t, _, _)| *t == tag) {
            let role = match tag.as_str() {
                "link" => {
                    let rel = el
                        .get_attribute("rel")
                        .unwrap_or_default()
                        .to_ascii_lowercase();
                    match rel.split_whitespace().any(|r| REQUISITE_RELS.contains(&r)) {
                        true => Role::Requisite,
                        false => *role,
                    }
                }
                _ => *role,
            };
            attr(el, name, role)?;
        }
        Ok(())
    }));
    rewrite_str(
        html,
        RewriteStrSettings {
            element_content_handlers: handlers,
            ..RewriteStrSettings::new()
        },
    )
    .map_err(|e| format!("cannot read the page: {e}"))
}

/// A stylesheet (at `base`, saved at mirror path `at`) with its `url(…)`
/// and `@import "…"` references converted.
pub fn convert_css(css: &str, base: &Url, at: &str, saved: Saved<'_>) -> String {
    walk_css(css, base, &mut |_, v, base| {
        Some(convert_one(v, base, at, saved))
    })
}

/// A page (from `page`, saved at mirror path `at`) with its links converted.
pub fn convert_html(html: &str, page: &Url, at: &str, saved: Saved<'_>) -> Result<String, String> {
    walk_html(html, page, &mut |_, v, base| {
        Some(convert_one(v, base, at, saved))
    })
}

/// Whether a reference to `u` from `from` is one to fetch: http and https,
/// and local files from a local file (never from the web).
fn fetchable(u: &Url, from: &Url) -> bool {
    matches!(u.scheme(), "http" | "https") || (u.scheme() == "file" && from.scheme() == "file")
}

/// The http and https references of a page (and file references of a
/// local file), in order, each once: the links
/// to follow and the requisites to fetch with it (from its stylesheets and
/// `style` attributes too). Fragments are dropped.
pub fn references(html: &str, page: &Url) -> Result<Vec<(Role, Url)>, String> {
    let mut found: Vec<(Role, Url)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    walk_html(html, page, &mut |role, v, base| {
        if role != Role::Other
            && let Ok(mut u) = base.join(v.trim())
            && fetchable(&u, page)
        {
            u.set_fragment(None);
            if seen.insert((role, u.to_string())) {
                found.push((role, u));
            }
        }
        None
    })?;
    Ok(found)
}

/// The http and https references of a stylesheet at `base` (file
/// references too for a local file; all
/// requisites: images, fonts, imported sheets), in order, each once.
pub fn css_references(css: &str, base: &Url) -> Vec<Url> {
    let mut found: Vec<Url> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    walk_css(css, base, &mut |_, v, base| {
        if let Ok(u) = base.join(v.trim())
            && fetchable(&u, base)
            && seen.insert(u.to_string())
        {
            found.push(u);
        }
        None
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn mirror() -> HashMap<String, String> {
        [
            ("https://e.org/", "URLs/e.org/index.html"),
            (
                "https://e.org/docs/guide.html",
                "URLs/e.org/docs/guide.html",
            ),
            ("https://e.org/img/a b.png", "URLs/e.org/img/a_b.png"),
            ("https://e.org/img/a@2x.png", "URLs/e.org/img/a@2x.png"),
            ("https://e.org/style/site.css", "URLs/e.org/style/site.css"),
            (
                "https://e.org/style/fonts.css",
                "URLs/e.org/style/fonts.css",
            ),
            ("https://e.org/fonts/f.woff2", "URLs/e.org/fonts/f.woff2"),
            ("https://cdn.example/lib.js", "URLs/cdn.example/lib.js"),
        ]
        .into_iter()
        .map(|(u, p)| (Url::parse(u).unwrap().to_string(), p.to_string()))
        .collect()
    }

    #[test]
    fn relative_paths_between_mirror_files() {
        assert_eq!(
            relative("URLs/e.org/index.html", "URLs/e.org/docs/guide.html"),
            "docs/guide.html"
        );
        assert_eq!(
            relative("URLs/e.org/docs/guide.html", "URLs/e.org/index.html"),
            "../index.html"
        );
        assert_eq!(
            relative("URLs/e.org/a/b/c.html", "URLs/cdn.example/x y#1.js"),
            "../../../cdn.example/x%20y%231.js"
        );
        assert_eq!(
            relative("URLs/e.org/index.html", "URLs/e.org/index.html"),
            "index.html"
        );
    }

    #[test]
    fn a_pages_links_point_into_the_mirror_or_to_absolute_urls() {
        let m = mirror();
        let saved = |u: &Url| m.get(u.as_str()).cloned();
        let page = Url::parse("https://e.org/docs/guide.html").unwrap();
        let html = r##"<!DOCTYPE html><html><head>
<link rel="stylesheet" href="/style/site.css">
<script src="https://cdn.example/lib.js"></script>
<style>body { background: url('../img/a%20b.png') } @import "/style/fonts.css";</style>
</head><body style="background-image: url(/img/a%20b.png)">
<a href="../">home</a> <a href="guide.html#intro">here</a> <a href="#top">top</a>
<a href="other.html">not saved</a> <a href="mailto:x@e.org">mail</a> <a href="javascript:void(0)">js</a>
<img src="../img/a%20b.png" srcset="../img/a%20b.png 1x, ../img/a@2x.png 2x, /img/c.png 3x" alt="A">
</body></html>"##;
        let out = convert_html(html, &page, "URLs/e.org/docs/guide.html", &saved).unwrap();
        for expected in [
            r#"<link rel="stylesheet" href="../style/site.css">"#,
            r#"<script src="../../cdn.example/lib.js"></script>"#,
            r#"url('../img/a_b.png')"#,
            r#"@import "../style/fonts.css";"#,
            r#"style="background-image: url(../img/a_b.png)""#,
            r#"<a href="../index.html">home</a>"#,
            r##"<a href="guide.html#intro">here</a>"##,
            r##"<a href="#top">top</a>"##,
            r#"<a href="https://e.org/docs/other.html">not saved</a>"#,
            r#"<a href="mailto:x@e.org">mail</a>"#,
            r#"<a href="javascript:void(0)">js</a>"#,
            r#"src="../img/a_b.png" srcset="../img/a_b.png 1x, ../img/a@2x.png 2x, https://e.org/img/c.png 3x""#,
        ] {
            assert!(out.contains(expected), "missing {expected}\nin {out}");
        }
    }

    #[test]
    fn forms_citations_svg_and_refreshes_are_converted_too() {
        let m = mirror();
        let saved = |u: &Url| m.get(u.as_str()).cloned();
        let page = Url::parse("https://e.org/docs/guide.html").unwrap();
        let html = r#"<meta http-equiv="Refresh" content="5; URL='../'"><meta http-equiv="refresh" content="30">
<form action="search"><button formaction="/go">go</button></form><q cite="/why">q</q>
<svg><image href="/img/a@2x.png"/><use href="/sprite.svg#i"/><use xlink:href="/icons.svg#x"/></svg>"#;
        let out = convert_html(html, &page, "URLs/e.org/docs/guide.html", &saved).unwrap();
        for expected in [
            r#"content="5; url=../index.html""#,
            r#"content="30""#,
            r#"<form action="https://e.org/docs/search">"#,
            r#"formaction="https://e.org/go""#,
            r#"<q cite="https://e.org/why">"#,
            r#"<image href="../img/a@2x.png" />"#,
            r##"<use href="https://e.org/sprite.svg#i" />"##,
            r##"<use xlink:href="https://e.org/icons.svg#x" />"##,
        ] {
            assert!(out.contains(expected), "missing {expected}\nin {out}");
        }
        let found: Vec<(Role, String)> = references(html, &page)
            .unwrap()
            .into_iter()
            .map(|(r, u)| (r, u.to_string()))
            .collect();
        assert_eq!(
            found,
            [
                (Role::Link, "https://e.org/".to_string()),
                (Role::Requisite, "https://e.org/img/a@2x.png".to_string()),
                (Role::Requisite, "https://e.org/sprite.svg".to_string()),
                (Role::Requisite, "https://e.org/icons.svg".to_string()),
            ]
        );
    }

    #[test]
    fn a_base_element_is_honoured_and_removed() {
        let m = mirror();
        let saved = |u: &Url| m.get(u.as_str()).cloned();
        let page = Url::parse("https://e.org/docs/guide.html").unwrap();
        let html = r#"<head><base href="https://e.org/style/"></head><a href="site.css">css</a>"#;
        let out = convert_html(html, &page, "URLs/e.org/docs/guide.html", &saved).unwrap();
        assert_eq!(out, r#"<head></head><a href="../style/site.css">css</a>"#);
    }

    #[test]
    fn a_pages_links_and_requisites_are_read_once_each() {
        let page = Url::parse("https://e.org/docs/guide.html").unwrap();
        let html = r##"<head><link rel="stylesheet" href="/s.css"><link rel="canonical" href="/c">
<link rel="icon" href="/favicon.ico"><script src="https://cdn.example/lib.js"></script>
<style>@import "/more.css"; p { background: url(bg.png) }</style></head>
<body><a href="a.html#x">a</a><a href="a.html">again</a><a href="mailto:x@e.org">m</a>
<img src="i.png" srcset="i.png 1x, i2.png 2x"><iframe src="/frame.html"></iframe>
<p style="background: url('/p.png')">p</p></body>"##;
        let found: Vec<(Role, String)> = references(html, &page)
            .unwrap()
            .into_iter()
            .map(|(r, u)| (r, u.to_string()))
            .collect();
        let r = |s: &str| (Role::Requisite, s.to_string());
        let l = |s: &str| (Role::Link, s.to_string());
        assert_eq!(
            found,
            [
                r("https://e.org/s.css"),
                r("https://e.org/favicon.ico"),
                r("https://cdn.example/lib.js"),
                r("https://e.org/more.css"),
                r("https://e.org/docs/bg.png"),
                l("https://e.org/docs/a.html"),
                r("https://e.org/docs/i.png"),
                r("https://e.org/docs/i2.png"),
                r("https://e.org/frame.html"),
                r("https://e.org/p.png"),
            ]
        );
        let css =
            "@import url(a.css); @font-face { src: url('f.woff2') } x { background: url(a.css) }";
        let css_url = Url::parse("https://e.org/s/x.css").unwrap();
        assert_eq!(
            css_references(css, &css_url)
                .iter()
                .map(Url::as_str)
                .collect::<Vec<_>>(),
            ["https://e.org/s/a.css", "https://e.org/s/f.woff2"]
        );
    }

    #[test]
    fn attribute_references_srcset_commas_and_big_sheets_are_read_as_browsers_do() {
        let page = Url::parse("https://e.org/p/").unwrap();
        let html = r#"<a href="/l?a=1&amp;b=2&#38;c=&#x33;">l</a>
<img srcset="https://cdn.example/upload/w_300,h_200/a.jpg 1x, data:image/gif;base64,R0lG,AAAA 2x,b.png,c.png 3x">
<p style="background:url(&quot;x.png&quot;)">p</p>"#;
        let found: Vec<String> = references(html, &page)
            .unwrap()
            .into_iter()
            .map(|(_, u)| u.to_string())
            .collect();
        assert_eq!(
            found,
            [
                "https://e.org/l?a=1&b=2&c=3",
                "https://cdn.example/upload/w_300,h_200/a.jpg",
                // Without whitespace after its comma, `b.png,c.png` is one
                // URL to a browser too.
                "https://e.org/p/b.png,c.png",
                "https://e.org/p/x.png",
            ]
        );
        // A big sheet is read in one pass (this took minutes when each match
        // lower-cased the rest of the sheet again).
        let big = "a{background:url(i.png)}".repeat(200_000);
        assert_eq!(css_references(&big, &page).len(), 1);
        let mut n = 0;
        walk_css(&big, &page, &mut |_, _, _| {
            n += 1;
            None
        });
        assert_eq!(n, 200_000);
    }

    #[test]
    fn a_stylesheets_references_are_converted() {
        let m = mirror();
        let saved = |u: &Url| m.get(u.as_str()).cloned();
        let css_url = Url::parse("https://e.org/style/fonts.css").unwrap();
        let css = "@font-face { src: url(\"../fonts/f.woff2\") format('woff2'), URL( ../fonts/missing.woff ) }\n@import url(site.css);\n.x { background: url(data:image/png;base64,AAAA) }";
        assert_eq!(
            convert_css(css, &css_url, "URLs/e.org/style/fonts.css", &saved),
            "@font-face { src: url(\"../fonts/f.woff2\") format('woff2'), URL( https://e.org/fonts/missing.woff ) }\n@import url(site.css);\n.x { background: url(data:image/png;base64,AAAA) }"
        );
    }
}
