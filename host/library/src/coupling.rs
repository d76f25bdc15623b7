//! What a run takes from the library, as the seed couples GENVL to the
//! spider and the Worm (seed 001, sections 2.6 and 3):
//!
//! - every `library` task gets the library published as pages into its
//!   output directory ([`super::publish`]), which it then traverses: every
//!   pointer is tested, and the summary pages show what was found;
//! - with `[library] worm = N`, the pointers at and below VL N ("add your
//!   page to the Worm") become further tops of every `web` task.

use spinneret_config::{Config, TaskKind, library_dir};
use spinneret_store::Store;
use url::Url;

/// The most tops the Worm VL adds to a `web` task: anyone may post there.
const MAX_WORM_TOPS: usize = 10_000;

/// The configuration as this run is to crawl it: `config` itself when the
/// library has nothing to add, else a copy with the Worm VL's tops; the
/// `library` tasks' pages published on the way. What could not be done is
/// said and leaves the task as it was.
pub fn prepare(
    config: &Config,
    store: &mut Store,
    only: Option<&str>,
) -> anyhow::Result<Option<Config>> {
    let title = config
        .library
        .title
        .as_deref()
        .unwrap_or(super::DEFAULT_TITLE);
    let runs = |t: &spinneret_config::TaskConfig| only.is_none_or(|name| t.name == name);
    for task in config
        .tasks
        .iter()
        .filter(|t| t.kind == TaskKind::Library && runs(t))
    {
        let dir = library_dir(&task.output);
        let done = match super::publish::publish(store, title, &dir) {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(
                    "task {}: the library could not be published to {} ({e:#}); the task checks the pages of its last run",
                    task.name,
                    dir.display()
                );
                continue;
            }
        };
        tracing::info!(
            "task {}: the library published to {} ({} summary pages, {} reports, {} pointers)",
            task.name,
            dir.display(),
            done.vls,
            done.reports,
            done.pointers
        );
    }
    let Some(worm) = config.library.worm else {
        return Ok(None);
    };
    if !config
        .tasks
        .iter()
        .any(|t| t.kind == TaskKind::Web && runs(t))
    {
        return Ok(None);
    }
    let urls = match store.library_pointer_urls(worm) {
        Ok(u) => u,
        Err(e) => {
            tracing::warn!(
                "[library] worm = {worm}: {e}; the `web` tasks start from their own tops only"
            );
            return Ok(None);
        }
    };
    if urls.len() > MAX_WORM_TOPS {
        tracing::warn!(
            "[library] worm = {worm}: {} pointers; the first {MAX_WORM_TOPS} posted become tops",
            urls.len()
        );
    }
    let tops: Vec<Url> = urls
        .iter()
        .take(MAX_WORM_TOPS)
        .filter_map(|u| Url::parse(u).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .map(spinneret_core::urls::normalize)
        .collect();
    let mut config = config.clone();
    for task in config.tasks.iter_mut().filter(|t| t.kind == TaskKind::Web) {
        tracing::info!(
            "task {}: {} tops from the library's Worm VL ({worm})",
            task.name,
            tops.len()
        );
        task.more_tops = tops.clone();
    }
    Ok(Some(config))
}
