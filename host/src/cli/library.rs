//! `spinneret library …`: the virtual library's files and accounts, outside
//! the server (which is `spinneret serve`).

use super::wwww::StoreArgs;
use super::{EXIT_OK, EXIT_USAGE};
use crate::library;
use clap::{Args, Subcommand};
use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

/// `spinneret library …`.
#[derive(Subcommand, Debug)]
pub(crate) enum LibraryCommand {
    /// Make a moderator's password hash for the configuration's
    /// `[[library.moderator]]` (the password is read from the terminal,
    /// or as one line from standard input; only its argon2id hash is
    /// printed).
    HashPassword,
    /// Write the whole library as JSON (for backups and moves): every
    /// VL, pointer and report with its number, dates and password hash.
    Export(ExportArgs),
    /// Replace the store's library with a file `export` wrote. The file
    /// is checked whole first (http(s) URLs only, titles, sizes, numbers
    /// given once, argon2id hashes); anything wrong imports nothing.
    Import(ImportArgs),
    /// Write the library as static HTML pages any web server can publish:
    /// `index.html` for the root, `vl-N.html` for each VL, `report-N.html`
    /// for each report. The directory must be new, empty or an earlier
    /// publication's; pages of deleted postings are removed, unchanged
    /// pages left as they are.
    Publish(PublishArgs),
}

#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Write here instead of standard output (replaced only when complete).
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// The library file.
    file: PathBuf,
    #[command(flatten)]
    store: StoreArgs,
    /// Replace a library that already has postings (without it, only an
    /// empty library is replaced).
    #[arg(long)]
    replace: bool,
}

#[derive(Args, Debug)]
pub(crate) struct PublishArgs {
    /// The directory to write the pages into (made if missing).
    dir: PathBuf,
    #[command(flatten)]
    store: StoreArgs,
}

/// Run a `library` command.
pub(crate) fn run(cmd: LibraryCommand) -> anyhow::Result<u8> {
    match cmd {
        LibraryCommand::HashPassword => hash_password(),
        LibraryCommand::Export(args) => {
            let store = args.store.open_existing("library export")?;
            let kept: Vec<&std::path::Path> = store.path().into_iter().collect();
            let n = super::output::to_file_or_stdout(args.output.as_deref(), &kept, |out| {
                library::transfer::export(&store, out)
            })?;
            if let Some(path) = &args.output {
                eprintln!("{n} postings written to {}", path.display());
            }
            Ok(EXIT_OK)
        }
        LibraryCommand::Import(args) => {
            let root = match library::transfer::read(&args.file) {
                Ok(root) => root,
                Err(e) => {
                    eprintln!(
                        "spinneret: {}: {e}; nothing was imported",
                        args.file.display()
                    );
                    return Ok(EXIT_USAGE);
                }
            };
            let (mut store, setting, _) = args.store.open_with_settings()?;
            if let Some(old) = store.library_export()?
                && !old.postings.is_empty()
                && !args.replace
            {
                eprintln!(
                    "spinneret: {} already has a library (\"{}\", {} postings at its root); give --replace to replace it, after `spinneret library export -o backup.json` if you want to keep it",
                    setting,
                    old.text.title,
                    old.postings.len()
                );
                return Ok(EXIT_USAGE);
            }
            let n = store.library_import(&root).map_err(|e| {
                anyhow::anyhow!("{}: {e}; nothing was imported", args.file.display())
            })?;
            eprintln!("{n} postings imported into {setting}");
            Ok(EXIT_OK)
        }
        LibraryCommand::Publish(args) => {
            let (mut store, _, settings) = args.store.open_with_settings()?;
            let title = settings.title.as_deref().unwrap_or(library::DEFAULT_TITLE);
            let done = library::publish::publish(&mut store, title, &args.dir)?;
            eprintln!(
                "{} summary pages, {} reports and {} pointers written to {}{}",
                done.vls,
                done.reports,
                done.pointers,
                args.dir.display(),
                match done.removed {
                    0 => String::new(),
                    n => format!(" ({n} pages of deleted postings removed)"),
                }
            );
            Ok(EXIT_OK)
        }
    }
}

/// `spinneret library hash-password`.
fn hash_password() -> anyhow::Result<u8> {
    let password = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("New moderator password: ")?;
        let again = rpassword::prompt_password("The same again: ")?;
        if first != again {
            eprintln!("spinneret: the two passwords differ; nothing was made");
            return Ok(EXIT_USAGE);
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    if password.chars().count() < 8 {
        eprintln!("spinneret: a moderator's password needs at least 8 characters");
        return Ok(EXIT_USAGE);
    }
    let hash = library::auth::hash_password(&password)?;
    println!("{hash}");
    eprintln!(
        "put it in the configuration:\n\n[[library.moderator]]\nname = \"…\"\npassword_hash = \"{hash}\""
    );
    Ok(EXIT_OK)
}
