//! Fetching through the host's polite fetcher (robots.txt, avoid rules and
//! per-site politeness apply), for the hosts the plugin's configuration
//! grants. Natively there is no host, and every request fails.

pub use crate::bindings::spinneret::plugin::http::Response;

/// The media type of a `Content-Type` value, lower-cased, without its
/// parameters: `text/html; charset=utf-8` gives `text/html`.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// GET `url`. HTTP error statuses are responses; errors say why no
/// response came (not granted, avoided, network failure).
pub fn get(url: &str) -> Result<Response, String> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::spinneret::plugin::http::get(url)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Err(format!(
            "no host to fetch {url} through: plugins fetch only when run by spinneret"
        ))
    }
}
