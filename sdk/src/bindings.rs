//! The bindings every plugin kind shares: the WIT `types` and the host
//! imports (`log`, `clock`, `kv`, `http`), generated once from the `host`
//! world. Each kind's module (e.g. [`crate::reporter`]) reuses them, so one
//! `CheckResult` type serves every kind and the test fixtures.
#![allow(missing_docs, clippy::all)]

wit_bindgen::generate!({
    path: "../wit/since_v0.5.0",
    world: "host",
    generate_all,
});
