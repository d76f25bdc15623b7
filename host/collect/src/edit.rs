//! Editing a WebSnatcher profile from the command line (`spinneret
//! profile`, seed 004's text interface): entries added and removed and
//! top-level settings set in the user's own file, keeping their comments,
//! order and layout (`toml_edit`). Each edit works on the file's text and
//! is read back as a profile before anything is written: an edit that would
//! make the profile invalid (an interest naming an engine just removed, a
//! depth out of range) changes nothing and says why, file and line.

use super::profile::{self, Profile};
use spinneret_config::ConfigError;
use std::path::Path;
use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value, value};

/// An entry of a profile, as `profile add` adds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// `[[url]]`.
    Url {
        /// The page.
        url: String,
        /// Links followed from it (same site).
        depth: Option<u32>,
        /// Its category.
        category: Option<String>,
        /// When `watch` collects it, if not on the profile's schedule.
        schedule: Option<String>,
    },
    /// `[[bookmarks]]`.
    Bookmarks {
        /// The bookmarks file, as the user wrote it (relative to the profile).
        file: String,
        /// Links followed from each bookmark.
        depth: Option<u32>,
        /// When `watch` collects it, if not on the profile's schedule.
        schedule: Option<String>,
    },
    /// `[[interest]]`.
    Interest {
        /// Its title (its category).
        title: String,
        /// The words to search for.
        keywords: Vec<String>,
        /// The `[[engine]]` names to ask.
        engines: Vec<String>,
        /// The most results per engine.
        max_results: Option<u32>,
        /// Links followed from each result.
        depth: Option<u32>,
        /// The exact phrase.
        exact_phrase: Option<String>,
        /// Words the results must not contain.
        exclude_words: Vec<String>,
        /// The one site to search.
        site: Option<String>,
        /// When `watch` asks it, if not on the profile's schedule.
        schedule: Option<String>,
    },
    /// `[[engine]]`.
    Engine {
        /// Its name, as interests name it.
        name: String,
        /// `builtin:NAME` or a `.wasm` path.
        source: String,
        /// Its configuration (a JSON object, written as a TOML table).
        config: Option<serde_json::Value>,
        /// The hosts it may fetch from.
        hosts: Vec<String>,
    },
    /// `[[detector]]`: a change detector run over each run's main pages.
    Detector {
        /// `builtin:NAME`, an installed bundle or a `.wasm` path.
        source: String,
        /// Its configuration (a JSON object, written as a TOML table).
        config: Option<serde_json::Value>,
    },
    /// `[index]`: the collection-index plugin that writes the index.
    Index {
        /// `builtin:NAME`, an installed bundle or a `.wasm` path.
        source: String,
        /// Its configuration (a JSON object, written as a TOML table).
        config: Option<serde_json::Value>,
    },
    /// A URL of the top-level `exclude` list.
    Exclude(String),
}

/// An entry to remove, by what names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named<'a> {
    /// The `[[url]]` with this `url`.
    Url(&'a str),
    /// The `[[bookmarks]]` with this `file`.
    Bookmarks(&'a str),
    /// The `[[interest]]` with this `title`.
    Interest(&'a str),
    /// The `[[engine]]` with this `name`.
    Engine(&'a str),
    /// The `[[detector]]` with this `source`.
    Detector(&'a str),
    /// The `[index]` (the default index plugin writes the index again).
    Index,
    /// This URL of `exclude`.
    Exclude(&'a str),
}

/// The top-level settings `profile set` changes: (key, whether a number).
pub const SETTINGS: &[(&str, bool)] = &[
    ("mirror", false),
    ("keep_runs", true),
    ("max_pages", true),
    ("max_requisites", true),
    ("per_site_delay", false),
    ("concurrency", true),
    ("per_site_connections", true),
    ("requisites", false),
    ("schedule", false),
];

/// A new profile's text: the mirror, every other top-level key shown
/// commented out with what it does (before any table, so that taking out
/// the `#` makes it a setting of the profile), then a `[[url]]` for each
/// of `urls`, then a commented example of one, ready to be filled in (by
/// hand or with `profile add`).
pub fn new_profile(mirror: &str, urls: &[String]) -> Result<String, String> {
    let mut doc = DocumentMut::new();
    doc["mirror"] = value(mirror);
    let mut tables = String::new();
    for url in urls {
        let entry = Entry::Url {
            url: url.clone(),
            depth: None,
            category: None,
            schedule: None,
        };
        tables = add(&tables, &entry)?;
    }
    Ok(format!(
        "# A WebSnatcher profile: what `spinneret collect` retrieves, and where.\n\
         # Reference: docs/websnatcher.md. Edit it by hand or with\n\
         # `spinneret profile add|remove|set FILE …`; comments are kept.\n\
         {doc}\
         # keep_runs = 1            # runs whose files are kept (1: each run replaces the last)\n\
         # max_pages = 1000         # pages followed from one item at most\n\
         # per_site_delay = \"250ms\"  # least time between two requests to one site\n\
         # per_site_connections = 2 # requests in flight to one site at most\n\
         # concurrency = 64         # requests in flight in all at most\n\
         # requisites = \"any-host\"  # or \"same-site\": where images and stylesheets may come from\n\
         # schedule = \"1d\"          # how often `spinneret watch` collects it\n\
         # exclude = []             # URLs not of interest, never fetched\n\
         \n\
         {tables}\
         \n\
         # [[url]]                  # a page to collect\n\
         # url = \"https://example.org/\"\n\
         # depth = 1                # same-site links followed from it\n\
         # category = \"URLs\"\n"
    ))
}

fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|e| format!("the profile is not valid TOML: {e}"))
}

fn tables<'d>(doc: &'d mut DocumentMut, key: &str) -> Result<&'d mut ArrayOfTables, String> {
    doc.entry(key)
        .or_insert(Item::ArrayOfTables(ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or_else(|| format!("`{key}` in the profile is not a list of [[{key}]] tables"))
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().map(String::as_str).collect::<Array>())
}

/// A JSON value as TOML (which has no null).
fn toml_value(v: &serde_json::Value) -> Result<Value, String> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => {
            return Err(
                "the engine's configuration holds null, which TOML cannot say; leave the key out"
                    .into(),
            );
        }
        J::Bool(b) => Value::from(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) => Value::from(f),
            _ => return Err(format!("the number {n} is out of TOML's range")),
        },
        J::String(s) => Value::from(s.as_str()),
        J::Array(a) => Value::Array(a.iter().map(toml_value).collect::<Result<Array, _>>()?),
        J::Object(o) => {
            let mut t = InlineTable::new();
            for (k, v) in o {
                t.insert(k, toml_value(v)?);
            }
            Value::InlineTable(t)
        }
    })
}

/// A plugin's configuration (a JSON object) as a TOML inline table.
fn plugin_config(config: &serde_json::Value) -> Result<Item, String> {
    if !config.is_object() {
        return Err("a plugin's configuration is a JSON object".into());
    }
    Ok(value(toml_value(config)?))
}

/// Where an entry of `key` named `name` (its `field`) is, if it is there.
fn find(doc: &DocumentMut, key: &str, field: &str, name: &str) -> Option<usize> {
    doc.get(key)?
        .as_array_of_tables()?
        .iter()
        .position(|t| t.get(field).and_then(Item::as_str) == Some(name))
}

/// `doc` with its `[index]` set to `source` (and `config`); refused when
/// it has one.
fn add_index(
    mut doc: DocumentMut,
    source: &str,
    config: Option<&serde_json::Value>,
) -> Result<String, String> {
    if let Some(old) = doc.get("index") {
        let was = old.get("source").and_then(Item::as_str).unwrap_or("?");
        return Err(format!(
            "the profile has an [index] already (source = {was:?}); `profile remove FILE index` first"
        ));
    }
    let mut table = Table::new();
    table["source"] = value(source);
    if let Some(c) = config {
        table["config"] = plugin_config(c)?;
    }
    doc["index"] = Item::Table(table);
    Ok(doc.to_string())
}

/// `doc` with `url` added to its `exclude` list; refused when it is there.
fn add_exclude(mut doc: DocumentMut, url: &str) -> Result<String, String> {
    let list = doc
        .entry("exclude")
        .or_insert(value(Array::new()))
        .as_array_mut()
        .ok_or("`exclude` in the profile is not a list")?;
    if list.iter().any(|v| v.as_str() == Some(url)) {
        return Err(format!("{url} is excluded already"));
    }
    list.push(url);
    Ok(doc.to_string())
}

/// `table[key] = v`, when there is a `v`.
fn put<V: Into<Value>>(table: &mut Table, key: &str, v: Option<V>) {
    if let Some(v) = v {
        table[key] = value(v);
    }
}

/// `text` with `entry` added at the end of its kind. Adding what is there
/// already (the same URL, file, title or engine name) is refused.
pub fn add(text: &str, entry: &Entry) -> Result<String, String> {
    let mut doc = parse(text)?;
    let mut table = Table::new();
    let (key, field, name) = match entry {
        Entry::Url {
            url,
            depth,
            category,
            schedule,
        } => {
            table["url"] = value(url.as_str());
            put(&mut table, "depth", depth.as_ref().map(|d| i64::from(*d)));
            put(
                &mut table,
                "category",
                category.as_ref().map(|c| c.as_str()),
            );
            put(
                &mut table,
                "schedule",
                schedule.as_ref().map(|s| s.as_str()),
            );
            ("url", "url", url.as_str())
        }
        Entry::Bookmarks {
            file,
            depth,
            schedule,
        } => {
            table["file"] = value(file.as_str());
            put(&mut table, "depth", depth.as_ref().map(|d| i64::from(*d)));
            put(
                &mut table,
                "schedule",
                schedule.as_ref().map(|s| s.as_str()),
            );
            ("bookmarks", "file", file.as_str())
        }
        Entry::Interest {
            title,
            keywords,
            engines,
            max_results,
            depth,
            exact_phrase,
            exclude_words,
            site,
            schedule,
        } => {
            table["title"] = value(title.as_str());
            table["keywords"] = value(strings(keywords));
            table["engines"] = value(strings(engines));
            put(
                &mut table,
                "max_results",
                max_results.as_ref().map(|m| i64::from(*m)),
            );
            put(&mut table, "depth", depth.as_ref().map(|d| i64::from(*d)));
            put(
                &mut table,
                "exact_phrase",
                exact_phrase.as_ref().map(|p| p.as_str()),
            );
            if !exclude_words.is_empty() {
                table["exclude_words"] = value(strings(exclude_words));
            }
            put(&mut table, "site", site.as_ref().map(|s| s.as_str()));
            put(
                &mut table,
                "schedule",
                schedule.as_ref().map(|s| s.as_str()),
            );
            ("interest", "title", title.as_str())
        }
        Entry::Engine {
            name,
            source,
            config,
            hosts,
        } => {
            table["name"] = value(name.as_str());
            table["source"] = value(source.as_str());
            if let Some(c) = config {
                table["config"] = plugin_config(c)?;
            }
            if !hosts.is_empty() {
                table["hosts"] = value(strings(hosts));
            }
            ("engine", "name", name.as_str())
        }
        Entry::Detector { source, config } => {
            table["source"] = value(source.as_str());
            if let Some(c) = config {
                table["config"] = plugin_config(c)?;
            }
            ("detector", "source", source.as_str())
        }
        Entry::Index { source, config } => return add_index(doc, source, config.as_ref()),
        Entry::Exclude(url) => return add_exclude(doc, url),
    };
    if find(&doc, key, field, name).is_some() {
        return Err(format!(
            "the profile has a [[{key}]] with {field} = {name:?} already"
        ));
    }
    tables(&mut doc, key)?.push(table);
    Ok(doc.to_string())
}

/// `text` without the entry `named`; an entry that is not there is an
/// error that lists what is.
pub fn remove(text: &str, named: Named<'_>) -> Result<String, String> {
    let mut doc = parse(text)?;
    let (key, field, name) = match named {
        Named::Url(u) => ("url", "url", u),
        Named::Bookmarks(f) => ("bookmarks", "file", f),
        Named::Interest(t) => ("interest", "title", t),
        Named::Engine(n) => ("engine", "name", n),
        Named::Detector(s) => ("detector", "source", s),
        Named::Index => {
            let Some(gone) = doc.remove("index") else {
                return Err("the profile has no [index] (it uses the default)".into());
            };
            if let Item::Table(gone) = gone {
                hand_on_comments(&mut doc, &gone);
            }
            return Ok(doc.to_string());
        }
        Named::Exclude(url) => {
            let list = doc
                .get_mut("exclude")
                .and_then(Item::as_array_mut)
                .ok_or("the profile excludes nothing")?;
            let Some(i) = list.iter().position(|v| v.as_str() == Some(url)) else {
                return Err(format!("{url} is not in the profile's exclude list"));
            };
            list.remove(i);
            return Ok(doc.to_string());
        }
    };
    let Some(i) = find(&doc, key, field, name) else {
        let there: Vec<String> = doc
            .get(key)
            .and_then(Item::as_array_of_tables)
            .map(|a| {
                a.iter()
                    .filter_map(|t| t.get(field).and_then(Item::as_str))
                    .map(|s| format!("{s:?}"))
                    .collect()
            })
            .unwrap_or_default();
        return Err(if there.is_empty() {
            format!("the profile has no [[{key}]]")
        } else {
            format!(
                "the profile has no [[{key}]] with {field} = {name:?}; it has {}",
                there.join(", ")
            )
        });
    };
    let list = tables(&mut doc, key)?;
    let gone = list.get(i).cloned();
    list.remove(i);
    if list.is_empty() {
        doc.remove(key);
    }
    if let Some(gone) = gone {
        hand_on_comments(&mut doc, &gone);
    }
    Ok(doc.to_string())
}

/// `prefix` (the comments and blank lines above a table's header) as what
/// is not the table's own and what is: its own is the block of comment
/// lines right above its header, after the last blank line; what comes
/// before that blank line (the template's commented settings, a comment
/// closing the entry above, a heading over several entries) is not.
fn split_own(prefix: &str) -> (&str, &str) {
    let mut cut = 0;
    let mut at = 0;
    for line in prefix.split_inclusive('\n') {
        at += line.len();
        if line.trim().is_empty() {
            cut = at;
        }
    }
    prefix.split_at(cut)
}

/// `text` without its leading blank lines.
fn without_leading_blank_lines(text: &str) -> &str {
    let mut rest = text;
    while let Some(end) = rest.find('\n')
        && rest[..end].trim().is_empty()
    {
        rest = &rest[end + 1..];
    }
    rest
}

/// Every table under `table` (nested ones and the elements of arrays of
/// tables), handed to `f`.
fn each_table(table: &mut Table, f: &mut dyn FnMut(&mut Table)) {
    for (_, item) in table.iter_mut() {
        match item {
            Item::Table(t) => {
                f(t);
                each_table(t, f);
            }
            Item::ArrayOfTables(a) => {
                for t in a.iter_mut() {
                    f(t);
                    each_table(t, f);
                }
            }
            _ => {}
        }
    }
}

/// After `gone` was taken out of `doc`: the comments above its header that
/// are not its own ([`split_own`]) stay where they were, above the table
/// that now follows (or at the end of the file), so that a removal takes
/// the entry and its own comment and nothing else.
fn hand_on_comments(doc: &mut DocumentMut, gone: &Table) {
    let prefix = gone.decor().prefix().and_then(|p| p.as_str()).unwrap_or("");
    let (kept, _own) = split_own(prefix);
    let Some(at) = gone.position() else {
        return;
    };
    if kept.is_empty() {
        return;
    }
    let mut next: Option<isize> = None;
    each_table(doc.as_table_mut(), &mut |t| {
        if let Some(p) = t.position().filter(|p| *p > at) {
            next = Some(next.map_or(p, |n| n.min(p)));
        }
    });
    match next {
        Some(next) => each_table(doc.as_table_mut(), &mut |t| {
            if t.position() == Some(next) {
                let own = t.decor().prefix().and_then(|p| p.as_str()).unwrap_or("");
                let joined = format!("{kept}{}", without_leading_blank_lines(own));
                t.decor_mut().set_prefix(joined);
            }
        }),
        // The last table: its comments end the file, with no blank line
        // after them.
        None if kept.trim().is_empty() => {}
        None => {
            let trailing = doc.trailing().as_str().unwrap_or("").to_string();
            let trailing = without_leading_blank_lines(&trailing);
            let joined = match trailing.is_empty() {
                true => format!("{}\n", kept.trim_end()),
                false => format!("{kept}{trailing}"),
            };
            doc.set_trailing(joined);
        }
    }
}

/// `text` with the top-level setting `key` set to `raw` (a number for
/// `keep_runs` and `max_pages`, text otherwise).
pub fn set(text: &str, key: &str, raw: &str) -> Result<String, String> {
    let Some((_, number)) = SETTINGS.iter().find(|(k, _)| *k == key) else {
        return Err(format!(
            "`{key}` is not a setting `profile set` changes; those are {}; edit entries with `profile add` and `profile remove`",
            SETTINGS
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let mut doc = parse(text)?;
    let new = if *number {
        let n: i64 = raw
            .trim()
            .parse()
            .map_err(|_| format!("`{key}` is a whole number, not {raw:?}"))?;
        value(n)
    } else {
        value(raw)
    };
    match doc.get_mut(key) {
        // Keep the comment after the old value.
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            *old = new.into_value().expect("a value");
            *old.decor_mut() = decor;
        }
        _ => doc[key] = new,
    }
    Ok(doc.to_string())
}

/// Check `new` (the edited text of the profile at `path`) by reading it as
/// a profile, and write it if it reads. The file is replaced whole (a
/// crash leaves the old or the new one).
pub fn save(path: &Path, new: &str) -> Result<Profile, ConfigError> {
    let checked = profile::parse(new, path, &profile::base_dir(path))?;
    spinneret_core::fs::write_replacing(path, new.as_bytes()).map_err(|e| ConfigError::Whole {
        path: path.display().to_string(),
        message: format!("cannot write the profile: {e}"),
    })?;
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = "# My profile.\nmirror = \"m\"   # where it goes\n\n# The news.\n[[url]]\nurl = \"https://news.example/\"  # daily\ndepth = 1\n\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n";

    #[test]
    fn adding_keeps_comments_and_layout() {
        let text = add(
            PROFILE,
            &Entry::Url {
                url: "https://blog.example/".into(),
                depth: None,
                category: Some("Blogs".into()),
                schedule: None,
            },
        )
        .unwrap();
        assert_eq!(
            text,
            "# My profile.\nmirror = \"m\"   # where it goes\n\n# The news.\n[[url]]\nurl = \"https://news.example/\"  # daily\ndepth = 1\n\n[[url]]\nurl = \"https://blog.example/\"\ncategory = \"Blogs\"\n\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n"
        );
        let text = add(
            &text,
            &Entry::Interest {
                title: "Crawlers".into(),
                keywords: vec!["web".into(), "crawler".into()],
                engines: vec!["wiki".into()],
                max_results: Some(5),
                depth: None,
                exact_phrase: None,
                exclude_words: vec!["seo".into()],
                schedule: Some("7d".into()),
                site: None,
            },
        )
        .unwrap();
        assert!(text.ends_with("[[interest]]\ntitle = \"Crawlers\"\nkeywords = [\"web\", \"crawler\"]\nengines = [\"wiki\"]\nmax_results = 5\nexclude_words = [\"seo\"]\nschedule = \"7d\"\n"), "{text}");
        let text = add(&text, &Entry::Exclude("https://news.example/ads/".into())).unwrap();
        assert!(
            text.contains(
                "mirror = \"m\"   # where it goes\nexclude = [\"https://news.example/ads/\"]\n"
            ),
            "{text}"
        );
        let engine = Entry::Engine {
            name: "searx".into(),
            source: "builtin:searxng".into(),
            config: Some(serde_json::json!({"base": "https://searx.example/", "safesearch": 1})),
            hosts: vec![],
        };
        let text = add(&text, &engine).unwrap();
        assert!(text.contains("[[engine]]\nname = \"searx\"\nsource = \"builtin:searxng\"\nconfig = { base = \"https://searx.example/\", safesearch = 1 }\n"), "{text}");
        assert_eq!(
            add(&text, &engine).unwrap_err(),
            "the profile has a [[engine]] with name = \"searx\" already"
        );
    }

    #[test]
    fn detectors_and_the_index_are_added_and_removed() {
        let config = serde_json::json!({"title": "Mine"});
        let with = add(
            PROFILE,
            &Entry::Index {
                source: "builtin:websnatcher-index".into(),
                config: Some(config.clone()),
            },
        )
        .unwrap();
        assert!(
            with.ends_with(
                "\n[index]\nsource = \"builtin:websnatcher-index\"\nconfig = { title = \"Mine\" }\n"
            ),
            "{with}"
        );
        let again = add(
            &with,
            &Entry::Index {
                source: "x.wasm".into(),
                config: None,
            },
        );
        assert_eq!(
            again.unwrap_err(),
            "the profile has an [index] already (source = \"builtin:websnatcher-index\"); `profile remove FILE index` first"
        );
        let detector = Entry::Detector {
            source: "builtin:maintenance".into(),
            config: Some(serde_json::json!({"content_changed": false})),
        };
        let with = add(&with, &detector).unwrap();
        assert!(
            with.contains("[[detector]]\nsource = \"builtin:maintenance\"\nconfig = { content_changed = false }\n"),
            "{with}"
        );
        assert!(add(&with, &detector).is_err());
        let without = remove(&with, Named::Detector("builtin:maintenance")).unwrap();
        let without = remove(&without, Named::Index).unwrap();
        assert_eq!(without, PROFILE);
        assert_eq!(
            remove(PROFILE, Named::Index).unwrap_err(),
            "the profile has no [index] (it uses the default)"
        );
    }

    #[test]
    fn removing_finds_by_name_and_says_what_is_there() {
        let text = remove(PROFILE, Named::Url("https://news.example/")).unwrap();
        assert_eq!(
            text,
            "# My profile.\nmirror = \"m\"   # where it goes\n\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n"
        );
        assert_eq!(
            remove(PROFILE, Named::Engine("searx")).unwrap_err(),
            "the profile has no [[engine]] with name = \"searx\"; it has \"wiki\""
        );
        assert_eq!(
            remove(PROFILE, Named::Interest("x")).unwrap_err(),
            "the profile has no [[interest]]"
        );
    }

    #[test]
    fn removing_takes_the_entry_and_its_own_comment_only() {
        // The template's commented settings are above the first [[url]]:
        // removing it leaves them.
        let text = new_profile("mirror", &["https://news.example/".into()]).unwrap();
        let url = |u: &str| Entry::Url {
            url: u.into(),
            depth: None,
            category: None,
            schedule: None,
        };
        let with = add(&text, &url("https://blog.example/")).unwrap();
        let without = remove(&with, Named::Url("https://news.example/")).unwrap();
        assert_eq!(
            without,
            text.replace("https://news.example/", "https://blog.example/")
        );
        let without = remove(&with, Named::Url("https://blog.example/")).unwrap();
        assert_eq!(without, text);

        // A comment closing an entry, a heading over several and each
        // entry's own comment: only the removed entry's own goes.
        let text = "mirror = \"m\"\n\n# ---- Pages ----\n\n# The news.\n[[url]]\nurl = \"https://news.example/\"\n# (daily)\n\n# The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\n\n# Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n[engine.config]\n# Its own words.\nlimit = 3\n\n# The end.\n";
        assert_eq!(
            remove(text, Named::Url("https://news.example/")).unwrap(),
            "mirror = \"m\"\n\n# ---- Pages ----\n\n# (daily)\n\n# The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\n\n# Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n[engine.config]\n# Its own words.\nlimit = 3\n\n# The end.\n"
        );
        assert_eq!(
            remove(text, Named::Url("https://blog.example/")).unwrap(),
            "mirror = \"m\"\n\n# ---- Pages ----\n\n# The news.\n[[url]]\nurl = \"https://news.example/\"\n# (daily)\n\n# Search.\n[[engine]]\nname = \"wiki\"\nsource = \"builtin:mediawiki\"\n[engine.config]\n# Its own words.\nlimit = 3\n\n# The end.\n"
        );
        assert_eq!(
            remove(text, Named::Engine("wiki")).unwrap(),
            "mirror = \"m\"\n\n# ---- Pages ----\n\n# The news.\n[[url]]\nurl = \"https://news.example/\"\n# (daily)\n\n# The blog.\n[[url]]  # weekly\nurl = \"https://blog.example/\"\n\n# The end.\n"
        );
        // The last table's comment above it that is not its own ends the file.
        let text = "mirror = \"m\"\n[[url]]\nurl = \"https://news.example/\"\n# A note.\n\n[index]\nsource = \"builtin:websnatcher-index\"\n";
        assert_eq!(
            remove(text, Named::Index).unwrap(),
            "mirror = \"m\"\n[[url]]\nurl = \"https://news.example/\"\n# A note.\n"
        );
    }

    #[test]
    fn setting_keeps_the_comment_and_checks_numbers() {
        let text = set(PROFILE, "mirror", "/srv/mirror").unwrap();
        assert!(
            text.starts_with("# My profile.\nmirror = \"/srv/mirror\"   # where it goes\n"),
            "{text}"
        );
        let text = set(&text, "keep_runs", "3").unwrap();
        assert!(
            text.contains("mirror = \"/srv/mirror\"   # where it goes\nkeep_runs = 3\n"),
            "{text}"
        );
        assert_eq!(
            set(PROFILE, "keep_runs", "three").unwrap_err(),
            "`keep_runs` is a whole number, not \"three\""
        );
        assert!(
            set(PROFILE, "url", "x")
                .unwrap_err()
                .contains("not a setting")
        );
    }

    #[test]
    fn a_new_profile_reads_as_one_once_it_has_something_to_collect() {
        let text = new_profile("mirror", &[]).unwrap();
        let err = profile::parse(&text, Path::new("p.toml"), Path::new("/tmp")).unwrap_err();
        assert!(err.to_string().contains("nothing to collect"), "{err}");
        let text = new_profile("mirror", &["https://example.org/".into()]).unwrap();
        let p = profile::parse(&text, Path::new("p.toml"), Path::new("/tmp")).unwrap();
        assert_eq!(p.mirror, Path::new("/tmp/mirror"));
        assert_eq!(p.urls[0].url.as_str(), "https://example.org/");
        // Its commented settings are settings once the `#` goes.
        let uncommented = text
            .replace("# keep_runs = 1 ", "keep_runs = 2 ")
            .replace("# schedule = ", "schedule = ");
        let p = profile::parse(&uncommented, Path::new("p.toml"), Path::new("/tmp")).unwrap();
        assert_eq!(p.keep_runs, 2);
    }
}
