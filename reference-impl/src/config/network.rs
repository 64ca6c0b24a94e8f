//! The network settings of a deployment: extra trusted CAs (`SSL_CERT_FILE`, `tls.ca_file`) and
//! proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), checked at load time.

use std::path::{Path, PathBuf};

use super::{ConfigError, Env, Merged, at};
use crate::net::{CaFile, NetworkSettings, read_ca_file};

/// Reads the network settings; a CA file that cannot be read or holds no certificate is an error
/// pointing at its origin.
pub(super) fn network(
    fa: &Merged<'_>,
    env: &Env,
    dir: &Path,
) -> Result<NetworkSettings, ConfigError> {
    let mut settings = NetworkSettings::from_env(|name| env.get(name));
    if let Some(path) = env.get("SSL_CERT_FILE") {
        let ca = CaFile {
            path: PathBuf::from(path),
            origin: "SSL_CERT_FILE".to_owned(),
        };
        read_ca_file(&ca).map_err(|e| {
            ConfigError::file(&ca.path, e.to_string())
                .with_hint("point SSL_CERT_FILE at a PEM file of CA certificates, or unset it")
        })?;
        settings.ca_files.push(ca);
    }
    let layers = [(fa.secrets, fa.secrets_src), (fa.config, fa.config_src)];
    for (spec, src) in layers {
        let (Some(tls), Some(src)) = (spec.tls.as_ref(), src) else {
            continue;
        };
        let Some(value) = &tls.ca_file else { continue };
        let expanded = fa.env_expand(src, value, true)?;
        let path = PathBuf::from(&expanded);
        let path = if path.is_absolute() {
            path
        } else {
            dir.join(path)
        };
        let ca = CaFile {
            path,
            origin: format!("{} tls.ca_file", src.path.display()),
        };
        read_ca_file(&ca).map_err(|e| {
            at(src, value, e.to_string())
                .with_hint("give a PEM file of CA certificates, relative to the project directory")
        })?;
        settings.ca_files.push(ca);
        break; // the secrets file wins over the config file
    }
    Ok(settings)
}
