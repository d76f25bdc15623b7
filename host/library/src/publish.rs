//! The library as a static HTML tree (seed 001, section 2: the seed's
//! `summary.html` of each VL): `index.html` for the root, `vl-N.html` for
//! every other VL and `report-N.html` for every report, linked relatively
//! so that any web server (or a browser from the disk) can show them.
//!
//! `spinneret library publish DIR` writes it; a `library` task writes it
//! into its output directory before each run and traverses it, so that
//! every pointer on it is tested.

use askama::Template;
use spinneret_store::{Posting, PostingKind, Store};
use std::collections::HashSet;
use std::path::Path;

/// What a publication wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Published {
    /// Summary pages (one per VL).
    pub vls: usize,
    /// Report pages.
    pub reports: usize,
    /// Pointers on the summary pages.
    pub pointers: usize,
    /// Pages of an earlier publication removed (their postings are gone).
    pub removed: usize,
}

/// A posting as a published page lists it.
struct Item {
    seq: i64,
    is_vl: bool,
    title: String,
    href: String,
    /// A report's title link.
    url: Option<String>,
}

/// A published page: a VL's summary or a report.
#[derive(Template)]
#[template(path = "library/published.html")]
struct Page<'a> {
    version: &'static str,
    title: &'a str,
    url: Option<&'a str>,
    image: Option<&'a str>,
    /// The statement of purpose, the report's text (sanitised).
    text: Option<String>,
    root: Option<(String, String)>,
    parent: Option<(String, String)>,
    is_vl: bool,
    postings: Vec<Item>,
    author: Option<&'a str>,
    changed: String,
}

/// The file name of posting `p`'s page (`None`: a pointer has none).
fn file_name(p: &Posting) -> Option<String> {
    match p.kind {
        PostingKind::Vl if p.parent.is_none() => Some("index.html".into()),
        PostingKind::Vl => Some(format!("vl-{}.html", p.id)),
        PostingKind::Report => Some(format!("report-{}.html", p.id)),
        PostingKind::Pointer => None,
    }
}

/// The file that marks a directory as a publication's: only there are
/// earlier pages removed or replaced.
const MARK: &str = ".spinneret-library";

/// Whether `name` is a page a publication writes (and so may remove).
fn is_published_name(name: &str) -> bool {
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(".html"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    name == "index.html" || numbered("vl-") || numbered("report-")
}

/// Write the library of `store` into `dir` (made if missing), titled
/// `title` when the store has no library yet. `dir` must be new, empty or
/// an earlier publication's (it is marked). Each page is written whole
/// and then renamed into place, so a server publishing `dir` never shows
/// half a page; pages of postings deleted since are removed.
pub fn publish(store: &mut Store, title: &str, dir: &Path) -> anyhow::Result<Published> {
    let ours = dir.join(MARK).exists();
    let empty = std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none());
    if !ours && !empty {
        anyhow::bail!(
            "{} holds other files; publish into an empty or new directory (a publication there is replaced by the next one)",
            dir.display()
        );
    }
    let root = store.library_root(title)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot make {}: {e}", dir.display()))?;
    std::fs::write(
        dir.join(MARK),
        "Pages written by `spinneret library publish`: the next publication replaces them.\n",
    )?;
    let root_link = ("index.html".to_string(), root.text.title.clone());
    let mut out = Published::default();
    let mut written = HashSet::new();
    for (id, _, _) in store.library_vls()? {
        let (vl, up, image) = super::pages::vl_of(store, id)?;
        let postings = store.library_postings(id)?;
        let mut items = Vec::with_capacity(postings.len());
        for (p, _) in &postings {
            let href = match file_name(p) {
                Some(f) => f,
                None => {
                    out.pointers += 1;
                    p.text.url.clone().unwrap_or_default()
                }
            };
            items.push(Item {
                seq: p.seq,
                is_vl: p.kind == PostingKind::Vl,
                title: p.text.title.clone(),
                href,
                url: p.text.url.clone().filter(|_| p.kind == PostingKind::Report),
            });
            if p.kind == PostingKind::Report {
                let page = Page {
                    version: env!("CARGO_PKG_VERSION"),
                    title: &p.text.title,
                    url: p.text.url.as_deref(),
                    image: p.text.image.as_deref().or(image.as_deref()),
                    text: p.text.body.as_deref().map(super::input::sanitise),
                    root: Some(root_link.clone()),
                    parent: Some((file_name(&vl).unwrap_or_default(), vl.text.title.clone())),
                    is_vl: false,
                    postings: Vec::new(),
                    author: p.text.author.as_deref(),
                    changed: super::pages::date(p.updated_at),
                };
                let name = file_name(p).unwrap_or_default();
                write_page(dir, &name, &page)?;
                written.insert(name);
                out.reports += 1;
            }
        }
        let page = Page {
            version: env!("CARGO_PKG_VERSION"),
            title: &vl.text.title,
            url: None,
            image: image.as_deref(),
            text: vl.text.body.as_deref().map(super::input::sanitise),
            root: (vl.parent.is_some()).then(|| root_link.clone()),
            parent: up
                .last()
                .map(|p| (file_name(p).unwrap_or_default(), p.text.title.clone())),
            is_vl: true,
            postings: items,
            author: vl.text.author.as_deref(),
            changed: super::pages::date(vl.updated_at),
        };
        let name = file_name(&vl).unwrap_or_default();
        write_page(dir, &name, &page)?;
        written.insert(name);
        out.vls += 1;
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_published_name(&name) && !written.contains(&name) {
            std::fs::remove_file(entry.path())?;
            out.removed += 1;
        }
    }
    Ok(out)
}

/// Write `page` as `dir/name`, whole or not at all; a page that has not
/// changed is left as it is (its date too, so a `library` task does not
/// see every page as recently modified).
fn write_page(dir: &Path, name: &str, page: &Page<'_>) -> anyhow::Result<()> {
    let path = dir.join(name);
    let html = page.render()?;
    if std::fs::read(&path).is_ok_and(|old| old == html.as_bytes()) {
        return Ok(());
    }
    spinneret_core::fs::write_atomically(&path, html.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_pages_a_publication_writes_count_as_its_own() {
        assert!(is_published_name("index.html"));
        assert!(is_published_name("vl-12.html"));
        assert!(is_published_name("report-3.html"));
        assert!(!is_published_name("vl-.html"));
        assert!(!is_published_name("vl-1a.html"));
        assert!(!is_published_name("style.css"));
        assert!(!is_published_name("notes.html"));
    }
}
