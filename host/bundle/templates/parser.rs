//! {name}: a spinneret parser. It reads `text/uri-list` resources (RFC
//! 2483: one URL per line, `#` comments) into references.

use spinneret_sdk::parser::*;
use spinneret_sdk::urls;

/// The parser (it has no settings).
pub struct Plugin;

impl Parser for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        match config.as_object() {
            Some(o) if !o.is_empty() => Err("{name}: this parser has no settings".into()),
            _ => Ok(Plugin),
        }
    }

    fn accepts(&self, content_type: &str, _url: &str) -> bool {
        content_type.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("text/uri-list")
    }

    fn parse(&mut self, url: &str, _content_type: &str, body: &[u8]) -> Result<Parsed, String> {
        let text = std::str::from_utf8(body).map_err(|e| format!("{url}: not UTF-8: {e}"))?;
        let references = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| urls::join(url, l))
            .map(|target| Reference { target, kind: RefKind::Anchor, anchor_text: String::new() })
            .collect();
        Ok(Parsed { title: None, owner: None, expires: None, references })
    }
}

spinneret_sdk::export_parser!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_uri_list() {
        let mut p = Plugin::configure(serde_json::json!({})).unwrap();
        assert!(p.accepts("text/uri-list; charset=utf-8", "http://a.example/list"));
        let parsed = p
            .parse("http://a.example/list", "text/uri-list", b"# links\nhttp://b.example/\n/rel\n")
            .unwrap();
        let targets: Vec<&str> = parsed.references.iter().map(|r| r.target.as_str()).collect();
        assert_eq!(targets, ["http://b.example/", "http://a.example/rel"]);
    }
}
