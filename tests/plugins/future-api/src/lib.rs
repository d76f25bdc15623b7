//! A reporter built against `spinneret:plugin@0.6.0`, which this host does
//! not implement: the host must refuse it before instantiating it.

// wit-bindgen's exports are `#[export_name]` functions, which the workspace's
// `unsafe_code` lint counts as unsafe; the SDK's plugins get them from the
// SDK's macros, this one straight from wit-bindgen.
// Its bindings are generated here, undocumented, as a plugin author's would be.
#![allow(unsafe_code, missing_docs)]

wit_bindgen::generate!({
    inline: "
        package spinneret:plugin@0.6.0;
        interface reporter-api {
            finish: func() -> result<_, string>;
        }
        world reporter {
            export reporter-api;
        }
    ",
    world: "reporter",
});

struct Future;

impl exports::spinneret::plugin::reporter_api::Guest for Future {
    fn finish() -> Result<(), String> {
        Ok(())
    }
}

#[cfg(target_arch = "wasm32")]
export!(Future);
