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
//! The index lives beside a store file (`STORE.search/`; a database's in
//! the data directory, [`index_dir_for`]), with a mark of what it has seen
//! (`spinneret-index.json`: its version, the store's identity and the
//! store's number of the last document write it indexed). An update reads
//! only the
//! documents written since and re-indexes only the URLs whose entries they
//! change: the documents themselves, what they reference now and what they
//! referenced before. Every reference to each URL (citing document, anchor
//! text) is kept in a second index beside the first (`references/`, read
//! by updates only), so an entry is rebuilt from its references and the
//! changed documents, without reading the rest of the store; a search
//! reads none of it. A version other than [`INDEX_VERSION`] is rebuilt.
//!
//! GENVL's library is in the same index, so that one search box finds
//! both: each posting (pointer, report, sub-VL) is an entry of kind
//! `library` with its title, its URL's components and the title of the
//! VL it is posted in, and where it is in the library (`place`). The
//! mark holds the store's count of library changes; when it moved, the
//! library's entries are written anew (a library is thousands of
//! postings, not millions of URLs).

use anyhow::Context;
use serde::{Deserialize, Serialize};
use spinneret_store::Store;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use tantivy::query::TermSetQuery;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TEXT, TantivyDocument,
    TextFieldIndexing, TextOptions, Value,
};
use tantivy::{Index, IndexWriter, Term};

/// The index format; another is rebuilt from the store.
pub const INDEX_VERSION: u32 = 5;

/// Added to a library posting's id to make its entry's `id`, above every
/// URL id a store will give.
const LIBRARY_IDS: u64 = 1 << 48;

/// The most anchor texts and citing documents indexed per URL (the count
/// of references is kept whole): a URL cited by a million pages makes one
/// bounded entry.
const MAX_CITERS: usize = 1000;

/// The mark file in the index directory.
const MARK_FILE: &str = "spinneret-index.json";

/// The references' index, in the index directory.
const REFERENCES_DIR: &str = "references";

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
    /// `html` for a document read, `url` for any other URL; a posting of
    /// the library has both `library` and `html` (documents mode answers
    /// it).
    pub kind: Field,
    /// A document's title (`title:`; stored).
    pub title: Field,
    /// The anchor texts of the references to it (`anchor:`).
    pub anchor: Field,
    /// The titles and URLs of the documents citing it (`cited-by:`).
    pub cited_by: Field,
    /// The URL's id in the store (for updates; stored).
    pub id: Field,
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
    /// A library posting's page on the server (stored).
    pub place: Field,
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
        id: b.add_u64_field("id", INDEXED | STORED | FAST),
        bad: b.add_text_field("bad", TEXT),
        links: b.add_u64_field("links", FAST | STORED | INDEXED),
        shown_anchor: b.add_text_field("shown_anchor", stored_only.clone()),
        shown_citing: b.add_text_field("shown_citing", stored_only.clone()),
        shown_citing_title: b.add_text_field("shown_citing_title", stored_only.clone()),
        place: b.add_text_field("place", stored_only),
    };
    (b.build(), fields)
}

/// The fields of the references' index: one document per URL cited.
///
/// Apart from the entries, so that a search, which fetches the entries it
/// shows, never decompresses them: a URL cited 13,000 times has 13,000
/// references, a third of a megabyte, and such URLs rank high (the
/// prior). Reading them with each result was a twelfth of a busy server's
/// time on the index of a million URLs.
#[derive(Clone, Copy, Debug)]
pub struct ReferenceFields {
    /// The cited URL's id in the store.
    pub id: Field,
    /// The URL ids of every document citing it.
    pub citer: Field,
    /// Every reference to it, as JSON `[[citing id, anchor text], ...]`.
    pub refs: Field,
}

/// The references' index schema and its fields.
fn reference_schema() -> (Schema, ReferenceFields) {
    let mut b = Schema::builder();
    let fields = ReferenceFields {
        id: b.add_u64_field("id", INDEXED | STORED),
        citer: b.add_u64_field("citer", INDEXED),
        refs: b.add_bytes_field("refs", STORED),
    };
    (b.build(), fields)
}

/// Where the index of `store` (opened from `setting`) lives: in `chosen`
/// when the user chose a directory (`search_index`, `--index`); else
/// beside a store file; for a database server's store, in the user's data
/// directory, named after the store's identity ([`Store::identity`], a
/// random id made with its schema): `spinneret/search/ID.search`. Each
/// machine that searches a shared database keeps its own index of it, and
/// however the database's URL is spelt, one index. (An index made of
/// another store is rebuilt: its mark names the store.)
pub fn index_dir_for(
    setting: &spinneret_config::StoreSetting,
    chosen: Option<&Path>,
    store: &Store,
) -> anyhow::Result<PathBuf> {
    if let Some(dir) = chosen {
        return Ok(dir.to_path_buf());
    }
    Ok(match setting {
        spinneret_config::StoreSetting::File(path) => index_dir(path),
        spinneret_config::StoreSetting::Postgres { .. } => spinneret_config::default_store_path()
            .with_file_name("search")
            .join(format!("{}.search", store.identity()?)),
    })
}

/// Where the index of the store file at `store` lives.
pub fn index_dir(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".search");
    store.with_file_name(name)
}

/// What the index has seen of the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// [`INDEX_VERSION`] when written.
    pub version: u32,
    /// The store's number of the last document write indexed
    /// ([`Store::documents_seq`]).
    pub seq: i64,
    /// The store's count of library changes indexed
    /// ([`Store::library_changes`]).
    #[serde(default)]
    pub library: i64,
    /// The identity of the store indexed ([`Store::identity`]): an index
    /// of another store (a database reached by the same URL after a
    /// restore, a file copied over) is rebuilt, not updated.
    #[serde(default)]
    pub store: String,
}

/// An open index.
pub struct SearchIndex {
    /// The tantivy index.
    pub index: Index,
    /// Its fields.
    pub fields: Fields,
    /// Its directory.
    pub dir: PathBuf,
    /// The references of each URL (for updates).
    references: Index,
    /// Their fields.
    reference_fields: ReferenceFields,
}

impl SearchIndex {
    /// Open the index at `dir`, when there is one of this version.
    pub fn open(dir: &Path) -> anyhow::Result<Option<SearchIndex>> {
        match read_mark(dir)? {
            Some(m) if m.version == INDEX_VERSION => {}
            _ => return Ok(None),
        }
        let index = Index::open_in_dir(dir)
            .with_context(|| format!("cannot open the search index {}", dir.display()))?;
        let references = dir.join(REFERENCES_DIR);
        let references = Index::open_in_dir(&references)
            .with_context(|| format!("cannot open the search index {}", references.display()))?;
        Ok(Some(SearchIndex::of(index, references, dir)))
    }

    /// The index of the tantivy indexes `index` (the entries) and
    /// `references`, at `dir`.
    fn of(index: Index, references: Index, dir: &Path) -> SearchIndex {
        SearchIndex {
            index,
            fields: schema().1,
            dir: dir.to_path_buf(),
            references,
            reference_fields: reference_schema().1,
        }
    }

    /// A new, empty index in memory.
    #[cfg(test)]
    pub(crate) fn in_ram() -> SearchIndex {
        SearchIndex::of(
            Index::create_in_ram(schema().0),
            Index::create_in_ram(reference_schema().0),
            Path::new(""),
        )
    }

    /// Whether the entries and the references were committed by the same
    /// update: an update cut short between the two commits leaves the
    /// references ahead, and what the entries hold can then no longer be
    /// told from them (a URL a changed document stopped citing would keep
    /// its entry).
    fn halves_agree(&self) -> anyhow::Result<bool> {
        Ok(self.index.load_metas()?.payload == self.references.load_metas()?.payload)
    }

    /// A new, empty index at `dir` (what was there is removed).
    fn create(dir: &Path) -> anyhow::Result<SearchIndex> {
        // The mark goes first: a removal cut short must not leave a mark
        // that vouches for what is left.
        match std::fs::remove_file(dir.join(MARK_FILE)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "cannot remove the old index's mark {}: {e}",
                    dir.join(MARK_FILE).display()
                ));
            }
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot remove the old index {}", dir.display()))?;
        }
        let references = dir.join(REFERENCES_DIR);
        std::fs::create_dir_all(&references)
            .with_context(|| format!("cannot create {}", references.display()))?;
        let index = Index::create_in_dir(dir, schema().0)
            .with_context(|| format!("cannot create the search index {}", dir.display()))?;
        let references = Index::create_in_dir(&references, reference_schema().0)
            .with_context(|| format!("cannot create the search index {}", references.display()))?;
        Ok(SearchIndex::of(index, references, dir))
    }
}

/// The mark of the index at `dir`: none when there is no index or its
/// mark is unreadable as a mark (it is rebuilt). A mark that cannot be
/// read for another reason (no file descriptor left, say) is an error:
/// taking it for a missing index would delete a good one.
fn read_mark(dir: &Path) -> anyhow::Result<Option<Mark>> {
    let path = dir.join(MARK_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(serde_json::from_str(&text).ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Ok(None),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// Whether the index at `dir` has seen everything in `store`.
pub fn is_current(store: &Store, dir: &Path) -> anyhow::Result<bool> {
    Ok(read_mark(dir)? == Some(current_mark(store)?))
}

/// The mark of an index that has seen everything in `store`.
fn current_mark(store: &Store) -> anyhow::Result<Mark> {
    Ok(Mark {
        version: INDEX_VERSION,
        seq: store.documents_seq()?,
        library: store.library_changes()?,
        store: store.identity()?,
    })
}

/// What an update did.
#[derive(Clone, Copy, Debug, Default)]
pub struct UpdateStats {
    /// Whether the whole index was built anew.
    pub full: bool,
    /// Documents in the store.
    pub documents: u64,
    /// Documents read from the store (all of them, for a full build).
    pub changed_documents: u64,
    /// URL entries written.
    pub entries: u64,
    /// Library postings written (all of them, when the library changed).
    pub postings: u64,
}

/// A document, as an entry shows it.
struct Doc {
    title: Option<String>,
    bad: Vec<String>,
}

impl Doc {
    fn new(title: Option<String>, bad: Vec<(String, u32)>) -> Doc {
        Doc {
            title,
            bad: bad.into_iter().map(|(k, _)| k).collect(),
        }
    }
}

/// What the entries to write are made of.
#[derive(Default)]
struct Parts {
    /// The URLs whose entries are (re)written.
    targets: Vec<i64>,
    /// Every reference to each target: (citing document, anchor text), in
    /// citing id order.
    refs: HashMap<i64, Vec<(i64, String)>>,
    /// The documents among the targets and the citing documents shown.
    docs: HashMap<i64, Doc>,
    /// The URLs of the targets and of the citing documents shown.
    urls: HashMap<i64, String>,
}

/// A document's references that an entry records: not a form's action,
/// which is no reference a reader follows.
fn references(links: Vec<(i64, String, String)>) -> impl Iterator<Item = (i64, String)> {
    links
        .into_iter()
        .filter(|(_, kind, _)| kind != "form")
        .map(|(t, _, text)| (t, text))
}

/// The lock on updates of the index at `dir`, held while it lives: taken
/// by each update, so that a second `search` (or `serve`, or `index`)
/// finding the index behind its store waits for the one already bringing
/// it up to date, and then finds little or nothing left to do, instead of
/// failing on tantivy's writer lock or building over it. A file beside
/// the index (`DIR.lock`: a rebuild removes the index's own directory);
/// the system lets it go with the process that held it.
fn one_update_at_a_time(dir: &Path) -> anyhow::Result<std::fs::File> {
    let mut name = dir.as_os_str().to_os_string();
    name.push(".lock");
    let path = PathBuf::from(name);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot make {}", parent.display()))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the index's lock {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            tracing::info!(
                "another process is updating the search index {}; waiting for it",
                dir.display()
            );
            file.lock()
                .with_context(|| format!("cannot lock {}", path.display()))?;
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(anyhow::anyhow!("cannot lock {}: {e}", path.display()));
        }
    }
    Ok(file)
}

/// Bring the index of `store` (at `dir`) up to date: only what changed,
/// or everything when `rebuild` is asked or the index is missing or of
/// another version.
pub fn update(store: &Store, dir: &Path, rebuild: bool) -> anyhow::Result<UpdateStats> {
    let _updating = one_update_at_a_time(dir)?;
    let mark = current_mark(store)?;
    // A mark ahead of the store is of another store (one put back from a
    // copy, say): what the index holds cannot be trusted, so it is rebuilt.
    // A rebuild reads no mark: one that cannot be read must not stand in
    // the way of the rebuild that replaces it.
    let old = if rebuild { None } else { read_mark(dir)? }.filter(|m| {
        m.version == INDEX_VERSION
            && m.store == mark.store
            && m.seq <= mark.seq
            && m.library <= mark.library
    });
    let existing = match (rebuild, &old) {
        (false, Some(_)) => match SearchIndex::open(dir)? {
            Some(idx) if idx.halves_agree()? => Some(idx),
            Some(_) => {
                tracing::warn!(
                    "the search index {} was left half updated; it is built anew",
                    dir.display()
                );
                None
            }
            None => None,
        },
        _ => None,
    };
    let full = existing.is_none();
    let idx = match existing {
        Some(i) => i,
        None => SearchIndex::create(dir)?,
    };
    let (f, rf) = (idx.fields, idx.reference_fields);
    let (parts, changed) = match old.as_ref().filter(|_| !full) {
        Some(m) if m.seq == mark.seq => (Parts::default(), 0),
        Some(m) => changed_parts(store, &idx, m.seq)?,
        None => all_parts(store)?,
    };

    // A full build gets a large arena (fewer, larger segments). An update
    // writes a few thousand entries, some of them large (a URL cited a
    // thousand times has a thousand anchor texts): with tantivy's least
    // arena (15 MB) the synthetic web's update of 2,616 entries was written
    // as two segments and merged, 0.18 s against 0.125 s in one. The arena
    // is taken as it fills.
    let budget = if full { 100_000_000 } else { 64_000_000 };
    let mut writer: IndexWriter = idx.index.writer_with_num_threads(1, budget)?;
    let mut references: IndexWriter = idx.references.writer_with_num_threads(1, budget / 2)?;
    for w in [&mut writer, &mut references] {
        if full {
            // All its segments are merged into one at the end: none on the
            // way (a merge under way would keep its segments from that one).
            w.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        } else {
            w.set_merge_policy(Box::new(FewSegments));
        }
    }
    let mut entries = 0u64;
    let Parts {
        targets,
        mut refs,
        docs,
        urls,
    } = parts;
    for id in targets {
        if !full {
            writer.delete_term(Term::from_field_u64(f.id, id as u64));
            references.delete_term(Term::from_field_u64(rf.id, id as u64));
        }
        let doc = docs.get(&id);
        let refs = refs.remove(&id).unwrap_or_default();
        // A URL no document reads or cites any more has no entry.
        let Some(url) = urls.get(&id).filter(|_| doc.is_some() || !refs.is_empty()) else {
            continue;
        };
        writer.add_document(entry(&f, id, url, doc, &refs, &docs, &urls))?;
        if !refs.is_empty() {
            references.add_document(references_entry(&rf, id, &refs))?;
        }
        entries += 1;
    }
    let mut postings = 0u64;
    if full || old.as_ref().is_none_or(|m| m.library != mark.library) {
        if !full {
            writer.delete_term(Term::from_field_text(f.kind, "library"));
        }
        for (p, vl) in store.library_everything()? {
            writer.add_document(library_entry(&f, &p, &vl))?;
            postings += 1;
        }
    }
    // Both commits carry the mark they bring the index to: an update cut
    // short between them leaves two marks, and the next one rebuilds
    // ([`SearchIndex::halves_agree`]). One cut short after both is done
    // again from the old mark, which gives what both hold already.
    let stamp = serde_json::to_string(&mark)?;
    for w in [&mut references, &mut writer] {
        let mut commit = w.prepare_commit()?;
        commit.set_payload(&stamp);
        commit.commit()?;
    }
    // A full build leaves one segment per writer arena's worth of entries
    // (about 190,000): merged into one, every query reads one term
    // dictionary and one set of postings instead of several (a regular
    // expression walks each segment's dictionary whole). On the index of a
    // million URLs the merge adds 5-9 s to the build, and the server,
    // which answered about 1,450 searches/s on that index after five
    // updates (13 segments), answers about 2,100 on the merged build.
    // An update adds a small segment, which [`FewSegments`] merges with
    // the small one already there.
    if full {
        merge_into_one(&idx.index, &mut writer)?;
        merge_into_one(&idx.references, &mut references)?;
    }
    writer.wait_merging_threads()?;
    references.wait_merging_threads()?;
    spinneret_core::fs::write_atomically(&dir.join(MARK_FILE), stamp.as_bytes())?;
    Ok(UpdateStats {
        full,
        documents: store.document_count()?,
        changed_documents: changed,
        entries,
        postings,
    })
}

/// The merge policy of updates: the index stays one large segment and at
/// most one small one beside it.
///
/// Each update writes a small segment. Every segment costs each query its
/// own pass: a regular expression walks each segment's word list whole,
/// and a bare word opens four fields' postings in each. On the index of a
/// million URLs after five updates (eight segments) the server answered
/// about 1,800 searches/s, and 2,300 once it was one segment. So the small
/// segments are merged into one at each update, and everything into one
/// once the small segment and the large one's deleted entries (the entries
/// updates rewrote) come to a quarter of the large one: a merge of the
/// whole index (seconds on a million URLs) once in many updates, a merge
/// of the small ones (a fraction of that) at the others.
#[derive(Debug)]
struct FewSegments;

impl tantivy::indexer::MergePolicy for FewSegments {
    fn compute_merge_candidates(
        &self,
        segments: &[tantivy::index::SegmentMeta],
    ) -> Vec<tantivy::indexer::MergeCandidate> {
        use tantivy::indexer::MergeCandidate;
        let Some(largest) = segments.iter().max_by_key(|s| s.num_docs()) else {
            return Vec::new();
        };
        let rest: Vec<_> = segments.iter().filter(|s| s.id() != largest.id()).collect();
        let small: u64 = rest.iter().map(|s| u64::from(s.num_docs())).sum();
        let stale = small + u64::from(largest.num_deleted_docs());
        if !rest.is_empty() && stale * 4 >= u64::from(largest.max_doc()) {
            vec![MergeCandidate(segments.iter().map(|s| s.id()).collect())]
        } else if rest.len() > 1 {
            vec![MergeCandidate(rest.iter().map(|s| s.id()).collect())]
        } else {
            Vec::new()
        }
    }
}

/// Merge the searchable segments of `index` into one (nothing to do for
/// one or none).
fn merge_into_one(index: &Index, writer: &mut IndexWriter) -> anyhow::Result<()> {
    let segments = index.searchable_segment_ids()?;
    if segments.len() > 1 {
        writer.merge(&segments).wait()?;
    }
    Ok(())
}

/// A full build's parts: every document and every URL they cite.
fn all_parts(store: &Store) -> anyhow::Result<(Parts, u64)> {
    let mut parts = Parts {
        urls: store.all_urls()?,
        ..Parts::default()
    };
    let mut read = 0u64;
    // Documents come in URL id order, so each target's references are in
    // citing id order as they are pushed.
    store.for_each_document(0, |d| {
        read += 1;
        for (t, text) in references(d.links) {
            parts.refs.entry(t).or_default().push((d.url_id, text));
        }
        parts.docs.insert(d.url_id, Doc::new(d.title, d.bad_html));
        Ok(())
    })?;
    let mut targets: HashSet<i64> = parts.refs.keys().copied().collect();
    targets.extend(parts.docs.keys().copied());
    parts.targets = targets.into_iter().collect();
    parts.targets.sort_unstable();
    Ok((parts, read))
}

/// An update's parts: the documents written after change `since`, the
/// entries of every URL they cite or cited, each rebuilt from the
/// references its entry recorded and the changed documents' references.
fn changed_parts(store: &Store, idx: &SearchIndex, since: i64) -> anyhow::Result<(Parts, u64)> {
    let f = idx.reference_fields;
    let mut changed: HashMap<i64, Doc> = HashMap::new();
    let mut new_refs: HashMap<i64, Vec<(i64, String)>> = HashMap::new();
    store.for_each_document(since, |d| {
        for (t, text) in references(d.links) {
            new_refs.entry(t).or_default().push((d.url_id, text));
        }
        changed.insert(d.url_id, Doc::new(d.title, d.bad_html));
        Ok(())
    })?;
    let read = changed.len() as u64;
    if changed.is_empty() {
        return Ok((Parts::default(), 0));
    }
    let searcher = idx.references.reader()?.searcher();
    // What the changed documents cited before: the entries naming them.
    let mut affected: HashSet<i64> = changed.keys().copied().collect();
    affected.extend(new_refs.keys().copied());
    let cited_before = id_terms(f.citer, changed.keys());
    let mut old_entries = searcher.search(&cited_before, &tantivy::collector::DocSetCollector)?;
    // ... and the entries of every URL they cite now or are.
    let now = id_terms(f.id, &affected);
    old_entries.extend(searcher.search(&now, &tantivy::collector::DocSetCollector)?);

    // Each entry's references: those it recorded, less the changed
    // documents' (whose references are read anew), plus theirs.
    let mut refs: HashMap<i64, Vec<(i64, String)>> = HashMap::new();
    for addr in old_entries {
        let d: TantivyDocument = searcher.doc(addr)?;
        let Some(id) = d.get_first(f.id).and_then(|v| v.as_u64()) else {
            continue;
        };
        let id = id as i64;
        affected.insert(id);
        let recorded: Vec<(i64, String)> = d
            .get_first(f.refs)
            .and_then(|v| v.as_bytes())
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or_default();
        refs.insert(
            id,
            recorded
                .into_iter()
                .filter(|(s, _)| !changed.contains_key(s))
                .collect(),
        );
    }
    for (t, mut r) in new_refs {
        let all = refs.entry(t).or_default();
        all.append(&mut r);
        all.sort_by_key(|(s, _)| *s);
    }
    let mut targets: Vec<i64> = affected.into_iter().collect();
    targets.sort_unstable();

    // The URLs and documents the entries show: the targets and the citing
    // documents within each entry's bound.
    let mut wanted: HashSet<i64> = targets.iter().copied().collect();
    for r in refs.values() {
        wanted.extend(r.iter().take(MAX_CITERS).map(|(s, _)| *s));
    }
    let wanted: Vec<i64> = wanted.into_iter().collect();
    let urls = store.urls_of(&wanted)?;
    let unread: Vec<i64> = wanted
        .iter()
        .copied()
        .filter(|i| !changed.contains_key(i))
        .collect();
    let mut docs = changed;
    for (id, (title, bad)) in store.document_summaries(&unread)? {
        docs.insert(id, Doc::new(title, bad));
    }
    Ok((
        Parts {
            targets,
            refs,
            docs,
            urls,
        },
        read,
    ))
}

/// A query for the entries whose `field` holds any of `ids`.
fn id_terms<'a>(field: Field, ids: impl IntoIterator<Item = &'a i64>) -> TermSetQuery {
    TermSetQuery::new(
        ids.into_iter()
            .map(|&i| Term::from_field_u64(field, i as u64)),
    )
}

/// Where posting `p` is in the library: its line in the VL it is posted
/// in (what "In the library: VL" links to), on whichever page of the VL's
/// summary shows it; the server finds the page when asked.
fn place(p: &spinneret_store::Posting) -> String {
    format!("/library/posting/{}", p.id)
}

/// Posting `p`'s own page on the server, for one without a URL: a VL's
/// summary, a report's text.
fn own_page(p: &spinneret_store::Posting) -> String {
    use spinneret_store::PostingKind;
    match p.kind {
        PostingKind::Vl => format!("/library/{}", p.id),
        PostingKind::Report => format!("/library/report/{}", p.id),
        PostingKind::Pointer => place(p),
    }
}

/// The URL fields of `url`: its components, host and extension.
pub(crate) fn add_url(f: &Fields, e: &mut TantivyDocument, url: &str) {
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
}

/// The entry of library posting `p`, posted in the VL titled `vl`: a
/// pointer's title is also the anchor text by which the library cites its
/// URL, and the VL is what cites it.
fn library_entry(f: &Fields, p: &spinneret_store::Posting, vl: &str) -> TantivyDocument {
    let mut e = TantivyDocument::default();
    let place = place(p);
    e.add_u64(f.id, LIBRARY_IDS + p.id as u64);
    e.add_text(f.kind, "library");
    e.add_text(f.kind, "html");
    e.add_text(f.key, p.text.url.clone().unwrap_or_else(|| own_page(p)));
    if let Some(url) = &p.text.url {
        add_url(f, &mut e, url);
    }
    e.add_text(f.title, &p.text.title);
    if p.kind == spinneret_store::PostingKind::Pointer {
        e.add_text(f.anchor, &p.text.title);
        e.add_text(f.shown_anchor, &p.text.title);
    }
    e.add_text(f.cited_by, vl);
    e.add_text(
        f.shown_citing,
        format!("/library/{}", p.parent.unwrap_or_default()),
    );
    e.add_text(f.shown_citing_title, vl);
    e.add_u64(f.links, 0);
    e.add_text(f.place, place);
    e
}

/// The references' document of the URL `id`: every reference to it
/// (citing document id, anchor text) and the citing documents' ids.
fn references_entry(f: &ReferenceFields, id: i64, refs: &[(i64, String)]) -> TantivyDocument {
    let mut e = TantivyDocument::default();
    e.add_u64(f.id, id as u64);
    e.add_bytes(f.refs, &serde_json::to_vec(refs).unwrap_or_default());
    let mut citers: Vec<i64> = refs.iter().map(|(s, _)| *s).collect();
    citers.dedup();
    for s in citers {
        e.add_u64(f.citer, s as u64);
    }
    e
}

/// The entry of `url`: its document (when it is one) and the references
/// to it (citing document id, anchor text).
fn entry(
    f: &Fields,
    id: i64,
    url: &str,
    doc: Option<&Doc>,
    refs: &[(i64, String)],
    docs: &HashMap<i64, Doc>,
    urls: &HashMap<i64, String>,
) -> TantivyDocument {
    let mut e = TantivyDocument::default();
    e.add_u64(f.id, id as u64);
    e.add_text(f.key, url);
    add_url(f, &mut e, url);
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
    for (source, text) in refs.iter().take(MAX_CITERS) {
        if !text.is_empty() {
            e.add_text(f.anchor, text);
        }
        let Some(citing) = urls.get(source) else {
            continue;
        };
        e.add_text(f.cited_by, citing);
        if let Some(t) = title_of(source) {
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
        Some((s, text)) => (Some(*s), Some(text)),
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
    fn segments_are_merged_into_one() {
        let (schema, f) = schema();
        let index = Index::create_in_ram(schema);
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
        merge_into_one(&index, &mut writer).unwrap();
        for id in 0..3u64 {
            let mut d = TantivyDocument::new();
            d.add_u64(f.id, id);
            writer.add_document(d).unwrap();
            writer.commit().unwrap();
        }
        assert_eq!(index.searchable_segment_ids().unwrap().len(), 3);
        merge_into_one(&index, &mut writer).unwrap();
        writer.wait_merging_threads().unwrap();
        let ids = index.searchable_segment_ids().unwrap();
        assert_eq!(ids.len(), 1);
        let reader = index.reader().unwrap();
        reader.reload().unwrap();
        assert_eq!(reader.searcher().num_docs(), 3);
    }

    /// Segments as an index holds them: `(entries, deleted)` each.
    fn metas(index: &Index, sizes: &[(u32, u32)]) -> Vec<tantivy::index::SegmentMeta> {
        sizes
            .iter()
            .map(|&(docs, deleted)| {
                let meta =
                    index.new_segment_meta(tantivy::index::SegmentId::generate_random(), docs);
                match deleted {
                    0 => meta,
                    n => meta.with_delete_meta(n, 0),
                }
            })
            .collect()
    }

    /// What [`FewSegments`] merges, as sizes of the segments merged.
    fn merged(sizes: &[(u32, u32)]) -> Vec<Vec<u32>> {
        use tantivy::indexer::MergePolicy;
        let index = Index::create_in_ram(schema().0);
        let segments = metas(&index, sizes);
        FewSegments
            .compute_merge_candidates(&segments)
            .into_iter()
            .map(|c| {
                c.0.iter()
                    .map(|id| segments.iter().find(|s| s.id() == *id).unwrap().max_doc())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn updates_keep_one_large_segment_and_one_small() {
        // One segment, or a large one and a small one: nothing to merge.
        assert_eq!(merged(&[]), Vec::<Vec<u32>>::new());
        assert_eq!(merged(&[(1_000_000, 0)]), Vec::<Vec<u32>>::new());
        assert_eq!(
            merged(&[(1_000_000, 60_000), (70_000, 0)]),
            Vec::<Vec<u32>>::new()
        );
        // More small ones: they are merged into one, the large one left.
        assert_eq!(
            merged(&[(15_000, 0), (1_000_000, 60_000), (70_000, 0)]),
            vec![vec![15_000, 70_000]]
        );
        // The small ones and what updates deleted from the large one come
        // to a quarter of it: everything is merged.
        assert_eq!(
            merged(&[(150_000, 0), (1_000_000, 100_000)]),
            vec![vec![150_000, 1_000_000]]
        );
        assert_eq!(
            merged(&[(1_000, 0), (40_000, 9_000)]),
            vec![vec![1_000, 40_000]]
        );
    }

    /// A new, empty store file in a temporary directory (held by the first
    /// value), and where its index lives.
    fn new_store() -> (tempfile::TempDir, Store, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let store_path = tmp.path().join("s.db");
        let store = Store::open(&store_path).unwrap();
        let dir = index_dir(&store_path);
        (tmp, store, dir)
    }

    /// An index of version 3 kept each URL's references in its entry and
    /// has no `references/`: it is rebuilt, not opened.
    #[test]
    fn an_index_of_another_version_is_rebuilt() {
        let (_tmp, store, dir) = new_store();
        assert!(update(&store, &dir, false).unwrap().full);
        std::fs::remove_dir_all(dir.join(REFERENCES_DIR)).unwrap();
        let mut mark = read_mark(&dir).unwrap().unwrap();
        mark.version = 3;
        std::fs::write(dir.join(MARK_FILE), serde_json::to_string(&mark).unwrap()).unwrap();
        assert!(SearchIndex::open(&dir).unwrap().is_none());
        assert!(!is_current(&store, &dir).unwrap());
        assert!(update(&store, &dir, false).unwrap().full);
        assert!(dir.join(REFERENCES_DIR).join("meta.json").exists());
        assert!(SearchIndex::open(&dir).unwrap().is_some());
        assert!(!update(&store, &dir, false).unwrap().full);
    }

    /// An update that committed the references and not the entries (cut
    /// short, or the disk full) leaves the index to be rebuilt.
    #[test]
    fn an_index_left_half_updated_is_rebuilt() {
        let (_tmp, store, dir) = new_store();
        assert!(update(&store, &dir, false).unwrap().full);
        assert!(!update(&store, &dir, false).unwrap().full);
        let references = Index::open_in_dir(dir.join(REFERENCES_DIR)).unwrap();
        let mut w: IndexWriter = references.writer_with_num_threads(1, 15_000_000).unwrap();
        let mut commit = w.prepare_commit().unwrap();
        commit.set_payload("an update that did not finish");
        commit.commit().unwrap();
        drop(w);
        assert!(update(&store, &dir, false).unwrap().full);
        assert!(!update(&store, &dir, false).unwrap().full);
    }

    /// A store file copied over another's place, or a database reached by
    /// the same URL after a restore, is another store: its index is built
    /// anew, not updated (the ids of one are not the other's).
    #[test]
    fn the_index_of_another_store_is_rebuilt() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a.db"), tmp.path().join("b.db"));
        let (store_a, store_b) = (Store::open(&a).unwrap(), Store::open(&b).unwrap());
        let a_id = store_a.identity().unwrap();
        assert_eq!(a_id.len(), 32, "{a_id}");
        assert_ne!(a_id, store_b.identity().unwrap());
        drop(store_a);
        assert_eq!(Store::open(&a).unwrap().identity().unwrap(), a_id);
        let dir = index_dir(&a);
        assert!(update(&Store::open(&a).unwrap(), &dir, false).unwrap().full);
        assert!(is_current(&Store::open(&a).unwrap(), &dir).unwrap());
        // Both are empty (the same change numbers): only the identity
        // tells them apart.
        assert!(!is_current(&store_b, &dir).unwrap());
        assert!(update(&store_b, &dir, false).unwrap().full);
        assert!(!update(&store_b, &dir, false).unwrap().full);
    }

    #[test]
    fn the_index_lives_beside_the_store() {
        assert_eq!(
            index_dir(Path::new("/var/lib/spinneret/spinneret.db")),
            PathBuf::from("/var/lib/spinneret/spinneret.db.search")
        );
    }

    /// `serve` out of file descriptors took an unreadable mark for a
    /// missing index and removed the index directory to build it anew.
    #[test]
    fn a_mark_that_cannot_be_read_leaves_the_index_where_it_is() {
        let (_tmp, store, dir) = new_store();
        update(&store, &dir, false).unwrap();
        assert!(is_current(&store, &dir).unwrap());
        // A mark that is not a file fails to read as EMFILE would.
        let mark = dir.join(MARK_FILE);
        std::fs::remove_file(&mark).unwrap();
        std::fs::create_dir(&mark).unwrap();
        let e = update(&store, &dir, false).unwrap_err();
        assert!(format!("{e:#}").starts_with("cannot read "), "{e:#}");
        assert!(is_current(&store, &dir).is_err());
        assert!(mark.is_dir() && dir.join("meta.json").exists());
        // A mark that reads but is no mark is rebuilt.
        std::fs::remove_dir(&mark).unwrap();
        std::fs::write(&mark, "{").unwrap();
        assert!(update(&store, &dir, false).unwrap().full);
        assert!(is_current(&store, &dir).unwrap());
    }
}
