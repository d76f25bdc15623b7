//! Signatures: ed25519 keys in minisign's format (`minisign -V` verifies a
//! bundle's manifest with the same public key), signing a bundle's
//! manifest, and the trust store — the public keys whose signatures this
//! user accepts, one `KEYID.pub` file each.

use super::archive::Bundle;
use crate::BundleError;
use minisign::{KeyPair, PublicKey, PublicKeyBox, SecretKey, SecretKeyBox, SignatureBox};
use std::io::Cursor;
use std::path::{Path, PathBuf};

/// A key's identifier as minisign prints it (16 upper-case hex digits).
pub fn key_id(keynum: &[u8]) -> String {
    let mut le = [0u8; 8];
    le.copy_from_slice(&keynum[..8]);
    format!("{:016X}", u64::from_le_bytes(le))
}

/// Write a new key pair: `PREFIX.key` (secret, mode 0600) and `PREFIX.pub`.
/// With a password the secret key is encrypted (scrypt, as minisign does).
/// Returns the key's id. Refuses to overwrite an existing key.
pub fn keygen(prefix: &Path, password: Option<String>) -> Result<String, BundleError> {
    let secret = prefix.with_extension("key");
    let public = prefix.with_extension("pub");
    for p in [&secret, &public] {
        if p.exists() {
            return Err(BundleError::Refused(format!(
                "{} exists; keygen never overwrites a key (choose another --out)",
                p.display()
            )));
        }
    }
    let KeyPair { pk, sk } = match password {
        Some(pw) => KeyPair::generate_encrypted_keypair(Some(pw)),
        None => KeyPair::generate_unencrypted_keypair(),
    }
    .map_err(|e| BundleError::Io(format!("cannot generate a key pair: {e}")))?;
    let id = key_id(pk.keynum());
    let sk_text = sk
        .to_box(Some(&format!("spinneret plugin signing key {id}")))
        .map_err(|e| BundleError::Invalid(e.to_string()))?
        .to_string();
    let pk_text = pk
        .to_box()
        .map_err(|e| BundleError::Invalid(e.to_string()))?
        .to_string();
    write_private(&secret, &sk_text)
        .map_err(|e| BundleError::Io(format!("cannot write {}: {e}", secret.display())))?;
    std::fs::write(&public, pk_text)
        .map_err(|e| BundleError::Io(format!("cannot write {}: {e}", public.display())))?;
    Ok(id)
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// Read a secret key; an encrypted one needs `password`.
pub fn read_secret_key(path: &Path, password: Option<String>) -> Result<SecretKey, BundleError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BundleError::Io(format!("cannot read the key {}: {e}", path.display())))?;
    let boxed = SecretKeyBox::from_string(&text).map_err(|e| {
        BundleError::Invalid(format!(
            "{} is not a minisign secret key: {e}",
            path.display()
        ))
    })?;
    let encrypted = boxed
        .clone()
        .into_unencrypted_secret_key()
        .map(|k| k.is_encrypted())
        .unwrap_or(true);
    if encrypted && password.is_none() {
        return Err(BundleError::Invalid(format!(
            "{} is protected by a password: pass --password-env VAR naming a variable that holds it",
            path.display()
        )));
    }
    let key = if encrypted {
        boxed.into_secret_key(password)
    } else {
        boxed.into_unencrypted_secret_key()
    };
    key.map_err(|e| BundleError::Invalid(format!("cannot open the key {}: {e}", path.display())))
}

/// Sign `bundle`'s manifest with `key`; returns the key id.
pub fn sign(bundle: &mut Bundle, key: &SecretKey) -> Result<String, BundleError> {
    let pk = PublicKey::from_secret_key(key).map_err(|e| BundleError::Invalid(e.to_string()))?;
    let trusted = format!(
        "spinneret plugin {} {} sha256:{}",
        bundle.manifest.name,
        bundle.manifest.version,
        bundle.manifest.sha256.as_deref().unwrap_or("-")
    );
    let sig = minisign::sign(
        Some(&pk),
        key,
        Cursor::new(bundle.manifest_text.as_bytes()),
        Some(&trusted),
        None,
    )
    .map_err(|e| BundleError::Invalid(format!("cannot sign: {e}")))?;
    bundle.signature = Some(sig.into_string());
    Ok(key_id(pk.keynum()))
}

/// Parse a public key given as a `.pub` file's path or its base64 line.
pub fn parse_public_key(key: &str) -> Result<PublicKey, BundleError> {
    let path = Path::new(key);
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BundleError::Io(format!("cannot read {}: {e}", path.display())))?;
        return PublicKeyBox::from_string(&text)
            .and_then(PublicKeyBox::into_public_key)
            .or_else(|_| PublicKey::from_base64(text.trim()))
            .map_err(|e| {
                BundleError::Invalid(format!(
                    "{} is not a minisign public key: {e}",
                    path.display()
                ))
            });
    }
    PublicKey::from_base64(key.trim()).map_err(|_| {
        BundleError::Invalid(format!(
            "`{key}` is neither a public key file nor a minisign public key (the base64 line of a .pub file)"
        ))
    })
}

/// The public keys this user trusts.
pub struct TrustStore {
    dir: PathBuf,
}

/// Who signed a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signer {
    /// A key of the trust store, by id.
    Trusted(String),
    /// Nobody: installed with `--allow-unsigned`.
    Unsigned,
}

impl Signer {
    /// How `install.toml` records it: the key's id, or `unsigned`.
    pub fn to_record(&self) -> String {
        match self {
            Signer::Trusted(id) => id.clone(),
            Signer::Unsigned => "unsigned".into(),
        }
    }

    /// Read back what [`Signer::to_record`] wrote.
    pub fn from_record(s: &str) -> Signer {
        match s {
            "unsigned" => Signer::Unsigned,
            id => Signer::Trusted(id.to_string()),
        }
    }
}

impl std::fmt::Display for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Signer::Trusted(id) => write!(f, "signed by key {id}"),
            Signer::Unsigned => f.write_str("unsigned"),
        }
    }
}

impl TrustStore {
    /// The trust store in `dir` (created on first `add`).
    pub fn new(dir: PathBuf) -> TrustStore {
        TrustStore { dir }
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Trust `key`; returns its id.
    pub fn add(&self, key: &PublicKey) -> Result<String, BundleError> {
        let id = key_id(key.keynum());
        let text = key
            .to_box()
            .map_err(|e| BundleError::Invalid(e.to_string()))?
            .to_string();
        spinneret_core::fs::write_atomically(&self.dir.join(format!("{id}.pub")), text).map_err(
            |e| {
                BundleError::Io(format!(
                    "cannot write to the trust store {}: {e}",
                    self.dir.display()
                ))
            },
        )?;
        Ok(id)
    }

    /// Stop trusting the key `id`; whether it was trusted.
    pub fn remove(&self, id: &str) -> Result<bool, BundleError> {
        let path = self.dir.join(format!("{}.pub", id.to_ascii_uppercase()));
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(BundleError::Io(format!(
                "cannot remove {}: {e}",
                path.display()
            ))),
        }
    }

    /// The trusted keys' ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".pub"))
                    .map(str::to_string)
            })
            .collect();
        ids.sort();
        ids
    }

    fn key(&self, id: &str) -> Option<PublicKey> {
        PublicKey::from_file(self.dir.join(format!("{id}.pub"))).ok()
    }

    /// Check `bundle`'s signature: it must be made by a trusted key over the
    /// manifest's exact bytes. Unsigned bundles pass only if `allow_unsigned`.
    pub fn check(&self, bundle: &Bundle, allow_unsigned: bool) -> Result<Signer, BundleError> {
        let name = format!("{} {}", bundle.manifest.name, bundle.manifest.version);
        let Some(sig) = &bundle.signature else {
            return if allow_unsigned {
                Ok(Signer::Unsigned)
            } else {
                Err(BundleError::Refused(format!(
                    "{name} is not signed; install only what you can verify, or pass --allow-unsigned if you trust where it came from"
                )))
            };
        };
        let sig = SignatureBox::from_string(sig).map_err(|e| {
            BundleError::Refused(format!("{name}: its signature cannot be read: {e}"))
        })?;
        let id = key_id(sig.keynum());
        let key = self.key(&id).ok_or_else(|| {
            BundleError::Refused(format!(
                "{name} is signed by key {id}, which is not in your trust store ({}); if you trust its author, `spinneret plugin trust add KEY.pub` first",
                self.dir.display()
            ))
        })?;
        minisign::verify(
            &key,
            &sig,
            Cursor::new(bundle.manifest_text.as_bytes()),
            true,
            false,
            false,
        )
        .map_err(|e| {
            BundleError::Refused(format!("{name}: the signature by key {id} does not match its manifest ({e}); the bundle was altered after signing"))
        })?;
        Ok(Signer::Trusted(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;

    fn bundle() -> Bundle {
        let m = Manifest::parse("schema = 1\nname = \"p\"\nversion = \"1.0.0\"\n", "t").unwrap();
        Bundle::new(m, b"\0asm".to_vec(), None, None)
    }

    #[test]
    fn signatures_are_checked_against_the_trust_store() {
        let dir = tempfile::tempdir().unwrap();
        let id = keygen(&dir.path().join("me"), None).unwrap();
        let key = read_secret_key(&dir.path().join("me.key"), None).unwrap();
        let trust = TrustStore::new(dir.path().join("trust"));
        let mut b = bundle();
        let e = crate::error::expect_err(trust.check(&b, false), "refused");
        assert!(e.contains("is not signed"), "{e}");
        assert_eq!(trust.check(&b, true).unwrap(), Signer::Unsigned);
        assert_eq!(sign(&mut b, &key).unwrap(), id);
        let e = crate::error::expect_err(trust.check(&b, false), "refused");
        assert!(
            e.contains(&format!(
                "signed by key {id}, which is not in your trust store"
            )),
            "{e}"
        );
        let pk = parse_public_key(dir.path().join("me.pub").to_str().unwrap()).unwrap();
        assert_eq!(trust.add(&pk).unwrap(), id);
        assert_eq!(trust.ids(), std::slice::from_ref(&id));
        assert_eq!(trust.check(&b, false).unwrap(), Signer::Trusted(id.clone()));
        // A changed manifest no longer matches its signature.
        b.manifest_text = b.manifest_text.replace("1.0.0", "1.0.1");
        let e = crate::error::expect_err(trust.check(&b, false), "refused");
        assert!(e.contains("does not match its manifest"), "{e}");
        assert!(trust.remove(&id).unwrap());
        assert!(trust.ids().is_empty());
    }

    #[test]
    fn keys_are_never_overwritten_and_passwords_are_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        keygen(&dir.path().join("k"), Some("pw".into())).unwrap();
        let e = crate::error::expect_err(keygen(&dir.path().join("k"), None), "refused");
        assert!(e.contains("never overwrites"), "{e}");
        let e =
            crate::error::expect_err(read_secret_key(&dir.path().join("k.key"), None), "invalid");
        assert!(e.contains("--password-env"), "{e}");
        assert!(read_secret_key(&dir.path().join("k.key"), Some("pw".into())).is_ok());
    }
}
