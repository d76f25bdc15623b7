//! Where HTML holds URLs: the one table of the elements' attributes whose
//! values are URLs, and what each is to its page. The crawl's parse checks
//! every reference the table names (`spinneret-crawl`'s `parse/html.rs`);
//! the collector's mirror fetches the requisites among them and rewrites
//! them all (`spinneret-collect`'s `convert.rs`). A new row is read by
//! both.
//!
//! Beyond the table, both also read `srcset` (of `<img>` and `<source>`),
//! a refresh `<meta>`'s URL and `<base href>`; the mirror alone rewrites
//! CSS (`style`, `<style>`) and the other attributes that may hold a URL,
//! so that none keeps a `file:` reference.

use crate::document::RefKind;

/// An element's attribute that holds a URL: the element, the attribute
/// (lower case, as HTML reads names) and what the URL is to the page. A
/// `<link>`'s kind is decided by its `rel` ([`link_kind`]).
pub const URL_ATTRIBUTES: [(&str, &str, RefKind); 29] = [
    ("a", "href", RefKind::Anchor),
    ("area", "href", RefKind::Area),
    ("link", "href", RefKind::Link),
    ("form", "action", RefKind::Form),
    ("button", "formaction", RefKind::Form),
    ("input", "formaction", RefKind::Form),
    ("blockquote", "cite", RefKind::Link),
    ("q", "cite", RefKind::Link),
    ("ins", "cite", RefKind::Link),
    ("del", "cite", RefKind::Link),
    // SVG's `<image>` and `<use>`, in both spellings.
    ("image", "href", RefKind::Image),
    ("use", "href", RefKind::Image),
    ("image", "xlink:href", RefKind::Image),
    ("use", "xlink:href", RefKind::Image),
    ("img", "src", RefKind::Image),
    ("source", "src", RefKind::Embed),
    ("script", "src", RefKind::Script),
    ("iframe", "src", RefKind::Iframe),
    ("frame", "src", RefKind::Frame),
    ("embed", "src", RefKind::Embed),
    ("video", "src", RefKind::Embed),
    ("video", "poster", RefKind::Image),
    ("audio", "src", RefKind::Embed),
    ("track", "src", RefKind::Embed),
    // `<input type=image src>`.
    ("input", "src", RefKind::Image),
    ("object", "data", RefKind::Object),
    ("body", "background", RefKind::Image),
    ("table", "background", RefKind::Image),
    ("td", "background", RefKind::Image),
];

/// Whether the value of `attribute` is to be read as a URL: always, but
/// for `cite`, where authors write a source's name as often as its
/// address (`cite="Albert Einstein"` is no link to `Albert%20Einstein`):
/// there only an absolute URL or a path (`/`, `./`, `../`).
pub fn holds_a_url(attribute: &str, value: &str) -> bool {
    if attribute != "cite" {
        return true;
    }
    let v = value.trim();
    v.starts_with('/')
        || v.starts_with("./")
        || v.starts_with("../")
        || url::Url::parse(v).is_ok_and(|u| u.has_host() || u.scheme() == "file")
}

/// The rows of [`URL_ATTRIBUTES`] for the element `tag` (lower case).
pub fn of_element(tag: &str) -> impl Iterator<Item = (&'static str, RefKind)> + '_ {
    URL_ATTRIBUTES
        .iter()
        .filter(move |(t, _, _)| *t == tag)
        .map(|(_, a, k)| (*a, *k))
}

/// The kind of a `<link href>` whose `rel` is `rel` (its tokens, any case):
/// a stylesheet, an icon, an alternate version, or another link.
pub fn link_kind(rel: &str) -> RefKind {
    let rel = rel.to_ascii_lowercase();
    let rels: Vec<&str> = rel.split_whitespace().collect();
    if rels.contains(&"stylesheet") {
        RefKind::Stylesheet
    } else if rels
        .iter()
        .any(|r| *r == "icon" || *r == "apple-touch-icon")
    {
        RefKind::Icon
    } else if rels.contains(&"alternate") {
        RefKind::Alternate
    } else {
        RefKind::Link
    }
}

/// Whether the page needs what a reference of `kind` points at to be
/// shown (an image, a stylesheet, a script, a frame, an icon, an embedded
/// object): a mirror fetches it with the page.
pub fn is_requisite(kind: RefKind) -> bool {
    matches!(
        kind,
        RefKind::Image
            | RefKind::Frame
            | RefKind::Iframe
            | RefKind::Stylesheet
            | RefKind::Icon
            | RefKind::Script
            | RefKind::Object
            | RefKind::Embed
    )
}

/// Whether a `<link>` with this `rel` loads what the page needs: a
/// stylesheet or an icon ([`link_kind`]), or a resource the page preloads
/// or its manifest.
pub fn link_is_requisite(rel: &str) -> bool {
    is_requisite(link_kind(rel))
        || rel.split_whitespace().any(|r| {
            ["preload", "modulepreload", "manifest"]
                .iter()
                .any(|x| r.eq_ignore_ascii_case(x))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_links_rel_decides_its_kind_and_whether_a_mirror_fetches_it() {
        assert_eq!(link_kind("Stylesheet"), RefKind::Stylesheet);
        assert_eq!(link_kind("alternate stylesheet"), RefKind::Stylesheet);
        assert_eq!(link_kind("shortcut icon"), RefKind::Icon);
        assert_eq!(link_kind("alternate"), RefKind::Alternate);
        assert_eq!(link_kind("canonical"), RefKind::Link);
        assert!(link_is_requisite("icon"));
        assert!(link_is_requisite("modulepreload"));
        assert!(link_is_requisite("MANIFEST"));
        assert!(!link_is_requisite("canonical"));
        assert!(!link_is_requisite("alternate"));
    }

    #[test]
    fn every_row_is_lower_case_and_once() {
        let mut seen = std::collections::HashSet::new();
        for (t, a, _) in URL_ATTRIBUTES {
            assert_eq!((t, a), (&*t.to_ascii_lowercase(), &*a.to_ascii_lowercase()));
            assert!(seen.insert((t, a)), "{t} {a} twice");
        }
        assert_eq!(
            of_element("video").collect::<Vec<_>>(),
            [("src", RefKind::Embed), ("poster", RefKind::Image)]
        );
    }

    #[test]
    fn a_cite_is_a_url_only_when_written_as_one() {
        for url in [
            "https://a.example/src",
            "/src.html",
            "./src.html",
            "../src.html",
        ] {
            assert!(holds_a_url("cite", url), "{url}");
        }
        for name in [
            "Albert Einstein",
            "Einstein",
            "ISBN 0-14-044926-5",
            "urn:isbn:0140449265",
        ] {
            assert!(!holds_a_url("cite", name), "{name}");
        }
        assert!(holds_a_url("href", "Einstein"));
    }
}
