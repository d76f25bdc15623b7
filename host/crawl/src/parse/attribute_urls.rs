//! The URLs written inside attribute values that hold more than a URL: a
//! refresh `<meta>`'s `content` and a `srcset`. The extraction
//! ([`super::html`]) takes the URLs from them, and [`super::position`]
//! finds where each is written; both read them here, the same way.

/// The delay and the URL of a `<meta http-equiv="refresh">`'s `content`
/// (`5; url=/next`, `0;URL='next.html'`, as the HTML standard reads it),
/// if it names one: `url=` may be left out, and a URL may begin with
/// "url" (`0; urls/next.html`).
pub fn refresh_target(content: &str) -> Option<(&str, &str)> {
    let content = content.trim();
    let digits = content
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(content.len());
    let (delay, rest) = content.split_at(digits);
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ';' || c == ',');
    let rest = match rest.get(..3) {
        Some(u) if u.eq_ignore_ascii_case("url") => {
            match rest[3..].trim_start().strip_prefix('=') {
                Some(after) => after.trim_start(),
                None => rest,
            }
        }
        _ => rest,
    };
    let target = match rest.chars().next() {
        Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
        _ => rest.trim_end(),
    };
    (!delay.is_empty() && !target.is_empty()).then_some((delay, target))
}

/// The candidates of a `srcset` attribute, as the HTML standard reads
/// them: each URL (which runs to the next whitespace, so it may hold commas,
/// as `data:` URLs and image CDNs' paths do) with its descriptors (`2x`,
/// `300w`), which end at the next comma outside parentheses.
pub fn srcset_candidates(srcset: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = srcset;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let mut url = &rest[..end];
        rest = &rest[end..];
        let mut descriptors = "";
        if url.ends_with(',') {
            url = url.trim_end_matches(',');
        } else {
            let mut depth = 0;
            let stop = rest
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        ',' if depth <= 0 => return true,
                        _ => {}
                    }
                    false
                })
                .map_or(rest.len(), |(i, _)| i);
            descriptors = rest[..stop].trim();
            rest = &rest[stop..];
        }
        if !url.is_empty() {
            out.push((url, descriptors));
        }
    }
    out
}

/// The URLs of a `srcset` attribute (descriptors dropped).
pub fn srcset_urls(srcset: &str) -> Vec<&str> {
    srcset_candidates(srcset)
        .into_iter()
        .map(|(u, _)| u)
        .collect()
}
