//! Where each reference is written in the source: its line and column, for
//! reports that point at a file (SARIF, CI annotations, an editor's
//! `file:line:column`).
//!
//! html5ever's tokenizer tells only the line it is on when it emits a tag
//! (the line of the tag's `>`). The tokenizer reads one buffer holding the
//! whole text, so when it emits a token the bytes it has not yet read are
//! what is left of that buffer: the token ends where they begin. A start
//! tag begins at the first `<` and letter after the markup token before it
//! ([`tag_start`]). Its source is then read as the tokenizer reads
//! attributes ([`attribute_values`]), and a reference is placed at the first
//! character of its attribute's value as written (entities, line breaks
//! and all), or, for a URL within a value (a `srcset` candidate, a refresh
//! URL), at that URL. Lines and columns are counted from the start of the
//! text, once, in document order.

/// A place in the text not known.
pub const UNKNOWN: usize = usize::MAX;

/// A tag whose source is not known: its references keep the tokenizer's
/// line and no column.
pub const UNKNOWN_TAG: TagSpan = TagSpan {
    start: UNKNOWN,
    end: UNKNOWN,
};

/// The source of one start tag: byte offsets of its `<` and just past its
/// `>` in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagSpan {
    /// Where its `<` is.
    pub start: usize,
    /// Just past its `>`.
    pub end: usize,
}

impl Default for TagSpan {
    fn default() -> TagSpan {
        UNKNOWN_TAG
    }
}

/// An attribute a reference's value is, or is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attribute {
    /// `href` (`a`, `area`, `link`).
    Href,
    /// `src` (`img`, `script`, frames, `embed`, `source`).
    Src,
    /// `srcset`: its candidates' URLs.
    Srcset,
    /// `data` (`object`).
    Data,
    /// `action` (`form`).
    Action,
    /// `content` (a refresh `meta`): the URL in it.
    Content,
    /// `value` (MOMspider's `<META HEADER … VALUE>`): the URL in it.
    Value,
    /// `poster` (`video`).
    Poster,
    /// `background` (`body`, `table`, `td`).
    Background,
    /// `cite` (`blockquote`, `q`, `ins`, `del`).
    Cite,
    /// `formaction` (`button`, `input`).
    Formaction,
    /// `xlink:href` (SVG's `image`, `use`).
    XlinkHref,
}

impl Attribute {
    /// Every attribute, in the order of their discriminants.
    const ALL: [Attribute; 12] = [
        Attribute::Href,
        Attribute::Src,
        Attribute::Srcset,
        Attribute::Data,
        Attribute::Action,
        Attribute::Content,
        Attribute::Value,
        Attribute::Poster,
        Attribute::Background,
        Attribute::Cite,
        Attribute::Formaction,
        Attribute::XlinkHref,
    ];

    /// The attribute of this name (lower case), if a reference can be one.
    pub fn named(name: &str) -> Option<Attribute> {
        Attribute::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Its name, as written in lower case.
    fn name(self) -> &'static str {
        match self {
            Attribute::Href => "href",
            Attribute::Src => "src",
            Attribute::Srcset => "srcset",
            Attribute::Data => "data",
            Attribute::Action => "action",
            Attribute::Content => "content",
            Attribute::Value => "value",
            Attribute::Poster => "poster",
            Attribute::Background => "background",
            Attribute::Cite => "cite",
            Attribute::Formaction => "formaction",
            Attribute::XlinkHref => "xlink:href",
        }
    }

    /// Whether it holds URLs among other text (a `srcset`'s candidates, a
    /// refresh's `0; url=…`), each placed where it is written in the
    /// value, rather than being one URL.
    fn holds_urls(self) -> bool {
        matches!(
            self,
            Attribute::Srcset | Attribute::Content | Attribute::Value
        )
    }
}

/// Where a reference is written: the start tag it is in (an index into the
/// tags given to [`places`]), and the attribute its value is, or is in.
/// Eight bytes a reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// The tag's index.
    pub tag: u32,
    /// The attribute.
    pub attribute: Attribute,
}

/// Where the start tag that ends at `end` begins: the first `<` followed
/// by an ASCII letter at or after `from` (where the markup token before it
/// ended). Between two markup tokens there is only text, and in text a `<`
/// and a letter always open a tag; the raw text of `script`, `style`,
/// `title` and the like, where they do not, ends with an end tag, itself a
/// token. [`UNKNOWN`] when there is none before `end`.
pub fn tag_start(text: &str, from: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    if end > bytes.len() || from >= end {
        return UNKNOWN;
    }
    let mut at = from;
    while let Some(i) = memchr_lt(&bytes[at..end]) {
        let lt = at + i;
        if bytes.get(lt + 1).is_some_and(u8::is_ascii_alphabetic) {
            return lt;
        }
        at = lt + 1;
    }
    UNKNOWN
}

/// The first `<` in `bytes`.
fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'<')
}

/// Whitespace as the tokenizer reads it between attributes (a `\r` is read
/// as a line feed).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Where each [`Attribute`] of a tag's source has its value (byte offsets
/// in the tag; an empty range where it has none), by the attribute's
/// place in [`Attribute::ALL`]: the first of each name, as HTML keeps.
type Values = [Option<(usize, usize)>; Attribute::ALL.len()];

/// The values of the [`Attribute`]s in `tag`, the source of one start tag
/// from its `<`, read as the HTML tokenizer reads attributes: the tag
/// name, then names separated by whitespace or `/`, each with an optional
/// `=` and a value that is quoted (`"…"`, `'…'`) or runs to whitespace or
/// `>`. One pass, whatever the tag holds; other attributes are passed over.
fn attribute_values(tag: &str) -> Values {
    let b = tag.as_bytes();
    let n = b.len();
    let mut out: Values = [None; Attribute::ALL.len()];
    let mut keep = |name: &str, value: (usize, usize)| {
        if let Some(k) = Attribute::ALL
            .iter()
            .position(|a| a.name().eq_ignore_ascii_case(name))
        {
            out[k].get_or_insert(value);
        }
    };
    // `<` and the tag name.
    let mut i = 1;
    while i < n && !is_space(b[i]) && b[i] != b'/' && b[i] != b'>' {
        i += 1;
    }
    loop {
        while i < n && (is_space(b[i]) || b[i] == b'/') {
            i += 1;
        }
        if i >= n || b[i] == b'>' {
            return out;
        }
        // A name may begin with `=`; it runs to whitespace, `/`, `>` or `=`.
        let name_start = i;
        i += 1;
        while i < n && !is_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        let name = &tag[name_start..i];
        let name_end = i;
        while i < n && is_space(b[i]) {
            i += 1;
        }
        if i >= n || b[i] != b'=' {
            // No value: an empty one where the name ends.
            keep(name, (name_end, name_end));
            continue;
        }
        i += 1;
        while i < n && is_space(b[i]) {
            i += 1;
        }
        let value = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let start = i + 1;
                let end = b[start..]
                    .iter()
                    .position(|&c| c == q)
                    .map_or(n, |p| start + p);
                i = (end + 1).min(n);
                (start, end)
            }
            _ => {
                let start = i;
                while i < n && !is_space(b[i]) && b[i] != b'>' {
                    i += 1;
                }
                (start, i)
            }
        };
        keep(name, value);
    }
}

/// A place in the text: its byte offset, and its line and column (from 1,
/// the column in characters), as the HTML standard counts lines: `\n`,
/// `\r\n` and a lone `\r` each end one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cursor {
    offset: usize,
    line: u64,
    column: u32,
}

impl Cursor {
    const START: Cursor = Cursor {
        offset: 0,
        line: 1,
        column: 1,
    };

    /// Move forward to `to` (at or after the cursor, on a character boundary).
    fn advance(&mut self, text: &[u8], to: usize) {
        for (i, &b) in text[self.offset..to].iter().enumerate() {
            match b {
                b'\n' => {
                    self.line += 1;
                    self.column = 1;
                }
                // A `\r` ends a line unless a `\n` follows.
                b'\r' if text.get(self.offset + i + 1) != Some(&b'\n') => {
                    self.line += 1;
                    self.column = 1;
                }
                b'\r' => {}
                // Count a character at its first byte.
                b if b & 0xC0 != 0x80 => self.column = self.column.saturating_add(1),
                _ => {}
            }
        }
        self.offset = to;
    }
}

/// Where `inner`, a slice of `outer`, starts in it.
fn offset_in(outer: &str, inner: &str) -> Option<usize> {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    (i >= o && i + inner.len() <= o + outer.len()).then(|| i - o)
}

/// The URLs written in `value`, an attribute's value as written, that
/// holds several (see [`Attribute::holds_urls`]): where each starts in it,
/// in order, read as the parser reads the decoded value.
fn urls_in(attribute: Attribute, value: &str) -> Vec<Option<usize>> {
    match attribute {
        Attribute::Srcset => super::attribute_urls::srcset_candidates(value)
            .into_iter()
            .map(|(url, _)| offset_in(value, url))
            .collect(),
        _ => super::attribute_urls::refresh_target(value)
            .map(|(_, url)| offset_in(value, url))
            .into_iter()
            .collect(),
    }
}

/// Where, in `tag`, each reference of the tag (`sources`, in order) is
/// written: the first non-blank character of its attribute's value; for
/// an attribute that holds several URLs, the `k`th URL written in it for
/// its `k`th reference, read structurally (the same count, or the value's
/// start for each: a character reference that made or hid a separator);
/// the tag's `<` (0) where its attribute is not there. Linear in the tag.
fn offsets_in_tag(tag: &str, sources: &[Source]) -> Vec<usize> {
    const N: usize = Attribute::ALL.len();
    let values = attribute_values(tag);
    let mut wanted = [0usize; N];
    for s in sources {
        wanted[s.attribute as usize] += 1;
    }
    let mut urls: [Option<Vec<Option<usize>>>; N] = Default::default();
    let mut taken = [0usize; N];
    sources
        .iter()
        .map(|source| {
            let a = source.attribute as usize;
            let Some((start, end)) = values[a] else {
                return 0;
            };
            let written = &tag[start..end];
            let first = start + written.len() - written.trim_start_matches(is_space_char).len();
            if !source.attribute.holds_urls() {
                return first;
            }
            let urls = urls[a].get_or_insert_with(|| urls_in(source.attribute, written));
            let k = taken[a];
            taken[a] += 1;
            match urls.len() == wanted[a] {
                true => urls[k].map_or(first, |at| start + at),
                false => first,
            }
        })
        .collect()
}

/// [`is_space`] for a character.
fn is_space_char(c: char) -> bool {
    c.is_ascii() && is_space(c as u8)
}

/// The line and column of each reference, from where it is written
/// (`sources`, one per reference, those of one tag consecutive, each naming
/// one of `tags`): the first character of its attribute's value as
/// written, or of the URL in a value that holds several. `None` where the
/// place is not known (the tag's source is not).
pub fn places(text: &str, tags: &[TagSpan], sources: &[Source]) -> Vec<Option<(u64, u32)>> {
    let bytes = text.as_bytes();
    let mut out = vec![None; sources.len()];
    let mut cursor = Cursor::START;
    let mut i = 0;
    while i < sources.len() {
        let index = sources[i].tag;
        let n = sources[i..].iter().take_while(|s| s.tag == index).count();
        let TagSpan { start, end } = tags.get(index as usize).copied().unwrap_or(UNKNOWN_TAG);
        let known = start != UNKNOWN
            && end <= text.len()
            && start < end
            && start >= cursor.offset
            && text.is_char_boundary(start)
            && text.is_char_boundary(end);
        if known {
            let tag = &text[start..end];
            let offsets = offsets_in_tag(tag, &sources[i..i + n]);
            let mut found: Vec<(usize, usize)> = offsets
                .into_iter()
                .enumerate()
                .map(|(k, at)| (at, i + k))
                .collect();
            cursor.advance(bytes, start);
            found.sort_unstable();
            let mut place = cursor;
            for (at, r) in found {
                place.advance(bytes, start + at);
                out[r] = Some((place.line, place.column));
            }
        }
        i += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Attribute::*;
    use super::*;

    /// The places of references given as (tag, attribute, value): the tag
    /// is the `n`th start tag of `text` (0-based), found as the parser
    /// finds it, from the end of the markup before it.
    fn at(text: &str, refs: &[(u32, Attribute, &str)]) -> Vec<Option<(u64, u32)>> {
        // Each start tag's span, walking the text as the sink does: a tag
        // ends at the first `>` after its start outside quotes.
        let mut spans = Vec::new();
        let mut from = 0;
        while let Some(start) = Some(tag_start(text, from, text.len())).filter(|&s| s != UNKNOWN) {
            let attrs_end = {
                let b = text.as_bytes();
                let mut i = start;
                let mut quote = None;
                loop {
                    match (b[i], quote) {
                        (b'"' | b'\'', None) if b[i - 1] == b'=' || is_space(b[i - 1]) => {
                            quote = Some(b[i])
                        }
                        (q, Some(open)) if q == open => quote = None,
                        (b'>', None) => break i + 1,
                        _ => {}
                    }
                    i += 1;
                }
            };
            spans.push(TagSpan {
                start,
                end: attrs_end,
            });
            from = attrs_end;
        }
        let sources: Vec<Source> = refs
            .iter()
            .map(|&(tag, attribute, _)| Source { tag, attribute })
            .collect();
        places(text, &spans, &sources)
    }

    #[test]
    fn a_value_is_placed_at_its_first_character_on_its_own_line() {
        let text =
            "<p>\n  <a href=\"x.html\">x.html</a> <a href='y.html'>y</a>\n<img\n   src=z.png>";
        assert_eq!(
            at(
                text,
                &[(1, Href, "x.html"), (2, Href, "y.html"), (3, Src, "z.png")]
            ),
            vec![Some((2, 12)), Some((2, 40)), Some((4, 8))]
        );
    }

    #[test]
    fn lines_end_at_lf_crlf_and_a_lone_cr() {
        let text = "a\r\nb\rc\n<a href=\"u\">";
        assert_eq!(at(text, &[(0, Href, "u")]), vec![Some((4, 10))]);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let text = "<p>é€😀</p><a href=\"u\">";
        assert_eq!(at(text, &[(1, Href, "u")]), vec![Some((1, 20))]);
    }

    #[test]
    fn a_value_changed_by_the_parser_is_placed_where_it_is_written() {
        // A character reference first, one inside, and a line break the
        // tokenizer reads as a line feed: each at its value's first character.
        let text = "\n  <a href=\"&amp;b\"><a href=\"a&amp;b\">\n<a href=\"mu\r\nlti\">";
        assert_eq!(
            at(
                text,
                &[(0, Href, "&b"), (1, Href, "a&b"), (2, Href, "mu\nlti")]
            ),
            vec![Some((2, 12)), Some((2, 29)), Some((3, 10))]
        );
    }

    #[test]
    fn the_value_is_the_named_attributes_whatever_other_attributes_hold() {
        let text = "<a title=\"see u.html\" href=\"u.html\">\n\
                    <img alt=\"logo.png\" src=\"logo.png\">\n\
                    <a data-href=\"dd.html\" href=\"dd.html\">\n\
                    <a title=\"<\" href=\"gt.html\">\n\
                    <img src=\"heart.png\" alt=\"<3\">";
        assert_eq!(
            at(
                text,
                &[
                    (0, Href, "u.html"),
                    (1, Src, "logo.png"),
                    (2, Href, "dd.html"),
                    (3, Href, "gt.html"),
                    (4, Src, "heart.png"),
                ]
            ),
            vec![
                Some((1, 29)),
                Some((2, 26)),
                Some((3, 30)),
                Some((4, 20)),
                Some((5, 11)),
            ]
        );
    }

    #[test]
    fn the_first_of_two_attributes_of_one_name_counts_and_names_ignore_case() {
        let text = "<A HREF=\"a.html\" href=\"b.html\">";
        assert_eq!(at(text, &[(0, Href, "a.html")]), vec![Some((1, 10))]);
    }

    #[test]
    fn attributes_are_read_as_the_tokenizer_reads_them() {
        let tag = "<a b c = 'x y' HREF=e/f src=\"h>i\"/ =j srcset href=no>";
        let values = attribute_values(tag);
        let value = |a: Attribute| values[a as usize].map(|(s, e)| &tag[s..e]);
        assert_eq!(value(Href), Some("e/f"), "the first of a name counts");
        assert_eq!(value(Src), Some("h>i"));
        let no_value = tag.find("srcset").unwrap() + "srcset".len();
        assert_eq!(values[Srcset as usize], Some((no_value, no_value)));
        assert_eq!(value(Data), None);
        assert_eq!(value(Content), None);
    }

    #[test]
    fn a_tag_begins_at_the_first_lt_and_letter_after_the_markup_before_it() {
        let text = "<b>1 < 2 <<a href=x>";
        assert_eq!(tag_start(text, 3, text.len()), 10);
        assert_eq!(tag_start(text, 11, text.len()), UNKNOWN);
        assert_eq!(tag_start(text, 5, 2), UNKNOWN);
    }

    #[test]
    fn candidates_are_placed_where_each_is_written_in_the_value() {
        let text = "<img src=\"a.png\"\n srcset=\"b.png 2x, a2.png 3x, a.png 4x\">";
        assert_eq!(
            at(
                text,
                &[
                    (0, Src, "a.png"),
                    (0, Srcset, "b.png"),
                    (0, Srcset, "a2.png"),
                    (0, Srcset, "a.png"),
                ]
            ),
            vec![Some((1, 11)), Some((2, 10)), Some((2, 20)), Some((2, 31))]
        );
        // A character reference in a candidate: the next is still its own.
        let text = "<img srcset=\"p.jpg?w=300&amp;q=8 1x, p.jpg 2x\">";
        let second = 1 + "<img srcset=\"p.jpg?w=300&amp;q=8 1x, ".len() as u32;
        assert_eq!(
            at(
                text,
                &[(0, Srcset, "p.jpg?w=300&q=8"), (0, Srcset, "p.jpg")]
            ),
            vec![Some((1, 14)), Some((1, second))]
        );
        // One that hides a separator: the candidates written are not the
        // parser's, and each is placed at the value's start.
        let text = "<img srcset=\"a.png 1x&#44; b.png 2x\">";
        assert_eq!(
            at(text, &[(0, Srcset, "a.png"), (0, Srcset, "b.png")]),
            vec![Some((1, 14)), Some((1, 14))]
        );
        // A refresh's URL, in `content`.
        let text = "<meta http-equiv=refresh content=\"5; url=f.html\">";
        let url = 1 + "<meta http-equiv=refresh content=\"5; url=".len() as u32;
        assert_eq!(at(text, &[(0, Content, "f.html")]), vec![Some((1, url))]);
    }

    #[test]
    fn an_unknown_tag_gives_no_place_and_later_tags_still_get_theirs() {
        let text = "<a href=\"u\">\n<a href=\"v\">";
        let tags = [UNKNOWN_TAG, TagSpan { start: 13, end: 25 }];
        let sources = [
            Source {
                tag: 0,
                attribute: Href,
            },
            Source {
                tag: 1,
                attribute: Href,
            },
        ];
        assert_eq!(places(text, &tags, &sources), vec![None, Some((2, 10))]);
    }

    #[test]
    fn a_tag_with_thousands_of_candidates_is_placed_in_one_pass() {
        let candidates: Vec<String> = (0..20_000).map(|i| format!("i{i}.png {i}w")).collect();
        let text = format!("<img srcset=\"{}\">", candidates.join(", "));
        let tags = [TagSpan {
            start: 0,
            end: text.len(),
        }];
        let sources = vec![
            Source {
                tag: 0,
                attribute: Srcset,
            };
            20_000
        ];
        let places = places(&text, &tags, &sources);
        assert_eq!(places[0], Some((1, 14)));
        assert_eq!(places[1], Some((1, 14 + "i0.png 0w, ".len() as u32)));
        assert!(places.iter().all(Option::is_some));
    }

    #[test]
    fn a_hostile_tag_is_read_in_one_pass() {
        // Candidates the parser decodes (so never found as written) and
        // attributes repeated many times: each read once.
        let n = 20_000;
        let text = format!("<img{} srcset=\"{}\">", " a".repeat(n), "&#97; ,".repeat(n));
        let tags = [TagSpan {
            start: 0,
            end: text.len(),
        }];
        let sources = vec![
            Source {
                tag: 0,
                attribute: Srcset,
            };
            n
        ];
        let places = places(&text, &tags, &sources);
        let first = 1 + format!("<img{} srcset=\"", " a".repeat(n)).len() as u32;
        assert_eq!(places[0], Some((1, first)));
        assert_eq!(places[n - 1], Some((1, first + 7 * (n as u32 - 1))));
    }
}
