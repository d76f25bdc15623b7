//! What `spinneret check` settles before and after its run that a
//! configuration would have said: its tasks from what was typed (URLs,
//! paths, quoted globs, `-` and `--files-from` lists), a local tree's root
//! (the checked directory, unless `--root-dir` names another) and where
//! each task's reports go (beside the store, a directory per top, with no
//! report of an earlier run left there looking current).

use crate::config::{Config, FILE_REPORTERS, StoreSetting};
use spinneret_core::model::TaskKind;
use std::path::{Path, PathBuf};
use url::Url;

/// The tasks `check`'s inputs make, each as its tops (the first is the
/// task's top, the others are traversed as it is): a URL or a path is a
/// task of its own; the files a quoted glob matches (`'site/**/*.html'`)
/// are one task, and so are the local files of a list (`-` for standard
/// input, `--files-from FILE`: an input a line, `#` comments and blank
/// lines ignored), whose URLs are each a task. `stdin` reads standard
/// input, once.
pub(super) fn tasks_of_inputs(
    inputs: &[String],
    files_from: Option<&Path>,
    stdin: &mut dyn FnMut() -> std::io::Result<String>,
) -> Result<Vec<Vec<Url>>, String> {
    let mut tasks = Vec::new();
    let mut stdin_text = None;
    let mut read_stdin = |what: &str| -> Result<String, String> {
        if stdin_text.is_some() {
            return Err(format!(
                "{what} reads standard input, which another `-` already read; name it once"
            ));
        }
        let text = stdin().map_err(|e| format!("cannot read standard input: {e}"))?;
        stdin_text = Some(());
        Ok(text)
    };
    for raw in inputs {
        if raw == "-" {
            let text = read_stdin("`-`")?;
            tasks.extend(tasks_of_list(&text, "standard input")?);
        } else if is_glob(raw) {
            tasks.push(group(expand_glob(raw)?));
        } else {
            tasks.push(vec![super::check_top(raw)?]);
        }
    }
    if let Some(file) = files_from {
        let (text, name) = match file.as_os_str() == "-" {
            true => (read_stdin("--files-from -")?, "standard input".to_string()),
            false => (
                std::fs::read_to_string(file)
                    .map_err(|e| format!("cannot read --files-from {}: {e}", file.display()))?,
                file.display().to_string(),
            ),
        };
        tasks.extend(tasks_of_list(&text, &name)?);
    }
    if tasks.is_empty() {
        return Err(
            "nothing to check: the list given names no URL or path (one a line; # starts a comment)"
                .into(),
        );
    }
    // `check site/ ./site/` names one tree twice: one task.
    let mut named = std::collections::HashSet::new();
    tasks.retain(|t: &Vec<Url>| named.insert(t[0].clone()));
    Ok(tasks)
}

/// The tasks of a list of inputs read from `source`: each URL a task,
/// its local files (paths and the files of globs) one task.
fn tasks_of_list(text: &str, source: &str) -> Result<Vec<Vec<Url>>, String> {
    let mut tasks = Vec::new();
    let mut local: Vec<Url> = Vec::new();
    let mut local_at = None;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("{source}, line {}: {e}", n + 1);
        let found = match is_glob(line) {
            true => expand_glob(line).map_err(at)?,
            false => vec![super::check_top(line).map_err(at)?],
        };
        for url in found {
            if url.scheme() == "file" {
                local_at.get_or_insert(tasks.len());
                local.push(url);
            } else {
                tasks.push(vec![url]);
            }
        }
    }
    if let Some(at) = local_at {
        tasks.insert(at, group(local));
    }
    Ok(tasks)
}

/// Whether `raw` is a glob pattern for `check` to expand: no URL and no
/// existing file, with a wildcard (`*`, `?`, `[`).
fn is_glob(raw: &str) -> bool {
    Url::parse(raw).is_err() && raw.contains(['*', '?', '[']) && !Path::new(raw).exists()
}

/// The files `pattern` matches, in order, as `file:` tops (`*` and `?`
/// stay within a directory, `**` crosses them, hidden files need a
/// literal `.`); an error when it matches none.
fn expand_glob(pattern: &str) -> Result<Vec<Url>, String> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let paths = glob::glob_with(pattern, options)
        .map_err(|e| format!("`{pattern}` is not a glob pattern: {e}"))?;
    let mut files = Vec::new();
    for path in paths {
        let path = path.map_err(|e| format!("`{pattern}`: {e}"))?;
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "`{pattern}` matches no file (from {}); a glob names files, such as 'site/**/*.html'",
            std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string())
        ));
    }
    files
        .iter()
        .map(|p| super::check_top(&p.display().to_string()))
        .collect()
}

/// Local files as one task's tops: the file nearest the root (the
/// fewest directories, then the first) is the top.
fn group(mut files: Vec<Url>) -> Vec<Url> {
    let mut seen = std::collections::HashSet::new();
    files.retain(|u| seen.insert(u.clone()));
    if let Some(first) = (0..files.len()).min_by_key(|&i| files[i].path().matches('/').count()) {
        let top = files.remove(first);
        files.insert(0, top);
    }
    files
}

/// The configuration of `check`'s `tasks` ([`tasks_of_inputs`]): each a
/// `site` task, or a `tree` task with `--tree`.
pub(super) fn config_of(tasks: &[Vec<Url>], tree: bool) -> Config {
    let tops: Vec<Url> = tasks.iter().map(|t| t[0].clone()).collect();
    let mut config = Config::for_check(&tops, PathBuf::new());
    for (task, tops) in config.tasks.iter_mut().zip(tasks) {
        task.more_tops = tops[1..].to_vec();
        if tree {
            task.kind = TaskKind::Tree;
        }
    }
    config
}

/// The root `check` takes for its local trees when `--root-dir` names
/// none: the checked directory (the top's), or with several trees the one
/// directory that holds all the others. `None` when no top is a local
/// file or the configuration names a root; an error when the trees lie
/// side by side, with what to give instead.
pub(super) fn infer_root(config: &mut Config) -> Result<Option<PathBuf>, String> {
    if config.settings.root_dir.is_some() {
        return Ok(None);
    }
    // Each local task's directory: its top's, or the one holding all its
    // tops' (the files of a glob).
    let dirs: Vec<PathBuf> = config
        .tasks
        .iter()
        .filter_map(|t| {
            std::iter::once(&t.top)
                .chain(&t.more_tops)
                .filter(|u| u.scheme() == "file")
                .filter_map(|u| u.to_file_path().ok())
                .filter_map(|top| top.parent().map(Path::to_path_buf))
                .reduce(|a, b| common_ancestor(&a, &b))
        })
        .collect();
    let Some(root) = dirs.iter().min_by_key(|d| d.components().count()) else {
        return Ok(None);
    };
    if let Some(apart) = dirs.iter().find(|d| !d.starts_with(root)) {
        return Err(format!(
            "the local trees in {} and {} lie side by side: root-relative links (/page.html) need the one directory they are deployed from; give it with --root-dir DIR, or check each tree on its own",
            root.display(),
            apart.display()
        ));
    }
    let root = crate::config::root_dir(root)?;
    config.settings.root_dir = Some(root.clone());
    Ok(Some(root))
}

/// The deepest directory holding both `a` and `b`.
fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

/// The line that says which root a check took for its local trees.
pub(super) fn root_line(root: &Path) -> String {
    format!(
        "root-relative links (/page.html) read against {}/, the checked directory; --root-dir DIR to change\n",
        root.display()
    )
}

/// Where `check` writes its reports on `store`: beside a store file
/// (`spinneret.db.check-reports/`), for a PostgreSQL store a directory of
/// its own in the data directory (`check-reports/DATABASE/`). Each
/// store's checks keep their reports apart, so an index's prior version is
/// the same store's earlier run.
pub(super) fn reports_base(store: &StoreSetting) -> PathBuf {
    match store {
        StoreSetting::File(path) => {
            let path = spinneret_core::fs::absolute_normal(path);
            let mut name = path.file_name().unwrap_or_default().to_os_string();
            name.push(".check-reports");
            path.with_file_name(name)
        }
        StoreSetting::Postgres { url, .. } => {
            let name: String = url
                .trim_start_matches("postgresql://")
                .trim_start_matches("postgres://")
                .chars()
                .map(
                    |c| match c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                        true => c,
                        false => '_',
                    },
                )
                .collect();
            crate::config::default_store_path()
                .with_file_name("check-reports")
                .join(name)
        }
    }
}

/// Put each task's reports under `base` (its output is the directory's
/// name there, as [`Config::for_check`] made it under an empty path), and
/// remove from that directory the reports an earlier check wrote that
/// this run will not write again: a `junit.xml` of yesterday's `--format
/// junit` is not left beside today's index as if it were current. The
/// maintenance index stays (this run rewrites it, and links to the one
/// before as its prior version).
pub(super) fn place_reports(config: &mut Config, base: &Path) -> Result<(), String> {
    for task in &mut config.tasks {
        task.output = base.join(&task.output);
    }
    for task in &config.tasks {
        for (_, file) in FILE_REPORTERS
            .iter()
            .filter(|(b, _)| *b != "momspider-index")
        {
            let stale = task.output.join(file);
            match std::fs::remove_file(&stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(format!(
                        "cannot remove the earlier report {}: {e}; remove it, or give another --store",
                        stale.display()
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_go_beside_their_store() {
        assert_eq!(
            reports_base(&StoreSetting::File("/srv/x/check.db".into())),
            PathBuf::from("/srv/x/check.db.check-reports")
        );
        let pg = reports_base(&StoreSetting::Postgres {
            url: "postgres://spider@db.example:5432/links".into(),
            password: None,
        });
        assert!(
            pg.ends_with("check-reports/spider_db.example_5432_links"),
            "{}",
            pg.display()
        );
    }

    #[test]
    fn the_root_is_the_checked_directory_or_the_one_holding_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site");
        std::fs::create_dir_all(site.join("docs")).unwrap();
        std::fs::create_dir_all(dir.path().join("other")).unwrap();
        let top = |p: &Path| url::Url::from_file_path(p.join("index.html")).unwrap();
        let mut config = Config::for_check(&[top(&site.join("docs")), top(&site)], PathBuf::new());
        assert_eq!(infer_root(&mut config).unwrap(), Some(site.clone()));
        assert_eq!(config.settings.root_dir, Some(site.clone()));
        // A root given stays.
        assert_eq!(infer_root(&mut config).unwrap(), None);
        let mut apart = Config::for_check(
            &[top(&site), top(&dir.path().join("other"))],
            PathBuf::new(),
        );
        let e = infer_root(&mut apart).unwrap_err();
        assert!(e.contains("lie side by side"), "{e}");
        let mut remote = Config::for_check(
            &[url::Url::parse("http://a.example/").unwrap()],
            PathBuf::new(),
        );
        assert_eq!(infer_root(&mut remote).unwrap(), None);
    }
}
