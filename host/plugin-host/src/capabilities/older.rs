//! The host imports of plugin APIs 0.2.0 to 0.4.0, for plugins built
//! against them. They are 0.5.0's (0.2.0's and 0.3.0's but
//! `output.append-file`): each call goes to the newest version's
//! implementation in the modules beside this one,
//! converting the two types that are generated per version (a log level,
//! an HTTP response). `types` is shared (see [`crate::bindings`]).

use super::PluginState;
use crate::bindings::since_v0_5_0::host as new;

/// Implement an older version's host imports (its `host` bindings module)
/// by calling the newest's.
macro_rules! forward_to_newest {
    ($old:path $(, $append_file:ident)?) => {
        const _: () = {
            use $old as old;

            impl old::log::Host for PluginState {
                fn log(&mut self, level: old::log::Level, message: String) -> wasmtime::Result<()> {
                    use old::log::Level as L;
                    let level = match level {
                        L::Trace => new::log::Level::Trace,
                        L::Debug => new::log::Level::Debug,
                        L::Info => new::log::Level::Info,
                        L::Warn => new::log::Level::Warn,
                        L::Error => new::log::Level::Error,
                    };
                    new::log::Host::log(self, level, message)
                }
            }

            impl old::clock::Host for PluginState {
                fn now(&mut self) -> wasmtime::Result<i64> {
                    new::clock::Host::now(self)
                }
            }

            impl old::kv::Host for PluginState {
                fn get(&mut self, key: String) -> wasmtime::Result<Option<Vec<u8>>> {
                    new::kv::Host::get(self, key)
                }
                fn set(
                    &mut self,
                    key: String,
                    value: Vec<u8>,
                ) -> wasmtime::Result<Result<(), String>> {
                    new::kv::Host::set(self, key, value)
                }
                fn delete(&mut self, key: String) -> wasmtime::Result<()> {
                    new::kv::Host::delete(self, key)
                }
            }

            impl old::http::Host for PluginState {
                fn get(
                    &mut self,
                    target: String,
                ) -> wasmtime::Result<Result<old::http::Response, String>> {
                    Ok(
                        new::http::Host::get(self, target)?.map(|r| old::http::Response {
                            status: r.status,
                            content_type: r.content_type,
                            body: r.body,
                            truncated: r.truncated,
                        }),
                    )
                }
            }

            impl old::output::Host for PluginState {
                fn write(
                    &mut self,
                    path: String,
                    contents: Vec<u8>,
                ) -> wasmtime::Result<Result<(), String>> {
                    new::output::Host::write(self, path, contents)
                }
                fn append(
                    &mut self,
                    path: String,
                    contents: Vec<u8>,
                ) -> wasmtime::Result<Result<(), String>> {
                    new::output::Host::append(self, path, contents)
                }
                fn exists(&mut self, path: String) -> wasmtime::Result<bool> {
                    new::output::Host::exists(self, path)
                }
                fn read(&mut self, path: String) -> wasmtime::Result<Option<Vec<u8>>> {
                    new::output::Host::read(self, path)
                }
                fn rename(
                    &mut self,
                    source: String,
                    destination: String,
                ) -> wasmtime::Result<Result<(), String>> {
                    new::output::Host::rename(self, source, destination)
                }
                $(
                    fn $append_file(
                        &mut self,
                        path: String,
                        part: String,
                    ) -> wasmtime::Result<Result<(), String>> {
                        new::output::Host::append_file(self, path, part)
                    }
                )?
            }
        };
    };
}

forward_to_newest!(crate::bindings::since_v0_2_0::host);
forward_to_newest!(crate::bindings::since_v0_3_0::host);
forward_to_newest!(crate::bindings::since_v0_4_0::host, append_file);
