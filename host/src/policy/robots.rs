//! robots.txt as in Koster's 1996 draft (seed 002).
//!
//! The `robotstxt` crate tokenizes the file (it accepts CR, LF and CRLF line
//! ends, comments, a BOM and common typos); this module applies the draft's
//! rules on top: the robot obeys the *first* record with a User-agent value
//! containing its name token (case-insensitive), else the first `*` record,
//! else nothing restricts it; within the record the *first* Allow or Disallow
//! path that is a prefix of the URL's path decides; `%xx` escapes compare
//! decoded except `%2F`; `/robots.txt` itself is always allowed.

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
    /// The rules of the applicable record, in file order (empty: unrestricted).
    pub rules: Vec<RobotsRule>,
    /// `Crawl-delay` of the applicable record.
    pub crawl_delay: Option<Duration>,
    /// Which record applied: the User-agent value matched, `*`, or `None` for no record.
    pub matched_agent: Option<String>,
}

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
    fn handle_sitemap(&mut self, _line: u32, _value: &str) {}
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

impl RobotsRules {
    /// The rules of `body` that apply to the robot whose name token is `robot`.
    pub fn parse(body: &str, robot: &str) -> RobotsRules {
        let mut c = Collector::default();
        parse_robotstxt(body, &mut c);
        let robot = robot.to_ascii_lowercase();
        let chosen = c
            .records
            .iter()
            .find_map(|r| {
                r.agents
                    .iter()
                    .find(|a| a.as_str() != "*" && a.to_ascii_lowercase().contains(&robot))
                    .map(|a| (r, a.clone()))
            })
            .or_else(|| {
                c.records
                    .iter()
                    .find(|r| r.agents.iter().any(|a| a == "*"))
                    .map(|r| (r, "*".to_string()))
            });
        let Some((record, agent)) = chosen else {
            return RobotsRules::default();
        };
        let rules = record
            .rules
            .iter()
            // An empty path matches nothing ("Disallow:" allows everything).
            .filter(|(_, p)| !p.is_empty())
            .map(|(allow, p)| RobotsRule {
                allow: *allow,
                path: p.clone(),
                decoded: decode_path(p),
            })
            .collect();
        RobotsRules {
            rules,
            crawl_delay: record.crawl_delay,
            matched_agent: Some(agent),
        }
    }

    /// Rules that forbid the whole site (for 401/403 on robots.txt).
    pub fn forbid_all() -> RobotsRules {
        RobotsRules {
            rules: vec![RobotsRule {
                allow: false,
                path: "/".into(),
                decoded: b"/".to_vec(),
            }],
            crawl_delay: None,
            matched_agent: None,
        }
    }

    /// The rule that decides `path_and_query`, if any.
    pub fn matching_rule(&self, path_and_query: &str) -> Option<&RobotsRule> {
        if path_and_query == "/robots.txt" {
            return None;
        }
        let decoded = decode_path(path_and_query);
        self.rules.iter().find(|r| decoded.starts_with(&r.decoded))
    }

    /// Whether the robot may request `url`.
    pub fn allows(&self, url: &Url) -> bool {
        let mut pq = url.path().to_string();
        if let Some(q) = url.query() {
            pq.push('?');
            pq.push_str(q);
        }
        self.matching_rule(&pq).is_none_or(|r| r.allow)
    }

    /// The Disallow paths, for the avoid entries MOMspider derives from robots.txt.
    pub fn disallowed_paths(&self) -> impl Iterator<Item = &str> {
        self.rules
            .iter()
            .filter(|r| !r.allow)
            .map(|r| r.path.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let unhip = RobotsRules::parse(body, "unhipbot");
        let webcrawler = RobotsRules::parse(body, "webcrawler");
        let excite = RobotsRules::parse(body, "excite");
        let other = RobotsRules::parse(body, "spinneret");
        for (url, u, w, o) in MATRIX {
            let url = Url::parse(url).unwrap();
            assert_eq!(unhip.allows(&url), u, "unhipbot {url}");
            assert_eq!(webcrawler.allows(&url), w, "webcrawler {url}");
            assert_eq!(excite.allows(&url), w, "excite {url}");
            assert_eq!(other.allows(&url), o, "other {url}");
        }
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
        let r = RobotsRules::parse("User-agent: UnhipBot/0.1\nDisallow: /\n", "unhipbot");
        assert_eq!(r.matched_agent.as_deref(), Some("UnhipBot/0.1"));
        assert!(!r.allows(&Url::parse("http://x/a").unwrap()));
    }

    #[test]
    fn no_record_means_unlimited() {
        let r = RobotsRules::parse("User-agent: otherbot\nDisallow: /\n", "spinneret");
        assert_eq!(r.matched_agent, None);
        assert!(r.allows(&Url::parse("http://x/a").unwrap()));
        assert!(RobotsRules::parse("", "spinneret").rules.is_empty());
    }

    #[test]
    fn first_matching_record_wins() {
        let body = "User-agent: *\nDisallow: /star\n\nUser-agent: spinneret\nDisallow: /mine\n\nUser-agent: spinneret\nDisallow: /second\n";
        let r = RobotsRules::parse(body, "spinneret");
        assert_eq!(r.disallowed_paths().collect::<Vec<_>>(), vec!["/mine"]);
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
            let r = RobotsRules::parse(&format!("User-agent: *\nDisallow: {record}\n"), "x");
            assert_eq!(
                r.matching_rule(path).is_some(),
                matches,
                "{record} vs {path}"
            );
        }
    }

    #[test]
    fn crawl_delay_and_comments() {
        let r = RobotsRules::parse(
            "User-agent: * # everyone\nCrawl-delay: 2.5\nDisallow: /cgi-bin/ # scripts\n",
            "spinneret",
        );
        assert_eq!(r.crawl_delay, Some(Duration::from_millis(2500)));
        assert_eq!(r.disallowed_paths().collect::<Vec<_>>(), vec!["/cgi-bin/"]);
    }

    #[test]
    fn query_strings_are_part_of_the_path() {
        let r = RobotsRules::parse("User-agent: *\nDisallow: /search?q=\n", "x");
        assert!(!r.allows(&Url::parse("http://x/search?q=a").unwrap()));
        assert!(r.allows(&Url::parse("http://x/search").unwrap()));
    }
}
