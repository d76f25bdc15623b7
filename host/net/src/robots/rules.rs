//! robots.txt as in Koster's 1996 draft (seed 002), and beside it as RFC
//! 9309 reads it ([`super::rfc9309`]); [`RobotsMode`] says which
//! reading decides (by default both must allow).
//!
//! The `robotstxt` crate tokenizes the file (it accepts CR, LF and CRLF line
//! ends, comments and common typos; a byte order mark is dropped before it,
//! which took it for part of the first line, and
//! [`crate::fetch::robots::robots_text`] makes the text of the bytes read);
//! this module applies the draft's
//! rules on top: the robot obeys the *first* record with a User-agent value
//! containing its name token (case-insensitive), else the first `*` record,
//! else nothing restricts it; within the record the *first* Allow or Disallow
//! path that is a prefix of the URL's path decides; `%xx` escapes compare
//! decoded except `%2F`; `/robots.txt` itself is always allowed.

use super::rfc9309;
pub use super::rfc9309::RobotsMode;
use robotstxt::{RobotsParseHandler, parse_robotstxt};
use std::time::Duration;
use url::Url;

/// One Allow or Disallow line of the record that applies to this robot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotsRule {
    /// Allow (true) or Disallow (false).
    pub allow: bool,
    /// The path as written in the file.
    pub path: String,
    decoded: Vec<u8>,
}

/// The part of a robots.txt that applies to one robot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RobotsRules {
    /// The rules of the record the draft applies, in file order (empty:
    /// unrestricted).
    pub rules: Vec<RobotsRule>,
    /// The rules of the groups RFC 9309 applies, merged in file order.
    pub rfc9309: Vec<RobotsRule>,
    /// Which reading decides.
    pub mode: RobotsMode,
    /// `Crawl-delay` of the applicable record.
    pub crawl_delay: Option<Duration>,
    /// Which record applied: the User-agent value matched, `*`, or `None` for no record.
    pub matched_agent: Option<String>,
    /// The `Sitemap:` lines' URLs, as written, in file order (they belong
    /// to no record; at most [`MAX_SITEMAP_LINES`]).
    pub sitemaps: Vec<String>,
}

/// The most `Sitemap:` lines kept of one robots.txt.
pub const MAX_SITEMAP_LINES: usize = 50;

#[derive(Default)]
struct Record {
    agents: Vec<String>,
    rules: Vec<(bool, String)>,
    crawl_delay: Option<Duration>,
}

#[derive(Default)]
struct Collector {
    records: Vec<Record>,
    /// Whether the last directive was a User-agent line (consecutive ones share a record).
    in_agents: bool,
    sitemaps: Vec<String>,
}

impl Collector {
    fn current(&mut self) -> Option<&mut Record> {
        self.records.last_mut()
    }
}

impl RobotsParseHandler for Collector {
    fn handle_robots_start(&mut self) {}
    fn handle_robots_end(&mut self) {}
    fn handle_user_agent(&mut self, _line: u32, agent: &str) {
        if !self.in_agents {
            self.records.push(Record::default());
        }
        self.in_agents = true;
        let agent = agent.trim().to_string();
        if let Some(r) = self.current() {
            r.agents.push(agent);
        }
    }
    fn handle_allow(&mut self, _line: u32, value: &str) {
        self.in_agents = false;
        if let Some(r) = self.current() {
            r.rules.push((true, value.to_string()));
        }
    }
    fn handle_disallow(&mut self, _line: u32, value: &str) {
        self.in_agents = false;
        if let Some(r) = self.current() {
            r.rules.push((false, value.to_string()));
        }
    }
    fn handle_sitemap(&mut self, _line: u32, value: &str) {
        let value = value.trim();
        if !value.is_empty() && self.sitemaps.len() < MAX_SITEMAP_LINES {
            self.sitemaps.push(value.to_string());
        }
    }
    fn handle_unknown_action(&mut self, _line: u32, action: &str, value: &str) {
        if action.eq_ignore_ascii_case("crawl-delay") {
            self.in_agents = false;
            let secs: Option<f64> = value
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0);
            if let (Some(r), Some(s)) = (self.records.last_mut(), secs) {
                r.crawl_delay = Some(Duration::from_secs_f64(s.min(86_400.0)));
            }
        }
    }
}

/// Percent-decode a path for comparison, keeping `%2F` encoded (it is not a `/`).
fn decode_path(path: &str) -> Vec<u8> {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                let byte = (h * 16 + l) as u8;
                if byte == b'/' {
                    out.extend_from_slice(b"%2F");
                } else {
                    out.push(byte);
                }
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// A rule of the draft's reading: prefix comparison with `%xx` decoded.
fn draft_rule(allow: bool, path: &str) -> RobotsRule {
    RobotsRule {
        allow,
        path: path.to_string(),
        decoded: decode_path(path),
    }
}

/// A rule of RFC 9309's reading: the pattern normalized for comparison.
fn rfc9309_rule(allow: bool, path: &str) -> RobotsRule {
    RobotsRule {
        allow,
        path: path.to_string(),
        decoded: rfc9309::normalize(path),
    }
}

/// Rules from lines, an empty path (which matches nothing: "Disallow:"
/// allows everything) left out.
fn rules_of<'a>(
    lines: impl IntoIterator<Item = (bool, &'a str)>,
    make: fn(bool, &str) -> RobotsRule,
) -> Vec<RobotsRule> {
    lines
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(allow, p)| make(allow, p))
        .collect()
}

impl RobotsRules {
    /// The rules of `body` that apply to the robot whose name token is
    /// `robot`, read as `mode` says.
    pub fn parse(body: &str, robot: &str, mode: RobotsMode) -> RobotsRules {
        // A UTF-8 byte order mark is no part of the first line (the
        // tokenizer took it for one and lost the line).
        let body = body.strip_prefix('\u{feff}').unwrap_or(body);
        let mut c = Collector::default();
        parse_robotstxt(body, &mut c);
        let name = robot.trim().to_ascii_lowercase();
        // An empty name would be a substring of every agent: it names no record.
        let chosen = c
            .records
            .iter()
            .filter(|_| !name.is_empty())
            .find_map(|r| {
                r.agents
                    .iter()
                    .find(|a| a.as_str() != "*" && a.to_ascii_lowercase().contains(&name))
                    .map(|a| (r, a.clone()))
            })
            .or_else(|| {
                c.records
                    .iter()
                    .find(|r| r.agents.iter().any(|a| a == "*"))
                    .map(|r| (r, "*".to_string()))
            });
        let groups = c
            .records
            .iter()
            .map(|r| (r.agents.as_slice(), r.rules.as_slice()));
        let rfc9309 = rfc9309::select(groups, &name).unwrap_or_default();
        let rfc9309 = rules_of(rfc9309.iter().map(|(a, p)| (*a, p.as_str())), rfc9309_rule);
        let Some((record, agent)) = chosen else {
            return RobotsRules {
                rfc9309,
                mode,
                sitemaps: c.sitemaps,
                ..RobotsRules::default()
            };
        };
        RobotsRules {
            rules: rules_of(
                record.rules.iter().map(|(a, p)| (*a, p.as_str())),
                draft_rule,
            ),
            rfc9309,
            mode,
            crawl_delay: record.crawl_delay,
            matched_agent: Some(agent),
            sitemaps: c.sitemaps.clone(),
        }
    }

    /// The rules of a record given as its Allow (`true`) and Disallow
    /// lines' paths, in file order (as an avoid file's robots.txt group
    /// keeps them): `draft` for the draft's reading, `rfc9309` for RFC
    /// 9309's, read as `mode` says.
    pub fn from_lines<'a>(
        draft: impl IntoIterator<Item = (bool, &'a str)>,
        rfc9309: impl IntoIterator<Item = (bool, &'a str)>,
        mode: RobotsMode,
    ) -> RobotsRules {
        RobotsRules {
            rules: rules_of(draft, draft_rule),
            rfc9309: rules_of(rfc9309, rfc9309_rule),
            mode,
            crawl_delay: None,
            matched_agent: Some("the avoid file".into()),
            sitemaps: Vec::new(),
        }
    }

    /// Rules that forbid the whole site (for 401/403 on robots.txt).
    pub fn forbid_all() -> RobotsRules {
        RobotsRules {
            rules: vec![draft_rule(false, "/")],
            rfc9309: vec![rfc9309_rule(false, "/")],
            mode: RobotsMode::Both,
            crawl_delay: None,
            matched_agent: None,
            sitemaps: Vec::new(),
        }
    }

    /// The rule that forbids `path_and_query` to the robot, if one does:
    /// the draft's first match, or RFC 9309's longest (an Allow winning a
    /// tie), as the mode says. `/robots.txt` itself is never forbidden.
    pub fn forbidding_rule(&self, path_and_query: &str) -> Option<&RobotsRule> {
        if path_and_query == "/robots.txt" {
            return None;
        }
        let draft = || {
            let decoded = decode_path(path_and_query);
            self.rules.iter().find(|r| decoded.starts_with(&r.decoded))
        };
        let rfc = || {
            let path = rfc9309::normalize(path_and_query);
            self.rfc9309
                .iter()
                .filter(|r| rfc9309::matches(&path, &r.decoded))
                .max_by_key(|r| (r.decoded.len(), r.allow))
        };
        fn forbids(r: Option<&RobotsRule>) -> Option<&RobotsRule> {
            r.filter(|r| !r.allow)
        }
        match self.mode {
            RobotsMode::Draft => forbids(draft()),
            RobotsMode::Rfc9309 => forbids(rfc()),
            RobotsMode::Both => forbids(draft()).or_else(|| forbids(rfc())),
        }
    }

    /// Whether the robot may request `url`.
    pub fn allows(&self, url: &Url) -> bool {
        let mut pq = url.path().to_string();
        if let Some(q) = url.query() {
            pq.push('?');
            pq.push_str(q);
        }
        self.forbidding_rule(&pq).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Sitemap:` lines belong to no record: kept whichever record
    /// applies, and when none does.
    #[test]
    fn sitemap_lines_are_kept_whatever_record_applies() {
        let body = "Sitemap: https://a.test/one.xml\nUser-agent: other\nDisallow: /\n\n\
                    User-agent: spinneret\nDisallow: /x\nsitemap:   /two.xml  \n";
        let r = RobotsRules::parse(body, "spinneret", RobotsMode::Both);
        assert_eq!(r.sitemaps, ["https://a.test/one.xml", "/two.xml"]);
        let none = RobotsRules::parse("Sitemap: /s.xml\n", "spinneret", RobotsMode::Both);
        assert_eq!(none.sitemaps, ["/s.xml"]);
        let many: String = (0..80).map(|i| format!("Sitemap: /s{i}.xml\n")).collect();
        let r = RobotsRules::parse(&many, "spinneret", RobotsMode::Both);
        assert_eq!(r.sitemaps.len(), MAX_SITEMAP_LINES);
    }

    /// A byte order mark before the first line does not lose that line,
    /// in any mode (Google's parser and Protego read it the same way).
    #[test]
    fn a_byte_order_mark_does_not_lose_the_first_line() {
        let body = "\u{feff}User-agent: *\nDisallow: /x\n";
        for mode in [RobotsMode::Both, RobotsMode::Draft, RobotsMode::Rfc9309] {
            let r = RobotsRules::parse(body, "spinneret", mode);
            assert!(
                !r.allows(&Url::parse("http://a.test/x").unwrap()),
                "{mode:?}"
            );
            assert!(r.allows(&Url::parse("http://a.test/y").unwrap()));
        }
    }

    /// The example of section 4 of the draft.
    const FICT: &str = "# /robots.txt for http://www.fict.org/\n# comments to webmaster@fict.org\n\nUser-agent: unhipbot\nDisallow: /\n\nUser-agent: webcrawler\nUser-agent: excite\nDisallow:\n\nUser-agent: *\nDisallow: /org/plans.html\nAllow: /org/\nAllow: /serv\nAllow: /~mak\nDisallow: /\n";

    /// The access matrix of section 4: URL, unhipbot, webcrawler & excite, other.
    const MATRIX: [(&str, bool, bool, bool); 11] = [
        ("http://www.fict.org/", false, true, false),
        ("http://www.fict.org/index.html", false, true, false),
        ("http://www.fict.org/robots.txt", true, true, true),
        ("http://www.fict.org/server.html", false, true, true),
        ("http://www.fict.org/services/fast.html", false, true, true),
        ("http://www.fict.org/services/slow.html", false, true, true),
        ("http://www.fict.org/orgo.gif", false, true, false),
        ("http://www.fict.org/org/about.html", false, true, true),
        ("http://www.fict.org/org/plans.html", false, true, false),
        ("http://www.fict.org/%7Ejim/jim.html", false, true, false),
        ("http://www.fict.org/%7Emak/mak.html", false, true, true),
    ];

    fn check_matrix(body: &str) {
        for mode in [RobotsMode::Both, RobotsMode::Draft, RobotsMode::Rfc9309] {
            let unhip = RobotsRules::parse(body, "unhipbot", mode);
            let webcrawler = RobotsRules::parse(body, "webcrawler", mode);
            let excite = RobotsRules::parse(body, "excite", mode);
            let other = RobotsRules::parse(body, "spinneret", mode);
            for (url, u, w, o) in MATRIX {
                let url = Url::parse(url).unwrap();
                assert_eq!(unhip.allows(&url), u, "{mode:?} unhipbot {url}");
                assert_eq!(webcrawler.allows(&url), w, "{mode:?} webcrawler {url}");
                assert_eq!(excite.allows(&url), w, "{mode:?} excite {url}");
                assert_eq!(other.allows(&url), o, "{mode:?} other {url}");
            }
        }
    }

    fn draft(body: &str, robot: &str) -> RobotsRules {
        RobotsRules::parse(body, robot, RobotsMode::Draft)
    }

    fn disallowed(r: &RobotsRules) -> Vec<&str> {
        r.rules
            .iter()
            .filter(|r| !r.allow)
            .map(|r| r.path.as_str())
            .collect()
    }

    /// The readings disagree: the draft's first match against RFC 9309's
    /// longest match, and a name inside a value against the product token.
    #[test]
    fn a_polite_robot_fetches_only_what_both_readings_allow() {
        let body = "User-agent: *\nAllow: /\nDisallow: /private/\n";
        let x = Url::parse("http://x/private/x").unwrap();
        let allowed = |mode| RobotsRules::parse(body, "spinneret", mode).allows(&x);
        assert!(allowed(RobotsMode::Draft));
        assert!(!allowed(RobotsMode::Rfc9309));
        assert!(!allowed(RobotsMode::Both));
        let body = "User-agent: spinneret-beta\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\n";
        let page = Url::parse("http://x/page.html").unwrap();
        let allowed = |mode| RobotsRules::parse(body, "spinneret", mode).allows(&page);
        assert!(
            !allowed(RobotsMode::Draft),
            "the draft: `spinneret` is in the value"
        );
        assert!(
            allowed(RobotsMode::Rfc9309),
            "RFC 9309: the token is `spinneret-beta`"
        );
        assert!(!allowed(RobotsMode::Both));
    }

    #[test]
    fn fict_org_matrix_lf() {
        check_matrix(FICT);
    }

    #[test]
    fn fict_org_matrix_crlf_and_cr() {
        check_matrix(&FICT.replace('\n', "\r\n"));
        check_matrix(&FICT.replace('\n', "\r"));
    }

    #[test]
    fn agent_names_match_case_insensitively_as_substrings() {
        let r = draft("User-agent: UnhipBot/0.1\nDisallow: /\n", "unhipbot");
        assert_eq!(r.matched_agent.as_deref(), Some("UnhipBot/0.1"));
        assert!(!r.allows(&Url::parse("http://x/a").unwrap()));
    }

    #[test]
    fn an_empty_robot_name_matches_no_named_record() {
        let body = "User-agent: webcrawler\nDisallow:\n\nUser-agent: *\nDisallow: /private/\n";
        for name in ["", "  "] {
            let r = RobotsRules::parse(body, name, RobotsMode::Both);
            assert_eq!(r.matched_agent.as_deref(), Some("*"));
            assert!(!r.allows(&Url::parse("http://x/private/a").unwrap()));
        }
    }

    #[test]
    fn no_record_means_unlimited() {
        let r = RobotsRules::parse(
            "User-agent: otherbot\nDisallow: /\n",
            "spinneret",
            RobotsMode::Both,
        );
        assert_eq!(r.matched_agent, None);
        assert!(r.allows(&Url::parse("http://x/a").unwrap()));
        assert!(draft("", "spinneret").rules.is_empty());
    }

    #[test]
    fn first_matching_record_wins() {
        let body = "User-agent: *\nDisallow: /star\n\nUser-agent: spinneret\nDisallow: /mine\n\nUser-agent: spinneret\nDisallow: /second\n";
        let r = draft(body, "spinneret");
        assert_eq!(disallowed(&r), vec!["/mine"]);
    }

    /// The path matching table of section 3.2.2.
    #[test]
    fn path_matching_table() {
        let cases = [
            ("/tmp", "/tmp", true),
            ("/tmp", "/tmp.html", true),
            ("/tmp", "/tmp/a.html", true),
            ("/tmp/", "/tmp", false),
            ("/tmp/", "/tmp/", true),
            ("/tmp/", "/tmp/a.html", true),
            ("/a%3cd.html", "/a%3cd.html", true),
            ("/a%3Cd.html", "/a%3cd.html", true),
            ("/a%3cd.html", "/a%3Cd.html", true),
            ("/a%3Cd.html", "/a%3Cd.html", true),
            ("/a%2fb.html", "/a%2fb.html", true),
            ("/a%2fb.html", "/a/b.html", false),
            ("/a/b.html", "/a%2fb.html", false),
            ("/a/b.html", "/a/b.html", true),
            ("/%7ejoe/index.html", "/~joe/index.html", true),
            ("/~joe/index.html", "/%7Ejoe/index.html", true),
        ];
        for (record, path, matches) in cases {
            let r = draft(&format!("User-agent: *\nDisallow: {record}\n"), "x");
            assert_eq!(
                r.forbidding_rule(path).is_some(),
                matches,
                "{record} vs {path}"
            );
        }
    }

    #[test]
    fn crawl_delay_and_comments() {
        let r = draft(
            "User-agent: * # everyone\nCrawl-delay: 2.5\nDisallow: /cgi-bin/ # scripts\n",
            "spinneret",
        );
        assert_eq!(r.crawl_delay, Some(Duration::from_millis(2500)));
        assert_eq!(disallowed(&r), vec!["/cgi-bin/"]);
    }

    #[test]
    fn query_strings_are_part_of_the_path() {
        let r = RobotsRules::parse(
            "User-agent: *\nDisallow: /search?q=\n",
            "x",
            RobotsMode::Both,
        );
        assert!(!r.allows(&Url::parse("http://x/search?q=a").unwrap()));
        assert!(r.allows(&Url::parse("http://x/search").unwrap()));
    }
}
