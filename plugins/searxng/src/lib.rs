//! `searxng`: a search engine backed by a SearXNG instance. The query URL
//! asks the instance's `/search` endpoint for JSON
//! (`format=json`); the result page's `results` become ranked hits, and an
//! empty `results` the engine's "no results". Every advanced option is
//! mapped: the phrase, excluded words and site as the operators SearXNG
//! passes to its engines (`"…"`, `-word`, `site:`), the language and page
//! as its own parameters.
//!
//! Configuration: `base` (required: the instance's URL, e.g.
//! `https://searx.example/`), `categories` and `engines` (optional,
//! comma-separated, passed through), `safesearch` (0, 1 or 2).
//!
//! The instance must allow the JSON format: `search: formats: [html, json]`
//! in its `settings.yml`.

use serde::Deserialize;
use serde_json::Value;
use spinneret_sdk::search::*;
use spinneret_sdk::urls::Url;

/// The engine's settings.
pub struct Searxng {
    base: Url,
    categories: Option<String>,
    engines: Option<String>,
    safesearch: Option<u8>,
}

#[derive(Deserialize)]
struct Page {
    results: Vec<ResultEntry>,
    /// `[engine, why]` pairs of the engines that did not answer.
    #[serde(default)]
    unresponsive_engines: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct ResultEntry {
    url: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
}

fn text(config: &Value, key: &str) -> Result<Option<String>, String> {
    match config.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(other) => Err(format!(
            "searxng: `{key}` must be a non-empty string, not {other}"
        )),
    }
}

impl SearchEngine for Searxng {
    fn configure(config: Value) -> Result<Self, String> {
        const KEYS: [&str; 4] = ["base", "categories", "engines", "safesearch"];
        spinneret_sdk::settings::check_keys("searxng", &config, &KEYS)?;
        let base = text(&config, "base")?.ok_or(
            "searxng: set `base` to the SearXNG instance's URL, e.g. https://searx.example/",
        )?;
        let mut base =
            Url::parse(&base).map_err(|e| format!("searxng: `base` {base:?} is not a URL: {e}"))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(format!(
                "searxng: `base` must be an http or https URL, not {base}"
            ));
        }
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let safesearch = match config.get("safesearch") {
            None => None,
            Some(v) => match v.as_u64() {
                Some(n @ 0..=2) => Some(n as u8),
                _ => return Err(format!("searxng: `safesearch` must be 0, 1 or 2, not {v}")),
            },
        };
        Ok(Searxng {
            base,
            categories: text(&config, "categories")?,
            engines: text(&config, "engines")?,
            safesearch,
        })
    }

    fn supports(&self) -> OptionSupport {
        OptionSupport::LANGUAGE
            | OptionSupport::PAGE
            | OptionSupport::PHRASE
            | OptionSupport::EXCLUDE
            | OptionSupport::SITE
    }

    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String> {
        let q = helpers::query_text(keywords, options, self.supports())
            .ok_or("searxng: no keywords to search for")?;
        let mut url = self.base.join("search").map_err(|e| e.to_string())?;
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("q", &q).append_pair("format", "json");
            pairs.append_pair("pageno", &options.page.max(1).to_string());
            if let Some(l) = &options.language {
                pairs.append_pair("language", l);
            }
            if let Some(c) = &self.categories {
                pairs.append_pair("categories", c);
            }
            if let Some(e) = &self.engines {
                pairs.append_pair("engines", e);
            }
            if let Some(s) = self.safesearch {
                pairs.append_pair("safesearch", &s.to_string());
            }
        }
        Ok(url.to_string())
    }

    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Answer, String> {
        if !helpers::is_json(content_type) {
            return Err(format!(
                "searxng: the instance answered {:?}, not JSON; allow the JSON format in its \
                 settings.yml (search: formats: [html, json])",
                helpers::media_type(content_type)
            ));
        }
        let page: Page = serde_json::from_slice(body)
            .map_err(|e| format!("searxng: the result page is not SearXNG JSON: {e}"))?;
        let hits = helpers::ranked(
            page.results
                .into_iter()
                .filter_map(|r| Some((r.url?, r.title, r.content))),
            None,
            0,
        );
        let silent: Vec<String> = page
            .unresponsive_engines
            .iter()
            .map(|(engine, why)| format!("{engine} ({why})"))
            .collect();
        let said = if silent.is_empty() {
            String::new()
        } else {
            format!("engines that did not answer: {}", silent.join(", "))
        };
        Ok(helpers::answer(hits, Some(said)))
    }
}

spinneret_sdk::export_search_engine!(Searxng);

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Searxng {
        Searxng::configure(
            serde_json::json!({"base": "http://searx.test:8888/sx", "categories": "general"}),
        )
        .unwrap()
    }

    fn options(page: u32) -> SearchOptions {
        SearchOptions {
            max_results: 10,
            language: Some("en".into()),
            page,
            phrase: None,
            exclude: Vec::new(),
            site: None,
        }
    }

    #[test]
    fn builds_the_query_url() {
        assert_eq!(
            engine()
                .query_url(
                    &["web".into(), " maintenance & robots ".into()],
                    &options(2)
                )
                .unwrap(),
            "http://searx.test:8888/sx/search?q=web+maintenance+%26+robots&format=json&pageno=2&language=en&categories=general"
        );
        assert_eq!(
            engine().query_url(&[" ".into()], &options(1)).unwrap_err(),
            "searxng: no keywords to search for"
        );
    }

    #[test]
    fn parses_a_result_page_into_ranked_hits() {
        let body = br#"{"query": "momspider", "number_of_results": 3, "results": [
            {"url": "https://www.ics.uci.edu/MOMspider/", "title": "MOMspider\n home", "content": "A  robot", "engine": "x", "score": 3.0},
            {"url": "javascript:alert(1)", "title": "bad"},
            {"title": "no url"},
            {"url": "https://www.ics.uci.edu/MOMspider/", "title": "duplicate"},
            {"url": "http://example.org/b", "title": "B"}
        ], "suggestions": []}"#;
        let hits = spinneret_sdk::testing::hits(
            engine().parse_results(body, "application/json; charset=utf-8"),
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
                    "https://www.ics.uci.edu/MOMspider/",
                    "MOMspider home",
                    "A robot"
                ),
                (2, "http://example.org/b", "B", "")
            ]
        );
    }

    #[test]
    fn maps_the_advanced_options_as_operators() {
        let mut o = options(1);
        o.phrase = Some("link rot".into());
        o.exclude = vec!["seo".into()];
        o.site = Some("w3.org".into());
        assert_eq!(
            engine().query_url(&["web".into()], &o).unwrap(),
            "http://searx.test:8888/sx/search?q=web+%22link+rot%22+-seo+site%3Aw3.org&format=json&pageno=1&language=en&categories=general"
        );
    }

    #[test]
    fn an_empty_result_list_is_the_engines_no_results() {
        let quiet = engine()
            .parse_results(br#"{"query": "zz", "results": []}"#, "application/json")
            .unwrap();
        assert!(matches!(quiet, Answer::NoResults(w) if w.is_empty()));
        let body = br#"{"results": [], "unresponsive_engines": [["duckduckgo", "timeout"]]}"#;
        let silent = engine().parse_results(body, "application/json").unwrap();
        assert!(
            matches!(&silent, Answer::NoResults(w) if w == "engines that did not answer: duckduckgo (timeout)"),
            "{silent:?}"
        );
    }

    #[test]
    fn an_html_answer_says_how_to_enable_json() {
        let err = engine()
            .parse_results(b"<html></html>", "text/html")
            .unwrap_err();
        assert!(err.contains("search: formats: [html, json]"), "{err}");
        let err = engine()
            .parse_results(b"{}", "application/json")
            .unwrap_err();
        assert!(
            err.starts_with(
                "searxng: the result page is not SearXNG JSON: missing field `results`"
            ),
            "{err}"
        );
    }

    #[test]
    fn configuration_is_checked() {
        let err = Searxng::configure(serde_json::json!({})).err().unwrap();
        assert!(err.starts_with("searxng: set `base`"), "{err}");
        assert!(Searxng::configure(serde_json::json!({"base": "ftp://x/"})).is_err());
        assert!(
            Searxng::configure(serde_json::json!({"base": "http://x/", "safesearch": 5})).is_err()
        );
        assert!(Searxng::configure(serde_json::json!({"base": "http://x/", "bse": 1})).is_err());
    }
}
