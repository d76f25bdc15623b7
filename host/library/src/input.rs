//! What a user types into the library's forms, checked: titles required
//! and bounded, only http(s) URLs, reports' HTML sanitised to a safe
//! subset, and the Pointers operation's pasted list read line by line.

use spinneret_store::PostingText;

/// The longest title, author or e-mail address kept.
pub const MAX_LINE: usize = 300;
/// The longest URL accepted.
pub const MAX_URL: usize = 2048;
/// The longest report text or statement of purpose.
pub const MAX_TEXT: usize = 64 * 1024;
/// The most pointers pasted at once.
pub const MAX_POINTERS: usize = 500;

/// A field that cannot be accepted, with what to do.
#[derive(Debug, PartialEq, Eq)]
pub struct Invalid(pub String);

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `c` is dropped from a typed line: a control character; a
/// direction override, embedding or isolate (U+202A–U+202E, U+2066–U+2069),
/// which reorders the text shown after it; or an invisible space (zero
/// width space, word joiner, byte order mark). The joiners and direction
/// marks that scripts need (ZWJ, ZWNJ, LRM, RLM) are kept.
fn dropped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200B}' | '\u{2060}' | '\u{FEFF}'
        )
}

/// Whether `c` shows as nothing on its own: white space, or a format
/// character such as a joiner or a direction mark.
fn invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{180E}' | '\u{200C}'
                ..='\u{200F}' | '\u{3164}' | '\u{FFA0}'
        )
}

/// `s` trimmed, with the characters [`dropped`] dropped; `None` when
/// nothing visible is left (a title of zero-width characters is no title).
fn line(s: &str) -> Option<String> {
    let s: String = s.chars().filter(|&c| !dropped(c)).collect();
    let s = s.trim();
    s.chars().any(|c| !invisible(c)).then(|| s.to_string())
}

/// A required one-line field, at most [`MAX_LINE`] characters.
pub fn title(what: &str, s: &str) -> Result<String, Invalid> {
    let t = line(s).ok_or_else(|| Invalid(format!("the {what} is required")))?;
    if t.chars().count() > MAX_LINE {
        return Err(Invalid(format!(
            "the {what} is longer than {MAX_LINE} characters"
        )));
    }
    Ok(t)
}

/// An optional one-line field.
pub fn optional_line(what: &str, s: &str) -> Result<Option<String>, Invalid> {
    match line(s) {
        None => Ok(None),
        Some(_) => title(what, s).map(Some),
    }
}

/// An optional http(s) URL, in its normal form.
pub fn optional_url(what: &str, s: &str) -> Result<Option<String>, Invalid> {
    let Some(s) = line(s) else {
        return Ok(None);
    };
    if s.len() > MAX_URL {
        return Err(Invalid(format!(
            "the {what} is longer than {MAX_URL} characters"
        )));
    }
    let u = url::Url::parse(&s).map_err(|e| {
        Invalid(format!(
            "the {what} `{s}` is not a URL ({e}); write it whole, as http://host/path"
        ))
    })?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(Invalid(format!(
            "the {what} `{s}` is not an http or https URL; only web addresses may be posted"
        )));
    }
    // Checked again as kept: percent-encoding makes a URL of letters
    // outside ASCII up to nine times as long as typed.
    if u.as_str().len() > MAX_URL {
        return Err(Invalid(format!(
            "the {what} is longer than {MAX_URL} characters once written as a URL"
        )));
    }
    Ok(Some(u.into()))
}

/// A required http(s) URL.
pub fn url(what: &str, s: &str) -> Result<String, Invalid> {
    optional_url(what, s)?.ok_or_else(|| Invalid(format!("the {what} is required")))
}

/// An optional e-mail address (one line with an `@`).
pub fn optional_email(s: &str) -> Result<Option<String>, Invalid> {
    let e = optional_line("e-mail address", s)?;
    match &e {
        Some(a) if !a.contains('@') || a.contains(char::is_whitespace) => Err(Invalid(format!(
            "`{a}` is not an e-mail address; write it as name@host"
        ))),
        _ => Ok(e),
    }
}

/// A report's text or a statement of purpose: HTML kept to a safe subset
/// (no scripts, styles, frames, forms or event attributes; links only to
/// http(s) and mailto, opened without a referrer).
pub fn html_text(what: &str, s: &str) -> Result<Option<String>, Invalid> {
    if s.len() > MAX_TEXT {
        return Err(Invalid(format!(
            "the {what} is longer than {} KiB",
            MAX_TEXT / 1024
        )));
    }
    let clean = sanitise(s);
    let clean = clean.trim();
    // Checked again as kept: escaping makes text of `<` and `&` up to five
    // times as long as typed.
    if clean.len() > MAX_TEXT {
        return Err(Invalid(format!(
            "the {what} is longer than {} KiB once its HTML is made safe",
            MAX_TEXT / 1024
        )));
    }
    Ok((!clean.is_empty()).then(|| clean.to_string()))
}

/// `html` sanitised to the subset the library shows.
pub fn sanitise(html: &str) -> String {
    ammonia::Builder::default()
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("noopener noreferrer nofollow"))
        .clean(html)
        .to_string()
}

/// The fields of the posting forms, as typed.
#[derive(Debug, Default)]
pub struct Fields {
    /// The title.
    pub title: String,
    /// A pointer's URL, a report's title link.
    pub url: String,
    /// A report's text, a VL's statement of purpose.
    pub body: String,
    /// An image's URL.
    pub image: String,
    /// The Create-Only box ticked.
    pub create_only: bool,
    /// The author's name.
    pub author: String,
    /// The author's e-mail address.
    pub email: String,
}

impl From<&PostingText> for Fields {
    /// A posting's fields, for its edit form.
    fn from(t: &PostingText) -> Fields {
        Fields {
            title: t.title.clone(),
            url: t.url.clone().unwrap_or_default(),
            body: t.body.clone().unwrap_or_default(),
            image: t.image.clone().unwrap_or_default(),
            create_only: t.create_only,
            author: t.author.clone().unwrap_or_default(),
            email: t.email.clone().unwrap_or_default(),
        }
    }
}

impl Fields {
    /// The posting these fields describe, for a posting of `kind`.
    pub fn text(&self, kind: spinneret_store::PostingKind) -> Result<PostingText, Invalid> {
        use spinneret_store::PostingKind as K;
        Ok(PostingText {
            title: title("title", &self.title)?,
            url: match kind {
                K::Pointer => Some(url("URL", &self.url)?),
                K::Report => optional_url("URL", &self.url)?,
                K::Vl => None,
            },
            body: match kind {
                K::Pointer => None,
                K::Report => html_text("report", &self.body)?,
                K::Vl => html_text("statement of purpose", &self.body)?,
            },
            image: match kind {
                K::Pointer => None,
                _ => optional_url("image", &self.image)?,
            },
            create_only: kind == K::Vl && self.create_only,
            author: optional_line("author", &self.author)?,
            email: optional_email(&self.email)?,
        })
    }
}

/// The Pointers operation: one pointer per line, either an HTML anchor
/// (`<a href="URL">title</a>`, with anything around it) or `URL title`.
/// Blank lines are skipped; every other line must read as one or the
/// whole list is refused, naming the line.
pub fn pointers(text: &str) -> Result<Vec<(String, String)>, Invalid> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        let (u, t) = anchor(l).unwrap_or_else(|| match l.split_once(char::is_whitespace) {
            Some((u, t)) => (u.to_string(), t.to_string()),
            None => (l.to_string(), String::new()),
        });
        let u = url("URL", &u).map_err(|e| Invalid(format!("line {n}: {e}")))?;
        let t = title("title", &t).map_err(|e| {
            Invalid(format!(
                "line {n}: {e}; write `URL title` or `<a href=\"URL\">title</a>`"
            ))
        })?;
        out.push((u, t));
        if out.len() > MAX_POINTERS {
            return Err(Invalid(format!(
                "more than {MAX_POINTERS} pointers at once; post them in parts"
            )));
        }
    }
    if out.is_empty() {
        return Err(Invalid("the list has no pointers".into()));
    }
    Ok(out)
}

/// The URL and text of the first `<a href=…>…</a>` on a line.
fn anchor(l: &str) -> Option<(String, String)> {
    let lower = l.to_ascii_lowercase();
    let start = lower.find("<a ")?;
    let href = start + lower[start..].find("href")?;
    let rest = l[href + 4..].trim_start().strip_prefix('=')?.trim_start();
    let (u, after) = match rest.chars().next()? {
        q @ ('"' | '\'') => {
            let end = rest[1..].find(q)?;
            (&rest[1..1 + end], &rest[end + 2..])
        }
        _ => {
            let end = rest.find(|c: char| c.is_whitespace() || c == '>')?;
            (&rest[..end], &rest[end..])
        }
    };
    let open_end = after.find('>')?;
    let inner = &after[open_end + 1..];
    let close = inner.to_ascii_lowercase().find("</a")?;
    let text = strip_tags(&inner[..close]);
    Some((decode_entities(u), decode_entities(&text)))
}

fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The few entities a pasted anchor line carries.
fn decode_entities(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_pointers_read_as_anchors_or_url_title_lines() {
        let list = "<li><A HREF=\"http://a.example/x?a=1&amp;b=2\">The <b>A</b> page</a> (new)\n\
                    \n\
                    http://b.example/  The B page\n\
                    <a href='https://c.example/'>C</a>\n";
        assert_eq!(
            pointers(list).unwrap(),
            vec![
                ("http://a.example/x?a=1&b=2".into(), "The A page".into()),
                ("http://b.example/".into(), "The B page".into()),
                ("https://c.example/".into(), "C".into()),
            ]
        );
        assert_eq!(
            pointers("http://a.example/ A\njavascript:alert(1) x").unwrap_err(),
            Invalid(
                "line 2: the URL `javascript:alert(1)` is not an http or https URL; only web addresses may be posted"
                    .into()
            )
        );
        assert!(
            pointers("http://a.example/")
                .unwrap_err()
                .0
                .starts_with("line 1: the title is required")
        );
        assert!(pointers("\n \n").is_err());
    }

    #[test]
    fn reports_keep_a_safe_subset_of_html() {
        let dirty = "<p onclick=\"x()\">Hi <script>alert(1)</script><a href=\"javascript:x\">j</a> \
                     <a href=\"http://ok.example/\">ok</a><img src=x onerror=alert(1)><iframe src=//e></iframe></p>";
        let clean = sanitise(dirty);
        assert!(
            !clean.contains("script") && !clean.contains("onclick") && !clean.contains("onerror")
        );
        assert!(
            !clean.contains("javascript") && !clean.contains("iframe"),
            "{clean}"
        );
        assert!(
            clean.contains(
                "<a href=\"http://ok.example/\" rel=\"noopener noreferrer nofollow\">ok</a>"
            ),
            "{clean}"
        );
    }

    #[test]
    fn only_web_urls_are_accepted() {
        assert_eq!(
            url("URL", " http://A.example ").unwrap(),
            "http://a.example/"
        );
        for bad in [
            "file:///etc/passwd",
            "ftp://x.example/",
            "data:text/html,x",
            "http://",
            "x",
        ] {
            assert!(url("URL", bad).is_err(), "{bad}");
        }
        assert!(optional_email("a@b.example").is_ok());
        assert!(optional_email("a b@c").is_err());
        assert_eq!(title("title", " \u{7}T\u{0} ").unwrap(), "T");
    }

    /// Invisible titles and text that reorders what follows it are not
    /// kept; a script's joiners are (before, a title of zero-width spaces
    /// was accepted, and a direction override was kept).
    #[test]
    fn invisible_and_reordering_characters_are_no_title() {
        for blank in [
            "\u{200B}\u{200B}",
            " \u{FEFF} ",
            "\u{200D}\u{200E}",
            "\u{3164}",
            "\u{2066}",
        ] {
            assert_eq!(
                title("title", blank),
                Err(Invalid("the title is required".into())),
                "{blank:?}"
            );
        }
        assert_eq!(title("title", "abc\u{202E}fdp.exe").unwrap(), "abcfdp.exe");
        assert_eq!(title("title", "a\u{200B}b").unwrap(), "ab");
        // Persian with a zero-width non-joiner; an emoji family with joiners.
        for kept in [
            "\u{645}\u{6CC}\u{200C}\u{62E}\u{648}\u{627}\u{647}\u{645}",
            "\u{1F468}\u{200D}\u{1F469}",
        ] {
            assert_eq!(title("title", kept).unwrap(), kept);
        }
    }

    /// Lengths are checked on what is kept, not only on what was typed.
    #[test]
    fn lengths_are_checked_as_kept() {
        let wide = format!("http://a.example/{}", "\u{E9}".repeat(1000));
        assert!(wide.chars().count() < MAX_URL);
        assert_eq!(
            url("URL", &wide),
            Err(Invalid(
                "the URL is longer than 2048 characters once written as a URL".into()
            ))
        );
        let angles = "<".repeat(MAX_TEXT / 2);
        assert_eq!(
            html_text("report", &angles),
            Err(Invalid(
                "the report is longer than 64 KiB once its HTML is made safe".into()
            ))
        );
    }
}
