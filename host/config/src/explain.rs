//! A TOML mistake said as what to write instead: the parser's and serde's
//! messages ("unknown field", "invalid type: map, expected a sequence",
//! "expected i64") name a type where a person needs the key they meant,
//! the brackets to write, the quotes to drop.

use std::ops::Range;

/// The keys of the two tables a configuration's keys are written in: its
/// top level and a `[[task]]`; the one that is not the table of an unknown
/// key may be where it belongs.
pub(super) struct Tables {
    /// The top level's keys (the settings, `task`, `plugin`, ...).
    pub(super) top: Vec<String>,
    /// A `[[task]]`'s keys.
    pub(super) task: Vec<String>,
}

/// What a person should read for the TOML `message` at `span` of `text`:
/// the message made actionable where it is one of the common mistakes,
/// else the message as it is.
pub(super) fn toml_error(
    text: &str,
    span: Option<Range<usize>>,
    message: &str,
    tables: &Tables,
) -> String {
    let start = span.as_ref().map_or(0, |s| s.start);
    let at = span.and_then(|s| text.get(s)).unwrap_or_default().trim();
    if let Some(said) = unknown_key(message, tables) {
        return said;
    }
    if message.starts_with("invalid type: map, expected a sequence")
        && let Some(name) = at.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
        && !name.starts_with('[')
    {
        let name = name.trim();
        return format!(
            "`[{name}]` is one table, and `{name}` is a list of them: write [[{name}]] (two brackets), once before each of them"
        );
    }
    if message.starts_with("invalid type:")
        && let Some(name) = at.strip_prefix("[[").and_then(|s| s.strip_suffix("]]"))
    {
        let name = name.trim();
        return format!(
            "`[[{name}]]` makes a list of tables, and `{name}` is one table: write [{name}] (one pair of brackets)"
        );
    }
    if let Some(said) = quoted_value(text, at, start, message) {
        return said;
    }
    message.to_string()
}

/// "unknown field `concurency`, expected one of `concurrency`, ...": the
/// key meant, when one is near; the table it belongs to, when it is the
/// other table's key; else the keys of its table.
fn unknown_key(message: &str, tables: &Tables) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, expected) = rest.split_once('`')?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let in_task = known.contains(&"kind") && known.contains(&"top");
    let at_top = known.contains(&"concurrency");
    let docs = "every key is in docs/configuration.md";
    if in_task && tables.top.iter().any(|k| k == key) {
        return Some(format!(
            "`{key}` is a global setting, and a key written after [[task]] belongs to that task: move it above the first [[task]]"
        ));
    }
    if at_top && tables.task.iter().any(|k| k == key) {
        return Some(format!(
            "`{key}` is a key of a task: write it under the [[task]] it is for (after that task's [[task]] line)"
        ));
    }
    if let Some(meant) = nearest(key, &known) {
        return Some(format!(
            "unknown key `{key}`; did you mean `{meant}`? ({docs})"
        ));
    }
    let table = match (in_task, at_top) {
        (true, _) => " of a [[task]]",
        (_, true) => " at the top level",
        _ => "",
    };
    Some(match known.is_empty() {
        true => format!("unknown key `{key}`; this table has no keys ({docs})"),
        false => format!(
            "unknown key `{key}`; the keys{table} are: {} ({docs})",
            known.join(", ")
        ),
    })
}

/// The one of `known` that `key` most likely means: the same once case
/// and `-` are set aside (`User-Agent`), the one key it is the last or
/// first word of (`delay`: `per_site_delay`), or one at most a third of
/// its letters away (two for a short key), the nearest first.
fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let plain = key.to_ascii_lowercase().replace('-', "_");
    if let Some(k) = known.iter().find(|k| **k == plain) {
        return Some(k);
    }
    let words: Vec<&str> = known
        .iter()
        .filter(|k| {
            k.strip_suffix(plain.as_str())
                .is_some_and(|r| r.ends_with('_'))
                || k.strip_prefix(plain.as_str())
                    .is_some_and(|r| r.starts_with('_'))
        })
        .copied()
        .collect();
    if let [one] = words[..] {
        return Some(one);
    }
    let most = (plain.chars().count() / 3).max(2);
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(&plain, k), *k))
        .filter(|(d, _)| *d <= most)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `concurrency = "4"`: a number or a boolean written in quotes (`at`,
/// which starts at `start` of `text`), said with the line to write.
fn quoted_value(text: &str, at: &str, start: usize, message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid type: string \"")?;
    let (value, expected) = rest.split_once("\", expected ")?;
    let is_number = value.trim().parse::<f64>().is_ok();
    let is_bool = matches!(value.trim(), "true" | "false");
    let wants_number = expected.starts_with('i')
        || expected.starts_with('u')
        || expected.starts_with('f')
        || expected.contains("integer")
        || expected.contains("number");
    let wants_bool = expected.contains("boolean");
    let before = text.get(..start).unwrap_or_default();
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    // `key = "4"` (an array's item has no key of its own on its line).
    let key = match line.split_once('=') {
        Some((key, _)) if !key.trim().is_empty() && at.starts_with(['"', '\'']) => key.trim(),
        _ => "the key",
    };
    match (is_number && wants_number, is_bool && wants_bool) {
        (true, _) => Some(format!(
            "`{key}` takes a number, written without quotes: {key} = {}",
            value.trim()
        )),
        (_, true) => Some(format!(
            "`{key}` takes true or false, written without quotes: {key} = {}",
            value.trim()
        )),
        _ if wants_number => Some(format!(
            "`{key}` takes a number, written without quotes (e.g. {key} = 4), not \"{value}\""
        )),
        _ if wants_bool => Some(format!(
            "`{key}` takes true or false, written without quotes, not \"{value}\""
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_key_is_the_one_meant() {
        let known = [
            "concurrency",
            "per_site_connections",
            "user_agent",
            "timeout",
        ];
        assert_eq!(nearest("concurency", &known), Some("concurrency"));
        assert_eq!(nearest("User-Agent", &known), Some("user_agent"));
        assert_eq!(nearest("timout", &known), Some("timeout"));
        assert_eq!(nearest("connections", &known), Some("per_site_connections"));
        assert_eq!(nearest("bogus", &known), None);
    }
}
