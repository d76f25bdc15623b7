//! Converting the links of saved pages (wget's `-k`): in a page or a
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
use std::path::Path;
use url::Url;

/// The attributes that hold a URL, by element.
const URL_ATTRIBUTES: [(&str, &str); 18] = [
    ("a", "href"),
    ("area", "href"),
    ("link", "href"),
    ("img", "src"),
    ("source", "src"),
    ("script", "src"),
    ("iframe", "src"),
    ("frame", "src"),
    ("embed", "src"),
    ("video", "src"),
    ("video", "poster"),
    ("audio", "src"),
    ("track", "src"),
    ("input", "src"),
    ("object", "data"),
    ("body", "background"),
    ("table", "background"),
    ("td", "background"),
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

/// A `srcset` with each candidate's URL converted and its descriptors kept.
fn convert_srcset(srcset: &str, base: &Url, at: &str, saved: Saved<'_>) -> String {
    srcset
        .split(',')
        .map(|candidate| {
            let candidate = candidate.trim();
            let (url, descriptors) = candidate
                .split_once(char::is_whitespace)
                .unwrap_or((candidate, ""));
            let url = convert_one(url, base, at, saved);
            match descriptors.trim() {
                "" => url,
                d => format!("{url} {d}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A stylesheet (at `base`, saved at mirror path `at`) with its `url(…)`
/// and `@import "…"` references converted.
pub fn convert_css(css: &str, base: &Url, at: &str, saved: Saved<'_>) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    loop {
        let lower = rest.to_ascii_lowercase();
        let next_url = lower.find("url(");
        let next_import = lower.find("@import");
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
        out.push_str(&rest[..open]);
        rest = &rest[open..];
        // Whitespace, then a quoted string, or (in url()) a bare URL up to `)`.
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
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
        let converted = convert_one(value, base, at, saved);
        match quote {
            Some(q) => {
                out.push(q);
                out.push_str(&converted.replace(q, if q == '"' { "%22" } else { "%27" }));
                out.push(q);
            }
            None => out.push_str(&converted.replace([')', ' ', '\'', '"'], "_")),
        }
        rest = &rest[after..];
    }
    out.push_str(rest);
    out
}

/// A page (from `page`, saved at mirror path `at`) with its links converted.
pub fn convert_html(html: &str, page: &Url, at: &str, saved: Saved<'_>) -> Result<String, String> {
    let base = RefCell::new(page.clone());
    let style = RefCell::new(String::new());
    let convert_attr = |el: &mut Element, name: &str| {
        if let Some(v) = el.get_attribute(name) {
            let new = convert_one(&v, &base.borrow(), at, saved);
            if new != v {
                el.set_attribute(name, &new)?;
            }
        }
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    };
    let mut handlers = vec![
        element!("base[href]", |el| {
            if let Some(href) = el.get_attribute("href")
                && let Ok(b) = page.join(href.trim())
            {
                *base.borrow_mut() = b;
            }
            el.remove();
            Ok(())
        }),
        element!("img[srcset], source[srcset]", |el| {
            if let Some(v) = el.get_attribute("srcset") {
                el.set_attribute("srcset", &convert_srcset(&v, &base.borrow(), at, saved))?;
            }
            Ok(())
        }),
        element!("[style]", |el| {
            if let Some(v) = el.get_attribute("style") {
                let new = convert_css(&v, &base.borrow(), at, saved);
                if new != v {
                    el.set_attribute("style", &new)?;
                }
            }
            Ok(())
        }),
        text!("style", |t| {
            // A style sheet may come in several chunks: gather them, and
            // write the converted whole in place of the last.
            style.borrow_mut().push_str(t.as_str());
            if t.last_in_text_node() {
                let whole = std::mem::take(&mut *style.borrow_mut());
                t.replace(
                    &convert_css(&whole, &base.borrow(), at, saved),
                    ContentType::Html,
                );
            } else {
                t.remove();
            }
            Ok(())
        }),
    ];
    for (tag, attr) in URL_ATTRIBUTES {
        let selector = format!("{tag}[{attr}]");
        let convert_attr = &convert_attr;
        handlers.push(element!(selector, move |el| convert_attr(el, attr)));
    }
    rewrite_str(
        html,
        RewriteStrSettings {
            element_content_handlers: handlers,
            ..RewriteStrSettings::new()
        },
    )
    .map_err(|e| format!("cannot rewrite the page: {e}"))
}

/// Whether `path` (mirror-relative) names a file inside the mirror: no
/// absolute path, no `..`.
pub fn inside(path: &str) -> bool {
    !path.is_empty()
        && !Path::new(path).is_absolute()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
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
        assert!(inside("URLs/e.org/index.html"));
        assert!(!inside("../etc/passwd") && !inside("/etc/passwd") && !inside("a//b"));
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
    fn a_base_element_is_honoured_and_removed() {
        let m = mirror();
        let saved = |u: &Url| m.get(u.as_str()).cloned();
        let page = Url::parse("https://e.org/docs/guide.html").unwrap();
        let html = r#"<head><base href="https://e.org/style/"></head><a href="site.css">css</a>"#;
        let out = convert_html(html, &page, "URLs/e.org/docs/guide.html", &saved).unwrap();
        assert_eq!(out, r#"<head></head><a href="../style/site.css">css</a>"#);
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
