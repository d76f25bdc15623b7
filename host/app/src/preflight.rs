//! Before a crawl's first request: every plugin of the run loaded into the
//! run's [`Registry`], its world checked against what a crawl runs, and
//! configured once in a throw-away instance. A component that is no component, a plugin of a world a crawl
//! does not run, or one that refuses its configuration is a configuration
//! error found at start, not a failure found after the whole crawl.

use spinneret_config::Config;
use spinneret_plugin_host::capabilities::KvSpace;
use spinneret_plugin_host::capabilities::PluginHttp;
use spinneret_plugin_host::detector::DetectorPlugin;
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::entry::PluginConfig;
use spinneret_plugin_host::fetch_hook::FetchHookPlugin;
use spinneret_plugin_host::identify::PluginKind;
use spinneret_plugin_host::load::{Prepared, link_failure};
use spinneret_plugin_host::parser::ParserPlugin;
use spinneret_plugin_host::policy::PolicyPlugin;
use spinneret_plugin_host::registry::Registry;
use spinneret_plugin_host::reporter::ReporterPlugin;
use spinneret_plugin_host::sandbox::PluginFailure;
use std::sync::Arc;

/// A plugin of the run that cannot run, with where it is configured.
#[derive(Debug, thiserror::Error)]
#[error("{where_}: plugin {name}: {reason}")]
pub struct PreflightError {
    /// `FILE:LINE` of its `[[plugin]]` entry, or what brings it in (a default built-in).
    pub where_: String,
    /// Its name.
    pub name: String,
    /// What is wrong, on one line.
    pub reason: String,
}

/// Every distinct plugin configuration the run uses: the `[[plugin]]`
/// entries and each task's plugins (built-ins with the task's settings).
fn run_plugins(config: &Config) -> Vec<PluginConfig> {
    let mut all: Vec<PluginConfig> = Vec::new();
    let tasks = config.tasks.iter().flat_map(|t| config.plugins_for(t));
    for p in config.plugins.iter().cloned().chain(tasks) {
        if !all.iter().any(|q| q.name == p.name && q.config == p.config) {
            all.push(p);
        }
    }
    all
}

/// Load, identify and configure every plugin of `config`'s run: the run's
/// registry, which the crawl's hooks and the report stage instantiate from.
pub fn check(
    config: &Config,
    engine: &Arc<PluginEngine>,
    fetch: Option<PluginHttp>,
) -> Result<Registry, PreflightError> {
    let mut registry = Registry::new(engine.clone(), fetch);
    for p in run_plugins(config) {
        check_one(&mut registry, &p).map_err(|f| PreflightError {
            where_: p.defined_at.clone().unwrap_or_else(|| {
                format!(
                    "{}: the default plugin",
                    config
                        .source
                        .as_ref()
                        .map_or("the configuration".into(), |s| s.display().to_string())
                )
            }),
            name: p.name.clone(),
            reason: {
                tracing::debug!("{f}");
                one_line(&match f.call.as_str() {
                    "load" => f.reason,
                    call => format!("{call} failed: {}", f.reason),
                })
            },
        })?;
    }
    Ok(registry)
}

fn check_one(registry: &mut Registry, p: &PluginConfig) -> Result<(), PluginFailure> {
    registry.add(p)?;
    let Prepared {
        component,
        identity,
        sandbox,
    } = registry.prepare(p, KvSpace::default())?;
    let link = |e| link_failure(p, e);
    match identity.kind {
        PluginKind::Reporter => ReporterPlugin::new(sandbox, &component)
            .map_err(link)?
            .configure_only(),
        PluginKind::ChangeDetector => DetectorPlugin::new(sandbox, &component)
            .map_err(link)?
            .start(),
        PluginKind::FetchHook => FetchHookPlugin::new(sandbox, &component)
            .map_err(link)?
            .start(),
        PluginKind::Parser => ParserPlugin::new(sandbox, &component)
            .map_err(link)?
            .start(),
        PluginKind::Policy => PolicyPlugin::new(sandbox, &component)
            .map_err(link)?
            .start(),
        kind @ (PluginKind::SearchEngine | PluginKind::CollectionIndex) => Err(PluginFailure {
            plugin: p.name.clone(),
            call: "load".into(),
            reason: format!(
                "it implements the `{}` world, which `spinneret crawl` does not run (a WebSnatcher profile does); a crawl takes reporters, change detectors, fetch hooks, parsers and policies",
                kind.world()
            ),
        }),
    }
}

/// The first line of a message, with a note when more was cut (a
/// compiler's error may carry a dump of the bytes it could not read).
fn one_line(message: &str) -> String {
    let mut lines = message.lines();
    let first = lines.next().unwrap_or_default().trim_end().to_string();
    match lines.next() {
        Some(_) => format!("{first} (more with -v)"),
        None => first,
    }
}
