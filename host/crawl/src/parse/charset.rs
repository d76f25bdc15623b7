//! Choosing a document's character encoding and decoding it (encoding_rs).
//!
//! Order, as browsers do: byte-order mark, the `charset` of the Content-Type
//! header, a `<meta>` charset in the first 1024 bytes, then UTF-8 when the
//! bytes are valid UTF-8 and windows-1252 when they are not.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// A decoded document.
#[derive(Debug)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The encoding used, by its WHATWG name.
    pub encoding: &'static str,
    /// Whether some bytes were not valid in that encoding (replaced by U+FFFD).
    pub had_errors: bool,
}

/// The `charset` parameter of a Content-Type value, if any.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']))
    })
}

/// Look for `<meta charset=...>` or `<meta http-equiv=content-type content="...charset=...">`
/// in the first 1024 bytes.
fn prescan_meta(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"<meta") {
        let start = from + pos;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(cs) = find(tag, b"charset=") {
            let value = &tag[cs + 8..];
            let value: Vec<u8> = value
                .iter()
                .copied()
                .skip_while(|b| *b == b'"' || *b == b'\'' || *b == b' ')
                .take_while(|b| !matches!(b, b'"' | b'\'' | b' ' | b';' | b'/' | b'>'))
                .collect();
            if let Some(enc) = Encoding::for_label(&value) {
                return Some(enc);
            }
        }
        from = end;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decode an HTML body given its Content-Type header value.
pub fn decode_html(bytes: &[u8], content_type: Option<&str>) -> Decoded {
    let declared = content_type
        .and_then(charset_param)
        .and_then(|l| Encoding::for_label(l.as_bytes()))
        .or_else(|| prescan_meta(bytes));
    let encoding = match declared {
        Some(e) => e,
        None if std::str::from_utf8(bytes).is_ok() => UTF_8,
        None => WINDOWS_1252,
    };
    // `decode` sniffs a BOM first, which wins over any declaration.
    let (text, used, had_errors) = encoding.decode(bytes);
    Decoded {
        text: text.into_owned(),
        encoding: used.name(),
        had_errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_wins_over_default() {
        let d = decode_html(b"caf\xe9", Some("text/html; charset=ISO-8859-1"));
        assert_eq!(d.text, "café");
        assert_eq!(d.encoding, "windows-1252");
        assert!(!d.had_errors);
    }

    #[test]
    fn meta_charset_is_found() {
        let html = b"<html><head><meta charset=\"shift_jis\"></head>\x82\xa0</html>";
        let d = decode_html(html, Some("text/html"));
        assert_eq!(d.encoding, "Shift_JIS");
        assert!(d.text.contains('あ'));
        let html = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\">";
        assert_eq!(decode_html(html, None).encoding, "KOI8-R");
    }

    #[test]
    fn invalid_utf8_declared_is_flagged() {
        let d = decode_html(b"ok \xff\xfe bad", Some("text/html; charset=utf-8"));
        assert!(d.had_errors);
        assert!(d.text.contains('\u{FFFD}'));
    }

    #[test]
    fn undeclared_non_utf8_falls_back_to_windows_1252() {
        let d = decode_html(b"na\xefve", None);
        assert_eq!(d.text, "naïve");
        assert!(!d.had_errors);
    }
}
