//! HTML extraction with the html5ever tokenizer: title, metadata and every
//! reference with its kind and anchor text.
//!
//! Only the tokenizer runs (no tree is built), which keeps parsing fast and
//! its memory bounded by the document; the sink switches the tokenizer into
//! raw-text states for `script`, `style` and friends as a tree builder would.

use super::bad_html::BadHtml;
use super::position::{self, Attribute};
// The URLs inside an attribute's value are read in `attribute_urls`, which
// `position` uses too; they stay callable here, where the mirror's link
// conversion calls them.
pub use super::attribute_urls::{refresh_target, srcset_candidates, srcset_urls};
use super::{RawReference, RefKind};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use spinneret_core::url_attributes;
use std::cell::RefCell;
use std::rc::Rc;

/// The most characters of anchor text kept per reference (an archive's
/// imported references are held to it too).
pub const MAX_ANCHOR_TEXT: usize = 256;
/// The most characters of a title kept (and of an imported one).
pub const MAX_TITLE: usize = 512;
/// The most bytes of `id` and `<a name>` values kept per document, all
/// together: a document with more has its anchors unknown (no fragment of
/// it is checked) rather than a partial list that would call good ones
/// broken.
const MAX_ANCHOR_BYTES: usize = 256 * 1024;

/// What the tokenizer pass found in one HTML document.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct HtmlFacts {
    /// The `<title>` text, whitespace collapsed.
    pub title: Option<String>,
    /// `<meta name="owner" content>`.
    pub owner: Option<String>,
    /// Every `<meta http-equiv>` pair, names lower-cased (includes `expires`, `refresh`).
    pub http_equiv: Vec<(String, String)>,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// References in document order.
    pub references: Vec<RawReference>,
    /// Recoverable parse errors the tokenizer reported.
    pub parse_errors: u32,
    /// The syntax faults found, by kind ([`super::bad_html::KINDS`]), with
    /// counts; `no-title` is added once the title is known.
    pub bad_html: Vec<(&'static str, u32)>,
    /// The places a fragment can point at: every `id`, and every `<a
    /// name>`, in document order (duplicates kept); `None` when there were
    /// more than the bound (see [`MAX_ANCHOR_BYTES`]).
    pub anchors: Option<Vec<String>>,
}

#[derive(Default)]
struct State {
    facts: HtmlFacts,
    /// Index into `references` of the `<a>`/`<area>` whose text is being collected.
    open_anchor: Option<usize>,
    /// Images inside a link: (image, link) indexes into `references`. An
    /// image takes its link's anchor text (seed 001, section 3.2.1).
    images_in_links: Vec<(usize, usize)>,
    in_title: bool,
    title: String,
    bad: BadHtml,
    /// Bytes of anchors kept so far.
    anchor_bytes: usize,
    /// Where the markup token read last (a tag, a comment, a doctype) ends
    /// in the text: the next start tag begins at the first `<` and letter
    /// from there (text between tokens has none: a `<` and a letter always
    /// opens a tag, and raw text ends with an end tag).
    markup_end: usize,
    /// The source of the start tag being read (byte offsets), or
    /// [`position::UNKNOWN_TAG`].
    tag: position::TagSpan,
    /// The sources of the start tags with references, in order.
    tags: Vec<position::TagSpan>,
    /// Where each of `facts.references` is written: its tag (an index into
    /// `tags`) and the attribute its value is in.
    sources: Vec<position::Source>,
}

struct Sink<'t> {
    state: RefCell<State>,
    /// The tokenizer's input: what is left of it tells where a tag ends.
    input: Rc<BufferQueue>,
    /// The text's length in bytes.
    total: usize,
    /// The text itself, where a start tag's source is looked for.
    text: &'t str,
}

fn attr<'a>(tag: &'a Tag, name: &str) -> Option<&'a str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| a.value.as_ref())
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to its first `max` characters.
pub fn truncate_chars(mut s: String, max: usize) -> String {
    if let Some((i, _)) = s.char_indices().nth(max) {
        s.truncate(i);
    }
    s
}

impl State {
    /// Keep a reference to `href`, the value (or a URL in the value) of the
    /// start tag's attribute `attribute`.
    fn push(
        &mut self,
        href: &str,
        attribute: Attribute,
        kind: RefKind,
        text: String,
        line: u64,
    ) -> usize {
        self.facts.references.push(RawReference {
            href: href.trim().to_string(),
            kind,
            text,
            line,
            column: 0,
        });
        // The tag's first reference keeps its source (no two tags have
        // one source; the references of tags whose source is not known
        // have none to tell apart).
        if self.tags.last() != Some(&self.tag) {
            self.tags.push(self.tag);
        }
        self.sources.push(position::Source {
            tag: (self.tags.len() - 1) as u32,
            attribute,
        });
        self.facts.references.len() - 1
    }

    /// Keep `value` as a place fragments may point at (an `id`, an `<a name>`).
    fn anchor(&mut self, value: &str) {
        let Some(anchors) = self.facts.anchors.as_mut() else {
            return;
        };
        self.anchor_bytes += value.len();
        if self.anchor_bytes > MAX_ANCHOR_BYTES {
            self.facts.anchors = None;
        } else if !value.is_empty() {
            anchors.push(value.to_string());
        }
    }

    /// A start tag: the anchors and references it holds, and the state
    /// the tokenizer reads what follows it in (raw text after `<script>`,
    /// `<style>`, `<title>`…).
    fn start_tag(&mut self, tag: &Tag, line: u64) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        if !tag.self_closing {
            self.bad.start(name);
        }
        self.tag_anchors(tag);
        match name {
            "a" | "area" => self.hyperlink(tag, line),
            "img" => self.image(tag, line),
            "source" => self.source(tag, line),
            "frame" | "iframe" => self.frame(tag, line),
            "link" => self.link(tag, line),
            "script" => {
                if let Some(src) = attr(tag, "src") {
                    self.push(src, Attribute::Src, RefKind::Script, String::new(), line);
                }
                if !tag.self_closing {
                    return TokenSinkResult::RawData(RawKind::ScriptData);
                }
            }
            "object" => {
                if let Some(data) = attr(tag, "data") {
                    self.push(data, Attribute::Data, RefKind::Object, String::new(), line);
                }
            }
            "embed" => {
                if let Some(src) = attr(tag, "src") {
                    self.push(src, Attribute::Src, RefKind::Embed, String::new(), line);
                }
            }
            "form" => {
                if let Some(action) = attr(tag, "action") {
                    self.push(
                        action,
                        Attribute::Action,
                        RefKind::Form,
                        String::new(),
                        line,
                    );
                }
            }
            "base" if self.facts.base.is_none() => {
                self.facts.base = attr(tag, "href").map(|h| h.trim().to_string());
            }
            "meta" => self.meta(tag, line),
            "title" => {
                self.in_title = true;
                return TokenSinkResult::RawData(RawKind::Rcdata);
            }
            "textarea" => return TokenSinkResult::RawData(RawKind::Rcdata),
            "style" | "xmp" | "noembed" | "noframes" => {
                return TokenSinkResult::RawData(RawKind::Rawtext);
            }
            "plaintext" => return TokenSinkResult::Plaintext,
            // The table's other elements (`<video poster>`, `<td
            // background>`, `<blockquote cite>`…): each of their URL
            // attributes, of the kind the table says. The elements above
            // read all their rows themselves, with their texts.
            _ => {
                for (name, kind) in url_attributes::of_element(name) {
                    if let (Some(value), Some(attribute)) =
                        (attr(tag, name), Attribute::named(name))
                        && url_attributes::holds_a_url(name, value)
                    {
                        self.push(value, attribute, kind, String::new(), line);
                    }
                }
            }
        }
        TokenSinkResult::Continue
    }

    /// The places a fragment can point at in a start tag: its `id`, and an
    /// `<a>`'s `name`.
    fn tag_anchors(&mut self, tag: &Tag) {
        if let Some(id) = attr(tag, "id") {
            self.anchor(id);
        }
        if &*tag.name == "a"
            && let Some(n) = attr(tag, "name")
        {
            self.anchor(n);
        }
    }

    /// `<a href>` or `<area href>`; an `<area>`'s text is its `alt`, an
    /// `<a>`'s the text up to its end tag (unless it closes itself).
    fn hyperlink(&mut self, tag: &Tag, line: u64) {
        let Some(href) = attr(tag, "href") else {
            return;
        };
        let is_a = &*tag.name == "a";
        let kind = if is_a { RefKind::Anchor } else { RefKind::Area };
        let text = attr(tag, "alt").map(collapse_ws).unwrap_or_default();
        let i = self.push(href, Attribute::Href, kind, text, line);
        if is_a && !tag.self_closing {
            self.open_anchor = Some(i);
        }
    }

    /// `<img src srcset>`, its `alt` as the text; inside a link, the image
    /// is noted as the link's and lends the link its alt text.
    fn image(&mut self, tag: &Tag, line: u64) {
        let alt = attr(tag, "alt").map(collapse_ws).unwrap_or_default();
        let first = self.facts.references.len();
        if let Some(src) = attr(tag, "src") {
            self.push(src, Attribute::Src, RefKind::Image, alt.clone(), line);
        }
        if let Some(srcset) = attr(tag, "srcset") {
            for u in srcset_urls(srcset) {
                self.push(u, Attribute::Srcset, RefKind::Image, alt.clone(), line);
            }
        }
        if let Some(link) = self.open_anchor {
            let images = first..self.facts.references.len();
            self.images_in_links.extend(images.map(|i| (i, link)));
        }
        // An image inside a link lends its alt text to the link.
        if let Some(i) = self.open_anchor {
            let r = &mut self.facts.references[i];
            if !alt.is_empty() && r.text.len() < MAX_ANCHOR_TEXT {
                if !r.text.is_empty() {
                    r.text.push(' ');
                }
                r.text.push_str(&alt);
            }
        }
    }

    /// `<source src srcset>` (of `<video>`, `<audio>` or `<picture>`).
    fn source(&mut self, tag: &Tag, line: u64) {
        if let Some(src) = attr(tag, "src") {
            self.push(src, Attribute::Src, RefKind::Embed, String::new(), line);
        }
        if let Some(srcset) = attr(tag, "srcset") {
            for u in srcset_urls(srcset) {
                self.push(u, Attribute::Srcset, RefKind::Image, String::new(), line);
            }
        }
    }

    /// `<frame src>` or `<iframe src>`, its `title` as the text.
    fn frame(&mut self, tag: &Tag, line: u64) {
        if let Some(src) = attr(tag, "src") {
            let kind = if &*tag.name == "frame" {
                RefKind::Frame
            } else {
                RefKind::Iframe
            };
            let text = attr(tag, "title").map(collapse_ws).unwrap_or_default();
            self.push(src, Attribute::Src, kind, text, line);
        }
    }

    /// `<link href>`, of the kind its `rel` says, its `title` as the text.
    fn link(&mut self, tag: &Tag, line: u64) {
        if let Some(href) = attr(tag, "href") {
            let kind = url_attributes::link_kind(attr(tag, "rel").unwrap_or(""));
            let text = attr(tag, "title").map(collapse_ws).unwrap_or_default();
            self.push(href, Attribute::Href, kind, text, line);
        }
    }

    /// `<meta>` in the forms authors write it: `http-equiv="X" content`,
    /// `name="Owner" content` (and `name="Expires"`), and MOMspider's own
    /// HTML+ form `<META HEADER NAME="Owner" VALUE="…">` (seed 000,
    /// section 6), where `header` makes the name an HTTP header.
    fn meta(&mut self, tag: &Tag, line: u64) {
        let (content, content_attribute) = match attr(tag, "content") {
            Some(c) => (c, Attribute::Content),
            None => (attr(tag, "value").unwrap_or(""), Attribute::Value),
        };
        let content = content.trim();
        let name = attr(tag, "name").map(|n| n.trim().to_ascii_lowercase());
        let header = match attr(tag, "http-equiv") {
            Some(equiv) => Some(equiv.trim().to_ascii_lowercase()),
            None if attr(tag, "header").is_some() => name.clone(),
            None if name.as_deref() == Some("expires") => name.clone(),
            None => None,
        };
        if (name.as_deref() == Some("owner") || header.as_deref() == Some("owner"))
            && self.facts.owner.is_none()
            && !content.is_empty()
        {
            self.facts.owner = Some(collapse_ws(content));
        }
        if let Some(header) = header {
            if header == "refresh"
                && let Some((_, target)) = refresh_target(content)
            {
                self.push(
                    target,
                    content_attribute,
                    RefKind::Refresh,
                    String::new(),
                    line,
                );
            }
            self.facts.http_equiv.push((header, content.to_string()));
        }
    }

    fn end_tag(&mut self, tag: &Tag) {
        self.bad.end(&tag.name);
        match &*tag.name {
            "a" => self.open_anchor = None,
            "title" if self.in_title => {
                self.in_title = false;
                if self.facts.title.is_none() {
                    let t = collapse_ws(&self.title);
                    self.facts.title = Some(truncate_chars(t, MAX_TITLE));
                }
                self.title.clear();
            }
            _ => {}
        }
    }

    fn text(&mut self, s: &str) {
        if self.in_title {
            if self.title.len() < MAX_TITLE * 4 {
                self.title.push_str(s);
            }
            return;
        }
        if let Some(i) = self.open_anchor {
            let r = &mut self.facts.references[i];
            if r.text.len() < MAX_ANCHOR_TEXT * 4 {
                r.text.push_str(s);
            }
        }
    }
}

impl TokenSink for Sink<'_> {
    type Handle = ();

    fn process_token(&self, token: Token, line: u64) -> TokenSinkResult<()> {
        let mut st = self.state.borrow_mut();
        // A tag, comment or doctype has just been read up to its `>`: it
        // ends where the unread rest of the one input buffer begins.
        let read = || {
            let rest = self.input.peek_front_chunk_mut().map_or(0, |b| b.len());
            self.total - rest.min(self.total)
        };
        match token {
            Token::TagToken(tag) => match tag.kind {
                TagKind::StartTag => {
                    let end = read();
                    st.tag = position::TagSpan {
                        start: position::tag_start(self.text, st.markup_end, end),
                        end,
                    };
                    st.markup_end = end;
                    return st.start_tag(&tag, line);
                }
                TagKind::EndTag => {
                    st.markup_end = read();
                    st.end_tag(&tag);
                }
            },
            Token::CommentToken(_) | Token::DoctypeToken(_) => st.markup_end = read(),
            Token::CharacterTokens(t) => st.text(&t),
            Token::ParseError(message) => {
                st.facts.parse_errors += 1;
                st.bad.tokenizer_error(&message);
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// Tokenize `text` and collect the facts.
pub fn extract(text: &str) -> HtmlFacts {
    let input = Rc::new(BufferQueue::default());
    input.push_back(StrTendril::from_slice(text));
    let sink = Sink {
        state: RefCell::new(State {
            facts: HtmlFacts {
                anchors: Some(Vec::new()),
                ..HtmlFacts::default()
            },
            tag: position::UNKNOWN_TAG,
            ..State::default()
        }),
        input: Rc::clone(&input),
        total: text.len(),
        text,
    };
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let _ = tok.feed(&input);
    tok.end();
    let mut st = tok.sink.state.into_inner();
    // Each reference's line and column, from its tag's source; where that
    // is not known, the tokenizer's line stands.
    let places = position::places(text, &st.tags, &st.sources);
    for (r, place) in st.facts.references.iter_mut().zip(places) {
        if let Some((line, column)) = place {
            r.line = line;
            r.column = column;
        }
    }
    if st.in_title && st.facts.title.is_none() {
        st.facts.title = Some(truncate_chars(collapse_ws(&st.title), MAX_TITLE));
    }
    for r in &mut st.facts.references {
        if !r.text.is_empty() {
            r.text = truncate_chars(collapse_ws(&r.text), MAX_ANCHOR_TEXT);
        }
    }
    for &(image, link) in &st.images_in_links {
        let text = &st.facts.references[link].text;
        if !text.is_empty() {
            st.facts.references[image].text = text.clone();
        }
    }
    let bad = std::mem::take(&mut st.bad);
    st.facts.bad_html = bad.finish(st.facts.title.as_deref());
    st.facts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(f: &HtmlFacts) -> Vec<(&str, RefKind, &str)> {
        f.references
            .iter()
            .map(|r| (r.href.as_str(), r.kind, r.text.as_str()))
            .collect()
    }

    /// The parse reads every row of the one table of URL attributes (the
    /// mirror's conversion reads the same table), each of the table's kind.
    #[test]
    fn every_url_attribute_of_the_table_is_a_reference_of_its_kind() {
        let page: String = url_attributes::URL_ATTRIBUTES
            .iter()
            .enumerate()
            .map(|(i, (tag, attribute, _))| {
                format!("<{tag} {attribute}=\"/u{i}\" rel=\"next\"></{tag}>")
            })
            .collect();
        let f = extract(&page);
        let found: Vec<(String, RefKind)> = f
            .references
            .iter()
            .map(|r| (r.href.clone(), r.kind))
            .collect();
        let expected: Vec<(String, RefKind)> = url_attributes::URL_ATTRIBUTES
            .iter()
            .enumerate()
            .map(|(i, (_, _, kind))| (format!("/u{i}"), *kind))
            .collect();
        assert_eq!(found, expected);
        // Each is placed on its attribute's value (one line: the column
        // is the value's offset, from 1).
        for (r, (i, (tag, attribute, _))) in f
            .references
            .iter()
            .zip(url_attributes::URL_ATTRIBUTES.iter().enumerate())
        {
            let written = format!("<{tag} {attribute}=\"/u{i}\"");
            let at = page.find(&written).unwrap() + written.len() - format!("/u{i}\"").len();
            assert_eq!(r.column as usize, at + 1, "{tag} {attribute}");
        }
    }

    #[test]
    fn title_meta_and_links() {
        let f = extract(
            r##"<!DOCTYPE html><html><head><title> The  Home
            Page </title><meta name="Owner" content="RTF"><meta http-equiv="Expires" content="Fri, 01 Apr 2033 00:00:00 GMT">
            <base href="http://a.example/docs/"><link rel="stylesheet" href="s.css"><link rel="icon" href="/f.ico">
            <script src="app.js">var a = "<a href='nope.html'>";</script><style>a{}</style></head>
            <body><a href="one.html">First <b>link</b></a> <a href="#top">top</a>
            <a href="two.html"><img src="i.png" alt="Second" srcset="i2.png 2x, i3.png 3x"></a>
            <map><area href="map.html" alt="Region"></map><iframe src="f.html"></iframe><frame src="fr.html">
            <form action="/search"></form><object data="o.swf"></object><embed src="e.svg">
            <a href="mailto:x@a.example">mail</a></body></html>"##,
        );
        assert_eq!(f.title.as_deref(), Some("The Home Page"));
        assert_eq!(f.owner.as_deref(), Some("RTF"));
        assert_eq!(f.base.as_deref(), Some("http://a.example/docs/"));
        assert_eq!(
            f.http_equiv,
            vec![(
                "expires".to_string(),
                "Fri, 01 Apr 2033 00:00:00 GMT".to_string()
            )]
        );
        assert_eq!(
            kinds(&f),
            vec![
                ("s.css", RefKind::Stylesheet, ""),
                ("/f.ico", RefKind::Icon, ""),
                ("app.js", RefKind::Script, ""),
                ("one.html", RefKind::Anchor, "First link"),
                ("#top", RefKind::Anchor, "top"),
                ("two.html", RefKind::Anchor, "Second"),
                ("i.png", RefKind::Image, "Second"),
                ("i2.png", RefKind::Image, "Second"),
                ("i3.png", RefKind::Image, "Second"),
                ("map.html", RefKind::Area, "Region"),
                ("f.html", RefKind::Iframe, ""),
                ("fr.html", RefKind::Frame, ""),
                ("/search", RefKind::Form, ""),
                ("o.swf", RefKind::Object, ""),
                ("e.svg", RefKind::Embed, ""),
                ("mailto:x@a.example", RefKind::Anchor, "mail"),
            ]
        );
    }

    #[test]
    fn the_seeds_meta_header_form_gives_owner_and_expires() {
        let f = extract(
            r#"<head><META HEADER NAME="Owner" VALUE="AnyOwnerAlias">
            <META header name="Expires" value="Fri, 01 Apr 1994 00:00:00 GMT"></head>"#,
        );
        assert_eq!(f.owner.as_deref(), Some("AnyOwnerAlias"));
        assert_eq!(
            f.http_equiv,
            vec![
                ("owner".to_string(), "AnyOwnerAlias".to_string()),
                (
                    "expires".to_string(),
                    "Fri, 01 Apr 1994 00:00:00 GMT".to_string()
                )
            ]
        );
        let modern = extract(
            r#"<meta name="owner" content="RTF"><meta name="expires" content="Fri, 01 Apr 2033 00:00:00 GMT">"#,
        );
        assert_eq!(modern.owner.as_deref(), Some("RTF"));
        assert_eq!(
            modern.http_equiv,
            vec![(
                "expires".to_string(),
                "Fri, 01 Apr 2033 00:00:00 GMT".to_string()
            )]
        );
    }

    #[test]
    fn the_http_equiv_meta_form_gives_owner_and_expires() {
        let equiv = extract(
            r#"<meta http-equiv="Owner" content="Ops"><meta HTTP-EQUIV="Expires" content="Fri, 01 Apr 2033 00:00:00 GMT">"#,
        );
        assert_eq!(equiv.owner.as_deref(), Some("Ops"));
        assert_eq!(
            equiv.http_equiv,
            vec![
                ("owner".to_string(), "Ops".to_string()),
                (
                    "expires".to_string(),
                    "Fri, 01 Apr 2033 00:00:00 GMT".to_string()
                )
            ]
        );
    }

    #[test]
    fn meta_refresh_is_a_reference() {
        let f = extract(r#"<meta http-equiv="refresh" content="0; URL='/moved/here.html'">"#);
        assert_eq!(kinds(&f), vec![("/moved/here.html", RefKind::Refresh, "")]);
        assert_eq!(refresh_target("5"), None);
        assert_eq!(refresh_target("3;url=next.html"), Some(("3", "next.html")));
        assert_eq!(refresh_target("0;url=a b"), Some(("0", "a b")));
        assert_eq!(refresh_target("1, x.html"), Some(("1", "x.html")));
        assert_eq!(refresh_target("url=x.html"), None);
        assert_eq!(
            refresh_target("0; urls/next.html"),
            Some(("0", "urls/next.html"))
        );
        assert_eq!(
            refresh_target("0; URL-list.html"),
            Some(("0", "URL-list.html"))
        );
    }

    #[test]
    fn srcset_candidates() {
        assert_eq!(srcset_urls("a.png 1x, b.png 2x"), vec!["a.png", "b.png"]);
        assert_eq!(srcset_urls("a.png 1x,b.png 2x"), vec!["a.png", "b.png"]);
        // Per the HTML standard a comma inside a URL does not split it.
        assert_eq!(srcset_urls("a.png,b.png 2x"), vec!["a.png,b.png"]);
        assert_eq!(
            srcset_urls(" a.png 100w , b.png 200w "),
            vec!["a.png", "b.png"]
        );
    }

    #[test]
    fn bad_html_counts_errors_and_still_finds_links() {
        let f = extract("<html><body><a href=ok.html>ok</a><p <<a href='x.html'>x</b></body>");
        assert!(f.parse_errors > 0);
        assert!(f.references.iter().any(|r| r.href == "ok.html"));
    }

    #[test]
    fn an_image_in_a_link_takes_the_links_anchor_text() {
        // The seed's own example (section 3.2.1).
        let f =
            extract(r#"<a href="http://mach/home.html"><img src="photo.html">McBryan's photo</a>"#);
        assert_eq!(
            kinds(&f),
            vec![
                ("http://mach/home.html", RefKind::Anchor, "McBryan's photo"),
                ("photo.html", RefKind::Image, "McBryan's photo"),
            ]
        );
        let alone = extract(r#"<p><img src="logo.png" alt="Logo"> text</p>"#);
        assert_eq!(kinds(&alone), vec![("logo.png", RefKind::Image, "Logo")]);
    }

    #[test]
    fn the_worms_syntax_errors_are_named_and_counted() {
        let f = extract(
            "<html><head></head><body><a href=\"x.html>X</a> and <a href=\"y.html\">Y</a>\n\
             <b>bold <i>both</b></i> <div><img src=a.png <p>end",
        );
        assert_eq!(
            f.bad_html,
            vec![
                // The quote left open makes two errors: the value runs on
                // to the next quote, and what follows it is misplaced.
                ("missing-quote", 2),
                ("missing-gt", 1),
                ("unclosed-element", 2),
                ("stray-end-tag", 1),
                ("no-title", 1),
            ]
        );
        let clean = extract("<title>T</title><p>fine <a href=x>x</a>");
        assert_eq!(clean.bad_html, vec![]);
    }

    #[test]
    fn unterminated_title_is_kept() {
        let f = extract("<title>Half a title");
        assert_eq!(f.title.as_deref(), Some("Half a title"));
    }
}
