//! What `spinneret check` settles before and after its run that a
//! configuration would have said: a local tree's root (the checked
//! directory, unless `--root-dir` names another) and where each task's
//! reports go (beside the store, a directory per top, with no report of an
//! earlier run left there looking current).

use crate::config::{Config, FILE_REPORTERS, StoreSetting};
use std::path::{Path, PathBuf};

/// The root `check` takes for its local trees when `--root-dir` names
/// none: the checked directory (the top's), or with several trees the one
/// directory that holds all the others. `None` when no top is a local
/// file or the configuration names a root; an error when the trees lie
/// side by side, with what to give instead.
pub(super) fn infer_root(config: &mut Config) -> Result<Option<PathBuf>, String> {
    if config.settings.root_dir.is_some() {
        return Ok(None);
    }
    let dirs: Vec<PathBuf> = config
        .tasks
        .iter()
        .filter(|t| t.top.scheme() == "file")
        .filter_map(|t| t.top.to_file_path().ok())
        .filter_map(|top| top.parent().map(Path::to_path_buf))
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
