//! `soft-404`: a fetch hook that reclassifies a "soft 404" — a page that
//! answers 200 but whose title or first heading says it was not found — as
//! broken. Only documents read with GET are looked at (an HTML body up to
//! 64 KiB); leaves tested with HEAD have no body.
//!
//! Configuration: `phrases` (a list of texts, matched case-insensitively in
//! the `<title>` and the first `<h1>`; default: "page not found",
//! "404 not found", "not found", "no longer exists", "does not exist").

use serde_json::Value;
use spinneret_sdk::fetch_hook::*;

/// The phrases that betray a soft 404.
pub const DEFAULT_PHRASES: [&str; 5] = [
    "page not found",
    "404 not found",
    "not found",
    "no longer exists",
    "does not exist",
];

/// The hook's settings.
pub struct Soft404 {
    phrases: Vec<String>,
}

/// Where `<tag` (ASCII case-insensitive, followed by `>`, `/` or white
/// space) first opens in `html`, from `from`.
fn find_open(html: &[u8], tag: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(lt) = html.get(i..)?.iter().position(|&b| b == b'<') {
        let at = i + lt;
        let name = html.get(at + 1..at + 1 + tag.len());
        let next = html.get(at + 1 + tag.len()).copied();
        if name.is_some_and(|n| n.eq_ignore_ascii_case(tag))
            && matches!(
                next,
                Some(b'>' | b'/') | Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
            )
        {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// The text of the first `<tag>…</tag>` in `html` (ASCII case-insensitive),
/// tags inside it removed and whitespace collapsed. The scan stops at the
/// element: a page's title and first heading come early, so the rest of the
/// body is never read.
fn element_text(html: &[u8], tag: &str) -> Option<String> {
    let tag = tag.as_bytes();
    let open = find_open(html, tag, 0)?;
    let start = open + html[open..].iter().position(|&b| b == b'>')? + 1;
    let mut close = start;
    let end = loop {
        let lt = close + html[close..].iter().position(|&b| b == b'<')?;
        let is_close = html.get(lt + 1) == Some(&b'/')
            && html
                .get(lt + 2..lt + 2 + tag.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(tag));
        if is_close {
            break lt;
        }
        close = lt + 1;
    };
    let mut text = String::new();
    let mut in_tag = false;
    for c in String::from_utf8_lossy(&html[start..end]).chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    Some(spinneret_sdk::html::collapse(&text))
}

impl Soft404 {
    /// The phrase a page's title or first heading betrays itself with.
    pub fn betrayed_by(&self, html: &[u8]) -> Option<(&'static str, String, &str)> {
        for (what, tag) in [("title", "title"), ("heading", "h1")] {
            if let Some(text) = element_text(html, tag) {
                let lower = text.to_lowercase();
                if let Some(p) = self.phrases.iter().find(|p| lower.contains(p.as_str())) {
                    return Some((what, text, p.as_str()));
                }
            }
        }
        None
    }
}

impl FetchHook for Soft404 {
    fn configure(config: Value) -> Result<Self, String> {
        spinneret_sdk::settings::check_keys("soft-404", &config, &["phrases"])?;
        let phrases = match config.get("phrases") {
            None => DEFAULT_PHRASES.iter().map(|s| s.to_string()).collect(),
            Some(Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|v| match v.as_str() {
                    Some(s) if !s.trim().is_empty() => Ok(s.trim().to_lowercase()),
                    _ => Err(format!(
                        "soft-404: `phrases` must list non-empty strings, not {v}"
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(format!(
                    "soft-404: `phrases` must be a non-empty list, not {other}"
                ));
            }
        };
        Ok(Soft404 { phrases })
    }

    fn interests(&self) -> Interests {
        Interests::RESPONSES
    }

    fn after_response(
        &mut self,
        _request: &Request,
        response: &Response,
    ) -> Option<Reclassification> {
        if response.status != 200 || response.body_prefix.is_empty() {
            return None;
        }
        let html_type = response
            .content_type
            .as_deref()
            .map(|ct| ct.to_ascii_lowercase().contains("html"))
            .unwrap_or(true);
        if !html_type {
            return None;
        }
        let (what, text, phrase) = self.betrayed_by(&response.body_prefix)?;
        Some(Reclassification {
            category: Category::Broken,
            reason: format!(
                "soft 404: answered 200 but its {what} says \"{text}\" (matches \"{phrase}\")"
            ),
        })
    }
}

spinneret_sdk::export_fetch_hook!(Soft404);

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            url: "http://a.example/x".into(),
            method: "GET".into(),
            referrer: None,
        }
    }

    fn response(status: u16, ct: &str, body: &str) -> Response {
        Response {
            status,
            content_type: Some(ct.into()),
            body_prefix: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_page_that_says_not_found_is_broken() {
        let mut h = Soft404::configure(serde_json::json!({})).unwrap();
        let r = h
            .after_response(
                &request(),
                &response(
                    200,
                    "text/html",
                    "<html><head><TITLE>Oops - Page  Not Found</TITLE></head></html>",
                ),
            )
            .unwrap();
        assert_eq!(r.category, Category::Broken);
        assert_eq!(
            r.reason,
            "soft 404: answered 200 but its title says \"Oops - Page Not Found\" (matches \"page not found\")"
        );
        let r = h
            .after_response(
                &request(),
                &response(
                    200,
                    "text/html",
                    "<title>Shop</title><h1 class=x>This item <em>no longer exists</em></h1>",
                ),
            )
            .unwrap();
        assert_eq!(
            r.reason,
            "soft 404: answered 200 but its heading says \"This item no longer exists\" (matches \"no longer exists\")"
        );
    }

    #[test]
    fn real_pages_and_other_responses_are_left_alone() {
        let mut h = Soft404::configure(serde_json::json!({})).unwrap();
        for (status, ct, body) in [
            (
                200,
                "text/html",
                "<title>Welcome</title><p>not found anywhere else</p>",
            ),
            (404, "text/html", "<title>Not Found</title>"),
            (200, "application/pdf", "<title>not found</title>"),
            (200, "text/html", ""),
        ] {
            assert!(
                h.after_response(&request(), &response(status, ct, body))
                    .is_none(),
                "{status} {ct} {body}"
            );
        }
        assert!(matches!(h.before_request(&request()), RequestVerdict::Proceed(v) if v.is_empty()));
        assert_eq!(h.interests(), Interests::RESPONSES);
    }

    #[test]
    fn only_the_whole_tag_name_counts_and_the_scan_needs_a_closing_tag() {
        let h = Soft404::configure(serde_json::json!({})).unwrap();
        let html = "<h1x>not found</h1x><H1 id=t>Page NOT found</h1 ><p>x</p>";
        let (what, text, phrase) = h.betrayed_by(html.as_bytes()).unwrap();
        assert_eq!(
            (what, text.as_str(), phrase),
            ("heading", "Page NOT found", "page not found")
        );
        assert!(h.betrayed_by(b"<title>Not found").is_none());
        assert!(h.betrayed_by(b"<title").is_none());
        assert!(
            h.betrayed_by("<title>Caf\u{e9} \u{2014} not found</title>".as_bytes())
                .is_some()
        );
    }

    #[test]
    fn phrases_can_be_configured() {
        let mut h =
            Soft404::configure(serde_json::json!({"phrases": ["Seite nicht gefunden"]})).unwrap();
        assert!(
            h.after_response(
                &request(),
                &response(200, "text/html", "<title>Seite nicht gefunden</title>")
            )
            .is_some()
        );
        assert!(
            h.after_response(
                &request(),
                &response(200, "text/html", "<title>Page not found</title>")
            )
            .is_none()
        );
        assert!(Soft404::configure(serde_json::json!({"phrases": []})).is_err());
        assert!(Soft404::configure(serde_json::json!({"phrase": ["x"]})).is_err());
    }
}
