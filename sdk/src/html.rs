//! HTML and text helpers for report generators and the plugins that read pages.

/// Runs of whitespace made one space, the ends trimmed.
pub fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Escape text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    out
}

// `linkable` lives in a file of its own, which the host includes too:
// its pages and the plugins' reports draw the line in one place.
include!("linkable.rs");

/// Append a link to `url` reading `text` to `out`, both escaped; a URL
/// that is not [`linkable`] is written as its text alone.
pub fn push_link(out: &mut String, url: &str, text: &str) {
    if linkable(url) {
        out.push_str("<a href=\"");
        push_escaped(out, url);
        out.push_str("\">");
        push_escaped(out, text);
        out.push_str("</a>");
    } else {
        push_escaped(out, text);
    }
}

/// The bytes HTML needs escaped, each with its entity.
const ENTITIES: [(u8, &str); 5] = [
    (b'&', "&amp;"),
    (b'<', "&lt;"),
    (b'>', "&gt;"),
    (b'"', "&quot;"),
    (b'\'', "&#39;"),
];

/// The entity for a byte HTML needs escaped, if it is one.
fn entity(b: u8) -> Option<&'static str> {
    ENTITIES.iter().find(|(m, _)| *m == b).map(|(_, e)| *e)
}

/// Whether any of the eight bytes of `word` is one [`entity`] escapes
/// (exact: the classic test for a zero byte, on the word XORed with each).
fn has_markup(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    ENTITIES.iter().any(|&(b, _)| {
        let x = word ^ (ONES * b as u64);
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    })
}

/// Where the first byte at or after `from` that HTML needs escaped is:
/// eight bytes at a time, since most text of a report has none.
fn next_markup(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(from..from + 8) {
        let word = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
        if has_markup(word) {
            break;
        }
        from += 8;
    }
    let rest = bytes.get(from..)?;
    rest.iter()
        .position(|&b| entity(b).is_some())
        .map(|i| from + i)
}

/// `text` in its plain runs and the entities between them, in order.
fn escaped_pieces(text: &str, mut piece: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut plain = 0;
    while let Some(i) = next_markup(bytes, plain) {
        piece(&text[plain..i]);
        piece(entity(bytes[i]).expect("a byte to escape"));
        plain = i + 1;
    }
    piece(&text[plain..]);
}

/// Append `text` to `out`, escaped for HTML: the fastest way to write a
/// large report a cell at a time (no formatting machinery, no string of
/// its own).
pub fn push_escaped(out: &mut String, text: &str) {
    escaped_pieces(text, |piece| out.push_str(piece));
}

/// Append the decimal digits of `n` to `out`, without the formatting
/// machinery (a report writes numbers in every row: ids, counts, statuses).
pub fn push_number(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// Text escaped for HTML as it is formatted, without a string of its own:
/// `write!(page, "<td>{}</td>", Escaped(title))` writes what
/// `escape(title)` returns, straight into `page` (for a large report this
/// saves an allocation per cell).
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(pub &'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut result = Ok(());
        escaped_pieces(self.0, |piece| {
            if result.is_ok() {
                result = f.write_str(piece);
            }
        });
        result
    }
}

/// A fragment identifier made from any text: letters, digits, `-` and `_` kept,
/// everything else turned into `-`, so it can name an anchor in a report.
pub fn anchor_id(text: &str) -> String {
    let id: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("u-{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_and_file_links_are_clickable() {
        for fine in [
            "http://a.example/",
            "HTTPS://a.example/",
            "file:///srv/site/",
            "ftp://a.example/f",
            "mailto:x@a.example",
            "page.html",
            "/p/a:b",
            "?q=a:b",
            "  http://a.example/",
            "h\tt\ntp://a.example/",
            "longerscheme/x:y",
            "no colon at all",
            "",
        ] {
            assert!(linkable(fine), "{fine}");
        }
        for hostile in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            " \u{1}javascript:alert(1)",
            "java\tscript:alert(1)",
            "jav\nascript:alert(1)",
            "vbscript:msgbox(1)",
            "data:text/html,<script>alert(1)</script>",
            "javascript://[%0Aalert(1)",
            "mailtox:a@b",
            "c:/windows",
            "httpss://a.example/",
        ] {
            assert!(!linkable(hostile), "{hostile:?}");
        }
        let mut out = String::new();
        push_link(&mut out, "JaVaScRiPt:alert(\"x\")", "click <me>");
        assert_eq!(out, "click &lt;me&gt;");
        out.clear();
        push_link(&mut out, "http://a.example/?a=1&b=2", "A & B");
        assert_eq!(
            out,
            "<a href=\"http://a.example/?a=1&amp;b=2\">A &amp; B</a>"
        );
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape(r#"<a href="x">Tom & 'Jerry'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("café — <ü>"), "café — &lt;ü&gt;");
        // Escaped a word at a time: markup at every place of a word, and
        // across the boundary of two.
        for at in 0..20 {
            let mut text = "x".repeat(20);
            text.replace_range(at..at + 1, "<");
            let want = format!("{}&lt;{}", "x".repeat(at), "x".repeat(19 - at));
            assert_eq!(escape(&text), want, "at {at}");
        }
        assert_eq!(escape("ééééé&'"), "ééééé&amp;&#39;");
        assert_eq!(escape(""), "");
        let mut numbers = String::new();
        push_number(&mut numbers, 0u32);
        push_number(&mut numbers, u64::MAX);
        push_number(&mut numbers, -12i64);
        assert_eq!(numbers, "018446744073709551615-12");
        assert_eq!(escape("&&&&&&&&&"), "&amp;".repeat(9));
        assert_eq!(format!("[{}]", Escaped("a<b & c")), "[a&lt;b &amp; c]");
        assert_eq!(
            anchor_id("http://a.example/x.html"),
            "u-http---a-example-x-html"
        );
    }
}
