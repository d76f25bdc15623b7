//! Avoid and leaf rules: URL prefixes with an optional expiry (seed 003), read
//! from MOMspider's avoid-file format (seed 000, Appendix C):
//!
//! ```text
//! # comment
//! Avoid http://www.ncsa.uiuc.edu:8001/ [*]
//! Leaf  http://www.ics.uci.edu/Admin/ [*]
//! Avoid http://www.ics.uci.edu/Test/momtest.html [Sat, 02 Apr 1994 00:00:00 GMT]
//! ```
//!
//! *Avoid* means no request at all; *Leaf* means HEAD only (never traversed).
//!
//! spinneret's extension: `Allow URLprefix [date]`, only inside a robots.txt
//! group of the user's avoid file (see [`super::robots_files`]), records a
//! robots.txt `Allow` line so that the group reads back with the same
//! decisions. MOMspider's own reader skips such lines.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a rule does to the URLs under its prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleAction {
    /// Never request.
    Avoid,
    /// Request with HEAD only; never traverse.
    Leaf,
    /// A robots.txt `Allow` line inside a robots.txt group (spinneret's
    /// extension); it means nothing outside one.
    Allow,
}

impl RuleAction {
    /// The keyword of the file format.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleAction::Avoid => "Avoid",
            RuleAction::Leaf => "Leaf",
            RuleAction::Allow => "Allow",
        }
    }
}

/// One avoid or leaf entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixRule {
    /// Avoid or leaf.
    pub action: RuleAction,
    /// The URL prefix it applies to.
    pub prefix: String,
    /// When it stops applying; `None` never expires (`[*]`).
    pub expires: Option<SystemTime>,
    /// Where it came from (`file:line`, or `robots.txt of SITE`).
    pub origin: String,
    /// Its 1-based line in the file it was read from.
    pub line: usize,
}

/// An avoid file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct RulesError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line (0 when the file could not be read).
    pub line: usize,
    /// What is wrong and what is expected.
    pub message: String,
}

impl RulesError {
    /// An error at `line` of `path`.
    pub fn at(path: &Path, line: usize, message: String) -> RulesError {
        RulesError {
            path: path.to_path_buf(),
            line,
            message,
        }
    }
}

/// Read the `what` at `path`: its text, or none when there is no file.
pub fn read_text(path: &Path, what: &str) -> Result<Option<String>, RulesError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(RulesError::at(
            path,
            0,
            format!("cannot read the {what}: {e}"),
        )),
    }
}

/// Parse a date of the formats HTTP knows (RFC 1123, RFC 850, asctime), as the
/// seed's files use. A hand-edited file may name the wrong weekday; the date
/// itself decides, as MOMspider's own date parser did.
pub fn parse_date(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    if let Ok(t) = httpdate::parse_http_date(s) {
        return Some(t);
    }
    // "Thu, 31 Dec 2099 09:30:00 GMT" with any weekday: rebuild it with the right one.
    let (_, rest) = s.split_once(',')?;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x.eq_ignore_ascii_case(month))? as i64 + 1;
    let (d, y): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    // Days since 1970-01-01 of the civil date (Howard Hinnant's algorithm), for the weekday.
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    let weekday = WEEKDAYS[days.rem_euclid(7) as usize];
    let fixed = format!(
        "{weekday}, {d:02} {} {y:04} {time} {zone}",
        MONTHS[(m - 1) as usize]
    );
    httpdate::parse_http_date(&fixed).ok()
}

/// The entry lines of one of the seed's files (avoid, sites): blank and `#`
/// lines skipped, each entry as its 1-based line number, its first word
/// and the rest of the line.
pub(crate) fn entry_lines(text: &str) -> impl Iterator<Item = (usize, &str, &str)> {
    text.lines().enumerate().filter_map(|(i, raw)| {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        Some((i + 1, keyword, rest.trim()))
    })
}

/// An entry's value and its `[date]`, if it has one.
pub(crate) fn split_date(rest: &str) -> Result<(&str, Option<&str>), String> {
    match rest.find('[') {
        Some(b) => {
            let close = rest
                .rfind(']')
                .filter(|c| *c > b)
                .ok_or_else(|| "the expiry date has no closing `]`".to_string())?;
            Ok((rest[..b].trim(), Some(rest[b + 1..close].trim())))
        }
        None => Ok((rest, None)),
    }
}

/// An entry's expiry: none or `*` never expires; a date must be one the
/// format knows.
pub(crate) fn expiry(date: Option<&str>) -> Result<Option<SystemTime>, String> {
    match date {
        None | Some("*") => Ok(None),
        Some(d) => parse_date(d).map(Some).ok_or_else(|| {
            format!(
                "`{d}` is not a date this format knows; write `*` or e.g. `Fri, 31 Dec 1999 09:30:00 GMT`"
            )
        }),
    }
}

/// Parse the text of an avoid file.
pub fn parse_rules(text: &str, path: &Path) -> Result<Vec<PrefixRule>, RulesError> {
    let err = |line: usize, message: String| RulesError::at(path, line, message);
    let mut out = Vec::new();
    for (line_no, keyword, rest) in entry_lines(text) {
        let action = match keyword.to_ascii_lowercase().as_str() {
            "avoid" => RuleAction::Avoid,
            "leaf" => RuleAction::Leaf,
            "allow" => RuleAction::Allow,
            _ => {
                return Err(err(
                    line_no,
                    format!(
                        "unknown entry type `{keyword}`; expected `Avoid` or `Leaf` (or, inside a robots.txt group, `Allow`)"
                    ),
                ));
            }
        };
        let (prefix, date) = split_date(rest).map_err(|m| err(line_no, m))?;
        if prefix.is_empty() || prefix.contains(char::is_whitespace) {
            return Err(err(
                line_no,
                "expected `Avoid|Leaf URLprefix [date]` with one URL prefix".to_string(),
            ));
        }
        if url::Url::parse(prefix).is_err() {
            return Err(err(
                line_no,
                format!("`{prefix}` is not an absolute URL prefix"),
            ));
        }
        let expires = expiry(date).map_err(|m| err(line_no, m))?;
        out.push(PrefixRule {
            action,
            prefix: prefix.to_string(),
            expires,
            origin: format!("{}:{line_no}", path.display()),
            line: line_no,
        });
    }
    Ok(out)
}

/// Read an avoid file; a missing file is no rules.
pub fn read_rules(path: &Path) -> Result<Vec<PrefixRule>, RulesError> {
    read_text(path, "avoid file")?.map_or(Ok(Vec::new()), |text| parse_rules(&text, path))
}

/// The avoid and leaf rules in force for a run.
#[derive(Clone, Debug, Default)]
pub struct PrefixRules {
    rules: Vec<PrefixRule>,
}

impl PrefixRules {
    /// Keep the rules that have not expired at `now`.
    pub fn new(rules: impl IntoIterator<Item = PrefixRule>, now: SystemTime) -> Self {
        PrefixRules {
            rules: rules
                .into_iter()
                .filter(|r| r.expires.is_none_or(|e| e > now) && r.action != RuleAction::Allow)
                .collect(),
        }
    }

    /// The rule that applies to `url`: an Avoid beats a Leaf; among equals the longest prefix.
    pub fn lookup(&self, url: &str) -> Option<&PrefixRule> {
        self.rules
            .iter()
            .filter(|r| url.starts_with(&r.prefix))
            .max_by_key(|r| (r.action == RuleAction::Avoid, r.prefix.len()))
    }

    /// The rules in force.
    pub fn rules(&self) -> &[PrefixRule] {
        &self.rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APPENDIX_C: &str = "# MOMspider-0.1a Avoid File: Lists URL prefixes to avoid or leaf.\n\
Avoid http://www.ncsa.uiuc.edu:8001/ [*]\n\
Leaf http://www.ncsa.uiuc.edu/SDG/Software/Mosaic/Docs/whats-new.html [*]\n\
Leaf http://www.ics.uci.edu/Admin/ [*]\n\
Avoid http://www.ics.uci.edu/Test/momtest.html [Sat, 02 Apr 1994 00:00:00 GMT]\n\
Avoid http://betelgeuse.com/name.html [Fri, 31 Dec 2099 09:30:00 GMT]\n";

    #[test]
    fn appendix_c_parses() {
        let rules = parse_rules(APPENDIX_C, Path::new("avoid.mom")).unwrap();
        assert_eq!(rules.len(), 5);
        assert_eq!(rules[0].action, RuleAction::Avoid);
        assert_eq!(rules[0].expires, None);
        assert_eq!(rules[3].origin, "avoid.mom:5");
        assert!(rules[3].expires.is_some());
    }

    #[test]
    fn expired_rules_are_dropped_and_avoid_beats_leaf() {
        let rules = parse_rules(APPENDIX_C, Path::new("avoid.mom")).unwrap();
        let set = PrefixRules::new(rules, SystemTime::now());
        assert_eq!(set.rules().len(), 4);
        assert!(
            set.lookup("http://www.ics.uci.edu/Test/momtest.html")
                .is_none()
        );
        let r = set.lookup("http://www.ics.uci.edu/Admin/x.html").unwrap();
        assert_eq!(r.action, RuleAction::Leaf);
        let both = PrefixRules::new(
            parse_rules(
                "Leaf http://a.example/x/ [*]\nAvoid http://a.example/ [*]\n",
                Path::new("f"),
            )
            .unwrap(),
            SystemTime::now(),
        );
        assert_eq!(
            both.lookup("http://a.example/x/y").unwrap().action,
            RuleAction::Avoid
        );
    }

    #[test]
    fn dates_with_a_wrong_weekday_are_accepted() {
        // 31 Dec 2099 is a Thursday.
        let right = parse_date("Thu, 31 Dec 2099 09:30:00 GMT").unwrap();
        assert_eq!(parse_date("Fri, 31 Dec 2099 09:30:00 GMT"), Some(right));
        assert!(parse_date("Sun Nov  6 08:49:37 1994").is_some());
        assert!(parse_date("Sunday, 06-Nov-94 08:49:37 GMT").is_some());
    }

    #[test]
    fn bad_lines_are_located() {
        let e = parse_rules("# ok\nSkip http://a/ [*]\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u.avoid:2: unknown entry type `Skip`; expected `Avoid` or `Leaf` (or, inside a robots.txt group, `Allow`)"
        );
        let e = parse_rules("Avoid http://a/ [next tuesday]\n", Path::new("u.avoid")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("u.avoid:1: `next tuesday` is not a date"),
            "{e}"
        );
        let e = parse_rules(
            "Avoid http://a/ [Fri, 45 Dec 1999 09:30:00 GMT]\n",
            Path::new("u.avoid"),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("u.avoid:1: `Fri, 45 Dec 1999 09:30:00 GMT` is not a date"),
            "{e}"
        );
        let e = parse_rules("Avoid not-a-url [*]\n", Path::new("u.avoid")).unwrap_err();
        assert!(e.to_string().contains("not an absolute URL prefix"), "{e}");
    }
}
