//! Sitemaps (the sitemaps.org protocol 0.9) read for the pages they list:
//! a `<urlset>`'s `<url><loc>`s, a `<sitemapindex>`'s `<sitemap><loc>`s
//! (further sitemaps), a text sitemap's lines; gzipped ones
//! (`sitemap.xml.gz`) unpacked to a bound, so a small file that unpacks
//! to gigabytes costs no more than the bound.

use std::io::Read;

/// What a sitemap file lists.
#[derive(Debug, PartialEq, Eq)]
pub enum Listing {
    /// Pages (`<urlset>`, or a text sitemap).
    Pages(Vec<String>),
    /// Further sitemaps (`<sitemapindex>`).
    Sitemaps(Vec<String>),
}

/// The entries of a sitemap's `body`, at most [`MAX_ENTRIES`] (`limit`:
/// the most bytes a gzipped body unpacks to). A body whose root element
/// is neither `<urlset>` nor `<sitemapindex>` is not a sitemap: said in
/// the error, as is XML that does not parse (with its line).
pub fn read(body: &[u8], content_type: Option<&str>, limit: u64) -> Result<Listing, String> {
    let unpacked;
    let body = if body.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(body)
            .take(limit)
            .read_to_end(&mut out)
            .map_err(|e| format!("cannot unpack it: {e}"))?;
        unpacked = out;
        &unpacked[..]
    } else {
        body
    };
    let media = content_type
        .and_then(|c| c.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase());
    if media.as_deref() == Some("text/plain") {
        let pages = String::from_utf8_lossy(body)
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("http://") || l.starts_with("https://"))
            .take(MAX_ENTRIES)
            .map(str::to_string)
            .collect();
        return Ok(Listing::Pages(pages));
    }
    xml_entries(body)
}

/// The sitemap's XML reading, shared with the `sitemap` built-in plugin.
mod xml {
    include!("../../../../sdk/src/sitemap_xml.rs");
}
pub use xml::MAX_ENTRIES;

fn xml_entries(body: &[u8]) -> Result<Listing, String> {
    match xml::sitemap_entries(body)? {
        Some((true, entries)) => Ok(Listing::Sitemaps(entries)),
        Some((false, entries)) => Ok(Listing::Pages(entries)),
        None => {
            Err("not a sitemap: its root element is neither <urlset> nor <sitemapindex>".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_urlset_an_index_and_a_text_sitemap() {
        let urlset = br#"<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://a.example/x?a=1&amp;b=2 </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc><![CDATA[https://a.example/y]]></loc></url>
</urlset>"#;
        assert_eq!(
            read(urlset, Some("application/xml"), 1 << 20).unwrap(),
            Listing::Pages(vec![
                "https://a.example/x?a=1&b=2".into(),
                "https://a.example/y".into()
            ])
        );
        let index = br#"<sitemapindex><sitemap><loc>https://a.example/s1.xml</loc></sitemap></sitemapindex>"#;
        assert_eq!(
            read(index, Some("text/xml"), 1 << 20).unwrap(),
            Listing::Sitemaps(vec!["https://a.example/s1.xml".into()])
        );
        assert_eq!(
            read(
                b"https://a.example/1\n# no\n\nhttps://a.example/2\n",
                Some("text/plain; charset=utf-8"),
                1 << 20
            )
            .unwrap(),
            Listing::Pages(vec![
                "https://a.example/1".into(),
                "https://a.example/2".into()
            ])
        );
        let e = read(b"<html><body>404</body></html>", Some("text/html"), 1 << 20).unwrap_err();
        assert!(e.starts_with("not a sitemap"), "{e}");
        let e = read(b"<urlset><url><loc>x</url>", None, 1 << 20).unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
    }

    #[test]
    fn a_gzipped_sitemap_unpacks_only_to_its_bound() {
        use std::io::Write;
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let small = gz(b"<urlset><url><loc>https://a.example/p</loc></url></urlset>");
        assert_eq!(
            read(&small, Some("application/gzip"), 1 << 20).unwrap(),
            Listing::Pages(vec!["https://a.example/p".into()])
        );
        // 64 MiB of spaces inside an element, packed to a few KiB: read up
        // to the bound, then it is XML cut short, not 64 MiB in memory.
        let mut bomb = b"<urlset><url><loc>https://a.example/p".to_vec();
        bomb.extend(std::iter::repeat_n(b' ', 64 << 20));
        let bomb = gz(&bomb);
        assert!(bomb.len() < 200_000, "{}", bomb.len());
        let listing = read(&bomb, None, 1 << 20).unwrap();
        assert_eq!(
            listing,
            Listing::Pages(Vec::new()),
            "cut inside its first <loc>"
        );
    }
}
