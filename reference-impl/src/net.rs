//! Outbound HTTP: the one client the reference uses for LLM providers and downstream MCP servers.
//!
//! TLS is rustls. Trusted roots are the Mozilla bundle compiled in (`webpki-root-certs`), the
//! system store (or `SSL_CERT_FILE` / `SSL_CERT_DIR` when the process sets them, the OpenSSL
//! convention), plus the extra CA bundles of [`NetworkSettings::ca_files`] (`SSL_CERT_FILE` from
//! the environment or `.env`, and `tls.ca_file` of `fastagent.config.yaml`). Proxies come from
//! `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` and `NO_PROXY` (either case), read from the same
//! environment as the rest of the configuration. [`describe_error`] names TLS certificate problems
//! ("unknown issuer") in errors meant for users, never showing a secret.

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// A PEM file of extra trusted CA certificates and where it was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaFile {
    /// The file.
    pub path: PathBuf,
    /// Where it was configured (`SSL_CERT_FILE`, `fastagent.config.yaml tls.ca_file`).
    pub origin: String,
}

/// A proxy URL; `Debug` hides any `user:password@` part.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyUrl(String);

impl ProxyUrl {
    /// Wraps a proxy URL as configured.
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL with its credentials replaced by `[redacted]`, for messages.
    pub fn redacted(&self) -> String {
        redact_userinfo(&self.0)
    }
}

impl fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// `scheme://user:pass@host` → `scheme://[redacted]@host`.
pub fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://[redacted]{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// How outbound requests reach the network: extra CAs and proxies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkSettings {
    /// Extra CA bundles, trusted in addition to the built-in and system roots.
    pub ca_files: Vec<CaFile>,
    /// Proxy for `http://` URLs (`HTTP_PROXY`, else `ALL_PROXY`).
    pub http_proxy: Option<ProxyUrl>,
    /// Proxy for `https://` URLs (`HTTPS_PROXY`, else `ALL_PROXY`).
    pub https_proxy: Option<ProxyUrl>,
    /// Hosts reached directly (`NO_PROXY`: comma-separated names, domains, IPs, CIDRs, `*`).
    pub no_proxy: Option<String>,
}

impl NetworkSettings {
    /// The proxy variables read through `get` (upper case first, then lower case); CA files are
    /// added by the configuration loader.
    pub fn from_env<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Self {
        let var = |name: &str| {
            get(name)
                .or_else(|| get(&name.to_ascii_lowercase()))
                .map(str::to_owned)
        };
        let all = var("ALL_PROXY");
        Self {
            ca_files: Vec::new(),
            http_proxy: var("HTTP_PROXY").or_else(|| all.clone()).map(ProxyUrl),
            https_proxy: var("HTTPS_PROXY").or(all).map(ProxyUrl),
            no_proxy: var("NO_PROXY"),
        }
    }
}

/// Why the outbound client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A CA file could not be read or holds no certificate.
    #[error("CA bundle {path} (from {origin}): {reason}")]
    CaFile {
        /// The file.
        path: String,
        /// Where it was configured.
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// A proxy URL is invalid.
    #[error("proxy {url}: {reason}")]
    Proxy {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// reqwest refused the configuration.
    #[error("cannot build the HTTP client: {0}")]
    Build(String),
}

/// Reads a PEM bundle and returns its certificates (at least one).
pub fn read_ca_file(ca: &CaFile) -> Result<Vec<reqwest::Certificate>, NetError> {
    let error = |reason: String| NetError::CaFile {
        path: ca.path.display().to_string(),
        origin: ca.origin.clone(),
        reason,
    };
    let pem = std::fs::read(&ca.path).map_err(|e| error(e.to_string()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| error(format!("not a PEM certificate bundle ({e})")))?;
    if certs.is_empty() {
        return Err(error("holds no PEM certificate".to_owned()));
    }
    Ok(certs)
}

/// The built-in (Mozilla) and system roots, read once per process.
fn base_roots() -> &'static [reqwest::Certificate] {
    static ROOTS: OnceLock<Vec<reqwest::Certificate>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let native = rustls_native_certs::load_native_certs();
        for error in &native.errors {
            tracing::debug!(%error, "a system CA certificate could not be loaded");
        }
        webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .chain(native.certs.iter())
            .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok())
            .collect()
    })
}

/// A reqwest client builder, `ring` installed first as the process's rustls crypto provider:
/// reqwest's `rustls-no-provider` leaves the provider to the program, and a client built without
/// one panics, so every client of the reference (and of its tests and benches) starts here
/// (`clippy.toml` disallows building one directly).
#[expect(
    clippy::disallowed_methods,
    reason = "the one place a client builder is made"
)]
pub fn builder() -> reqwest::ClientBuilder {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        // An error means another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// The client for LLM providers and downstream MCP servers: rustls with the trusted roots above,
/// the configured proxies, a 5 s connect timeout.
pub fn client(settings: &NetworkSettings) -> Result<reqwest::Client, NetError> {
    let mut roots = base_roots().to_vec();
    for ca in &settings.ca_files {
        roots.extend(read_ca_file(ca)?);
    }
    let mut builder = builder()
        .connect_timeout(Duration::from_secs(5))
        .tls_certs_only(roots)
        .no_proxy();
    let no_proxy = settings
        .no_proxy
        .as_deref()
        .and_then(reqwest::NoProxy::from_string);
    for (url, https) in [(&settings.http_proxy, false), (&settings.https_proxy, true)] {
        let Some(url) = url else { continue };
        let proxy = if https {
            reqwest::Proxy::https(url.0.as_str())
        } else {
            reqwest::Proxy::http(url.0.as_str())
        }
        .map_err(|e| NetError::Proxy {
            url: url.redacted(),
            reason: redact_userinfo(&e.to_string()),
        })?;
        builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
    }
    builder
        .build()
        .map_err(|e| NetError::Build(redact_userinfo(&e.to_string())))
}

/// A client for the process's own loopback listeners (readiness probes): no proxy, no roots.
pub fn loopback_client() -> reqwest::Client {
    builder()
        .no_proxy()
        .tls_certs_only(Vec::new())
        .build()
        .unwrap_or_default()
}

/// The TLS problem behind an error, worded for users ("TLS certificate problem: unknown
/// issuer …"), when the error chain holds one.
pub fn tls_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(tls) = as_rustls(e) {
            return Some(describe_rustls(tls));
        }
        // Wrappers that keep only the text (e.g. a boxed error re-wrapped by a transport).
        let text = e.to_string();
        if let Some(rest) = text.split("invalid peer certificate: ").nth(1) {
            let kind = rest.split([' ', ',', ')']).next().unwrap_or_default();
            return Some(describe_certificate_text(kind));
        }
        current = e.source();
    }
    None
}

fn describe_certificate_text(kind: &str) -> String {
    let cert = match kind {
        "UnknownIssuer" => rustls::CertificateError::UnknownIssuer,
        "Expired" => rustls::CertificateError::Expired,
        "NotValidYet" => rustls::CertificateError::NotValidYet,
        "NotValidForName" => rustls::CertificateError::NotValidForName,
        "Revoked" => rustls::CertificateError::Revoked,
        "BadSignature" => rustls::CertificateError::BadSignature,
        _ => return format!("TLS certificate problem: {kind}; {CA_HINT}"),
    };
    describe_rustls(&rustls::Error::InvalidCertificate(cert))
}

/// `rustls::Error` in `e` itself, or wrapped in an `io::Error` (whose `source()` skips it).
fn as_rustls<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    if let Some(tls) = e.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    e.downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::get_ref)
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
}

const CA_HINT: &str = "trust its CA with SSL_CERT_FILE or tls.ca_file in fastagent.config.yaml";

fn describe_rustls(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(cert) => {
            let (what, hint) = match cert {
                C::UnknownIssuer => (
                    "unknown issuer (the server's certificate is not signed by a trusted CA)",
                    CA_HINT,
                ),
                C::NotValidForName | C::NotValidForNameContext { .. } => (
                    "the certificate is not valid for this host name",
                    "use the host name the certificate was issued for",
                ),
                C::Expired | C::ExpiredContext { .. } => (
                    "the certificate has expired",
                    "renew the server's certificate",
                ),
                C::NotValidYet | C::NotValidYetContext { .. } => (
                    "the certificate is not valid yet",
                    "check the clocks of both machines",
                ),
                C::Revoked => (
                    "the certificate is revoked",
                    "renew the server's certificate",
                ),
                C::BadSignature | C::BadEncoding => (
                    "the certificate is malformed or badly signed",
                    "check the server's certificate chain",
                ),
                _ => ("the certificate was rejected", CA_HINT),
            };
            format!("TLS certificate problem: {what} [{cert:?}]; {hint}")
        }
        rustls::Error::UnsupportedNameType => {
            "TLS problem: the host name cannot be checked against a certificate".to_owned()
        }
        other => format!("TLS handshake failed: {other}"),
    }
}

/// Describes a failed HTTP exchange for users: the TLS problem when there is one, then timeouts
/// and connection failures, else the error chain. Credentials in URLs are redacted.
pub fn describe_error(error: &reqwest::Error, timeout: Duration) -> String {
    if let Some(tls) = tls_problem(error) {
        return tls;
    }
    if error.is_timeout() {
        format!("no answer within {}", humantime::format_duration(timeout))
    } else if error.is_connect() {
        match proxy_problem(error) {
            Some(p) => format!("connection failed: {p}"),
            None => match innermost(error) {
                Some(cause) => format!("connection failed: {}", redact_userinfo(&cause)),
                None => "connection failed".to_owned(),
            },
        }
    } else {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            text.push_str(": ");
            text.push_str(&inner.to_string());
            source = inner.source();
        }
        redact_userinfo(&text)
    }
}

/// The text of the deepest cause of an error (e.g. "Connection refused (os error 111)").
fn innermost(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut last = None;
    let mut current = error.source();
    while let Some(e) = current {
        last = Some(e.to_string());
        current = e.source();
    }
    last
}

/// A proxy's refusal (e.g. `407`) in a connect error chain, redacted.
fn proxy_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        if text.to_ascii_lowercase().contains("proxy") {
            return Some(redact_userinfo(&text));
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_credentials_never_show() {
        let p = ProxyUrl::new("http://alice:s3cret@proxy.example:3128/");
        assert_eq!(format!("{p:?}"), "http://[redacted]@proxy.example:3128/");
        assert_eq!(
            redact_userinfo("http://proxy.example:3128"),
            "http://proxy.example:3128"
        );
        assert_eq!(
            redact_userinfo("https://h.example/a@b"),
            "https://h.example/a@b"
        );
    }

    #[test]
    fn unknown_issuer_is_named() {
        let e = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::other(e);
        let text = tls_problem(&io).unwrap_or_default();
        assert!(text.contains("unknown issuer"), "{text}");
        assert!(text.contains("SSL_CERT_FILE"), "{text}");
    }

    #[test]
    fn client_builds_with_the_builtin_roots_and_proxies() {
        let settings = NetworkSettings {
            https_proxy: Some(ProxyUrl::new("http://u:p@127.0.0.1:9")),
            no_proxy: Some("localhost,127.0.0.1".into()),
            ..NetworkSettings::default()
        };
        assert!(client(&settings).is_ok());
        assert!(!base_roots().is_empty());
    }
}
