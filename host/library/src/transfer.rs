//! The whole library as one JSON file, for backups and moves
//! (`spinneret library export`, `import`).
//!
//! Every posting keeps its id, its address on the server (`/library/N`,
//! `[library] worm = N`), through an export and an import.
//!
//! An import reads a file someone else may have written: it is bounded in
//! size, every posting is checked as the forms check it (titles, http(s)
//! URLs only, reports' HTML sanitised, e-mail addresses), passwords must be
//! argon2id hashes, sequence numbers must be unique in their VL and ids in
//! the file. Anything
//! wrong refuses the whole file, naming the posting; nothing is imported
//! until all of it is right, and then all of it is, in one transaction.

use super::input::Fields;
use serde::{Deserialize, Serialize};
use spinneret_store::{LibraryNode, PostingKind, PostingText, Store};
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;

/// What the file says it is.
const FORMAT: &str = "spinneret-library";
/// The version of the file's layout written: 2 gives every posting its
/// id; version 1's postings have none (an import numbers them anew).
const VERSION: u32 = 2;
/// The oldest version read.
const OLDEST: u32 = 1;
/// The largest file imported.
pub const MAX_FILE: u64 = 256 << 20;
/// The most postings imported.
pub const MAX_POSTINGS: usize = 1_000_000;
/// The largest sequence number imported (a VL's next number must fit).
const MAX_SEQ: i64 = 1 << 31;
/// The deepest library imported (sub-VLs within sub-VLs).
const MAX_DEPTH: usize = 50;
/// The largest id imported (the search index numbers postings above the
/// store's URLs, from 2^48).
const MAX_ID: i64 = 1 << 40;

/// A posting as a file holds it, read strictly: every key named, nothing
/// else kept (an unknown key is refused before it is held in memory).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Node {
    #[serde(default)]
    id: Option<i64>,
    kind: PostingKind,
    seq: i64,
    title: String,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    create_only: bool,
    #[serde(default)]
    author: Option<String>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    password: Option<String>,
    created_at: i64,
    updated_at: i64,
    #[serde(default)]
    last_seq: i64,
    #[serde(default)]
    postings: Vec<Node>,
}

/// The file: what it is, and the library from its root.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File<T> {
    format: String,
    version: u32,
    root: T,
}

/// Write the library of `store` to `out` as JSON; the number of postings
/// written (none when there is no library).
pub fn export(store: &Store, out: &mut dyn std::io::Write) -> anyhow::Result<usize> {
    let Some(root) = store.library_export()? else {
        anyhow::bail!("the store has no library yet: serve it and post, or import a library file");
    };
    let file = File {
        format: FORMAT.to_string(),
        version: VERSION,
        root: &root,
    };
    serde_json::to_writer_pretty(&mut *out, &file)?;
    out.write_all(b"\n")?;
    Ok(root.count())
}

/// Read and check the library file at `path` (see the module's
/// description), ready for [`Store::library_import`].
pub fn read(path: &Path) -> Result<LibraryNode, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut text = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut text)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if text.len() as u64 > MAX_FILE {
        return Err(format!(
            "it is larger than {} MiB, the most a library file may be",
            MAX_FILE >> 20
        ));
    }
    parse(&text)
}

/// Check a library file's bytes.
pub fn parse(text: &[u8]) -> Result<LibraryNode, String> {
    let file: File<Node> = serde_json::from_slice(text).map_err(|e| {
        format!("it is not a library file as `spinneret library export` writes ({e})")
    })?;
    if file.format != FORMAT {
        return Err(format!(
            "its format is `{}`, not `{FORMAT}`; write it with `spinneret library export`",
            file.format
        ));
    }
    if !(OLDEST..=VERSION).contains(&file.version) {
        return Err(format!(
            "it is version {} of the library file; this spinneret reads versions {OLDEST} to {VERSION}",
            file.version
        ));
    }
    if file.root.kind != PostingKind::Vl {
        return Err("its root is not a virtual library".into());
    }
    let mut seen = Seen {
        postings: 0,
        ids: HashSet::new(),
        with_id: file.root.id.is_some(),
    };
    checked(&file.root, "the root", 0, &mut seen)
}

/// What the check has met so far in the whole file.
struct Seen {
    postings: usize,
    ids: HashSet<i64>,
    /// Whether the postings have ids (the root's says: all or none).
    with_id: bool,
}

/// `node` and everything below it checked; `place` names it for messages.
fn checked(node: &Node, place: &str, depth: usize, seen: &mut Seen) -> Result<LibraryNode, String> {
    seen.postings += 1;
    if depth > MAX_DEPTH {
        return Err(format!(
            "{place}: it is more than {MAX_DEPTH} libraries deep, the most imported"
        ));
    }
    if seen.postings > MAX_POSTINGS {
        return Err(format!(
            "it has more than {MAX_POSTINGS} postings, the most imported"
        ));
    }
    let named = |e: &dyn std::fmt::Display| format!("{place} (\"{}\"): {e}", node.title);
    let given = PostingText {
        title: node.title.clone(),
        url: node.url.clone(),
        body: node.body.clone(),
        image: node.image.clone(),
        create_only: node.create_only,
        author: node.author.clone(),
        email: node.email.clone(),
    };
    let text = Fields::from(&given)
        .text(node.kind)
        .map_err(|e| named(&e))?;
    if node.last_seq > MAX_SEQ {
        return Err(named(&format!("its last number is above {MAX_SEQ}")));
    }
    if let Some(p) = &node.password
        && !super::auth::is_argon2id(p)
    {
        return Err(named(&"its password is not an argon2id hash"));
    }
    if node.created_at < 0 || node.updated_at < 0 {
        return Err(named(&"its dates are before 1970"));
    }
    match node.id {
        // Every id once: an id is a posting's address.
        Some(id) if seen.with_id => {
            if !(1..=MAX_ID).contains(&id) {
                return Err(named(&format!("its id {id} is not from 1 to {MAX_ID}")));
            }
            if !seen.ids.insert(id) {
                return Err(named(&format!(
                    "its id {id} is another posting's too; each posting has an id of its own"
                )));
            }
        }
        None if !seen.with_id => {}
        _ => {
            return Err(named(
                &"some postings have an id and others not; give each its id, or none (then the import numbers them anew)",
            ));
        }
    }
    if node.kind != PostingKind::Vl && !node.postings.is_empty() {
        return Err(named(&format!(
            "a {} cannot hold postings; only virtual libraries can",
            node.kind.as_str()
        )));
    }
    if node.create_only
        && let Some(p) = node.postings.iter().find(|p| p.kind != PostingKind::Vl)
    {
        return Err(named(&format!(
            "it is Create-Only but holds the {} \"{}\"",
            p.kind.as_str(),
            p.title
        )));
    }
    let mut seqs = HashSet::new();
    let mut postings = Vec::with_capacity(node.postings.len());
    for p in &node.postings {
        if !(1..=MAX_SEQ).contains(&p.seq) {
            return Err(named(&format!(
                "its posting \"{}\" has number {}; numbers go from 1 to {MAX_SEQ}",
                p.title, p.seq
            )));
        }
        if !seqs.insert(p.seq) {
            return Err(named(&format!(
                "two of its postings have number {}; each number is given once",
                p.seq
            )));
        }
        postings.push(checked(
            p,
            &format!("{place} › {}", p.seq),
            depth + 1,
            seen,
        )?);
    }
    let highest = node.postings.iter().map(|p| p.seq).max().unwrap_or(0);
    Ok(LibraryNode {
        id: node.id,
        kind: node.kind,
        seq: node.seq,
        text,
        password: node.password.clone(),
        created_at: node.created_at,
        updated_at: node.updated_at,
        last_seq: node.last_seq.max(highest),
        postings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(root: &str) -> String {
        format!(r#"{{"format":"spinneret-library","version":1,"root":{root}}}"#)
    }

    fn refused(root: &str) -> String {
        parse(file(root).as_bytes()).expect_err("refused")
    }

    const VL: &str =
        r#""kind":"vl","seq":0,"title":"Root","create_only":false,"created_at":1,"updated_at":1"#;

    #[test]
    fn a_pointer_that_is_not_on_the_web_refuses_the_file_naming_it() {
        let e = refused(&format!(
            r#"{{{VL},"postings":[{{"kind":"pointer","seq":4,"title":"Mine","url":"file:///etc/passwd","create_only":false,"created_at":1,"updated_at":1}}]}}"#
        ));
        assert_eq!(
            e,
            "the root › 4 (\"Mine\"): the URL `file:///etc/passwd` is not an http or https URL; only web addresses may be posted"
        );
    }

    #[test]
    fn numbers_given_twice_and_plain_passwords_are_refused() {
        let p = |seq: i64| {
            format!(
                r#"{{"kind":"pointer","seq":{seq},"title":"P{seq}","url":"http://a.example/","create_only":false,"created_at":1,"updated_at":1}}"#
            )
        };
        let e = refused(&format!(r#"{{{VL},"postings":[{},{}]}}"#, p(2), p(2)));
        assert_eq!(
            e,
            "the root (\"Root\"): two of its postings have number 2; each number is given once"
        );
        let e = refused(&format!(r#"{{{VL},"password":"hunter2"}}"#));
        assert_eq!(
            e,
            "the root (\"Root\"): its password is not an argon2id hash"
        );
    }

    #[test]
    fn scripts_in_reports_are_sanitised_on_the_way_in() {
        let root = parse(file(&format!(
            r#"{{{VL},"postings":[{{"kind":"report","seq":1,"title":"R","body":"<p>hi<script>alert(1)</script></p>","create_only":false,"created_at":1,"updated_at":1}}]}}"#
        )).as_bytes())
        .unwrap();
        assert_eq!(root.postings[0].text.body.as_deref(), Some("<p>hi</p>"));
        assert_eq!(root.last_seq, 1);
    }

    /// Ids are postings' addresses: kept, each once, all or none.
    #[test]
    fn ids_are_kept_given_once_and_given_to_all_or_none() {
        let p = |id: i64| {
            format!(
                r#"{{"id":{id},"kind":"pointer","seq":{id},"title":"P{id}","url":"http://a.example/","created_at":1,"updated_at":1}}"#
            )
        };
        let root = |id: &str, postings: &[String]| {
            format!(r#"{{{id}{VL},"postings":[{}]}}"#, postings.join(","))
        };
        let kept = parse(file(&root(r#""id":3,"#, &[p(37), p(38)])).as_bytes()).unwrap();
        assert_eq!(
            (kept.id, kept.postings[0].id, kept.postings[1].id),
            (Some(3), Some(37), Some(38))
        );
        assert_eq!(
            refused(&root(r#""id":37,"#, &[p(37)])),
            "the root › 37 (\"P37\"): its id 37 is another posting's too; each posting has an id of its own"
        );
        assert_eq!(
            refused(&root("", &[p(4)])),
            "the root › 4 (\"P4\"): some postings have an id and others not; give each its id, or none (then the import numbers them anew)"
        );
        assert_eq!(
            refused(&root(r#""id":0,"#, &[])),
            "the root (\"Root\"): its id 0 is not from 1 to 1099511627776"
        );
        let three = format!(r#"{{"format":"spinneret-library","version":3,"root":{{{VL}}}}}"#);
        let e = parse(three.as_bytes()).unwrap_err();
        assert_eq!(
            e,
            "it is version 3 of the library file; this spinneret reads versions 1 to 2"
        );
    }

    #[test]
    fn something_else_than_a_library_file_says_what_it_is() {
        let e = parse(br#"{"format":"warc","version":1,"root":{}}"#).unwrap_err();
        assert!(e.starts_with("it is not a library file"), "{e}");
        let e = parse(
            file(r#"{"kind":"pointer","seq":0,"title":"x","url":"http://a.example/","create_only":false,"created_at":1,"updated_at":1}"#)
                .as_bytes(),
        )
        .unwrap_err();
        assert_eq!(e, "its root is not a virtual library");
    }

    #[test]
    fn unknown_keys_costly_hashes_and_huge_numbers_are_refused() {
        let e = refused(&format!(r#"{{{VL},"junk":[0,0,0]}}"#));
        assert!(
            e.starts_with("it is not a library file") && e.contains("unknown field `junk`"),
            "{e}"
        );
        // A hash asking for 4 TiB of memory would be checked on the first
        // password tried.
        let costly = "$argon2id$v=19$m=4294967295,t=2,p=1$c2FsdHNhbHRzYWx0$XFz0vX9m0MAFxjAXJ9ODGnNRwyEWcS7TnWh+8mQTiaE";
        let e = refused(&format!(r#"{{{VL},"password":"{costly}"}}"#));
        assert_eq!(
            e,
            "the root (\"Root\"): its password is not an argon2id hash"
        );
        let e = refused(&format!(
            r#"{{{VL},"postings":[{{"kind":"pointer","seq":9223372036854775807,"title":"Far","url":"http://a.example/","created_at":1,"updated_at":1}}]}}"#
        ));
        assert_eq!(
            e,
            "the root (\"Root\"): its posting \"Far\" has number 9223372036854775807; numbers go from 1 to 2147483648"
        );
    }
}
