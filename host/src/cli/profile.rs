//! `spinneret profile …`: a WebSnatcher profile written and edited from the
//! command line (seed 004's text interface). Every edit keeps the file's
//! comments and layout and is checked as a profile before it is written;
//! on a terminal, what an entry needs and was not given is asked for.

use super::output::outln;
use super::{EXIT_OK, EXIT_USAGE};
use crate::snatch::edit::{self, Entry, Named};
use crate::snatch::profile::{self, Profile, Requisites};
use clap::{Args, Subcommand};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

#[derive(Subcommand, Debug)]
pub(super) enum ProfileCommand {
    /// Write a new profile with its first URL.
    ///
    /// Example: spinneret profile new news.toml --url https://news.example/
    New(NewArgs),
    /// Show what a profile collects, checked as `collect` reads it.
    Show {
        /// The profile.
        file: PathBuf,
    },
    /// Add a URL, a bookmarks file, an interest, an engine, a change
    /// detector, the index plugin or an exclusion.
    ///
    /// Example: spinneret profile add news.toml interest Crawlers --keyword
    /// "web crawler" --engine wiki
    Add {
        /// The profile.
        file: PathBuf,
        #[command(subcommand)]
        entry: AddEntry,
    },
    /// Remove a URL, a bookmarks file, an interest, an engine, a change
    /// detector, the index plugin or an exclusion, named as it was added.
    Remove {
        /// The profile.
        file: PathBuf,
        #[command(subcommand)]
        entry: RemoveEntry,
    },
    /// Set a top-level setting: mirror, keep_runs, max_pages,
    /// max_requisites, per_site_delay, per_site_connections, concurrency,
    /// requisites or schedule.
    ///
    /// Example: spinneret profile set news.toml schedule 1d
    Set {
        /// The profile.
        file: PathBuf,
        /// The setting.
        key: String,
        /// Its new value.
        value: String,
    },
}

#[derive(Args, Debug)]
pub(super) struct NewArgs {
    /// The profile to write (it must not exist).
    file: PathBuf,
    /// Where the mirror goes, relative to the profile.
    #[arg(long, value_name = "DIR", default_value = "mirror")]
    mirror: String,
    /// A URL to collect (repeatable); asked for on a terminal when none is given.
    #[arg(long, value_name = "URL")]
    url: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub(super) enum AddEntry {
    /// A page to collect, with its same-site links to a depth.
    Url {
        /// The page.
        url: String,
        /// Links followed from it (0 to 10; default 0).
        #[arg(long)]
        depth: Option<u32>,
        /// Its category in the mirror (default "URLs").
        #[arg(long)]
        category: Option<String>,
        /// When `watch` collects it, if not on the profile's schedule
        /// (`6h`, `1d`, `02:30`).
        #[arg(long)]
        schedule: Option<String>,
    },
    /// A browser's bookmarks file (Netscape HTML, Firefox or Chromium JSON).
    Bookmarks {
        /// The file, relative to the profile.
        file: String,
        /// Links followed from each bookmark.
        #[arg(long)]
        depth: Option<u32>,
        /// When `watch` collects them, if not on the profile's schedule.
        #[arg(long)]
        schedule: Option<String>,
    },
    /// An area of interest asked of search engines.
    Interest {
        /// Its title, also its category.
        title: String,
        /// Words to search for (repeatable; one may hold several words).
        #[arg(long = "keyword", value_name = "WORDS")]
        keywords: Vec<String>,
        /// An `[[engine]]` of the profile to ask (repeatable).
        #[arg(long = "engine", value_name = "NAME")]
        engines: Vec<String>,
        /// The most results per engine (1 to 100; default 10).
        #[arg(long = "max")]
        max_results: Option<u32>,
        /// Links followed from each result.
        #[arg(long)]
        depth: Option<u32>,
        /// Words that must appear together, where an engine can say so.
        #[arg(long, value_name = "WORDS")]
        phrase: Option<String>,
        /// A word the results must not contain (repeatable).
        #[arg(long = "exclude-word", value_name = "WORD")]
        exclude_words: Vec<String>,
        /// The one site to search, where an engine can say so.
        #[arg(long, value_name = "HOST")]
        site: Option<String>,
        /// When `watch` asks its engines, if not on the profile's schedule.
        #[arg(long)]
        schedule: Option<String>,
    },
    /// A search-engine plugin interests can name.
    Engine {
        /// Its name.
        name: String,
        /// `builtin:NAME` (see `spinneret plugin builtins`) or a `.wasm` file.
        #[arg(long)]
        source: Option<String>,
        /// Its configuration, a JSON object.
        #[arg(long, value_name = "JSON")]
        config: Option<String>,
        /// A host it may fetch from itself (repeatable).
        #[arg(long = "host", value_name = "HOST")]
        hosts: Vec<String>,
    },
    /// A change detector, asked what changed in each run's main pages (the
    /// default is builtin:maintenance; naming any replaces it).
    Detector {
        /// `builtin:NAME`, an installed bundle (`NAME@^1.0`) or a `.wasm` file.
        source: String,
        /// Its configuration, a JSON object.
        #[arg(long, value_name = "JSON")]
        config: Option<String>,
    },
    /// The plugin that writes the mirror's index (the default is
    /// builtin:websnatcher-index).
    Index {
        /// `builtin:NAME`, an installed bundle (`NAME@^1.0`) or a `.wasm` file.
        source: String,
        /// Its configuration, a JSON object.
        #[arg(long, value_name = "JSON")]
        config: Option<String>,
    },
    /// A URL not of interest: it and everything under it is never fetched.
    Exclude {
        /// The URL (a prefix).
        url: String,
    },
}

#[derive(Subcommand, Debug)]
pub(super) enum RemoveEntry {
    /// The `[[url]]` with this URL.
    Url {
        /// The URL as the profile has it.
        url: String,
    },
    /// The `[[bookmarks]]` with this file.
    Bookmarks {
        /// The file as the profile has it.
        file: String,
    },
    /// The `[[interest]]` with this title.
    Interest {
        /// Its title.
        title: String,
    },
    /// The `[[engine]]` with this name.
    Engine {
        /// Its name.
        name: String,
    },
    /// The `[[detector]]` with this source.
    Detector {
        /// Its source as the profile has it.
        source: String,
    },
    /// The `[index]`: the default index plugin writes the index again.
    Index,
    /// This URL of the exclusions.
    Exclude {
        /// The URL.
        url: String,
    },
}

/// Ask for `what` on a terminal; off a terminal, say which flag gives it.
fn ask(what: &str, flag: &str) -> Result<String, String> {
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "give {flag} (not on a terminal, so it is not asked for)"
        ));
    }
    eprint!("{what}: ");
    std::io::stderr().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    let line = line.trim().to_string();
    if line.is_empty() {
        return Err(format!("no answer; give {flag}"));
    }
    Ok(line)
}

/// A plugin's `--config`, which must be a JSON object.
fn json_config(config: Option<String>) -> Result<Option<serde_json::Value>, String> {
    config
        .map(|c| {
            serde_json::from_str::<serde_json::Value>(&c)
                .ok()
                .filter(serde_json::Value::is_object)
                .ok_or_else(|| {
                    format!("--config is not a JSON object: {c}; write e.g. '{{\"base\": \"https://searx.example/\"}}'")
                })
        })
        .transpose()
}

/// What an `add` adds, with what it needs asked for on a terminal.
fn entry(add: AddEntry) -> Result<Entry, String> {
    Ok(match add {
        AddEntry::Url {
            url,
            depth,
            category,
            schedule,
        } => Entry::Url {
            url,
            depth,
            category,
            schedule,
        },
        AddEntry::Bookmarks {
            file,
            depth,
            schedule,
        } => Entry::Bookmarks {
            file,
            depth,
            schedule,
        },
        AddEntry::Interest {
            title,
            mut keywords,
            mut engines,
            max_results,
            depth,
            phrase,
            exclude_words,
            site,
            schedule,
        } => {
            if keywords.is_empty() {
                keywords = vec![ask(
                    &format!("Words to search for, for {title}"),
                    "--keyword",
                )?];
            }
            if engines.is_empty() {
                engines = ask(
                    "Engines to ask (their names, separated by spaces)",
                    "--engine",
                )?
                .split_whitespace()
                .map(str::to_string)
                .collect();
            }
            Entry::Interest {
                title,
                keywords,
                engines,
                max_results,
                depth,
                exact_phrase: phrase,
                exclude_words,
                site,
                schedule,
            }
        }
        AddEntry::Engine {
            name,
            source,
            config,
            hosts,
        } => {
            let source = match source {
                Some(s) => s,
                None => ask(
                    &format!("The plugin of engine {name} (builtin:NAME or a .wasm file)"),
                    "--source",
                )?,
            };
            Entry::Engine {
                name,
                source,
                config: json_config(config)?,
                hosts,
            }
        }
        AddEntry::Detector { source, config } => Entry::Detector {
            source,
            config: json_config(config)?,
        },
        AddEntry::Index { source, config } => Entry::Index {
            source,
            config: json_config(config)?,
        },
        AddEntry::Exclude { url } => Entry::Exclude(url),
    })
}

/// Edit the profile at `file` with `change`, check the result and write it.
fn edit_file(file: &Path, change: impl FnOnce(&str) -> Result<String, String>) -> u8 {
    edit_file_checked(file, change, |_| Ok(()))
}

/// [`edit_file`], the result also held to `check` before it is written.
fn edit_file_checked(
    file: &Path,
    change: impl FnOnce(&str) -> Result<String, String>,
    check: impl FnOnce(&Profile) -> Result<(), String>,
) -> u8 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "spinneret: {}: cannot read the profile: {e}",
                file.display()
            );
            return EXIT_USAGE;
        }
    };
    let result = change(&text)
        .map_err(|m| format!("{}: {m}", file.display()))
        .and_then(|new| {
            let checked = profile::parse(&new, file, &profile::base_dir(file))
                .map_err(|e| e.to_string())
                .and_then(|p| check(&p).map_err(|m| format!("{}: {m}", file.display())));
            checked
                .and_then(|()| edit::save(file, &new).map_err(|e| e.to_string()))
                .map_err(|m| format!("{m}; the profile is unchanged"))
        });
    match result {
        Ok(_) => EXIT_OK,
        Err(m) => {
            eprintln!("spinneret: {m}");
            EXIT_USAGE
        }
    }
}

pub(super) fn run(cmd: ProfileCommand) -> anyhow::Result<u8> {
    Ok(match cmd {
        ProfileCommand::New(a) => new(a),
        ProfileCommand::Show { file } => match profile::load(&file) {
            Ok(p) => {
                show(&p);
                EXIT_OK
            }
            Err(e) => {
                eprintln!("spinneret: {e}");
                EXIT_USAGE
            }
        },
        ProfileCommand::Add { file, entry: add } => match entry(add) {
            Ok(e @ Entry::Engine { .. }) => {
                edit_file_checked(&file, |text| edit::add(text, &e), |p| engine_starts(p, &e))
            }
            Ok(e) => edit_file(&file, |text| edit::add(text, &e)),
            Err(m) => {
                eprintln!("spinneret: {m}");
                EXIT_USAGE
            }
        },
        ProfileCommand::Remove { file, entry } => {
            let named = match &entry {
                RemoveEntry::Url { url } => Named::Url(url),
                RemoveEntry::Bookmarks { file } => Named::Bookmarks(file),
                RemoveEntry::Interest { title } => Named::Interest(title),
                RemoveEntry::Engine { name } => Named::Engine(name),
                RemoveEntry::Detector { source } => Named::Detector(source),
                RemoveEntry::Index => Named::Index,
                RemoveEntry::Exclude { url } => Named::Exclude(url),
            };
            edit_file(&file, |text| edit::remove(text, named))
        }
        ProfileCommand::Set { file, key, value } => {
            edit_file(&file, |text| edit::set(text, &key, &value))
        }
    })
}

/// Whether the engine `added` to the profile `p` loads and takes its
/// configuration: the check `collect` makes of the profile's plugins
/// before a run ([`preflight`](crate::app::collect::index::preflight)),
/// made of this engine alone, named by the flag its configuration came
/// from (it has no line in the file yet).
fn engine_starts(p: &Profile, added: &Entry) -> Result<(), String> {
    let Entry::Engine { name, config, .. } = added else {
        return Ok(());
    };
    let Some(engine) = p.engines.iter().find(|e| &e.name == name) else {
        return Ok(());
    };
    let engine = profile::Engine {
        defined_at: match config {
            Some(c) => format!("--config {c}"),
            None => "no --config".to_string(),
        },
        ..engine.clone()
    };
    let alone = Profile {
        engines: vec![engine],
        detectors: Vec::new(),
        fetch_hooks: Vec::new(),
        policies: Vec::new(),
        index: profile::PluginUse::builtin(profile::DEFAULT_INDEX),
        ..p.clone()
    };
    let settings = super::settings_from(&None, &[])?;
    let mut asker = crate::app::query::Asker::new(&settings).map_err(|e| format!("{e:#}"))?;
    match crate::app::collect::index::preflight(&mut asker, &alone).as_slice() {
        [] => Ok(()),
        wrong => Err(wrong.join("; ")),
    }
}

fn new(a: NewArgs) -> u8 {
    if a.file.exists() {
        eprintln!(
            "spinneret: {} exists; edit it with `spinneret profile add|remove|set`, or choose another name",
            a.file.display()
        );
        return EXIT_USAGE;
    }
    let mut urls = a.url;
    if urls.is_empty() {
        match ask("A first URL to collect", "--url") {
            Ok(u) => urls.push(u),
            Err(m) => {
                eprintln!("spinneret: a profile needs something to collect: {m}");
                return EXIT_USAGE;
            }
        }
    }
    let text = match edit::new_profile(&a.mirror, &urls) {
        Ok(t) => t,
        Err(m) => {
            eprintln!("spinneret: {m}");
            return EXIT_USAGE;
        }
    };
    match edit::save(&a.file, &text) {
        Ok(p) => {
            outln!(
                "wrote {}; its mirror is {}. Collect it with `spinneret collect {}`.",
                a.file.display(),
                p.mirror.display(),
                a.file.display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("spinneret: {e}");
            EXIT_USAGE
        }
    }
}

/// What a profile collects, for a person.
fn show(p: &Profile) {
    let or_none = |s: Option<String>| s.unwrap_or_else(|| "none".into());
    outln!("mirror:      {}", p.mirror.display());
    outln!("keep runs:   {}", p.keep_runs);
    outln!("max pages:   {} per item", p.max_pages);
    outln!(
        "requisites:  {}",
        match p.requisites {
            Requisites::AnyHost => "from any host",
            Requisites::SameSite => "from the page's site only",
        }
    );
    outln!(
        "schedule:    {}",
        or_none(p.schedule.map(|s| s.to_string()))
    );
    for x in &p.exclude {
        outln!("excluded:    {x}");
    }
    // An entry's own schedule, after its other settings.
    let own = |s: &Option<spinneret_core::schedule::Schedule>| {
        s.as_ref().map_or(String::new(), |s| format!("; {s}"))
    };
    if !p.urls.is_empty() {
        outln!("\nURLs:");
        for u in &p.urls {
            outln!(
                "  {}  (depth {}, category {}{})",
                u.url,
                u.depth,
                u.category,
                own(&u.schedule)
            );
        }
    }
    if !p.bookmarks.is_empty() {
        outln!("\nBookmarks:");
        for b in &p.bookmarks {
            outln!(
                "  {}  (depth {}{})",
                b.file.display(),
                b.depth,
                own(&b.schedule)
            );
        }
    }
    if !p.interests.is_empty() {
        outln!("\nInterests:");
        for i in &p.interests {
            outln!(
                "  {}: {}  (engines {}; {} results each; depth {}{})",
                i.title,
                i.keywords.join(", "),
                i.engines.join(", "),
                i.max_results,
                i.depth,
                own(&i.schedule)
            );
            if let Some(phrase) = &i.exact_phrase {
                outln!("    phrase \"{phrase}\"");
            }
            if !i.exclude_words.is_empty() {
                outln!("    without {}", i.exclude_words.join(", "));
            }
            if let Some(site) = &i.site {
                outln!("    on {site}");
            }
        }
    }
    if !p.engines.is_empty() {
        outln!("\nEngines:");
        for e in &p.engines {
            let source = profile::source_name(&e.source);
            let hosts = match e.hosts.is_empty() {
                true => String::new(),
                false => format!(" hosts {}", e.hosts.join(", ")),
            };
            outln!("  {}  ({source}){}{hosts}", e.name, config_text(&e.config));
        }
    }
    outln!(
        "\nIndex: {}{}",
        p.index.name(),
        config_text(&p.index.config)
    );
    let detectors: Vec<String> = p
        .detectors
        .iter()
        .map(|d| format!("{}{}", d.name(), config_text(&d.config)))
        .collect();
    outln!("Change detectors: {}", detectors.join(", "));
}

/// A plugin's configuration after its name: nothing when it is empty.
fn config_text(config: &serde_json::Value) -> String {
    match config.as_object().is_some_and(|o| o.is_empty()) {
        true => String::new(),
        false => format!(" {config}"),
    }
}
