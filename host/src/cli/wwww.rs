//! The Worm's commands (seed 001, part 2): `archive export` and `archive
//! import`.

use super::{EXIT_OK, EXIT_USAGE};
use crate::config;
use crate::wwww::archive::{self, Format};
use anyhow::Context;
use clap::{Args, Subcommand};
use spinneret_store::Store;
use std::path::{Path, PathBuf};

/// Which store a command reads: a configuration's, a file, or the default.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct StoreArgs {
    /// Use the store named in this configuration file.
    #[arg(long, short = 'c', value_name = "CONFIG", conflicts_with = "store")]
    pub config: Option<PathBuf>,
    /// Use this store (default: spinneret.db in the user's data directory).
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
}

impl StoreArgs {
    /// The store's path; a configuration that does not load is the error.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        Ok(match (&self.config, &self.store) {
            (Some(c), _) => {
                config::load(c)
                    .map_err(|e| anyhow::anyhow!("{e}"))?
                    .settings
                    .store
            }
            (None, Some(s)) => s.clone(),
            (None, None) => config::default_store_path(),
        })
    }

    /// Open the store, which must exist (`what` says what needs it).
    pub fn open_existing(&self, what: &str) -> anyhow::Result<Store> {
        let path = self.path()?;
        if !path.exists() {
            anyhow::bail!(
                "no store at {}; {what} reads a store a crawl wrote: run a crawl first or name the store with --store",
                path.display()
            );
        }
        Ok(Store::open(&path)?)
    }
}

/// `spinneret archive …`.
#[derive(Subcommand, Debug)]
pub(crate) enum ArchiveCommand {
    /// Write the store's archive: every document read, with its title,
    /// references (with anchor text) and inline images, and which
    /// documents are completed.
    ///
    /// The Worm's format (Table 4 of the seed): `T html title`, `R url html
    /// anchor-text`, `I image html anchor-text-or-title`, `C html`. A crawl
    /// given this file (`crawl --archive FILE`) does not read the documents
    /// on its C lines again; delete a C line to have that document re-read.
    Export(ExportArgs),
    /// Read an archive file (either format) into the store: documents the
    /// store has not read itself are added with their references, and its
    /// C lines are kept.
    Import(ImportArgs),
}

#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The Worm's lines, or JSON Lines (schema spinneret.archive/1, which
    /// adds each document's syntax faults).
    #[arg(long, value_enum, default_value = "wwww")]
    format: Format,
    /// Write here instead of standard output (replaced only when complete).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// The archive file.
    file: PathBuf,
    #[command(flatten)]
    store: StoreArgs,
}

/// Run an `archive` command.
pub(crate) fn run(cmd: ArchiveCommand) -> anyhow::Result<u8> {
    match cmd {
        ArchiveCommand::Export(args) => {
            let store = args.store.open_existing("archive export")?;
            let docs = store.archive()?;
            match &args.output {
                Some(path) => {
                    let mut buf = Vec::new();
                    let n = archive::write(&docs, args.format, &mut buf)?;
                    spinneret_core::fs::write_atomically(path, &buf)
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!(
                        "{n} lines of {} documents written to {}",
                        docs.len(),
                        path.display()
                    );
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut out = std::io::BufWriter::new(stdout.lock());
                    match archive::write(&docs, args.format, &mut out) {
                        Ok(_) => {}
                        // A closed pipe (`| head`) is the reader's choice.
                        Err(e) if is_broken_pipe(&e) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok(EXIT_OK)
        }
        ArchiveCommand::Import(args) => {
            let path = args.store.path()?;
            let added = match import(&args.file, &path) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("spinneret: {e:#}");
                    return Ok(EXIT_USAGE);
                }
            };
            eprintln!(
                "{} documents of {} were new to {}",
                added.1,
                added.0,
                path.display()
            );
            Ok(EXIT_OK)
        }
    }
}

/// Import the archive `file` into the store at `store`: (documents in the
/// file, documents new to the store).
pub(crate) fn import(file: &Path, store: &Path) -> anyhow::Result<(usize, usize)> {
    let docs = archive::read_file(file)?;
    let mut store = Store::open(store)?;
    let added = store.import_archive(&docs)?;
    Ok((docs.len(), added))
}

/// `crawl --archive FILE`: import the archive into the crawl's store and
/// answer the documents on its C lines (only this file's: a C line deleted
/// from it has its document read again).
pub(crate) fn completed_for_crawl(
    file: &Path,
    store: &Path,
) -> anyhow::Result<std::collections::HashSet<String>> {
    let docs = archive::read_file(file)?;
    Store::open(store)?.import_archive(&docs)?;
    Ok(docs
        .into_iter()
        .filter(|d| d.completed)
        .map(|d| d.url)
        .collect())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
