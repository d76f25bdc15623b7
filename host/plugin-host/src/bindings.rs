//! Host-side bindings generated from the WIT packages in `wit/`: one module
//! per API version this host runs ([`crate::api::ApiVersion`]), one module
//! per world inside it. The host imports (`types`, `log`, `clock`, `kv`,
//! `http`, `output`) are generated once per version, in its `reporter`
//! module, and shared by its other worlds, so [`super::capabilities::PluginState`]
//! implements them once for every world. The newest version's modules are
//! re-exported here: the runners, the conversions and the SDK speak it.

pub use since_v0_2_0::*;

/// `spinneret:plugin@0.2.0`, from `wit/since_v0.2.0/`.
pub mod since_v0_2_0 {
    /// The `reporter` world (generated code; its documentation is the WIT's).
    #[allow(missing_docs)]
    pub mod reporter {
        wasmtime::component::bindgen!({
            path: "../../wit/since_v0.2.0",
            world: "reporter",
            imports: { default: trappable },
        });
    }

    /// The imports every world shares, as generated in [`reporter`].
    pub use reporter::spinneret::plugin as host;

    macro_rules! world_bindings {
        ($(#[$doc:meta])* $module:ident, $world:literal) => {
            $(#[$doc])*
            #[allow(missing_docs)]
            pub mod $module {
                wasmtime::component::bindgen!({
                    path: "../../wit/since_v0.2.0",
                    world: $world,
                    imports: { default: trappable },
                    with: {
                        "spinneret:plugin/types": super::host::types,
                        "spinneret:plugin/log": super::host::log,
                        "spinneret:plugin/clock": super::host::clock,
                        "spinneret:plugin/kv": super::host::kv,
                        "spinneret:plugin/http": super::host::http,
                    },
                });
            }
        };
    }

    world_bindings!(
        /// The `change-detector` world.
        detector,
        "change-detector"
    );
    world_bindings!(
        /// The `parser` world.
        parser,
        "parser"
    );
    world_bindings!(
        /// The `search-engine` world.
        search_engine,
        "search-engine"
    );
    world_bindings!(
        /// The `policy` world.
        policy,
        "policy"
    );
    world_bindings!(
        /// The `fetch-hook` world.
        fetch_hook,
        "fetch-hook"
    );
}
