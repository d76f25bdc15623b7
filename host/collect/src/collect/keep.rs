//! What a person keeps of a profile's collections: `collect --clean`
//! removes every run's files (the archive stays), `collect --archive URL…`
//! copies pages of the newest run into the archive, `collect
//! --purge-before DATE` removes what was archived before a day.

use crate::archive;
use crate::profile::Profile;
use crate::runs::{self, store_path};
use spinneret_store::Store;
use std::collections::HashMap;
use url::Url;

/// The mirror's store, locked against a run of the same mirror.
fn open(profile: &Profile) -> anyhow::Result<(Store, spinneret_store::CrawlLock)> {
    let path = store_path(&profile.mirror);
    if !path.exists() {
        anyhow::bail!(
            "{} holds no collection yet (run `spinneret collect {}` first)",
            profile.mirror.display(),
            profile.source.display()
        );
    }
    let lock = spinneret_store::CrawlLock::acquire(&path)
        .map_err(|e| anyhow::anyhow!("{e} (another `collect` of this mirror is running?)"))?;
    Ok((Store::open(&path)?, lock))
}

fn key(profile: &Profile) -> String {
    runs::profile_key(profile)
}

/// Remove the files of every run of `profile`, newest run first and each
/// run's files in reverse order of creation, with the directories left
/// empty and the mirror's index; the archive stays. (files, runs) removed.
pub fn clean(profile: &Profile) -> anyhow::Result<(usize, usize)> {
    let (store, _lock) = open(profile)?;
    let live = store.live_collections(&key(profile))?;
    let mut files = 0;
    for c in &live {
        files += runs::remove_collection(&store, &profile.mirror, c)?;
    }
    if std::fs::remove_file(profile.mirror.join("index.html")).is_ok() {
        files += 1;
    }
    runs::collect_garbage(&store, &profile.mirror)?;
    Ok((files, live.len()))
}

/// Today as the archive names its days.
pub fn today() -> String {
    jiff::Zoned::now().date().to_string()
}

/// Archive each of `urls` from the newest run of `profile` under `day`:
/// for each, the archived page's path or why it could not be.
pub fn archive(
    profile: &Profile,
    urls: &[Url],
    day: &str,
) -> anyhow::Result<Vec<(String, Result<String, String>)>> {
    let (store, _lock) = open(profile)?;
    let Some(run) = store.live_collections(&key(profile))?.into_iter().next() else {
        anyhow::bail!(
            "no run of {} has files to archive",
            profile.source.display()
        );
    };
    let files = store.collection_files(run.id)?;
    let by_path: HashMap<String, String> = files
        .iter()
        .filter_map(|f| Some((f.path.clone(), f.url.clone()?)))
        .collect();
    let now = spinneret_core::model::unix_now();
    let page_of = |url: &Url| {
        let u = spinneret_core::urls::identity(url);
        let page = files
            .iter()
            .find(|f| f.url.as_deref() == Some(u.as_str()) && f.path.ends_with(".html"));
        (u, page)
    };
    let together: std::collections::HashSet<String> = urls
        .iter()
        .filter_map(|u| page_of(u).1.map(|f| f.path.clone()))
        .collect();
    let mut out = Vec::new();
    for url in urls {
        let (u, page) = page_of(url);
        let done = match page {
            None => Err(format!("run {} saved no page of this URL", run.id)),
            Some(f) => archive::archive_page(
                &profile.mirror,
                &run.dir,
                &f.path,
                u.as_str(),
                &by_path,
                &together,
                day,
                now,
            )
            .and_then(|p| {
                store.archive_page(&p)?;
                Ok(p.path)
            })
            .map_err(|e| format!("{e:#}")),
        };
        out.push((u.to_string(), done));
    }
    archive::write_index(&store, &profile.mirror)?;
    Ok(out)
}

/// Remove the pages archived before `day`; how many.
pub fn purge_before(profile: &Profile, day: &str) -> anyhow::Result<usize> {
    let (store, _lock) = open(profile)?;
    let n = archive::purge_before(&store, &profile.mirror, day)?;
    archive::write_index(&store, &profile.mirror)?;
    Ok(n)
}
