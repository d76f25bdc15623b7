//! Where a finding is shown, for reports that point at a file and line
//! (`sarif-report`, `github-annotations`): what a report keeps while the
//! documents come (each document's URL and its references' lines and
//! columns, not the references), so that each finding can name the file,
//! line and column of every
//! link to its URL, and how a `file:` URL is named relative to a
//! configured `base`.

use crate::reporter::*;
use crate::urls::Url;
use serde_json::Value;

/// The finding kinds about following a link, shown at each link to the
/// finding's URL. Any other kind (`expiring`, `bad-html`,
/// `content-changed`, …) is about the URL itself and is shown there.
pub const LINK_KINDS: [&str; 4] = ["broken", "blocked", "moved", BROKEN_FRAGMENT];

/// The finding kinds a report that points at files leaves out unless its
/// `omit` setting says otherwise: news, not something to fix (and a CI
/// checkout writes every file today, so each would be "recently modified").
pub const OMITTED_BY_DEFAULT: [&str; 1] = ["recently-modified"];

/// The `omit` setting of `config`: the finding kinds the report leaves
/// out; [`OMITTED_BY_DEFAULT`] when absent, none when `[]`. Refused, with
/// a message naming `plugin`, when it is not a list of strings.
pub fn omitted(plugin: &str, config: &Value) -> Result<Vec<String>, String> {
    match config.get("omit") {
        None => Ok(OMITTED_BY_DEFAULT.map(String::from).to_vec()),
        Some(_) => crate::settings::strings(plugin, config, "omit"),
    }
}

/// The settings of a report that points at files: `file`, the file it
/// writes; `base`, the directory its files are named relative to (see
/// [`base`]); `omit`, the finding kinds it leaves out (see [`omitted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file it writes in the task's output directory.
    pub file: String,
    /// The `file:` URL of the directory files are named relative to.
    pub base: Option<String>,
    /// The finding kinds left out.
    pub omit: Vec<String>,
}

impl FileReport {
    /// The settings `plugin` reads from `config`, its file `default_file`
    /// unless `file` names another; any other setting is refused.
    pub fn read(plugin: &str, config: &Value, default_file: &str) -> Result<FileReport, String> {
        crate::settings::check_keys(plugin, config, &["file", "base", "omit"])?;
        Ok(FileReport {
            file: crate::settings::file_name(plugin, config, "file", default_file)?,
            base: base(plugin, config)?,
            omit: omitted(plugin, config)?,
        })
    }

    /// Whether the report shows findings of `kind` (not in `omit`).
    pub fn shows(&self, kind: &str) -> bool {
        !self.omit.iter().any(|k| k == kind)
    }
}

/// A place to show a finding at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    /// The document with the link, or the finding's URL itself.
    pub url: String,
    /// The link's line in the document's source, from 1; 0 when not known.
    pub line: u32,
    /// The column the link's value starts at on that line, from 1, in
    /// characters (Unicode scalar values); 0 when not known.
    pub column: u32,
    /// Whether `url` is a document that links to the finding's URL (and
    /// not that URL itself).
    pub linking: bool,
}

/// What a task's report keeps of its documents to point at a reference:
/// each document's URL and the line and column of each of its references,
/// 8 bytes a reference. Every reference is kept, since a link whose target is ok
/// can still be the place of a finding (a broken fragment).
#[derive(Debug, Default)]
pub struct Places {
    /// The URL of each document, by number (document 1 first).
    urls: Vec<Box<str>>,
    /// The line and column of each reference of each document, by number,
    /// then reference (0 when not known); empty when none of its lines is
    /// known.
    places: Vec<Vec<(u32, u32)>>,
}

impl Places {
    /// Keep the URL of a document and the lines and columns of its
    /// references, or of a part of them.
    pub fn add(&mut self, d: &TaskDocument) {
        let Some(i) = (d.number as usize).checked_sub(1) else {
            return;
        };
        if self.urls.len() <= i {
            self.urls.resize(i + 1, Box::default());
            self.places.resize(i + 1, Vec::new());
        }
        if self.urls[i].is_empty() {
            self.urls[i] = d.document.url.as_str().into();
        }
        if d.lines.iter().any(|&l| l != 0) {
            let places = &mut self.places[i];
            places.resize(d.first_reference as usize, (0, 0));
            let column = |j: usize| d.columns.get(j).copied().unwrap_or(0);
            places.extend(d.lines.iter().enumerate().map(|(j, &l)| (l, column(j))));
        }
        if d.last_part {
            self.places[i].shrink_to_fit();
        }
    }

    /// Where to show `f`. A finding about following a link: each link to
    /// its URL (the referring document and the link's line; for a broken
    /// fragment, the referrer's link to the target page); when the host
    /// names none (the document did not come), the referrer; when there is
    /// none either (a broken top), the URL itself. Any other finding: its
    /// URL.
    pub fn spots(&self, f: &TaskFinding) -> Vec<Spot> {
        let finding = &f.finding;
        if LINK_KINDS.contains(&finding.kind.as_str()) {
            let spots: Vec<Spot> = f
                .referred_from
                .iter()
                .filter_map(|p| self.spot(p))
                .collect();
            if !spots.is_empty() {
                return spots;
            }
            if let Some(referrer) = &finding.referrer {
                return vec![Spot {
                    url: referrer.clone(),
                    line: 0,
                    column: 0,
                    linking: true,
                }];
            }
        }
        vec![Spot {
            url: finding.url.clone(),
            line: 0,
            column: 0,
            linking: false,
        }]
    }

    /// The spot of the reference at `p`, when its document came.
    fn spot(&self, p: &Place) -> Option<Spot> {
        let url = self.urls.get((p.document as usize).checked_sub(1)?)?;
        if url.is_empty() {
            return None;
        }
        let (line, column) = (p.reference as usize)
            .checked_sub(1)
            .and_then(|r| self.places[p.document as usize - 1].get(r))
            .copied()
            .unwrap_or((0, 0));
        Some(Spot {
            url: url.to_string(),
            line,
            column,
            linking: true,
        })
    }
}

/// The `base` setting of `config`: the `file:` URL of a directory, with
/// the `/` it ends with added when missing; none when absent. Refused,
/// with a message naming `plugin`, when it is not a `file:` URL.
pub fn base(plugin: &str, config: &Value) -> Result<Option<String>, String> {
    let Some(value) = config.get("base") else {
        return Ok(None);
    };
    let wrong = || {
        format!(
            "{plugin}: `base` must be the file: URL of a directory, e.g. \"file:///home/me/site/\", not {value}"
        )
    };
    let mut url = value
        .as_str()
        .and_then(|s| Url::parse(s).ok())
        .filter(|u| u.scheme() == "file")
        .ok_or_else(wrong)?;
    url.set_query(None);
    url.set_fragment(None);
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(Some(url.to_string()))
}

/// The part of `url` below `base` (still percent-encoded, as in the URL),
/// when `base` is set and `url` is a file below it.
pub fn relative<'a>(base: Option<&str>, url: &'a str) -> Option<&'a str> {
    url.strip_prefix(base?).filter(|rest| !rest.is_empty())
}
