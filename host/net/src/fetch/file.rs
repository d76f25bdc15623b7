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
use std::path::PathBuf;
use std::time::Instant;

/// Which file a local name is read from, beside the file it names:
/// lychee's `--index-files` and `--fallback-extensions`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalNames {
    /// The files a directory is read as, the first that exists; `.`: the
    /// directory itself is fine, read as nothing (default `index.html`).
    pub index_files: Vec<String>,
    /// Extensions tried in turn for a file that does not exist (`html`:
    /// `about` is read from `about.html`, as a server that adds it would).
    pub fallback_extensions: Vec<String>,
}

impl Default for LocalNames {
    fn default() -> Self {
        LocalNames {
            index_files: vec!["index.html".into()],
            fallback_extensions: Vec::new(),
        }
    }
}

/// Where a local URL's path is read from.
enum Found {
    /// This file, with its metadata.
    File(PathBuf, std::fs::Metadata),
    /// A directory accepted as itself (`.` among the index files).
    Directory,
    /// Not there, or not readable: the status to answer.
    Status(u16),
}

/// The directory a missing `dir/index.html` stands for, when `names`
/// reads directories by other index files: a directory link is named by
/// its `index.html` (`spinneret_core::urls::normalize`).
async fn directory_named(path: &std::path::Path, names: &LocalNames) -> Option<PathBuf> {
    let dir = path.parent()?;
    let by_index = path.file_name().is_some_and(|n| n == "index.html");
    let other_names = names.index_files != LocalNames::default().index_files;
    let is_dir = tokio::fs::metadata(dir).await.is_ok_and(|m| m.is_dir());
    (by_index && other_names && is_dir).then(|| dir.to_path_buf())
}

/// The file `path` is read from by `names`, or why none is.
async fn find(path: PathBuf, names: &LocalNames) -> Result<Found, FetchError> {
    let meta = match tokio::fs::metadata(&path).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = directory_named(&path, names).await {
                return index_of(dir, names).await;
            }
            for ext in &names.fallback_extensions {
                let mut with = path.clone().into_os_string();
                with.push(format!(".{}", ext.trim_start_matches('.')));
                let with = PathBuf::from(with);
                if let Ok(m) = tokio::fs::metadata(&with).await
                    && m.is_file()
                {
                    return Ok(Found::File(with, m));
                }
            }
            return Ok(Found::Status(404));
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Ok(Found::Status(403));
        }
        Err(e) => return Err(FetchError::Other(format!("{}: {e}", path.display()))),
    };
    match meta.is_dir() {
        true => index_of(path, names).await,
        false => Ok(Found::File(path, meta)),
    }
}

/// The file the directory `path` is read as by `names`' index files.
async fn index_of(mut path: PathBuf, names: &LocalNames) -> Result<Found, FetchError> {
    for index in &names.index_files {
        if index == "." {
            return Ok(Found::Directory);
        }
        path.push(index);
        match tokio::fs::metadata(&path).await {
            Ok(m) => return Ok(Found::File(path, m)),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(FetchError::Local(
                    "the directory cannot be read (permission denied)".into(),
                ));
            }
            Err(_) => {
                path.pop();
            }
        }
    }
    Err(FetchError::Local(match names.index_files.as_slice() {
        [] => "a directory, and no index file is read (--index-files '')".into(),
        list => format!("a directory without an {}", list.join(" or ")),
    }))
}

pub(super) async fn fetch(
    req: &FetchRequest,
    max_body: u64,
    roots: &[std::path::PathBuf],
    names: &LocalNames,
) -> Result<FetchResponse, FetchError> {
    let start = Instant::now();
    let status_only = |status: u16| FetchResponse {
        status,
        headers: ResponseHeaders::default(),
        body: None,
        elapsed: start.elapsed(),
        raw_headers: Vec::new(),
    };
    let Ok(path) = req.url.to_file_path() else {
        return Ok(status_only(400));
    };
    let (path, meta) = match find(path, names).await? {
        Found::File(path, meta) => (path, meta),
        Found::Directory => return Ok(status_only(200)),
        Found::Status(status) => return Ok(status_only(status)),
    };
    // A symbolic link out of the task's tree (to /etc/passwd, say) is
    // not followed: the tree is what the crawl may read.
    let real = tokio::fs::canonicalize(&path).await.ok();
    if let Some(real) = &real
        && !roots.is_empty()
        && !roots.iter().any(|r| real.starts_with(r))
    {
        return Err(FetchError::Vetoed(format!(
            "a symbolic link out of the tree (to {}): not followed",
            real.display()
        )));
    }
    // A path through a symbolic link back up the tree (`ln -s . loop`)
    // names a file it also names without the loop: moved there, so that
    // `loop/loop/loop/…` is not a new tree at each turn. A path that is
    // its own real path has no link to loop through.
    let looped = match real.as_deref().is_some_and(|r| r != path.as_path()) {
        // Every directory of the path is read: off the async threads.
        true => {
            let p = path.clone();
            tokio::task::spawn_blocking(move || without_loops(&p))
                .await
                .ok()
                .flatten()
        }
        false => None,
    };
    if let Some(target) = looped
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
            super::BodyWanted::IfHtml => super::is_page(Some(&content_type)),
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
/// directory twice (a symbolic link to a directory above it): the path is
/// cut from each directory to the later one that is the same directory,
/// by name, so it keeps the tree's own spelling (`site/loop/loop/c.html`
/// is `site/c.html`, even where `site` itself is under a symbolic link).
fn without_loops(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut path = path.to_path_buf();
    let mut cut = false;
    // Each turn removes at least one component.
    for _ in 0..path.components().count() {
        let dirs: Vec<&std::path::Path> = path.ancestors().skip(1).collect();
        let real: Vec<Option<std::path::PathBuf>> =
            dirs.iter().map(|d| std::fs::canonicalize(d).ok()).collect();
        // The deepest directory that is also one above it.
        let repeat = (0..dirs.len()).find_map(|i| {
            let this = real[i].as_ref()?;
            (i + 1..dirs.len())
                .find(|&j| real[j].as_ref() == Some(this))
                .map(|j| (i, j))
        });
        let Some((deep, high)) = repeat else {
            break;
        };
        let rest = path.strip_prefix(dirs[deep]).ok()?.to_path_buf();
        path = dirs[high].join(rest);
        cut = true;
    }
    cut.then_some(path)
}
