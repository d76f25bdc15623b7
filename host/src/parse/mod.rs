//! The parse stage: turns a fetched HTML body into a [`ParsedDocument`]:
//! title, owner, expiry, and every reference resolved to an absolute URL.

pub mod charset;
pub mod html;

use std::hash::BuildHasher;
use url::Url;

/// How a document refers to another resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefKind {
    /// `<a href>`.
    Anchor,
    /// `<area href>`.
    Area,
    /// `<img src>`, `<img srcset>`, `<source srcset>`.
    Image,
    /// `<frame src>`.
    Frame,
    /// `<iframe src>`.
    Iframe,
    /// `<link rel=stylesheet>`.
    Stylesheet,
    /// `<link rel=icon>`.
    Icon,
    /// `<link rel=alternate>`.
    Alternate,
    /// Any other `<link href>`.
    Link,
    /// `<script src>`.
    Script,
    /// `<object data>`.
    Object,
    /// `<embed src>`, `<source src>`.
    Embed,
    /// `<form action>`: recorded, never requested.
    Form,
    /// `<meta http-equiv=refresh>`.
    Refresh,
}

impl RefKind {
    /// Every kind, for parsing stored names.
    pub const ALL: [RefKind; 14] = [
        RefKind::Anchor,
        RefKind::Area,
        RefKind::Image,
        RefKind::Frame,
        RefKind::Iframe,
        RefKind::Stylesheet,
        RefKind::Icon,
        RefKind::Alternate,
        RefKind::Link,
        RefKind::Script,
        RefKind::Object,
        RefKind::Embed,
        RefKind::Form,
        RefKind::Refresh,
    ];

    /// The stable name used in the store and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Anchor => "a",
            RefKind::Area => "area",
            RefKind::Image => "img",
            RefKind::Frame => "frame",
            RefKind::Iframe => "iframe",
            RefKind::Stylesheet => "stylesheet",
            RefKind::Icon => "icon",
            RefKind::Alternate => "alternate",
            RefKind::Link => "link",
            RefKind::Script => "script",
            RefKind::Object => "object",
            RefKind::Embed => "embed",
            RefKind::Form => "form",
            RefKind::Refresh => "refresh",
        }
    }

    /// The kind with this stored name.
    pub fn from_name(s: &str) -> Option<RefKind> {
        RefKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether following this reference leads a reader to another document
    /// (so it may be traversed); inline resources (images, scripts, styles) are always leaves.
    pub fn is_navigational(self) -> bool {
        matches!(
            self,
            RefKind::Anchor
                | RefKind::Area
                | RefKind::Frame
                | RefKind::Iframe
                | RefKind::Alternate
                | RefKind::Refresh
        )
    }
}

/// A reference as written in the document, before resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct RawReference {
    /// The attribute value, trimmed.
    pub href: String,
    /// Where it came from.
    pub kind: RefKind,
    /// Anchor text (or alt/title text), whitespace collapsed.
    pub text: String,
    /// Line in the document.
    pub line: u64,
}

/// A reference resolved against the document's base.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// The absolute, normalised target, or the raw text and why it is not a URL.
    pub target: Result<Url, BadUrl>,
    /// Where it came from.
    pub kind: RefKind,
    /// Anchor text.
    pub text: String,
}

/// A reference that could not be resolved to a URL.
#[derive(Clone, Debug, PartialEq)]
pub struct BadUrl {
    /// What the document said.
    pub raw: String,
    /// Why it is not a URL.
    pub reason: String,
}

/// Everything the crawler keeps of a parsed HTML document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedDocument {
    /// The title.
    pub title: Option<String>,
    /// The Owner (`<meta name=owner>`).
    pub owner: Option<String>,
    /// `<meta http-equiv=expires>` as written.
    pub expires_meta: Option<String>,
    /// Other `<meta http-equiv>` pairs.
    pub http_equiv: Vec<(String, String)>,
    /// The effective base URL when a `<base href>` changed it.
    pub base: Option<Url>,
    /// The character encoding used to decode it.
    pub encoding: &'static str,
    /// Whether bytes were invalid in that encoding.
    pub decode_errors: bool,
    /// Recoverable HTML parse errors.
    pub parse_errors: u32,
    /// Unique references (by target and kind), first anchor text kept, in document order.
    pub references: Vec<Reference>,
}

/// Whether a Content-Type value names HTML.
pub fn is_html(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        let mime = ct.split(';').next().unwrap_or("").trim();
        mime.eq_ignore_ascii_case("text/html") || mime.eq_ignore_ascii_case("application/xhtml+xml")
    })
}

/// Parse an HTML body fetched from `url`.
pub fn parse_html(url: &Url, content_type: Option<&str>, body: &[u8]) -> ParsedDocument {
    let decoded = charset::decode_html(body, content_type);
    let facts = html::extract(&decoded.text);
    let base = facts
        .base
        .as_deref()
        .and_then(|b| url.join(b).ok())
        .filter(|b| b != url);
    let effective = base.as_ref().unwrap_or(url);
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
    let mut references: Vec<Reference> = Vec::with_capacity(facts.references.len());
    for r in facts.references {
        let target = match crate::urls::resolve(effective, &r.href) {
            Ok(u) => Ok(u),
            Err(e) => Err(BadUrl {
                raw: r.href,
                reason: e.to_string(),
            }),
        };
        let reference = Reference {
            target,
            kind: r.kind,
            text: r.text,
        };
        let hash = hasher.hash_one(key(&reference));
        if seen
            .find(hash, |&i| key(&references[i]) == key(&reference))
            .is_none()
        {
            seen.insert_unique(hash, references.len(), |&i| {
                hasher.hash_one(key(&references[i]))
            });
            references.push(reference);
        }
    }
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
        references,
    }
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
