//! What spinneret writes into a run's WARC file: the HTTP messages of an
//! exchange (the request as sent and the response as received), and the
//! run's log. The fetcher hands the body over decoded, so the response's
//! `Content-Encoding` and `Transfer-Encoding` are dropped and its
//! `Content-Length` is the stored body's: a replay tool serves exactly the
//! bytes the record holds.

use super::fetch::Exchange;

/// The request line and headers of `ex`.
pub fn request_message(ex: &Exchange) -> Vec<u8> {
    let target = match ex.url.query() {
        Some(q) => format!("{}?{q}", ex.url.path()),
        None => ex.url.path().to_string(),
    };
    let mut m = format!("GET {target} HTTP/1.1\r\n");
    for (n, v) in &ex.request {
        m.push_str(&format!("{n}: {}\r\n", one_line(v)));
    }
    m.push_str("\r\n");
    m.into_bytes()
}

fn one_line(v: &str) -> String {
    v.chars().filter(|c| *c != '\r' && *c != '\n').collect()
}

/// The status line and headers of `ex`'s response, for a body of `len`
/// bytes (none for a revisit, which stores no body).
pub fn response_head(ex: &Exchange, len: Option<usize>) -> Vec<u8> {
    let status = ex.response.status;
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut m = format!("HTTP/1.1 {status} {reason}\r\n");
    for (n, v) in &ex.response.raw_headers {
        if matches!(
            n.to_ascii_lowercase().as_str(),
            "content-encoding" | "transfer-encoding" | "content-length"
        ) {
            continue;
        }
        m.push_str(&format!("{n}: {}\r\n", one_line(v)));
    }
    if let Some(len) = len {
        m.push_str(&format!("Content-Length: {len}\r\n"));
    }
    m.push_str("\r\n");
    m.into_bytes()
}

/// The whole response of `ex`: head and body.
pub fn response_message(ex: &Exchange) -> Vec<u8> {
    let body = ex
        .response
        .body
        .as_ref()
        .map(|b| &b.bytes[..])
        .unwrap_or_default();
    let mut m = response_head(ex, Some(body.len()));
    m.extend_from_slice(body);
    m
}

/// The fields of a run's log record, as wget writes its log into its WARC
/// file: the profile's file name (not where it lives, and no local file:
/// a web archive may be published), the run, the requests made, whether
/// it finished, and each web URL not collected with why.
pub fn run_log(
    profile: &crate::snatch::profile::Profile,
    run: &spinneret_store::CollectionRow,
    requests: u64,
    failed: &[(String, String)],
    stopped: bool,
) -> Vec<(&'static str, String)> {
    let name = profile
        .source
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let status = if stopped { "stopped" } else { "finished" };
    let mut log = vec![
        ("profile", name),
        ("run", run.dir.clone()),
        ("requests", requests.to_string()),
        ("status", status.to_string()),
    ];
    log.extend(
        failed
            .iter()
            .filter(|(u, _)| !u.starts_with("file:"))
            .map(|(u, why)| ("not-collected", format!("{u}: {why}"))),
    );
    log
}
