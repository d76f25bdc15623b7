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
//!
//! A saved document keeps no `file:` reference that could show a file of
//! the machine the mirror is opened on: in a page or stylesheet from the
//! web, every reference that resolves to a `file:` URL (in any attribute
//! that loads or links, `srcset`, CSS `url()`, a refresh, an
//! `<iframe srcdoc>`'s page) becomes [`INERT`]; a local file's may keep
//! those to files under the profile's local directory ([`Files`]).

use lol_html::html_content::{ContentType, Element};
use lol_html::{RewriteStrSettings, element, rewrite_str, text};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use spinneret_core::document::RefKind;
use spinneret_core::url_attributes;
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

/// What the mirror does with a reference of `kind` (from the one table of
/// URL attributes, `spinneret_core::url_attributes`): a link to follow, a
/// requisite to fetch with the page, or neither.
fn role_of(kind: RefKind) -> Role {
    match kind {
        RefKind::Anchor | RefKind::Area => Role::Link,
        k if url_attributes::is_requisite(k) => Role::Requisite,
        _ => Role::Other,
    }
}

/// Attributes of any element that may hold a URL to load or to follow,
/// beyond the table of URL attributes (an SVG `<a href>` or `<feImage href>`, a
/// `<th background>`, an old `lowsrc`): converted as references that are
/// not fetched ([`Role::Other`]), so none keeps a `file:` URL.
const MORE_URL_ATTRIBUTES: [&str; 13] = [
    "href",
    "xlink:href",
    "src",
    "data",
    "poster",
    "action",
    "formaction",
    "background",
    "longdesc",
    "lowsrc",
    "dynsrc",
    "manifest",
    "codebase",
];

/// Attributes that hold URLs separated by white space.
const URL_LIST_ATTRIBUTES: [&str; 2] = ["ping", "archive"];

/// SVG presentation attributes that may reference a resource by CSS
/// `url(…)`.
const CSS_URL_ATTRIBUTES: [&str; 9] = [
    "fill",
    "stroke",
    "filter",
    "mask",
    "clip-path",
    "marker-start",
    "marker-mid",
    "marker-end",
    "cursor",
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

/// What a `file:` reference a saved document may not keep becomes: a
/// frame shows nothing, a link leads nowhere, an image is none.
pub const INERT: &str = "about:blank";

/// The `file:` references a saved document may keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Files<'a> {
    /// None: a document from the web, whose `file:` reference would show a
    /// file of whoever opens the mirror.
    None,
    /// Those under this directory (a `file:` URL ending `/`), as written:
    /// a local file's, under the profile's local files' directory.
    Under(&'a str),
}

impl Files<'_> {
    /// What a document from `url` may keep: a local file's the files under
    /// `local_root`, the web's none.
    pub fn of<'r>(url: &Url, local_root: Option<&'r str>) -> Files<'r> {
        match (url.scheme(), local_root) {
            ("file", Some(root)) => Files::Under(root),
            _ => Files::None,
        }
    }

    /// Whether `url` (a `file:` URL) may be kept.
    fn keeps(self, url: &Url) -> bool {
        match self {
            Files::None => false,
            Files::Under(root) => url.as_str().starts_with(root),
        }
    }
}

/// Whether `reference` names a `file:` URL as a browser reads it (ASCII
/// tabs and newlines dropped, case ignored), for one the URL parser
/// refused.
fn names_a_file(reference: &str) -> bool {
    let squeezed: String = reference
        .trim()
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .take(5)
        .collect();
    squeezed.eq_ignore_ascii_case("file:")
}

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
/// [`INERT`] for a `file:` URL that `files` does not keep, or itself when
/// it is no URL to change (`javascript:`, `data:`, a fragment of the same
/// page, empty, a kept `file:` URL).
fn convert_one(
    reference: &str,
    base: &Url,
    at: &str,
    saved: Saved<'_>,
    files: Files<'_>,
) -> String {
    let trimmed = reference.trim();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return reference.to_string();
    }
    let Ok(url) = base.join(trimmed) else {
        return match names_a_file(trimmed) && files == Files::None {
            true => INERT.to_string(),
            false => reference.to_string(),
        };
    };
    if url.scheme() == "file" {
        return match files.keeps(&url) {
            true => reference.to_string(),
            false => INERT.to_string(),
        };
    }
    if !matches!(url.scheme(), "http" | "https") {
        return reference.to_string();
    }
    let fragment = url.fragment().map(str::to_string);
    match saved(&spinneret_core::urls::identity(&url)) {
        Some(path) => {
            let mut local = relative(at, &path);
            if let Some(f) = fragment {
                local.push('#');
                local.push_str(&f);
            }
            local
        }
        None => url.to_string(),
    }
}

/// What a visitor answers for one reference: the value to write in its
/// place, or none to leave it as it is.
type Visit<'a> = dyn FnMut(Role, &str, &Url) -> Option<String> + 'a;

/// A `srcset` with `visit` asked about each candidate's URL (read as the
/// HTML standard reads them) as a `role`; descriptors kept.
fn walk_srcset(srcset: &str, base: &Url, role: Role, visit: &mut Visit<'_>) -> String {
    spinneret_crawl::parse::html::srcset_candidates(srcset)
        .into_iter()
        .map(|(url, descriptors)| {
            let new = visit(role, url, base).unwrap_or_else(|| url.to_string());
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

/// The URL references of `el` (a `tag`) that [`URL_ATTRIBUTES`] does not
/// name, each given to `visit` as [`Role::Other`] (against `base`) and
/// written back as it answers: [`MORE_URL_ATTRIBUTES`], each URL of
/// [`URL_LIST_ATTRIBUTES`], a `<link imagesrcset>`'s, the `url(…)` of
/// [`CSS_URL_ATTRIBUTES`], and those of an `<iframe srcdoc>`'s page.
fn more_url_attributes(
    el: &mut Element,
    tag: &str,
    base: &Url,
    visit: &mut Visit<'_>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if tag == "base" {
        return Ok(());
    }
    let names: Vec<String> = el.attributes().iter().map(|a| a.name()).collect();
    for name in names {
        let Some(raw) = el.get_attribute(&name) else {
            continue;
        };
        let v = decode_entities(&raw);
        let new = if name == "imagesrcset" {
            Some(walk_srcset(&v, base, Role::Other, visit))
        } else if name == "srcdoc" && tag == "iframe" {
            // A page written in the attribute, read against this one's base
            // (as a browser reads it) with the same visitor; written back
            // as the attribute's text (`&` escaped here, `"` by lol_html),
            // or left out when it cannot be read.
            match walk_html(&v, base, visit) {
                Ok(page) => Some(page.replace('&', "&amp;")).filter(|_| page != *v),
                Err(_) => {
                    el.remove_attribute("srcdoc");
                    None
                }
            }
        } else if MORE_URL_ATTRIBUTES.contains(&name.as_str()) {
            let listed = url_attributes::of_element(tag).any(|(n, _)| n == name);
            match listed {
                true => None,
                false => visit(Role::Other, &v, base),
            }
        } else if URL_LIST_ATTRIBUTES.contains(&name.as_str()) {
            let urls: Vec<String> = v
                .split_whitespace()
                .map(|u| visit(Role::Other, u, base).unwrap_or_else(|| u.to_string()))
                .collect();
            Some(urls.join(" "))
        } else if CSS_URL_ATTRIBUTES.contains(&name.as_str())
            && v.to_ascii_lowercase().contains("url(")
        {
            Some(walk_css(&v, base, &mut |_, u, b| visit(Role::Other, u, b)))
        } else {
            None
        };
        if let Some(new) = new.filter(|new| *new != *v) {
            el.set_attribute(&name, &new)?;
        }
    }
    Ok(())
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
            if !url_attributes::holds_a_url(name, &v) {
                return Ok(());
            }
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
                let new = walk_srcset(
                    &v,
                    &base.borrow(),
                    Role::Requisite,
                    &mut *visit.borrow_mut(),
                );
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
    let (attr, base, visit) = (&attr, &base, &visit);
    handlers.push(element!("*", move |el| {
        let tag = el.tag_name().to_ascii_lowercase();
        for (name, kind) in url_attributes::of_element(&tag) {
            let role = match tag.as_str() {
                "link" => {
                    let rel = el.get_attribute("rel").unwrap_or_default();
                    match url_attributes::link_is_requisite(&rel) {
                        true => Role::Requisite,
                        false => Role::Other,
                    }
                }
                _ => role_of(kind),
            };
            attr(el, name, role)?;
        }
        more_url_attributes(el, &tag, &base.borrow(), &mut *visit.borrow_mut())?;
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
/// and `@import "…"` references converted, keeping the `file:` references
/// `files` allows.
pub fn convert_css(css: &str, base: &Url, at: &str, saved: Saved<'_>, files: Files<'_>) -> String {
    walk_css(css, base, &mut |_, v, base| {
        Some(convert_one(v, base, at, saved, files))
    })
}

/// A page (from `page`, saved at mirror path `at`) with its links
/// converted, keeping the `file:` references `files` allows.
pub fn convert_html(
    html: &str,
    page: &Url,
    at: &str,
    saved: Saved<'_>,
    files: Files<'_>,
) -> Result<String, String> {
    walk_html(html, page, &mut |_, v, base| {
        Some(convert_one(v, base, at, saved, files))
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
            && let Ok(u) = spinneret_core::urls::resolve(base, v)
            && fetchable(&u, page)
            && seen.insert((role, u.to_string()))
        {
            found.push((role, u));
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
        let out = convert_html(
            html,
            &page,
            "URLs/e.org/docs/guide.html",
            &saved,
            Files::None,
        )
        .unwrap();
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
        let out = convert_html(
            html,
            &page,
            "URLs/e.org/docs/guide.html",
            &saved,
            Files::None,
        )
        .unwrap();
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
        let out = convert_html(
            html,
            &page,
            "URLs/e.org/docs/guide.html",
            &saved,
            Files::None,
        )
        .unwrap();
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
            convert_css(
                css,
                &css_url,
                "URLs/e.org/style/fonts.css",
                &saved,
                Files::None
            ),
            "@font-face { src: url(\"../fonts/f.woff2\") format('woff2'), URL( https://e.org/fonts/missing.woff ) }\n@import url(site.css);\n.x { background: url(data:image/png;base64,AAAA) }"
        );
    }

    /// A page from the web keeps no `file:` reference, however it is
    /// written and wherever it sits (a frame, an object, a link, a form, a
    /// refresh, a srcset, CSS, an SVG link, a `<base>` that makes relative
    /// references local, an `<iframe srcdoc>`'s page); a local file keeps
    /// those under its directory.
    #[test]
    fn a_page_from_the_web_keeps_no_file_reference() {
        let m = mirror();
        let saved = |u: &Url| m.get(u.as_str()).cloned();
        let page = Url::parse("https://e.org/docs/guide.html").unwrap();
        let at = "URLs/e.org/docs/guide.html";
        let html = r##"<iframe src="file:///etc/os-release"></iframe><frame src=" FILE:/etc/passwd">
<object data="file:///etc/hosts"></object><embed src="fi&#x09;le:///etc/hosts"><video poster="file:///p.png" src="file:///v.webm"></video>
<a href="file:///home/me/secret.txt">a</a><form action="file:///tmp/"></form><button formaction="file:///b">b</button>
<meta http-equiv="refresh" content="0; url=file:///etc/os-release">
<img src="/img/a%20b.png" srcset="file:///etc/a.png 1x, /img/a@2x.png 2x"><link rel="preload" as="image" imagesrcset="file:///i.png 2x">
<div style="background: url(file:///etc/bg.png)"></div><style>@import "file:///etc/x.css"; p { background: url('file:///y.png') }</style>
<svg><a href="file:///s"><text>s</text></a><a xlink:href="file:///x">x</a><rect fill="url(file:///f.svg#g)"/></svg>
<table><tr><th background="file:///t.png">t</th></tr></table><a ping="file:///ping https://e.org/p">p</a>
<iframe srcdoc="<iframe src=&quot;file:///etc/os-release&quot;></iframe><a href='../'>up</a> &amp;lt;"></iframe>
<a href="mailto:x@e.org">m</a><a href="#top">top</a><img src="data:image/gif;base64,R0lG">"##;
        let out = convert_html(html, &page, at, &saved, Files::None).unwrap();
        assert!(!out.to_ascii_lowercase().contains("file:"), "{out}");
        for expected in [
            r#"<iframe src="about:blank"></iframe><frame src="about:blank">"#,
            r#"<object data="about:blank"></object><embed src="about:blank"><video poster="about:blank" src="about:blank"></video>"#,
            r#"<a href="about:blank">a</a><form action="about:blank"></form><button formaction="about:blank">b</button>"#,
            r#"content="0; url=about:blank""#,
            r#"srcset="about:blank 1x, ../img/a@2x.png 2x""#,
            r#"imagesrcset="about:blank 2x""#,
            r#"style="background: url(about:blank)""#,
            r#"@import "about:blank"; p { background: url('about:blank') }"#,
            r#"<a href="about:blank"><text>s</text></a><a xlink:href="about:blank">x</a><rect fill="url(about:blank)" />"#,
            r#"<th background="about:blank">"#,
            r#"ping="about:blank https://e.org/p""#,
            r#"srcdoc="<iframe src=&quot;about:blank&quot;></iframe><a href=&quot;../index.html&quot;>up</a> &amp;lt;""#,
            r##"<a href="mailto:x@e.org">m</a><a href="#top">top</a><img src="data:image/gif;base64,R0lG">"##,
        ] {
            assert!(out.contains(expected), "missing {expected}\nin {out}");
        }
        // A base that makes relative references local files.
        let based = r#"<base href="file:///etc/"><iframe src="os-release"></iframe><img src="../../../../etc/shadow">"#;
        assert_eq!(
            convert_html(based, &page, at, &saved, Files::None).unwrap(),
            r#"<iframe src="about:blank"></iframe><img src="about:blank">"#
        );
        let css = "a { background: url(file:///etc/a.png) } @import 'file:///b.css';";
        assert_eq!(
            convert_css(css, &page, at, &saved, Files::None),
            "a { background: url(about:blank) } @import 'about:blank';"
        );

        // A local file keeps its own directory's files, and only those.
        let local = Url::parse("file:///home/me/site/index.html").unwrap();
        let html = r#"<img src="pics/a.png"><img src="file:///home/me/site/b.png"><img src="../secret.txt"><iframe src="file:///etc/os-release"></iframe><a href="https://e.org/">e</a>"#;
        let files = Files::of(&local, Some("file:///home/me/site/"));
        assert_eq!(files, Files::Under("file:///home/me/site/"));
        assert_eq!(
            convert_html(
                html,
                &local,
                "URLs/local-files/home/me/site/index.html",
                &saved,
                files
            )
            .unwrap(),
            r#"<img src="pics/a.png"><img src="file:///home/me/site/b.png"><img src="about:blank"><iframe src="about:blank"></iframe><a href="../../../../e.org/index.html">e</a>"#
        );
        // A web page is the web's, whatever root the run has.
        assert_eq!(Files::of(&page, Some("file:///home/me/site/")), Files::None);
    }
}
