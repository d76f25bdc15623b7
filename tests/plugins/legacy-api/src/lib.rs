//! A plugin built against `spinneret:plugin@0.2.0`, as a third party's
//! component shared as a bundle before 0.3.0 was released would be: its
//! bindings come straight from `wit/since_v0.2.0` (not the SDK, which
//! follows the newest API). It exports every 0.2 plugin interface at once,
//! so one component exercises each world's 0.2 arm in the host; it imports
//! only what every world's linker offers (`log`, `kv`). The search engine
//! comes first, so the host identifies the component as one (`spinneret
//! query` runs it).
//!
//! What each part does, so the tests can tell it ran:
//! - reporter: counts what it is handed and, at `finish`, stores
//!   `results=R documents=D findings=F roles=…` under the kv key `report`;
//! - detector: needs references; a URL whose content hash changed is a
//!   `legacy-changed` warning naming how many references it has now;
//! - policy: uses the task and depth; avoids `/private/`, makes images
//!   leaves below depth 1;
//! - fetch hook: vetoes URLs holding `veto`, adds `x-legacy: 0.2`, calls a
//!   200 whose body holds "not found" broken;
//! - parser: reads `text/uri-list` (one URL a line, `#` comments);
//! - search engine: asks `BASE/find?q=…&n=N` and reads `URL<TAB>TITLE`
//!   lines; `base` is its configuration.

// wit-bindgen's exports are `#[export_name]` functions, which the workspace's
// `unsafe_code` lint counts as unsafe; the SDK's plugins get them from the
// SDK's macros, this one straight from wit-bindgen.
#![allow(unsafe_code, missing_docs)]

wit_bindgen::generate!({
    inline: "
        package test:legacy;
        world legacy {
            import spinneret:plugin/log@0.2.0;
            import spinneret:plugin/kv@0.2.0;
            export spinneret:plugin/search-engine-api@0.2.0;
            export spinneret:plugin/reporter-api@0.2.0;
            export spinneret:plugin/detector-api@0.2.0;
            export spinneret:plugin/policy-api@0.2.0;
            export spinneret:plugin/fetch-hook-api@0.2.0;
            export spinneret:plugin/parser-api@0.2.0;
        }
    ",
    path: "../../../wit/since_v0.2.0",
    world: "legacy",
    generate_all,
});

use exports::spinneret::plugin::{
    detector_api, fetch_hook_api, parser_api, policy_api, reporter_api, search_engine_api,
};
use spinneret::plugin::types::{Category, PluginError, RefKind, Reference, Severity};
use spinneret::plugin::{kv, log};
use std::cell::RefCell;

struct Legacy;

#[derive(Default)]
struct Tally {
    results: u64,
    documents: u64,
    findings: u64,
    roles: Vec<String>,
}

thread_local! {
    static TALLY: RefCell<Tally> = RefCell::new(Tally::default());
    static BASE: RefCell<String> = RefCell::new("http://engine.test/".into());
}

fn configure_base(config: &str) -> Result<(), PluginError> {
    // The configuration is a JSON object; this plugin reads one string key
    // without a JSON parser, as a minimal third-party plugin might.
    if let Some(rest) = config.split("\"base\"").nth(1) {
        let value = rest.split('"').nth(1).unwrap_or_default();
        if !value.starts_with("http") {
            return Err(PluginError {
                message: format!("legacy: `base` must be an http URL, not {value:?}"),
            });
        }
        BASE.with(|b| *b.borrow_mut() = value.to_string());
    }
    Ok(())
}

impl reporter_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        TALLY.with(|t| *t.borrow_mut() = Tally::default());
        Ok(())
    }
    fn begin(
        _run: spinneret::plugin::types::RunInfo,
        task: spinneret::plugin::types::TaskInfo,
        counts: reporter_api::TaskCounts,
    ) -> Result<reporter_api::Wants, PluginError> {
        log::log(
            log::Level::Info,
            &format!("task {} with {} URLs", task.name, counts.urls),
        );
        Ok(reporter_api::Wants::RESULTS
            | reporter_api::Wants::DOCUMENTS
            | reporter_api::Wants::FINDINGS)
    }
    fn on_results(results: Vec<reporter_api::Reached>) {
        TALLY.with(|t| {
            let mut t = t.borrow_mut();
            t.results += results.len() as u64;
            for r in results {
                let role = match r.role {
                    reporter_api::Role::Document => "document",
                    reporter_api::Role::Leaf => "leaf",
                    reporter_api::Role::Avoided => "avoided",
                    reporter_api::Role::NotChecked => "not-checked",
                };
                t.roles.push(role.to_string());
            }
        });
    }
    fn on_documents(documents: Vec<reporter_api::TaskDocument>) {
        TALLY.with(|t| t.borrow_mut().documents += documents.len() as u64);
    }
    fn on_findings(findings: Vec<reporter_api::TaskFinding>) {
        TALLY.with(|t| t.borrow_mut().findings += findings.len() as u64);
    }
    fn finish() -> Result<(), PluginError> {
        let line = TALLY.with(|t| {
            let t = t.borrow();
            format!(
                "results={} documents={} findings={} roles={}",
                t.results,
                t.documents,
                t.findings,
                t.roles.join(",")
            )
        });
        kv::set("report", line.as_bytes()).map_err(|message| PluginError { message })
    }
}

impl detector_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        Ok(())
    }
    fn declare() -> detector_api::Needs {
        detector_api::Needs::REFERENCES
    }
    fn compare(
        _task: spinneret::plugin::types::TaskInfo,
        _now: i64,
        comparisons: Vec<detector_api::Comparison>,
    ) -> Vec<spinneret::plugin::types::Finding> {
        comparisons
            .into_iter()
            .filter_map(|c| {
                let before = c.previous?.outcome.content_hash;
                let now = &c.current.outcome;
                (before.is_some() && before != now.content_hash).then(|| {
                    let refs = c.current.document.map_or(0, |d| d.references.len());
                    spinneret::plugin::types::Finding {
                        kind: "legacy-changed".into(),
                        url: now.url.clone(),
                        referrer: None,
                        message: format!("changed; {refs} references now"),
                        severity: Severity::Warning,
                        source: String::new(),
                    }
                })
            })
            .collect()
    }
}

impl policy_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        Ok(())
    }
    fn declare() -> policy_api::ContextUse {
        policy_api::ContextUse::TASK | policy_api::ContextUse::DEPTH
    }
    fn decide(
        context: policy_api::Context,
        candidates: Vec<policy_api::Candidate>,
    ) -> Vec<policy_api::Decision> {
        candidates
            .into_iter()
            .map(|c| {
                if c.target.contains("/private/") {
                    policy_api::Decision::Avoid(format!("private in task {}", context.task.name))
                } else if c.kind == RefKind::Image && context.depth >= 1 {
                    policy_api::Decision::Leaf("an image below the top".into())
                } else {
                    policy_api::Decision::NoObjection
                }
            })
            .collect()
    }
}

impl fetch_hook_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        Ok(())
    }
    fn declare() -> fetch_hook_api::Interests {
        fetch_hook_api::Interests::REQUESTS | fetch_hook_api::Interests::RESPONSES
    }
    fn before_request(request: fetch_hook_api::Request) -> fetch_hook_api::RequestVerdict {
        if request.url.contains("veto") {
            fetch_hook_api::RequestVerdict::Veto(format!("legacy vetoes {}", request.method))
        } else {
            fetch_hook_api::RequestVerdict::Proceed(vec![("x-legacy".into(), "0.2".into())])
        }
    }
    fn after_response(
        _request: fetch_hook_api::Request,
        response: fetch_hook_api::Response,
    ) -> Option<fetch_hook_api::Reclassification> {
        let body = String::from_utf8_lossy(&response.body_prefix).to_lowercase();
        (response.status == 200 && body.contains("not found")).then(|| {
            fetch_hook_api::Reclassification {
                category: Category::Broken,
                reason: "a 200 that says not found".into(),
            }
        })
    }
}

impl parser_api::Guest for Legacy {
    fn configure(_config: String) -> Result<(), PluginError> {
        Ok(())
    }
    fn accepts(content_type: String, _url: String) -> bool {
        content_type.starts_with("text/uri-list")
    }
    fn parse(
        _url: String,
        _content_type: String,
        body: Vec<u8>,
    ) -> Result<parser_api::Parsed, PluginError> {
        let text = String::from_utf8(body).map_err(|_| PluginError {
            message: "legacy: a uri-list must be UTF-8".into(),
        })?;
        Ok(parser_api::Parsed {
            title: Some("uri-list".into()),
            owner: None,
            expires: None,
            references: text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(|l| Reference {
                    target: l.to_string(),
                    kind: RefKind::Anchor,
                    anchor_text: String::new(),
                })
                .collect(),
        })
    }
}

impl search_engine_api::Guest for Legacy {
    fn configure(config: String) -> Result<(), PluginError> {
        configure_base(&config)
    }
    fn query_url(
        keywords: Vec<String>,
        options: search_engine_api::SearchOptions,
    ) -> Result<String, PluginError> {
        let q: Vec<String> = keywords
            .iter()
            .flat_map(|k| k.split_whitespace())
            .map(|w| w.chars().filter(char::is_ascii_alphanumeric).collect())
            .collect();
        Ok(BASE.with(|b| {
            format!(
                "{}find?q={}&n={}",
                b.borrow(),
                q.join("+"),
                options.max_results
            )
        }))
    }
    fn parse_results(
        body: Vec<u8>,
        _content_type: String,
    ) -> Result<Vec<search_engine_api::Hit>, PluginError> {
        let text = String::from_utf8_lossy(&body);
        Ok(text
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .enumerate()
            .map(|(i, (url, title))| search_engine_api::Hit {
                rank: i as u32 + 1,
                url: url.to_string(),
                title: title.to_string(),
                snippet: String::new(),
            })
            .collect())
    }
}

#[cfg(target_arch = "wasm32")]
export!(Legacy);
