//! Search engines (the `search-engine` world): the URL that asks an engine
//! for keywords (with the advanced options it maps), and what its result
//! page says: ranked hits, or the engine's "no results".
//!
//! Implement [`SearchEngine`] and call
//! [`export_search_engine!`](crate::export_search_engine).

/// The generated bindings of the `search-engine` world.
#[allow(missing_docs, clippy::all)]
pub mod bindings {
    kind_bindings!(
        "search-engine",
        "export_search_engine_bindings",
        "spinneret_sdk::search::bindings"
    );
}

pub use crate::types::*;
pub use bindings::exports::spinneret::plugin::search_engine_api::{
    Answer, Hit, OptionSupport, SearchOptions,
};

/// A search engine.
pub trait SearchEngine: Sized + 'static {
    /// Build the engine from its configuration (e.g. its base URL); an error
    /// is shown to the user.
    fn configure(config: serde_json::Value) -> Result<Self, String>;
    /// Which of [`SearchOptions`]' advanced options the engine maps (the
    /// host tells the user which ones an engine ignores).
    fn supports(&self) -> OptionSupport;
    /// The URL that asks the engine for all of `keywords` (one may hold
    /// several words, as a user wrote them).
    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String>;
    /// What a result page says: [`Answer::Hits`] best first, or
    /// [`Answer::NoResults`] when the engine said it found nothing. An error
    /// means the page is not a result page at all.
    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Answer, String>;
}

/// Export a [`SearchEngine`] implementation as the component's `search-engine-api`.
#[macro_export]
macro_rules! export_search_engine {
    ($t:ty) => {
        #[doc(hidden)]
        pub struct __SpinneretSearchExport;

        $crate::__plugin_state!($t, $crate::search::SearchEngine);

        impl $crate::search::bindings::exports::spinneret::plugin::search_engine_api::Guest
            for __SpinneretSearchExport
        {
            fn configure(config: String) -> ::std::result::Result<(), $crate::types::PluginError> {
                __spinneret_configure(&config)
            }
            fn supports() -> $crate::search::OptionSupport {
                __spinneret_with(|e| $crate::search::SearchEngine::supports(e))
                    .unwrap_or($crate::search::OptionSupport::empty())
            }
            fn query_url(
                keywords: ::std::vec::Vec<String>,
                options: $crate::search::SearchOptions,
            ) -> ::std::result::Result<String, $crate::types::PluginError> {
                __spinneret_with(|e| {
                    $crate::search::SearchEngine::query_url(e, &keywords, &options)
                })?
                .map_err(|message| $crate::types::PluginError { message })
            }
            fn parse_results(
                body: ::std::vec::Vec<u8>,
                content_type: String,
            ) -> ::std::result::Result<$crate::search::Answer, $crate::types::PluginError> {
                __spinneret_with(|e| {
                    $crate::search::SearchEngine::parse_results(e, &body, &content_type)
                })?
                .map_err(|message| $crate::types::PluginError { message })
            }
        }

        #[cfg(target_arch = "wasm32")]
        $crate::search::bindings::export_search_engine_bindings!(__SpinneretSearchExport);
    };
}

/// Helpers every engine needs: the query text with the usual operators, the
/// media type of an answer, and hits ranked from what a page listed.
pub mod helpers {
    use super::{Answer, Hit, OptionSupport, SearchOptions};
    use url::Url;

    /// Also here for engines: whitespace collapsed, a Content-Type's media type.
    pub use crate::html::collapse;
    pub use crate::http::media_type;

    /// Whether `supported` holds `option`.
    pub fn maps(supported: OptionSupport, option: OptionSupport) -> bool {
        supported.bits() & option.bits() == option.bits()
    }

    /// The keywords joined with spaces, with the operators most web engines
    /// read (Google's syntax, which DuckDuckGo, Bing, SearXNG and Marginalia
    /// share): `"exact phrase"`, `-word`, and, if `site` is among
    /// `supported`, `site:host`. Options not in `supported` are left out.
    /// `None` if nothing is left to search for.
    pub fn query_text(
        keywords: &[String],
        options: &SearchOptions,
        supported: OptionSupport,
    ) -> Option<String> {
        let mut parts: Vec<String> = keywords
            .iter()
            .flat_map(|k| k.split_whitespace())
            .map(str::to_string)
            .collect();
        if parts.is_empty() && options.phrase.is_none() {
            return None;
        }
        if maps(supported, OptionSupport::PHRASE)
            && let Some(phrase) = options.phrase.as_deref().map(collapse)
        {
            let phrase = phrase.replace('"', "");
            if !phrase.is_empty() {
                parts.push(format!("\"{phrase}\""));
            }
        }
        if maps(supported, OptionSupport::EXCLUDE) {
            for word in options.exclude.iter().flat_map(|w| w.split_whitespace()) {
                parts.push(format!("-{}", word.trim_start_matches('-')));
            }
        }
        if maps(supported, OptionSupport::SITE)
            && let Some(site) = options.site.as_deref().map(str::trim)
            && !site.is_empty()
        {
            parts.push(format!("site:{site}"));
        }
        let text = parts.join(" ");
        (!text.trim().is_empty()).then_some(text)
    }

    /// Whether `content_type` is JSON (`application/json` or `…+json`).
    pub fn is_json(content_type: &str) -> bool {
        let t = media_type(content_type);
        t == "application/json" || t.ends_with("+json")
    }

    /// The hits of a page from what it listed, in its order, as (URL,
    /// title, snippet): URLs resolved against `base` if given, only http
    /// and https kept, each URL once, whitespace collapsed, ranked from 1,
    /// at most `max` (0 for no limit).
    pub fn ranked(
        listed: impl IntoIterator<Item = (String, String, String)>,
        base: Option<&Url>,
        max: u32,
    ) -> Vec<Hit> {
        let mut seen = std::collections::HashSet::new();
        let mut hits = Vec::new();
        for (url, title, snippet) in listed {
            let parsed = match base {
                Some(b) => b.join(url.trim()),
                None => Url::parse(url.trim()),
            };
            let Some(url) = parsed
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
            else {
                continue;
            };
            if !seen.insert(url.to_string()) {
                continue;
            }
            hits.push(Hit {
                rank: hits.len() as u32 + 1,
                url: url.to_string(),
                title: collapse(&title),
                snippet: collapse(&snippet),
            });
            if max != 0 && hits.len() as u32 >= max {
                break;
            }
        }
        hits
    }

    /// The answer of a page whose list of results was read: its hits, or,
    /// if it listed none and `said_none` holds the engine's words (or an
    /// empty string for a plainly empty list), the engine's "no results".
    pub fn answer(hits: Vec<Hit>, said_none: Option<String>) -> Answer {
        match said_none {
            Some(words) if hits.is_empty() => Answer::NoResults(collapse(&words)),
            _ => Answer::Hits(hits),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn all() -> OptionSupport {
            OptionSupport::LANGUAGE
                | OptionSupport::PAGE
                | OptionSupport::PHRASE
                | OptionSupport::EXCLUDE
                | OptionSupport::SITE
        }

        fn options() -> SearchOptions {
            SearchOptions {
                max_results: 10,
                language: None,
                page: 1,
                phrase: Some(" web  \"maintenance\" ".into()),
                exclude: vec!["spam".into(), "-ads".into()],
                site: Some("example.org".into()),
            }
        }

        #[test]
        fn query_text_writes_the_operators_an_engine_supports() {
            let kw = ["robots".to_string(), " exclusion  standard".to_string()];
            assert_eq!(
                query_text(&kw, &options(), all()).unwrap(),
                "robots exclusion standard \"web maintenance\" -spam -ads site:example.org"
            );
            assert_eq!(
                query_text(&kw, &options(), OptionSupport::PHRASE).unwrap(),
                "robots exclusion standard \"web maintenance\""
            );
            let mut none = options();
            none.phrase = None;
            assert_eq!(query_text(&[" ".into()], &none, all()), None);
        }

        #[test]
        fn ranked_keeps_web_urls_once_in_order() {
            let base = Url::parse("http://engine.test/search?q=x").unwrap();
            let hits = ranked(
                [
                    ("/r/1".into(), " One\n".into(), "a  b".into()),
                    ("javascript:alert(1)".into(), "bad".into(), String::new()),
                    ("http://engine.test/r/1".into(), "dup".into(), String::new()),
                    ("https://other.test/".into(), "Two".into(), String::new()),
                    ("https://third.test/".into(), "Three".into(), String::new()),
                ],
                Some(&base),
                2,
            );
            let got: Vec<_> = hits
                .iter()
                .map(|h| (h.rank, h.url.as_str(), h.title.as_str(), h.snippet.as_str()))
                .collect();
            assert_eq!(
                got,
                [
                    (1, "http://engine.test/r/1", "One", "a b"),
                    (2, "https://other.test/", "Two", "")
                ]
            );
            assert!(
                matches!(answer(Vec::new(), Some(" none\n".into())), Answer::NoResults(w) if w == "none")
            );
            assert!(matches!(answer(Vec::new(), None), Answer::Hits(h) if h.is_empty()));
        }
    }
}
