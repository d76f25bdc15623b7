//! Where each reference is written in the source: its line and column, for
//! reports that point at a file (SARIF, CI annotations, an editor's
//! `file:line:column`).
//!
//! html5ever's tokenizer tells only the line it is on when it emits a tag
//! (the line of the tag's `>`). The tokenizer reads one buffer holding the
//! whole text, so when it emits a start tag the bytes it has not yet read
//! are what is left of that buffer: the tag ends where they begin. From
//! there the reference's value is found in the tag's source (after its
//! `=`, past an optional quote), and its line and column are counted from
//! the start of the text, once, in document order.

/// A tag end not known: the reference keeps the tokenizer's line and no column.
pub const UNKNOWN: usize = usize::MAX;

/// Longest tag whose source is searched again from its start for a value
/// not found after the previous one's (a `srcset` written out of order):
/// beyond it the reference points at the tag's `<`. Keeps a hostile tag
/// of many candidates linear.
const RESEARCH_LIMIT: usize = 4096;

/// How far past a value's first occurrence in a tag (not after an `=`) an
/// occurrence after an `=` is looked for.
const PREFERENCE_WINDOW: usize = 512;

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

/// Where `value` is written in `tag` (the source of one start tag) from
/// byte `from` on: preferably as an attribute's value (after `=` and an
/// optional quote), else anywhere (a `srcset` candidate, a refresh URL).
fn find_value(tag: &str, value: &str, from: usize) -> Option<usize> {
    if value.is_empty() {
        return None;
    }
    let mut first = None;
    for (i, _) in tag.get(from..)?.match_indices(value) {
        let at = from + i;
        // Past the window, the first occurrence stands (linear in the tag).
        if first.is_some_and(|f| at - f > PREFERENCE_WINDOW) {
            break;
        }
        let before = tag[..at].trim_end_matches(|c: char| c.is_ascii_whitespace());
        let before = before.strip_suffix(['"', '\'']).unwrap_or(before);
        if before
            .trim_end_matches(|c: char| c.is_ascii_whitespace())
            .ends_with('=')
        {
            return Some(at);
        }
        first.get_or_insert(at);
    }
    first
}

/// The line and column of each reference, from the end of the tag each
/// came from (`ends`, byte offsets; [`UNKNOWN`] when not known) and its
/// value (`values`, as the tag's attribute decoded it). A reference whose
/// value is not in its tag's source as written (a character reference in
/// it) points at the tag's `<`. `None` where the place is not known.
pub fn places(text: &str, ends: &[usize], values: &[&str]) -> Vec<Option<(u64, u32)>> {
    let bytes = text.as_bytes();
    let mut out = vec![None; ends.len()];
    let mut cursor = Cursor::START;
    let mut i = 0;
    while i < ends.len() {
        let end = ends[i];
        // The references of one tag are consecutive, with the same end.
        let n = ends[i..].iter().take_while(|&&e| e == end).count();
        let known = end != UNKNOWN && end <= text.len() && text.is_char_boundary(end);
        let start = match known {
            true => text[..end].rfind('<'),
            false => None,
        };
        if let Some(start) = start.filter(|&s| s >= cursor.offset) {
            let tag = &text[start..end];
            let mut found: Vec<(usize, usize)> = Vec::with_capacity(n);
            let mut from = 0;
            for (k, value) in values[i..i + n].iter().enumerate() {
                let at = find_value(tag, value, from).or_else(|| {
                    (from > 0 && tag.len() <= RESEARCH_LIMIT)
                        .then(|| find_value(tag, value, 0))
                        .flatten()
                });
                if let Some(at) = at {
                    from = at + value.len();
                }
                found.push((at.unwrap_or(0), i + k));
            }
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
    use super::*;

    /// The places of `values`, each in the tag that ends at the `n`th `>`
    /// given in `tags` (0-based).
    fn at(text: &str, tags: &[usize], values: &[&str]) -> Vec<Option<(u64, u32)>> {
        let closes: Vec<usize> = text.match_indices('>').map(|(i, _)| i + 1).collect();
        let ends: Vec<usize> = tags.iter().map(|&t| closes[t]).collect();
        places(text, &ends, values)
    }

    #[test]
    fn a_value_is_found_after_its_equals_sign_on_its_own_line() {
        let text =
            "<p>\n  <a href=\"x.html\">x.html</a> <a href='y.html'>y</a>\n<img\n   src=z.png>";
        assert_eq!(
            at(text, &[1, 3, 5], &["x.html", "y.html", "z.png"]),
            vec![Some((2, 12)), Some((2, 40)), Some((4, 8))]
        );
    }

    #[test]
    fn lines_end_at_lf_crlf_and_a_lone_cr() {
        let text = "a\r\nb\rc\n<a href=\"u\">";
        assert_eq!(at(text, &[0], &["u"]), vec![Some((4, 10))]);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let text = "<p>é€😀</p><a href=\"u\">";
        assert_eq!(at(text, &[2], &["u"]), vec![Some((1, 20))]);
    }

    #[test]
    fn a_value_written_with_a_character_reference_points_at_the_tag() {
        let text = "\n  <a href=\"a&amp;b\">";
        assert_eq!(at(text, &[0], &["a&b"]), vec![Some((2, 3))]);
    }

    #[test]
    fn a_value_also_in_an_earlier_attribute_is_found_where_it_is_the_value() {
        let text = "<a title=\"see u.html\" href=\"u.html\">";
        assert_eq!(at(text, &[0], &["u.html"]), vec![Some((1, 29))]);
    }

    #[test]
    fn candidates_of_one_tag_each_get_their_place_in_any_order() {
        let text = "<img src=\"a.png\"\n srcset=\"b.png 2x, a2.png 3x\">";
        // Pushed src first, then the candidates; and out of order.
        assert_eq!(
            at(text, &[0, 0, 0], &["a2.png", "b.png", "a.png"]),
            vec![Some((2, 20)), Some((2, 10)), Some((1, 11))]
        );
    }

    #[test]
    fn an_unknown_end_gives_no_place_and_later_tags_still_get_theirs() {
        let text = "<a href=\"u\">\n<a href=\"v\">";
        let places = places(text, &[UNKNOWN, 25], &["u", "v"]);
        assert_eq!(places, vec![None, Some((2, 10))]);
    }

    #[test]
    fn a_tag_with_thousands_of_candidates_is_placed_in_one_pass() {
        let candidates: Vec<String> = (0..20_000).map(|i| format!("i{i}.png {i}w")).collect();
        let text = format!("<img srcset=\"{}\">", candidates.join(", "));
        let values: Vec<String> = (0..20_000).map(|i| format!("i{i}.png")).collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let ends = vec![text.len(); values.len()];
        let places = places(&text, &ends, &values);
        assert_eq!(places[0], Some((1, 14)));
        assert!(places.iter().all(Option::is_some));
    }
}
