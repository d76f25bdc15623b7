// The worlds new in 0.3.0 (search engine, collection index), as the 0.3
// and 0.4 fixtures both export them: included by each after its bindings,
// with `search_engine_api`, `collection_index_api`, `kv`, `PluginError`
// and `Legacy` in scope.

impl search_engine_api::Guest for Legacy {
    fn configure(config: String) -> Result<(), PluginError> {
        configure_base(&config)
    }
    fn supports() -> search_engine_api::OptionSupport {
        search_engine_api::OptionSupport::LANGUAGE | search_engine_api::OptionSupport::PHRASE
    }
    fn query_url(
        keywords: Vec<String>,
        options: search_engine_api::SearchOptions,
    ) -> Result<String, PluginError> {
        let mut q: Vec<String> = keywords
            .iter()
            .flat_map(|k| k.split_whitespace())
            .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect())
            .collect();
        if let Some(phrase) = &options.phrase {
            let words: Vec<String> = phrase
                .split_whitespace()
                .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect())
                .collect();
            q.push(format!("%22{}%22", words.join("+")));
        }
        let lang = options
            .language
            .map(|l| {
                format!(
                    "&lang={}",
                    l.replace(|c: char| !c.is_ascii_alphabetic(), "")
                )
            })
            .unwrap_or_default();
        Ok(BASE.with(|b| {
            format!(
                "{}find?q={}&n={}{lang}",
                b.borrow(),
                q.join("+"),
                options.max_results
            )
        }))
    }
    fn parse_results(
        body: Vec<u8>,
        _content_type: String,
    ) -> Result<search_engine_api::Answer, PluginError> {
        let text = String::from_utf8_lossy(&body);
        if text.trim().eq_ignore_ascii_case("no results") {
            return Ok(search_engine_api::Answer::NoResults(
                text.trim().to_string(),
            ));
        }
        Ok(search_engine_api::Answer::Hits(
            text.lines()
                .filter_map(|l| l.split_once('\t'))
                .enumerate()
                .map(|(i, (url, title))| search_engine_api::Hit {
                    rank: i as u32 + 1,
                    url: url.to_string(),
                    title: title.to_string(),
                    snippet: String::new(),
                })
                .collect(),
        ))
    }
}

impl collection_index_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        Ok(())
    }
    fn write_index(
        run: collection_index_api::Collection,
        pages: Vec<collection_index_api::MainPage>,
        gone: Vec<collection_index_api::GonePage>,
        paths: Vec<String>,
    ) -> Result<(), PluginError> {
        let first = pages.first().map_or_else(String::new, |p| {
            let change = match p.change {
                collection_index_api::Change::New => "new",
                collection_index_api::Change::Changed => "changed",
                collection_index_api::Change::Unchanged => "unchanged",
                collection_index_api::Change::NotRetrieved => "not-retrieved",
                collection_index_api::Change::Carried => "carried",
            };
            format!("{} ({change})", p.url)
        });
        let line = format!(
            "profile={} pages={} gone={} paths={} first={first}",
            run.profile,
            pages.len(),
            gone.len(),
            paths.join(","),
        );
        kv::set("index", line.as_bytes()).map_err(|message| PluginError { message })
    }
}
