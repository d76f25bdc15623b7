//! The policy stage: for each reference a task reaches, decide whether to
//! traverse it (GET and parse), leaf it (HEAD only), avoid it (no request), or
//! record it unchecked. The order is the issue's: task scope, robots.txt,
//! avoid/leaf rules. robots.txt needs the site's file, so it is applied when a
//! request is about to leave (see the crawl engine); everything else here.

mod avoid_groups;
pub mod patterns;
pub use spinneret_net::robots;
pub mod robots_files;
pub mod rules;
pub mod scope;

use rules::{PrefixRules, RuleAction};
use scope::Scope;
use spinneret_core::document::RefKind;
use std::path::PathBuf;
use url::Url;

/// The MOMspider files the avoid and leaf rules come from, and where the
/// run records what it learnt of robots.txt (seed 000, Appendices C and D).
#[derive(Clone, Debug, Default)]
pub struct RuleFiles {
    /// Avoid/leaf files that are only read (the system's).
    pub avoid_files: Vec<PathBuf>,
    /// The user's avoid file: read, and rewritten after each run with the
    /// restrictions of the robots.txt files read.
    pub avoid_file: Option<PathBuf>,
    /// Sites files that are only read (the system's).
    pub system_sites: Vec<PathBuf>,
    /// The user's sites file: the sites whose robots.txt has been read and
    /// until when it holds; read, and rewritten after each run.
    pub sites_file: Option<PathBuf>,
}

/// The avoid and leaf rules in force at `now`: the system avoid files
/// (`avoid_files`), then the user's avoid file as its pairing with the sites
/// file leaves it (see [`robots_files`]), which is returned for the run to
/// record its robots.txt readings in.
pub fn load_rules(
    files: &RuleFiles,
    now: std::time::SystemTime,
) -> Result<(PrefixRules, robots_files::RobotsFiles), rules::RulesError> {
    let mut all = Vec::new();
    for f in &files.avoid_files {
        // A system avoid file is the operator's; the configuration said it exists.
        match rules::read_text(f, "avoid file (avoid_files, SystemAvoid)")? {
            Some(text) => all.extend(rules::parse_rules(&text, f)?),
            None => {
                return Err(rules::RulesError::at(
                    f,
                    0,
                    "the avoid file (avoid_files, SystemAvoid) does not exist".into(),
                ));
            }
        }
    }
    let robots = robots_files::RobotsFiles::load(files, now)?;
    all.extend(robots.rules().iter().cloned());
    Ok((PrefixRules::new(all, now), robots))
}

/// What a task does with a reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// A document candidate: GET it and, if it is HTML inside the infostructure, parse it.
    Traverse,
    /// Test it with HEAD only.
    Leaf(String),
    /// Make no request.
    Avoid(String),
    /// Make no request for this task (one of its URL patterns excludes
    /// it); another task may still have it requested.
    Excluded(String),
    /// Record it; the crawler cannot or must not request it.
    NotChecked(String),
}

impl Decision {
    /// The stable name of the decision, as stored.
    pub fn role(&self) -> &'static str {
        match self {
            Decision::Traverse => "document",
            Decision::Leaf(_) => "leaf",
            Decision::Avoid(_) | Decision::Excluded(_) => "avoided",
            Decision::NotChecked(_) => "not_checked",
        }
    }

    /// The reason given, if any.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Decision::Traverse => None,
            Decision::Leaf(r)
            | Decision::Avoid(r)
            | Decision::Excluded(r)
            | Decision::NotChecked(r) => Some(r),
        }
    }
}

/// Why a `file:` URL outside a local task's tree (and root directory) is
/// not opened.
pub const LOCAL_OUTSIDE_TREE: &str = "local file outside the task's tree (file: URLs are opened only at or below the top's directory; for root-relative links such as /page.html, give the tree's root with --root-dir or root_dir)";

/// Why a `file:` URL outside the root directory a local tree is deployed
/// from (`root_dir`) is not opened.
pub const LOCAL_OUTSIDE_ROOT: &str = "local file outside the root directory (file: URLs are opened only at or below root_dir, --root-dir)";

/// Why a `file:` URL reached from an http(s) document is never opened.
pub use spinneret_net::redirect::LOCAL_FROM_REMOTE;

/// Decide for a reference to `url` of `kind` found in `referrer` (none for a
/// task's top) by the task with `scope`, before robots.txt (which the engine
/// applies at request time).
///
/// A `file:` URL is opened only for a task whose top is itself a `file:` URL,
/// only inside that task's tree, and never when a remote page refers to it:
/// a page on the web must not make the crawler read the local machine.
pub fn decide(
    scope: &Scope,
    rules: &PrefixRules,
    url: &Url,
    kind: RefKind,
    referrer: Option<&Url>,
) -> Decision {
    if !spinneret_core::urls::is_checkable(url) {
        return Decision::NotChecked(format!("{} references are not checked", url.scheme()));
    }
    if url.scheme() == "file" {
        if referrer.is_some_and(|r| r.scheme() != "file") || !scope.is_local() {
            return Decision::NotChecked(LOCAL_FROM_REMOTE.into());
        }
        if !scope.holds_local(url) {
            return Decision::NotChecked(
                match scope.has_local_root() {
                    true => LOCAL_OUTSIDE_ROOT,
                    false => LOCAL_OUTSIDE_TREE,
                }
                .into(),
            );
        }
    }
    if kind == RefKind::Form {
        return Decision::NotChecked("form actions are not requested".into());
    }
    // The task's top is requested whatever the patterns say.
    if let Some(why) = scope.excluded_by_pattern(url.as_str()) {
        return Decision::Excluded(why);
    }
    let global = rules.lookup(url.as_str());
    if let Some(rule) = global
        && rule.action == RuleAction::Avoid
    {
        return Decision::Avoid(format!("avoid rule {} ({})", rule.prefix, rule.origin));
    }
    if !scope.may_contain(url) {
        return Decision::Leaf(scope.outside_reason().into());
    }
    if let Some(prefix) = scope.excluded_by(url.as_str()) {
        return Decision::Leaf(format!("excluded by the task ({prefix})"));
    }
    if let Some(rule) = global {
        return Decision::Leaf(format!("leaf rule {} ({})", rule.prefix, rule.origin));
    }
    if !kind.is_navigational() {
        return Decision::Leaf(format!("inline resource ({})", kind.as_str()));
    }
    Decision::Traverse
}
