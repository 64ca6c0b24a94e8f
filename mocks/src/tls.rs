//! HTTPS for the mocks: a throwaway CA and a server certificate for `localhost`, `127.0.0.1` and
//! `::1`, generated with rcgen at start, and an axum listener that completes TLS handshakes off
//! the accept loop. Clients trust the mocks by trusting [`MockTls::ca_pem`] (for example through
//! `SSL_CERT_FILE`).

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::CancellationToken;

use crate::error::MockError;

/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A generated CA and the server certificate it signed, ready to serve HTTPS.
pub struct MockTls {
    ca_pem: String,
    ca_der: CertificateDer<'static>,
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for MockTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockTls").finish_non_exhaustive()
    }
}

impl MockTls {
    /// A fresh CA and certificate when `wanted` (a mock spec's `tls: true`), else none.
    pub fn generate_if(wanted: bool) -> Result<Option<Arc<MockTls>>, MockError> {
        wanted.then(Self::generate).transpose()
    }

    /// Generates a fresh CA ("pallas-mocks test CA") and a server certificate for `localhost`,
    /// `127.0.0.1` and `::1` signed by it.
    pub fn generate() -> Result<Arc<MockTls>, MockError> {
        let err = |e: &dyn std::fmt::Display| MockError::Tls(e.to_string());
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| err(&e))?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "pallas-mocks test CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().map_err(|e| err(&e))?;
        let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| err(&e))?;
        let issuer = Issuer::new(ca_params, ca_key);

        let mut leaf_params = CertificateParams::new(vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ])
        .map_err(|e| err(&e))?;
        leaf_params
            .distinguished_name
            .push(DnType::CommonName, "pallas-mocks");
        leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_key = KeyPair::generate().map_err(|e| err(&e))?;
        let leaf = leaf_params
            .signed_by(&leaf_key, &issuer)
            .map_err(|e| err(&e))?;

        let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone(), ca_cert.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| err(&e))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| err(&e))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(MockTls {
            ca_pem: ca_cert.pem(),
            ca_der: ca_cert.der().clone(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        }))
    }

    /// The CA certificate, PEM: what a client must trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The CA certificate, DER.
    pub fn ca_der(&self) -> &[u8] {
        self.ca_der.as_ref()
    }

    /// Writes the CA certificate (PEM) to `path`, atomically.
    pub fn write_ca(&self, path: &Path) -> io::Result<()> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, &self.ca_pem)?;
        std::fs::rename(&tmp, path)
    }
}

/// An axum listener serving TLS: a task accepts TCP connections and runs each handshake in its
/// own task (a slow client never blocks the others); finished streams arrive here.
pub(crate) struct TlsListener {
    rx: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
}

impl TlsListener {
    /// Starts accepting on `listener` until `ct` is cancelled.
    pub(crate) fn new(
        listener: TcpListener,
        tls: &MockTls,
        ct: CancellationToken,
    ) -> io::Result<Self> {
        let local = listener.local_addr()?;
        let (tx, rx) = mpsc::channel(64);
        let acceptor = tls.acceptor.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = ct.cancelled() => break,
                    a = listener.accept() => a,
                };
                let (tcp, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::debug!("TLS mock accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    }
                };
                if let Err(e) = tcp.set_nodelay(true) {
                    tracing::debug!("could not set TCP_NODELAY: {e}");
                }
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => {
                            let _ = tx.send((stream, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self { rx, local })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.rx.recv().await {
            Some(conn) => conn,
            // The accept task stopped (the server is shutting down): wait for the shutdown.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ca_is_a_pem_certificate() {
        let tls = MockTls::generate().unwrap();
        assert!(tls.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    }
}
