//! The built-in plugins, compiled to components by `build.rs` and embedded.

include!(concat!(env!("OUT_DIR"), "/builtin_plugins.rs"));

/// The component bytes of the built-in plugin `name`.
pub fn builtin(name: &str) -> Option<&'static [u8]> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// The names of the built-in plugins.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|(n, _)| *n)
}

/// The built-in plugin `name`, or a message naming the built-ins there are.
pub fn known(name: &str) -> Result<&'static [u8], String> {
    builtin(name).ok_or_else(|| {
        format!(
            "there is no built-in plugin `{name}`; the built-ins are: {}",
            names().collect::<Vec<_>>().join(", ")
        )
    })
}
