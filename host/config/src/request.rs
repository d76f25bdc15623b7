//! A `[[request]]` table: headers and HTTP basic authentication for the
//! requests under a URL prefix, read into the fetcher's
//! [`RequestRule`](spinneret_crawl::fetch::RequestRule), the password read
//! when the configuration is loaded (from where the table says: never the
//! configuration itself).

use super::password::{Password, password_source};
use serde::Deserialize;
use serde_spanned::Spanned;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use url::Url;

/// A `[[request]]` table: what goes with the requests under a prefix.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequest {
    prefix: Spanned<String>,
    #[serde(default)]
    headers: BTreeMap<String, Spanned<String>>,
    username: Option<String>,
    password: Option<Spanned<toml::Value>>,
    password_env: Option<Spanned<String>>,
    password_file: Option<Spanned<String>>,
}

/// Headers a `[[request]]` table may not set: they frame the request, or
/// spinneret sets them from other settings.
const HEADERS_NOT_SET: [&str; 7] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "user-agent",
    "from",
    "authorization",
];

/// Whether `name: value` may be sent as a header of the user's (a
/// `[[request]]` table's, `--header`); the error says why not.
pub(super) fn check_header(name: &str, value: &str) -> Result<(), String> {
    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!("`{name}` is not a header name"));
    }
    if HEADERS_NOT_SET.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "`{name}` is not set here: spinneret sets it (user_agent and from are settings; for Authorization give username and password_env or password_file in a [[request]] table)"
        ));
    }
    if http::HeaderValue::from_str(value).is_err() {
        return Err(format!("the value of `{name}` is not a valid header value"));
    }
    Ok(())
}

/// A `--header "Name: value"` argument, checked: its name and value.
pub fn header_argument(arg: &str) -> Result<(String, String), String> {
    let Some((name, value)) = arg.split_once(':') else {
        return Err(format!(
            "`{arg}` is not a header; write \"Name: value\", e.g. \"Accept-Language: en\""
        ));
    };
    let (name, value) = (name.trim(), value.trim());
    check_header(name, value)?;
    Ok((name.to_string(), value.to_string()))
}

/// A `--basic-auth 'URL USER:PASSWORD'` argument (lychee's form; its
/// URL is a prefix here, as a `[[request]]` table's): the rule that sends
/// the credentials with the requests under it, and only those.
pub fn basic_auth_argument(arg: &str) -> Result<spinneret_crawl::fetch::RequestRule, String> {
    let form =
        "write 'URL USER:PASSWORD', e.g. 'https://intranet.example.org/docs/ checker:secret'";
    let Some((prefix, credentials)) = arg.trim().split_once(char::is_whitespace) else {
        return Err(format!("`{arg}` is not a URL and credentials; {form}"));
    };
    let prefix = Url::parse(prefix)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| {
            format!(
                "`{prefix}` is not an http or https URL; the credentials go with the requests under a URL prefix (not a pattern): {form}"
            )
        })?;
    let Some((user, password)) = credentials.trim().split_once(':') else {
        return Err(format!(
            "`{}` is not USER:PASSWORD; {form}",
            credentials.trim()
        ));
    };
    if user.is_empty() {
        return Err(format!("the user name is empty; {form}"));
    }
    Ok(spinneret_crawl::fetch::RequestRule {
        prefix,
        headers: Vec::new(),
        basic_auth: Some((user.to_string(), password.to_string())),
    })
}

/// The rules that send `headers` (from `--header`) to the origins of
/// `tops` (http and https only): a header given on the command line goes
/// to the sites being checked, never to the other sites they link to.
pub fn header_rules<'a>(
    headers: &[(String, String)],
    tops: impl Iterator<Item = &'a Url>,
) -> Vec<spinneret_crawl::fetch::RequestRule> {
    let origins: std::collections::BTreeSet<String> = tops
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .map(|u| u.origin().ascii_serialization())
        .collect();
    origins
        .into_iter()
        .filter_map(|o| Url::parse(&format!("{o}/")).ok())
        .map(|prefix| spinneret_crawl::fetch::RequestRule {
            prefix,
            headers: headers.to_vec(),
            basic_auth: None,
        })
        .collect()
}

/// A `[[request]]` table, checked, with its password read now (from the
/// environment variable or the file it names: never the configuration).
pub(super) fn request_rule(
    raw: Spanned<RawRequest>,
    rel: &dyn Fn(&str) -> PathBuf,
) -> Result<spinneret_crawl::fetch::RequestRule, (Option<Range<usize>>, String)> {
    let span = raw.span();
    let r = raw.into_inner();
    let source = password_source(
        "a password",
        "",
        r.password.as_ref(),
        r.password_env.as_ref().map(|v| v.get_ref().as_str()),
        r.password_file.as_ref().map(|f| f.get_ref().as_str()),
        &span,
        rel,
    )?;
    let prefix = Url::parse(r.prefix.get_ref().trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| {
            (
                Some(r.prefix.span()),
                format!(
                    "`{}` is not an http or https URL; write where the headers go, e.g. \"https://intranet.example.org/\"",
                    r.prefix.get_ref()
                ),
            )
        })?;
    let mut headers = Vec::new();
    for (name, value) in &r.headers {
        check_header(name, value.get_ref()).map_err(|m| (Some(value.span()), m))?;
        headers.push((name.clone(), value.get_ref().clone()));
    }
    // Read now, so that a password that cannot be had stops the run
    // before its first request, at the line that names it.
    let password = match &source {
        Some(p) => Some(p.value().map_err(|e| match (p, e) {
            (Password::Env(var), _) => (
                r.password_env.as_ref().map(Spanned::span),
                format!("the password variable {var} (password_env) is not set"),
            ),
            (Password::File(path), e) => (
                r.password_file.as_ref().map(Spanned::span),
                format!(
                    "cannot read the password file {} (password_file): {}",
                    path.display(),
                    e.map_or_else(String::new, |e| e.to_string())
                ),
            ),
        })?),
        None => None,
    };
    let basic_auth = match (r.username, password) {
        (Some(user), Some(password)) => Some((user, password)),
        (None, None) => None,
        (Some(_), None) => {
            return Err((
                Some(span),
                "a username but no password: add password_env = \"VARIABLE\" or password_file = \"PATH\"".into(),
            ));
        }
        (None, Some(_)) => {
            return Err((
                Some(span),
                "a password is named but no username; add username = \"...\"".into(),
            ));
        }
    };
    Ok(spinneret_crawl::fetch::RequestRule {
        prefix,
        headers,
        basic_auth,
    })
}
