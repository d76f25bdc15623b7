// Included by the SDK's `html` module and by the host's
// `spinneret_core::urls`: one rule for what a page of either may link.

/// Whether a report may make `url` a link a reader can click: a relative
/// reference, or an absolute URL of `http`, `https`, `file`, `ftp` or
/// `mailto`. A page's `javascript:`, `vbscript:` or `data:` link, however
/// written (`JaVaScRiPt:`, a leading space, a tab inside), is not: escaped
/// text cannot stop a browser from running a `javascript:` href, so such a
/// URL is shown as text (the SDK's `html::push_link` does so).
///
/// It reads the URL as a browser reads an href (leading C0 controls and
/// spaces dropped, tabs and newlines removed anywhere) without copying it:
/// a report asks once per reference.
pub fn linkable(url: &str) -> bool {
    // The scheme, lowercased, as far as the longest allowed one (`mailto`);
    // a longer one is none of them.
    let mut scheme = [0u8; 6];
    let mut len = 0;
    let mut too_long = false;
    let read = url
        .trim_start_matches(|c: char| c <= ' ')
        .bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r'));
    for b in read {
        match b {
            b':' => {
                return !too_long
                    && matches!(
                        &scheme[..len],
                        b"http" | b"https" | b"file" | b"ftp" | b"mailto"
                    );
            }
            // A colon after a `/`, `?` or `#` is in a path, a query or a
            // fragment: the reference is relative.
            b'/' | b'?' | b'#' => return true,
            _ if len == scheme.len() => too_long = true,
            _ => {
                scheme[len] = b.to_ascii_lowercase();
                len += 1;
            }
        }
    }
    true
}
