//! What spinneret writes into a run's WARC file: the HTTP messages of an
//! exchange (the request as sent and the response as received), and the
//! run's log. The fetcher hands the body over decoded, so the response's
//! `Content-Encoding` and `Transfer-Encoding` are dropped and its
//! `Content-Length` is the stored body's: a replay tool serves exactly the
//! bytes the record holds. An answer whose body an earlier run's record
//! holds is a revisit that a replay tool can serve ([`revisit`]).

use super::fetch::Exchange;
use crate::profile::Profile;
use crate::runs;
use crate::warc::{Original, RecordId, WarcWriter};
use spinneret_store::{Store, UrlMemory};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The request line and headers of `ex`.
pub(super) fn request_message(ex: &Exchange) -> Vec<u8> {
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
pub(super) fn response_head(ex: &Exchange, len: Option<usize>) -> Vec<u8> {
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

/// The head of `ex`, a `304 Not Modified`, as the `200` it stands for:
/// its headers, the stored body's `content_type` where it has none, and
/// the `Content-Length` of the stored body (`len` bytes). What a revisit
/// says when the stored response's own head cannot be read back.
fn not_modified_as_200(ex: &Exchange, content_type: Option<&str>, len: usize) -> Vec<u8> {
    let mut m = String::from("HTTP/1.1 200 OK\r\n");
    let mut typed = false;
    for (n, v) in &ex.response.raw_headers {
        let name = n.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "content-encoding" | "transfer-encoding" | "content-length"
        ) {
            continue;
        }
        typed |= name == "content-type";
        m.push_str(&format!("{n}: {}\r\n", one_line(v)));
    }
    if let (false, Some(t)) = (typed, content_type) {
        m.push_str(&format!("Content-Type: {}\r\n", one_line(t)));
    }
    m.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    m.into_bytes()
}

/// The body of `ex`, the answer to a URL that was `before` when last
/// retrieved, with its SHA-256 (hex), and whether it is archived as a
/// revisit: a `304`, whose body is the stored one (read from the object
/// store `objects`), or a body fetched again and the same as the one a
/// record of a `live` run holds.
pub(super) fn answer_body(
    ex: &Exchange,
    before: Option<&UrlMemory>,
    objects: &Path,
    live: &HashSet<i64>,
) -> Result<(bytes::Bytes, String, bool), String> {
    if let (304, Some(m)) = (ex.response.status, before) {
        let object = crate::mirror::object_path(objects, &m.digest);
        let b = std::fs::read(&object)
            .map_err(|e| format!("304 Not Modified, but its body is gone ({e})"))?;
        return Ok((b.into(), m.digest.clone(), true));
    }
    let b = ex
        .response
        .body
        .as_ref()
        .map(|b| b.bytes.clone())
        .unwrap_or_default();
    let d = spinneret_core::digest::sha256_hex(&b);
    let same = before
        .is_some_and(|m| m.digest == d && m.warc_record.is_some() && live.contains(&m.collection));
    Ok((b, d, same))
}

/// What a URL answered by `ex` is remembered as: its `content_type`, the
/// validators `ex` sent (else those it had `before`), the `digest` of its
/// body, and the record that holds it (`warc_record` of run
/// `collection`).
pub(super) fn remembered(
    ex: &Exchange,
    before: Option<&UrlMemory>,
    content_type: Option<String>,
    digest: &str,
    warc_record: Option<(String, i64)>,
    collection: i64,
) -> UrlMemory {
    let h = &ex.response.headers;
    UrlMemory {
        collection,
        content_type,
        etag: h
            .etag
            .clone()
            .or_else(|| before.and_then(|m| m.etag.clone())),
        last_modified: h
            .last_modified
            .clone()
            .or_else(|| before.and_then(|m| m.last_modified.clone())),
        digest: digest.to_string(),
        warc_record,
    }
}

/// The WARC file of `profile`'s run `collection`, while it has one.
pub(super) fn warc_file(store: &Store, profile: &Profile, collection: i64) -> Option<PathBuf> {
    let live = store.live_collections(&runs::profile_key(profile)).ok()?;
    let run = live.into_iter().find(|c| c.id == collection)?;
    Some(profile.mirror.join(runs::warc_path(&run)))
}

/// Write to `warc` the revisit of `ex`, the answer whose body (`len`
/// bytes) the response record `memory` names holds, in the WARC file
/// `holder` of an earlier run: as replay tools serve one (pywb replays a
/// `server-not-modified` revisit's 304 head as an empty 304), the
/// `identical-payload-digest` profile with a 200's head, the new
/// response's when the body was fetched again and found the same, the
/// stored response's when the server answered `304 Not Modified`, and the
/// target URI and date of the record that holds the body, read back from
/// its file.
pub(super) fn revisit<W: std::io::Write>(
    warc: &mut WarcWriter<W>,
    ex: &Exchange,
    len: usize,
    memory: &UrlMemory,
    holder: Option<&Path>,
    now: i64,
) -> std::io::Result<RecordId> {
    let (record, date) = memory.warc_record.clone().unwrap_or_default();
    // Unreadable, the record is still named by what the store remembers.
    let stored = holder.and_then(|f| warc.stored_response(f, &record).ok().flatten());
    let head = match (ex.response.status, &stored) {
        (304, Some(s)) => s.head.clone(),
        (304, None) => not_modified_as_200(ex, memory.content_type.as_deref(), len),
        _ => response_head(ex, Some(len)),
    };
    let digest = format!("sha256:{}", memory.digest);
    let original = Original {
        record: &record,
        uri: stored.as_ref().map_or(ex.url.as_str(), |s| s.uri.as_str()),
        date: stored.as_ref().map_or(date, |s| s.date),
        payload_digest: &digest,
    };
    warc.revisit(ex.url.as_str(), &head, &original, now)
}

/// The whole response of `ex`: head and body.
pub(super) fn response_message(ex: &Exchange) -> Vec<u8> {
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
pub(super) fn run_log(
    profile: &crate::profile::Profile,
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
