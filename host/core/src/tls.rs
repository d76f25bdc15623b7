//! The one TLS setup every HTTP client of spinneret shares.

/// Install the process-wide TLS provider (ring) that every HTTP client of
/// spinneret uses (reqwest and the OCI client are built without one): the
/// crawl's fetcher, the plugins' polite fetcher, bundle downloads and
/// registries. A second call is harmless.
pub fn install_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
