//! Errors of the mocks library.

use std::net::SocketAddr;

/// Why a mock (or an ecosystem) could not start.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum MockError {
    /// Binding a listener failed (port in use, permission…).
    #[error("mock `{name}` could not listen on {addr}: {source}")]
    #[diagnostic(help("choose another `port`, or omit it for an ephemeral one"))]
    Bind {
        /// Mock name.
        name: String,
        /// Requested address.
        addr: SocketAddr,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The TLS certificate could not be generated or loaded.
    #[error("cannot set up TLS for the mocks: {0}")]
    Tls(String),
    /// The spec is semantically invalid (found by the validation of the ecosystem file).
    #[error("invalid mock spec for `{name}`: {message}")]
    InvalidSpec {
        /// Mock name.
        name: String,
        /// What is wrong.
        message: String,
    },
}
