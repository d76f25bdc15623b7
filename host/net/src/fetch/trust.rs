//! Which servers' certificates the fetcher trusts: the system's
//! authorities, those of a CA file the user gives (`--cacert`, `ca_file`)
//! for a server of their own, or, with `--insecure` (`insecure = true`),
//! any certificate at all; and what a refused certificate means, said with
//! what to do about it.

use std::path::Path;

/// The certificates trusted beside the system's, and whether any is.
#[derive(Clone, Debug, Default)]
pub struct CertificateTrust {
    /// Accept any certificate (expired, self-signed, for another name):
    /// lychee's and curl's `--insecure`, for one's own test servers.
    pub accept_invalid: bool,
    /// Authorities trusted beside the system's, read from the CA files.
    pub extra_roots: Vec<reqwest::Certificate>,
}

impl CertificateTrust {
    /// Trust these settings on a client being built.
    pub(super) fn apply(&self, builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
        let builder = builder.tls_danger_accept_invalid_certs(self.accept_invalid);
        match self.extra_roots.is_empty() {
            true => builder,
            false => builder.tls_certs_merge(self.extra_roots.iter().cloned()),
        }
    }

    /// Add the authorities of the PEM file at `path` (one certificate or
    /// a bundle), or say why it cannot be read as one.
    pub fn add_ca_file(&mut self, path: &Path) -> Result<(), String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
        let certs = reqwest::Certificate::from_pem_bundle(&bytes).map_err(|e| {
            format!(
                "the CA file {} is not PEM certificates ({e}); give the authority's certificate as PEM (-----BEGIN CERTIFICATE-----)",
                path.display()
            )
        })?;
        if certs.is_empty() {
            return Err(format!(
                "the CA file {} holds no certificate; give the authority's certificate as PEM (-----BEGIN CERTIFICATE-----)",
                path.display()
            ));
        }
        self.extra_roots.extend(certs);
        Ok(())
    }
}

/// What a refused certificate means, when `said` (an error chain) is one:
/// the reason in words and what to do about it.
pub(super) fn certificate_refused(said: &str) -> Option<String> {
    let (_, why) = said.split_once("invalid peer certificate: ")?;
    let reason = if why.contains("CaUsedAsEndEntity") {
        "the server presents a certificate authority's certificate as its own (a self-signed certificate made with CA:TRUE), which no CA file can vouch for"
    } else if why.contains("UnknownIssuer") {
        "it is signed by an authority this machine does not trust (a self-signed certificate, or a private CA)"
    } else if why.contains("Expired") {
        "it has expired"
    } else if why.contains("NotValidYet") {
        "it is not valid yet"
    } else if why.contains("NotValidForName") {
        "it is not for this host name"
    } else if why.contains("Revoked") {
        "it has been revoked"
    } else {
        "it does not verify"
    };
    Some(format!(
        "the server's certificate is not trusted: {reason} ({why}); if the server is yours, give its authority's certificate with --cacert FILE (the configuration's ca_file), or check it without checking certificates with --insecure (insecure = true)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_certificate_says_what_to_do() {
        assert_eq!(
            certificate_refused(
                "client error (Connect): invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))"
            )
            .as_deref(),
            Some(
                "the server's certificate is not trusted: the server presents a certificate authority's certificate as its own (a self-signed certificate made with CA:TRUE), which no CA file can vouch for (Other(OtherError(CaUsedAsEndEntity))); if the server is yours, give its authority's certificate with --cacert FILE (the configuration's ca_file), or check it without checking certificates with --insecure (insecure = true)"
            )
        );
        assert!(
            certificate_refused("invalid peer certificate: UnknownIssuer")
                .unwrap()
                .starts_with("the server's certificate is not trusted: it is signed by an authority this machine does not trust")
        );
        assert_eq!(
            certificate_refused("Connection refused (os error 111)"),
            None
        );
    }

    #[test]
    fn a_ca_file_must_hold_pem_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let mut trust = CertificateTrust::default();
        assert_eq!(
            trust.add_ca_file(&path),
            Err(format!(
                "the CA file {} holds no certificate; give the authority's certificate as PEM (-----BEGIN CERTIFICATE-----)",
                path.display()
            ))
        );
        let missing = dir.path().join("missing.pem");
        assert!(
            trust
                .add_ca_file(&missing)
                .unwrap_err()
                .starts_with(&format!("cannot read the CA file {}: ", missing.display()))
        );
    }
}
