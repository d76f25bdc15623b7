//! `file://` URLs: a local tree of HTML checked before it is deployed.
//!
//! A directory serves its `index.html`; the modification time stands in for
//! `Last-Modified`; a missing file is a 404 and an unreadable one a 403, so the
//! rest of the crawler treats local trees like any site (the reports word
//! them as the file system would: "file not found", "permission denied";
//! see `classify::file_status_text`). A file is read
//! whole each time, never answered 304 to a conditional request: reading it
//! costs no more than asking, and its parse then follows this run's settings
//! (a root directory given since the last run, say).

use super::{Body, FetchError, FetchRequest, FetchResponse, Method, ResponseHeaders};
use std::time::Instant;

pub(super) async fn fetch(req: &FetchRequest, max_body: u64) -> Result<FetchResponse, FetchError> {
    let start = Instant::now();
    let status_only = |status: u16| FetchResponse {
        status,
        headers: ResponseHeaders::default(),
        body: None,
        elapsed: start.elapsed(),
        raw_headers: Vec::new(),
    };
    let Ok(mut path) = req.url.to_file_path() else {
        return Ok(status_only(400));
    };
    let mut meta = match tokio::fs::metadata(&path).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(status_only(404)),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(status_only(403)),
        Err(e) => return Err(FetchError::Other(format!("{}: {e}", path.display()))),
    };
    if meta.is_dir() {
        path.push("index.html");
        meta = match tokio::fs::metadata(&path).await {
            Ok(m) => m,
            Err(_) => return Ok(status_only(404)),
        };
    }
    // A path through a symbolic link back up the tree (`ln -s . loop`)
    // names a file it also names without the loop: moved there, so that
    // `loop/loop/loop/…` is not a new tree at each turn.
    if let Some(target) = through_a_loop(&path)
        && let Ok(url) = url::Url::from_file_path(&target)
    {
        return Ok(FetchResponse {
            headers: ResponseHeaders {
                location: Some(url.to_string()),
                ..ResponseHeaders::default()
            },
            ..status_only(301)
        });
    }
    let content_type = mime_guess::from_path(&path)
        .first()
        .map(|m| m.essence_str().to_string())
        .unwrap_or_else(|| "application/octet-stream".to_string());
    let last_modified = meta.modified().ok().map(httpdate::fmt_http_date);
    let wants_body = req.method == Method::Get
        && match req.body {
            super::BodyWanted::No => false,
            super::BodyWanted::Always(_) => true,
            super::BodyWanted::IfHtml => crate::parse::is_html(Some(&content_type)),
        };
    let headers = ResponseHeaders {
        content_type: Some(content_type),
        content_length: Some(meta.len()),
        last_modified,
        ..ResponseHeaders::default()
    };
    let body = if wants_body {
        // At most one byte past the cap is read: a device or a huge file
        // costs no more than a capped body.
        let read = async {
            use tokio::io::AsyncReadExt;
            let mut bytes = Vec::new();
            tokio::fs::File::open(&path)
                .await?
                .take(max_body.saturating_add(1))
                .read_to_end(&mut bytes)
                .await?;
            Ok::<_, std::io::Error>(bytes)
        };
        let bytes = match read.await {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Ok(status_only(403));
            }
            Err(e) => return Err(FetchError::Other(format!("{}: {e}", path.display()))),
        };
        let truncated = bytes.len() as u64 > max_body;
        let mut bytes = bytes;
        bytes.truncate(max_body as usize);
        Some(Body {
            bytes: bytes.into(),
            truncated,
        })
    } else {
        None
    };
    Ok(FetchResponse {
        status: 200,
        headers,
        body,
        elapsed: start.elapsed(),
        raw_headers: Vec::new(),
    })
}

/// The file `path` names, without its loops, when `path` goes through a
/// directory twice (a symbolic link to a directory above it): one of its
/// directories' real paths is that of a directory before it.
fn through_a_loop(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    if real == path {
        return None;
    }
    let mut seen = Vec::new();
    for dir in path.ancestors().skip(1) {
        seen.push(std::fs::canonicalize(dir).ok()?);
    }
    let mut distinct = seen.clone();
    distinct.sort_unstable();
    distinct.dedup();
    (distinct.len() < seen.len()).then_some(real)
}
