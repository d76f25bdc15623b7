//! Host-side bindings generated from the WIT packages in `wit/`: one module
//! per API version this host runs ([`crate::api::ApiVersion`]), one module
//! per world inside it. The host imports (`types`, `log`, `clock`, `kv`,
//! `http`, `output`) are generated once per version, in its `reporter`
//! module, and shared by its other worlds, so [`super::capabilities::PluginState`]
//! implements them once per version (the same code, through a macro).
//!
//! Records, variants and enums derive serde's `Serialize` and `Deserialize`
//! with their Rust names (fields in snake case, cases in camel case), as
//! the SDK's types are named: `spinneret plugin run` reads its fixtures
//! and prints what a plugin returns in that form (flags do not derive).
//!
//! The `types` interface is the same in 0.2.0 to 0.5.0, so the older
//! versions' are mapped onto 0.5.0's Rust types: a check result or a
//! document is one type whichever version a plugin speaks, and only the
//! types each plugin interface defines itself are converted for an older
//! plugin (in the runner of its world). The newest version's modules are
//! re-exported here: the runners, the conversions and the SDK speak it.

pub use since_v0_5_0::*;

/// The bindings of one version's package: its `reporter` world (with the
/// host imports every world shares) and its other worlds, which reuse them.
macro_rules! version_bindings {
    ($path:literal $(, $iface:literal => $module:path)*) => {
        /// The `reporter` world (generated code; its documentation is the WIT's).
        #[allow(missing_docs)]
        pub mod reporter {
            wasmtime::component::bindgen!({
                path: $path,
                world: "reporter",
                imports: { default: trappable },
                additional_derives: [serde::Serialize, serde::Deserialize],
                with: { $($iface: $module,)* },
            });
        }

        /// The imports every world shares, as generated in [`reporter`].
        pub use reporter::spinneret::plugin as host;

        macro_rules! world_bindings {
            ($doc:literal, $name:ident, $world:literal) => {
                #[doc = $doc]
                #[allow(missing_docs)]
                pub mod $name {
                    wasmtime::component::bindgen!({
                        path: $path,
                        world: $world,
                        imports: { default: trappable },
                        additional_derives: [serde::Serialize, serde::Deserialize],
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

        world_bindings!("The `change-detector` world.", detector, "change-detector");
        world_bindings!("The `parser` world.", parser, "parser");
        world_bindings!("The `search-engine` world.", search_engine, "search-engine");
        world_bindings!("The `policy` world.", policy, "policy");
        world_bindings!("The `fetch-hook` world.", fetch_hook, "fetch-hook");
    };
}

/// The `collection-index` world of one version (from 0.3.0 on), reusing the
/// host imports of its `reporter` module.
macro_rules! collection_index_bindings {
    ($path:literal) => {
        /// The `collection-index` world.
        #[allow(missing_docs)]
        pub mod collection_index {
            wasmtime::component::bindgen!({
                path: $path,
                world: "collection-index",
                imports: { default: trappable },
                additional_derives: [serde::Serialize, serde::Deserialize],
                with: {
                    "spinneret:plugin/types": super::host::types,
                    "spinneret:plugin/log": super::host::log,
                    "spinneret:plugin/clock": super::host::clock,
                    "spinneret:plugin/kv": super::host::kv,
                    "spinneret:plugin/http": super::host::http,
                    "spinneret:plugin/output": super::host::output,
                },
            });
        }
    };
}

/// `spinneret:plugin@0.5.0`, from `wit/since_v0.5.0/`: the newest.
pub mod since_v0_5_0 {
    version_bindings!("../../wit/since_v0.5.0");

    collection_index_bindings!("../../wit/since_v0.5.0");
}

/// `spinneret:plugin@0.4.0`, from `wit/since_v0.4.0/`, its `types` mapped
/// onto 0.5.0's (the interface did not change).
pub mod since_v0_4_0 {
    version_bindings!(
        "../../wit/since_v0.4.0",
        "spinneret:plugin/types" => crate::bindings::since_v0_5_0::host::types
    );

    collection_index_bindings!("../../wit/since_v0.4.0");
}

/// `spinneret:plugin@0.3.0`, from `wit/since_v0.3.0/`, its `types` mapped
/// onto 0.5.0's (the interface did not change).
pub mod since_v0_3_0 {
    version_bindings!(
        "../../wit/since_v0.3.0",
        "spinneret:plugin/types" => crate::bindings::since_v0_5_0::host::types
    );

    // The `collection-index` world is new in 0.3.0 (so in no older module).
    collection_index_bindings!("../../wit/since_v0.3.0");
}

/// `spinneret:plugin@0.2.0`, from `wit/since_v0.2.0/`, its `types` mapped
/// onto 0.5.0's (the interface did not change).
pub mod since_v0_2_0 {
    version_bindings!(
        "../../wit/since_v0.2.0",
        "spinneret:plugin/types" => crate::bindings::since_v0_5_0::host::types
    );
}
