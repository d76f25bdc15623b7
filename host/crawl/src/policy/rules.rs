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

/// An avoid file that cannot be used: `FILE:LINE: message`, or `FILE:
/// message` for the file as a whole.
#[derive(Debug)]
pub struct RulesError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line (0 when the file could not be read).
    pub line: usize,
    /// What is wrong and what is expected.
    pub message: String,
}

impl std::fmt::Display for RulesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.path.display(), self.message),
            line => write!(f, "{}:{line}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for RulesError {}

impl RulesError {
    /// An error at `line` of `path` (0: the file as a whole).
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

/// What opening an avoid or sites file found.
enum Opened {
    /// No such file.
    Missing,
    /// Something that is not to be read, said as the end of a sentence
    /// naming it.
    Refused(String),
    /// A regular file of at most [`MAX_RULES_FILE`] bytes, open.
    File(std::fs::File),
}

/// What kind of thing a file that is not a regular file is.
fn kind_of(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    match t.is_dir() {
        true => "a directory",
        false => "a special file",
    }
}

/// Open `path` only if it is a regular file of at most [`MAX_RULES_FILE`]
/// bytes: its type is looked at before it is opened (opening a named pipe
/// would wait for a writer) and again on the open file.
fn open_bounded(path: &Path) -> Opened {
    let refused = |why: String| Opened::Refused(why);
    let is_fit = |meta: &std::fs::Metadata| -> Result<(), String> {
        if !meta.is_file() {
            return Err(format!(
                "is {}, not a regular file",
                kind_of(meta.file_type())
            ));
        }
        if meta.len() > MAX_RULES_FILE {
            return Err(format!(
                "is {} bytes, more than the {} MiB such a file may be",
                meta.len(),
                MAX_RULES_FILE >> 20
            ));
        }
        Ok(())
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Opened::Missing,
        Err(e) => return refused(format!("cannot be read ({e})")),
    };
    if let Err(why) = is_fit(&meta) {
        return refused(why);
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return refused(format!("cannot be read ({e})")),
    };
    match file.metadata().map_err(|e| format!("cannot be read ({e})")) {
        Ok(meta) => match is_fit(&meta) {
            Ok(()) => Opened::File(file),
            Err(why) => refused(why),
        },
        Err(why) => refused(why),
    }
}

/// Why `path` cannot be read as an avoid or sites file, said as the end of
/// a sentence naming it ("does not exist", "is a character device, not a
/// regular file", "cannot be read (Permission denied (os error 13))"), or
/// `None` when it can: for a configuration to say so where the file is
/// named.
pub fn file_problem(path: &Path) -> Option<String> {
    match open_bounded(path) {
        Opened::Missing => Some("does not exist".into()),
        Opened::Refused(why) => Some(why),
        Opened::File(_) => None,
    }
}

/// Read the `what` at `path`: its text, or none when there is no file.
/// Only a regular file of at most [`MAX_RULES_FILE`] bytes is read, and no
/// more than that is read whatever it turns into: a device (`/dev/zero`), a
/// directory, a pipe or a file the system will not open is refused, saying
/// which.
pub fn read_text(path: &Path, what: &str) -> Result<Option<String>, RulesError> {
    use std::io::Read;
    let refuse = |message: String| Err(RulesError::at(path, 0, message));
    let file = match open_bounded(path) {
        Opened::Missing => return Ok(None),
        Opened::Refused(why) => {
            return refuse(format!("the {what} {why}; name a text file"));
        }
        Opened::File(f) => f,
    };
    let mut bytes = Vec::new();
    if let Err(e) = file.take(MAX_RULES_FILE + 1).read_to_end(&mut bytes) {
        return refuse(format!("the {what} cannot be read ({e})"));
    }
    if bytes.len() as u64 > MAX_RULES_FILE {
        return refuse(format!(
            "the {what} grew past the {} MiB such a file may be while it was read",
            MAX_RULES_FILE >> 20
        ));
    }
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Some(t)),
        Err(e) => {
            let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            Err(RulesError::at(
                path,
                line,
                format!("the {what} is not UTF-8 text here; save it as UTF-8"),
            ))
        }
    }
}

/// The date forms an avoid or sites file may use, as an error message
/// lists them.
pub const DATE_FORMS: &str = "`*` (never expires), or a date in GMT as MOMspider's date reader took it: `Fri, 31 Dec 1999 23:59:59 GMT`, `31 Dec 1999 23:59:59 GMT`, `Friday, 31-Dec-99 23:59:59 GMT`, `Fri Dec 31 23:59:59 1999` or `31/Dec/1999:23:59:59 +0000` (the weekday and the time optional, a two- or four-digit year), or ISO 8601: `1999-12-31`, `1999-12-31T23:59:59Z`, `1999-12-31T23:59:59+01:00`";

/// Parse an expiry date as MOMspider's date reader (libwww-perl's
/// `wwwdates.pl`, `get_gmtime`) took them, and ISO 8601:
///
/// - the HTTP forms: `Fri, 31 Dec 1999 23:59:59 GMT` (RFC 1123), `Friday,
///   31-Dec-99 23:59:59 GMT` (RFC 850, also with a four-digit year) and
///   `Fri Dec 31 23:59:59 1999` (asctime, also with `GMT` before the year);
/// - each of them without its weekday (a wrong weekday is ignored: the date
///   itself decides), without its time (midnight), with a two- or
///   four-digit year (`70`-`99` are 19xx, `00`-`69` 20xx);
/// - the common log format `31/Dec/1999:23:59:59 -0700`, or `31/Dec/1999`;
/// - in GMT (`GMT`, `UTC`, `UT`, `Z` or no zone), or with a numeric offset
///   (`+0100`, `-07:00`) or a US zone of RFC 822 (`EST`, `PDT`, …);
/// - ISO 8601: `1999-12-31`, `1999-12-31T23:59:59Z`, `1999-12-31
///   23:59+01:00`, `19991231T235959Z` (UTC without a zone).
///
/// A date before 1970 is read (as long past) rather than refused.
pub fn parse_date(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    if let Ok(t) = httpdate::parse_http_date(s) {
        return Some(t);
    }
    iso8601(s).or_else(|| loose_date(s))
}

const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const DAY_NAMES: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The index of the name in `names` that `word` is, in full or as its
/// first three letters (`Dec`, `December`; also `Sept`), without case.
fn name_in(names: &[&str], word: &str) -> Option<usize> {
    let w = word.to_ascii_lowercase();
    names.iter().position(|n| {
        w.len() >= 3
            && (w == *n
                || (w.len() == 3 && n.starts_with(&w))
                || (w == "sept" && *n == "september"))
    })
}

/// Whether `word` names a weekday: the first three letters or more of its
/// name (`Tue`, `Tues`, `Tuesday`), without case.
fn is_weekday(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    w.len() >= 3 && DAY_NAMES.iter().any(|d| d.starts_with(&w))
}

/// The time of a civil date and time in UTC, if it is a real one (a
/// date before 1970 is a time before the epoch).
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
        || !(1..=9999).contains(&y)
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
    shifted(
        SystemTime::UNIX_EPOCH,
        days * 86_400 + hh * 3600 + mm * 60 + ss,
    )
}

/// `t` moved by `secs` seconds, either way.
fn shifted(t: SystemTime, secs: i64) -> Option<SystemTime> {
    let by = std::time::Duration::from_secs(secs.unsigned_abs());
    match secs >= 0 {
        true => t.checked_add(by),
        false => t.checked_sub(by),
    }
}

/// `HH:MM` or `HH:MM:SS`, the seconds perhaps with a fraction (dropped).
fn clock(t: &str) -> Option<(i64, i64, i64)> {
    let num = |p: &str| match p.len() {
        1 | 2 if p.bytes().all(|b| b.is_ascii_digit()) => p.parse::<i64>().ok(),
        _ => None,
    };
    let mut parts = t.split(':');
    let (h, m) = (num(parts.next()?)?, num(parts.next()?)?);
    let s = match parts.next() {
        Some(s) => num(s.split_once('.').map_or(s, |(whole, _)| whole))?,
        None => 0,
    };
    parts.next().is_none().then_some((h, m, s))
}

/// The seconds east of GMT a zone says: `GMT`, `UTC`, `UT`, `Z`, a US
/// zone of RFC 822 (`EST`, `EDT`, `CST`, `CDT`, `MST`, `MDT`, `PST`,
/// `PDT`), or a numeric offset `+HHMM`, `-HH:MM` or `+HH`.
fn zone(z: &str) -> Option<i64> {
    let hours = match z.to_ascii_uppercase().as_str() {
        "GMT" | "UTC" | "UT" | "Z" => Some(0),
        "EDT" => Some(-4),
        "EST" | "CDT" => Some(-5),
        "CST" | "MDT" => Some(-6),
        "MST" | "PDT" => Some(-7),
        "PST" => Some(-8),
        _ => None,
    };
    if let Some(h) = hours {
        return Some(h * 3600);
    }
    let sign = match z.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = z[1..].chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || z[1..].matches(':').count() > 1 {
        return None;
    }
    let (h, m) = match digits.len() {
        2 => (digits.parse::<i64>().ok()?, 0),
        4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
        _ => return None,
    };
    (h < 24 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

/// ISO 8601: a date (`1999-12-31`, `19991231`), or a date and a time (`T`
/// or a space between; `23:59`, `23:59:59`, `2359`, `235959`, a fraction
/// of a second dropped) with `Z`, an offset (`+01:00`, `+0100`, `+01`),
/// `GMT`/`UTC` after a space, or no zone (UTC).
fn iso8601(s: &str) -> Option<SystemTime> {
    let digits = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let b = s.as_bytes();
    let (y, m, d, rest) = if b.len() >= 10 && b[4] == b'-' && b[7] == b'-' {
        (digits(0..4)?, digits(5..7)?, digits(8..10)?, &s[10..])
    } else if b.len() >= 8 && b.get(8).is_none_or(|c| !c.is_ascii_digit()) {
        (digits(0..4)?, digits(4..6)?, digits(6..8)?, &s[8..])
    } else {
        return None;
    };
    if rest.is_empty() {
        return civil(y, m, d, (0, 0, 0));
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (time, offset) = match rest.find(['Z', 'z', '+', '-', ' ']) {
        Some(i) => (&rest[..i], rest[i..].trim_start()),
        None => (rest, ""),
    };
    let hms = match time.contains(':') {
        true => clock(time)?,
        false => {
            let whole = time.split_once('.').map_or(time, |(w, _)| w);
            let n = |r: std::ops::Range<usize>| -> Option<i64> {
                let p = whole.get(r)?;
                p.bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| p.parse().ok())?
            };
            match whole.len() {
                4 => (n(0..2)?, n(2..4)?, 0),
                6 => (n(0..2)?, n(2..4)?, n(4..6)?),
                _ => return None,
            }
        }
    };
    let east = match offset {
        "" => 0,
        o => zone(o)?,
    };
    shifted(civil(y, m, d, hms)?, -east)
}

/// The forms MOMspider's date reader took beyond HTTP's strict ones: a
/// day, a month's name and a year in the usual orders, separated by
/// spaces, commas, hyphens or slashes, an optional weekday, an optional
/// time (in the common log format joined to the year by a colon) and a
/// zone (`31 Dec 1999 23:59:59 GMT`, `Friday, 31-Dec-99`, `Dec 31 1999`,
/// `31/Dec/1999:23:59:59 -0700`).
fn loose_date(s: &str) -> Option<SystemTime> {
    let (mut day, mut month, mut year, mut time, mut east) = (None, None, None, None, None);
    let once = |slot: &mut Option<i64>, v: i64| slot.replace(v).is_none();
    for token in s
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
    {
        // A zone: a name, or an offset (before a `-` is read as a separator).
        let zone_like =
            token.starts_with(['+', '-']) || token.bytes().all(|b| b.is_ascii_alphabetic());
        if let Some(z) = zone(token).filter(|_| zone_like) {
            if east.replace(z).is_some() {
                return None;
            }
            continue;
        }
        // The common log format: `31/Dec/1999:23:59:59`.
        let (date, clock_part) = match token.split_once(':') {
            Some((d, t)) if d.contains('/') => (d, Some(t)),
            _ => (token, None),
        };
        if let Some(t) = clock_part
            && time.replace(clock(t)?).is_some()
        {
            return None;
        }
        for word in date.split(['-', '/']).filter(|w| !w.is_empty()) {
            if word.contains(':') {
                if time.replace(clock(word)?).is_some() {
                    return None;
                }
            } else if let Some(m) = name_in(&MONTH_NAMES, word) {
                if !once(&mut month, m as i64 + 1) {
                    return None;
                }
            } else if word.bytes().all(|b| b.is_ascii_digit()) {
                let n: i64 = word.parse().ok()?;
                let fits = match (word.len(), day, year) {
                    (1 | 2, None, _) => once(&mut day, n),
                    (2, Some(_), None) => once(&mut year, if n < 70 { 2000 + n } else { 1900 + n }),
                    (4, _, None) => once(&mut year, n),
                    _ => false,
                };
                if !fits {
                    return None;
                }
            } else if !is_weekday(word) {
                return None;
            }
        }
    }
    shifted(
        civil(year?, month?, day?, time.unwrap_or((0, 0, 0)))?,
        -east.unwrap_or(0),
    )
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

/// An entry's value and its `[date]`, if it has one. The date is the
/// bracketed word that ends the line, the last `[` after a space: a value
/// may hold brackets of its own (an IPv6 host, `http://[::1]:8080/`, or a
/// robots.txt path `/a[1]`), and the date is looked for after them.
pub(crate) fn split_date(rest: &str) -> Result<(&str, Option<&str>), String> {
    let rest = rest.trim_end();
    let open = rest
        .char_indices()
        .filter(|&(i, c)| c == '[' && (i == 0 || rest[..i].ends_with(char::is_whitespace)))
        .map(|(i, _)| i)
        .next_back();
    match open {
        // At the start, only a bracketed word alone is a date (`[::1]:80`
        // is a value).
        Some(0) if !rest.ends_with(']') => Ok((rest, None)),
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
        Some(d) => parse_date(d)
            .map(Some)
            .ok_or_else(|| format!("the expiry date `{d}` cannot be read; write {DATE_FORMS}")),
    }
}

/// Parse the text of an avoid file. The lines of its robots.txt groups
/// (see [`super::avoid_groups`]) hold the site's origin and a robots.txt
/// path pattern as the site wrote it, which need not make a URL
/// (`Allow http://a.example*.php`): they are read as written.
pub fn parse_rules(text: &str, path: &Path) -> Result<Vec<PrefixRule>, RulesError> {
    let groups = super::avoid_groups::groups(text);
    parse_rules_with(text, path, &|line| {
        groups
            .get(line.wrapping_sub(1))
            .is_some_and(Option::is_some)
    })
}

/// Parse the text of an avoid file whose lines for which `robots_line`
/// (given the 1-based line number) holds are a robots.txt group's.
fn parse_rules_with(
    text: &str,
    path: &Path,
    robots_line: &dyn Fn(usize) -> bool,
) -> Result<Vec<PrefixRule>, RulesError> {
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
            let said = match (parse_date(after), after.contains("://")) {
                (Some(_), _) => format!(
                    "the expiry date `{after}` after the URL prefix needs brackets: write `{keyword} {first} [{after}]`"
                ),
                (None, true) => format!(
                    "`{after}` follows the URL prefix `{first}`; write one `{keyword} URLprefix [date]` entry per line (a space in a URL is written %20)"
                ),
                (None, false) => format!(
                    "`{after}` after the URL prefix `{first}` is no date that can be read, and an expiry date goes in brackets: write `{keyword} {first} [date]`, the date as {DATE_FORMS} (a space in a URL is written %20)"
                ),
            };
            return Err(err(line_no, said));
        }
        // `http://a.example/[*]`: a date that lacks the space before it
        // (a robots.txt path may end so: `/a[*]`).
        let robots = robots_line(line_no);
        if let Some((value, bracketed)) = Some(prefix)
            .filter(|_| !robots)
            .and_then(|p| p.strip_suffix(']'))
            .and_then(|p| p.rsplit_once('['))
            .filter(|(_, d)| *d == "*" || parse_date(d).is_some())
        {
            return Err(err(
                line_no,
                format!(
                    "`[{bracketed}]` is an expiry date without the space before it; write `{keyword} {value} [{bracketed}]`"
                ),
            ));
        }
        let valid = match robots {
            true => prefix.contains("://"),
            false => url::Url::parse(prefix).is_ok(),
        };
        if !valid {
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
        assert_eq!(
            want,
            SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_830_245_400)
        );
        for form in [
            // The issue's forms (31 Dec 2027 is a Friday: a wrong weekday
            // is ignored), then get_gmtime's list.
            "Sat, 31 Dec 2027 09:30:00 GMT",
            "31 Dec 2027 09:30:00 GMT",
            "Saturday, 31-Dec-27 09:30:00 GMT",
            "Sat Dec 31 09:30:00 2027",
            "Fri Dec 31 09:30:00 GMT 2027",
            "Friday, 31-Dec-2027 09:30:00 GMT",
            "31/Dec/2027:09:30:00 +0000",
            "31/Dec/2027:02:30:00 -0700",
            "31-Dec-27 09:30:00 GMT",
            "31-Dec-2027 09:30:00 GMT",
            "Friday, 31-Dec-27 09:30:00 GMT",
            "Fri Dec 31 09:30:00 2027",
            "Dec 31 09:30:00 2027",
            "31 December 2027 09:30",
            "Friday, December 31, 2027 09:30:00 UTC",
            "31 dec 2027 9:30:00 gmt",
            "Fri, 31 Dec 2027 10:30:00 +0100",
            "Fri, 31 Dec 2027 04:30:00 EST",
            "2027-12-31T09:30:00Z",
            "2027-12-31 09:30:00",
            "2027-12-31 09:30:00 GMT",
            "2027-12-31T10:30:00+01:00",
            "2027-12-31T04:30-0500",
            "2027-12-31T11:30+02",
            "2027-12-31T09:30:00.250Z",
            "20271231T093000Z",
        ] {
            assert_eq!(parse_date(form), Some(want), "{form}");
        }
        let midnight = parse_date("Fri, 31 Dec 2027 00:00:00 GMT").unwrap();
        for form in [
            "2027-12-31",
            "20271231",
            "31 Dec 2027",
            "Dec 31 2027",
            "31-Dec-27",
            "31-Dec-2027",
            "31/Dec/2027",
            "Friday, 31 Dec 2027",
            "Tues, 31 Dec 2027",
            "Thurs 31 Dec 2027",
        ] {
            assert_eq!(parse_date(form), Some(midnight), "{form}");
        }
        // A date before 1970 is a date (long past), not an error.
        assert_eq!(
            parse_date("Wed, 31 Dec 1969 23:59:59 GMT"),
            SystemTime::UNIX_EPOCH.checked_sub(std::time::Duration::from_secs(1))
        );
        for bad in [
            "2027-02-30",
            "31 Feb 2027",
            "next tuesday",
            "31 Dec 2027 25:00",
            "2027-12-31T09:30:00+1",
            "31 Dec 2027 09:30 CET",
            "31 Dec 27 2027",
            "Decimal 31 2027",
            "31 12 2027",
            "2027-12-31T0930:00",
            "31/Dec/2027:09:30:00 0700",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        let rules = parse_rules(
            "Avoid http://a/ [31 Dec 2027 09:30:00 GMT]\nLeaf http://b/ [2027-12-31]\nAvoid http://c/ [Sat Dec 31 09:30:00 2027]\n",
            Path::new("u.avoid"),
        )
        .unwrap();
        let expiries: Vec<_> = rules.iter().map(|r| r.expires).collect();
        assert_eq!(expiries, [Some(want), Some(midnight), Some(want)]);
    }

    /// A date that cannot be read is said to be one, at its file and line,
    /// with the forms that can; a date without brackets is said to be one,
    /// not blamed on the URL prefix; a file that is no text file is said to
    /// be what it is.
    #[test]
    fn a_bare_date_and_a_device_are_said_for_what_they_are() {
        let e = parse_rules(
            "# mine\nAvoid http://a/x [31 Dec 2027 25:00]\n",
            Path::new("u.avoid"),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "u.avoid:2: the expiry date `31 Dec 2027 25:00` cannot be read; write {DATE_FORMS}"
            )
        );
        assert!(DATE_FORMS.contains("`31/Dec/1999:23:59:59 +0000`"));
        let e = parse_rules("Avoid http://a/x 31 Dec 2027\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u.avoid:1: the expiry date `31 Dec 2027` after the URL prefix needs brackets: write `Avoid http://a/x [31 Dec 2027]`"
        );
        let e =
            parse_rules("Avoid http://a/x 31 Dec 2027 25:00\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "u.avoid:1: `31 Dec 2027 25:00` after the URL prefix `http://a/x` is no date that can be read, and an expiry date goes in brackets: write `Avoid http://a/x [date]`, the date as {DATE_FORMS} (a space in a URL is written %20)"
            )
        );
        let e = parse_rules("Avoid http://a/x http://b/\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u.avoid:1: `http://b/` follows the URL prefix `http://a/x`; write one `Avoid URLprefix [date]` entry per line (a space in a URL is written %20)"
        );
        let e = parse_rules("Leaf http://a/x[*]\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u.avoid:1: `[*]` is an expiry date without the space before it; write `Leaf http://a/x [*]`"
        );
        let e = read_rules(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: the avoid file is a character device, not a regular file; name a text file"
        );
        let e = read_rules(Path::new("/")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/: the avoid file is a directory, not a regular file; name a text file"
        );
        let e = read_rules(Path::new("/etc/passwd/avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/etc/passwd/avoid: the avoid file cannot be read (Not a directory (os error 20)); name a text file"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Refused without being opened (which would wait for a writer).
        assert_eq!(
            file_problem(&fifo).as_deref(),
            Some("is a named pipe, not a regular file")
        );
        let latin1 = dir.path().join("latin1");
        std::fs::write(
            &latin1,
            b"Avoid http://a/ [*]\nAvoid http://a/caf\xe9 [*]\n",
        )
        .unwrap();
        assert_eq!(
            read_rules(&latin1).unwrap_err().to_string(),
            format!(
                "{}:2: the avoid file is not UTF-8 text here; save it as UTF-8",
                latin1.display()
            )
        );
        assert_eq!(file_problem(&latin1), None);
        assert_eq!(
            file_problem(&dir.path().join("none")).as_deref(),
            Some("does not exist")
        );
        assert_eq!(read_rules(&dir.path().join("none")).unwrap(), Vec::new());
    }

    /// The expiry date is the bracketed word ending the line: brackets
    /// inside a URL prefix (an IPv6 host, a path) are the prefix's.
    #[test]
    fn brackets_inside_a_prefix_are_not_its_date() {
        let rules = parse_rules(
            "Avoid http://[::1]:8080/x [*]\nAvoid http://[::1]/y\nLeaf http://a/b[1] [2027-12-31]\n",
            Path::new("u.avoid"),
        )
        .unwrap();
        let got: Vec<_> = rules
            .iter()
            .map(|r| (r.prefix.as_str(), r.expires.is_some()))
            .collect();
        assert_eq!(
            got,
            [
                ("http://[::1]:8080/x", false),
                ("http://[::1]/y", false),
                ("http://a/b[1]", true)
            ]
        );
        let e = parse_rules("Avoid http://a/ [*\n", Path::new("u.avoid")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u.avoid:1: the expiry date has no closing `]`"
        );
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
                .starts_with("u.avoid:1: the expiry date `next tuesday` cannot be read; write `*`"),
            "{e}"
        );
        let e = parse_rules(
            "Avoid http://a/ [Fri, 45 Dec 1999 09:30:00 GMT]\n",
            Path::new("u.avoid"),
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "u.avoid:1: the expiry date `Fri, 45 Dec 1999 09:30:00 GMT` cannot be read"
            ),
            "{e}"
        );
        let e = parse_rules("Avoid not-a-url [*]\n", Path::new("u.avoid")).unwrap_err();
        assert!(e.to_string().contains("not an absolute URL prefix"), "{e}");
    }
}
