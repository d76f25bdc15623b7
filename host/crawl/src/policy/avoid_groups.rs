//! The robots.txt groups of an avoid file (seed 003): the lines from a
//! heading `# robots.txt of HOST:PORT…` to its `# end of robots.txt of
//! HOST:PORT`, which [`super::robots_files`] writes for each site whose
//! robots.txt it read. The avoid file's reader ([`super::rules`]) reads a
//! group's lines as the site wrote them, and `robots_files` reads the
//! groups back; both find them here.

/// The heading words of a group of the lines RFC 9309 applies.
pub(super) const RFC9309_GROUP: &str = "as RFC 9309 reads it";

/// The site a group heading names (`# robots.txt of HOST:PORT…`), and
/// whether the group holds RFC 9309's lines.
fn group_site(line: &str) -> Option<(String, bool)> {
    let rest = line.trim().strip_prefix('#')?.trim();
    let rest = rest.strip_prefix("robots.txt of ")?;
    let site = rest.split([',', ' ']).next()?;
    Some((site.to_ascii_lowercase(), rest.contains(RFC9309_GROUP)))
}

/// The group (site) each line of an avoid file belongs to, if any: its
/// heading, the entries after it and its closing `# end of robots.txt of
/// HOST:PORT` line (a blank or other comment line also ends it), so that
/// lines added after a group by hand stay the user's.
pub(super) fn groups(text: &str) -> Vec<Option<(String, bool)>> {
    let mut current: Option<(String, bool)> = None;
    text.lines()
        .map(|l| {
            let t = l.trim();
            if let Some(group) = group_site(t) {
                current = Some(group);
                return current.clone();
            }
            let end = t
                .strip_prefix('#')
                .map(str::trim)
                .and_then(|r| r.strip_prefix("end of robots.txt of "))
                .map(|r| r.trim().to_ascii_lowercase());
            if let Some(site) = end {
                return current.take().filter(|(c, _)| *c == site);
            }
            if t.is_empty() || t.starts_with('#') {
                current = None;
            }
            current.clone()
        })
        .collect()
}
