//! Bad HTML as findings (seed 001, section 3.2): each document of a task
//! whose parse found syntax faults gets one `bad-html` finding naming them,
//! so the maintenance index lists the bad documents with the rest.

use spinneret_crawl::parse::bad_html::describe;
use spinneret_plugin_host::bindings::host::types as wit;

/// The kind of the finding that lists a document's syntax faults.
pub const BAD_HTML_KIND: &str = "bad-html";

/// The finding for the document `url` with `faults` (kind, count).
pub fn finding(url: &str, faults: &[(String, u32)]) -> wit::Finding {
    let message = faults
        .iter()
        .map(|(kind, n)| format!("{kind} ×{n} ({})", describe(kind)))
        .collect::<Vec<_>>()
        .join("; ");
    wit::Finding {
        kind: BAD_HTML_KIND.into(),
        url: url.to_string(),
        referrer: None,
        message,
        severity: wit::Severity::Info,
        source: "spinneret".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_each_fault_with_its_count() {
        let f = finding(
            "http://a.example/x.html",
            &[("missing-quote".into(), 2), ("no-title".into(), 1)],
        );
        assert_eq!(
            f.message,
            "missing-quote ×2 (an attribute value's quote is missing or misplaced); no-title ×1 (the document has no title)"
        );
        assert_eq!(f.kind, "bad-html");
    }
}
