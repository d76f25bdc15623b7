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

/// The entity for a byte HTML needs escaped, if it is one.
fn entity(b: u8) -> Option<&'static str> {
    match b {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&#39;"),
        _ => None,
    }
}

/// Append `text` to `out`, escaped for HTML: the fastest way to write a
/// large report a cell at a time (no formatting machinery, no string of
/// its own).
pub fn push_escaped(out: &mut String, text: &str) {
    let mut plain = 0;
    for (i, b) in text.bytes().enumerate() {
        if let Some(e) = entity(b) {
            out.push_str(&text[plain..i]);
            out.push_str(e);
            plain = i + 1;
        }
    }
    out.push_str(&text[plain..]);
}

/// Text escaped for HTML as it is formatted, without a string of its own:
/// `write!(page, "<td>{}</td>", Escaped(title))` writes what
/// `escape(title)` returns, straight into `page` (for a large report this
/// saves an allocation per cell).
#[derive(Clone, Copy, Debug)]
pub struct Escaped<'a>(pub &'a str);

impl std::fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = self.0;
        let mut plain = 0;
        for (i, b) in text.bytes().enumerate() {
            if let Some(e) = entity(b) {
                f.write_str(&text[plain..i])?;
                f.write_str(e)?;
                plain = i + 1;
            }
        }
        f.write_str(&text[plain..])
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
        assert_eq!(format!("[{}]", Escaped("a<b & c")), "[a&lt;b &amp; c]");
        assert_eq!(
            anchor_id("http://a.example/x.html"),
            "u-http---a-example-x-html"
        );
    }
}
