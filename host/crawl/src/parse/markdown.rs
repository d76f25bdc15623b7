//! Markdown read for its links, as lychee reads it: inline links
//! (`[text](url)`), reference links (`[text][ref]` and `[ref]`, with
//! their definitions), autolinks (`<https://…>`), images (`![alt](src)`),
//! bare URLs in the text (`https://…`), and the links of the HTML written
//! inside it (`<a href>`, `<img src>`, read by the HTML parse). Code, in
//! blocks or inline, is not read: its URLs are examples. Each link keeps
//! its line and column as written, for SARIF and GitHub's annotations.
//!
//! The places a fragment can point at are the headings, named as GitHub
//! names them (`## Getting started` is `#getting-started`, a second one
//! `#getting-started-1`), and the `id` and `<a name>` of its HTML.

use super::{RawReference, RefKind, html, resolve_references, tree_root};
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use spinneret_core::document::ParsedDocument;
use url::Url;

/// Parse a Markdown body fetched from `url` (`root`: the local tree's
/// root, as [`super::parse_html_under`] takes it): its references resolve
/// against `url`, root-relative ones under `root` for a local file.
pub fn parse_markdown_under(url: &Url, body: &[u8], root: Option<&Url>) -> ParsedDocument {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = String::from_utf8_lossy(body);
    let decode_errors = matches!(text, std::borrow::Cow::Owned(_));
    let facts = extract(&text);
    let (references, fragments) = resolve_references(facts.references, url, tree_root(url, root));
    ParsedDocument {
        title: facts.title,
        owner: None,
        expires_meta: None,
        http_equiv: Vec::new(),
        base: None,
        encoding: "UTF-8",
        decode_errors,
        parse_errors: u32::from(decode_errors),
        bad_html: Vec::new(),
        references,
        anchors: facts.anchors,
        fragments,
    }
}

/// What a Markdown text holds for the crawl.
#[derive(Debug, Default, PartialEq)]
pub struct MarkdownFacts {
    /// The first heading's text.
    pub title: Option<String>,
    /// Every link, in document order, with its place.
    pub references: Vec<RawReference>,
    /// The headings' names and the HTML's `id`s and `<a name>`s; `None`
    /// when the HTML had too many to keep.
    pub anchors: Option<Vec<String>>,
}

/// Where a byte offset of the text is: line and column (in characters),
/// both from 1.
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Lines { text, starts }
    }

    fn place(&self, offset: usize) -> (u64, u32) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(0, |s| s.chars().count() + 1);
        (line as u64, u32::try_from(column).unwrap_or(0))
    }
}

/// A link being read: its reference, and whether its text is collected.
struct Open {
    at: usize,
    image: bool,
}

/// Read `text` as Markdown (CommonMark with GitHub's tables, task lists,
/// strikethrough and footnotes; a YAML front matter block is skipped).
pub fn extract(text: &str) -> MarkdownFacts {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let lines = Lines::new(text);
    let mut facts = MarkdownFacts::default();
    let mut anchors = Some(Vec::new());
    let mut slugs = std::collections::HashMap::<String, u32>::new();
    let mut links: Vec<Open> = Vec::new();
    let mut heading: Option<String> = None;
    let mut code = 0usize;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        let source = &text[range.clone()];
        let inline_code = matches!(event, Event::Code(_));
        match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => {
                let image = matches!(source.as_bytes().first(), Some(b'!'));
                let href = match link_type {
                    LinkType::Email => format!("mailto:{dest_url}"),
                    _ => dest_url.to_string(),
                };
                let offset = range.start + value_offset(source, &href, link_type);
                let (line, column) = lines.place(offset);
                links.push(Open {
                    at: facts.references.len(),
                    image,
                });
                facts.references.push(RawReference {
                    href,
                    kind: if image {
                        RefKind::Image
                    } else {
                        RefKind::Anchor
                    },
                    text: String::new(),
                    line,
                    column,
                });
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some(open) = links.pop() {
                    let r = &mut facts.references[open.at];
                    r.text = html::truncate_chars(
                        r.text.split_whitespace().collect::<Vec<_>>().join(" "),
                        html::MAX_ANCHOR_TEXT,
                    );
                    // An image in a link gives the link its alt text.
                    if open.image
                        && let Some(outer) = links.last()
                    {
                        let alt = facts.references[open.at].text.clone();
                        facts.references[outer.at].text.push_str(&alt);
                    }
                }
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                let name = heading.take().unwrap_or_default();
                let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
                if facts.title.is_none() && !name.is_empty() {
                    facts.title = Some(html::truncate_chars(name.clone(), html::MAX_TITLE));
                }
                if let Some(a) = anchors.as_mut() {
                    a.push(unique_slug(&slug(&name), &mut slugs));
                }
            }
            Event::Start(Tag::CodeBlock(_) | Tag::MetadataBlock(_)) => code += 1,
            Event::End(TagEnd::CodeBlock | TagEnd::MetadataBlock(_)) => {
                code = code.saturating_sub(1);
            }
            Event::Text(t) | Event::Code(t) => {
                let in_code = code > 0 || inline_code;
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
                if let Some(open) = links.last() {
                    facts.references[open.at].text.push_str(&t);
                } else if !in_code {
                    bare_urls(&t, source, range.start, &lines, &mut facts.references);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(open) = links.last() {
                    facts.references[open.at].text.push(' ');
                }
                if let Some(h) = heading.as_mut() {
                    h.push(' ');
                }
            }
            // An HTML block comes whole with its start; its lines follow
            // as `Html` events, already read.
            Event::Start(Tag::HtmlBlock) | Event::InlineHtml(_) => {
                html_links(source, range.start, &lines, &mut facts, &mut anchors);
            }
            _ => {}
        }
    }
    facts.anchors = anchors;
    facts
}

/// Where a link's destination starts in its source: after `](` for an
/// inline link, after `<` for an autolink; a reference link is placed at
/// its start (its destination is written in its definition).
fn value_offset(source: &str, href: &str, link_type: LinkType) -> usize {
    match link_type {
        LinkType::Autolink | LinkType::Email => usize::from(source.starts_with('<')),
        LinkType::Inline => source
            .rfind(href)
            .or_else(|| source.rfind("](").map(|i| i + 2))
            .unwrap_or(0),
        _ => 0,
    }
}

/// The links of HTML written in Markdown at `offset`, placed in the text.
fn html_links(
    source: &str,
    offset: usize,
    lines: &Lines<'_>,
    facts: &mut MarkdownFacts,
    anchors: &mut Option<Vec<String>>,
) {
    let found = html::extract(source);
    let (line, column) = lines.place(offset);
    for mut r in found.references {
        if r.column != 0 && r.line == 1 {
            r.column += column - 1;
        }
        r.line += line - 1;
        facts.references.push(r);
    }
    match (found.anchors, anchors.as_mut()) {
        (Some(more), Some(all)) => all.extend(more),
        _ => *anchors = None,
    }
}

/// The bare `http://` and `https://` URLs of the text `t`, written at
/// `offset` as `source`: each ends at a space, a quote or an angle
/// bracket, without the punctuation that ends a sentence after it (`.`,
/// `,`, `:`, `;`, `!`, `?`) or a closing parenthesis it did not open.
fn bare_urls(t: &str, source: &str, offset: usize, lines: &Lines<'_>, out: &mut Vec<RawReference>) {
    let mut rest = t;
    while let Some(i) = rest.find("http") {
        let candidate = &rest[i..];
        let preceded = rest[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric());
        let scheme = ["https://", "http://"]
            .iter()
            .find(|s| candidate.starts_with(**s));
        let Some(scheme) = scheme.filter(|_| !preceded) else {
            rest = &candidate[4..];
            continue;
        };
        let end = candidate
            .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`'))
            .unwrap_or(candidate.len());
        let mut url = &candidate[..end];
        loop {
            let trimmed = url.trim_end_matches(['.', ',', ':', ';', '!', '?', '*', '_', '~']);
            let unbalanced = trimmed.ends_with(')')
                && trimmed.matches(')').count() > trimmed.matches('(').count();
            let trimmed = match unbalanced {
                true => &trimmed[..trimmed.len() - 1],
                false => trimmed,
            };
            if trimmed.len() == url.len() {
                break;
            }
            url = trimmed;
        }
        if url.len() > scheme.len() {
            let at = source.find(url).map_or(offset, |i| offset + i);
            let (line, column) = lines.place(at);
            out.push(RawReference {
                href: url.to_string(),
                kind: RefKind::Anchor,
                text: url.to_string(),
                line,
                column,
            });
        }
        rest = &candidate[end.max(scheme.len())..];
    }
}

/// A heading's name as GitHub makes it: lower case, spaces as `-`, every
/// character but letters, digits, `-` and `_` left out.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// `slug`, or `slug-N` for its N-th repetition in the document.
fn unique_slug(slug: &str, seen: &mut std::collections::HashMap<String, u32>) -> String {
    let n = seen.entry(slug.to_string()).or_insert(0);
    let name = match *n {
        0 => slug.to_string(),
        n => format!("{slug}-{n}"),
    };
    *n += 1;
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(md: &str) -> Vec<(String, &'static str, String, u64, u32)> {
        extract(md)
            .references
            .into_iter()
            .map(|r| (r.href, r.kind.as_str(), r.text, r.line, r.column))
            .collect()
    }

    #[test]
    fn every_kind_of_link_with_its_place() {
        let md = "# Title\n\
                  See [the guide](docs/guide.md \"Guide\") and [ref][r].\n\
                  ![logo](img/logo.png) <https://example.org/auto>\n\
                  Bare https://example.org/bare. and (https://example.org/p(1)).\n\
                  `https://example.org/code` and\n\
                  ```\nhttps://example.org/block\n```\n\
                  <a href=\"html.html\">html</a> [shortcut]\n\
                  \n\
                  [r]: https://example.org/ref\n\
                  [shortcut]: /root.md\n";
        assert_eq!(
            targets(md),
            [
                ("docs/guide.md".into(), "a", "the guide".into(), 2, 17),
                ("https://example.org/ref".into(), "a", "ref".into(), 2, 44),
                ("img/logo.png".into(), "img", "logo".into(), 3, 9),
                (
                    "https://example.org/auto".into(),
                    "a",
                    "https://example.org/auto".into(),
                    3,
                    24
                ),
                (
                    "https://example.org/bare".into(),
                    "a",
                    "https://example.org/bare".into(),
                    4,
                    6
                ),
                (
                    "https://example.org/p(1)".into(),
                    "a",
                    "https://example.org/p(1)".into(),
                    4,
                    37
                ),
                ("html.html".into(), "a", String::new(), 9, 10),
                ("/root.md".into(), "a", "shortcut".into(), 9, 30),
            ]
        );
    }

    #[test]
    fn headings_are_places_as_github_names_them() {
        let facts = extract(
            "# Getting started\n## Getting started\n### What's new? (v2)\n<p id=\"x\"></p>\n",
        );
        assert_eq!(facts.title.as_deref(), Some("Getting started"));
        assert_eq!(
            facts.anchors.unwrap(),
            ["getting-started", "getting-started-1", "whats-new-v2", "x"]
        );
    }

    #[test]
    fn references_resolve_against_the_file_and_the_root() {
        let root = Url::parse("file:///srv/site/").unwrap();
        let url = Url::parse("file:///srv/site/docs/README.md").unwrap();
        let doc = parse_markdown_under(
            &url,
            b"[a](other.md#install) [b](/top.md) [c](#here)\n\n# Here\n",
            Some(&root),
        );
        let got: Vec<String> = doc
            .references
            .iter()
            .map(|r| r.target.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            got,
            [
                "file:///srv/site/docs/other.md",
                "file:///srv/site/top.md",
                "file:///srv/site/docs/README.md",
            ]
        );
        let fragments: Vec<&str> = doc.fragments.iter().map(|f| f.1.as_str()).collect();
        assert_eq!(fragments, ["install", "here"]);
        assert_eq!(doc.anchors.unwrap(), ["here"]);
    }
}
