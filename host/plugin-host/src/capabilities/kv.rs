//! The `kv` capability: a plugin's key-value space, shared by all its
//! instances in a process, loaded from the store before the plugin first
//! runs and saved after, within a quota.

use super::PluginState;
use crate::bindings::reporter::spinneret::plugin::kv;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Largest value a plugin may keep under one key.
pub const KV_VALUE_MAX: usize = 1 << 20;
/// Longest key.
pub const KV_KEY_MAX: usize = 1 << 10;
/// Most bytes (keys and values) one plugin may keep.
pub const KV_QUOTA: usize = 16 << 20;

/// A plugin's key-value space: shared by all its instances in a process,
/// loaded from the store before the plugin first runs and saved after
/// (the store's `load_kv` and `save_kv`).
#[derive(Clone, Debug, Default)]
pub struct KvSpace(Arc<Mutex<KvData>>);

#[derive(Debug, Default)]
struct KvData {
    entries: BTreeMap<String, Vec<u8>>,
    bytes: usize,
    dirty: bool,
}

impl KvSpace {
    /// A space holding `entries`.
    pub fn with(entries: BTreeMap<String, Vec<u8>>) -> KvSpace {
        let bytes = entries.iter().map(|(k, v)| k.len() + v.len()).sum();
        KvSpace(Arc::new(Mutex::new(KvData {
            entries,
            bytes,
            dirty: false,
        })))
    }

    fn data(&self) -> std::sync::MutexGuard<'_, KvData> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The entries, if anything changed since [`KvSpace::with`].
    pub fn changed(&self) -> Option<BTreeMap<String, Vec<u8>>> {
        let d = self.data();
        d.dirty.then(|| d.entries.clone())
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.data().entries.get(key).cloned()
    }

    /// Store `value` under `key`, within the limits.
    pub fn set(&self, key: String, value: Vec<u8>) -> Result<(), String> {
        if key.len() > KV_KEY_MAX {
            return Err(format!("a key may hold at most {KV_KEY_MAX} bytes"));
        }
        if value.len() > KV_VALUE_MAX {
            return Err(format!("a value may hold at most {KV_VALUE_MAX} bytes"));
        }
        let mut d = self.data();
        let old = d.entries.get(&key).map_or(0, |v| key.len() + v.len());
        let bytes = d.bytes - old + key.len() + value.len();
        if bytes > KV_QUOTA {
            return Err(format!(
                "the plugin's key-value quota of {} MiB is used up; delete keys it no longer needs",
                KV_QUOTA >> 20
            ));
        }
        d.bytes = bytes;
        d.dirty = true;
        d.entries.insert(key, value);
        Ok(())
    }

    /// Remove `key`.
    pub fn delete(&self, key: &str) {
        let mut d = self.data();
        if let Some(v) = d.entries.remove(key) {
            d.bytes -= key.len() + v.len();
            d.dirty = true;
        }
    }
}

impl kv::Host for PluginState {
    fn get(&mut self, key: String) -> wasmtime::Result<Option<Vec<u8>>> {
        Ok(self.kv.get(&key))
    }
    fn set(&mut self, key: String, value: Vec<u8>) -> wasmtime::Result<Result<(), String>> {
        Ok(self.kv.set(key, value))
    }
    fn delete(&mut self, key: String) -> wasmtime::Result<()> {
        self.kv.delete(&key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_space_keeps_its_quota_and_knows_what_changed() {
        let kv = KvSpace::with(BTreeMap::from([("a".to_string(), b"1".to_vec())]));
        assert_eq!(kv.changed(), None);
        assert_eq!(kv.get("a"), Some(b"1".to_vec()));
        kv.set("b".into(), vec![0; 10]).unwrap();
        kv.delete("a");
        assert_eq!(
            kv.changed(),
            Some(BTreeMap::from([("b".to_string(), vec![0; 10])]))
        );
        assert!(kv.set("big".into(), vec![0; KV_VALUE_MAX + 1]).is_err());
        for i in 0..15 {
            kv.set(format!("k{i}"), vec![0; KV_VALUE_MAX]).unwrap();
        }
        let err = kv.set("k99".into(), vec![0; KV_VALUE_MAX]).unwrap_err();
        assert!(err.contains("quota of 16 MiB"), "{err}");
        // Replacing a value counts only the difference.
        kv.set("k0".into(), vec![1; KV_VALUE_MAX]).unwrap();
    }
}
