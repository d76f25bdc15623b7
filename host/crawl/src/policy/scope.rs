//! Task scope: the boundary of a task's infostructure (seed 000, section 5.1).

use super::patterns::UrlPatterns;
use spinneret_core::model::TaskKind;
use spinneret_core::urls;
use url::Url;

/// The infostructure boundary of one task.
#[derive(Clone, Debug)]
pub struct Scope {
    kind: TaskKind,
    name: String,
    top_site: String,
    top_scheme: String,
    top_dir: String,
    exclude: Vec<String>,
    patterns: UrlPatterns,
    top: String,
    /// The path of the local tree's root directory (`root_dir`), when one
    /// is given: its files may be checked too, as leaves.
    local_root: Option<String>,
}

impl Scope {
    /// The scope of the task `name` of `kind` from `top`, which leafs the
    /// URLs under the prefixes `exclude`.
    pub fn new(name: &str, kind: TaskKind, top: &Url, exclude: &[String]) -> Scope {
        Scope {
            kind,
            name: name.to_string(),
            top_site: urls::site_key(top),
            top_scheme: top.scheme().to_string(),
            top_dir: urls::directory_of(top).to_string(),
            exclude: exclude.to_vec(),
            patterns: UrlPatterns::default(),
            top: top.to_string(),
            local_root: None,
        }
    }

    /// The scope of a local task whose tree is deployed from the directory
    /// `root` (a `file:` URL ending in `/`): the files below `root` may be
    /// opened too (a link up out of the top's directory, or a root-relative
    /// one, names a file of the deployed site), as leaves unless the task's
    /// own tree holds them.
    pub fn with_local_root(mut self, root: Option<&Url>) -> Scope {
        self.local_root = root
            .filter(|r| r.scheme() == "file")
            .map(|r| r.path().to_string());
        self
    }

    /// The scope with URL patterns (`exclude_regex`, `include_regex`):
    /// the URLs they exclude get no request for this task.
    pub fn with_patterns(mut self, patterns: UrlPatterns) -> Scope {
        self.patterns = patterns;
        self
    }

    /// Why the task's URL patterns exclude `url`, if they do. The task's
    /// top is never excluded (further tops, which anyone may post to a
    /// library, are).
    pub fn excluded_by_pattern(&self, url: &str) -> Option<String> {
        if url == self.top {
            return None;
        }
        self.patterns.excludes(url)
    }

    /// Whether `url` may be a document of this infostructure, judged from the URL alone.
    ///
    /// `site`: same scheme, host and port as the top. `tree`: that, and a path at or
    /// below the top's directory. `owner`: any checkable URL, until its Owner is known.
    /// `web`: any http(s) URL (the task's depth bounds it). `library`: as
    /// `tree`, from the published library's root page.
    pub fn may_contain(&self, url: &Url) -> bool {
        match self.kind {
            TaskKind::Site => {
                url.scheme() == self.top_scheme && urls::site_key(url) == self.top_site
            }
            TaskKind::Tree | TaskKind::Library => {
                url.scheme() == self.top_scheme
                    && urls::site_key(url) == self.top_site
                    && url.path().starts_with(&self.top_dir)
            }
            TaskKind::Owner => urls::is_checkable(url),
            TaskKind::Web => matches!(url.scheme(), "http" | "https"),
        }
    }

    /// How the infostructure is bounded.
    pub fn kind(&self) -> TaskKind {
        self.kind
    }

    /// Whether the task's top is a `file:` URL: a local tree, the only kind
    /// of task that may open local files.
    pub fn is_local(&self) -> bool {
        self.top_scheme == "file"
    }

    /// Whether a root directory of the local tree was given.
    pub fn has_local_root(&self) -> bool {
        self.local_root.is_some()
    }

    /// Whether the `file:` URL `url` lies at or below the directory of a
    /// local task's top, or of its root directory when one is given: its
    /// path as the file system reads it (`%2F` decoded) has no `..` and
    /// starts with that directory.
    pub fn holds_local(&self, url: &Url) -> bool {
        let Ok(path) = url.to_file_path() else {
            return false;
        };
        let climbs = path
            .components()
            .any(|c| c == std::path::Component::ParentDir);
        let below = |dir: &str| url.path().starts_with(dir);
        self.is_local()
            && !climbs
            && (below(&self.top_dir) || self.local_root.as_deref().is_some_and(below))
    }

    /// The task-level exclusion (leaf) prefix that covers `url`, if any.
    pub fn excluded_by(&self, url: &str) -> Option<&str> {
        self.exclude
            .iter()
            .find(|p| url.starts_with(p.as_str()))
            .map(String::as_str)
    }

    /// Whether a fetched document with this Owner belongs to the infostructure
    /// (only `owner` tasks look at owners).
    pub fn owns(&self, owner: Option<&str>) -> bool {
        match self.kind {
            TaskKind::Owner => {
                owner.is_some_and(|o| o.trim().eq_ignore_ascii_case(self.name.trim()))
            }
            _ => true,
        }
    }

    /// Why a URL outside the scope is a leaf, for reports.
    pub fn outside_reason(&self) -> &'static str {
        match self.kind {
            TaskKind::Site => "outside the task's site",
            TaskKind::Tree => "outside the task's tree",
            TaskKind::Owner => "not owned by the task's owner",
            TaskKind::Web => "not on the web (the Worm follows http and https links)",
            TaskKind::Library => "a pointer of the library",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scope of a task of `kind` from `top` that excludes a private folder.
    fn scope(kind: TaskKind, top: &str) -> Scope {
        let exclude = ["http://a.example/docs/private/".to_string()];
        Scope::new("RTF", kind, &Url::parse(top).unwrap(), &exclude)
    }

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn site_scope_is_host_and_port() {
        let s = scope(TaskKind::Site, "http://a.example/docs/index.html");
        assert!(s.may_contain(&u("http://a.example/other/x.html")));
        assert!(!s.may_contain(&u("http://a.example:8080/docs/x.html")));
        assert!(!s.may_contain(&u("http://b.example/docs/x.html")));
        assert!(!s.may_contain(&u("https://a.example/docs/x.html")));
    }

    #[test]
    fn tree_scope_is_at_or_below_the_top_directory() {
        let s = scope(TaskKind::Tree, "http://a.example/docs/index.html");
        assert!(s.may_contain(&u("http://a.example/docs/")));
        assert!(s.may_contain(&u("http://a.example/docs/sub/x.html")));
        assert!(!s.may_contain(&u("http://a.example/other/x.html")));
        assert!(!s.may_contain(&u("http://a.example/docsx/y.html")));
    }

    #[test]
    fn owner_scope_checks_the_owner() {
        let s = scope(TaskKind::Owner, "http://a.example/~rtf/hotlist.html");
        assert!(s.may_contain(&u("http://b.example/anything.html")));
        assert!(!s.may_contain(&u("mailto:x@a.example")));
        assert!(s.owns(Some(" rtf ")));
        assert!(!s.owns(Some("ICS")));
        assert!(!s.owns(None));
        let site = scope(TaskKind::Site, "http://a.example/");
        assert!(site.owns(None));
    }

    #[test]
    fn a_local_tree_holds_no_path_that_climbs_out_of_it() {
        let s = scope(TaskKind::Site, "file:///home/u/site/index.html");
        assert!(s.holds_local(&u("file:///home/u/site/a/b.html")));
        assert!(!s.holds_local(&u("file:///home/u/other.html")));
        // `%2F` is a `/` to the file system.
        let sneaky = u("file:///home/u/site/..%2F..%2Fetc%2Fpasswd");
        assert!(sneaky.path().starts_with("/home/u/site/"));
        assert!(!s.holds_local(&sneaky));
        let remote = scope(TaskKind::Site, "http://a.example/");
        assert!(!remote.holds_local(&u("file:///home/u/site/a.html")));
    }

    #[test]
    fn a_root_directory_widens_a_local_tree_to_the_deployed_site() {
        let root = u("file:///home/u/site/");
        let s = scope(TaskKind::Tree, "file:///home/u/site/docs/index.html")
            .with_local_root(Some(&root));
        assert!(s.holds_local(&u("file:///home/u/site/docs/a.html")));
        assert!(s.holds_local(&u("file:///home/u/site/missing.html")));
        assert!(!s.holds_local(&u("file:///home/u/other.html")));
        assert!(!s.holds_local(&u("file:///home/u/site/..%2F..%2Fetc%2Fpasswd")));
        // The task's own tree is still the top's directory.
        assert!(!s.may_contain(&u("file:///home/u/site/missing.html")));
        let without = scope(TaskKind::Tree, "file:///home/u/site/docs/index.html");
        assert!(!without.holds_local(&u("file:///home/u/site/missing.html")));
    }

    #[test]
    fn exclusions_are_prefixes() {
        let s = scope(TaskKind::Site, "http://a.example/");
        assert!(
            s.excluded_by("http://a.example/docs/private/x.html")
                .is_some()
        );
        assert!(s.excluded_by("http://a.example/docs/x.html").is_none());
    }
}
