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

/// The largest avoid or sites file read: far more entries than any
/// infostructure has (a million lines of 60 bytes).
pub const MAX_RULES_FILE: u64 = 64 << 20;

/// Read the `what` at `path`: its text, or none when there is no file.
/// Only a regular file of at most [`MAX_RULES_FILE`] bytes is read: a
/// device (`/dev/zero`), a directory or a pipe is refused, saying which.
pub fn read_text(path: &Path, what: &str) -> Result<Option<String>, RulesError> {
    use std::io::Read;
    let refuse = |message: String| Err(RulesError::at(path, 0, message));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return refuse(format!("cannot read the {what}: {e}")),
    };
    if !meta.is_file() {
        let kind = match meta.is_dir() {
            true => "a directory",
            false => "not a regular file (a device, a pipe or a socket)",
        };
        return refuse(format!("the {what} is {kind}; name a text file"));
    }
    if meta.len() > MAX_RULES_FILE {
        return refuse(format!(
            "the {what} is {} bytes, more than the {} MiB such a file may be",
            meta.len(),
            MAX_RULES_FILE >> 20
        ));
    }
    let mut bytes = Vec::new();
    let read =
        std::fs::File::open(path).and_then(|f| f.take(MAX_RULES_FILE + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return refuse(format!("cannot read the {what}: {e}"));
    }
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Some(t)),
        Err(_) => refuse(format!("the {what} is not UTF-8 text")),
    }
}

/// Parse an expiry date as MOMspider's date reader took them: the forms
/// HTTP knows (RFC 1123, RFC 850, asctime), with or without the weekday
/// (a wrong one is ignored: the date itself decides), with a two- or
/// four-digit year, the time optional (midnight), in GMT (`GMT`, `UTC`,
/// `UT`, `Z` or no zone); and ISO 8601 (`2027-12-31`,
/// `2027-12-31T09:30:00Z`, `2027-12-31 09:30+01:00`).
pub fn parse_date(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    if let Ok(t) = httpdate::parse_http_date(s) {
        return Some(t);
    }
    if let Some(t) = iso8601(s).or_else(|| loose_date(s)) {
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

const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The time of a civil date and time in UTC, if it is a real one.
fn civil(y: i64, m: i64, d: i64, (hh, mm, ss): (i64, i64, i64)) -> Option<SystemTime> {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m)
        || !(1..=days_in[(m - 1) as usize]).contains(&d)
        || !(1970..=9999).contains(&y)
        || !(0..24).contains(&hh)
        || !(0..60).contains(&mm)
        || !(0..61).contains(&ss)
    {
        return None;
    }
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let (yy, mm2) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm2 + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(secs).ok()?))
}

/// `HH:MM` or `HH:MM:SS`.
fn clock(t: &str) -> Option<(i64, i64, i64)> {
    let mut parts = t.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m) = (parts.next()??, parts.next()??);
    let s = match parts.next() {
        Some(s) => s?,
        None => 0,
    };
    parts.next().is_none().then_some((h, m, s))
}

/// ISO 8601: a date, or a date and a time (`T` or a space between) with
/// `Z`, `±HH:MM`, `±HHMM` or no zone (UTC).
fn iso8601(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let rest = &s[10..];
    if rest.is_empty() {
        return civil(y, m, d, (0, 0, 0));
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (time, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let time = time.split('.').next()?;
    let at = civil(y, m, d, clock(time)?)?;
    let shift = match offset {
        "" | "Z" | "z" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let digits: String = o[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 {
                return None;
            }
            let (h, m) = (
                digits[..2].parse::<i64>().ok()?,
                digits[2..].parse::<i64>().ok()?,
            );
            sign * (h * 3600 + m * 60)
        }
    };
    match shift >= 0 {
        true => at.checked_sub(std::time::Duration::from_secs(shift as u64)),
        false => at.checked_add(std::time::Duration::from_secs(shift.unsigned_abs())),
    }
}

/// The forms MOMspider's date reader took beyond HTTP's strict ones: a day,
/// a month's name and a year in any of the usual orders, separated by
/// spaces, commas or hyphens, an optional weekday, an optional time and
/// GMT (`31 Dec 2027 09:30:00 GMT`, `Saturday, 31-Dec-27`, `Dec 31 2027`).
fn loose_date(s: &str) -> Option<SystemTime> {
    let (mut day, mut month, mut year, mut time) = (None, None, None, None);
    for word in s
        .split(|c: char| c.is_whitespace() || c == ',' || c == '-')
        .filter(|w| !w.is_empty())
    {
        let lower = word.to_ascii_lowercase();
        if word.contains(':') {
            time = Some(clock(word)?);
        } else if let Some(m) = MONTH_NAMES.iter().position(|n| lower.starts_with(n)) {
            if month.replace(m as i64 + 1).is_some() {
                return None;
            }
        } else if let Ok(n) = word.parse::<i64>() {
            match (word.len(), day) {
                (1 | 2, None) => day = Some(n),
                (2, Some(_)) if year.is_none() => {
                    year = Some(if n < 70 { 2000 + n } else { 1900 + n })
                }
                (4, _) if year.is_none() => year = Some(n),
                _ => return None,
            }
        } else if matches!(lower.as_str(), "gmt" | "utc" | "ut" | "z") {
        } else if !["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
            .iter()
            .any(|d| lower.starts_with(d))
        {
            return None;
        }
    }
    civil(year?, month?, day?, time.unwrap_or((0, 0, 0)))
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
                "`{d}` is not a date this format knows; write `*` (never expires), an HTTP date (`Fri, 31 Dec 1999 09:30:00 GMT`, the weekday optional), or ISO 8601 (`1999-12-31` or `1999-12-31T09:30:00Z`), in GMT"
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
        if prefix.is_empty() {
            return Err(err(
                line_no,
                format!("`{keyword}` names no URL prefix; write `{keyword} URLprefix [date]`"),
            ));
        }
        if let Some((first, after)) = prefix.split_once(char::is_whitespace) {
            let after = after.trim();
            let said = match parse_date(after) {
                Some(_) => format!(
                    "the expiry date `{after}` after the URL prefix needs brackets: write `{keyword} {first} [{after}]`"
                ),
                None => format!(
                    "`{after}` follows the URL prefix `{first}`; write `{keyword} URLprefix [date]`, one prefix per line (a space in a URL is written %20)"
                ),
            };
            return Err(err(line_no, said));
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

    /// What MOMspider's date reader took, and ISO 8601: before, only the
    /// three HTTP forms were read and anything else stopped the run.
    #[test]
    fn momspider_s_date_forms_and_iso_8601_are_read() {
        let want = parse_date("Fri, 31 Dec 2027 09:30:00 GMT").unwrap();
        for form in [
            "31 Dec 2027 09:30:00 GMT",
            "Friday, 31-Dec-27 09:30:00 GMT",
            "Fri Dec 31 09:30:00 2027",
            "Dec 31 09:30:00 2027",
            "31 December 2027 09:30",
            "2027-12-31T09:30:00Z",
            "2027-12-31 09:30:00",
            "2027-12-31T10:30:00+01:00",
            "2027-12-31T04:30-0500",
            "2027-12-31T09:30:00.250Z",
        ] {
            assert_eq!(parse_date(form), Some(want), "{form}");
        }
        let midnight = parse_date("Fri, 31 Dec 2027 00:00:00 GMT").unwrap();
        for form in ["2027-12-31", "31 Dec 2027", "Dec 31 2027", "31-Dec-27"] {
            assert_eq!(parse_date(form), Some(midnight), "{form}");
        }
        for bad in [
            "2027-02-30",
            "31 Feb 2027",
            "next tuesday",
            "31 Dec 2027 25:00",
            "2027-12-31T09:30:00+1",
            "31 Dec 2027 09:30 PST",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert!(
            parse_rules(
                "Avoid http://a/ [31 Dec 2027 09:30:00 GMT]\nLeaf http://b/ [2027-12-31]\n",
                Path::new("u.avoid")
            )
            .is_ok()
        );
    }

    /// A date without its brackets is said to be one, not blamed on the
    /// URL prefix; a file that is no text file is said to be what it is.
    #[test]
    fn a_bare_date_and_a_device_are_said_for_what_they_are() {
        let e = parse_rules("Avoid http://a/x 31 Dec 2027\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u.avoid:1: the expiry date `31 Dec 2027` after the URL prefix needs brackets: write `Avoid http://a/x [31 Dec 2027]`"
        );
        let e = parse_rules("Avoid http://a/x http://b/\n", Path::new("u.avoid")).unwrap_err();
        assert!(e.to_string().contains("follows the URL prefix"), "{e}");
        let e = read_rules(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero:0: the avoid file is not a regular file (a device, a pipe or a socket); name a text file"
        );
        let e = read_rules(Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
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
