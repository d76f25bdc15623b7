//! robots.txt as RFC 9309 reads it, beside the draft's reading in
//! [`super::rules`]. The two disagree on common files, and a polite robot
//! fetches only what both allow (the default, see [`RobotsMode`]):
//!
//! - a group applies when one of its `User-agent` values has the robot's
//!   product token (the leading letters, `_` and `-`, compared without
//!   case), not when the name occurs anywhere in the value; all groups for
//!   the robot are merged, else all `*` groups;
//! - the rule with the longest matching pattern decides, an `Allow` winning
//!   a tie, wherever it stands in the group (the draft: the first match);
//! - patterns may use `*` (any characters) and a final `$` (end of path);
//! - percent-encoded unreserved characters (`%7E` for `~`) compare decoded,
//!   other escapes compare with upper-case hex, and bytes outside US-ASCII
//!   compare percent-encoded.
//!
//! With `Allow: /` followed by `Disallow: /private/`, the draft allows
//! `/private/x` (its first line matches) and RFC 9309 forbids it (the
//! second line is longer).

/// Which reading of robots.txt decides what the robot may fetch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RobotsMode {
    /// Fetch only what both the draft and RFC 9309 allow.
    #[default]
    Both,
    /// Koster's 1996 draft alone (seed 002).
    Draft,
    /// RFC 9309 alone.
    Rfc9309,
}

impl RobotsMode {
    /// The setting's value (`robots_rules`).
    pub fn as_str(self) -> &'static str {
        match self {
            RobotsMode::Both => "both",
            RobotsMode::Draft => "draft",
            RobotsMode::Rfc9309 => "rfc9309",
        }
    }

    /// The mode named `s`.
    pub fn from_name(s: &str) -> Option<RobotsMode> {
        [RobotsMode::Both, RobotsMode::Draft, RobotsMode::Rfc9309]
            .into_iter()
            .find(|m| m.as_str() == s)
    }

    /// Whether RFC 9309's reading is consulted.
    pub fn uses_rfc9309(self) -> bool {
        self != RobotsMode::Draft
    }
}

/// Whether a `User-agent` value is the `*` of every robot.
fn is_global(agent: &str) -> bool {
    let a = agent.trim_start();
    a.starts_with('*') && a[1..].chars().next().is_none_or(char::is_whitespace)
}

/// The product token of a `User-agent` value: its leading letters, `_`
/// and `-`.
fn product_token(agent: &str) -> &str {
    let a = agent.trim_start();
    let end = a
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '_' || c == '-'))
        .unwrap_or(a.len());
    &a[..end]
}

/// The lines that apply to `robot` (a product token, any case) of the
/// groups `groups` (each its `User-agent` values and its rule lines in
/// order): the lines of every group naming the robot, in file order, else
/// those of every `*` group; `None` when no group applies.
pub fn select<'g>(
    groups: impl IntoIterator<Item = (&'g [String], &'g [(bool, String)])> + Clone,
    robot: &str,
) -> Option<Vec<(bool, String)>> {
    let robot = robot.trim();
    let pick = |wanted: &dyn Fn(&str) -> bool| -> Option<Vec<(bool, String)>> {
        let mut any = false;
        let mut lines = Vec::new();
        for (agents, rules) in groups.clone() {
            if agents.iter().any(|a| wanted(a)) {
                any = true;
                lines.extend(rules.iter().cloned());
            }
        }
        any.then_some(lines)
    };
    let named = |a: &str| {
        let token = product_token(a);
        !token.is_empty() && token.eq_ignore_ascii_case(robot)
    };
    (!robot.is_empty())
        .then(|| pick(&named))
        .flatten()
        .or_else(|| pick(&|a: &str| is_global(a)))
}

/// Whether `b` is an unreserved character of RFC 3986.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Whether a URL must percent-encode the US-ASCII `c` wherever it stands
/// (RFC 3986 allows it neither as data nor as a delimiter): controls,
/// space, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|` and `}`. A rule may
/// write them as they are (`Disallow: /my files/`) and a URL carries them
/// encoded (`/my%20files/`): both compare encoded (RFC 9309, 2.2.2).
fn must_encode(c: u8) -> bool {
    c < 0x20 || c == 0x7f || b" \"<>\\^`{|}".contains(&c)
}

/// A path or pattern in the form RFC 9309 compares: `%xx` of an unreserved
/// character decoded, other `%xx` with upper-case hex, bytes outside
/// US-ASCII and the characters a URL must encode ([`must_encode`])
/// percent-encoded.
pub fn normalize(s: &str) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            let byte = hex(b[i + 1]) * 16 + hex(b[i + 2]);
            if unreserved(byte) {
                out.push(byte);
            } else {
                out.extend_from_slice(&[
                    b'%',
                    HEX[(byte >> 4) as usize],
                    HEX[(byte & 15) as usize],
                ]);
            }
            i += 3;
            continue;
        }
        if c >= 0x80 || must_encode(c) {
            out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// Whether the normalized `path` matches the normalized `pattern`: `*`
/// matches any run of characters, a final `$` the end of the path, and
/// otherwise the pattern matches a prefix of the path.
///
/// The pattern's literal runs between its `*`s are found in turn, each at
/// its first place after the one before (the first place leaves the most
/// path for the runs after it, so a match is found if there is one): the
/// cost is about the path's length for each rule, whatever the pattern.
/// Matching every end the pattern could reach instead cost the pattern's
/// length times the path's, and a hostile robots.txt of 500 KiB of
/// `/*a*a*…*b` rules made each 2,000-byte URL take half a second.
pub fn matches(path: &[u8], pattern: &[u8]) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix(b"$") {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let mut runs = pattern.split(|&b| b == b'*');
    let first = runs.next().unwrap_or_default();
    if !path.starts_with(first) {
        return false;
    }
    let mut at = first.len();
    let Some(mut run) = runs.next() else {
        // No `*`: a prefix, or with `$` the whole path.
        return !anchored || at == path.len();
    };
    loop {
        let rest = &path[at..];
        let Some(next) = runs.next() else {
            // The last run, after a `*`: anywhere further on, or with `$`
            // at the very end.
            return match anchored {
                true => rest.ends_with(run),
                false => memchr::memmem::find(rest, run).is_some(),
            };
        };
        match memchr::memmem::find(rest, run) {
            Some(i) => at += i + run.len(),
            None => return false,
        }
        run = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Characters a URL must percent-encode match whether the rule writes
    /// them as they are or encoded (RFC 9309, 2.2.2): before, `Disallow:
    /// /my files/` allowed `/my%20files/x`.
    #[test]
    fn rules_and_paths_compare_in_one_encoding() {
        let m = |path: &str, pattern: &str| matches(&normalize(path), &normalize(pattern));
        assert!(m("/my%20files/x", "/my files/"));
        assert!(m("/a%7Bb%7D", "/a{b}"));
        assert!(m("/q%22%3C%3E", "/q\"%3C>"));
        assert!(m("/a%7Cb", "/a|b"));
        assert!(m("/a%7cb", "/a|b"));
        assert!(m("/a|b", "/a%7Cb"));
        assert!(m("/%60x%5E", "/`x^"));
        // Delimiters keep their meaning: an escaped slash is no slash.
        assert!(!m("/a%2Fb", "/a/b"));
        assert!(m("/~mak", "/%7Emak"));
    }

    #[test]
    fn wildcards_and_the_end_anchor() {
        let m = |path: &str, pattern: &str| matches(path.as_bytes(), pattern.as_bytes());
        assert!(m("/fish.html", "/fish"));
        assert!(m("/fish/salmon.html", "/fish*"));
        assert!(!m("/Fish.asp", "/fish"));
        assert!(m("/filename.php", "/*.php"));
        assert!(m("/folder/filename.php?parameters", "/*.php"));
        assert!(m("/filename.php", "/*.php$"));
        assert!(!m("/filename.php?parameters", "/*.php$"));
        assert!(!m("/filename.php5", "/*.php$"));
        assert!(m("/fish.php", "/fish*.php"));
        assert!(!m("/Fish.PHP", "/fish*.php"));
        assert!(m("/", "/$"));
        assert!(!m("/a", "/$"));
        assert!(m("/a$b", "/a$b"), "a `$` inside a pattern is a character");
    }

    /// The matcher as it was: every end the pattern so far can reach,
    /// character by character (right, and slow on hostile patterns).
    fn every_end(path: &[u8], pattern: &[u8]) -> bool {
        let mut ends: Vec<usize> = vec![0];
        for (k, &p) in pattern.iter().enumerate() {
            if p == b'$' && k + 1 == pattern.len() {
                return ends.last() == Some(&path.len());
            }
            ends = match p {
                b'*' => (ends[0]..=path.len()).collect(),
                _ => ends
                    .iter()
                    .filter(|&&e| e < path.len() && path[e] == p)
                    .map(|e| e + 1)
                    .collect(),
            };
            if ends.is_empty() {
                return false;
            }
        }
        true
    }

    /// Every string of up to `n` of `alphabet`'s bytes.
    fn strings(alphabet: &[u8], n: usize) -> Vec<Vec<u8>> {
        let mut all = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..n {
            last = last
                .iter()
                .flat_map(|s: &Vec<u8>| {
                    alphabet.iter().map(move |&c| {
                        let mut t = s.clone();
                        t.push(c);
                        t
                    })
                })
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn runs_found_in_turn_decide_as_every_end_does() {
        // Every pattern of up to 6 of `a`, `b`, `*`, `$` against every path
        // of up to 6 of `a`, `b`, `$`: 5,461 patterns, 1,093 paths.
        let paths = strings(b"ab$", 6);
        let mut compared = 0;
        for pattern in strings(b"ab*$", 6) {
            for path in &paths {
                assert_eq!(
                    matches(path, &pattern),
                    every_end(path, &pattern),
                    "{:?} against {:?}",
                    String::from_utf8_lossy(path),
                    String::from_utf8_lossy(&pattern)
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 5_461 * 1_093);
    }

    #[test]
    fn escapes_compare_in_one_form() {
        assert_eq!(normalize("/%7Emak/%2fx"), b"/~mak/%2Fx".to_vec());
        assert_eq!(normalize("/ツ"), b"/%E3%83%84".to_vec());
        assert_eq!(normalize("/%e3%83%84"), b"/%E3%83%84".to_vec());
        assert_eq!(normalize("/100%"), b"/100%".to_vec());
    }

    #[test]
    fn groups_are_chosen_by_product_token_and_merged() {
        let g = |agents: &[&str], rules: &[(bool, &str)]| {
            (
                agents.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                rules
                    .iter()
                    .map(|(a, p)| (*a, p.to_string()))
                    .collect::<Vec<_>>(),
            )
        };
        let groups = [
            g(&["*"], &[(false, "/all")]),
            g(&["FooBot/1.0"], &[(false, "/a")]),
            g(&["barbot"], &[(false, "/b")]),
            g(&["foobot"], &[(true, "/c")]),
        ];
        let view = || groups.iter().map(|(a, r)| (a.as_slice(), r.as_slice()));
        assert_eq!(
            select(view(), "foobot"),
            Some(vec![(false, "/a".to_string()), (true, "/c".to_string())])
        );
        assert_eq!(
            select(view(), "foo"),
            Some(vec![(false, "/all".to_string())])
        );
        assert_eq!(select(view(), ""), Some(vec![(false, "/all".to_string())]));
        assert_eq!(select(view().skip(1), "other"), None);
    }
}
