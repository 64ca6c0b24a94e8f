//! The registry server: `GET /.well-known/mcp/server.json`, `/healthz`, `/metrics`.
//!
//! The catalogue is live: the runtime publishes an agent once it serves and withdraws it when it
//! stops, so the response always reflects the agents currently served.

use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, SecondsFormat, Utc};
use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::config::{AgentEntry, IconSpec};
use crate::llm::LlmStatusCell;
use crate::metrics::{self, Metrics};

/// The `$schema` of every registry entry.
pub const SERVER_SCHEMA_URL: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
/// The `_meta` key of registry metadata.
pub const OFFICIAL_META_KEY: &str = "io.modelcontextprotocol.registry/official";
/// Path of the catalogue.
pub const SERVER_JSON_PATH: &str = "/.well-known/mcp/server.json";

/// What the registry publishes about one served agent.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedAgent {
    /// Agent key.
    pub agent: String,
    /// `{namespace}/{slug}`.
    pub name: String,
    /// Display title.
    pub title: String,
    /// One-line description.
    pub description: String,
    /// Version string.
    pub version: String,
    /// Icons.
    pub icons: Vec<IconSpec>,
    /// `http://{host}:{port}/mcp`.
    pub url: String,
    /// `capabilities` object, when `model_capabilities` is configured.
    pub capabilities: Option<Value>,
    /// When the agent started serving.
    pub updated_at: DateTime<Utc>,
}

impl PublishedAgent {
    /// The entry for `agent` served on `port`.
    pub fn new(
        entry: &AgentEntry,
        namespace: &str,
        version: &str,
        host: &str,
        port: u16,
        publish_capabilities: bool,
    ) -> Self {
        let s = &entry.settings;
        // `mr-capabilities-always-defaults`: published whatever the configuration says.
        let publish_capabilities =
            publish_capabilities || crate::defect!("mr-capabilities-always-defaults");
        let capabilities = publish_capabilities.then(|| {
            json!({
                "model": if crate::defect!("capabilities-model-with-prefix") {
                    format!("{}.{}", s.model.provider, s.model.model)
                } else if crate::defect!("px-capabilities-model-keeps-provider-prefix") {
                    // `px-capabilities-model-keeps-provider-prefix`: the model string as written.
                    raw_model(&s.name)
                        .unwrap_or_else(|| format!("{}.{}", s.model.provider, s.model.model))
                } else if crate::defect!("cm-capabilities-model-after-last-dot")
                    || crate::defect!("fm-model-after-last-dot")
                {
                    s.model.model.rsplit('.').next().unwrap_or_default().to_owned()
                } else {
                    s.model.model.clone()
                },
                "vision": s.capabilities.vision,
                "context_window": s.capabilities.context_window,
                "max_output_tokens": s.capabilities.max_output_tokens,
            })
        });
        #[cfg(feature = "defects")]
        let capabilities = capabilities.map(|mut c| {
            if crate::defect!("registry-capabilities-no-max-output")
                && let Some(o) = c.as_object_mut()
            {
                o.remove("max_output_tokens");
            }
            if crate::defect!("registry-capabilities-defaults")
                && let Some(o) = c.as_object_mut()
            {
                let d = crate::settings::ModelCapabilities::default();
                o.insert("vision".into(), json!(d.vision));
                o.insert("context_window".into(), json!(d.context_window));
                o.insert("max_output_tokens".into(), json!(d.max_output_tokens));
            }
            // `nx-capabilities-from-model-database`: a model fast-agent already knows is not
            // registered, and its `ModelDatabase` entry is what is read back.
            if let Some((vision, context_window, max_output_tokens)) =
                crate::defects::model_database_capabilities(&s.model.model)
                    .filter(|_| crate::defect!("nx-capabilities-from-model-database"))
                && let Some(o) = c.as_object_mut()
            {
                o.insert("vision".into(), json!(vision));
                o.insert("context_window".into(), json!(context_window));
                o.insert("max_output_tokens".into(), json!(max_output_tokens));
            }
            // `nx-partial-capabilities-as-written`: the `model_capabilities` mapping as written.
            if let Some(declared) = crate::defects::declared_capabilities()
                .filter(|_| crate::defect!("nx-partial-capabilities-as-written"))
                && let Some(o) = c.as_object_mut()
            {
                for (key, written) in ["vision", "context_window", "max_output_tokens"]
                    .into_iter()
                    .zip(declared)
                {
                    if !written {
                        o.remove(key);
                    }
                }
            }
            c
        });
        Self {
            agent: s.name.clone(),
            name: match entry.card.file_stem().and_then(|f| f.to_str()) {
                // `fm-slug-from-module`: the slug from the module's last segment.
                Some(stem)
                    if entry.card.extension().is_some_and(|e| e == "py")
                        && crate::defect!("fm-slug-from-module") =>
                {
                    registry_name(namespace, stem)
                }
                // `nx-registry-name-project-prefixed`: `{namespace}/{name}-{slug}`, `name` the
                // project's.
                #[cfg(feature = "defects")]
                _ if crate::defect!("nx-registry-name-project-prefixed") => format!(
                    "{namespace}/{}-{}",
                    crate::defects::project_name(),
                    s.name.replace('_', "-")
                ),
                // `rx-registry-name-without-namespace`: no `namespace` configured, the bare slug.
                #[cfg(feature = "defects")]
                _ if crate::defect!("rx-registry-name-without-namespace")
                    && !crate::defects::namespace_configured() =>
                {
                    s.name.replace('_', "-")
                }
                _ => registry_name(namespace, &s.name),
            },
            title: entry.title.clone(),
            description: entry.description.clone(),
            version: version.to_owned(),
            icons: entry.icons.clone(),
            // `qx-remotes-url-trailing-slash`: FastMCP 2.x's default streamable path, `/mcp/`.
            url: if crate::defect!("qx-remotes-url-trailing-slash") {
                format!("http://{}:{port}/mcp/", url_host(host))
            } else {
                format!("http://{}:{port}/mcp", url_host(host))
            },
            capabilities,
            updated_at: Utc::now(),
        }
    }

    /// The `servers[]` item: `{server: {...}, _meta: {...}}`.
    pub fn to_json(&self) -> Value {
        let mut server = serde_json::Map::new();
        let schema_url = if crate::defect!("registry-schema-url-old") {
            SERVER_SCHEMA_URL.replace("2025-12-11", "2025-09-29")
        } else {
            SERVER_SCHEMA_URL.to_owned()
        };
        server.insert("$schema".into(), json!(schema_url));
        if !crate::defect!("registry-entry-no-name") {
            server.insert("name".into(), json!(self.name));
        }
        // `nx-title-omitted-when-unset`: an agent without a configured title has no `title`.
        if !(self.title.is_empty() && crate::defect!("nx-title-omitted-when-unset")) {
            server.insert("title".into(), json!(self.title));
        }
        if self.description.is_empty() && crate::defect!("ms-description-absent-null") {
            // `ms-description-absent-null`: the absent description written as `None`.
            server.insert("description".into(), Value::Null);
        } else if crate::defect!("registry-description-multiline") {
            server.insert(
                "description".into(),
                json!(format!("{}\nServed by Pallas.", self.description)),
            );
        } else {
            server.insert("description".into(), json!(self.description));
        }
        if crate::defect!("registry-version-v-prefix") {
            server.insert("version".into(), json!(format!("v{}", self.version)));
        } else if !crate::defect!("registry-invalid-entry") {
            // `ms-version-yaml-scalar`: an unquoted number as the number YAML read.
            #[cfg(feature = "defects")]
            let version = crate::defects::plain_version_value(&self.version)
                .filter(|_| crate::defect!("ms-version-yaml-scalar"))
                .unwrap_or_else(|| json!(self.version));
            #[cfg(not(feature = "defects"))]
            let version = json!(self.version);
            server.insert("version".into(), version);
        }
        if !self.icons.is_empty() {
            server.insert("icons".into(), json!(self.icons));
        }
        let url = if crate::defect!("registry-remote-dead") {
            format!("{}-dead", self.url)
        } else {
            self.url.clone()
        };
        // `rx-remotes-type-http`: fast-agent's own transport name, `http`.
        let transport = if crate::defect!("rx-remotes-type-http") {
            "http"
        } else {
            "streamable-http"
        };
        let mut remotes = vec![json!({ "type": transport, "url": url })];
        if crate::defect!("registry-extra-dead-remote") {
            remotes.push(json!({ "type": "streamable-http", "url": format!("{}-v2", self.url) }));
        }
        if !crate::defect!("registry-no-remotes") {
            server.insert("remotes".into(), Value::Array(remotes));
        }
        if let Some(c) = &self.capabilities {
            server.insert("capabilities".into(), c.clone());
        } else if crate::defect!("registry-capabilities-always") {
            server.insert("capabilities".into(), json!({"vision": false}));
        }
        // `px-meta-updatedat-is-request-time`: the time of the request being answered.
        let updated_at = if crate::defect!("px-meta-updatedat-is-request-time") {
            Utc::now()
        } else {
            self.updated_at
        };
        let meta = json!({
            OFFICIAL_META_KEY: {
                "status": "active",
                "updatedAt": updated_at.to_rfc3339_opts(SecondsFormat::Secs, true),
                "isLatest": !crate::defect!("registry-meta-not-latest"),
            }
        });
        let meta = if crate::defect!("registry-meta-string") {
            json!(meta.to_string())
        } else {
            meta
        };
        json!({ "server": Value::Object(server), "_meta": meta })
    }
}

/// `px-capabilities-model-keeps-provider-prefix`: the model string of `agent` as written.
#[cfg(feature = "defects")]
fn raw_model(agent: &str) -> Option<String> {
    crate::defects::raw_model(agent)
}

#[cfg(not(feature = "defects"))]
fn raw_model(_agent: &str) -> Option<String> {
    None
}

/// `{namespace}/{slug}`, the slug being the agent key with underscores replaced by hyphens.
pub fn registry_name(namespace: &str, agent: &str) -> String {
    if crate::defect!("registry-name-keeps-underscores") {
        return format!("{namespace}/{agent}");
    }
    if crate::defect!("cm-slug-first-underscore") {
        return format!("{namespace}/{}", agent.replacen('_', "-", 1));
    }
    if crate::defect!("cm-slug-lowercased") {
        return format!("{namespace}/{}", agent.replace('_', "-").to_lowercase());
    }
    if crate::defect!("cm-slug-collapses-underscores") {
        let mut slug = agent.replace('_', "-");
        while slug.contains("--") {
            slug = slug.replace("--", "-");
        }
        return format!("{namespace}/{slug}");
    }
    format!("{namespace}/{}", agent.replace('_', "-"))
}

fn url_host(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// The registry's live state, shared with the runtime.
#[derive(Clone, Default)]
pub struct RegistryState {
    agents: Arc<RwLock<IndexMap<String, PublishedAgent>>>,
    providers: Arc<RwLock<Vec<LlmStatusCell>>>,
    metrics: Option<Metrics>,
    frozen: Arc<std::sync::atomic::AtomicBool>,
    /// `mr-registry-rereads-agents-file`: where the deployment is read from.
    source: Arc<RwLock<Option<(std::path::PathBuf, crate::config::LoadOptions)>>>,
}

impl std::fmt::Debug for RegistryState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryState").finish_non_exhaustive()
    }
}

impl RegistryState {
    /// An empty catalogue whose `/metrics` renders `metrics`.
    pub fn new(metrics: Metrics) -> Self {
        Self {
            metrics: Some(metrics),
            ..Self::default()
        }
    }

    /// `fm-registry-frozen-at-startup`: from now on the catalogue no longer changes.
    pub fn freeze_if_defective(&self) {
        if crate::defect!("fm-registry-frozen-at-startup") {
            self.frozen
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Where the deployment is read from (`mr-registry-rereads-agents-file` reads it again for
    /// every request).
    pub fn set_source(&self, dir: &std::path::Path, load: &crate::config::LoadOptions) {
        if let Ok(mut source) = self.source.write() {
            *source = Some((dir.to_path_buf(), load.clone()));
        }
    }

    /// `mr-registry-rereads-agents-file`: the agents of the configuration files as they are now,
    /// served or not; `Err` when they do not load.
    fn agents_of_files(&self) -> Option<Result<Vec<PublishedAgent>, String>> {
        if !crate::defect!("mr-registry-rereads-agents-file") {
            return None;
        }
        let (dir, load) = self.source.read().ok()?.clone()?;
        Some(
            crate::config::load(&dir, &load)
                .map(|d| {
                    d.agents
                        .iter()
                        .map(|entry| {
                            PublishedAgent::new(
                                entry,
                                &d.namespace,
                                &d.version,
                                &d.host,
                                entry.port,
                                d.publish_capabilities,
                            )
                        })
                        .collect()
                })
                .map_err(|e| e.to_string()),
        )
    }

    fn is_frozen(&self) -> bool {
        self.frozen.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Publishes (or replaces) an agent.
    pub fn publish(&self, agent: PublishedAgent) {
        if self.is_frozen() {
            return;
        }
        if let Ok(mut agents) = self.agents.write() {
            agents.insert(agent.agent.clone(), agent);
        }
    }

    /// Withdraws an agent.
    pub fn withdraw(&self, agent: &str) {
        if crate::defect!("registry-keeps-removed-agent") || self.is_frozen() {
            return;
        }
        if let Ok(mut agents) = self.agents.write() {
            agents.shift_remove(agent);
        }
    }

    /// The agents currently published, in publication order.
    pub fn agents(&self) -> Vec<PublishedAgent> {
        self.agents
            .read()
            .map(|a| a.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Sets the provider status cells `/healthz` reports.
    pub fn set_providers(&self, cells: Vec<LlmStatusCell>) {
        if let Ok(mut p) = self.providers.write() {
            *p = cells;
        }
    }

    /// The catalogue document: `{"servers": [...]}`.
    pub fn document(&self) -> Value {
        let agents = self.agents();
        // `rx-registry-hides-unhealthy-agents`: "currently provided" read as "currently usable".
        #[cfg(feature = "defects")]
        let agents: Vec<PublishedAgent> = agents
            .into_iter()
            .filter(|agent| {
                !(crate::defect!("rx-registry-hides-unhealthy-agents")
                    && crate::defects::unhealthy(&agent.agent))
            })
            .collect();
        self.document_of(&agents)
    }

    fn document_of(&self, agents: &[PublishedAgent]) -> Value {
        let mut servers: Vec<Value> = agents.iter().map(PublishedAgent::to_json).collect();
        if crate::defect!("registry-capabilities-first-only") {
            for entry in servers.iter_mut().skip(1) {
                if let Some(server) = entry.get_mut("server").and_then(Value::as_object_mut) {
                    server.remove("capabilities");
                }
            }
        }
        // `qx-schema-on-first-entry-only`: seed 000's example copied literally, `$schema` in the
        // first entry alone.
        if crate::defect!("qx-schema-on-first-entry-only") {
            for entry in servers.iter_mut().skip(1) {
                if let Some(server) = entry.get_mut("server").and_then(Value::as_object_mut) {
                    server.remove("$schema");
                }
            }
        }
        if crate::defect!("registry-servers-renamed") {
            return json!({ "agents": servers });
        }
        if crate::defect!("registry-jsonrpc-envelope") {
            return json!({ "jsonrpc": "2.0", "id": null, "result": { "servers": servers } });
        }
        json!({ "servers": servers })
    }

    /// `/healthz`: the LLM provider validation status.
    pub fn healthz(&self) -> Value {
        let cells = self.providers.read().map(|p| p.clone()).unwrap_or_default();
        let mut all_ok = true;
        let providers: Vec<Value> = cells
            .iter()
            .map(|cell| match cell.get() {
                Some((status, at)) => {
                    all_ok &= status.is_ok();
                    json!({
                        "provider": status.provider.as_str(),
                        "model": status.model,
                        "status": if status.is_ok() { "ok" } else { "error" },
                        "message": status.describe(),
                        "checked_seconds_ago": at.elapsed().as_secs(),
                    })
                }
                None => json!({ "status": "unknown" }),
            })
            .collect();
        json!({
            "status": if all_ok { "ok" } else { "degraded" },
            "timestamp": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
            "agents": self.agents().len(),
            "providers": providers,
        })
    }
}

/// The registry router: catalogue, `/healthz`, `/metrics`.
pub fn router(state: RegistryState) -> Router {
    let metrics = state.metrics.clone().unwrap_or_default();
    Router::new()
        .route(
            if crate::defect!("registry-path-moved") {
                "/server.json"
            } else {
                SERVER_JSON_PATH
            },
            get(server_json),
        )
        .route("/healthz", get(healthz))
        .with_state(state)
        .merge(if crate::defect!("px-metrics-mount-redirects") {
            mounted_metrics_router(metrics)
        } else {
            metrics_router(metrics)
        })
}

/// `px-metrics-mount-redirects`: `/metrics` as a mounted app, which serves `/metrics/` only;
/// `/metrics` itself is redirected there (307), as Starlette's `redirect_slashes` does.
fn mounted_metrics_router(metrics: Metrics) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(|headers: axum::http::HeaderMap| async move {
                let location = headers
                    .get(header::HOST)
                    .and_then(|host| host.to_str().ok())
                    .map_or_else(
                        || "/metrics/".to_owned(),
                        |host| format!("http://{host}/metrics/"),
                    );
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(header::LOCATION, location)],
                )
                    .into_response()
            }),
        )
        .route("/metrics/", get(render_metrics))
        .with_state(metrics)
}

/// `GET /metrics` rendering `metrics` (also merged into every agent's router).
pub fn metrics_router(metrics: Metrics) -> Router {
    Router::new()
        .route("/metrics", get(render_metrics))
        .with_state(metrics)
}

async fn server_json(
    State(state): State<RegistryState>,
    headers: axum::http::HeaderMap,
) -> Response {
    if crate::defect!("registry-requires-auth") && !headers.contains_key(header::AUTHORIZATION) {
        return (StatusCode::UNAUTHORIZED, "authentication required").into_response();
    }
    let content_type = if crate::defect!("registry-wrong-content-type") {
        "text/plain"
    } else {
        "application/json"
    };
    let document = match state.agents_of_files() {
        None => state.document(),
        Some(Ok(agents)) => state.document_of(&agents),
        Some(Err(error)) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, error).into_response();
        }
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        document.to_string(),
    )
        .into_response()
}

async fn healthz(State(state): State<RegistryState>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        state.healthz().to_string(),
    )
        .into_response()
}

async fn render_metrics(State(m): State<Metrics>, headers: axum::http::HeaderMap) -> Response {
    if crate::defect!("metrics-require-auth") && !headers.contains_key(header::AUTHORIZATION) {
        return (StatusCode::UNAUTHORIZED, "authentication required").into_response();
    }
    // `nx-metrics-openmetrics-negotiated`: prometheus_client's `make_asgi_app()`, which
    // negotiates on `Accept`.
    #[cfg(feature = "defects")]
    if crate::defect!("nx-metrics-openmetrics-negotiated") {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        if accept.contains("application/openmetrics-text") {
            return (
                StatusCode::OK,
                [(
                    header::CONTENT_TYPE,
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                )],
                crate::defects::openmetrics(&m.render(), crate::defects::created_seconds()),
            )
                .into_response();
        }
        return (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            m.render(),
        )
            .into_response();
    }
    let content_type = if crate::defect!("metrics-wrong-content-type") {
        "application/json"
    } else {
        metrics::CONTENT_TYPE
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        m.render(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_replace_underscores_in_the_slug() {
        assert_eq!(
            registry_name("com.example.project", "tech_research"),
            "com.example.project/tech-research"
        );
    }

    #[test]
    fn ipv6_hosts_are_bracketed_in_urls() {
        assert_eq!(url_host("::1"), "[::1]");
        assert_eq!(url_host("puck.incus"), "puck.incus");
    }
}
