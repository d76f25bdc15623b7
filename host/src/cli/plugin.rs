//! `spinneret plugin …`: start a plugin from a template, look inside a
//! component, list the built-ins; the sharing commands are in `share`.

use super::output::{out, outln};
use clap::{Args, Subcommand};
use spinneret_bundle::scaffold;
use spinneret_plugin_host::engine::PluginEngine;
use spinneret_plugin_host::identify::{Inspection, inspect};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub(super) enum PluginCommand {
    /// Start a new plugin crate from a template that builds and passes its test.
    ///
    /// Then: `cd NAME && cargo test && cargo build --release --target wasm32-wasip2`,
    /// and name the built `.wasm` as a `[[plugin]]` source in a crawl configuration.
    New(NewArgs),
    /// Show a component's world, the plugin API version it was built
    /// against, and its exports and imports.
    Inspect(InspectArgs),
    /// List the built-in plugins and their worlds.
    Builtins,
    /// Call a plugin on sample input and print what it returns, as JSON.
    ///
    /// The fixture names the calls of the plugin's world and their
    /// arguments, e.g. for a parser
    /// `{"parse": {"url": "http://a.example/", "content_type": "text/html", "body": "<a href=x>x</a>"}}`;
    /// docs/writing-plugins.md ("Trying a plugin") lists each world's. The plugin
    /// runs in the sandbox a crawl gives it, without network access.
    Run(super::plugin_run::RunArgs),
    #[command(flatten)]
    Share(super::share::ShareCommand),
}

#[derive(Args, Debug)]
pub(super) struct NewArgs {
    /// The plugin's name (lower case, digits and `-`), also its crate's.
    name: String,
    /// What it is: reporter, detector, fetch-hook, parser, policy, search-engine or collection-index.
    #[arg(long, short = 'k', default_value = "reporter")]
    kind: String,
    /// Where to create it (default: ./NAME).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Depend on the SDK at this path instead of the default (the source
    /// tree this spinneret was built from, else the published crate).
    #[arg(long, value_name = "PATH")]
    sdk_path: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct InspectArgs {
    /// A WebAssembly component (`.wasm`), or `builtin:NAME`.
    file: String,
}

pub(super) fn run(cmd: PluginCommand) -> anyhow::Result<u8> {
    match cmd {
        PluginCommand::Share(c) => super::share::run(c),
        PluginCommand::Run(a) => super::plugin_run::main(a),
        PluginCommand::New(a) => {
            let dir = a.dir.unwrap_or_else(|| PathBuf::from(&a.name));
            let sdk = match a.sdk_path {
                Some(p) => {
                    let p = p
                        .canonicalize()
                        .map_err(|e| anyhow::anyhow!("--sdk-path {}: {e}", p.display()))?;
                    format!("path = {:?}", p.display().to_string())
                }
                None => scaffold::default_sdk(),
            };
            match scaffold::scaffold(&a.name, &a.kind, &dir, &sdk) {
                Ok(files) => {
                    outln!(
                        "created the {} plugin `{}` in {}:",
                        a.kind,
                        a.name,
                        dir.display()
                    );
                    for f in files {
                        outln!("  {}", f.display());
                    }
                    outln!(
                        "next:\n  cd {}\n  cargo test\n  cargo build --release --target wasm32-wasip2",
                        dir.display()
                    );
                    if std::env::var_os("CARGO_TARGET_DIR").is_none() {
                        outln!(
                            "(plugins share one build of their dependencies with a common target directory,\n \
                             e.g. `export CARGO_TARGET_DIR=~/.cache/spinneret-plugins`: see its README)"
                        );
                    }
                    Ok(super::EXIT_OK)
                }
                Err(e) => {
                    eprintln!("spinneret: {e}");
                    Ok(super::EXIT_USAGE)
                }
            }
        }
        PluginCommand::Inspect(a) => {
            let bytes = match a.file.strip_prefix("builtin:") {
                Some(name) => spinneret_plugin_host::builtin::builtin(name)
                    .ok_or_else(|| anyhow::anyhow!("no built-in plugin `{name}`"))?
                    .to_vec(),
                None => std::fs::read(&a.file)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", a.file))?,
            };
            let engine = PluginEngine::new()?;
            let component = engine
                .compile(&bytes)
                .map_err(|e| anyhow::anyhow!("{} is not a WebAssembly component: {e:#}", a.file))?;
            let info = inspect(&engine, &component);
            out!("{}", describe(&a.file, &info));
            Ok(if info.identity.is_ok() {
                super::EXIT_OK
            } else {
                super::EXIT_USAGE
            })
        }
        PluginCommand::Builtins => {
            let engine = PluginEngine::new()?;
            for name in spinneret_plugin_host::builtin::names() {
                let bytes = spinneret_plugin_host::builtin::builtin(name).expect("listed");
                let world = engine
                    .compile(bytes)
                    .ok()
                    .and_then(|c| spinneret_plugin_host::identify::identify(&engine, &c).ok())
                    .map_or("?", |id| id.kind.world());
                let default = if crate::config::DEFAULT_PLUGINS.contains(&name) {
                    "  (runs by default)"
                } else {
                    ""
                };
                outln!("builtin:{name:<18} {world}{default}");
            }
            Ok(super::EXIT_OK)
        }
    }
}

/// The text `plugin inspect` prints.
pub(super) fn describe(file: &str, info: &Inspection) -> String {
    let mut out = format!("{file}\n");
    match &info.identity {
        Ok(id) => out.push_str(&format!(
            "  world:   {}\n  api:     {}.{}.{} (this spinneret runs {})\n",
            id.kind.world(),
            id.api.0,
            id.api.1,
            id.api.2,
            spinneret_plugin_host::api::ApiVersion::supported()
        )),
        Err(e) => out.push_str(&format!(
            "  api:     {}\n  cannot run here: {e}\n",
            info.built_against.as_deref().unwrap_or("none")
        )),
    }
    out.push_str("  exports:\n");
    for (name, funcs) in &info.exports {
        out.push_str(&format!("    {name}"));
        if !funcs.is_empty() {
            out.push_str(&format!(": {}", funcs.join(", ")));
        }
        out.push('\n');
    }
    out.push_str("  imports:\n");
    for name in &info.imports {
        out.push_str(&format!("    {name}\n"));
    }
    out
}
