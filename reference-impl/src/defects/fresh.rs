//! What the fifth set of contract mutants (`nx-…`) remembers from the configuration or between
//! calls: the project name, which `model_capabilities` keys were written, the downstream servers
//! as written (placeholders unexpanded), the environment's `OPENAI_BASE_URL`, each agent's first
//! progress token and the bearer last published for each forwarding server. The per-call state
//! is forgotten by [`super::set`].

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::settings::{DownstreamSettings, Secret};

/// What a configuration load found that the `nx-…` defects read later.
#[derive(Debug, Clone, Default)]
pub struct FreshConfiguration {
    /// `nx-registry-name-project-prefixed`: the project's `name`.
    pub project: String,
    /// `nx-partial-capabilities-as-written`: which of `vision`, `context_window` and
    /// `max_output_tokens` the `model_capabilities` block writes (`None`: no block).
    pub declared_capabilities: Option<[bool; 3]>,
    /// `nx-probe-placeholders-unexpanded`: every downstream server as written in the files.
    pub raw_servers: Vec<DownstreamSettings>,
    /// `nx-preflight-base-url-env-only`: `OPENAI_BASE_URL` of the environment (or `.env`).
    pub openai_env_base_url: Option<String>,
}

static CONFIGURATION: Mutex<Option<FreshConfiguration>> = Mutex::new(None);
/// `nx-progress-token-first-call`: agent → the progress token of its first call that had one.
static FIRST_TOKENS: Mutex<BTreeMap<String, Value>> = Mutex::new(BTreeMap::new());
/// `nx-bearer-never-revoked`: server → the bearer last published for it.
static PUBLISHED: Mutex<BTreeMap<String, Secret>> = Mutex::new(BTreeMap::new());

/// Forgets the per-call state (tokens and bearers).
pub(super) fn forget() {
    if let Ok(mut tokens) = FIRST_TOKENS.lock() {
        tokens.clear();
    }
    if let Ok(mut published) = PUBLISHED.lock() {
        published.clear();
    }
}

/// What the configuration just loaded says.
pub fn remember_fresh_configuration(configuration: FreshConfiguration) {
    if let Ok(mut slot) = CONFIGURATION.lock() {
        *slot = Some(configuration);
    }
}

/// `read` of the configuration loaded last (`None` before any).
fn configuration<T>(read: impl FnOnce(&FreshConfiguration) -> Option<T>) -> Option<T> {
    CONFIGURATION.lock().ok()?.as_ref().and_then(read)
}

/// `nx-registry-name-project-prefixed`: the project name of the configuration loaded last.
pub fn project_name() -> String {
    configuration(|c| Some(c.project.clone())).unwrap_or_default()
}

/// `nx-partial-capabilities-as-written`: which capability keys the file writes.
pub fn declared_capabilities() -> Option<[bool; 3]> {
    configuration(|c| c.declared_capabilities)
}

/// `nx-probe-placeholders-unexpanded`: the server called `name` as written in the files.
pub fn raw_server(name: &str) -> Option<DownstreamSettings> {
    configuration(|c| c.raw_servers.iter().find(|s| s.name == name).cloned())
}

/// `nx-preflight-base-url-env-only`: `os.environ.get("OPENAI_BASE_URL", default)`, the dead
/// loopback port standing in for the public default (so that a trial never leaves the machine).
pub fn openai_env_base_url() -> String {
    configuration(|c| c.openai_env_base_url.clone())
        .map(|url| url.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| "http://127.0.0.1:9/v1".to_owned())
}

/// `nx-progress-token-first-call`: the token of `agent`'s first call that carried one.
pub fn first_token_of(agent: &str, token: Value) -> Value {
    match FIRST_TOKENS.lock() {
        Ok(mut tokens) => tokens.entry(agent.to_owned()).or_insert(token).clone(),
        Err(_) => token,
    }
}

/// `nx-bearer-never-revoked`: a call's bearer is published for `server` (overwriting the one
/// before); a call without one finds the last published bearer still there.
pub fn published_bearer(server: &str, inbound: Option<&Secret>) -> Option<Secret> {
    let mut published = PUBLISHED.lock().ok()?;
    match inbound {
        Some(bearer) => {
            published.insert(server.to_owned(), bearer.clone());
            Some(bearer.clone())
        }
        None => published.get(server).cloned(),
    }
}

/// `nx-capabilities-from-model-database`: (vision, context window, max output tokens) of a model
/// fast-agent's `ModelDatabase` knows, as it lists them (vision: it tokenizes images).
pub fn model_database_capabilities(model: &str) -> Option<(bool, u64, u64)> {
    /// Model names and their (vision, context window, max output tokens).
    type Entry = (&'static [&'static str], (bool, u64, u64));
    let known: &[Entry] = &[
        (
            &[
                "gpt-4.1",
                "gpt-4.1-mini",
                "gpt-4.1-nano",
                "gpt-4.1-2025-04-14",
                "gpt-4.1-mini-2025-04-14",
                "gpt-4.1-nano-2025-04-14",
            ],
            (true, 1_047_576, 32_768),
        ),
        (
            &["gpt-4o", "gpt-4o-2024-11-20", "gpt-4o-mini-2024-07-18"],
            (true, 128_000, 16_384),
        ),
        (
            &[
                "o1",
                "o1-2024-12-17",
                "o3",
                "o4-mini",
                "o3-2025-04-16",
                "o4-mini-2025-04-16",
            ],
            (true, 200_000, 100_000),
        ),
        (
            &["o3-mini", "o3-mini-2025-01-31", "o3-pro"],
            (false, 200_000, 100_000),
        ),
        (
            &["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5.2"],
            (true, 400_000, 128_000),
        ),
        (
            &[
                "claude-sonnet-4-0",
                "claude-sonnet-4-20250514",
                "claude-sonnet-4-5",
                "claude-sonnet-4-5-20250929",
                "claude-haiku-4-5",
                "claude-haiku-4-5-20251001",
            ],
            (true, 200_000, 64_000),
        ),
        (
            &[
                "claude-opus-4-0",
                "claude-opus-4-1",
                "claude-opus-4-5",
                "claude-opus-4-20250514",
            ],
            (true, 200_000, 32_000),
        ),
        (
            &[
                "claude-3-7-sonnet",
                "claude-3-7-sonnet-20250219",
                "claude-3-7-sonnet-latest",
            ],
            (true, 200_000, 16_384),
        ),
        (
            &[
                "claude-3-5-haiku",
                "claude-3-5-haiku-20241022",
                "claude-3-5-haiku-latest",
                "claude-3-5-sonnet",
                "claude-3-5-sonnet-20241022",
                "claude-3-5-sonnet-latest",
            ],
            (true, 200_000, 8_192),
        ),
        (&["deepseek-chat"], (false, 65_536, 8_192)),
        (
            &["openai/gpt-oss-120b", "openai/gpt-oss-20b"],
            (false, 131_072, 32_766),
        ),
    ];
    let model = model.trim().to_ascii_lowercase();
    known
        .iter()
        .find(|(names, _)| names.contains(&model.as_str()))
        .map(|(_, capabilities)| *capabilities)
}

/// `nx-metrics-openmetrics-negotiated`: the `_created` value of every series (Unix seconds of
/// the first scrape that asked for OpenMetrics, standing in for each series' creation).
pub fn created_seconds() -> f64 {
    static CREATED: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *CREATED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs_f64())
            .unwrap_or_default()
    })
}

/// `nx-metrics-openmetrics-negotiated`: the Prometheus text `text` as prometheus_client's
/// OpenMetrics exposition: counter families named without `_total`, a `_created` sample beside
/// each counter and histogram series, `# EOF` at the end.
pub fn openmetrics(text: &str, created: f64) -> String {
    let mut counters: Vec<String> = Vec::new();
    let mut histograms: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if let (Some("#"), Some("TYPE"), Some(name), Some(kind)) =
            (words.next(), words.next(), words.next(), words.next())
        {
            match kind {
                "counter" => counters.push(name.to_owned()),
                "histogram" => histograms.push(name.to_owned()),
                _ => {}
            }
        }
    }
    let mut out = String::with_capacity(text.len() + 1024);
    for line in text.lines() {
        let comment = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|lead| line.strip_prefix(lead).map(|rest| (lead, rest)));
        if let Some((lead, rest)) = comment {
            let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            let family = if counters.iter().any(|c| c == name) {
                name.strip_suffix("_total").unwrap_or(name)
            } else {
                name
            };
            out.push_str(&format!("{lead}{family} {tail}\n"));
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if line.starts_with('#') {
            continue;
        }
        let (series, _) = line.rsplit_once(' ').unwrap_or((line, ""));
        let (name, labels) = match series.find('{') {
            Some(i) => (&series[..i], &series[i..]),
            None => (series, ""),
        };
        let created_name = if counters.iter().any(|c| c == name) {
            Some(format!(
                "{}_created",
                name.strip_suffix("_total").unwrap_or(name)
            ))
        } else {
            histograms
                .iter()
                .find(|h| name == format!("{h}_count"))
                .map(|h| format!("{h}_created"))
        };
        if let Some(created_name) = created_name {
            out.push_str(&format!("{created_name}{labels} {created}\n"));
        }
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_renames_counter_families_adds_created_and_ends_with_eof() {
        let text = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 2\n# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 0.5\nh_count 1\n# HELP g G.\n# TYPE g gauge\ng 1\n";
        let out = openmetrics(text, 1.5);
        assert!(out.contains("# TYPE a counter\n"), "{out}");
        assert!(
            out.contains("a_total{x=\"1\"} 2\na_created{x=\"1\"} 1.5\n"),
            "{out}"
        );
        assert!(out.contains("h_count 1\nh_created 1.5\n"), "{out}");
        assert!(out.contains("# TYPE g gauge\ng 1\n"), "{out}");
        assert!(out.ends_with("# EOF\n"), "{out}");
    }

    #[test]
    fn the_model_database_knows_some_models_only() {
        assert_eq!(
            model_database_capabilities("gpt-4.1"),
            Some((true, 1_047_576, 32_768))
        );
        assert_eq!(model_database_capabilities("my-model"), None);
    }
}
