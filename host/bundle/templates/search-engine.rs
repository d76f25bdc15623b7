//! {name}: a spinneret search engine for a service answering
//! `BASE?q=KEYWORDS&page=N` with JSON `{"results": [{"url", "title", "snippet"}]}`.
//!
//! Configuration: `base` (required).

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

    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String> {
        let mut url = self.base.clone();
        url.query_pairs_mut()
            .append_pair("q", &keywords.join(" "))
            .append_pair("page", &options.page.max(1).to_string());
        Ok(url.to_string())
    }

    fn parse_results(&self, body: &[u8], _content_type: &str) -> Result<Vec<Hit>, String> {
        let page: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| format!("{name}: not JSON: {e}"))?;
        let results = page["results"].as_array().ok_or("{name}: no `results` list")?;
        Ok(results
            .iter()
            .filter_map(|r| Some((r["url"].as_str()?, r)))
            .enumerate()
            .map(|(i, (url, r))| Hit {
                rank: i as u32 + 1,
                url: url.to_string(),
                title: r["title"].as_str().unwrap_or("").to_string(),
                snippet: r["snippet"].as_str().unwrap_or("").to_string(),
            })
            .collect())
    }
}

spinneret_sdk::export_search_engine!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_parses() {
        let e = Plugin::configure(serde_json::json!({"base": "http://search.example/api"})).unwrap();
        let opts = SearchOptions { max_results: 10, language: None, page: 1 };
        assert_eq!(
            e.query_url(&["a".into(), "b".into()], &opts).unwrap(),
            "http://search.example/api?q=a+b&page=1"
        );
        let hits = e
            .parse_results(br#"{"results": [{"url": "http://x.example/", "title": "X"}]}"#, "application/json")
            .unwrap();
        assert_eq!((hits[0].rank, hits[0].url.as_str()), (1, "http://x.example/"));
    }
}
