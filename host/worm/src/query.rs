//! Reading a query as a person typed it (seed 001, section 3.3: a search
//! box, not a programming language).
//!
//! A query is read by tantivy's query grammar. What the grammar reads as
//! something other than meant, or cannot read, is mended before it is
//! run, and never makes the search fail:
//!
//! - characters that only mean something to the grammar's other
//!   constructs (ranges, sets, single-quoted phrases, boosts):
//!   `McBryan's`, `[test]`, `{x}`, `a^b`, are read as the words they are
//!   part of;
//! - `name:` where `name` is none of the fields ([`FIELDS`]) is part of a
//!   word (`a:b`, `http://host/`);
//! - a real mistake in an operator is left out or read as words, and a
//!   note says which and why: a field with nothing after it (`title:`), a
//!   quotation mark or a parenthesis never closed, a `)` that closes
//!   nothing, `AND`, `OR` or `NOT` with nothing to join, a `-` alone.
//!
//! Regular expressions are checked and mended in [`crate::search`].

use tantivy::query_grammar::{self, UserInputAst, UserInputLeaf};

/// The fields a query may name, with what each holds.
pub const FIELDS: &[(&str, &str)] = &[
    ("title", "a document's title"),
    ("anchor", "the anchor texts of the references to a URL"),
    (
        "cited-by",
        "the titles and URLs of the documents citing a URL",
    ),
    ("url", "every component of the URL"),
    ("host", "the host and its labels"),
    ("ext", "the file name's extension"),
    (
        "bad",
        "a document's syntax faults (missing-quote, no-title, ...)",
    ),
];

/// A query as it will be run: the grammar's tree, and notes on what was
/// read otherwise than written, for the person who wrote it.
#[derive(Debug)]
pub(crate) struct Read {
    pub ast: UserInputAst,
    pub notes: Vec<String>,
}

/// Read `q` (trimmed, not empty).
pub(crate) fn read(q: &str) -> Read {
    if let Ok(ast) = query_grammar::parse_query(q)
        && names_only_fields(&ast)
    {
        return Read {
            ast,
            notes: Vec::new(),
        };
    }
    let mut notes = Vec::new();
    let mended = mend(q, &mut notes);
    let ast = match query_grammar::parse_query(&mended) {
        Ok(ast) => ast,
        Err(_) => {
            // Whatever mending missed: the grammar's own best reading,
            // and what it says it could not read.
            let (ast, errors) = query_grammar::parse_query_lenient(&mended);
            for e in errors {
                notes.push(format!(
                    "part of the query could not be read ({}); it was read as well as it could be",
                    e.message
                ));
            }
            ast
        }
    };
    Read { ast, notes }
}

/// Whether `name` is a field a query may name.
pub(crate) fn is_field(name: &str) -> bool {
    FIELDS.iter().any(|(f, _)| *f == name)
}

/// The fields, as a note lists them.
fn field_list() -> String {
    FIELDS
        .iter()
        .map(|(f, _)| format!("{f}:"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether every field `ast` names is one of [`FIELDS`] (and every range
/// or set names one: without a field, tantivy cannot run it).
fn names_only_fields(ast: &UserInputAst) -> bool {
    match ast {
        UserInputAst::Clause(clauses) => clauses.iter().all(|(_, a)| names_only_fields(a)),
        UserInputAst::Boost(a, _) => names_only_fields(a),
        UserInputAst::Leaf(leaf) => match &**leaf {
            UserInputLeaf::Literal(l) => l.field_name.as_deref().is_none_or(is_field),
            UserInputLeaf::All => true,
            UserInputLeaf::Range { field, .. } | UserInputLeaf::Set { field, .. } => {
                field.as_deref().is_some_and(is_field)
            }
            UserInputLeaf::Exists { field } => is_field(field),
            UserInputLeaf::Regex { field, .. } => field.as_deref().is_some_and(is_field),
        },
    }
}

/// A piece of a query, as [`mend`] reads it.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    /// White space.
    Space(String),
    /// `(` opening a group.
    Open,
    /// `)`.
    Close,
    /// `"a phrase"`, closed, as written.
    Phrase(String),
    /// `field:`, a field of [`FIELDS`], with its value right after it.
    Field(String),
    /// `/a regular expression/` right after a field, as written.
    Regex(String),
    /// `-` or `+` before a word, a phrase, a field or a group.
    Sign(char),
    /// `AND`, `OR`, `NOT`, `&&`, `||`.
    Operator(String),
    /// Text, written so that the grammar reads it as words.
    Word(String),
}

impl Piece {
    fn text(&self) -> String {
        match self {
            Piece::Space(s) | Piece::Phrase(s) | Piece::Word(s) | Piece::Operator(s) => s.clone(),
            Piece::Open => "(".into(),
            Piece::Close => ")".into(),
            Piece::Field(f) => format!("{f}:"),
            Piece::Regex(r) => format!("/{r}/"),
            Piece::Sign(c) => c.to_string(),
        }
    }
}

/// Characters a word may hold only escaped (the grammar's own, less the
/// ones it reads inside words: `*`, `!`, `+`, `-`, `~`).
const ESCAPED_IN_WORDS: &[char] = &['^', '`', ':', '{', '}', '"', '\'', '[', ']', '(', ')', '\\'];

/// `q` written so that the grammar reads what it holds as meant: the
/// operators it uses rightly as operators, the rest as words. `notes`
/// hears of every operator left out or read as words.
fn mend(q: &str, notes: &mut Vec<String>) -> String {
    let pieces = pieces(q, notes);
    let pieces = pair_parentheses(pieces, notes);
    let pieces = joining_operators(pieces, notes);
    let mut text = String::with_capacity(q.len() + 8);
    for (i, p) in pieces.iter().enumerate() {
        // What follows a group or a phrase directly (`(a)b`) is a term of
        // its own.
        let after_one = i > 0 && matches!(pieces[i - 1], Piece::Close | Piece::Phrase(_));
        if after_one && !matches!(p, Piece::Space(_) | Piece::Close) {
            text.push(' ');
        }
        text.push_str(&p.text());
    }
    text
}

/// How many characters at the start of `rest` are what the grammar reads
/// after a phrase: a slop (`~2`), a prefix (`*`) or a boost (`^2`, `^1.5`).
fn suffix(rest: &[char]) -> usize {
    let digits = |from: usize| {
        rest.get(from..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count())
    };
    match rest.first() {
        Some('*') => 1,
        Some('~') if digits(1) > 0 => 1 + digits(1),
        Some('^') if digits(1) > 0 => {
            let whole = 1 + digits(1);
            match rest.get(whole) {
                Some('.') if digits(whole + 1) > 0 => whole + 1 + digits(whole + 1),
                _ => whole,
            }
        }
        _ => 0,
    }
}

/// The pieces of `q`, left to right.
fn pieces(q: &str, notes: &mut Vec<String>) -> Vec<Piece> {
    let chars: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Groups open: a `)` closes one, or is text when none is open.
    let mut depth = 0usize;
    while i < chars.len() {
        let c = chars[i];
        // Whether a term starts here (after white space, a parenthesis, a
        // sign or a field), and whether an operator may.
        let last = out.last();
        let term_start = matches!(
            last,
            None | Some(Piece::Space(_) | Piece::Open | Piece::Sign(_) | Piece::Field(_))
        );
        let operator_start = matches!(last, None | Some(Piece::Space(_) | Piece::Open));
        if c.is_whitespace() {
            let end = run_end(&chars, i, |c| c.is_whitespace());
            out.push(Piece::Space(chars[i..end].iter().collect()));
            i = end;
            continue;
        }
        if c == '(' && term_start {
            out.push(Piece::Open);
            depth += 1;
            i += 1;
            continue;
        }
        if c == ')' && depth > 0 {
            out.push(Piece::Close);
            depth -= 1;
            i += 1;
            continue;
        }
        if c == '"' && term_start {
            match closing(&chars, i + 1, '"') {
                Some(end) => {
                    let end = end + 1 + suffix(&chars[end + 1..]);
                    out.push(Piece::Phrase(chars[i..end].iter().collect()));
                    i = end;
                }
                None => {
                    notes.push(
                        "a quotation mark (\") is not closed; what follows it was searched as words"
                            .into(),
                    );
                    i += 1;
                }
            }
            continue;
        }
        if (c == '-' || c == '+') && operator_start {
            match chars.get(i + 1) {
                Some(n) if !ends_word(*n, depth) => out.push(Piece::Sign(c)),
                _ => notes.push(format!("a `{c}` with nothing after it was left out")),
            }
            i += 1;
            continue;
        }
        // A word, up to white space or a parenthesis closing a group;
        // first, a field it may start with.
        let end = word_end(&chars, i, depth);
        let word: String = chars[i..end].iter().collect();
        if operator_start
            && let Some(op) = ["AND", "OR", "NOT", "&&", "||"]
                .iter()
                .find(|o| **o == word)
        {
            out.push(Piece::Operator(op.to_string()));
            i = end;
            continue;
        }
        if term_start
            && !matches!(last, Some(Piece::Field(_)))
            && let Some((name, after)) = word.split_once(':')
        {
            if is_field(name) {
                i = field(
                    &chars,
                    i + name.chars().count() + 1,
                    name,
                    depth,
                    &mut out,
                    notes,
                );
                continue;
            }
            if looks_like_a_field(name, after) {
                notes.push(format!(
                    "`{name}:` is not a field (the fields are {}); `{word}` was searched as words",
                    field_list()
                ));
            }
        }
        out.push(Piece::Word(escaped(&chars[i..end])));
        i = end;
    }
    out
}

/// The end of the word starting at `i`: white space, or a `)` when a
/// group is open (`depth`).
fn word_end(chars: &[char], i: usize, depth: usize) -> usize {
    run_end(chars, i, |c| !ends_word(c, depth))
}

/// Whether `c` ends a word: white space, or a `)` when a group is open.
fn ends_word(c: char, depth: usize) -> bool {
    c.is_whitespace() || (c == ')' && depth > 0)
}

/// After `field:` (its value starting at `i`, `depth` groups open): the
/// pieces it makes, and where the query goes on.
fn field(
    chars: &[char],
    i: usize,
    name: &str,
    depth: usize,
    out: &mut Vec<Piece>,
    notes: &mut Vec<String>,
) -> usize {
    let nothing = chars.get(i).is_none_or(|c| ends_word(*c, depth));
    if nothing {
        notes.push(format!(
            "`{name}:` has nothing after it; it was searched as the word {name}"
        ));
        out.push(Piece::Word(escaped(&name.chars().collect::<Vec<_>>())));
        return i;
    }
    out.push(Piece::Field(name.into()));
    match chars[i] {
        '/' => match closing(chars, i + 1, '/') {
            Some(end) => {
                out.push(Piece::Regex(chars[i + 1..end].iter().collect()));
                end + 1
            }
            None => {
                notes.push(format!(
                    "the regular expression after `{name}:` is not closed by a `/`; it was searched as words"
                ));
                let end = word_end(chars, i + 1, depth);
                out.push(Piece::Word(escaped(&chars[i + 1..end])));
                end
            }
        },
        // A group or a phrase: read as such next.
        '(' | '"' => i,
        _ => {
            let end = word_end(chars, i, depth);
            out.push(Piece::Word(escaped(&chars[i..end])));
            end
        }
    }
}

/// Whether `name:` before `after` was meant as a field (letters and
/// hyphens, not a URL's scheme or a time): worth a note when it is none.
fn looks_like_a_field(name: &str, after: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_alphabetic() || c == '-')
        && !after.starts_with("//")
}

/// The end of the run of characters from `i` that `keep` keeps.
fn run_end(chars: &[char], i: usize, keep: impl Fn(char) -> bool) -> usize {
    chars[i..]
        .iter()
        .position(|c| !keep(*c))
        .map_or(chars.len(), |n| i + n)
}

/// Where the unescaped `delimiter` closing what starts at `i` is.
fn closing(chars: &[char], i: usize, delimiter: char) -> Option<usize> {
    let mut escaped = false;
    for (j, c) in chars.iter().enumerate().skip(i) {
        match *c {
            '\\' if !escaped => escaped = true,
            c if c == delimiter && !escaped => return Some(j),
            _ => escaped = false,
        }
    }
    None
}

/// `word` written so that the grammar reads it as one word: its special
/// characters escaped, an escape already written kept, a boost (`^2` at
/// its end) kept.
fn escaped(word: &[char]) -> String {
    let boost = word.iter().rposition(|c| *c == '^').filter(|&at| {
        let n = &word[at + 1..];
        at > 0
            && !n.is_empty()
            && n.iter().all(|c| c.is_ascii_digit() || *c == '.')
            && n[0].is_ascii_digit()
            && n.iter().filter(|c| **c == '.').count() <= 1
    });
    let mut out = String::with_capacity(word.len() + 4);
    let mut i = 0;
    while i < word.len() {
        let c = word[i];
        if Some(i) == boost {
            out.extend(&word[i..]);
            break;
        }
        match c {
            '\\' => match word.get(i + 1) {
                Some(n) if ESCAPED_IN_WORDS.contains(n) => {
                    out.push('\\');
                    out.push(*n);
                    i += 1;
                }
                _ => out.push_str("\\\\"),
            },
            c if ESCAPED_IN_WORDS.contains(&c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// `pieces` without the `(` never closed and the empty groups, each with
/// a note (a `)` closing nothing is text already).
fn pair_parentheses(pieces: Vec<Piece>, notes: &mut Vec<String>) -> Vec<Piece> {
    let mut open = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        match p {
            Piece::Open => open.push(i),
            Piece::Close => {
                open.pop();
            }
            _ => {}
        }
    }
    for _ in &open {
        notes.push("a `(` is not closed; it was left out".into());
    }
    let mut kept: Vec<Piece> = Vec::with_capacity(pieces.len());
    for (i, p) in pieces.into_iter().enumerate() {
        if open.contains(&i) {
            continue;
        }
        // `()` holds nothing to search.
        if p == Piece::Close && kept.last() == Some(&Piece::Open) {
            kept.pop();
            notes.push("`()` holds nothing; it was left out".into());
            continue;
        }
        kept.push(p);
    }
    kept
}

/// `pieces` without the operators that join nothing (at the start or end
/// of the query or a group, or beside another operator), each with a note.
fn joining_operators(pieces: Vec<Piece>, notes: &mut Vec<String>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let significant = |p: &Piece| !matches!(p, Piece::Space(_));
    for i in 0..pieces.len() {
        let Piece::Operator(op) = &pieces[i] else {
            out.push(pieces[i].clone());
            continue;
        };
        let before = out.iter().rev().find(|p| significant(p));
        let after = pieces[i + 1..].iter().find(|p| significant(p));
        let binary = op != "NOT";
        let nothing_before = matches!(
            before,
            None | Some(Piece::Open | Piece::Operator(_) | Piece::Sign(_) | Piece::Field(_))
        );
        let nothing_after = match after {
            None | Some(Piece::Close) => true,
            Some(Piece::Operator(o)) => o != "NOT",
            _ => false,
        };
        if (binary && nothing_before) || nothing_after {
            let side = match binary && nothing_before {
                true => "nothing before it",
                false => "nothing after it",
            };
            notes.push(format!("`{op}` has {side} to join; it was left out"));
            continue;
        }
        out.push(pieces[i].clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `q` is mended to, and the notes.
    fn mended(q: &str) -> (String, Vec<String>) {
        let mut notes = Vec::new();
        (mend(q, &mut notes), notes)
    }

    #[test]
    fn what_the_grammar_reads_rightly_is_kept_as_written() {
        for q in [
            "title:worm",
            "ext:gif host:edu",
            "anchor:\"home page\"",
            "url:/photo.*/",
            "title:c OR title:b",
            "host:example -host:a",
            "anchor:(photo OR picture) -host:example",
            "NOT bad:no-title worm",
            "photo^2",
        ] {
            let r = read(q);
            assert!(r.notes.is_empty(), "{q}: {:?}", r.notes);
            assert_eq!(r.ast, query_grammar::parse_query(q).unwrap(), "{q}");
        }
    }

    #[test]
    fn plain_text_is_read_as_words() {
        // Characters only other constructs of the grammar use, and names
        // that are no field: words, without a note.
        for (q, expected) in [
            ("McBryan's photo", r"McBryan\'s photo"),
            ("[test]", r"\[test\]"),
            ("{x}", r"\{x\}"),
            ("http://www.helsinki.fi/", r"http\://www.helsinki.fi/"),
            ("10:30 a^b", r"10\:30 a\^b"),
            ("worm) :-)", r"worm\) \:-\)"),
            ("title:McBryan's", r"title:McBryan\'s"),
            ("it's (a photo)", r"it\'s (a photo)"),
        ] {
            assert_eq!(mended(q), (expected.to_string(), vec![]), "{q}");
            assert!(query_grammar::parse_query(expected).is_ok(), "{expected}");
        }
    }

    #[test]
    fn mistakes_in_operators_are_mended_and_said() {
        for (q, expected, note) in [
            (
                "title:",
                "title",
                "`title:` has nothing after it; it was searched as the word title",
            ),
            (
                "a:b",
                r"a\:b",
                "`a:` is not a field (the fields are title: anchor: cited-by: url: host: ext: bad:); `a:b` was searched as words",
            ),
            (
                "title:(worm",
                "title:worm",
                "a `(` is not closed; it was left out",
            ),
            (
                "\"virtual library",
                "virtual library",
                "a quotation mark (\") is not closed; what follows it was searched as words",
            ),
            (
                "photo AND",
                "photo ",
                "`AND` has nothing after it to join; it was left out",
            ),
            (
                "OR photo",
                " photo",
                "`OR` has nothing before it to join; it was left out",
            ),
            (
                "photo -",
                "photo ",
                "a `-` with nothing after it was left out",
            ),
            (
                "url:/mp[eg photo",
                r"url:mp\[eg photo",
                "the regular expression after `url:` is not closed by a `/`; it was searched as words",
            ),
            ("worm ()", "worm ", "`()` holds nothing; it was left out"),
        ] {
            assert_eq!(
                mended(q),
                (expected.to_string(), vec![note.to_string()]),
                "{q}"
            );
            assert!(query_grammar::parse_query(expected).is_ok(), "{expected}");
        }
    }

    #[test]
    fn every_query_is_mended_to_one_the_grammar_reads() {
        for q in [
            "McBryan's photo",
            "[test]",
            "{x}",
            "title:",
            "a:b",
            "((",
            "))",
            "\"",
            "-",
            "AND OR NOT",
            "title:title:title:",
            "\\",
            "a\\",
            "^^^",
            "url://",
            "''''",
            "title:\"photo",
            "- - -",
            "(a OR) (AND b)",
            "-(a b",
            "title:(photo helsinki)) x:",
            "url:/a b/ AND",
            "(a)b \"c d\"e \"f g\"~2 \"h i\"^1.5 (j)^2",
        ] {
            let (text, _) = mended(q);
            assert!(
                query_grammar::parse_query(&text).is_ok(),
                "{q} was mended to {text}, which the grammar cannot read"
            );
        }
        let r = read("AND OR NOT");
        assert_eq!(r.ast, UserInputAst::empty_query());
        assert_eq!(
            r.notes,
            [
                "`AND` has nothing before it to join; it was left out",
                "`OR` has nothing before it to join; it was left out",
                "`NOT` has nothing after it to join; it was left out"
            ]
        );
    }
}
