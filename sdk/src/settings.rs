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

#[cfg(test)]
mod tests {
    use super::*;

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
