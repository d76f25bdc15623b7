//! The plugin's key-value space, kept by the host across runs (at most
//! 1 MiB per value, 16 MiB in all). Natively, under `cargo test`, it is an
//! in-memory map per thread.

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static MEMORY: std::cell::RefCell<std::collections::BTreeMap<String, Vec<u8>>> =
        const { std::cell::RefCell::new(std::collections::BTreeMap::new()) };
}

/// The value under `key`.
pub fn get(key: &str) -> Option<Vec<u8>> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::spinneret::plugin::kv::get(key)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        MEMORY.with(|m| m.borrow().get(key).cloned())
    }
}

/// Store `value` under `key`; fails when the plugin's quota would be exceeded.
pub fn set(key: &str, value: &[u8]) -> Result<(), String> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::spinneret::plugin::kv::set(key, value)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        MEMORY.with(|m| m.borrow_mut().insert(key.to_string(), value.to_vec()));
        Ok(())
    }
}

/// Remove `key`.
pub fn delete(key: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::spinneret::plugin::kv::delete(key)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        MEMORY.with(|m| m.borrow_mut().remove(key));
    }
}

/// Forget everything (natively only: a test's fresh start).
#[cfg(not(target_arch = "wasm32"))]
pub fn clear() {
    MEMORY.with(|m| m.borrow_mut().clear());
}
