//! A reporter built against `spinneret:plugin@0.3.0`, which this host does
//! not implement: the host must refuse it before instantiating it.

wit_bindgen::generate!({
    inline: "
        package spinneret:plugin@0.3.0;
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
