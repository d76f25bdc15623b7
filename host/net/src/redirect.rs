//! The one redirect rule: where the next hop of a chain goes, or why the
//! chain ends there. The crawl, the collector, the queries and the plugins'
//! `http` all follow redirects by it, so a chain ends the same way whoever
//! asked: at most the run's `max_redirects` hops ([`MAX_REDIRECTS`] by
//! default), no loop, no `file:` from the
//! web, no scheme the crawler does not fetch, no URL an avoid rule forbids.
//! Which addresses a hop may connect to is the address rule's, judged when
//! the hop's connection is made ([`crate::fetch::public_dns`]).

use spinneret_core::urls;
use url::Url;

/// Redirect hops followed before a URL is called broken, unless the run
/// says otherwise (`max_redirects`, `--max-redirects`).
pub const MAX_REDIRECTS: usize = 10;

/// What a `file:` URL reached from a remote page is: not checked.
pub const LOCAL_FROM_REMOTE: &str = "local file referenced from a remote page";

/// Why a redirect chain ends without another request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainEnd {
    /// It is broken: an invalid `Location`, a loop, too many hops.
    Broken(String),
    /// It leads somewhere the crawler does not go (a local file from a
    /// remote page, another scheme).
    NotChecked(String),
    /// It leads to a URL an avoid rule forbids.
    Avoided(String),
}

impl std::fmt::Display for ChainEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainEnd::Broken(r) | ChainEnd::NotChecked(r) | ChainEnd::Avoided(r) => f.write_str(r),
        }
    }
}

/// The next hop of a chain that started at `origin`, whose latest request
/// `from` answered with `location`; `hops` are the URLs requested so far,
/// `from` included; `avoided` says which avoid rule forbids a URL, if one
/// does; `max` is the most hops followed. `Err` says why the chain ends
/// here.
pub fn next_hop<'h>(
    max: usize,
    origin: &Url,
    from: &Url,
    location: &str,
    hops: impl IntoIterator<Item = &'h str> + Clone,
    avoided: &dyn Fn(&Url) -> Option<String>,
) -> Result<Url, ChainEnd> {
    let next = urls::resolve(from, location).map_err(|e| {
        ChainEnd::Broken(format!(
            "redirect to an invalid Location `{location}` ({e})"
        ))
    })?;
    if next == *origin || hops.clone().into_iter().any(|h| h == next.as_str()) {
        let chain: Vec<&str> = hops.into_iter().collect();
        return Err(ChainEnd::Broken(format!(
            "redirect loop: {} -> {next}",
            chain.join(" -> ")
        )));
    }
    // `hops` are the requests answered with a redirect, this one's too.
    if hops.into_iter().count() > max {
        return Err(ChainEnd::Broken(format!("more than {max} redirects")));
    }
    if from.scheme() != "file" && next.scheme() == "file" {
        return Err(ChainEnd::NotChecked(format!(
            "redirected to {next}: {LOCAL_FROM_REMOTE}"
        )));
    }
    if !urls::is_checkable(&next) {
        return Err(ChainEnd::NotChecked(format!(
            "redirected to {next}, which is not checked ({} scheme)",
            next.scheme()
        )));
    }
    if let Some(rule) = avoided(&next) {
        return Err(ChainEnd::Avoided(format!(
            "redirected to {next}, avoided by rule {rule}"
        )));
    }
    Ok(next)
}
