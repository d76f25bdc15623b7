//! `duckduckgo`: DuckDuckGo's HTML results page, the one made for browsers
//! without JavaScript (`https://html.duckduckgo.com/html/?q=…`). Its result
//! links point through DuckDuckGo's redirector (`//duckduckgo.com/l/?uddg=…`);
//! the hits are the URLs they lead to. Ads (`result--ad`) are left out.
//! A page saying "No results." is the engine's "no results".
//!
//! Advanced options: the phrase, excluded words and site as DuckDuckGo's
//! operators (`"…"`, `-word`, `site:`). The language is mapped to a region
//! only when configured (`region`, e.g. `uk-en`), since DuckDuckGo asks for
//! a region, not a language; further pages are not (the HTML page asks
//! for them with a form POST).
//!
//! Configuration: `base` (default `https://html.duckduckgo.com/html/`),
//! `region` (DuckDuckGo's `kl`, e.g. `us-en`), `safesearch` (`strict`,
//! `moderate` or `off`). It needs no network grant: the host fetches the
//! query URL through its polite fetcher. DuckDuckGo's robots.txt applies:
//! where it disallows the results page to robots, spinneret reports the
//! query as refused and does not ask.

use scraper::{ElementRef, Html, Selector};
use serde_json::Value;
use spinneret_sdk::search::*;
use spinneret_sdk::urls::Url;

/// The engine's settings.
pub struct DuckDuckGo {
    base: Url,
    region: Option<String>,
    safesearch: Option<&'static str>,
}

fn text_of(e: ElementRef<'_>) -> String {
    helpers::collapse(&e.text().collect::<String>())
}

/// Where a result link leads: the `uddg` parameter of DuckDuckGo's
/// redirector, or the link itself.
fn target(href: &str, page: &Url) -> Option<String> {
    let url = page.join(href.trim()).ok()?;
    let redirector = url
        .host_str()
        .is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    if redirector && url.path() == "/l/" {
        return url
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned());
    }
    (!redirector).then(|| url.to_string())
}

impl SearchEngine for DuckDuckGo {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys(
            "duckduckgo",
            &config,
            &["base", "region", "safesearch"],
        )?;
        let base = config
            .get("base")
            .map(|v| v.as_str().ok_or("duckduckgo: `base` must be a URL string"))
            .transpose()?
            .unwrap_or("https://html.duckduckgo.com/html/");
        let base = Url::parse(base)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| format!("duckduckgo: `base` {base:?} is not an http or https URL"))?;
        let region = match config.get("region") {
            None => None,
            Some(Value::String(r)) if r.len() == 5 && r.as_bytes()[2] == b'-' => Some(r.clone()),
            Some(other) => {
                return Err(format!(
                    "duckduckgo: `region` is a DuckDuckGo region such as \"us-en\" or \"de-de\", not {other}"
                ));
            }
        };
        let safesearch = match config.get("safesearch").and_then(Value::as_str) {
            None if config.get("safesearch").is_none() => None,
            Some("strict") => Some("1"),
            Some("moderate") => Some("-1"),
            Some("off") => Some("-2"),
            _ => {
                return Err(
                    "duckduckgo: `safesearch` is \"strict\", \"moderate\" or \"off\"".into(),
                );
            }
        };
        Ok(DuckDuckGo {
            base,
            region,
            safesearch,
        })
    }

    fn supports(&self) -> OptionSupport {
        let mut s = OptionSupport::PHRASE | OptionSupport::EXCLUDE | OptionSupport::SITE;
        if self.region.is_some() {
            s = s | OptionSupport::LANGUAGE;
        }
        s
    }

    fn query_url(&self, keywords: &[String], options: &SearchOptions) -> Result<String, String> {
        let q = helpers::query_text(keywords, options, self.supports())
            .ok_or("duckduckgo: no keywords to search for")?;
        let mut url = self.base.clone();
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("q", &q);
            if let Some(r) = &self.region {
                pairs.append_pair("kl", r);
            }
            if let Some(p) = self.safesearch {
                pairs.append_pair("kp", p);
            }
        }
        Ok(url.to_string())
    }

    fn parse_results(&self, body: &[u8], content_type: &str) -> Result<Answer, String> {
        let media = helpers::media_type(content_type);
        if media != "text/html" {
            return Err(format!(
                "duckduckgo: the page is {media:?}, not the HTML results page"
            ));
        }
        let html = Html::parse_document(&String::from_utf8_lossy(body));
        let sel = |s: &str| Selector::parse(s).expect("a valid selector");
        let results = sel("div.result");
        let title = sel("a.result__a");
        let snippet = sel(".result__snippet");
        let no_results = sel(".no-results");
        if html.select(&sel("#links, .results")).next().is_none() {
            return Err(
                "duckduckgo: the page has no results list; DuckDuckGo may have answered with a \
                 challenge page (too many queries) or changed its HTML"
                    .into(),
            );
        }
        let listed = html.select(&results).filter_map(|r| {
            let classes: Vec<&str> = r.value().classes().collect();
            if classes.contains(&"result--ad") {
                return None;
            }
            let a = r.select(&title).next()?;
            let url = target(a.value().attr("href")?, &self.base)?;
            let words = r.select(&snippet).next().map(text_of).unwrap_or_default();
            Some((url, text_of(a), words))
        });
        let hits = helpers::ranked(listed, None, 0);
        let said = html.select(&no_results).next().map(text_of);
        Ok(helpers::answer(hits, said))
    }
}

spinneret_sdk::export_search_engine!(DuckDuckGo);

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(config: Value) -> DuckDuckGo {
        DuckDuckGo::configure(config).unwrap()
    }

    fn options() -> SearchOptions {
        SearchOptions {
            max_results: 10,
            language: Some("en".into()),
            page: 1,
            phrase: Some("robots exclusion".into()),
            exclude: vec!["seo".into()],
            site: Some("robotstxt.org".into()),
        }
    }

    #[test]
    fn builds_the_query_url_with_its_operators() {
        assert_eq!(
            engine(serde_json::json!({}))
                .query_url(&["standard".into()], &options())
                .unwrap(),
            "https://html.duckduckgo.com/html/?q=standard+%22robots+exclusion%22+-seo+site%3Arobotstxt.org"
        );
        let regional = engine(serde_json::json!({"region": "uk-en", "safesearch": "strict"}));
        assert_eq!(
            regional
                .query_url(
                    &["a".into()],
                    &SearchOptions {
                        phrase: None,
                        exclude: vec![],
                        site: None,
                        ..options()
                    }
                )
                .unwrap(),
            "https://html.duckduckgo.com/html/?q=a&kl=uk-en&kp=1"
        );
    }

    #[test]
    fn reads_the_results_page() {
        let page = include_bytes!("../fixtures/results.html");
        let hits = spinneret_sdk::testing::hits(
            engine(serde_json::json!({})).parse_results(page, "text/html; charset=UTF-8"),
        );
        let got: Vec<(u32, &str, &str)> = hits
            .iter()
            .map(|h| (h.rank, h.url.as_str(), h.title.as_str()))
            .collect();
        // The ad is left out, the redirector's links lead where they point.
        assert_eq!(
            got,
            [
                (
                    1,
                    "https://en.wikipedia.org/wiki/Robots.txt",
                    "robots.txt - Wikipedia"
                ),
                (
                    2,
                    "https://www.robotstxt.org/orig.html",
                    "A Standard for Robot Exclusion"
                ),
                (
                    3,
                    "https://www.rfc-editor.org/rfc/rfc9309.html",
                    "RFC 9309: Robots Exclusion Protocol"
                ),
                (
                    4,
                    "https://en.wikipedia.org/wiki/Robots.txt#History",
                    "robots.txt history"
                ),
            ]
        );
        assert_eq!(
            hits[0].snippet,
            "robots.txt is the filename used for implementing the Robots Exclusion Protocol, a standard used by websites & crawlers."
        );
    }

    #[test]
    fn no_results_and_other_pages() {
        let page = include_bytes!("../fixtures/no-results.html");
        let answer = engine(serde_json::json!({}))
            .parse_results(page, "text/html")
            .unwrap();
        assert!(
            matches!(&answer, Answer::NoResults(w) if w == "No results."),
            "{answer:?}"
        );
        let challenge =
            b"<html><body><form id=\"challenge-form\">Are you a robot?</form></body></html>";
        let err = engine(serde_json::json!({}))
            .parse_results(challenge, "text/html")
            .unwrap_err();
        assert!(err.contains("challenge page"), "{err}");
        assert!(
            engine(serde_json::json!({}))
                .parse_results(b"{}", "application/json")
                .is_err()
        );
    }

    #[test]
    fn configuration_is_checked() {
        for bad in [
            serde_json::json!({"region": "english"}),
            serde_json::json!({"safesearch": "on"}),
            serde_json::json!({"base": "ftp://x/"}),
            serde_json::json!({"regoin": "us-en"}),
        ] {
            assert!(DuckDuckGo::configure(bad.clone()).is_err(), "{bad}");
        }
    }
}
