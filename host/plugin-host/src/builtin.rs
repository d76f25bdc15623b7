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
