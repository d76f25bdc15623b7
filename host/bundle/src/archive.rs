//! The `.spkg` file: a gzip-compressed tar archive of `plugin.toml`,
//! `plugin.wasm`, an optional `README.md` and, once signed,
//! `plugin.toml.minisig` (a minisign signature of `plugin.toml`'s bytes).
//! Nothing else may be in it; sizes are capped before anything is
//! decompressed into memory.

use super::manifest::{COMPONENT_FILE, Manifest};
use crate::BundleError;
use std::io::Read;
use std::path::Path;

/// The manifest's file name in a bundle.
pub const MANIFEST_FILE: &str = "plugin.toml";
/// The README's file name in a bundle.
pub const README_FILE: &str = "README.md";
/// The signature's file name in a bundle.
pub const SIGNATURE_FILE: &str = "plugin.toml.minisig";

/// The largest component a bundle may carry.
pub const MAX_COMPONENT: u64 = 64 << 20;
/// The largest manifest, README or signature.
const MAX_TEXT: u64 = 1 << 20;
/// The largest `.spkg` file (compressed) read or downloaded.
pub const MAX_SPKG: u64 = MAX_COMPONENT + (4 << 20);
/// The most a bundle's archive may decompress to: its four entries at their
/// caps, with room for headers and padding. Reading stops there whatever the
/// archive's headers declare, so a small file cannot expand without bound.
const MAX_UNPACKED: u64 = MAX_COMPONENT + 3 * MAX_TEXT + (64 << 10);

/// A reader that fails once more than `left` bytes have come through.
struct Bounded<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other(format!(
                "it unpacks to more than {} MiB",
                MAX_UNPACKED >> 20
            )));
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// A plugin bundle in memory.
#[derive(Clone, Debug)]
pub struct Bundle {
    /// `plugin.toml`, exactly as stored (the signature covers these bytes).
    pub manifest_text: String,
    /// The parsed manifest.
    pub manifest: Manifest,
    /// The component.
    pub component: Vec<u8>,
    /// The README, if any.
    pub readme: Option<String>,
    /// The minisign signature of `manifest_text`, if signed.
    pub signature: Option<String>,
}

impl Bundle {
    /// Assemble a bundle from its parts (the manifest's text is made from
    /// `manifest`).
    pub fn new(
        manifest: Manifest,
        component: Vec<u8>,
        readme: Option<String>,
        signature: Option<String>,
    ) -> Bundle {
        Bundle {
            manifest_text: manifest.to_text(),
            manifest,
            component,
            readme,
            signature,
        }
    }

    /// Read a bundle from the bytes of a `.spkg`; `origin` names it in
    /// messages. Only the structure is checked here: see
    /// [`super::verify`] for hashes, signature and compatibility.
    pub fn from_spkg(bytes: &[u8], origin: &str) -> Result<Bundle, BundleError> {
        let not_a_bundle = |why: String| {
            BundleError::Invalid(format!("{origin} is not a spinneret plugin bundle: {why}"))
        };
        let unpacked = Bounded {
            inner: flate2::read::GzDecoder::new(bytes),
            left: MAX_UNPACKED,
        };
        let mut archive = tar::Archive::new(unpacked);
        let (mut manifest, mut component, mut readme, mut signature) = (None, None, None, None);
        // Raw entries: the tar crate would otherwise read a GNU long name or
        // a PAX header whole into memory, whatever size it declares.
        let entries = archive
            .entries()
            .map_err(|e| not_a_bundle(e.to_string()))?
            .raw(true);
        for entry in entries {
            let entry = entry.map_err(|e| not_a_bundle(e.to_string()))?;
            let kind = entry.header().entry_type();
            if !kind.is_file() {
                return Err(not_a_bundle(format!(
                    "it holds an entry of tar type `{}` (a bundle holds only plain files)",
                    kind.as_byte().escape_ascii()
                )));
            }
            let path = entry
                .path()
                .map_err(|e| not_a_bundle(e.to_string()))?
                .to_string_lossy()
                .into_owned();
            let (slot, cap): (&mut Option<Vec<u8>>, u64) = match path.as_str() {
                MANIFEST_FILE => (&mut manifest, MAX_TEXT),
                COMPONENT_FILE => (&mut component, MAX_COMPONENT),
                README_FILE => (&mut readme, MAX_TEXT),
                SIGNATURE_FILE => (&mut signature, MAX_TEXT),
                other => return Err(not_a_bundle(format!("unexpected entry `{other}`"))),
            };
            if slot.is_some() {
                return Err(not_a_bundle(format!("`{path}` appears twice")));
            }
            let declared = entry.header().size().unwrap_or(0);
            let mut data = Vec::with_capacity(declared.min(cap + 1) as usize);
            entry
                .take(cap + 1)
                .read_to_end(&mut data)
                .map_err(|e| not_a_bundle(e.to_string()))?;
            if data.len() as u64 > cap {
                return Err(not_a_bundle(format!(
                    "`{path}` is larger than {} MiB",
                    cap >> 20
                )));
            }
            *slot = Some(data);
        }
        let text = |name: &str, data: Vec<u8>| {
            String::from_utf8(data).map_err(|_| not_a_bundle(format!("`{name}` is not UTF-8")))
        };
        Bundle::from_parts(
            text(
                MANIFEST_FILE,
                manifest.ok_or_else(|| not_a_bundle(format!("no `{MANIFEST_FILE}`")))?,
            )?,
            component.ok_or_else(|| not_a_bundle(format!("no `{COMPONENT_FILE}`")))?,
            readme.map(|r| text(README_FILE, r)).transpose()?,
            signature.map(|s| text(SIGNATURE_FILE, s)).transpose()?,
            origin,
        )
    }

    /// A bundle from its parts as they travelled (the manifest's text kept
    /// byte for byte: a signature covers it).
    pub fn from_parts(
        manifest_text: String,
        component: Vec<u8>,
        readme: Option<String>,
        signature: Option<String>,
        origin: &str,
    ) -> Result<Bundle, BundleError> {
        if component.len() as u64 > MAX_COMPONENT {
            return Err(BundleError::Invalid(format!(
                "{origin}: the component is larger than {} MiB",
                MAX_COMPONENT >> 20
            )));
        }
        let manifest = Manifest::parse(&manifest_text, &format!("{origin}: {MANIFEST_FILE}"))?;
        if let Some(c) = manifest
            .component
            .as_deref()
            .filter(|c| *c != COMPONENT_FILE)
        {
            return Err(BundleError::Invalid(format!(
                "{origin}: {MANIFEST_FILE} names the component `{c}`, but in a bundle it is always `{COMPONENT_FILE}`; not a bundle `spinneret plugin pack` made"
            )));
        }
        Ok(Bundle {
            manifest_text,
            manifest,
            component,
            readme,
            signature,
        })
    }

    /// Read a `.spkg` file.
    pub fn read(path: &Path) -> Result<Bundle, BundleError> {
        let cannot =
            |e: std::io::Error| BundleError::Io(format!("cannot read {}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(cannot)?;
        let mut bytes = Vec::new();
        file.take(MAX_SPKG + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        if bytes.len() as u64 > MAX_SPKG {
            return Err(BundleError::Invalid(format!(
                "{} is larger than {} MiB; that is no plugin bundle",
                path.display(),
                MAX_SPKG >> 20
            )));
        }
        Bundle::from_spkg(&bytes, &path.display().to_string())
    }

    /// The `.spkg` bytes.
    pub fn to_spkg(&self) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let mut tar = tar::Builder::new(gz);
        let mut add = |name: &str, data: &[u8]| {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_cksum();
            tar.append_data(&mut header, name, data)
                .expect("writing to memory");
        };
        add(MANIFEST_FILE, self.manifest_text.as_bytes());
        add(COMPONENT_FILE, &self.component);
        if let Some(r) = &self.readme {
            add(README_FILE, r.as_bytes());
        }
        if let Some(s) = &self.signature {
            add(SIGNATURE_FILE, s.as_bytes());
        }
        tar.into_inner()
            .and_then(|gz| gz.finish())
            .expect("writing to memory")
    }

    /// Write the bundle to `path` atomically (a temporary file beside it,
    /// then a rename).
    pub fn write(&self, path: &Path) -> Result<(), BundleError> {
        spinneret_core::fs::write_atomically(path, self.to_spkg())
            .map_err(|e| BundleError::Io(format!("cannot write {}: {e}", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::parse("schema = 1\nname = \"p\"\nversion = \"0.1.0\"\n", "test").unwrap()
    }

    #[test]
    fn a_bundle_round_trips() {
        let b = Bundle::new(
            manifest(),
            b"\0asm".to_vec(),
            Some("# p\n".into()),
            Some("sig".into()),
        );
        let again = Bundle::from_spkg(&b.to_spkg(), "b.spkg").unwrap();
        assert_eq!(again.manifest_text, b.manifest_text);
        assert_eq!(again.component, b"\0asm");
        assert_eq!(again.readme.as_deref(), Some("# p\n"));
        assert_eq!(again.signature.as_deref(), Some("sig"));
    }

    #[test]
    fn foreign_archives_are_refused() {
        let e = crate::error::expect_err(Bundle::from_spkg(b"not gzip", "x.spkg"), "invalid");
        assert!(
            e.starts_with("x.spkg is not a spinneret plugin bundle"),
            "{e}"
        );
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        let mut h = tar::Header::new_gnu();
        h.set_size(2);
        h.set_cksum();
        tar.append_data(&mut h, "run.sh", &b"hi"[..]).unwrap();
        let bytes = tar.into_inner().unwrap().finish().unwrap();
        let e = crate::error::expect_err(Bundle::from_spkg(&bytes, "x.spkg"), "invalid");
        assert!(e.contains("unexpected entry `run.sh`"), "{e}");
    }

    /// A gzip stream of one tar header for `path` of type `kind` declaring
    /// `declared` bytes, then `sent` zero bytes of them.
    fn one_entry(kind: u8, path: &str, declared: u64, sent: u64) -> Vec<u8> {
        use std::io::Write;
        let mut h = tar::Header::new_gnu();
        h.set_path(path).unwrap();
        h.set_entry_type(tar::EntryType::new(kind));
        h.set_size(declared);
        h.set_cksum();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(h.as_bytes()).unwrap();
        let zeros = vec![0u8; 1 << 20];
        let mut left = sent;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            gz.write_all(&zeros[..n]).unwrap();
            left -= n as u64;
        }
        gz.finish().unwrap()
    }

    #[test]
    fn long_name_and_pax_headers_are_refused_unread() {
        for kind in [b'L', b'x', b'K', b'g'] {
            let bytes = one_entry(kind, "././@LongLink", 2 << 30, 4 << 20);
            let e = crate::error::expect_err(Bundle::from_spkg(&bytes, "bomb.spkg"), "invalid");
            assert!(
                e.starts_with(
                    "bomb.spkg is not a spinneret plugin bundle: it holds an entry of tar type"
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn an_archive_that_unpacks_past_the_caps_is_refused() {
        let bytes = one_entry(b'0', COMPONENT_FILE, 200 << 20, 200 << 20);
        let e = crate::error::expect_err(Bundle::from_spkg(&bytes, "big.spkg"), "invalid");
        assert!(e.contains("`plugin.wasm` is larger than 64 MiB"), "{e}");
        let mut limited = Bounded {
            inner: &[0u8; 100][..],
            left: 10,
        };
        let mut out = Vec::new();
        let e = limited.read_to_end(&mut out).unwrap_err();
        assert_eq!(out.len(), 10);
        assert!(e.to_string().contains("unpacks to more than"), "{e}");
    }
}
