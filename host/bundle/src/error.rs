//! Why sharing a plugin failed. Every variant carries the message a person
//! reads: it names the file, bundle, key or registry and says what to do.
//! The variant tells a caller what kind of failure it is, so that a command
//! can answer differently to a refusal than to a network failure.

/// A failure of packing, signing, fetching, installing or resolving a plugin.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BundleError {
    /// A file or directory could not be read or written.
    #[error("{0}")]
    Io(String),
    /// A bundle, manifest, key, registry reference or version requirement
    /// is malformed.
    #[error("{0}")]
    Invalid(String),
    /// A check refused it: its checksum, signature or signer, the plugin API
    /// it was built against, its world, the user's consent, or a file it
    /// would overwrite.
    #[error("{0}")]
    Refused(String),
    /// A download or a registry failed.
    #[error("{0}")]
    Network(String),
    /// No installed plugin, version or trusted key answers the name asked for.
    #[error("{0}")]
    NotFound(String),
}

impl BundleError {
    /// What kind of failure it is, as a word: `io`, `invalid`, `refused`,
    /// `network` or `not-found`.
    pub fn kind(&self) -> &'static str {
        match self {
            BundleError::Io(_) => "io",
            BundleError::Invalid(_) => "invalid",
            BundleError::Refused(_) => "refused",
            BundleError::Network(_) => "network",
            BundleError::NotFound(_) => "not-found",
        }
    }

    /// The message, as a person reads it.
    pub fn message(&self) -> &str {
        match self {
            BundleError::Io(m)
            | BundleError::Invalid(m)
            | BundleError::Refused(m)
            | BundleError::Network(m)
            | BundleError::NotFound(m) => m,
        }
    }
}

/// The message of the failure `r` must be, of kind `kind` (tests).
#[cfg(test)]
pub(crate) fn expect_err<T>(r: Result<T, BundleError>, kind: &str) -> String {
    match r {
        Err(e) if e.kind() == kind => e.message().to_string(),
        Err(e) => panic!("a failure of kind {kind} was expected, not {e:?}"),
        Ok(_) => panic!("a failure of kind {kind} was expected, but it succeeded"),
    }
}
