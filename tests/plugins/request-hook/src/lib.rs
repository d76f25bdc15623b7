//! A fetch hook that sees requests only (it declares `requests`): it logs
//! each one (`request METHOD URL`, at info level), adds the header
//! `header = [NAME, VALUE]` to it when configured, and vetoes the URLs that
//! contain one of its `veto` texts.

use spinneret_sdk::fetch_hook::*;

/// The hook.
pub struct Gate {
    header: Option<(String, String)>,
    veto: Vec<String>,
}

impl FetchHook for Gate {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let veto = spinneret_sdk::settings::strings("request-hook", &config, "veto")?;
        let header = match spinneret_sdk::settings::strings("request-hook", &config, "header")? {
            h if h.is_empty() => None,
            h if h.len() == 2 => Some((h[0].clone(), h[1].clone())),
            h => {
                return Err(format!(
                    "request-hook: `header` is [NAME, VALUE], not {h:?}"
                ));
            }
        };
        Ok(Gate { header, veto })
    }

    fn interests(&self) -> Interests {
        Interests::REQUESTS
    }

    fn before_request(&mut self, request: &Request) -> RequestVerdict {
        let url = &request.url;
        spinneret_sdk::log::info(&format!("request {} {url}", request.method));
        match self.veto.iter().find(|v| url.contains(v.as_str())) {
            Some(v) => RequestVerdict::Veto(format!("it contains \"{v}\"")),
            None => RequestVerdict::Proceed(self.header.iter().cloned().collect()),
        }
    }
}

spinneret_sdk::export_fetch_hook!(Gate);
