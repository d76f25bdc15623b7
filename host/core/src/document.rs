//! What the parse stage makes of an HTML document: its references, each
//! with its kind and anchor text, and the document's title, owner and
//! expiry. The crawl produces these; the store and the reports read them.

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
    /// The line of the document it is written on, from 1.
    pub line: u64,
    /// The column its value starts at on that line, from 1, in characters
    /// (of its tag's `<` when the value is written with a character
    /// reference); 0 when not known.
    pub column: u32,
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
    /// The line of the document it is on, from 1 (the first place a
    /// reference repeated is written); 0 when not known (a parser plugin's
    /// parse).
    pub line: u32,
    /// The column of that line its value starts at, from 1, in characters;
    /// 0 when not known.
    pub column: u32,
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
    /// Its syntax faults by kind (`missing-quote`, `unclosed-element`,
    /// `no-title`, …), with counts, in a fixed order; empty for clean HTML.
    pub bad_html: Vec<(&'static str, u32)>,
    /// Unique references (by target and kind), first anchor text kept, in document order.
    pub references: Vec<Reference>,
    /// The places in it a fragment can point at (each `id` and `<a name>`);
    /// `None` when they are not known (too many, or a parser plugin's parse).
    pub anchors: Option<Vec<String>>,
    /// The fragments its links point at: (place in `references`, the
    /// fragment as the URL has it, percent-encoded, and the line and column
    /// of the first link to it, from 1; 0 when not known), each pair once. Only
    /// `<a>` and `<area>` links, and not `#top`, text directives (`#:~:`) or
    /// an application's routes (`#/…`, `#!…`).
    pub fragments: Vec<(usize, String, u32, u32)>,
}
