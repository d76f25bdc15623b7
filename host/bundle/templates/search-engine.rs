//! {name}: a spinneret search engine for a service answering
//! `BASE?q=QUERY&page=N` with JSON
//! `{"results": [{"url", "title", "snippet"}], "message": "…"}`
//! (change `query_url` and `parse_results` to your engine's own format).
//! The query holds the keywords and the advanced options as the usual
//! operators: `"exact phrase"`, `-word`, `site:host`.
//!
//! Configuration: `base` (required).
//!
//! `cargo test` reads `fixtures/results.json`, a result page as the engine
//! sends it: replace it with one captured from your engine (save what its
//! query URL answers) and keep the test's expectations in step.

use spinneret_sdk::search::*;
use spinneret_sdk::urls::Url;

/// The engine's settings.
pub struct Plugin {
    base: Url,
}

impl SearchEngine for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let base = config
            .get("base")
            .and_then(|v| v.as_str())
            .ok_or("{name}: set `base` to the search service's URL")?;
        let base = Url::parse(base).map_err(|e| format!("{name}: `base` is not a URL: {e}"))?;
        Ok(Plugin { base })
    }

    fn supports(&self) -> OptionSupport {
        OptionSupport::PAGE | OptionSupport::PHRASE | OptionSupport::EXCLUDE | OptionSupport::SITE
    }

    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String> {
        let q = helpers::query_text(keywords, options, self.supports())
            .ok_or("{name}: no keywords to search for")?;
        let mut url = self.base.clone();
        url.query_pairs_mut()
            .append_pair("q", &q)
            .append_pair("page", &options.page.max(1).to_string());
        Ok(url.to_string())
    }

    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Answer, String> {
        if !helpers::is_json(content_type) {
            return Err(format!(
                "{name}: the engine answered {}, not JSON",
                helpers::media_type(content_type)
            ));
        }
        let page: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| format!("{name}: not JSON: {e}"))?;
        let results = page["results"]
            .as_array()
            .ok_or("{name}: the page has no `results` list")?;
        let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
        let hits = helpers::ranked(
            results.iter().filter_map(|r| {
                Some((r["url"].as_str()?.to_string(), text(&r["title"]), text(&r["snippet"])))
            }),
            Some(&self.base),
            0,
        );
        // An empty list is the engine's "no results", in its words if it gave any.
        Ok(helpers::answer(hits, Some(text(&page["message"]))))
    }
}

spinneret_sdk::export_search_engine!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Plugin {
        Plugin::configure(serde_json::json!({"base": "http://search.example/api"})).unwrap()
    }

    #[test]
    fn builds_the_query_with_its_options() {
        let mut options = SearchOptions {
            max_results: 10,
            language: None,
            page: 2,
            phrase: None,
            exclude: Vec::new(),
            site: None,
        };
        assert_eq!(
            engine().query_url(&["a".into(), "b".into()], &options).unwrap(),
            "http://search.example/api?q=a+b&page=2"
        );
        options.phrase = Some("link rot".into());
        options.site = Some("example.org".into());
        assert_eq!(
            engine().query_url(&["a".into()], &options).unwrap(),
            "http://search.example/api?q=a+%22link+rot%22+site%3Aexample.org&page=2"
        );
    }

    #[test]
    fn reads_the_fixture_result_page() {
        let page = include_bytes!("../fixtures/results.json");
        let hits = spinneret_sdk::testing::hits(engine().parse_results(page, "application/json"));
        let got: Vec<(u32, &str, &str)> = hits
            .iter()
            .map(|h| (h.rank, h.url.as_str(), h.title.as_str()))
            .collect();
        // The `javascript:` result is dropped, the relative one resolved.
        assert_eq!(
            got,
            [
                (1, "https://www.w3.org/Robots/", "Robots exclusion"),
                (2, "http://search.example/out/momspider", "MOMspider")
            ]
        );
    }

    #[test]
    fn an_empty_list_is_no_results_and_html_is_an_error() {
        let none = br#"{"results": [], "message": "Nothing matched."}"#;
        assert!(matches!(
            engine().parse_results(none, "application/json").unwrap(),
            Answer::NoResults(words) if words == "Nothing matched."
        ));
        assert!(engine().parse_results(b"<html>", "text/html").is_err());
    }
}
