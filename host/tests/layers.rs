//! The house's rule: dependencies point down. Cargo already refuses a
//! cycle between crates; this checks that each layered crate depends only
//! on the workspace crates below it (the app layer, `spinneret-app`, below
//! the command line, the `spinneret` crate, at the top). Inside every
//! crate, no two modules use each other, directly or round a longer cycle
//! (read from the sources' `crate::`, `super::` and `self::` paths).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn host() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace crates `manifest` depends on (normal and build dependencies).
fn workspace_dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    ["dependencies", "build-dependencies"]
        .iter()
        .filter_map(|k| doc.get(*k).and_then(|v| v.as_table()))
        .flat_map(|t| t.keys().cloned())
        .filter(|name| name.starts_with("spinneret"))
        .collect()
}

#[test]
fn each_layer_depends_only_on_the_layers_below() {
    const CORE: &str = "spinneret-core";
    const STORE: &str = "spinneret-store";
    const NET: &str = "spinneret-net";
    const PLUGIN_HOST: &str = "spinneret-plugin-host";
    const CRAWL: &str = "spinneret-crawl";
    const BUNDLE: &str = "spinneret-bundle";
    const CONFIG: &str = "spinneret-config";
    let layers: [(&str, &[&str]); 13] = [
        ("core", &[]),
        ("store", &[CORE]),
        ("net", &[CORE]),
        ("plugin-host", &[CORE]),
        ("crawl", &[CORE, STORE, NET, PLUGIN_HOST]),
        ("bundle", &[CORE, PLUGIN_HOST]),
        ("config", &[CORE, STORE, NET, PLUGIN_HOST, CRAWL, BUNDLE]),
        ("report", &[CORE, STORE, PLUGIN_HOST, CRAWL, CONFIG]),
        ("worm", &[CORE, STORE, CRAWL, CONFIG]),
        ("library", &[CORE, STORE, CONFIG]),
        (
            "collect",
            &[
                CORE,
                STORE,
                NET,
                PLUGIN_HOST,
                CRAWL,
                CONFIG,
                "spinneret-report",
            ],
        ),
        (
            "serve",
            &[CORE, STORE, CONFIG, "spinneret-library", "spinneret-worm"],
        ),
        // The app layer: a run over every stage, below the command line
        // (the `spinneret` crate), which calls it.
        (
            "app",
            &[
                CORE,
                STORE,
                NET,
                PLUGIN_HOST,
                CRAWL,
                CONFIG,
                "spinneret-report",
                "spinneret-worm",
                "spinneret-library",
                "spinneret-collect",
            ],
        ),
    ];
    for (dir, allowed) in layers {
        let manifest = host().join(dir).join("Cargo.toml");
        for dep in workspace_dependencies(&manifest) {
            assert!(
                allowed.contains(&dep.as_str()),
                "{} depends on {dep}; it may depend only on {allowed:?}",
                manifest.display()
            );
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The length of the comment, string or character literal `rest` starts
/// with (0 when it starts with code); `after_ident` says whether an
/// identifier's character stands right before it (so an `r` or `b` there
/// ends a name, not starts a raw or byte string).
fn literal_len(rest: &str, after_ident: bool) -> usize {
    if rest.starts_with("//") {
        return rest.find('\n').unwrap_or(rest.len());
    }
    if rest.starts_with("/*") {
        // Block comments nest.
        let (mut depth, mut i) = (0usize, 0);
        while i < rest.len() {
            if rest[i..].starts_with("/*") {
                depth += 1;
                i += 2;
            } else if rest[i..].starts_with("*/") {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            } else {
                i += rest[i..].chars().next().map_or(1, char::len_utf8);
            }
        }
        return rest.len();
    }
    let raw = rest.strip_prefix("br").or_else(|| rest.strip_prefix('r'));
    if let Some(after_r) = raw.filter(|_| !after_ident) {
        let hashes = after_r.len() - after_r.trim_start_matches('#').len();
        if after_r[hashes..].starts_with('"') {
            let close = format!("\"{}", "#".repeat(hashes));
            let body = rest.len() - after_r.len() + hashes + 1;
            return rest[body..]
                .find(&close)
                .map_or(rest.len(), |end| body + end + close.len());
        }
    }
    if rest.starts_with('"') {
        let mut escaped = false;
        for (i, c) in rest.char_indices().skip(1) {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => return i + 1,
                _ => escaped = false,
            }
        }
        return rest.len();
    }
    if let Some(after) = rest.strip_prefix('\'') {
        // A character literal ('x', '\n', '\u{7f}'), not a lifetime ('a).
        let mut chars = after.chars();
        return match chars.next() {
            Some('\\') => after
                .get(2..)
                .and_then(|escaped| escaped.find('\''))
                .map_or(0, |end| end + 4),
            Some(c) if chars.next() == Some('\'') => c.len_utf8() + 2,
            _ => 0,
        };
    }
    0
}

/// `text` with its comments and its string and character literals blanked
/// out (line breaks kept, so lines still count): the code alone.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let after_ident = text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        match literal_len(&text[i..], after_ident) {
            0 => {
                let c = text[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
            n => {
                out.extend(text[i..i + n].chars().filter(|&c| c == '\n'));
                out.push(' ');
                i += n;
            }
        }
    }
    out
}

/// The tokens of `code` (as [`code_only`] leaves it), each with its line:
/// names, `::`, and every other character but white space alone.
fn tokens(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            let len = if c.is_alphanumeric() || c == '_' {
                rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len())
            } else if rest.starts_with("::") {
                2
            } else {
                c.len_utf8()
            };
            if !c.is_whitespace() {
                found.push((n + 1, rest[..len].to_string()));
            }
            rest = &rest[len..];
        }
    }
    found
}

/// The paths of the use tree (or the path in an expression) at `tokens[k]`
/// (`super::{a::B, c}`, `crate::d::*`, `super::e::f(…)`), each as its
/// segments; and where it ends.
fn use_tree(tokens: &[(usize, String)], mut k: usize) -> (Vec<Vec<String>>, usize) {
    let token = |k: usize| tokens.get(k).map_or("", |(_, t)| t.as_str());
    let mut prefix = Vec::new();
    loop {
        match token(k) {
            "{" => {
                k += 1;
                let mut all = Vec::new();
                while !matches!(token(k), "}" | "") {
                    let (paths, next) = use_tree(tokens, k);
                    all.extend(paths.into_iter().map(|p| [prefix.clone(), p].concat()));
                    // Past a comma, and past anything this reading does
                    // not know (an attribute), so that it ends.
                    k = if token(next) == "," || next == k {
                        next.max(k) + 1
                    } else {
                        next
                    };
                }
                return (all, k + 1);
            }
            "*" => return (vec![prefix], k + 1),
            t if t.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                prefix.push(t.to_string());
                k += 1;
                if token(k) == "as" {
                    k += 2;
                }
                if token(k) != "::" {
                    return (vec![prefix], k);
                }
                k += 1;
            }
            _ => return (vec![prefix], k),
        }
    }
}

/// Where `path`, written in module `module`, leads: the absolute module
/// path it names (`crate::`, `super::` and `self::` resolved), or `None`
/// for a path that does not start in this crate.
fn resolve(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut absolute = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module.split_last()?.1.to_vec(),
        _ => return None,
    };
    for segment in rest {
        match segment.as_str() {
            "super" => {
                absolute.pop()?;
            }
            "self" => {}
            name => absolute.push(name.to_string()),
        }
    }
    Some(absolute)
}

/// The module path of the Rust file `file` under a crate's `src`
/// (`lib.rs` and `main.rs`: the root; `a.rs` and `a/mod.rs`: `a`; `a/b.rs`: `a::b`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(path.as_slice(), [only] if only == "lib" || only == "main")
        || path.last().is_some_and(|l| l == "mod")
    {
        path.pop();
    }
    path
}

/// One module's use of another: the file and line it is written at, and
/// the path as written.
type Use = (PathBuf, usize, String);

/// The uses of one parent's modules by each other: by (user, used), where.
type SiblingUses = BTreeMap<(String, String), Vec<Use>>;

/// Each use, in the crate whose sources are in `src`, of a module by
/// another that is neither its ancestor nor its descendant, as the use of
/// one sibling module by another: by their parent, (user, used) and where.
/// A module's inline modules count as the module (but its
/// `#[cfg(test)]` ones: see [`paths_in`]); the crate's binaries
/// (`src/bin`) are crates of their own and left out.
fn sibling_uses(src: &Path) -> BTreeMap<Vec<String>, SiblingUses> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|f| !f.starts_with(src.join("bin")));
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(src, f)).collect();
    let mut uses: BTreeMap<Vec<String>, SiblingUses> = BTreeMap::new();
    for file in &files {
        let of_file = module_path(src, file);
        let tokens = tokens(&code_only(&std::fs::read_to_string(file).unwrap()));
        for (line, module, path) in paths_in(&of_file, &tokens) {
            let Some(absolute) = resolve(&module, &path) else {
                continue;
            };
            let used = (0..=absolute.len())
                .rev()
                .map(|n| &absolute[..n])
                .find(|prefix| modules.contains(*prefix))
                .unwrap_or_default();
            let common = of_file.iter().zip(used).take_while(|(a, b)| a == b).count();
            let (Some(user), Some(target)) = (of_file.get(common), used.get(common)) else {
                // One is the other's ancestor: a child uses its parent's
                // items, a parent its children's.
                continue;
            };
            uses.entry(of_file[..common].to_vec())
                .or_default()
                .entry((user.clone(), target.clone()))
                .or_default()
                .push((file.clone(), line, path.join("::")));
        }
    }
    uses
}

/// The `crate::`, `super::` and `self::` paths in a file of module
/// `of_file` (its `tokens`), each with its line and the module it is
/// written in (the file's, or an inline module of it), but those of its
/// `#[cfg(test)]` modules.
fn paths_in(
    of_file: &[String],
    tokens: &[(usize, String)],
) -> Vec<(usize, Vec<String>, Vec<String>)> {
    let token = |k: usize| tokens.get(k).map_or("", |(_, t)| t.as_str());
    let mut found = Vec::new();
    // The inline modules open here: each with the depth of braces inside
    // it, and whether it is compiled for tests only.
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0;
    let mut k = 0;
    while k < tokens.len() {
        match token(k) {
            "mod" if token(k + 2) == "{" => {
                let attribute: Vec<&str> = (k.saturating_sub(7)..k).map(token).collect();
                let for_tests = attribute == ["#", "[", "cfg", "(", "test", ")", "]"];
                inline.push((token(k + 1).to_string(), depth + 1, for_tests));
                k += 2;
                continue;
            }
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|(_, d, _)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "crate" | "super" | "self"
                if token(k + 1) == "::" && k.checked_sub(1).map_or("", token) != "::" =>
            {
                let module: Vec<String> = of_file
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(m, _, _)| m.clone()))
                    .collect();
                let (paths, next) = use_tree(tokens, k);
                // A module's unit tests use what they test and the crate's
                // test support, and nothing uses them: they close no cycle.
                if !inline.iter().any(|(_, _, for_tests)| *for_tests) {
                    found.extend(paths.into_iter().map(|p| (tokens[k].0, module.clone(), p)));
                }
                k = next;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    found
}

/// A cycle among the `edges` (user, used) of one parent's modules, if
/// there is one: its modules in order, the first repeated at the end.
fn a_cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let mut next_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges {
        next_of.entry(from).or_default().push(to);
    }
    for (from, to) in edges {
        // The shortest way back from `to` to `from`, breadth first.
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([to.as_str()]);
        while let Some(at) = queue.pop_front() {
            if at == from {
                // From `from` back to `to`, then turned round.
                let mut back = vec![from.as_str()];
                while let Some(&step) = back.last().filter(|s| **s != to) {
                    back.push(came_from[step]);
                }
                back.reverse();
                let cycle = std::iter::once(from.as_str()).chain(back);
                return Some(cycle.map(str::to_string).collect());
            }
            for &next in next_of.get(at).into_iter().flatten() {
                if next != to && !came_from.contains_key(next) {
                    came_from.insert(next, at);
                    queue.push_back(next);
                }
            }
        }
    }
    None
}

#[test]
fn no_two_modules_of_a_crate_use_each_other() {
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(host())
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    srcs.push(host().join("src"));
    srcs.sort();
    srcs.dedup();
    let mut cycles = Vec::new();
    for src in &srcs {
        for (parent, uses) in sibling_uses(src) {
            let mut edges: BTreeSet<(String, String)> = uses.keys().cloned().collect();
            while let Some(cycle) = a_cycle(&edges) {
                let place = |m: &str| [parent.clone(), vec![m.to_string()]].concat().join("::");
                let named: Vec<String> = cycle.iter().map(|m| place(m)).collect();
                let mut said = format!("{}: {}", src.display(), named.join(" → "));
                for pair in cycle.windows(2) {
                    let (file, line, path) = &uses[&(pair[0].clone(), pair[1].clone())][0];
                    said.push_str(&format!("\n    {}:{line} `{path}`", file.display()));
                }
                cycles.push(said);
                // Each cycle once: its first step is gone from the graph.
                edges.remove(&(cycle[0].clone(), cycle[1].clone()));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "modules that use each other (move what both need to the module it belongs to, or to a new one, so that uses point one way):\n{}",
        cycles.join("\n")
    );
}

/// The reading of module uses itself, on a crate made for it: uses
/// through a `use` group, an expression's path and `super::super::` are
/// found, and the cycles they make; paths in comments and strings, and in
/// a module's unit tests, are no uses.
#[test]
fn the_module_reading_finds_the_uses_and_their_cycles() {
    let src = std::env::temp_dir().join(format!("layers-modules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(src.join("d")).unwrap();
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        (
            "a.rs",
            "use super::{b::{self, B}, d};\n#[cfg(test)]\nmod tests {\n    use crate::c::C;\n}\n",
        ),
        (
            "b.rs",
            "// super::c::C\nconst S: &str = \"crate::c::{\";\nfn f() {\n    let _ = '}';\n    crate::a::A::new();\n}\n",
        ),
        ("c.rs", "use super::a;\n"),
        ("d/mod.rs", "mod e;\nmod f;\n"),
        ("d/e.rs", "use super::f::F;\n"),
        ("d/f.rs", "use crate::d::e::E;\nuse super::super::c;\n"),
    ];
    for (file, text) in files {
        std::fs::write(src.join(file), text).unwrap();
    }
    let uses = sibling_uses(&src);
    std::fs::remove_dir_all(&src).unwrap();
    let edges = |parent: &[&str]| -> BTreeSet<(String, String)> {
        let parent: Vec<String> = parent.iter().map(|m| m.to_string()).collect();
        uses[&parent].keys().cloned().collect()
    };
    let pairs = |list: &[(&str, &str)]| -> BTreeSet<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let root = edges(&[]);
    assert_eq!(
        root,
        pairs(&[("a", "b"), ("a", "d"), ("b", "a"), ("c", "a"), ("d", "c")])
    );
    assert_eq!(
        a_cycle(&root),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    let d = edges(&["d"]);
    assert_eq!(d, pairs(&[("e", "f"), ("f", "e")]));
    assert_eq!(a_cycle(&d), Some(vec!["e".into(), "f".into(), "e".into()]));
    assert_eq!(
        a_cycle(&pairs(&[("a", "d"), ("c", "a"), ("d", "c")])).map(|c| c.len()),
        Some(4)
    );
    assert_eq!(a_cycle(&pairs(&[("a", "b"), ("c", "a")])), None);
}
