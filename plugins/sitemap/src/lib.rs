//! `sitemap`: reads sitemap.xml files and sitemap index files (the
//! sitemaps.org protocol 0.9) into references: each `<url><loc>` of a
//! `<urlset>` and each `<sitemap><loc>` of a `<sitemapindex>`, resolved
//! against the sitemap's URL, in order, without duplicates, at most 50,000
//! (the protocol's limit).
//!
//! It accepts XML resources (`application/xml`, `text/xml`, `+xml` types)
//! whose URL path names a sitemap (contains `sitemap`), unless the `paths`
//! setting lists other path endings to accept.
//!
//! Configuration: `paths` (a list of path suffixes; default: any path
//! containing `sitemap`).

use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;
use spinneret_sdk::parser::*;
use spinneret_sdk::urls;

/// The protocol's limit on entries per file.
pub const MAX_ENTRIES: usize = 50_000;

/// The parser's settings.
pub struct Sitemap {
    paths: Option<Vec<String>>,
}

fn line_of(body: &[u8], pos: u64) -> usize {
    let end = (pos as usize).min(body.len());
    body[..end].iter().filter(|b| **b == b'\n').count() + 1
}

impl Sitemap {
    /// The `<loc>` entries of a sitemap or sitemap index, and which it is.
    pub fn entries(body: &[u8]) -> Result<(bool, Vec<String>), String> {
        let mut reader = Reader::from_reader(body);
        reader.config_mut().trim_text(true);
        let mut buf = Vec::new();
        let mut index = None;
        let mut loc: Option<String> = None;
        let mut out = Vec::new();
        let at = |reader: &Reader<&[u8]>, e: &dyn std::fmt::Display| {
            format!("line {}: {e}", line_of(body, reader.buffer_position()))
        };
        loop {
            let event = reader
                .read_event_into(&mut buf)
                .map_err(|e| at(&reader, &e))?;
            match event {
                Event::Start(e) => match e.local_name().as_ref() {
                    b"urlset" if index.is_none() => index = Some(false),
                    b"sitemapindex" if index.is_none() => index = Some(true),
                    b"loc" => loc = Some(String::new()),
                    _ => {}
                },
                Event::End(e) if e.local_name().as_ref() == b"loc" => {
                    if let Some(l) = loc.take() {
                        out.push(l.trim().to_string());
                    }
                }
                Event::Text(t) => {
                    if let Some(l) = loc.as_mut() {
                        l.push_str(&t.decode().map_err(|e| at(&reader, &e))?);
                    }
                }
                Event::GeneralRef(r) => {
                    if let Some(l) = loc.as_mut() {
                        if let Some(c) = r.resolve_char_ref().map_err(|e| at(&reader, &e))? {
                            l.push(c);
                        } else {
                            let name = r.decode().map_err(|e| at(&reader, &e))?;
                            let value = quick_xml::escape::resolve_predefined_entity(&name)
                                .ok_or_else(|| at(&reader, &format!("unknown entity &{name};")))?;
                            l.push_str(value);
                        }
                    }
                }
                Event::CData(t) => {
                    if let Some(l) = loc.as_mut() {
                        l.push_str(&String::from_utf8_lossy(&t));
                    }
                }
                Event::Eof => break,
                _ => {}
            }
            buf.clear();
        }
        match index {
            Some(i) => Ok((i, out)),
            None => {
                Err("not a sitemap: the root element is neither <urlset> nor <sitemapindex>".into())
            }
        }
    }
}

impl Parser for Sitemap {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("sitemap", &config, &["paths"])?;
        let paths = match config.get("paths") {
            None => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| format!("sitemap: `paths` must list strings, not {v}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(other) => return Err(format!("sitemap: `paths` must be a list, not {other}")),
        };
        Ok(Sitemap { paths })
    }

    fn accepts(&self, content_type: &str, url: &str) -> bool {
        let ct = spinneret_sdk::http::media_type(content_type);
        let xml = ct == "application/xml" || ct == "text/xml" || ct.ends_with("+xml");
        let path = urls::Url::parse(url)
            .map(|u| u.path().to_ascii_lowercase())
            .unwrap_or_default();
        xml && match &self.paths {
            Some(p) => p.iter().any(|s| path.ends_with(&s.to_ascii_lowercase())),
            None => path.contains("sitemap"),
        }
    }

    fn parse(&mut self, url: &str, _content_type: &str, body: &[u8]) -> Result<Parsed, String> {
        let (index, locs) = Self::entries(body).map_err(|e| format!("{url}: {e}"))?;
        let mut seen = std::collections::HashSet::new();
        let mut references = Vec::new();
        for loc in locs {
            if references.len() >= MAX_ENTRIES {
                spinneret_sdk::log::warn(&format!(
                    "{url}: more than {MAX_ENTRIES} entries; the rest are ignored"
                ));
                break;
            }
            let target = urls::join(url, &loc).unwrap_or(loc);
            if seen.insert(target.clone()) {
                references.push(Reference {
                    target,
                    kind: RefKind::Anchor,
                    anchor_text: if index {
                        "sitemap".into()
                    } else {
                        String::new()
                    },
                });
            }
        }
        Ok(Parsed {
            title: None,
            owner: None,
            expires: None,
            references,
        })
    }
}

spinneret_sdk::export_parser!(Sitemap);

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> Sitemap {
        Sitemap::configure(serde_json::json!({})).unwrap()
    }

    fn targets(p: &Parsed) -> Vec<&str> {
        p.references.iter().map(|r| r.target.as_str()).collect()
    }

    #[test]
    fn reads_a_urlset_with_relative_duplicate_and_escaped_entries() {
        let body = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://a.example/</loc><lastmod>2024-01-01</lastmod></url>
  <url><loc> http://a.example/q?a=1&amp;b=2 </loc></url>
  <url><loc>/rel.html</loc></url>
  <url><loc>http://a.example/</loc></url>
  <url><loc><![CDATA[http://a.example/cdata.html]]></loc></url>
</urlset>"#;
        let p = parser()
            .parse("http://a.example/sitemap.xml", "application/xml", body)
            .unwrap();
        assert_eq!(
            targets(&p),
            [
                "http://a.example/",
                "http://a.example/q?a=1&b=2",
                "http://a.example/rel.html",
                "http://a.example/cdata.html"
            ]
        );
        assert!(p.references.iter().all(|r| r.anchor_text.is_empty()));
    }

    #[test]
    fn reads_a_sitemap_index() {
        let body = br#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>http://a.example/sitemap-1.xml</loc></sitemap>
<sitemap><loc>http://a.example/sitemap-2.xml</loc></sitemap>
</sitemapindex>"#;
        let p = parser()
            .parse("http://a.example/sitemap.xml", "text/xml", body)
            .unwrap();
        assert_eq!(
            targets(&p),
            [
                "http://a.example/sitemap-1.xml",
                "http://a.example/sitemap-2.xml"
            ]
        );
        assert_eq!(p.references[0].anchor_text, "sitemap");
    }

    #[test]
    fn malformed_xml_and_other_roots_are_errors_naming_the_url_and_line() {
        let err = parser()
            .parse(
                "http://a.example/sitemap.xml",
                "text/xml",
                b"<urlset>\n<url><loc>x</url>\n</urlset>",
            )
            .unwrap_err();
        assert!(
            err.starts_with("http://a.example/sitemap.xml: line 2:"),
            "{err}"
        );
        let err = parser()
            .parse(
                "http://a.example/sitemap.xml",
                "text/xml",
                b"<rss><channel/></rss>",
            )
            .unwrap_err();
        assert_eq!(
            err,
            "http://a.example/sitemap.xml: not a sitemap: the root element is neither <urlset> nor <sitemapindex>"
        );
    }

    #[test]
    fn accepts_xml_sitemaps_only() {
        let p = parser();
        assert!(p.accepts(
            "application/xml; charset=utf-8",
            "http://a.example/sitemap.xml"
        ));
        assert!(p.accepts("text/xml", "http://a.example/sitemaps/news.xml"));
        assert!(!p.accepts("text/html", "http://a.example/sitemap.html"));
        assert!(!p.accepts("application/xml", "http://a.example/feed.xml"));
        let custom = Sitemap::configure(serde_json::json!({"paths": ["/pages.xml"]})).unwrap();
        assert!(custom.accepts("text/xml", "http://a.example/pages.xml"));
        assert!(!custom.accepts("text/xml", "http://a.example/sitemap.xml"));
    }
}
