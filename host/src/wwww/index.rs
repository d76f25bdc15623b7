//! The Worm's search index (seed 001, section 3.3, Table 5), built on
//! tantivy from the store: one entry per URL the store knows as a document
//! or as the target of a reference.
//!
//! Each entry holds what the seed searches: a document's title; for every
//! URL the anchor texts that reference it and the titles and URLs of the
//! documents citing it; every component of the URL (its text, tokenised on
//! what is not a letter or digit: scheme, host labels, port, path
//! segments, file name, extension, query keys and values), its host and
//! extension on their own, and a document's syntax faults.
//!
//! The index lives beside the store (`STORE.search/`), with a mark of what
//! it has seen (`spinneret-index.json`: its version, the newest run that
//! read a document, the number of imported documents). An update re-indexes
//! only the URLs whose entries changed: the documents read since the mark,
//! what they reference now, and what they referenced before. A version
//! other than [`INDEX_VERSION`] is rebuilt.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use spinneret_store::Store;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TEXT, TantivyDocument,
    TextFieldIndexing, TextOptions, Value,
};
use tantivy::{Index, IndexWriter, Term};

/// The index format; another is rebuilt from the store.
pub const INDEX_VERSION: u32 = 1;

/// The most anchor texts and citing documents indexed per URL (the count
/// of references is kept whole): a URL cited by a million pages makes one
/// bounded entry.
const MAX_CITERS: usize = 1000;

/// The mark file in the index directory.
const MARK_FILE: &str = "spinneret-index.json";

/// The index's fields.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    /// The URL exactly (the entry's key; stored).
    pub key: Field,
    /// The URL's components, tokenised (`url:`).
    pub url: Field,
    /// The host and its labels (`host:`).
    pub host: Field,
    /// The file name's extension (`ext:`).
    pub ext: Field,
    /// `html` for a document read, `url` for any other URL.
    pub kind: Field,
    /// A document's title (`title:`; stored).
    pub title: Field,
    /// The anchor texts of the references to it (`anchor:`).
    pub anchor: Field,
    /// The titles and URLs of the documents citing it (`cited-by:`).
    pub cited_by: Field,
    /// The citing documents' URLs exactly (for updates).
    pub citing: Field,
    /// A document's syntax faults (`bad:`).
    pub bad: Field,
    /// How many references point at it (the ranking's prior; stored).
    pub links: Field,
    /// The anchor text shown with a URL result (stored).
    pub shown_anchor: Field,
    /// The citing document shown with a URL result (stored).
    pub shown_citing: Field,
    /// That document's title (stored).
    pub shown_citing_title: Field,
}

/// The schema and its fields.
pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let stored_only = TextOptions::default().set_stored();
    let text_stored = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("default")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let fields = Fields {
        key: b.add_text_field("key", STRING | STORED),
        url: b.add_text_field("url", TEXT),
        host: b.add_text_field("host", TEXT),
        ext: b.add_text_field("ext", TEXT),
        kind: b.add_text_field("kind", STRING),
        title: b.add_text_field("title", text_stored),
        anchor: b.add_text_field("anchor", TEXT),
        cited_by: b.add_text_field("cited-by", TEXT),
        citing: b.add_text_field("citing", STRING),
        bad: b.add_text_field("bad", TEXT),
        links: b.add_u64_field("links", FAST | STORED | INDEXED),
        shown_anchor: b.add_text_field("shown_anchor", stored_only.clone()),
        shown_citing: b.add_text_field("shown_citing", stored_only.clone()),
        shown_citing_title: b.add_text_field("shown_citing_title", stored_only),
    };
    (b.build(), fields)
}

/// Where the index of the store at `store` lives.
pub fn index_dir(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".search");
    store.with_file_name(name)
}

/// What the index has seen of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// [`INDEX_VERSION`] when written.
    pub version: u32,
    /// The newest run that had read a document.
    pub run: i64,
    /// How many documents that run had read (a resumed run reads more
    /// under the same id).
    pub run_documents: i64,
    /// How many imported documents there were.
    pub imported: i64,
}

/// An open index.
pub struct SearchIndex {
    /// The tantivy index.
    pub index: Index,
    /// Its fields.
    pub fields: Fields,
    /// Its directory.
    pub dir: PathBuf,
}

impl SearchIndex {
    /// Open the index at `dir`, when there is one of this version.
    pub fn open(dir: &Path) -> anyhow::Result<Option<SearchIndex>> {
        match read_mark(dir) {
            Some(m) if m.version == INDEX_VERSION => {}
            _ => return Ok(None),
        }
        let index = Index::open_in_dir(dir)
            .with_context(|| format!("cannot open the search index {}", dir.display()))?;
        let (_, fields) = schema();
        Ok(Some(SearchIndex {
            index,
            fields,
            dir: dir.to_path_buf(),
        }))
    }

    /// A new, empty index at `dir` (what was there is removed).
    fn create(dir: &Path) -> anyhow::Result<SearchIndex> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot remove the old index {}", dir.display()))?;
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema)
            .with_context(|| format!("cannot create the search index {}", dir.display()))?;
        Ok(SearchIndex {
            index,
            fields,
            dir: dir.to_path_buf(),
        })
    }
}

fn read_mark(dir: &Path) -> Option<Mark> {
    let text = std::fs::read_to_string(dir.join(MARK_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Whether the index at `dir` has seen everything in `store`.
pub fn is_current(store: &Store, dir: &Path) -> anyhow::Result<bool> {
    let (run, run_documents, imported) = store.documents_mark()?;
    Ok(read_mark(dir)
        == Some(Mark {
            version: INDEX_VERSION,
            run,
            run_documents,
            imported,
        }))
}

/// What an update did.
#[derive(Clone, Copy, Debug, Default)]
pub struct UpdateStats {
    /// Whether the whole index was built anew.
    pub full: bool,
    /// Documents in the store.
    pub documents: u64,
    /// Documents read since the last update (all, for a full build).
    pub changed_documents: u64,
    /// URL entries written.
    pub entries: u64,
}

/// One document, as the update keeps it while it works.
struct Doc {
    title: Option<String>,
    bad: Vec<String>,
    /// (target id, anchor text).
    links: Vec<(i64, String)>,
}

/// Bring the index of `store` (at `dir`) up to date: only what changed,
/// or everything when `rebuild` is asked or the index is missing or of
/// another version.
pub fn update(store: &Store, dir: &Path, rebuild: bool) -> anyhow::Result<UpdateStats> {
    let (run_now, run_documents_now, imported_now) = store.documents_mark()?;
    let old = read_mark(dir).filter(|m| m.version == INDEX_VERSION);
    let existing = match (rebuild, old) {
        (false, Some(_)) => SearchIndex::open(dir)?,
        _ => None,
    };
    let full = existing.is_none();
    let idx = match existing {
        Some(i) => i,
        None => SearchIndex::create(dir)?,
    };
    let f = idx.fields;
    // Documents of runs after the marked one changed; those of the marked
    // run too when it read more since (it was resumed).
    let since = old.map_or(i64::MIN, |m| {
        match m.run == run_now && m.run_documents == run_documents_now {
            true => m.run + 1,
            false => m.run,
        }
    });
    let imports_changed = old.is_none_or(|m| m.imported != imported_now);

    // 1. Every document; which changed; which URLs need new entries.
    let mut docs: HashMap<i64, Doc> = HashMap::new();
    let mut changed: Vec<i64> = Vec::new();
    let mut affected: HashSet<i64> = HashSet::new();
    store.for_each_document(|d| {
        let is_changed = full || (d.run > 0 && d.run >= since) || (d.run == 0 && imports_changed);
        // A form's action is no reference a reader follows.
        let links: Vec<(i64, String)> = d
            .links
            .into_iter()
            .filter(|(_, kind, _)| kind != "form")
            .map(|(t, _, text)| (t, text))
            .collect();
        if is_changed {
            changed.push(d.url_id);
            affected.insert(d.url_id);
            affected.extend(links.iter().map(|(t, _)| *t));
        }
        docs.insert(
            d.url_id,
            Doc {
                title: d.title,
                bad: d.bad_html.into_iter().map(|(k, _)| k).collect(),
                links,
            },
        );
        Ok(())
    })?;
    let reader = idx.index.reader()?;
    if !full {
        // What the changed documents referenced before: entries citing them.
        let searcher = reader.searcher();
        let urls = store.urls_of(&changed)?;
        for url in urls.values() {
            let term = Term::from_field_text(f.citing, url);
            let q = tantivy::query::TermQuery::new(term, IndexRecordOption::Basic);
            let hits = searcher.search(&q, &tantivy::collector::DocSetCollector)?;
            for addr in hits {
                let d: TantivyDocument = searcher.doc(addr)?;
                if let Some(key) = d.get_first(f.key).and_then(|v| v.as_str())
                    && let Some(id) = store.url_id(key)?
                {
                    affected.insert(id);
                }
            }
        }
    }

    // 2. The references to each affected URL.
    let mut cited: HashMap<i64, Vec<(i64, &str)>> = HashMap::new();
    for (&source, d) in &docs {
        for (t, text) in &d.links {
            if affected.contains(t) {
                cited.entry(*t).or_default().push((source, text.as_str()));
            }
        }
    }
    let mut ids: HashSet<i64> = affected.clone();
    for refs in cited.values() {
        ids.extend(refs.iter().take(MAX_CITERS).map(|(s, _)| *s));
    }
    let ids: Vec<i64> = ids.into_iter().collect();
    let urls = store.urls_of(&ids)?;

    // 3. The entries.
    let mut writer: IndexWriter = idx.index.writer_with_num_threads(1, 100_000_000)?;
    let mut entries = 0u64;
    let mut targets: Vec<i64> = affected.into_iter().collect();
    targets.sort_unstable();
    for id in targets {
        let Some(url) = urls.get(&id) else { continue };
        if !full {
            writer.delete_term(Term::from_field_text(f.key, url));
        }
        let mut refs = cited.remove(&id).unwrap_or_default();
        // Stable: citing documents in URL id order.
        refs.sort_unstable_by_key(|(s, _)| *s);
        writer.add_document(entry(&f, url, docs.get(&id), &refs, &docs, &urls))?;
        entries += 1;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    let mark = Mark {
        version: INDEX_VERSION,
        run: run_now,
        run_documents: run_documents_now,
        imported: imported_now,
    };
    spinneret_core::fs::write_atomically(
        &dir.join(MARK_FILE),
        serde_json::to_string(&mark)?.as_bytes(),
    )?;
    Ok(UpdateStats {
        full,
        documents: docs.len() as u64,
        changed_documents: changed.len() as u64,
        entries,
    })
}

/// The entry of `url`: its document (when it is one) and the references
/// to it (citing document id, anchor text).
fn entry(
    f: &Fields,
    url: &str,
    doc: Option<&Doc>,
    refs: &[(i64, &str)],
    docs: &HashMap<i64, Doc>,
    urls: &HashMap<i64, String>,
) -> TantivyDocument {
    let mut e = TantivyDocument::default();
    e.add_text(f.key, url);
    e.add_text(f.url, url);
    if let Ok(u) = url::Url::parse(url) {
        if let Some(host) = u.host_str() {
            e.add_text(f.host, host);
        }
        let file = u
            .path_segments()
            .and_then(|mut s| s.next_back())
            .unwrap_or("");
        if let Some((_, ext)) = file.rsplit_once('.')
            && !ext.is_empty()
        {
            e.add_text(f.ext, ext.to_ascii_lowercase());
        }
    }
    e.add_text(f.kind, if doc.is_some() { "html" } else { "url" });
    if let Some(d) = doc {
        if let Some(t) = &d.title {
            e.add_text(f.title, t);
        }
        if !d.bad.is_empty() {
            e.add_text(f.bad, d.bad.join(" "));
        }
    }
    e.add_u64(f.links, refs.len() as u64);
    let title_of = |source: &i64| docs.get(source).and_then(|d| d.title.as_deref());
    for &(source, text) in refs.iter().take(MAX_CITERS) {
        if !text.is_empty() {
            e.add_text(f.anchor, text);
        }
        let Some(citing) = urls.get(&source) else {
            continue;
        };
        e.add_text(f.citing, citing);
        e.add_text(f.cited_by, citing);
        if let Some(t) = title_of(&source) {
            e.add_text(f.cited_by, t);
        }
    }
    // Shown with the result: the first reference with anchor text (and a
    // known citing document), else the first citing document alone.
    let with_text = refs
        .iter()
        .take(MAX_CITERS)
        .find(|(s, text)| !text.is_empty() && urls.contains_key(s));
    let (shown, anchor) = match with_text {
        Some(&(s, text)) => (Some(s), Some(text)),
        None => (refs.first().map(|r| r.0), None),
    };
    if let Some(source) = shown {
        if let Some(text) = anchor {
            e.add_text(f.shown_anchor, text);
        }
        if let Some(citing) = urls.get(&source) {
            e.add_text(f.shown_citing, citing);
        }
        if let Some(t) = title_of(&source) {
            e.add_text(f.shown_citing_title, t);
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_lives_beside_the_store() {
        assert_eq!(
            index_dir(Path::new("/var/lib/spinneret/spinneret.db")),
            PathBuf::from("/var/lib/spinneret/spinneret.db.search")
        );
    }
}
