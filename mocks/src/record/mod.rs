//! `pallas-mocks record`: a recording proxy in front of real upstreams (OpenAI-compatible and
//! Anthropic providers, downstream MCP servers over Streamable HTTP). Each request is forwarded
//! and the real answer returned to the caller as it arrives (streams stay streams); what passed
//! through is kept as an ecosystem file that `pallas-mocks up` replays:
//!
//! - each completion becomes a script turn keyed by the model, the exact last user message, the
//!   conversation position (`user_messages`, `round`) and the exact tool results of the request,
//!   so the calls of a tool loop replay one by one and never collide;
//! - each MCP server keeps its `initialize` identity, its `tools/list` and the result of each
//!   call by (tool, arguments).
//!
//! The file is rewritten (atomically) after every recorded exchange, so nothing is lost when the
//! recorder is killed. Secrets never reach it: the key and bearer headers are not recorded, and
//! every value seen in them is replaced by `[REDACTED]` wherever it appears in a recorded body.

mod llm;
mod mcp;
mod proxy;
mod sse;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use http::HeaderMap;
use serde_json::Value;

use crate::common::{ServerHandle, lock};
use crate::error::MockError;
use crate::spec::{Dialect, EcosystemSpec};

/// What replaces a secret in the recorded file.
pub const REDACTED: &str = "[REDACTED]";

/// Secrets shorter than this are not searched for in bodies (they would match ordinary words).
const MIN_SECRET_LEN: usize = 6;

/// One upstream to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// A provider: its dialect and base URL (`https://api.openai.com/v1`,
    /// `https://api.anthropic.com`).
    Llm {
        /// Wire format.
        dialect: Dialect,
        /// Base URL.
        url: String,
    },
    /// A downstream MCP server's endpoint (`https://host/mcp`).
    Mcp {
        /// Endpoint URL.
        url: String,
    },
}

/// What to record and where to write it.
#[derive(Debug, Clone, Default)]
pub struct RecordConfig {
    /// Upstreams by the name they get in the ecosystem file.
    pub upstreams: BTreeMap<String, Upstream>,
    /// The ecosystem file to write.
    pub out: PathBuf,
    /// Extra trusted CA certificates (PEM bundles), on top of the system roots; the command line
    /// adds `SSL_CERT_FILE` and `--ca-file` here.
    pub ca_pems: Vec<Vec<u8>>,
    /// Ignore the proxy variables (`HTTPS_PROXY`…); tests against loopback upstreams set it.
    pub no_proxy: bool,
}

/// Reads a `[NAME=]URL` argument: the name (`default_name` when absent; required when `None`)
/// and the URL without its trailing `/`.
pub fn parse_named(arg: &str, default_name: Option<&str>) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, url)) if !name.contains("://") => {
            let name = name.trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
            {
                return Err(format!(
                    "`{name}` is not a mock name (letters, digits, - and _)"
                ));
            }
            check_url(url).map(|u| (name.to_owned(), u))
        }
        _ => match default_name {
            Some(d) => check_url(arg).map(|u| (d.to_owned(), u)),
            None => Err(format!("`{arg}`: expected NAME=URL")),
        },
    }
}

fn check_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url.trim_end_matches('/').to_owned())
    } else {
        Err(format!("`{url}` is not an http:// or https:// URL"))
    }
}

/// What has been recorded so far, by upstream name.
#[derive(Default)]
struct Recording {
    llms: BTreeMap<String, llm::LlmRecording>,
    mcps: BTreeMap<String, mcp::McpRecording>,
    secrets: BTreeSet<String>,
}

/// Without the secrets: a debug print never shows them.
impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("llms", &self.llms)
            .field("mcps", &self.mcps)
            .field(
                "secrets",
                &format_args!("[{} redacted]", self.secrets.len()),
            )
            .finish()
    }
}

#[derive(Debug)]
pub(crate) struct Shared {
    http: reqwest::Client,
    out: PathBuf,
    recording: Mutex<Recording>,
    /// Answers still being read (to record them before the last write).
    pending: AtomicUsize,
}

impl Shared {
    /// Remembers the secret header values of a request (to redact them from bodies).
    fn note_secrets(&self, headers: &HeaderMap) {
        let mut rec = lock(&self.recording);
        for name in [
            "authorization",
            "x-api-key",
            "api-key",
            "proxy-authorization",
        ] {
            for v in headers.get_all(name) {
                let Ok(v) = v.to_str() else { continue };
                let v = v.trim();
                let token = v.split_once(' ').map_or(v, |(scheme, rest)| {
                    if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("basic")
                    {
                        rest.trim()
                    } else {
                        v
                    }
                });
                for s in [v, token] {
                    if s.len() >= MIN_SECRET_LEN {
                        rec.secrets.insert(s.to_owned());
                    }
                }
            }
        }
    }

    /// Changes the recording and rewrites the file.
    fn update(&self, f: impl FnOnce(&mut Recording)) {
        let mut rec = lock(&self.recording);
        f(&mut rec);
        if let Err(e) = write_recording(&self.out, &rec) {
            tracing::warn!("cannot write {}: {e}", self.out.display());
        }
    }
}

/// The ecosystem a recording replays as, secrets redacted.
fn to_spec(rec: &Recording) -> Result<EcosystemSpec, serde_json::Error> {
    let spec = EcosystemSpec {
        llms: rec
            .llms
            .iter()
            .map(|(n, l)| (n.clone(), l.to_spec()))
            .collect(),
        mcp_servers: rec
            .mcps
            .iter()
            .map(|(n, m)| (n.clone(), m.to_spec()))
            .collect(),
        tls: false,
        pallas: None,
    };
    let mut value = serde_json::to_value(&spec)?;
    // Longest first, so a secret containing another is replaced whole.
    let mut secrets: Vec<&String> = rec.secrets.iter().collect();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    redact(&mut value, &secrets);
    serde_json::from_value(value)
}

fn redact(v: &mut Value, secrets: &[&String]) {
    match v {
        Value::String(s) => {
            for secret in secrets {
                if s.contains(secret.as_str()) {
                    *s = s.replace(secret.as_str(), REDACTED);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact(x, secrets)),
        Value::Object(o) => {
            // Keys too: a tool's arguments may hold a secret as a key.
            let old = std::mem::take(o);
            for (mut k, mut x) in old {
                for secret in secrets {
                    if k.contains(secret.as_str()) {
                        k = k.replace(secret.as_str(), REDACTED);
                    }
                }
                redact(&mut x, secrets);
                o.insert(k, x);
            }
        }
        _ => {}
    }
}

fn write_recording(out: &Path, rec: &Recording) -> std::io::Result<()> {
    let spec = to_spec(rec).map_err(std::io::Error::other)?;
    let yaml = serde_saphyr::to_string(&spec).map_err(std::io::Error::other)?;
    let text = format!(
        "# Recorded by `pallas-mocks record`; replay with `pallas-mocks up {}`.\n\
         # Script turns are keyed by model, last user message, conversation position and tool\n\
         # results; MCP tool results by arguments. Secrets are replaced by {REDACTED}.\n{yaml}",
        out.file_name().map_or_else(
            || out.display().to_string(),
            |f| f.to_string_lossy().into_owned()
        )
    );
    let mut tmp = out.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, out)
}

/// A running recorder: one local listener per upstream. Writes the file on every exchange and
/// once more on [`Recorder::finish`].
#[derive(Debug)]
pub struct Recorder {
    shared: Arc<Shared>,
    servers: Vec<(String, String, ServerHandle)>,
}

impl Recorder {
    /// Starts one loopback listener (ephemeral port) per upstream and writes the (empty) file.
    pub async fn start(config: RecordConfig) -> Result<Recorder, MockError> {
        let http = client(&config)?;
        let mut recording = Recording::default();
        for (name, up) in &config.upstreams {
            match up {
                Upstream::Llm { dialect, .. } => {
                    recording
                        .llms
                        .insert(name.clone(), llm::LlmRecording::new(*dialect));
                }
                Upstream::Mcp { .. } => {
                    recording
                        .mcps
                        .insert(name.clone(), mcp::McpRecording::default());
                }
            }
        }
        let shared = Arc::new(Shared {
            http,
            out: config.out.clone(),
            recording: Mutex::new(recording),
            pending: AtomicUsize::new(0),
        });
        shared.update(|_| {});
        let mut servers = Vec::new();
        for (name, up) in &config.upstreams {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| MockError::Bind {
                    name: name.clone(),
                    addr,
                    source,
                })?;
            let bound = listener.local_addr().map_err(|source| MockError::Bind {
                name: name.clone(),
                addr,
                source,
            })?;
            let (app, url): (Router, String) = match up {
                Upstream::Llm { dialect, url } => (
                    llm::router(shared.clone(), name.clone(), *dialect, url.clone()),
                    match dialect {
                        Dialect::Openai => format!("http://{bound}/v1"),
                        Dialect::Anthropic => format!("http://{bound}"),
                    },
                ),
                Upstream::Mcp { url } => (
                    mcp::router(shared.clone(), name.clone(), url.clone()),
                    format!("http://{bound}/mcp"),
                ),
            };
            servers.push((name.clone(), url, ServerHandle::serve(listener, app)));
        }
        Ok(Recorder { shared, servers })
    }

    /// Name → local URL to point the bridge at.
    pub fn urls(&self) -> BTreeMap<String, String> {
        self.servers
            .iter()
            .map(|(n, u, _)| (n.clone(), u.clone()))
            .collect()
    }

    /// The ecosystem recorded so far (secrets redacted), as the file holds it.
    pub fn spec(&self) -> Result<EcosystemSpec, MockError> {
        to_spec(&lock(&self.shared.recording)).map_err(|e| MockError::InvalidSpec {
            name: "recording".to_owned(),
            message: e.to_string(),
        })
    }

    /// Waits until every answer read so far is recorded (at most `limit`); true if so.
    pub async fn settled(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        while self.shared.pending.load(Ordering::SeqCst) > 0 {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }

    /// What was recorded: (LLM completions, MCP tool calls).
    pub fn counts(&self) -> (usize, usize) {
        let rec = lock(&self.shared.recording);
        (
            rec.llms.values().map(llm::LlmRecording::len).sum(),
            rec.mcps.values().map(mcp::McpRecording::calls).sum(),
        )
    }

    /// Stops the listeners (in-flight exchanges finish, up to 5 s) and writes the file once more.
    pub async fn finish(mut self) -> std::io::Result<()> {
        let servers = std::mem::take(&mut self.servers);
        futures::future::join_all(servers.into_iter().map(|(_, _, s)| s.shutdown())).await;
        self.settled(Duration::from_secs(5)).await;
        write_recording(&self.shared.out, &lock(&self.shared.recording))
    }
}

/// The outbound client: system roots plus the extra CAs, proxies from the environment (as the
/// reference reads them: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`).
fn client(config: &RecordConfig) -> Result<reqwest::Client, MockError> {
    let bad = |message: String| MockError::InvalidSpec {
        name: "record".to_owned(),
        message,
    };
    let mut builder = crate::http_client::builder().connect_timeout(Duration::from_secs(10));
    for pem in &config.ca_pems {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| bad(format!("not a PEM certificate bundle: {e}")))?;
        builder = builder.tls_certs_merge(certs);
    }
    if config.no_proxy {
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|e| bad(format!("cannot build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_arguments_parse_with_and_without_a_name() {
        assert_eq!(
            parse_named("https://api.openai.com/v1/", Some("openai")),
            Ok(("openai".into(), "https://api.openai.com/v1".into()))
        );
        assert_eq!(
            parse_named("argos=http://h:1/mcp", None),
            Ok(("argos".into(), "http://h:1/mcp".into()))
        );
        assert!(parse_named("http://h:1/mcp", None).is_err());
        assert!(parse_named("a b=http://h", None).is_err());
        assert!(parse_named("argos=ftp://h", None).is_err());
    }

    #[test]
    fn a_debug_print_of_the_recording_hides_the_secrets() {
        let mut rec = Recording::default();
        rec.secrets.insert("sk-secret-123".into());
        let text = format!("{rec:?}");
        assert!(
            !text.contains("sk-secret-123") && text.contains("1 redacted"),
            "{text}"
        );
    }

    #[test]
    fn redaction_reaches_strings_and_keys_at_any_depth() {
        let secret = "sk-secret-123".to_owned();
        let mut v = serde_json::json!({"a": ["x sk-secret-123 y", {"sk-secret-123": 1}]});
        redact(&mut v, &[&secret]);
        let text = v.to_string();
        assert!(!text.contains("sk-secret-123"), "{text}");
        assert_eq!(text.matches(REDACTED).count(), 2, "{text}");
    }
}
