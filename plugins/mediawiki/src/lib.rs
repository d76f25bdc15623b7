//! `mediawiki`: the search API of a MediaWiki (Wikipedia, Wiktionary, a
//! company wiki): `api.php?action=query&list=search&srsearch=…`, answered
//! in JSON. Each hit is an article, its URL made from the wiki's article
//! path (`/wiki/$1`), its snippet the API's with the highlighting removed.
//! An empty list is the engine's "no results" (with the wiki's "did you
//! mean" suggestion when it gives one); an API `error` is an error.
//!
//! Advanced options: the phrase and the excluded words as CirrusSearch's
//! operators (`"…"`, `-word`); further pages as `sroffset`; the language
//! when `api` holds `{lang}` (`https://{lang}.wikipedia.org/w/api.php`),
//! which picks the wiki of that language. A site cannot be chosen: a wiki
//! is one site.
//!
//! Configuration: `api` (default `https://en.wikipedia.org/w/api.php`),
//! `language` (the `{lang}` when the interest gives none, default `en`),
//! `article_path` (default `/wiki/$1` on the API's host), `namespace`
//! (default 0, the articles).

use serde::Deserialize;
use serde_json::Value;
use spinneret_sdk::search::*;
use spinneret_sdk::urls::Url;
use std::cell::RefCell;

/// The engine's settings.
pub struct MediaWiki {
    api: String,
    language: String,
    article_path: String,
    namespace: u32,
    /// The API URL last asked: the hits' URLs are made on its host.
    asked: RefCell<Option<Url>>,
}

#[derive(Deserialize)]
struct Page {
    error: Option<ApiError>,
    query: Option<Query>,
}

#[derive(Deserialize)]
struct ApiError {
    code: String,
    #[serde(default)]
    info: String,
}

#[derive(Deserialize)]
struct Query {
    #[serde(default)]
    searchinfo: Option<SearchInfo>,
    search: Vec<Found>,
}

#[derive(Deserialize)]
struct SearchInfo {
    suggestion: Option<String>,
}

#[derive(Deserialize)]
struct Found {
    title: String,
    #[serde(default)]
    snippet: String,
}

/// A title as MediaWiki writes it in a URL: spaces as `_`, and
/// percent-encoded but for the characters its `wfUrlencode` keeps.
fn title_path(title: &str) -> String {
    let mut out = String::new();
    for b in title.replace(' ', "_").bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => out.push(b as char),
            b'-' | b'_' | b'.' | b'~' | b';' | b'@' | b'$' | b'!' | b'*' | b'(' | b')' | b','
            | b'/' | b':' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The text of an API snippet: tags removed, the entities it uses decoded.
fn snippet_text(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    let decoded = text
        .replace("&quot;", "\"")
        .replace("&#039;", "'")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&");
    helpers::collapse(&decoded)
}

fn string(config: &Value, key: &str) -> Result<Option<String>, String> {
    match config.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(other) => Err(format!(
            "mediawiki: `{key}` must be a non-empty string, not {other}"
        )),
    }
}

impl MediaWiki {
    fn api_url(&self, language: Option<&str>) -> Result<Url, String> {
        let lang = language.unwrap_or(&self.language);
        if !lang.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') || lang.is_empty() {
            return Err(format!("mediawiki: {lang:?} is not a language code"));
        }
        let url = self.api.replace("{lang}", &lang.to_ascii_lowercase());
        Url::parse(&url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| format!("mediawiki: `api` {url:?} is not an http or https URL"))
    }
}

impl SearchEngine for MediaWiki {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys(
            "mediawiki",
            &config,
            &["api", "language", "article_path", "namespace"],
        )?;
        let article_path = string(&config, "article_path")?.unwrap_or("/wiki/$1".into());
        if !article_path.contains("$1") {
            return Err(format!(
                "mediawiki: `article_path` must hold $1 where the title goes, as in \"/wiki/$1\", not {article_path:?}"
            ));
        }
        let namespace =
            match config.get("namespace") {
                None => 0,
                Some(v) => v.as_u64().filter(|n| *n < 10_000).ok_or_else(|| {
                    format!("mediawiki: `namespace` is a number such as 0, not {v}")
                })? as u32,
            };
        let engine = MediaWiki {
            api: string(&config, "api")?.unwrap_or("https://en.wikipedia.org/w/api.php".into()),
            language: string(&config, "language")?.unwrap_or("en".into()),
            article_path,
            namespace,
            asked: RefCell::new(None),
        };
        engine.api_url(None)?;
        Ok(engine)
    }

    fn supports(&self) -> OptionSupport {
        let s = OptionSupport::PAGE | OptionSupport::PHRASE | OptionSupport::EXCLUDE;
        if self.api.contains("{lang}") {
            s | OptionSupport::LANGUAGE
        } else {
            s
        }
    }

    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String> {
        let q = helpers::query_text(keywords, options, self.supports())
            .ok_or("mediawiki: no keywords to search for")?;
        let language = options
            .language
            .as_deref()
            .filter(|_| self.api.contains("{lang}"));
        let mut url = self.api_url(language)?;
        let limit = options.max_results.clamp(1, 500);
        url.query_pairs_mut()
            .append_pair("action", "query")
            .append_pair("list", "search")
            .append_pair("srsearch", &q)
            .append_pair("srlimit", &limit.to_string())
            .append_pair("sroffset", &((options.page.max(1) - 1) * limit).to_string())
            .append_pair("srnamespace", &self.namespace.to_string())
            .append_pair("srprop", "snippet")
            .append_pair("format", "json")
            .append_pair("formatversion", "2");
        *self.asked.borrow_mut() = Some(url.clone());
        Ok(url.to_string())
    }

    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Answer, String> {
        if !helpers::is_json(content_type) {
            return Err(format!(
                "mediawiki: the API answered {:?}, not JSON; is `api` the wiki's api.php?",
                helpers::media_type(content_type)
            ));
        }
        let page: Page = serde_json::from_slice(body)
            .map_err(|e| format!("mediawiki: the answer is not the search API's JSON: {e}"))?;
        if let Some(e) = page.error {
            return Err(format!(
                "mediawiki: the API refused the query: {}: {}",
                e.code, e.info
            ));
        }
        let query = page
            .query
            .ok_or("mediawiki: the answer has no `query`; is `api` the wiki's api.php?")?;
        let api = match self.asked.borrow().clone() {
            Some(u) => u,
            None => self.api_url(None)?,
        };
        let listed = query.search.into_iter().map(|f| {
            let path = self.article_path.replace("$1", &title_path(&f.title));
            (path, f.title, snippet_text(&f.snippet))
        });
        let hits = helpers::ranked(listed, Some(&api), 0);
        let suggestion = query
            .searchinfo
            .and_then(|i| i.suggestion)
            .map(|s| format!("did you mean: {s}?"))
            .unwrap_or_default();
        Ok(helpers::answer(hits, Some(suggestion)))
    }
}

spinneret_sdk::export_search_engine!(MediaWiki);

#[cfg(test)]
mod tests {
    use super::*;

    fn options(page: u32) -> SearchOptions {
        SearchOptions {
            max_results: 3,
            language: Some("de".into()),
            page,
            phrase: Some("web crawler".into()),
            exclude: vec!["seo".into()],
            site: Some("ignored.example".into()),
        }
    }

    #[test]
    fn builds_the_api_query() {
        let en = MediaWiki::configure(serde_json::json!({})).unwrap();
        assert_eq!(
            en.query_url(&["spider".into()], &options(2)).unwrap(),
            "https://en.wikipedia.org/w/api.php?action=query&list=search&srsearch=spider+%22web+crawler%22+-seo&srlimit=3&sroffset=3&srnamespace=0&srprop=snippet&format=json&formatversion=2"
        );
        let any = MediaWiki::configure(
            serde_json::json!({"api": "https://{lang}.wikipedia.org/w/api.php"}),
        )
        .unwrap();
        assert!(
            any.query_url(&["spider".into()], &options(1))
                .unwrap()
                .starts_with("https://de.wikipedia.org/w/api.php?")
        );
    }

    #[test]
    fn reads_the_search_answer() {
        let wiki = MediaWiki::configure(serde_json::json!({})).unwrap();
        let page = include_bytes!("../fixtures/search.json");
        let hits = spinneret_sdk::testing::hits(
            wiki.parse_results(page, "application/json; charset=utf-8"),
        );
        let got: Vec<(u32, &str, &str)> = hits
            .iter()
            .map(|h| (h.rank, h.url.as_str(), h.title.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    1,
                    "https://en.wikipedia.org/wiki/Web_crawler",
                    "Web crawler"
                ),
                (2, "https://en.wikipedia.org/wiki/Robots.txt", "Robots.txt"),
                (3, "https://en.wikipedia.org/wiki/MOMspider", "MOMspider"),
                (
                    4,
                    "https://en.wikipedia.org/wiki/C%2B%2B/CLI_%26_%22quotes%22%3F",
                    "C++/CLI & \"quotes\"?"
                ),
            ]
        );
        assert_eq!(
            hits[0].snippet,
            "A Web crawler, sometimes called a spider or spiderbot & often shortened to crawler, is an Internet bot"
        );
    }

    #[test]
    fn no_results_errors_and_other_pages() {
        let wiki = MediaWiki::configure(serde_json::json!({})).unwrap();
        let none = wiki
            .parse_results(
                include_bytes!("../fixtures/no-results.json"),
                "application/json",
            )
            .unwrap();
        assert!(
            matches!(&none, Answer::NoResults(w) if w == "did you mean: web crawler?"),
            "{none:?}"
        );
        let err = wiki
            .parse_results(include_bytes!("../fixtures/error.json"), "application/json")
            .unwrap_err();
        assert_eq!(
            err,
            "mediawiki: the API refused the query: nosrsearch: The \"srsearch\" parameter must be set."
        );
        assert!(
            wiki.parse_results(b"<html>", "text/html")
                .unwrap_err()
                .contains("api.php")
        );
    }

    #[test]
    fn configuration_is_checked() {
        for bad in [
            serde_json::json!({"api": "ftp://x/"}),
            serde_json::json!({"article_path": "/wiki/"}),
            serde_json::json!({"namespace": "main"}),
            serde_json::json!({"apí": "x"}),
        ] {
            assert!(MediaWiki::configure(bad.clone()).is_err(), "{bad}");
        }
    }
}
