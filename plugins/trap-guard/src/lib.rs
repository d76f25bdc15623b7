//! `trap-guard`: a policy that keeps the spider out of the traps seed 000
//! warns about ("some forms of computational hypertext can trap an
//! unsuspecting spider"):
//!
//! - a document deeper than `max_depth` links from its task's top is tested
//!   as a leaf, not traversed;
//! - a path whose segments repeat (`/a/b/a/b/a/b/`, a relative-link loop)
//!   more than `max_repeats` times is avoided;
//! - a URL with more than `max_query_params` query parameters is avoided
//!   (calendars, faceted search);
//! - once more than `max_siblings` URLs have differed only in the value of
//!   one query parameter (`/cal?d=1`, `/cal?d=2`, … an endless calendar or
//!   another generated series), further such URLs are avoided;
//! - a URL containing any of the `avoid` texts is avoided.
//!
//! Configuration: `max_depth` (default: no limit), `max_repeats`
//! (default 3), `max_query_params` (default 8), `max_siblings` (default
//! 100; 0 turns the check off), `avoid` (default: none).
//!
//! Only `max_depth` reads the context: without it the verdict is the URL's
//! alone, and the host asks once per URL, not once per task and URL.

use serde_json::Value;
use spinneret_sdk::policy::*;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};

/// The most sibling patterns counted: past it, new patterns are not
/// counted (memory stays bounded on a web of endless distinct queries).
const MAX_PATTERNS: usize = 1 << 20;

/// The policy's settings, and the sibling counts of the run so far.
#[derive(Debug, Clone)]
pub struct TrapGuard {
    max_depth: Option<u32>,
    max_repeats: usize,
    max_query_params: usize,
    max_siblings: u32,
    avoid: Vec<String>,
    /// Distinct URLs seen per pattern (the URL with one query parameter's
    /// value left out, so each site counts apart), by the pattern's hash.
    siblings: HashMap<u64, u32>,
    /// The URLs with a query already counted (hashed), so that a URL asked
    /// about for several tasks counts once.
    counted: HashSet<u64>,
    hasher: RandomState,
}

fn number(config: &Value, key: &str) -> Result<Option<u64>, String> {
    match config.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("trap-guard: `{key}` must be a whole number, not {v}")),
    }
}

impl Policy for TrapGuard {
    fn configure(config: Value) -> Result<Self, String> {
        const KEYS: [&str; 5] = [
            "max_depth",
            "max_repeats",
            "max_query_params",
            "max_siblings",
            "avoid",
        ];
        spinneret_sdk::settings::check_keys("trap-guard", &config, &KEYS)?;
        let avoid = match config.get("avoid") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .ok_or_else(|| {
                            format!("trap-guard: `avoid` must list non-empty strings, not {v}")
                        })
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(format!("trap-guard: `avoid` must be a list, not {other}")),
        };
        Ok(TrapGuard {
            max_depth: number(&config, "max_depth")?.map(|n| n as u32),
            max_repeats: number(&config, "max_repeats")?.unwrap_or(3) as usize,
            max_query_params: number(&config, "max_query_params")?.unwrap_or(8) as usize,
            max_siblings: number(&config, "max_siblings")?
                .map_or(100, |n| n.min(u32::MAX.into()) as u32),
            avoid,
            siblings: HashMap::new(),
            counted: HashSet::new(),
            hasher: RandomState::new(),
        })
    }

    fn context_use(&self) -> ContextUse {
        match self.max_depth {
            Some(_) => ContextUse::DEPTH,
            None => ContextUse::empty(),
        }
    }

    fn decide(&mut self, candidate: &Candidate, context: &Context) -> Decision {
        let target = candidate.target.as_str();
        if let Some(t) = self.avoid.iter().find(|t| target.contains(t.as_str())) {
            return Decision::Avoid(format!("trap-guard: the URL contains \"{t}\""));
        }
        let (path, query) = path_and_query(target);
        let params = query.map_or(0, |q| q.split('&').filter(|p| !p.is_empty()).count());
        if params > self.max_query_params {
            return Decision::Avoid(format!(
                "trap-guard: {params} query parameters (at most {})",
                self.max_query_params
            ));
        }
        if let Some(q) = query
            && let Some(name) = self.one_of_many_siblings(target, q)
        {
            return Decision::Avoid(format!(
                "trap-guard: more than {} URLs differ only in the value of `{name}` (an endless calendar or series?)",
                self.max_siblings
            ));
        }
        if let Some((seg, n)) = repeated_segment(path, self.max_repeats) {
            return Decision::Avoid(format!(
                "trap-guard: the path repeats \"{seg}\" {n} times (a link loop?)"
            ));
        }
        match self.max_depth {
            Some(max) if context.depth > max => Decision::Leaf(format!(
                "trap-guard: {} links from the top (at most {max})",
                context.depth
            )),
            _ => Decision::NoObjection,
        }
    }
}

impl TrapGuard {
    /// Count `target` (once) among the siblings of each of its query
    /// parameters; the name of a parameter whose siblings are now more than
    /// `max_siblings`, if any.
    fn one_of_many_siblings<'q>(&mut self, target: &str, query: &'q str) -> Option<&'q str> {
        if self.max_siblings == 0 {
            return None;
        }
        let new = self.counted.insert(self.hasher.hash_one(target));
        // Scheme, host and path: everything before the query.
        let head = target.split_once('?').map_or(target, |(h, _)| h);
        let params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
        let mut found = None;
        for (i, param) in params.iter().enumerate() {
            let name = param.split_once('=').map_or(*param, |(n, _)| n);
            let mut pattern = String::with_capacity(head.len() + query.len() + 2);
            pattern.push_str(head);
            pattern.push('?');
            for (j, p) in params.iter().enumerate() {
                if j > 0 {
                    pattern.push('&');
                }
                pattern.push_str(if i == j { name } else { p });
            }
            let room = self.siblings.len() < MAX_PATTERNS;
            let count = match self.siblings.entry(self.hasher.hash_one(&pattern)) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) if room => e.insert(0),
                std::collections::hash_map::Entry::Vacant(_) => continue,
            };
            *count += u32::from(new);
            if *count > self.max_siblings && found.is_none() {
                found = Some(name);
            }
        }
        found
    }
}

/// The first segment of `path` seen more than `max` times, with its count
/// then. Paths are short: each segment is counted among those before it, in
/// place, without allocating (this runs once per task and URL of the
/// crawl); a path of many segments is counted in a map instead.
fn repeated_segment(path: &str, max: usize) -> Option<(&str, usize)> {
    let segments = || path.split('/').filter(|s| !s.is_empty());
    if segments().nth(64).is_none() {
        segments().enumerate().find_map(|(i, seg)| {
            let n = 1 + segments().take(i).filter(|s| *s == seg).count();
            (n > max).then_some((seg, n))
        })
    } else {
        let mut counts = std::collections::HashMap::new();
        segments().find_map(|seg| {
            let n = counts.entry(seg).or_insert(0);
            *n += 1;
            (*n > max).then_some((seg, *n))
        })
    }
}

/// The path and the query of `target`, an absolute URL as the host
/// serializes it (`scheme://authority/path?query#fragment`, or
/// `scheme:path?query` for URLs without an authority). Found by slicing:
/// the host has already parsed and normalized the URL.
fn path_and_query(target: &str) -> (&str, Option<&str>) {
    // Byte scans: every delimiter is ASCII, so each index found is a char
    // boundary (this runs once per task and URL of the crawl).
    let b = target.as_bytes();
    let find = |from: usize, hit: fn(u8) -> bool| {
        b[from..]
            .iter()
            .position(|&c| hit(c))
            .map_or(b.len(), |i| from + i)
    };
    let scheme_end = find(0, |c| c == b':');
    let start = if b[scheme_end.min(b.len())..].starts_with(b"://") {
        find(scheme_end + 3, |c| matches!(c, b'/' | b'?' | b'#'))
    } else {
        (scheme_end + 1).min(b.len())
    };
    let end = find(start, |c| c == b'#');
    let query = find(start, |c| c == b'?').min(end);
    if query < end {
        (&target[start..query], Some(&target[query + 1..end]))
    } else {
        (&target[start..end], None)
    }
}

spinneret_sdk::export_policy!(TrapGuard);

#[cfg(test)]
mod tests {
    use super::*;
    use spinneret_sdk::testing::fixtures;

    fn verdict(p: &mut TrapGuard, url: &str, depth: u32) -> String {
        match p.decide(&fixtures::candidate(url), &fixtures::context(depth)) {
            Decision::NoObjection => "ok".into(),
            Decision::Leaf(r) => format!("leaf: {r}"),
            Decision::Avoid(r) => format!("avoid: {r}"),
        }
    }

    #[test]
    fn path_and_query_are_sliced_as_the_url_crate_parses_them() {
        use spinneret_sdk::urls::Url;
        for u in [
            "http://a.example/x/y?a=1&b=2#f",
            "http://a.example",
            "http://a.example?q=1",
            "http://u:p@a.example:81/a//b/?&&c=1&",
            "https://a.example/#top",
            "mailto:someone@a.example?subject=hi",
            "ftp://a.example/pub/file.txt",
        ] {
            let parsed = Url::parse(u).unwrap();
            let (path, query) = path_and_query(parsed.as_str());
            assert_eq!(path, parsed.path(), "{u}");
            assert_eq!(query, parsed.query(), "{u}");
            assert_eq!(
                query.map_or(0, |q| q.split('&').filter(|p| !p.is_empty()).count()),
                parsed.query_pairs().count(),
                "{u}"
            );
        }
    }

    #[test]
    fn guards_against_depth_loops_queries_and_patterns() {
        let mut p =
            TrapGuard::configure(serde_json::json!({"max_depth": 2, "avoid": ["/cal/"]})).unwrap();
        assert_eq!(verdict(&mut p, "http://a.example/x.html", 2), "ok");
        assert_eq!(
            verdict(&mut p, "http://a.example/x.html", 3),
            "leaf: trap-guard: 3 links from the top (at most 2)"
        );
        assert_eq!(
            verdict(&mut p, "http://a.example/a/b/a/b/a/b/a/x.html", 0),
            "avoid: trap-guard: the path repeats \"a\" 4 times (a link loop?)"
        );
        assert_eq!(
            verdict(
                &mut p,
                "http://a.example/s?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9",
                0
            ),
            "avoid: trap-guard: 9 query parameters (at most 8)"
        );
        assert_eq!(
            verdict(&mut p, "http://a.example/cal/2026/11", 0),
            "avoid: trap-guard: the URL contains \"/cal/\""
        );
    }

    #[test]
    fn an_endless_series_of_query_values_is_cut_off() {
        let mut p = TrapGuard::configure(serde_json::json!({"max_siblings": 3})).unwrap();
        for d in 1..=3 {
            let url = format!("http://a.example/cal?d={d}&view=month");
            assert_eq!(verdict(&mut p, &url, 0), "ok");
            // Asked again (another task): not counted twice.
            assert_eq!(verdict(&mut p, &url, 0), "ok");
        }
        assert_eq!(
            verdict(&mut p, "http://a.example/cal?d=4&view=month", 0),
            "avoid: trap-guard: more than 3 URLs differ only in the value of `d` (an endless calendar or series?)"
        );
        // Other series are counted apart, on other sites too.
        assert_eq!(
            verdict(&mut p, "http://b.example/cal?d=9&view=month", 0),
            "ok"
        );
        assert_eq!(
            verdict(&mut p, "http://a.example/cal?d=1&view=week", 0),
            "ok"
        );
        assert_eq!(verdict(&mut p, "http://a.example/other?d=9", 0), "ok");
        // The default cuts a calendar off too; 0 turns the check off.
        let mut default = TrapGuard::configure(serde_json::json!({})).unwrap();
        let cut = (1..=200)
            .position(|d| verdict(&mut default, &format!("http://a.example/cal?d={d}"), 0) != "ok");
        assert_eq!(cut, Some(100));
        let mut off = TrapGuard::configure(serde_json::json!({"max_siblings": 0})).unwrap();
        assert!(
            (1..=200).all(|d| verdict(&mut off, &format!("http://a.example/cal?d={d}"), 0) == "ok")
        );
    }

    #[test]
    fn long_paths_are_counted_alike() {
        let short = "/a/b/a/b/a/b/a/x.html";
        let prefix: String = (0..70).map(|i| format!("/s{i}")).collect();
        let long = format!("{prefix}/a/b/a/b/a/b/a/x.html");
        assert_eq!(repeated_segment(short, 3), Some(("a", 4)));
        assert_eq!(repeated_segment(&long, 3), Some(("a", 4)));
        assert_eq!(repeated_segment(&long, 4), None);
        assert_eq!(repeated_segment("/", 0), None);
    }

    #[test]
    fn only_a_depth_limit_reads_the_context() {
        let free = TrapGuard::configure(serde_json::json!({"avoid": ["/cal/"]})).unwrap();
        assert_eq!(free.context_use(), ContextUse::empty());
        let deep = TrapGuard::configure(serde_json::json!({"max_depth": 4})).unwrap();
        assert_eq!(deep.context_use(), ContextUse::DEPTH);
    }

    #[test]
    fn settings_are_checked() {
        assert!(TrapGuard::configure(serde_json::json!({"max_depth": -1})).is_err());
        assert!(TrapGuard::configure(serde_json::json!({"avoid": "x"})).is_err());
        assert_eq!(
            TrapGuard::configure(serde_json::json!({"depth": 1})).unwrap_err(),
            "trap-guard: unknown setting `depth`; the settings are max_depth, max_repeats, max_query_params, max_siblings, avoid"
        );
    }
}
