//! Reading a browser's bookmarks (seed 004, §2.1: "bookmarks files"): the
//! Netscape bookmark HTML every browser exports, Firefox's JSON backup and
//! Chromium's `Bookmarks` file. Each bookmark keeps the folders it sits in,
//! which become its category in the mirror (`Bookmarks/Work/Rust`). Only
//! http and https bookmarks are collected; the others (`javascript:`,
//! `place:`, `file:`) are counted and left.

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use serde_json::Value;
use std::cell::RefCell;
use url::Url;

/// The largest bookmarks file read.
pub const MAX_FILE: u64 = 64 << 20;
/// The deepest folder nesting kept (deeper folders join their parent).
pub const MAX_FOLDERS: usize = 16;

/// One bookmark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bookmark {
    /// The page.
    pub url: Url,
    /// Its title, as the browser keeps it.
    pub title: String,
    /// The folders it sits in, outermost first.
    pub folders: Vec<String>,
}

/// What a bookmarks file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bookmarks {
    /// The http and https bookmarks, in the file's order.
    pub items: Vec<Bookmark>,
    /// Bookmarks of other schemes, left out.
    pub skipped: usize,
}

/// Read the bookmarks file at `path`, whichever of the three formats it is.
pub fn read(path: &std::path::Path) -> Result<Bookmarks, String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE).read_to_string(&mut text))
        .map_err(|e| format!("cannot read the bookmarks file {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Read bookmarks from `text`: JSON (Firefox or Chromium) when it starts
/// with `{`, else the Netscape bookmark HTML.
pub fn parse(text: &str) -> Result<Bookmarks, String> {
    let mut out = Bookmarks::default();
    if text.trim_start().starts_with('{') {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("not a bookmarks JSON file: {e}"))?;
        if let Some(roots) = v.get("roots").and_then(Value::as_object) {
            // Chromium: roots.bookmark_bar / other / synced, each a folder.
            for root in roots.values() {
                json_tree(&CHROMIUM, root, &mut Vec::new(), &mut out, true);
            }
        } else if v.get("type").is_some() || v.get("children").is_some() {
            json_tree(&FIREFOX, &v, &mut Vec::new(), &mut out, true);
        } else {
            return Err("a JSON file that is neither Firefox's bookmarks backup nor Chromium's Bookmarks file".into());
        }
    } else {
        netscape(text, &mut out);
    }
    Ok(out)
}

fn push(out: &mut Bookmarks, url: &str, title: &str, folders: &[String]) {
    match Url::parse(url.trim()) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => out.items.push(Bookmark {
            title: title.trim().to_string(),
            url: u,
            folders: folders.iter().take(MAX_FOLDERS).cloned().collect(),
        }),
        _ => out.skipped += 1,
    }
}

/// A folder's name, or none for a root whose name is the browser's own.
fn folder_name(name: Option<&str>, root: bool) -> Option<String> {
    let name = name.map(str::trim).filter(|n| !n.is_empty())?;
    (!root).then(|| name.to_string())
}

/// How a browser's JSON bookmarks name things.
struct JsonFormat {
    /// The `type` of a bookmark.
    bookmark: &'static str,
    /// The `type` of a separator (skipped), if the browser has them.
    separator: Option<&'static str>,
    /// The key of a bookmark's URL.
    url: &'static str,
    /// The key of a bookmark's or a folder's name.
    name: &'static str,
}

/// Chromium's `Bookmarks` file: its roots are folders of the browser's own.
const CHROMIUM: JsonFormat = JsonFormat {
    bookmark: "url",
    separator: None,
    url: "url",
    name: "name",
};

/// Firefox's JSON backup: the root and its `…Folder` roots are the browser's own.
const FIREFOX: JsonFormat = JsonFormat {
    bookmark: "text/x-moz-place",
    separator: Some("text/x-moz-place-separator"),
    url: "uri",
    name: "title",
};

/// Gather the bookmarks of a JSON tree: `own` says the node is a folder
/// of the browser's own (a root), whose name is not a category.
fn json_tree(
    f: &JsonFormat,
    node: &Value,
    folders: &mut Vec<String>,
    out: &mut Bookmarks,
    own: bool,
) {
    let text = |key: &str| node.get(key).and_then(Value::as_str);
    let kind = text("type");
    if kind == Some(f.bookmark) {
        push(
            out,
            text(f.url).unwrap_or(""),
            text(f.name).unwrap_or(""),
            folders,
        );
        return;
    }
    if kind.is_some() && kind == f.separator {
        return;
    }
    let own = own || text("root").is_some_and(|r| r.ends_with("Folder"));
    let pushed = folder_name(text(f.name), own)
        .map(|n| folders.push(n))
        .is_some();
    let children = node.get("children").and_then(Value::as_array);
    for child in children.into_iter().flatten() {
        json_tree(f, child, folders, out, false);
    }
    if pushed {
        folders.pop();
    }
}

/// The Netscape bookmark file: `<DT><H3>Folder</H3>` names the `<DL>` that
/// follows it; `<DT><A HREF="…">Title</A>` is a bookmark of the folders open.
fn netscape(text: &str, out: &mut Bookmarks) {
    #[derive(Default)]
    struct State {
        /// The open `<DL>`s: each with its folder's name, if it had one.
        open: Vec<Option<String>>,
        /// The last `<H3>`'s text, waiting for its `<DL>`.
        pending: Option<String>,
        in_h3: bool,
        h3: String,
        anchor: Option<(String, String)>,
        out: Bookmarks,
    }
    struct Sink(RefCell<State>);
    fn attr<'a>(tag: &'a Tag, name: &str) -> Option<&'a str> {
        tag.attrs
            .iter()
            .find(|a| &*a.name.local == name)
            .map(|a| a.value.as_ref())
    }
    impl TokenSink for Sink {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let mut st = self.0.borrow_mut();
            match token {
                Token::TagToken(tag) => match (tag.kind, &*tag.name) {
                    (TagKind::StartTag, "h3") => {
                        st.in_h3 = true;
                        st.h3.clear();
                    }
                    (TagKind::EndTag, "h3") => {
                        st.in_h3 = false;
                        let name = st.h3.split_whitespace().collect::<Vec<_>>().join(" ");
                        st.pending = Some(name);
                    }
                    (TagKind::StartTag, "dl") => {
                        let name = st.pending.take().filter(|n| !n.is_empty());
                        st.open.push(name);
                    }
                    (TagKind::EndTag, "dl") => {
                        st.open.pop();
                    }
                    (TagKind::StartTag, "a") => {
                        st.anchor = attr(&tag, "href").map(|h| (h.to_string(), String::new()));
                    }
                    (TagKind::EndTag, "a") => {
                        if let Some((href, title)) = st.anchor.take() {
                            let folders: Vec<String> = st.open.iter().flatten().cloned().collect();
                            let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
                            push(&mut st.out, &href, &title, &folders);
                        }
                    }
                    _ => {}
                },
                Token::CharacterTokens(t) => {
                    if st.in_h3 {
                        st.h3.push_str(&t);
                    } else if let Some((_, title)) = st.anchor.as_mut() {
                        title.push_str(&t);
                    }
                }
                _ => {}
            }
            TokenSinkResult::Continue
        }
    }
    let tok = Tokenizer::new(
        Sink(RefCell::new(State::default())),
        TokenizerOpts::default(),
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(text));
    let _ = tok.feed(&input);
    tok.end();
    let st = tok.sink.0.into_inner();
    out.items.extend(st.out.items);
    out.skipped += st.out.skipped;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(b: &Bookmarks) -> Vec<(String, String, String)> {
        b.items
            .iter()
            .map(|i| (i.folders.join("/"), i.title.clone(), i.url.to_string()))
            .collect()
    }

    fn expected() -> Vec<(String, String, String)> {
        [
            ("", "Top", "https://top.example/"),
            ("Work", "Docs", "https://docs.example/a"),
            ("Work/Rust", "The Book", "https://doc.rust-lang.org/book/"),
            ("Fun", "Comics", "http://comics.example/"),
        ]
        .map(|(f, t, u)| (f.into(), t.into(), u.into()))
        .to_vec()
    }

    #[test]
    fn the_netscape_file_every_browser_exports() {
        let html = r#"<!DOCTYPE NETSCAPE-Bookmark-file-1>
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><A HREF="https://top.example/" ADD_DATE="1">Top</A>
    <DT><H3 ADD_DATE="1">Work</H3>
    <DL><p>
        <DT><A HREF="https://docs.example/a">Docs</A>
        <DT><H3>Rust</H3>
        <DL><p>
            <DT><A HREF="https://doc.rust-lang.org/book/">The
              Book</A>
            <DT><A HREF="javascript:alert(1)">Bookmarklet</A>
        </DL><p>
    </DL><p>
    <DT><H3>Fun</H3>
    <DL><p>
        <DT><A HREF="http://comics.example/">Comics</A>
        <DT><A HREF="place:sort=8">Recent</A>
    </DL><p>
</DL><p>
"#;
        let b = parse(html).unwrap();
        assert_eq!(seen(&b), expected());
        assert_eq!(b.skipped, 2);
    }

    #[test]
    fn chromiums_bookmarks_file() {
        let json = r#"{"checksum": "x", "roots": {
            "bookmark_bar": {"name": "Bookmarks bar", "type": "folder", "children": [
                {"type": "url", "name": "Top", "url": "https://top.example/"},
                {"type": "folder", "name": "Work", "children": [
                    {"type": "url", "name": "Docs", "url": "https://docs.example/a"},
                    {"type": "folder", "name": "Rust", "children": [
                        {"type": "url", "name": "The Book", "url": "https://doc.rust-lang.org/book/"}]}]}]},
            "other": {"name": "Other bookmarks", "type": "folder", "children": [
                {"type": "folder", "name": "Fun", "children": [
                    {"type": "url", "name": "Comics", "url": "http://comics.example/"},
                    {"type": "url", "name": "Settings", "url": "chrome://settings/"}]}]},
            "synced": {"name": "Mobile bookmarks", "type": "folder", "children": []}},
            "version": 1}"#;
        let b = parse(json).unwrap();
        assert_eq!(seen(&b), expected());
        assert_eq!(b.skipped, 1);
    }

    #[test]
    fn firefoxs_bookmarks_backup() {
        let json = r#"{"guid": "root________", "title": "", "type": "text/x-moz-place-container", "root": "placesRoot", "children": [
            {"title": "menu", "type": "text/x-moz-place-container", "root": "bookmarksMenuFolder", "children": [
                {"title": "Top", "type": "text/x-moz-place", "uri": "https://top.example/"},
                {"type": "text/x-moz-place-separator"},
                {"title": "Work", "type": "text/x-moz-place-container", "children": [
                    {"title": "Docs", "type": "text/x-moz-place", "uri": "https://docs.example/a"},
                    {"title": "Rust", "type": "text/x-moz-place-container", "children": [
                        {"title": "The Book", "type": "text/x-moz-place", "uri": "https://doc.rust-lang.org/book/"}]}]}]},
            {"title": "unfiled", "type": "text/x-moz-place-container", "root": "unfiledBookmarksFolder", "children": [
                {"title": "Fun", "type": "text/x-moz-place-container", "children": [
                    {"title": "Comics", "type": "text/x-moz-place", "uri": "http://comics.example/"},
                    {"title": "Most visited", "type": "text/x-moz-place", "uri": "place:sort=8"}]}]}]}"#;
        let b = parse(json).unwrap();
        assert_eq!(seen(&b), expected());
        assert_eq!(b.skipped, 1);
    }

    #[test]
    fn what_is_not_a_bookmarks_file_says_so() {
        assert_eq!(
            parse(r#"{"name": "package"}"#).unwrap_err(),
            "a JSON file that is neither Firefox's bookmarks backup nor Chromium's Bookmarks file"
        );
        assert!(
            parse("{ nope")
                .unwrap_err()
                .starts_with("not a bookmarks JSON file: ")
        );
        assert_eq!(parse("<p>no links</p>").unwrap(), Bookmarks::default());
    }
}
