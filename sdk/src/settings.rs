//! Checking a plugin's configuration table.

/// Refuse a setting `config` has that is not one of `keys`, with a message
/// naming the plugin and the settings it knows.
pub fn check_keys(plugin: &str, config: &serde_json::Value, keys: &[&str]) -> Result<(), String> {
    let Some(unknown) = config
        .as_object()
        .and_then(|o| o.keys().find(|k| !keys.contains(&k.as_str())))
    else {
        return Ok(());
    };
    Err(match keys {
        [only] => format!("{plugin}: unknown setting `{unknown}`; the only setting is `{only}`"),
        _ => format!(
            "{plugin}: unknown setting `{unknown}`; the settings are {}",
            keys.join(", ")
        ),
    })
}

/// The setting `key` of `config` as a list of strings: none when absent,
/// refused with a message naming the plugin when it is not a list of strings.
pub fn strings(plugin: &str, config: &serde_json::Value, key: &str) -> Result<Vec<String>, String> {
    let Some(value) = config.get(key) else {
        return Ok(Vec::new());
    };
    let wrong = || format!("{plugin}: `{key}` must be a list of strings, not {value}");
    value
        .as_array()
        .ok_or_else(wrong)?
        .iter()
        .map(|v| v.as_str().map(str::to_string).ok_or_else(wrong))
        .collect()
}

/// The setting `key` of `config` as a file name in the task's output
/// directory: `default` when absent, refused with a message naming the
/// plugin when it is not a non-empty string.
pub fn file_name(
    plugin: &str,
    config: &serde_json::Value,
    key: &str,
    default: &str,
) -> Result<String, String> {
    match config.get(key) {
        None => Ok(default.to_string()),
        Some(serde_json::Value::String(f)) if !f.trim().is_empty() => Ok(f.clone()),
        Some(other) => Err(format!(
            "{plugin}: `{key}` must be a file name, not {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_file_name() {
        let c = serde_json::json!({"file": "out.xml", "empty": "", "n": 3});
        assert_eq!(file_name("p", &c, "file", "d.xml").unwrap(), "out.xml");
        assert_eq!(file_name("p", &c, "none", "d.xml").unwrap(), "d.xml");
        assert_eq!(
            file_name("p", &c, "empty", "d.xml").unwrap_err(),
            "p: `empty` must be a file name, not \"\""
        );
        assert_eq!(
            file_name("p", &c, "n", "d.xml").unwrap_err(),
            "p: `n` must be a file name, not 3"
        );
    }

    #[test]
    fn reads_a_list_of_strings() {
        let c = serde_json::json!({"a": ["x", "y"], "b": "x", "c": [1]});
        assert_eq!(strings("p", &c, "a").unwrap(), vec!["x", "y"]);
        assert!(strings("p", &c, "none").unwrap().is_empty());
        assert_eq!(
            strings("p", &c, "b").unwrap_err(),
            "p: `b` must be a list of strings, not \"x\""
        );
        assert_eq!(
            strings("p", &c, "c").unwrap_err(),
            "p: `c` must be a list of strings, not [1]"
        );
    }

    #[test]
    fn names_the_unknown_setting_and_the_known_ones() {
        let c = serde_json::json!({"fiel": 1});
        assert_eq!(
            check_keys("p", &c, &["file"]).unwrap_err(),
            "p: unknown setting `fiel`; the only setting is `file`"
        );
        assert_eq!(
            check_keys("p", &c, &["a", "b"]).unwrap_err(),
            "p: unknown setting `fiel`; the settings are a, b"
        );
        assert!(check_keys("p", &serde_json::json!({"a": 1}), &["a", "b"]).is_ok());
    }
}
