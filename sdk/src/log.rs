//! Logging: lines go to the host's log under the plugin's name; natively
//! (under `cargo test`) they go to stderr.

/// How loud a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Very detailed tracing.
    Trace,
    /// Detail for whoever debugs the plugin.
    Debug,
    /// Normal progress.
    Info,
    /// Something looks wrong but the plugin goes on.
    Warn,
    /// Something failed.
    Error,
}

/// Write one line to the host's log.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::spinneret::plugin::log as host;
        let level = match level {
            Level::Trace => host::Level::Trace,
            Level::Debug => host::Level::Debug,
            Level::Info => host::Level::Info,
            Level::Warn => host::Level::Warn,
            Level::Error => host::Level::Error,
        };
        host::log(level, message);
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message}");
}

/// Log at info level.
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// Log at warn level.
pub fn warn(message: &str) {
    log(Level::Warn, message);
}
