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
//! - a URL containing any of the `avoid` texts is avoided.
//!
//! Configuration: `max_depth` (default: no limit), `max_repeats`
//! (default 3), `max_query_params` (default 8), `avoid` (default: none).
//!
//! Only `max_depth` reads the context: without it the verdict is the URL's
//! alone, and the host asks once per URL, not once per task and URL.

use serde_json::Value;
use spinneret_sdk::policy::*;

/// The policy's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapGuard {
    max_depth: Option<u32>,
    max_repeats: usize,
    max_query_params: usize,
    avoid: Vec<String>,
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
        const KEYS: [&str; 4] = ["max_depth", "max_repeats", "max_query_params", "avoid"];
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
            avoid,
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
            "trap-guard: unknown setting `depth`; the settings are max_depth, max_repeats, max_query_params, avoid"
        );
    }
}
