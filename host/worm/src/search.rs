//! Searching the Worm's index (seed 001, section 3.3): words, phrases,
//! field prefixes, boolean operators and regular expressions, in two modes
//! (documents read, or every URL), ranked by BM25 with anchor text weighed
//! above the rest and a small prior for URLs many references point at.
//!
//! The query language is tantivy's: `title:worm`, `"virtual library"`,
//! `ext:mpg AND host:fi`, `anchor:(photo OR picture) -host:example`,
//! `url:/mp.?g/`. A query a person types never fails to be read
//! ([`super::query`]): what the language cannot read is searched as
//! words, and a mistake in an operator is mended and said in the
//! answer's notes.
//!
//! A regular expression matches whole words of its field (as the field is
//! split into words: letters and digits, lower-cased), ignoring case. One
//! on `url:` that no word can match (`url:/helsinki\.fi/`: no word holds
//! a dot) is matched anywhere in the whole URL instead, as the Worm's egrep
//! matched its lines; on another field, the answer's notes say it can
//! match nothing, and why.
//!
//! Costs are bounded: a query of at most [`MAX_QUERY`] characters, at most
//! [`MAX_REGEXES`] regular expressions of at most [`MAX_REGEX`] characters
//! each (tantivy also caps each one's automaton at 1,000 states, and its
//! cost at one pass over the field's word list), and at most [`MAX_LIMIT`]
//! results a page.

use super::index::{Fields, SearchIndex};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, QueryParserError, TermQuery};
use tantivy::query_grammar::{UserInputAst, UserInputLeaf};
use tantivy::schema::{IndexRecordOption, TantivyDocument, Value};
use tantivy::{DocAddress, DocId, IndexReader, Score, SegmentOrdinal, SegmentReader, Term};

/// The longest query accepted, in characters.
pub const MAX_QUERY: usize = 512;
/// The most regular expressions in one query.
pub const MAX_REGEXES: usize = 3;
/// The longest regular expression, in characters.
pub const MAX_REGEX: usize = 100;
/// The most results on one page.
pub const MAX_LIMIT: usize = 200;
/// How much more an anchor-text match weighs than a match elsewhere (the
/// Worm's insight: what others call a page says what it is).
pub const ANCHOR_BOOST: f32 = 2.0;
/// How much a title match weighs.
pub const TITLE_BOOST: f32 = 1.5;
/// The prior's strength: a score is multiplied by `1 + PRIOR * ln(1 + references)`.
pub const PRIOR: f32 = 0.1;

// The fields a query may name are the query language's; they are named
// here too, for those who search.
pub use super::query::FIELDS;

/// What to search for.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The query.
    pub query: &'a str,
    /// Every URL (true) or only documents read (false), as the seed's two modes.
    pub urls: bool,
    /// Results wanted.
    pub limit: usize,
    /// Results skipped (pagination).
    pub offset: usize,
    /// Explain each result's score.
    pub explain: bool,
}

/// One result.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    /// The URL.
    pub url: String,
    /// Its title, when it is a document.
    pub title: Option<String>,
    /// The anchor text of a reference to it.
    pub anchor: Option<String>,
    /// A document citing it.
    pub cited_by: Option<String>,
    /// That document's title.
    pub cited_by_title: Option<String>,
    /// How many references point at it.
    pub references: u64,
    /// For a posting of the library: its page on the server (the
    /// citing document is then the VL it is posted in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Its score (BM25 times the prior).
    pub score: f32,
    /// With `explain`: how the score was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
}

/// A page of results.
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    /// Results matching in all.
    pub total: usize,
    /// What of the query was read otherwise than written, and why (an
    /// operator mended or left out, a regular expression that can match
    /// nothing), for the person who wrote it.
    pub notes: Vec<String>,
    /// This page's results, best first.
    pub hits: Vec<Hit>,
}

/// The JSON of a search (schema `spinneret.search/1`), written alike by
/// `search --json` and `/api/search`; docs/wwww.md lists its fields.
#[derive(Clone, Debug, Serialize)]
pub struct AnswerJson<'a> {
    /// `spinneret.search/1`.
    pub schema: &'static str,
    /// The query as given.
    pub query: &'a str,
    /// `documents` or `urls`.
    pub mode: &'static str,
    /// The page (from 1).
    pub page: usize,
    /// Results a page.
    pub limit: usize,
    /// Results matching in all.
    pub total: usize,
    /// How long the search took, in milliseconds.
    pub took_ms: f64,
    /// [`Answer::notes`].
    pub notes: &'a [String],
    /// This page's results, best first.
    pub hits: &'a [Hit],
}

/// The schema [`AnswerJson`] names.
pub const SCHEMA: &str = "spinneret.search/1";

impl Answer {
    /// This answer as the JSON of a search: page `page` of `limit`
    /// results for `query`, in URL mode when `urls`, found in `took`.
    pub fn json<'a>(
        &'a self,
        query: &'a str,
        urls: bool,
        page: usize,
        limit: usize,
        took: std::time::Duration,
    ) -> AnswerJson<'a> {
        AnswerJson {
            schema: SCHEMA,
            query,
            mode: if urls { "urls" } else { "documents" },
            page,
            limit,
            total: self.total,
            took_ms: took.as_secs_f64() * 1000.0,
            notes: &self.notes,
            hits: &self.hits,
        }
    }
}

/// A query that cannot be run, and why, for the person who wrote it.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// Too long, too many or too long regular expressions, a bad limit.
    #[error("{0}")]
    Bounds(String),
    /// The index failed.
    #[error(
        "search index: {} (if it fails again, rebuild it with `spinneret index --rebuild`)",
        one_line(&.0.to_string())
    )]
    Index(#[from] tantivy::TantivyError),
    /// Reading the index broke down: its files are damaged (tantivy
    /// asserts, rather than answers an error, on some damage).
    #[error(
        "the search index is damaged ({}); rebuild it with `spinneret index --rebuild`",
        one_line(.0)
    )]
    Damaged(String),
}

/// `s` on one line: tantivy's messages run over several.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl SearchError {
    /// Whether the query is at fault (a 400), not the index (a 500).
    pub fn is_the_querys(&self) -> bool {
        matches!(self, SearchError::Bounds(_))
    }
}

/// A reader of the index, kept by a server between requests.
///
/// In documents mode it answers documents read and the library's postings;
/// in URL mode, every entry.
pub struct Searcher {
    reader: IndexReader,
    parser: QueryParser,
    fields: Fields,
    html: Term,
    /// The schema's field names by id, for explanations.
    names: Vec<String>,
    /// Each segment's priors and URL ids, read out of its columns once.
    ranks: Arc<SegmentRanks>,
}

/// What the ranking reads of each match besides its BM25 score: the prior
/// of its URL's references and its URL's id, by segment, as plain arrays.
/// Read from the fast-field columns once per segment (12 bytes an entry)
/// rather than decoded for every match of every query: decoding them was a
/// seventh of a busy server's time on an index of a million URLs. Filled
/// when the searcher opens or reloads the index; a segment the reader no
/// longer holds is let go at the reload.
#[derive(Default)]
struct SegmentRanks(std::sync::Mutex<HashMap<tantivy::index::SegmentId, Arc<Ranks>>>);

/// The ids of `searcher`'s segments.
fn segment_ids(searcher: &tantivy::Searcher) -> Vec<tantivy::index::SegmentId> {
    searcher
        .segment_readers()
        .iter()
        .map(SegmentReader::segment_id)
        .collect()
}

/// One segment's [`SegmentRanks`], by document.
struct Ranks {
    priors: Vec<Score>,
    ids: Vec<u64>,
}

impl SegmentRanks {
    /// The ranks of `segment`: read from its columns the first time (with
    /// the cache unlocked, so that other searches go on meanwhile).
    fn of(&self, segment: &SegmentReader) -> Arc<Ranks> {
        let id = segment.segment_id();
        if let Some(r) = self.held().get(&id) {
            return r.clone();
        }
        let ranks = Arc::new(Ranks::read(segment));
        self.held().entry(id).or_insert(ranks).clone()
    }

    /// Let go of the segments not in `live` (the reader's, after a reload;
    /// a search still under way on the old ones may read one back, until
    /// the next reload).
    fn keep_only(&self, live: &[tantivy::index::SegmentId]) {
        self.held().retain(|id, _| live.contains(id));
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<tantivy::index::SegmentId, Arc<Ranks>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Ranks {
    /// The ranks of `segment`'s entries.
    fn read(segment: &SegmentReader) -> Ranks {
        // Every entry has both values: the columns are read as dense arrays.
        let column = |name: &str, missing: u64| {
            segment
                .fast_fields()
                .u64(name)
                .map(|c| c.first_or_default_col(missing))
                .ok()
        };
        let (links, ids) = (column("links", 0), column("id", u64::MAX));
        let docs = segment.max_doc();
        let table = priors();
        Ranks {
            priors: (0..docs)
                .map(|doc| {
                    let refs = links.as_ref().map_or(0, |c| c.get_val(doc));
                    table
                        .get(refs as usize)
                        .copied()
                        .unwrap_or_else(|| prior(refs))
                })
                .collect(),
            ids: (0..docs)
                .map(|doc| ids.as_ref().map_or(u64::MAX, |c| c.get_val(doc)))
                .collect(),
        }
    }
}

impl Searcher {
    /// A searcher of `index`.
    pub fn new(index: &SearchIndex) -> Result<Searcher, SearchError> {
        let f = index.fields;
        let mut parser =
            QueryParser::for_index(&index.index, vec![f.title, f.anchor, f.url, f.cited_by]);
        parser.set_conjunction_by_default();
        parser.allow_regexes();
        parser.set_field_boost(f.anchor, ANCHOR_BOOST);
        parser.set_field_boost(f.title, TITLE_BOOST);
        let searcher = Searcher {
            // Reloaded by [`Searcher::reload`] only, which reads the new
            // segments' ranks before any query meets them.
            reader: index
                .index
                .reader_builder()
                .reload_policy(tantivy::ReloadPolicy::Manual)
                .try_into()?,
            parser,
            fields: f,
            html: Term::from_field_text(f.kind, "html"),
            names: index
                .index
                .schema()
                .fields()
                .map(|(_, e)| e.name().to_string())
                .collect(),
            ranks: Arc::default(),
        };
        searcher.read_ranks();
        Ok(searcher)
    }

    /// See the index's latest commit.
    pub fn reload(&self) -> Result<(), SearchError> {
        self.reader.reload()?;
        self.read_ranks();
        Ok(())
    }

    /// Read the ranks of every segment now, so that no query pays for it
    /// (a segment of a million entries takes some 20 ms).
    fn read_ranks(&self) {
        let searcher = self.reader.searcher();
        self.ranks.keep_only(&segment_ids(&searcher));
        for segment in searcher.segment_readers() {
            self.ranks.of(segment);
        }
    }

    /// Run `req`. An index whose files are damaged makes tantivy panic
    /// on some reads: that is [`SearchError::Damaged`], not a crash.
    pub fn search(&self, req: &Request<'_>) -> Result<Answer, SearchError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.search_unguarded(req)))
            .unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "reading it failed".into());
                Err(SearchError::Damaged(why))
            })
    }

    fn search_unguarded(&self, req: &Request<'_>) -> Result<Answer, SearchError> {
        let (query, notes) = self.parse(req)?;
        let searcher = self.reader.searcher();
        let ranked = Ranked {
            wanted: req.offset.saturating_add(req.limit),
            ranks: self.ranks.clone(),
        };
        let (top, total) = searcher.search(&query, &ranked).map_err(|e| match e {
            // `url:*` asks for every entry with the field, which tantivy
            // answers only for fast fields: say so in the query's terms.
            tantivy::TantivyError::SchemaError(s) if s.contains("is not a fast field") => {
                SearchError::Bounds(
                    "`FIELD:*` (every entry with a field) cannot be searched; search for a word, a phrase or a /regular expression/ in the field".into(),
                )
            }
            e => SearchError::Index(e),
        })?;
        let mut hits = Vec::with_capacity(top.len());
        for c in top.into_iter().skip(req.offset) {
            hits.push(self.hit(&searcher, &*query, c.score, c.addr, req.explain)?);
        }
        Ok(Answer { total, notes, hits })
    }

    /// The query of `req`, and the notes on how it was read.
    fn parse(&self, req: &Request<'_>) -> Result<(Box<dyn Query>, Vec<String>), SearchError> {
        let q = req.query.trim();
        if q.is_empty() {
            return Err(SearchError::Bounds(
                "the query is empty; try a word, or title:NAME, ext:mpg host:fi".into(),
            ));
        }
        if q.chars().count() > MAX_QUERY {
            return Err(SearchError::Bounds(format!(
                "the query is longer than {MAX_QUERY} characters"
            )));
        }
        if req.limit == 0 || req.limit > MAX_LIMIT {
            return Err(SearchError::Bounds(format!(
                "a page holds 1 to {MAX_LIMIT} results"
            )));
        }
        let super::query::Read { mut ast, mut notes } = super::query::read(q);
        let mut patterns = Vec::new();
        regexes(&ast, &mut patterns);
        if patterns.len() > MAX_REGEXES {
            return Err(SearchError::Bounds(format!(
                "the query has {} regular expressions; at most {MAX_REGEXES} are allowed",
                patterns.len()
            )));
        }
        if let Some(r) = patterns.iter().find(|r| r.chars().count() > MAX_REGEX) {
            return Err(SearchError::Bounds(format!(
                "the regular expression /{r}/ is longer than {MAX_REGEX} characters"
            )));
        }
        if !mend_regexes(&mut ast, &mut notes)? {
            ast = UserInputAst::empty_query();
        }
        let parsed = match self.parser.build_query_from_user_input_ast(ast.clone()) {
            Ok(parsed) => parsed,
            Err(_) => {
                // What cannot be run is left out, and said.
                let (parsed, errors) = self.parser.build_query_from_user_input_ast_lenient(ast);
                notes.extend(errors.iter().map(left_out));
                parsed
            }
        };
        let query = match req.urls {
            true => parsed,
            false => Box::new(BooleanQuery::new(vec![
                (Occur::Must, parsed),
                (
                    Occur::Must,
                    Box::new(TermQuery::new(self.html.clone(), IndexRecordOption::Basic)),
                ),
            ])),
        };
        Ok((query, notes))
    }

    fn hit(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        score: Score,
        addr: DocAddress,
        explain: bool,
    ) -> Result<Hit, SearchError> {
        let f = &self.fields;
        let d: TantivyDocument = searcher.doc(addr)?;
        // Text that is only white space (a page titled " ") is none: it
        // would show as an empty link.
        let text = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str())
                .filter(|t| !t.trim().is_empty())
                .map(str::to_string)
        };
        let references = d.get_first(f.links).and_then(|v| v.as_u64()).unwrap_or(0);
        let explanation = match explain {
            true => {
                let bm25 = query.explain(searcher, addr)?;
                let tree: serde_json::Value =
                    serde_json::from_str(&bm25.to_pretty_json()).unwrap_or_default();
                let mut text = format!(
                    "{score:.4} = BM25 {:.4} × prior {:.4} (1 + {PRIOR} × ln(1 + {references} references))\n",
                    bm25.value(),
                    prior(references),
                );
                explanation_lines(&tree, 1, &self.names, &mut text);
                Some(text)
            }
            false => None,
        };
        Ok(Hit {
            url: text(f.key).unwrap_or_default(),
            title: text(f.title),
            anchor: text(f.shown_anchor),
            cited_by: text(f.shown_citing),
            cited_by_title: text(f.shown_citing_title),
            references,
            library: text(f.place),
            score,
            explanation,
        })
    }
}

/// The ranking's collector: the best `wanted` matches by BM25 times their
/// URL's prior, equal scores in the order the store met the URLs (so that
/// an index updated and one rebuilt answer alike), and how many matched.
///
/// Every match is counted, so every match is seen; most are turned away by
/// one multiplication and one comparison with the worst match kept. It
/// replaces tantivy's `TopDocs::tweak_score` with `Count` beside it, whose
/// generic sort keys took a sixth of a busy server's time.
struct Ranked {
    wanted: usize,
    ranks: Arc<SegmentRanks>,
}

/// A match kept: its score, its URL's id (the tie-break) and where it is.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    score: Score,
    id: u64,
    addr: DocAddress,
}

impl Candidate {
    /// Better first: the higher score, then the lower URL id.
    fn order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
        b.score.total_cmp(&a.score).then(a.id.cmp(&b.id))
    }
}

/// [`Ranked`] in one segment.
struct RankedSegment {
    segment: SegmentOrdinal,
    ranks: Arc<Ranks>,
    wanted: usize,
    /// Up to twice `wanted` candidates, cut back to the best `wanted` when
    /// full.
    kept: Vec<Candidate>,
    /// The worst candidate kept at the last cut: a match must beat it.
    floor: Option<(Score, u64)>,
    count: usize,
}

impl Collector for Ranked {
    type Fruit = (Vec<Candidate>, usize);
    type Child = RankedSegment;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<RankedSegment> {
        Ok(RankedSegment {
            segment,
            ranks: self.ranks.of(reader),
            wanted: self.wanted,
            kept: Vec::with_capacity(self.wanted.saturating_mul(2).min(4096)),
            floor: None,
            count: 0,
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(
        &self,
        fruits: Vec<(Vec<Candidate>, usize)>,
    ) -> tantivy::Result<(Vec<Candidate>, usize)> {
        let total = fruits.iter().map(|(_, n)| n).sum();
        let mut all: Vec<Candidate> = fruits.into_iter().flat_map(|(c, _)| c).collect();
        all.sort_unstable_by(Candidate::order);
        all.truncate(self.wanted);
        Ok((all, total))
    }
}

impl RankedSegment {
    /// Keep the best `wanted` candidates, and beat the worst of them from
    /// now on.
    fn cut(&mut self) {
        if self.kept.len() > self.wanted {
            self.kept
                .select_nth_unstable_by(self.wanted - 1, Candidate::order);
            self.kept.truncate(self.wanted);
        }
        if let Some(worst) = self.kept.iter().max_by(|a, b| Candidate::order(a, b)) {
            self.floor = Some((worst.score, worst.id));
        }
    }
}

impl SegmentCollector for RankedSegment {
    type Fruit = (Vec<Candidate>, usize);

    fn collect(&mut self, doc: DocId, bm25: Score) {
        self.count += 1;
        let d = doc as usize;
        let score = bm25 * self.ranks.priors.get(d).copied().unwrap_or(1.0);
        let id = || self.ranks.ids.get(d).copied().unwrap_or(u64::MAX);
        if let Some((floor, floor_id)) = self.floor
            && (score < floor || (score == floor && id() >= floor_id))
        {
            return;
        }
        let candidate = Candidate {
            score,
            id: id(),
            addr: DocAddress::new(self.segment, doc),
        };
        self.kept.push(candidate);
        if self.kept.len() >= self.wanted.saturating_mul(2) {
            self.cut();
        }
    }

    fn harvest(mut self) -> (Vec<Candidate>, usize) {
        self.cut();
        self.kept.sort_unstable_by(Candidate::order);
        (self.kept, self.count)
    }
}

/// tantivy's explanation tree as indented lines: `value  what`, and the
/// term it is about.
fn explanation_lines(node: &serde_json::Value, depth: usize, names: &[String], out: &mut String) {
    use std::fmt::Write;
    let value = node.get("value").and_then(|v| v.as_f64()).unwrap_or(0.0);
    let what = node
        .get("description")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let about = node
        .get("context")
        .and_then(|c| c.as_array())
        .map(|c| {
            c.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|c| !c.is_empty())
        .map(|c| format!("  [{}]", term_label(&c, names)))
        .unwrap_or_default();
    let _ = writeln!(out, "{}{value:.4}  {what}{about}", "  ".repeat(depth));
    if let Some(children) = node.get("details").and_then(|d| d.as_array()) {
        for child in children {
            explanation_lines(child, depth + 1, names, out);
        }
    }
}

/// tantivy's `Term=Term(field=3, type=Str, "png")` as `ext:"png"`.
fn term_label(context: &str, names: &[String]) -> String {
    let parsed = context
        .strip_prefix("Term=Term(field=")
        .and_then(|r| r.split_once(", type=Str, "))
        .and_then(|(id, rest)| {
            let name = names.get(id.parse::<usize>().ok()?)?;
            Some(format!("{name}:{}", rest.strip_suffix(')')?))
        });
    parsed.unwrap_or_else(|| context.to_string())
}

/// The prior of a URL with `references` references to it.
fn prior(references: u64) -> Score {
    1.0 + PRIOR * (references as Score).ln_1p()
}

/// The prior of 0 to 4,095 references, worked out once: the ranking asks
/// for it of every match, and a logarithm each time was a sixth of a
/// busy server's time.
fn priors() -> &'static [Score] {
    static PRIORS: std::sync::OnceLock<Vec<Score>> = std::sync::OnceLock::new();
    PRIORS.get_or_init(|| (0..4096).map(prior).collect())
}

/// The most a regular expression may weigh ([`regex_weight`]) before its
/// automaton is built: building one for `\w{5}` (Unicode's word
/// characters, five times) took a third of a second, only to be refused
/// by the index's size limit.
const MAX_REGEX_WEIGHT: u64 = 1_000;

/// Refuse the regular expression `r` when its automaton would be costly
/// to build, before building it (one that cannot be read is left out
/// before, by [`mend_regexes`]).
fn regex_cost(r: &str) -> Result<(), SearchError> {
    let Ok(hir) = regex_syntax::Parser::new().parse(r) else {
        return Ok(());
    };
    if regex_weight(&hir) > MAX_REGEX_WEIGHT {
        return Err(SearchError::Bounds(format!(
            "the regular expression /{r}/ is too costly to search with: a class such as \\w, \\d, \\s or [^…] spans thousands of characters; name the characters meant (e.g. [a-z0-9_]) or repeat less"
        )));
    }
    Ok(())
}

/// A regular expression's weight: how many character ranges its
/// automaton must tell apart, each class counting its ranges and each
/// repetition its count (an open-ended one as one more than its least).
fn regex_weight(hir: &regex_syntax::hir::Hir) -> u64 {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 0,
        HirKind::Literal(l) => l.0.len() as u64,
        HirKind::Class(Class::Unicode(c)) => c.ranges().len() as u64,
        HirKind::Class(Class::Bytes(c)) => c.ranges().len() as u64,
        HirKind::Repetition(rep) => {
            let times = u64::from(rep.max.unwrap_or(rep.min.saturating_add(1)).max(1));
            regex_weight(&rep.sub).saturating_mul(times)
        }
        HirKind::Capture(c) => regex_weight(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts
            .iter()
            .map(regex_weight)
            .fold(0u64, u64::saturating_add),
    }
}

/// The patterns of the regular expressions in `ast`, left to right.
fn regexes(ast: &UserInputAst, out: &mut Vec<String>) {
    match ast {
        UserInputAst::Clause(clauses) => clauses.iter().for_each(|(_, a)| regexes(a, out)),
        UserInputAst::Boost(a, _) => regexes(a, out),
        UserInputAst::Leaf(leaf) => {
            if let UserInputLeaf::Regex { pattern, .. } = &**leaf {
                out.push(pattern.clone());
            }
        }
    }
}

/// Make each regular expression of `ast` what the search runs, or leave
/// it out with a note when it cannot be read: case ignored (the words
/// indexed are lower-cased), `^` at its start and `$` at its end dropped
/// (it matches a whole word anyway), and one on `url:` that no word can
/// match (`helsinki\.fi`) matched anywhere in the whole URL (the entry's
/// key), as egrep matched a line. Whether `ast` is kept (false: it was
/// all one regular expression left out); a costly one is refused.
fn mend_regexes(ast: &mut UserInputAst, notes: &mut Vec<String>) -> Result<bool, SearchError> {
    match ast {
        UserInputAst::Clause(clauses) => {
            let mut kept = Vec::with_capacity(clauses.len());
            for (occur, mut a) in std::mem::take(clauses) {
                if mend_regexes(&mut a, notes)? {
                    kept.push((occur, a));
                }
            }
            let any = !kept.is_empty();
            *clauses = kept;
            Ok(any)
        }
        UserInputAst::Boost(a, _) => mend_regexes(a, notes),
        UserInputAst::Leaf(leaf) => {
            let UserInputLeaf::Regex {
                field: Some(field),
                pattern,
            } = &mut **leaf
            else {
                return Ok(true);
            };
            let written = format!("{field}:/{pattern}/");
            let starts = pattern.starts_with('^');
            let body = pattern.strip_prefix('^').unwrap_or(pattern);
            // A `$` that is not escaped (preceded by an even number of `\`).
            let escapes = body
                .strip_suffix('$')
                .map(|b| b.chars().rev().take_while(|c| *c == '\\').count());
            let ends = escapes.is_some_and(|n| n % 2 == 0);
            let body = match ends {
                true => &body[..body.len() - 1],
                false => body,
            };
            let hir = match regex_syntax::ParserBuilder::new()
                .case_insensitive(true)
                .build()
                .parse(body)
            {
                Ok(hir) => hir,
                Err(e) => {
                    let why = e.to_string();
                    let why = why.rsplit("error: ").next().unwrap_or(&why).trim();
                    notes.push(format!(
                        "the regular expression `{written}` cannot be read ({why}); it was left out"
                    ));
                    return Ok(false);
                }
            };
            if has_assertion(&hir) {
                notes.push(format!(
                    "the regular expression `{written}` holds `^`, `$` or `\\b` inside it; it matches a whole word of its field, or a whole URL, and they cannot be used there; it was left out"
                ));
                return Ok(false);
            }
            let body = body.to_string();
            if can_match_a_word(&hir) {
                *pattern = format!("(?i){body}");
            } else if field == "url" {
                let (before, after) =
                    (if starts { "" } else { ".*" }, if ends { "" } else { ".*" });
                *pattern = format!("(?i){before}(?:{body}){after}");
                *field = "key".into();
            } else {
                *pattern = format!("(?i){body}");
                let what = match first_outside_words(&hir) {
                    Some(c) => format!("no word holds {c:?}"),
                    None => "no word holds what it asks for".into(),
                };
                notes.push(format!(
                    "`{written}` can match nothing: a regular expression is matched against each word of its field (letters and digits, case ignored), and {what}; search the words, or \"a phrase\" of them"
                ));
            }
            regex_cost(pattern)?;
            Ok(true)
        }
    }
}

/// Why tantivy could not run part of a query (it leaves that part out),
/// in the query's terms.
fn left_out(e: &QueryParserError) -> String {
    match e {
        QueryParserError::AllButQueryForbidden => {
            "the query only leaves words out (-word, NOT word): everything without them is listed"
                .into()
        }
        e => format!(
            "part of the query cannot be run ({}); it was left out",
            one_line(&e.to_string())
        ),
    }
}

/// Whether `hir` holds an assertion (`^`, `$`, `\b`), which the index's
/// automata cannot run.
fn has_assertion(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Look(_) => true,
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => false,
        HirKind::Repetition(r) => has_assertion(&r.sub),
        HirKind::Capture(c) => has_assertion(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(has_assertion),
    }
}

/// Whether a character can be part of an indexed word (tantivy's default
/// tokenizer splits text on every other character).
fn in_words(c: char) -> bool {
    c.is_alphanumeric()
}

/// Whether `hir` matches some string of word characters ([`in_words`]):
/// one word of a field could match it.
fn can_match_a_word(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(l) => std::str::from_utf8(&l.0).is_ok_and(|s| s.chars().all(in_words)),
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().any(|r| {
            // A range holding a word character: check its ends and, for a
            // wide one, a letter or digit inside it.
            in_words(r.start())
                || in_words(r.end())
                || (r.start()..=r.end()).take(4096).any(in_words)
        }),
        HirKind::Class(Class::Bytes(c)) => c
            .ranges()
            .iter()
            .any(|r| (r.start()..=r.end()).any(|b| b.is_ascii_alphanumeric())),
        HirKind::Repetition(r) => r.min == 0 || can_match_a_word(&r.sub),
        HirKind::Capture(c) => can_match_a_word(&c.sub),
        HirKind::Concat(parts) => parts.iter().all(can_match_a_word),
        HirKind::Alternation(parts) => parts.iter().any(can_match_a_word),
    }
}

/// The first literal character of `hir` that no word holds, for saying
/// why it can match none.
fn first_outside_words(hir: &regex_syntax::hir::Hir) -> Option<char> {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Literal(l) => std::str::from_utf8(&l.0)
            .ok()?
            .chars()
            .find(|c| !in_words(*c)),
        HirKind::Class(regex_syntax::hir::Class::Unicode(c)) => {
            match c.ranges() {
                // One character, in every case (`(?i)` makes `-` a class of one).
                [r] if r.start() == r.end() && !in_words(r.start()) => Some(r.start()),
                _ => None,
            }
        }
        HirKind::Repetition(r) => first_outside_words(&r.sub),
        HirKind::Capture(c) => first_outside_words(&c.sub),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => {
            parts.iter().find_map(first_outside_words)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries `(id, references)` titled "worm", as one new segment.
    fn add_segment(index: &SearchIndex, entries: &[(u64, u64)]) {
        let f = index.fields;
        let mut w: tantivy::IndexWriter =
            index.index.writer_with_num_threads(1, 15_000_000).unwrap();
        for &(id, links) in entries {
            let mut d = TantivyDocument::new();
            d.add_text(f.key, format!("http://a.example/{id}"));
            d.add_text(f.title, "worm");
            d.add_text(f.kind, "html");
            d.add_u64(f.id, id);
            d.add_u64(f.links, links);
            w.add_document(d).unwrap();
        }
        w.commit().unwrap();
    }

    fn ranked(searcher: &Searcher) -> Vec<(String, f32)> {
        let req = Request {
            query: "worm",
            urls: true,
            limit: 10,
            offset: 0,
            explain: false,
        };
        let answer = searcher.search(&req).unwrap();
        answer.hits.into_iter().map(|h| (h.url, h.score)).collect()
    }

    #[test]
    fn the_ranking_reads_each_segment_once_and_lets_merged_ones_go() {
        let index = SearchIndex::in_ram();
        add_segment(&index, &[(3, 0), (1, 0), (2, 5)]);
        let searcher = Searcher::new(&index).unwrap();
        let urls = |r: Vec<(String, f32)>| r.into_iter().map(|(u, _)| u).collect::<Vec<_>>();
        // The most referenced first; equal ones in id order.
        assert_eq!(
            urls(ranked(&searcher)),
            [
                "http://a.example/2",
                "http://a.example/1",
                "http://a.example/3"
            ]
        );
        // A new segment, seen after a reload: its entries ranked by theirs.
        add_segment(&index, &[(4, 50)]);
        searcher.reload().unwrap();
        let before_merge = ranked(&searcher);
        assert_eq!(urls(before_merge.clone())[0], "http://a.example/4");
        assert_eq!(searcher.ranks.0.lock().unwrap().len(), 2);
        // Merged into one: the same answers, and only that segment held.
        let mut w: tantivy::IndexWriter =
            index.index.writer_with_num_threads(1, 15_000_000).unwrap();
        let ids = index.index.searchable_segment_ids().unwrap();
        w.merge(&ids).wait().unwrap();
        w.wait_merging_threads().unwrap();
        searcher.reload().unwrap();
        assert_eq!(ranked(&searcher), before_merge);
        assert_eq!(searcher.ranks.0.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_costly_regular_expression_is_refused_before_it_is_built() {
        for cheap in [
            r"[a-z]+\.mpg",
            r".*fi$",
            r"(a+)+$",
            r"(foo|bar)[0-9]{2}",
            r"\w",
        ] {
            assert!(regex_cost(cheap).is_ok(), "{cheap}");
        }
        for costly in [r"\w{3}", r"\w{5}", r"(\d\s\w){2}"] {
            let e = regex_cost(costly).unwrap_err().to_string();
            assert!(e.contains("too costly to search with"), "{costly}: {e}");
        }
        // One that cannot be read is left out before: mend_regexes.
        assert!(regex_cost("(").is_ok());
    }

    /// A searcher of documents `(url, title)`, in that order.
    fn documents(docs: &[(&str, &str)]) -> Searcher {
        let index = SearchIndex::in_ram();
        let f = index.fields;
        let mut w: tantivy::IndexWriter =
            index.index.writer_with_num_threads(1, 15_000_000).unwrap();
        for (id, (url, title)) in docs.iter().enumerate() {
            let mut d = TantivyDocument::new();
            d.add_text(f.key, url);
            super::super::index::add_url(&f, &mut d, url);
            d.add_text(f.title, title);
            d.add_text(f.kind, "html");
            d.add_u64(f.id, id as u64);
            d.add_u64(f.links, 0);
            w.add_document(d).unwrap();
        }
        w.commit().unwrap();
        Searcher::new(&index).unwrap()
    }

    /// `query`'s results (their URLs) and notes.
    fn found(searcher: &Searcher, query: &str) -> (Vec<String>, Vec<String>) {
        let req = Request {
            query,
            urls: false,
            limit: 10,
            offset: 0,
            explain: false,
        };
        let answer = searcher.search(&req).unwrap();
        let urls = answer.hits.into_iter().map(|h| h.url).collect();
        (urls, answer.notes)
    }

    const PHOTO: &str = "http://www.helsinki.fi/photo.html";
    const LIBRARY: &str = "http://vlib.example/Finland.html";

    fn helsinki() -> Searcher {
        documents(&[
            (PHOTO, "McBryan's photo in Helsinki"),
            (LIBRARY, "The virtual library [Finland]"),
        ])
    }

    #[test]
    fn text_with_an_apostrophe_or_brackets_is_searched_as_words() {
        let s = helsinki();
        let none: Vec<String> = Vec::new();
        for (query, expected) in [
            ("McBryan's photo", vec![PHOTO]),
            ("mcbryan's", vec![PHOTO]),
            ("[finland]", vec![LIBRARY]),
            ("{library} virtual", vec![LIBRARY]),
            ("http://www.helsinki.fi/photo.html", vec![PHOTO]),
            ("title:McBryan's", vec![PHOTO]),
        ] {
            assert_eq!(
                found(&s, query),
                (
                    expected.iter().map(|u| u.to_string()).collect(),
                    none.clone()
                ),
                "{query}"
            );
        }
    }

    #[test]
    fn a_mistake_in_an_operator_is_searched_around_and_said() {
        let s = helsinki();
        assert_eq!(
            found(&s, "title:"),
            (
                vec![],
                vec![
                    "`title:` has nothing after it; it was searched as the word title".to_string()
                ]
            )
        );
        assert_eq!(
            found(&s, "tilte:photo"),
            (
                vec![],
                vec!["`tilte:` is not a field (the fields are title: anchor: cited-by: url: host: ext: bad:); `tilte:photo` was searched as words".to_string()]
            )
        );
        assert_eq!(
            found(&s, "(photo OR library"),
            (
                vec![PHOTO.to_string(), LIBRARY.to_string()],
                vec!["a `(` is not closed; it was left out".to_string()]
            )
        );
        assert_eq!(
            found(&s, "helsinki AND"),
            (
                vec![PHOTO.to_string()],
                vec!["`AND` has nothing after it to join; it was left out".to_string()]
            )
        );
        assert_eq!(
            found(&s, "-photo"),
            (
                vec![LIBRARY.to_string()],
                vec!["the query only leaves words out (-word, NOT word): everything without them is listed".to_string()]
            )
        );
    }

    #[test]
    fn a_regular_expression_ignores_case_and_says_when_it_can_match_nothing() {
        let s = helsinki();
        let none: Vec<String> = Vec::new();
        // The words indexed are lower-cased: case is ignored.
        assert_eq!(
            found(&s, "title:/Helsin.*/"),
            (vec![PHOTO.to_string()], none.clone())
        );
        // `^` and `$` are a word's ends, which a regular expression matches
        // whole anyway.
        assert_eq!(
            found(&s, "title:/^helsink.$/"),
            (vec![PHOTO.to_string()], none.clone())
        );
        // No word of a URL holds a dot: the whole URL is searched, as the
        // Worm's egrep searched its lines, anywhere in it unless anchored.
        assert_eq!(
            found(&s, r"url:/helsinki\.fi/"),
            (vec![PHOTO.to_string()], none.clone())
        );
        assert_eq!(
            found(&s, r"url:/Finland\.HTML$/"),
            (vec![LIBRARY.to_string()], none.clone())
        );
        assert_eq!(found(&s, r"url:/^www\.helsinki/"), (vec![], none.clone()));
        assert_eq!(
            found(&s, r"url:/^http:\/\/www\.helsinki/"),
            (vec![PHOTO.to_string()], none.clone())
        );
        // On another field, nothing can match a space or a dot: said.
        assert_eq!(
            found(&s, "title:/photo in/"),
            (
                vec![],
                vec!["`title:/photo in/` can match nothing: a regular expression is matched against each word of its field (letters and digits, case ignored), and no word holds ' '; search the words, or \"a phrase\" of them".to_string()]
            )
        );
        // One that cannot be read is left out, with why.
        assert_eq!(
            found(&s, "photo url:/[a-/"),
            (
                vec![PHOTO.to_string()],
                vec!["the regular expression `url:/[a-/` cannot be read (unclosed character class); it was left out".to_string()]
            )
        );
        assert_eq!(
            found(&s, r"title:/a\bb/"),
            (
                vec![],
                vec![r"the regular expression `title:/a\bb/` holds `^`, `$` or `\b` inside it; it matches a whole word of its field, or a whole URL, and they cannot be used there; it was left out".to_string()]
            )
        );
    }

    #[test]
    fn a_title_of_white_space_is_no_title() {
        let s = documents(&[("http://a.example/", " \t "), ("http://b.example/", "B")]);
        let req = Request {
            query: "url:example",
            urls: false,
            limit: 10,
            offset: 0,
            explain: false,
        };
        let titles: Vec<Option<String>> = s
            .search(&req)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.title)
            .collect();
        assert_eq!(titles, [None, Some("B".to_string())]);
    }

    #[test]
    fn the_prior_grows_slowly() {
        assert_eq!(prior(0), 1.0);
        assert!(prior(1000) < 1.7);
        assert_eq!(priors()[1000], prior(1000));
        assert_eq!(priors().len(), 4096);
    }
}
