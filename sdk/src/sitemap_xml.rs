// Included by the `sitemap` built-in plugin and by the host's
// `spinneret_crawl::parse::sitemap`: one reading of a sitemap's XML (the
// sitemaps.org protocol 0.9). The including module has `quick_xml`.

use quick_xml::Reader;
use quick_xml::events::Event;

/// The protocol's limit on the entries of one file.
pub const MAX_ENTRIES: usize = 50_000;

/// The line of byte `pos` of `body`, from 1.
fn line_of(body: &[u8], pos: u64) -> usize {
    let end = usize::try_from(pos).unwrap_or(usize::MAX).min(body.len());
    body[..end].iter().filter(|b| **b == b'\n').count() + 1
}

/// The `<loc>` entries of a sitemap's XML `body`, at most [`MAX_ENTRIES`],
/// and whether it is a sitemap index (`<sitemapindex>`: its entries are
/// further sitemaps) or a sitemap (`<urlset>`: pages); `None` for an XML
/// document whose root element is neither (a feed, an SVG image). XML
/// that does not parse is an error naming its line.
pub(crate) fn sitemap_entries(body: &[u8]) -> Result<Option<(bool, Vec<String>)>, String> {
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
            // The root element says what the document is.
            Event::Start(e) | Event::Empty(e) if index.is_none() => match e.local_name().as_ref() {
                b"urlset" => index = Some(false),
                b"sitemapindex" => index = Some(true),
                _ => return Ok(None),
            },
            Event::Start(e) if e.local_name().as_ref() == b"loc" => loc = Some(String::new()),
            Event::End(e) if e.local_name().as_ref() == b"loc" => {
                if let Some(l) = loc.take() {
                    out.push(l.trim().to_string());
                    if out.len() >= MAX_ENTRIES {
                        break;
                    }
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
    Ok(index.map(|i| (i, out)))
}
