//! The `http` capability: what a plugin's `http.get` reaches once the
//! sandbox has checked the URL (http or https) and that its host is granted.
//! The host side is an interface the crawl implements over its own polite
//! fetcher, so that a plugin's requests obey robots.txt, the avoid rules
//! and the per-site pacing as the crawler's do; the plugin host itself
//! knows nothing of fetching.

use super::PluginState;
use crate::bindings::reporter::spinneret::plugin::http;
use std::sync::Arc;
use url::Url;

/// What a plugin's request got back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpAnswer {
    /// The HTTP status.
    pub status: u16,
    /// `Content-Type`, if sent.
    pub content_type: Option<String>,
    /// Whether the body was cut at the body cap.
    pub truncated: bool,
    /// Where a redirect points (`Location`), if the answer has one; the
    /// fetcher does not follow redirects itself (each hop is asked politely).
    pub location: Option<String>,
    /// The body, decompressed, up to the cap.
    pub body: Vec<u8>,
}

/// The host's fetcher as plugins see it. Calls come from plugin threads,
/// never from the crawl's async reactor, and may block (waiting for a
/// site's turn counts toward the plugin's time per call).
pub trait HostHttp: Send + Sync {
    /// GET `url` politely, or say why not (robots.txt, an avoid rule, a
    /// network failure), in a message the plugin can show; given up at
    /// `deadline`, the end of the plugin's time for the call it is making
    /// (the sandbox's clock does not run while the host works).
    fn get(&self, url: &Url, deadline: std::time::Instant) -> Result<HttpAnswer, String>;
}

/// The fetcher lent to the plugins of a run whose grants name hosts.
pub type PluginHttp = Arc<dyn HostHttp>;

impl http::Host for PluginState {
    fn get(&mut self, target: String) -> wasmtime::Result<Result<http::Response, String>> {
        let url = match url::Url::parse(&target) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            _ => return Ok(Err(format!("`{target}` is not an http or https URL"))),
        };
        let host = url.host_str().unwrap_or("");
        if !self
            .grants
            .hosts
            .iter()
            .any(|g| g.eq_ignore_ascii_case(host))
        {
            return Ok(Err(format!(
                "network access to {host} is not granted to plugin {}; list the host in the plugin's `hosts`",
                self.name
            )));
        }
        let Some(fetcher) = self.http.as_ref() else {
            return Ok(Err(format!(
                "plugin {} runs without the host's fetcher here",
                self.name
            )));
        };
        let answer = fetcher.get(&url, self.deadline);
        if answer.is_err() && std::time::Instant::now() >= self.deadline {
            // The call's time ran out while the host fetched: cut off as
            // the sandbox's clock would have cut it off.
            return Err(wasmtime::Trap::Interrupt.into());
        }
        Ok(answer.map(|answer| http::Response {
            status: answer.status,
            content_type: answer.content_type,
            truncated: answer.truncated,
            body: answer.body,
        }))
    }
}
