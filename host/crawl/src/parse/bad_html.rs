//! Bad HTML (seed 001, section 3.2): which syntax errors a document has,
//! by kind, with counts. The Worm recorded "missing end quotes and right
//! angle brackets, or absence of a title"; spinneret names the same faults
//! from the tokenizer's error list and from a light check of the elements
//! whose end tags authors must write.
//!
//! Kinds are stable names (they are stored, searched as `bad:KIND` and
//! shown in reports): see [`KINDS`].

use std::collections::BTreeMap;

/// Every kind of fault, with what it means, in the order reports list them.
pub const KINDS: &[(&str, &str)] = &[
    (
        "missing-quote",
        "an attribute value's quote is missing or misplaced",
    ),
    ("missing-gt", "a tag is not closed by `>`"),
    (
        "unclosed-element",
        "an element that needs an end tag was left open",
    ),
    ("stray-end-tag", "an end tag closes nothing that is open"),
    ("no-title", "the document has no title"),
    ("comment", "a comment is malformed or never closed"),
    ("char-ref", "a character reference (`&...;`) is malformed"),
    ("duplicate-attribute", "a tag repeats an attribute"),
    ("doctype", "the DOCTYPE is malformed"),
    (
        "encoding",
        "bytes are invalid in the document's character encoding",
    ),
    ("other", "another syntax error the parser reported"),
];

/// Elements whose end tag is never optional: one left open is an error.
/// (Elements with optional end tags, `p`, `li`, `td` and the like, and
/// void elements are not tracked.)
const NEED_END_TAG: &[&str] = &[
    "a",
    "abbr",
    "b",
    "big",
    "blockquote",
    "center",
    "cite",
    "code",
    "div",
    "dl",
    "em",
    "font",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "i",
    "ol",
    "pre",
    "s",
    "select",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
];

/// The most elements tracked as open: a hostile page nesting a million
/// `<div>`s costs no more than this.
const MAX_OPEN: usize = 512;

/// The faults found in one document, counted as the tokenizer goes.
#[derive(Debug, Default)]
pub struct BadHtml {
    counts: BTreeMap<&'static str, u32>,
    open: Vec<&'static str>,
}

impl BadHtml {
    /// Count one fault of `kind`.
    pub fn add(&mut self, kind: &'static str) {
        *self.counts.entry(kind).or_default() += 1;
    }

    /// The tokenizer reported `message` (html5ever's inexact messages:
    /// `Saw X in state S`, `Saw EOF in state S`, or a phrase).
    pub fn tokenizer_error(&mut self, message: &str) {
        self.add(classify(message));
    }

    /// A start tag `name`.
    pub fn start(&mut self, name: &str) {
        let Some(&tracked) = NEED_END_TAG.iter().find(|t| **t == name) else {
            return;
        };
        // A link inside a link closes the first one, as browsers do.
        if tracked == "a" && self.open.contains(&"a") {
            self.close("a");
            self.open.pop();
            self.add("unclosed-element");
        }
        if self.open.len() < MAX_OPEN {
            self.open.push(tracked);
        }
    }

    /// An end tag `name`: it closes the innermost open element of that
    /// name, and those left open inside it.
    pub fn end(&mut self, name: &str) {
        if !NEED_END_TAG.contains(&name) {
            return;
        }
        if self.open.contains(&name) {
            self.close(name);
            self.open.pop();
        } else {
            self.add("stray-end-tag");
        }
    }

    /// Pop the elements open inside the innermost `name`, each an error.
    fn close(&mut self, name: &str) {
        while let Some(&top) = self.open.last() {
            if top == name {
                return;
            }
            self.open.pop();
            self.add("unclosed-element");
        }
    }

    /// The document ended: what is still open was never closed; `title`
    /// is the title found (none or empty is a fault).
    pub fn finish(mut self, title: Option<&str>) -> Vec<(&'static str, u32)> {
        for _ in 0..self.open.len() {
            self.add("unclosed-element");
        }
        if title.is_none_or(|t| t.trim().is_empty()) {
            self.add("no-title");
        }
        let mut out: Vec<(&'static str, u32)> = self.counts.into_iter().collect();
        out.sort_by_key(|(k, _)| rank(k));
        out
    }
}

/// A kind's place in [`KINDS`].
fn rank(kind: &str) -> usize {
    KINDS
        .iter()
        .position(|(n, _)| *n == kind)
        .unwrap_or(KINDS.len())
}

/// `bad` with the `encoding` fault in its place when the bytes were
/// invalid in the document's encoding (known only after decoding).
pub fn with_encoding(
    mut bad: Vec<(&'static str, u32)>,
    decode_errors: bool,
) -> Vec<(&'static str, u32)> {
    if decode_errors {
        let at = bad
            .iter()
            .position(|(k, _)| rank(k) > rank("encoding"))
            .unwrap_or(bad.len());
        bad.insert(at, ("encoding", 1));
    }
    bad
}

/// Whether `state` (html5ever's state name) is inside a tag.
fn in_tag(state: &str) -> bool {
    [
        "TagOpen",
        "EndTagOpen",
        "TagName",
        "BeforeAttributeName",
        "AttributeName",
        "AfterAttributeName",
        "BeforeAttributeValue",
        "AttributeValue(Unquoted)",
        "AfterAttributeValueQuoted",
        "SelfClosingStartTag",
    ]
    .contains(&state)
}

/// The kind of a tokenizer error message.
pub fn classify(message: &str) -> &'static str {
    if message.contains("character reference") {
        return "char-ref";
    }
    if message == "Duplicate attribute" {
        return "duplicate-attribute";
    }
    let Some((saw, state)) = message
        .strip_prefix("Saw ")
        .and_then(|m| m.split_once(" in state "))
    else {
        return "other";
    };
    if state.contains("Doctype") {
        return "doctype";
    }
    if state.contains("Comment") {
        return "comment";
    }
    let quoted = state.starts_with("AttributeValue(DoubleQuoted")
        || state.starts_with("AttributeValue(SingleQuoted");
    match saw {
        "EOF" if quoted => "missing-quote",
        "EOF" if in_tag(state) => "missing-gt",
        "<" if in_tag(state) => "missing-gt",
        "\"" | "'" if in_tag(state) => "missing-quote",
        _ if state == "AfterAttributeValueQuoted" => "missing-quote",
        _ => "other",
    }
}

/// What the kind `kind` means, for reports.
pub fn describe(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("a syntax error", |(_, d)| d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_classify_by_state() {
        assert_eq!(
            classify("Saw EOF in state AttributeValue(DoubleQuoted)"),
            "missing-quote"
        );
        assert_eq!(
            classify("Saw y in state AfterAttributeValueQuoted"),
            "missing-quote"
        );
        assert_eq!(
            classify("Saw \" in state AttributeValue(Unquoted)"),
            "missing-quote"
        );
        assert_eq!(classify("Saw < in state AttributeName"), "missing-gt");
        assert_eq!(classify("Saw EOF in state TagName"), "missing-gt");
        assert_eq!(classify("Saw EOF in state Comment"), "comment");
        assert_eq!(classify("Saw x in state DoctypeName"), "doctype");
        assert_eq!(
            classify("Numeric character reference without digits"),
            "char-ref"
        );
        assert_eq!(classify("Duplicate attribute"), "duplicate-attribute");
        assert_eq!(classify("Saw \0 in state Data"), "other");
    }

    #[test]
    fn elements_left_open_and_stray_end_tags_count() {
        let mut b = BadHtml::default();
        for (start, name) in [
            (true, "div"),
            (true, "b"),
            (true, "i"),
            (false, "b"), // closes b; i was left open
            (false, "i"), // nothing open: stray
            (true, "p"),  // not tracked
            (true, "a"),
            (true, "a"), // a link in a link closes the first
            (false, "a"),
        ] {
            match start {
                true => b.start(name),
                false => b.end(name),
            }
        }
        // i, the first a and div (still open at the end).
        assert_eq!(
            b.finish(Some("T")),
            vec![("unclosed-element", 3), ("stray-end-tag", 1)]
        );
        let empty = BadHtml::default().finish(Some("  "));
        assert_eq!(
            with_encoding(empty, true),
            vec![("no-title", 1), ("encoding", 1)]
        );
        let other = vec![("other", 2)];
        assert_eq!(
            with_encoding(other, true),
            vec![("encoding", 1), ("other", 2)]
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut b = BadHtml::default();
        for _ in 0..100_000 {
            b.start("div");
        }
        assert_eq!(
            b.finish(Some("T")),
            vec![("unclosed-element", MAX_OPEN as u32)]
        );
    }
}
