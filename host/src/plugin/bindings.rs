//! Host-side bindings generated from the WIT package in `wit/`.

/// The `reporter` world (generated code; its documentation is the WIT's).
#[allow(missing_docs)]
pub mod reporter {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "reporter",
        imports: { default: trappable },
    });
}
