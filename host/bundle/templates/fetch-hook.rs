//! {name}: a spinneret fetch hook. It adds the configured headers to every
//! request and vetoes requests whose URL contains one of the configured
//! texts (they are recorded as avoided).
//!
//! Configuration: `headers` (a table of name = value), `veto` (a list of
//! texts).

use spinneret_sdk::fetch_hook::*;

/// The hook's settings.
pub struct Plugin {
    headers: Vec<(String, String)>,
    veto: Vec<String>,
}

impl FetchHook for Plugin {
    fn configure(config: serde_json::Value) -> Result<Self, String> {
        let mut headers = Vec::new();
        if let Some(table) = config.get("headers") {
            let table = table.as_object().ok_or("{name}: `headers` must be a table")?;
            for (k, v) in table {
                let v = v.as_str().ok_or_else(|| format!("{name}: header `{k}` must be a string"))?;
                headers.push((k.clone(), v.to_string()));
            }
        }
        let veto = match config.get("veto") {
            None => Vec::new(),
            Some(v) => v
                .as_array()
                .ok_or("{name}: `veto` must be a list")?
                .iter()
                .map(|t| t.as_str().map(str::to_string).ok_or("{name}: `veto` must list strings"))
                .collect::<Result<_, _>>()?,
        };
        Ok(Plugin { headers, veto })
    }

    fn before_request(&mut self, request: &Request) -> RequestVerdict {
        match self.veto.iter().find(|t| request.url.contains(t.as_str())) {
            Some(t) => RequestVerdict::Veto(format!("the URL contains \"{t}\"")),
            None => RequestVerdict::Proceed(self.headers.clone()),
        }
    }
}

spinneret_sdk::export_fetch_hook!(Plugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_headers_and_vetoes() {
        let mut h = Plugin::configure(serde_json::json!({
            "headers": {"X-Maintainer": "webmaster@example.org"},
            "veto": ["/calendar/"]
        }))
        .unwrap();
        let req = |url: &str| Request { url: url.into(), method: "GET".into(), referrer: None };
        assert!(matches!(
            h.before_request(&req("http://a.example/x")),
            RequestVerdict::Proceed(v) if v == [("X-Maintainer".to_string(), "webmaster@example.org".to_string())]
        ));
        assert!(matches!(
            h.before_request(&req("http://a.example/calendar/2026")),
            RequestVerdict::Veto(r) if r == "the URL contains \"/calendar/\""
        ));
    }
}
