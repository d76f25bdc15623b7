// Included by the SDK's `html` module and by the host's
// `spinneret_core::urls`: one rule for what a page of either may link.

/// Whether a report may make `url` a link a reader can click: a relative
/// reference, or an absolute URL of `http`, `https`, `file`, `ftp` or
/// `mailto`. A page's `javascript:`, `vbscript:` or `data:` link, however
/// written (`JaVaScRiPt:`, a leading space, a tab inside), is not: escaped
/// text cannot stop a browser from running a `javascript:` href, so such a
/// URL is shown as text (the SDK's `html::push_link` does so).
pub fn linkable(url: &str) -> bool {
    // What a browser reads of an href: leading C0 controls and spaces
    // dropped, tabs and newlines removed anywhere.
    let read: String = url
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    match read.split_once(':') {
        // A colon after a `/`, `?` or `#` is in a path, a query or a
        // fragment: the reference is relative.
        Some((scheme, _)) if !scheme.contains(['/', '?', '#']) => matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "file" | "ftp" | "mailto"
        ),
        _ => true,
    }
}
