//! `arxiv`: arXiv's search API (`http://export.arxiv.org/api/query`),
//! answered as an Atom feed. Each `<entry>` is a paper: its abstract page
//! (the `alternate` link, else its `<id>`), its title and the start of its
//! abstract. A feed with no entries is the engine's "no results"; arXiv's
//! error entry (`<id>…/api/errors#…`) is an error.
//!
//! The keywords are searched in all fields (`all:word`, joined with
//! `AND`); advanced options: the phrase (`all:"…"`), the excluded words
//! (`ANDNOT all:word`) and further pages (`start`). arXiv has one language
//! and one site.
//!
//! Configuration: `base` (default `http://export.arxiv.org/api/query`),
//! `sort` (`relevance`, the default, `lastUpdatedDate` or `submittedDate`),
//! `category` (restrict to one, e.g. `cs.IR`).

use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;
use spinneret_sdk::search::*;
use spinneret_sdk::urls::Url;

/// The engine's settings.
pub struct Arxiv {
    base: Url,
    sort: String,
    category: Option<String>,
}

/// One `<entry>` as read.
#[derive(Default)]
struct Entry {
    id: String,
    title: String,
    summary: String,
    alternate: Option<String>,
}

/// The most characters of an abstract kept as a snippet.
const SNIPPET: usize = 300;

/// A word as a term of arXiv's query language: only letters, digits and
/// the few marks a word holds (`-`, `.`, `'`), so nothing can change the query.
fn term(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '\''))
        .collect()
}

/// The entries of an Atom feed.
fn entries(body: &[u8]) -> Result<Vec<Entry>, String> {
    let mut reader = Reader::from_reader(body);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut entry: Option<Entry> = None;
    let mut field: Option<&'static str> = None;
    let mut feed = false;
    let at = |reader: &Reader<&[u8]>, e: &dyn std::fmt::Display| {
        format!(
            "arxiv: the feed is not well-formed at byte {}: {e}",
            reader.buffer_position()
        )
    };
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| at(&reader, &e))?;
        let mut text: Option<String> = None;
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                b"feed" => feed = true,
                b"entry" => entry = Some(Entry::default()),
                b"id" if entry.is_some() => field = Some("id"),
                b"title" if entry.is_some() => field = Some("title"),
                b"summary" if entry.is_some() => field = Some("summary"),
                b"link" => {
                    if let Some(en) = entry.as_mut() {
                        let attr = |name: &[u8]| {
                            e.try_get_attribute(name)
                                .ok()
                                .flatten()
                                .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
                        };
                        if attr(b"rel").as_deref() == Some("alternate") {
                            en.alternate = attr(b"href");
                        }
                    }
                }
                _ => {}
            },
            Event::End(e) => match e.local_name().as_ref() {
                b"entry" => out.extend(entry.take()),
                b"id" | b"title" | b"summary" => field = None,
                _ => {}
            },
            Event::Text(t) => text = Some(t.decode().map_err(|e| at(&reader, &e))?.into_owned()),
            Event::GeneralRef(r) => {
                text = Some(match r.resolve_char_ref().map_err(|e| at(&reader, &e))? {
                    Some(c) => c.to_string(),
                    None => {
                        let name = r.decode().map_err(|e| at(&reader, &e))?;
                        quick_xml::escape::resolve_predefined_entity(&name)
                            .ok_or_else(|| at(&reader, &format!("unknown entity &{name};")))?
                            .to_string()
                    }
                })
            }
            Event::CData(t) => text = Some(String::from_utf8_lossy(&t).into_owned()),
            Event::Eof => break,
            _ => {}
        }
        if let (Some(t), Some(f), Some(en)) = (text, field, entry.as_mut()) {
            match f {
                "id" => en.id.push_str(&t),
                "title" => en.title.push_str(&t),
                _ => en.summary.push_str(&t),
            }
        }
        buf.clear();
    }
    if !feed {
        return Err("arxiv: the answer is no Atom feed".into());
    }
    Ok(out)
}

impl SearchEngine for Arxiv {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("arxiv", &config, &["base", "sort", "category"])?;
        let text = |key: &str| -> Result<Option<String>, String> {
            match config.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
                Some(other) => Err(format!("arxiv: `{key}` must be a string, not {other}")),
            }
        };
        let base = text("base")?.unwrap_or("http://export.arxiv.org/api/query".into());
        let base = Url::parse(&base)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| format!("arxiv: `base` {base:?} is not an http or https URL"))?;
        let sort = text("sort")?.unwrap_or("relevance".into());
        if !matches!(
            sort.as_str(),
            "relevance" | "lastUpdatedDate" | "submittedDate"
        ) {
            return Err(format!(
                "arxiv: `sort` is relevance, lastUpdatedDate or submittedDate, not {sort:?}"
            ));
        }
        let category = text("category")?;
        if let Some(c) = &category
            && (c.is_empty() || term(c) != *c)
        {
            return Err(format!(
                "arxiv: `category` is an arXiv category such as cs.IR, not {c:?}"
            ));
        }
        Ok(Arxiv {
            base,
            sort,
            category,
        })
    }

    fn supports(&self) -> OptionSupport {
        OptionSupport::PAGE | OptionSupport::PHRASE | OptionSupport::EXCLUDE
    }

    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String> {
        let mut query: Vec<String> = keywords
            .iter()
            .flat_map(|k| k.split_whitespace())
            .map(term)
            .filter(|t| !t.is_empty())
            .map(|t| format!("all:{t}"))
            .collect();
        if let Some(phrase) = &options.phrase {
            let words: Vec<String> = phrase
                .split_whitespace()
                .map(term)
                .filter(|t| !t.is_empty())
                .collect();
            if !words.is_empty() {
                query.push(format!("all:\"{}\"", words.join(" ")));
            }
        }
        if query.is_empty() {
            return Err("arxiv: no keywords to search for".into());
        }
        if let Some(c) = &self.category {
            query.push(format!("cat:{c}"));
        }
        let mut q = query.join(" AND ");
        for word in options
            .exclude
            .iter()
            .map(|w| term(w))
            .filter(|t| !t.is_empty())
        {
            q.push_str(&format!(" ANDNOT all:{word}"));
        }
        let max = options.max_results.clamp(1, 2000);
        let mut url = self.base.clone();
        url.query_pairs_mut()
            .append_pair("search_query", &q)
            .append_pair("start", &((options.page.max(1) - 1) * max).to_string())
            .append_pair("max_results", &max.to_string())
            .append_pair("sortBy", &self.sort)
            .append_pair("sortOrder", "descending");
        Ok(url.to_string())
    }

    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Answer, String> {
        let media = helpers::media_type(content_type);
        if !(media.ends_with("xml") || media.is_empty()) {
            return Err(format!(
                "arxiv: the API answered {media:?}, not an Atom feed"
            ));
        }
        let entries = entries(body)?;
        if let Some(e) = entries.iter().find(|e| e.id.contains("/api/errors")) {
            return Err(format!(
                "arxiv: the API refused the query: {}",
                helpers::collapse(&e.summary)
            ));
        }
        let listed = entries.into_iter().map(|e| {
            let mut snippet = helpers::collapse(&e.summary);
            if snippet.chars().count() > SNIPPET {
                snippet = snippet.chars().take(SNIPPET).collect::<String>() + "…";
            }
            (e.alternate.unwrap_or(e.id), e.title, snippet)
        });
        Ok(helpers::answer(
            helpers::ranked(listed, None, 0),
            Some(String::new()),
        ))
    }
}

spinneret_sdk::export_search_engine!(Arxiv);

#[cfg(test)]
mod tests {
    use super::*;

    fn arxiv() -> Arxiv {
        Arxiv::configure(serde_json::json!({})).unwrap()
    }

    #[test]
    fn builds_the_api_query() {
        let options = SearchOptions {
            max_results: 5,
            language: None,
            page: 3,
            phrase: Some("link rot".into()),
            exclude: vec!["quantum)".into()],
            site: None,
        };
        assert_eq!(
            arxiv()
                .query_url(&["web".into(), "crawler OR(x)".into()], &options)
                .unwrap(),
            "http://export.arxiv.org/api/query?search_query=all%3Aweb+AND+all%3Acrawler+AND+all%3AORx+AND+all%3A%22link+rot%22+ANDNOT+all%3Aquantum&start=10&max_results=5&sortBy=relevance&sortOrder=descending"
        );
        let cs =
            Arxiv::configure(serde_json::json!({"category": "cs.IR", "sort": "submittedDate"}))
                .unwrap();
        let plain = SearchOptions {
            phrase: None,
            exclude: vec![],
            page: 1,
            ..options
        };
        assert_eq!(
            cs.query_url(&["robots".into()], &plain).unwrap(),
            "http://export.arxiv.org/api/query?search_query=all%3Arobots+AND+cat%3Acs.IR&start=0&max_results=5&sortBy=submittedDate&sortOrder=descending"
        );
    }

    #[test]
    fn reads_the_feed() {
        let feed = include_bytes!("../fixtures/query.atom");
        let hits = spinneret_sdk::testing::hits(
            arxiv().parse_results(feed, "application/atom+xml; charset=utf-8"),
        );
        let got: Vec<(u32, &str, &str, &str)> = hits
            .iter()
            .map(|h| (h.rank, h.url.as_str(), h.title.as_str(), h.snippet.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    1,
                    "http://arxiv.org/abs/2101.00001v2",
                    "Polite Crawling at Scale: Robots Exclusion & Revisit Policies",
                    "We study how web crawlers honour the robots exclusion protocol and how often they should revisit pages <i>in practice</i>."
                ),
                (
                    2,
                    "http://arxiv.org/abs/cs/9901001v1",
                    "Link Rot in the Early Web",
                    "Measuring broken links <1999>."
                ),
                (
                    3,
                    "http://arxiv.org/abs/2201.00002v1",
                    "An entry without an alternate link",
                    "Its id is its page."
                ),
            ]
        );
    }

    #[test]
    fn an_empty_feed_errors_and_other_answers() {
        let none = arxiv()
            .parse_results(
                include_bytes!("../fixtures/empty.atom"),
                "application/atom+xml",
            )
            .unwrap();
        assert!(
            matches!(&none, Answer::NoResults(w) if w.is_empty()),
            "{none:?}"
        );
        let err = arxiv()
            .parse_results(
                include_bytes!("../fixtures/error.atom"),
                "application/atom+xml",
            )
            .unwrap_err();
        assert_eq!(
            err,
            "arxiv: the API refused the query: start must be non-negative"
        );
        assert!(arxiv().parse_results(b"<html><body>", "text/html").is_err());
        assert!(
            arxiv()
                .parse_results(b"<rss></rss>", "application/xml")
                .unwrap_err()
                .contains("no Atom feed")
        );
        assert!(
            arxiv()
                .parse_results(
                    b"<feed><entry><title>a</titl></entry></feed>",
                    "application/xml"
                )
                .is_err()
        );
    }

    #[test]
    fn configuration_is_checked() {
        for bad in [
            serde_json::json!({"sort": "best"}),
            serde_json::json!({"category": "cs IR"}),
            serde_json::json!({"base": "ftp://x/"}),
            serde_json::json!({"catgory": "cs.IR"}),
        ] {
            assert!(Arxiv::configure(bad.clone()).is_err(), "{bad}");
        }
    }
}
