//! URL patterns: regular expressions that keep URLs from being requested at
//! all (`exclude_regex`, `--exclude`), and the ones that bring URLs back in
//! (`include_regex`, `--include`), as a link checker's users expect them.
//!
//! They differ from a task's `exclude` prefixes, which MOMspider leafs (a
//! HEAD request still tests the URL): a URL a pattern excludes gets no
//! request and is recorded as avoided, with the pattern and where it was
//! written.

use regex::{Regex, RegexBuilder};

/// The most memory one compiled pattern may take: a pattern is the user's,
/// but it is matched against every URL a crawl reaches, so its cost is
/// bounded (the `regex` crate matches in time linear in the URL).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// One regular expression, and where it was written (for the reason a URL
/// is recorded with).
#[derive(Clone, Debug)]
pub struct UrlPattern {
    regex: Regex,
    origin: String,
}

impl UrlPattern {
    /// Compile `source`, written at `origin` (e.g. "--exclude",
    /// "exclude_regex of task Docs"). The message of an error says what is
    /// wrong with the expression.
    pub fn new(source: &str, origin: &str) -> Result<UrlPattern, String> {
        let regex = RegexBuilder::new(source)
            .size_limit(PATTERN_SIZE_LIMIT)
            .build()
            .map_err(|e| {
                let why = e.to_string();
                // The regex crate's message spans lines (the pattern, a caret, the error).
                let why = why
                    .lines()
                    .last()
                    .unwrap_or("")
                    .trim_start_matches("error: ");
                format!("`{source}` is not a regular expression the crawler can use ({why})")
            })?;
        Ok(UrlPattern {
            regex,
            origin: origin.to_string(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// Whether the pattern matches anywhere in `url`.
    pub fn is_match(&self, url: &str) -> bool {
        self.regex.is_match(url)
    }
}

/// A task's URL patterns: the configuration's global ones and its own.
///
/// A URL is excluded when it matches an exclude pattern and no include
/// pattern. With include patterns alone (no exclude pattern), every URL
/// that matches none of them is excluded: only the included are checked.
/// (These are lychee's `--exclude` and `--include`.)
#[derive(Clone, Debug, Default)]
pub struct UrlPatterns {
    /// Patterns that bring a URL back in (and with no exclude pattern,
    /// the only URLs requested).
    pub include: Vec<UrlPattern>,
    /// Patterns that keep a URL from being requested.
    pub exclude: Vec<UrlPattern>,
}

impl UrlPatterns {
    /// Whether there is no pattern at all.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// These patterns and `more`'s, together.
    pub fn with(&self, more: &UrlPatterns) -> UrlPatterns {
        UrlPatterns {
            include: self.include.iter().chain(&more.include).cloned().collect(),
            exclude: self.exclude.iter().chain(&more.exclude).cloned().collect(),
        }
    }

    /// Why `url` is excluded, naming the pattern and where it was written;
    /// `None` when it may be requested.
    pub fn excludes(&self, url: &str) -> Option<String> {
        if self.include.iter().any(|p| p.is_match(url)) {
            return None;
        }
        if let Some(p) = self.exclude.iter().find(|p| p.is_match(url)) {
            return Some(format!(
                "excluded by the pattern `{}` ({})",
                p.as_str(),
                p.origin
            ));
        }
        match (self.exclude.is_empty(), self.include.as_slice()) {
            (true, [first, ..]) => Some(format!(
                "matches no include pattern (`{}`{}, {})",
                first.as_str(),
                if self.include.len() > 1 { " …" } else { "" },
                first.origin
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(include: &[&str], exclude: &[&str]) -> UrlPatterns {
        let all = |list: &[&str], origin: &str| {
            list.iter()
                .map(|s| UrlPattern::new(s, origin).unwrap())
                .collect()
        };
        UrlPatterns {
            include: all(include, "--include"),
            exclude: all(exclude, "--exclude"),
        }
    }

    #[test]
    fn an_exclude_pattern_excludes_unless_an_include_pattern_matches() {
        let p = patterns(&[r"/keep/"], &[r"\.pdf$", r"^https?://ads\."]);
        assert_eq!(
            p.excludes("http://a.example/x.pdf").as_deref(),
            Some(r"excluded by the pattern `\.pdf$` (--exclude)")
        );
        assert!(p.excludes("http://a.example/keep/x.pdf").is_none());
        assert!(p.excludes("http://a.example/x.html").is_none());
        assert!(p.excludes("https://ads.example/").is_some());
    }

    #[test]
    fn include_patterns_alone_keep_only_what_they_match() {
        let p = patterns(&["/docs/", "/api/"], &[]);
        assert!(p.excludes("http://a.example/docs/x").is_none());
        assert_eq!(
            p.excludes("http://a.example/blog/").as_deref(),
            Some("matches no include pattern (`/docs/` …, --include)")
        );
        assert!(
            UrlPatterns::default()
                .excludes("http://a.example/")
                .is_none()
        );
    }

    #[test]
    fn global_and_task_patterns_join() {
        let global = patterns(&[], &["/private/"]);
        let task = patterns(&[], &["/tmp/"]);
        let both = global.with(&task);
        assert!(both.excludes("http://a.example/private/").is_some());
        assert!(both.excludes("http://a.example/tmp/").is_some());
        assert!(both.excludes("http://a.example/").is_none());
    }

    #[test]
    fn a_bad_or_huge_pattern_is_refused_with_a_reason() {
        let e = UrlPattern::new("(unclosed", "--exclude").unwrap_err();
        assert!(
            e.starts_with("`(unclosed` is not a regular expression"),
            "{e}"
        );
        assert!(e.contains("unclosed group"), "{e}");
        let huge = UrlPattern::new(r"\w{1000}\w{1000}\w{1000}", "--exclude").unwrap_err();
        assert!(huge.contains("size limit"), "{huge}");
    }
}
