//! `sitemap`: reads sitemap.xml files and sitemap index files (the
//! sitemaps.org protocol 0.9) into references: each `<url><loc>` of a
//! `<urlset>` and each `<sitemap><loc>` of a `<sitemapindex>`, resolved
//! against the sitemap's URL, in order, without duplicates, at most 50,000
//! (the protocol's limit).
//!
//! A sitemap is recognised by its content: it reads every XML resource
//! (`application/xml`, `text/xml`, `+xml` types) whatever its path, and
//! one whose root element is `<urlset>` or `<sitemapindex>` is a sitemap;
//! another XML document (a feed, an SVG image) has no references for it,
//! unless its path names a sitemap (contains `sitemap`), which is then an
//! error worth a look. A `text/plain` resource whose path names a sitemap
//! is read as the protocol's text sitemap: one URL per line.
//!
//! Configuration: `paths` (a list of path suffixes): only XML resources
//! whose path ends so are read.

use serde_json::Value;
use spinneret_sdk::parser::*;
use spinneret_sdk::urls;

pub use xml::MAX_ENTRIES;

/// The parser's settings.
pub struct Sitemap {
    paths: Option<Vec<String>>,
}

/// The sitemap's XML reading, shared with the host's sitemap reading.
mod xml {
    include!("../../../sdk/src/sitemap_xml.rs");
}

impl Sitemap {
    /// The `<loc>` entries of a sitemap or sitemap index, and which it is;
    /// `None` for an XML document whose root element is neither.
    pub fn entries(body: &[u8]) -> Result<Option<(bool, Vec<String>)>, String> {
        xml::sitemap_entries(body)
    }
}

/// The kinds of resource the parser tells apart by type.
enum Media {
    Xml,
    Text,
    Other,
}

fn media(content_type: &str) -> Media {
    match spinneret_sdk::http::media_type(content_type).as_str() {
        "application/xml" | "text/xml" => Media::Xml,
        ct if ct.ends_with("+xml") => Media::Xml,
        "text/plain" => Media::Text,
        _ => Media::Other,
    }
}

/// A URL's path, lower-cased.
fn path_of(url: &str) -> String {
    urls::Url::parse(url)
        .map(|u| u.path().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Whether a URL's path names a sitemap.
fn names_a_sitemap(url: &str) -> bool {
    path_of(url).contains("sitemap")
}

/// The URLs of a text sitemap: each line that holds an http or https URL.
fn text_entries(body: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(body)
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("http://") || l.starts_with("https://"))
        .map(str::to_string)
        .collect()
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
        match media(content_type) {
            Media::Xml => match &self.paths {
                Some(p) => {
                    let path = path_of(url);
                    p.iter().any(|s| path.ends_with(&s.to_ascii_lowercase()))
                }
                None => true,
            },
            Media::Text => self.paths.is_none() && names_a_sitemap(url),
            Media::Other => false,
        }
    }

    fn parse(&mut self, url: &str, content_type: &str, body: &[u8]) -> Result<Parsed, String> {
        let (index, locs) = match media(content_type) {
            Media::Text => (false, text_entries(body)),
            _ => match Self::entries(body).map_err(|e| format!("{url}: {e}"))? {
                Some(found) => found,
                None if self.paths.is_some() || names_a_sitemap(url) => {
                    return Err(format!(
                        "{url}: not a sitemap: the root element is neither <urlset> nor <sitemapindex>"
                    ));
                }
                // Another kind of XML document: nothing of a sitemap's in it.
                None => (false, Vec::new()),
            },
        };
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
    fn a_sitemap_is_known_by_its_root_element_or_a_text_sitemap_by_its_path() {
        let p = parser();
        // Every XML resource is read, whatever its path.
        assert!(p.accepts(
            "application/xml; charset=utf-8",
            "http://a.example/sitemap.xml"
        ));
        assert!(p.accepts("text/xml", "http://a.example/pages.xml"));
        assert!(p.accepts("application/rss+xml", "http://a.example/feed"));
        assert!(!p.accepts("text/html", "http://a.example/sitemap.html"));
        // A text sitemap needs its path to say so.
        assert!(p.accepts("text/plain", "http://a.example/sitemap.txt"));
        assert!(!p.accepts("text/plain", "http://a.example/notes.txt"));

        // A sitemap at a path that does not say so is read by its root.
        let body = br#"<?xml version="1.0"?><!-- pages --><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/a.html</loc></url></urlset>"#;
        let found = parser()
            .parse("http://a.example/pages.xml", "text/xml", body)
            .unwrap();
        assert_eq!(targets(&found), ["http://a.example/a.html"]);
        // Another XML document has no references, and is no error.
        let feed = parser()
            .parse(
                "http://a.example/feed.xml",
                "application/rss+xml",
                b"<rss><channel><link>http://a.example/x</link></channel></rss>",
            )
            .unwrap();
        assert!(found.title.is_none() && feed.references.is_empty());
        // The protocol's text sitemap: a URL a line.
        let text = parser()
            .parse(
                "http://a.example/sitemap.txt",
                "text/plain",
                b"http://a.example/1.html\r\n\n  https://a.example/2.html  \nnot a url\n",
            )
            .unwrap();
        assert_eq!(
            targets(&text),
            ["http://a.example/1.html", "https://a.example/2.html"]
        );

        let custom = Sitemap::configure(serde_json::json!({"paths": ["/pages.xml"]})).unwrap();
        assert!(custom.accepts("text/xml", "http://a.example/pages.xml"));
        assert!(!custom.accepts("text/xml", "http://a.example/sitemap.xml"));
        assert!(!custom.accepts("text/plain", "http://a.example/sitemap.txt"));
    }
}
