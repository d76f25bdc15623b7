// The worlds plugins built against 0.2.0, 0.3.0 and 0.4.0 export alike
// (the versions define them the same but for the reporter's documents):
// included by each fixture's lib.rs after its bindings, with `API` ("0.2",
// "0.3" or "0.4"), `more_wants` (what its reporter wants beyond results,
// documents and findings) and `lines_of` (a document's lines, where its
// version has them), and the bindings' `exports`,
// `spinneret::plugin::{types, kv, log}` in scope. Not a module: each
// fixture's bindings are its own types.

struct Legacy;

#[derive(Default)]
struct Tally {
    results: u64,
    documents: u64,
    findings: u64,
    roles: Vec<String>,
    /// The lines of the documents' references, where the version has them.
    lines: Vec<u32>,
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
            | reporter_api::Wants::FINDINGS
            | more_wants())
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
        TALLY.with(|t| {
            let mut t = t.borrow_mut();
            t.documents += documents.len() as u64;
            for d in &documents {
                t.lines.extend_from_slice(lines_of(d));
            }
        });
    }
    fn on_findings(findings: Vec<reporter_api::TaskFinding>) {
        TALLY.with(|t| t.borrow_mut().findings += findings.len() as u64);
    }
    fn finish() -> Result<(), PluginError> {
        let line = TALLY.with(|t| {
            let t = t.borrow();
            format!(
                "results={} documents={} findings={} roles={} lines={}",
                t.results,
                t.documents,
                t.findings,
                t.roles.join(","),
                t.lines
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
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
            fetch_hook_api::RequestVerdict::Proceed(vec![("x-legacy".into(), API.into())])
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

