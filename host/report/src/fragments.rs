//! Links to a place in a document that is not there, as findings: each
//! document of a task with a link `page.html#section` whose target has no
//! element with that `id` (or `<a name>`) gets a `broken-fragment` finding
//! for it. The page is there, so the URL itself is not broken; the link
//! lands at the top of the page instead of the place it promises. It is
//! an error, as a broken link is (it fails the run: exit status 1, a
//! JUnit failure), in every format: SARIF's `error`, GitHub's `::error`,
//! JSON's `"severity": "error"`.

use spinneret_plugin_host::bindings::host::types as wit;
use spinneret_store::BrokenFragment;

/// The kind of the finding for a link whose fragment names no place.
pub const BROKEN_FRAGMENT_KIND: &str = "broken-fragment";

/// The finding for `broken`: its URL is the link's target with its
/// fragment, its referrer the document with the link.
pub fn finding(broken: &BrokenFragment) -> wit::Finding {
    wit::Finding {
        kind: BROKEN_FRAGMENT_KIND.into(),
        url: format!("{}#{}", broken.target, broken.fragment),
        referrer: Some(broken.source.clone()),
        message: format!(
            "no element with id or name \"{}\" in {}",
            broken.fragment, broken.target
        ),
        severity: wit::Severity::Error,
        source: "spinneret".into(),
    }
}
