//! Every HTTP client the mocks and the harness build: reqwest on rustls with the `ring` crypto
//! provider, installed as the process's default before the first client is built.
//!
//! reqwest's `rustls-no-provider` leaves the choice of provider to the program (the `rustls`
//! feature would compile aws-lc-rs, a C library, beside `ring`, which the HTTPS mocks use anyway);
//! a client built before a provider is installed panics. So no code builds one directly:
//! `clippy.toml` disallows `reqwest::Client::new`, `reqwest::Client::builder` and `reqwest::get`,
//! and [`builder`] is the one way in.

use std::sync::Once;

/// Installs `ring` as the process's rustls crypto provider (once; a provider installed earlier
/// is kept).
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // An error means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder, the crypto provider installed.
#[expect(
    clippy::disallowed_methods,
    reason = "the one place a client builder is made"
)]
pub fn builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}
