//! A policy that logs every question it is asked (`asked about URL for task
//! NAME`, at info level) and avoids the URLs containing one of its `avoid`
//! texts. With `reads_context = false` it declares that its verdicts depend
//! on the URL alone, so the host should ask about each URL once per run;
//! otherwise once per task and URL. With `consult = "URL"` it fetches that
//! URL through the host for every question first (a policy that asks a
//! service; it needs the host granted) and logs `consulted URL: status N`.
//! With `fail_on = ["TEXT"]` it traps (panics) when asked about a URL
//! containing one of those texts: a policy that fails.

use spinneret_sdk::policy::*;

/// The policy.
pub struct Recorder {
    reads_context: bool,
    avoid: Vec<String>,
    consult: Option<String>,
    fail_on: Vec<String>,
}

impl Policy for Recorder {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let avoid = spinneret_sdk::settings::strings("recorder", &config, "avoid")?;
        let fail_on = spinneret_sdk::settings::strings("recorder", &config, "fail_on")?;
        let reads_context = match config.get("reads_context") {
            None => true,
            Some(v) => v.as_bool().ok_or_else(|| {
                format!("recorder: `reads_context` must be true or false, not {v}")
            })?,
        };
        let consult = match config.get("consult") {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .ok_or_else(|| format!("recorder: `consult` must be a URL, not {v}"))?
                    .to_string(),
            ),
        };
        Ok(Recorder {
            reads_context,
            avoid,
            consult,
            fail_on,
        })
    }

    fn context_use(&self) -> ContextUse {
        match self.reads_context {
            true => whole_context(),
            false => ContextUse::empty(),
        }
    }

    fn decide(&mut self, candidate: &Candidate, context: &Context) -> Decision {
        let url = &candidate.target;
        spinneret_sdk::log::info(&format!("asked about {url} for task {}", context.task.name));
        if let Some(service) = &self.consult {
            let answer = match spinneret_sdk::http::get(service) {
                Ok(r) => format!("status {}", r.status),
                Err(e) => format!("error: {e}"),
            };
            spinneret_sdk::log::info(&format!("consulted {service}: {answer}"));
        }
        if let Some(f) = self.fail_on.iter().find(|f| url.contains(f.as_str())) {
            panic!("told to fail on URLs containing \"{f}\"");
        }
        match self.avoid.iter().find(|a| url.contains(a.as_str())) {
            Some(a) => Decision::Avoid(format!("it contains \"{a}\"")),
            None => Decision::NoObjection,
        }
    }
}

spinneret_sdk::export_policy!(Recorder);
