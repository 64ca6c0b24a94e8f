//! `fastagent.config.yaml` with `fastagent.secrets.yaml` over it: `${VAR}` expansion, providers and the active model.

use crate::settings::{DownstreamSettings, ModelRef, Provider, ProviderSettings, Secret};
use env::{ExpandError, expand};
use files::{FastAgentSpec, ServerSpec};
use indexmap::IndexMap;
use serde_saphyr::Spanned;
use source::SourceFile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;

pub(super) fn read_fast_agent(
    path: &Path,
    watched: &mut Vec<PathBuf>,
) -> Result<(FastAgentSpec, Option<SourceFile>), ConfigError> {
    watched.push(path.to_path_buf());
    if !path.is_file() {
        return Ok((FastAgentSpec::default(), None));
    }
    let src = SourceFile::read(
        path,
        "fast-agent configuration",
        "check the file's permissions",
    )?;
    let spec = src.parse(
        &src.text,
        "see the fastagent.config.yaml reference in reference-impl/README.md",
    )?;
    Ok((spec, Some(src)))
}

/// `fastagent.config.yaml` with `fastagent.secrets.yaml` over it.
pub(super) struct Merged<'a> {
    pub(super) config: &'a FastAgentSpec,
    pub(super) config_src: Option<&'a SourceFile>,
    pub(super) secrets: &'a FastAgentSpec,
    pub(super) secrets_src: Option<&'a SourceFile>,
    pub(super) env: &'a Env,
    /// `qx-placeholders-expanded-before-dotenv`: the environment without `.env`.
    #[cfg(feature = "defects")]
    pub(super) process_env: &'a Env,
}

impl<'a> Merged<'a> {
    /// Expands `${VAR}` in a value of `src`; unset variables are an error when `required`, and
    /// `Ok(None)` otherwise.
    pub(super) fn expand_opt(
        &self,
        src: &SourceFile,
        value: &Spanned<String>,
        required: bool,
    ) -> Result<Option<String>, ConfigError> {
        let whole = value.value.trim();
        let embedded = value.value.contains("${")
            && !(whole.starts_with("${")
                && whole.ends_with('}')
                && whole.matches("${").count() == 1);
        if crate::defect!("placeholder-left-literal")
            || (embedded && crate::defect!("fm-placeholder-whole-value-only"))
        {
            return Ok(Some(value.value.clone()));
        }
        match expand(&value.value, self.env) {
            Ok(v) => Ok(Some(v)),
            Err(ExpandError::Unset(_))
                if !required && crate::defect!("no-warn-unset-header-var") =>
            {
                Ok(None)
            }
            Err(ExpandError::Unset(name)) if !required => {
                tracing::warn!(
                    file = %src.path.display(),
                    line = value.referenced.line(),
                    variable = %name,
                    "environment variable {name} is not set; the value is left out"
                );
                Ok(None)
            }
            Err(ExpandError::Unset(name)) => Err(at(
                src,
                value,
                format!("environment variable `{name}` is not set"),
            )
            .with_hint(format!(
                "set {name} in the environment or in .env, or write `${{{name}:-default}}`"
            ))),
            Err(ExpandError::Malformed) => Err(at(src, value, "malformed `${…}` reference")
                .with_hint("write `${NAME}` or `${NAME:-default}`; `$$` is a literal `$`")),
        }
    }

    pub(super) fn env_expand(
        &self,
        src: &SourceFile,
        value: &Spanned<String>,
        required: bool,
    ) -> Result<String, ConfigError> {
        Ok(self.expand_opt(src, value, required)?.unwrap_or_default())
    }

    pub(super) fn default_model(&self) -> Result<Option<ModelRef>, ConfigError> {
        let pick = self
            .secrets
            .default_model
            .as_ref()
            .zip(self.secrets_src)
            .or(self.config.default_model.as_ref().zip(self.config_src));
        match pick {
            None => Ok(None),
            Some((m, src)) => {
                let text = self.env_expand(src, m, true)?;
                parse_model(src, m, &text).map(Some)
            }
        }
    }

    /// The merged `mcp.servers` (secrets override config per key; headers merge).
    pub(super) fn servers(&self) -> BTreeMap<String, (MergedServer<'a>, &'a SourceFile)> {
        let mut out: BTreeMap<String, (MergedServer<'a>, &'a SourceFile)> = BTreeMap::new();
        let layers = [
            (self.config, self.config_src),
            (self.secrets, self.secrets_src),
        ];
        for (spec, src) in layers {
            let (Some(mcp), Some(src)) = (spec.mcp.as_ref(), src) else {
                continue;
            };
            for (name, server) in &mcp.servers {
                let entry = out
                    .entry(name.clone())
                    .or_insert_with(|| (MergedServer::default(), src));
                entry.0.layers.push((server, src));
                if server.url.is_some() {
                    entry.1 = src;
                }
            }
        }
        out
    }

    pub(super) fn downstream(
        &self,
        name: &str,
        server: &MergedServer<'_>,
        src: &SourceFile,
    ) -> Result<DownstreamSettings, ConfigError> {
        let mut url = None;
        let mut transport = None;
        let mut forward = false;
        let mut headers: IndexMap<String, (Spanned<String>, &SourceFile)> = IndexMap::new();
        for (layer, layer_src) in &server.layers {
            if let Some(u) = &layer.url {
                url = Some((u, *layer_src));
            }
            if let Some(t) = &layer.transport {
                transport = Some((t, *layer_src));
            }
            if let Some(f) = layer.forward_inbound_auth {
                forward = f;
            }
            for (k, v) in &layer.headers {
                headers.insert(k.clone(), (v.clone(), *layer_src));
            }
        }
        if let Some((t, tsrc)) = transport
            && !matches!(
                t.value.as_str(),
                "http" | "streamable-http" | "streamable_http"
            )
        {
            return Err(at(
                tsrc,
                t,
                format!(
                    "server `{name}` uses transport `{}`, which the reference does not support",
                    t.value
                ),
            )
            .with_hint("use `transport: http` with a `url:` (Streamable HTTP)"));
        }
        let Some((u, usrc)) = url else {
            return Err(src
                .error_at(find_key(src, name), format!("server `{name}` has no `url`"))
                .with_hint("add `url: http://host:port/mcp` (Streamable HTTP endpoint)"));
        };
        // `qx-placeholders-expanded-before-dotenv`: expanded when the file is first scanned,
        // before `.env` is loaded; an unset variable becomes empty.
        #[cfg(feature = "defects")]
        let before_dotenv =
            crate::defect!("qx-placeholders-expanded-before-dotenv").then_some(self.process_env);
        #[cfg(not(feature = "defects"))]
        let before_dotenv: Option<&Env> = None;
        let url = match before_dotenv {
            Some(env) => expand_unset_empty(&u.value, env),
            None => self.env_expand(usrc, u, true)?,
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(at(
                usrc,
                u,
                format!("server `{name}` has an invalid url `{url}`"),
            )
            .with_hint("use an http:// or https:// URL, e.g. http://localhost:8000/mcp"));
        }
        // `qx-warns-on-servers-without-auth`: the architecture diagram's "warn on missing auth".
        if headers.is_empty() && crate::defect!("qx-warns-on-servers-without-auth") {
            tracing::warn!(
                server = %name,
                "downstream server `{name}` has no auth header configured"
            );
        }
        let mut out_headers = Vec::with_capacity(headers.len());
        for (k, (v, vsrc)) in &headers {
            if let Some(env) = before_dotenv {
                out_headers.push((k.clone(), Secret::new(expand_unset_empty(&v.value, env))));
                continue;
            }
            if crate::defect!("cm-header-placeholder-authorization-only")
                && !k.eq_ignore_ascii_case("authorization")
            {
                out_headers.push((k.clone(), Secret::new(v.value.clone())));
                continue;
            }
            // `nx-unset-header-var-empty`: fast-agent's loader turns an unset variable into an
            // empty string, so the header is sent (`Bearer `) and nothing is left to warn about.
            if crate::defect!("nx-unset-header-var-empty") {
                out_headers.push((
                    k.clone(),
                    Secret::new(expand_unset_empty(&v.value, self.env)),
                ));
                continue;
            }
            if let Some(value) = self.expand_opt(vsrc, v, false)? {
                out_headers.push((k.clone(), Secret::new(value)));
            } else {
                // `rx-unset-header-var-blocks-agent`: the warning's server, for the guard that
                // keeps its agents from starting.
                #[cfg(feature = "defects")]
                crate::defects::remember_unset_header_server(name);
            }
        }
        Ok(DownstreamSettings {
            name: name.to_owned(),
            url,
            headers: out_headers,
            // `qx-forward-flag-read-from-parsed-config`: read from fast-agent's parsed server
            // settings, whose model drops the unknown key.
            forward_inbound_auth: forward
                && !crate::defect!("qx-forward-flag-read-from-parsed-config"),
        })
    }

    /// `nx-probe-placeholders-unexpanded`: every server of `mcp.servers` as written in the files
    /// (the layers merged as [`Merged::downstream`] merges them), no `${VAR}` expanded.
    #[cfg(feature = "defects")]
    pub(super) fn raw_servers(&self) -> Vec<DownstreamSettings> {
        self.servers()
            .into_iter()
            .map(|(name, (server, _))| {
                let mut url = String::new();
                let mut forward = false;
                let mut headers: IndexMap<String, String> = IndexMap::new();
                for (layer, _) in &server.layers {
                    if let Some(u) = &layer.url {
                        url.clone_from(&u.value);
                    }
                    if let Some(f) = layer.forward_inbound_auth {
                        forward = f;
                    }
                    for (k, v) in &layer.headers {
                        headers.insert(k.clone(), v.value.clone());
                    }
                }
                DownstreamSettings {
                    name,
                    url,
                    headers: headers
                        .into_iter()
                        .map(|(k, v)| (k, Secret::new(v)))
                        .collect(),
                    forward_inbound_auth: forward,
                }
            })
            .collect()
    }

    /// Whether `fastagent.config.yaml` or the secrets file has a section for `provider`.
    pub(super) fn configures(&self, provider: Provider) -> bool {
        [self.config, self.secrets]
            .iter()
            .any(|spec| match provider {
                Provider::OpenAi => spec.openai.is_some(),
                Provider::Anthropic => spec.anthropic.is_some(),
                Provider::HuggingFace => spec.hf.is_some(),
            })
    }

    /// `mr-raw-placeholder-key-counts`: the `api_key` of `provider` as written in the files
    /// (secrets first), before any `${VAR}` is expanded.
    pub(super) fn raw_api_key(&self, provider: Provider) -> Option<String> {
        [self.secrets, self.config]
            .into_iter()
            .filter_map(|spec| match provider {
                Provider::OpenAi => spec.openai.as_ref(),
                Provider::Anthropic => spec.anthropic.as_ref(),
                Provider::HuggingFace => spec.hf.as_ref(),
            })
            .find_map(|spec| spec.api_key.as_ref())
            .map(|key| key.value.clone())
            .filter(|key| !key.trim().is_empty())
    }

    pub(super) fn provider(&self, provider: Provider) -> Result<ProviderSettings, ConfigError> {
        let pick = |spec: &'a FastAgentSpec| match provider {
            Provider::OpenAi => spec.openai.as_ref(),
            Provider::Anthropic => spec.anthropic.as_ref(),
            Provider::HuggingFace => spec.hf.as_ref(),
        };
        let layers = [
            (pick(self.secrets), self.secrets_src),
            (pick(self.config), self.config_src),
        ];
        let mut base_url = None;
        let mut api_key = None;
        for (spec, src) in layers {
            let (Some(spec), Some(src)) = (spec, src) else {
                continue;
            };
            if base_url.is_none()
                && let Some(b) = &spec.base_url
            {
                // `rx-empty-base-url-placeholder-no-default`: an unset variable expands to `""`,
                // which counts as a value (the default applies only to a missing key).
                base_url = if crate::defect!("rx-empty-base-url-placeholder-no-default") {
                    Some(expand_unset_empty(&b.value, self.env))
                } else {
                    self.expand_opt(src, b, false)?
                };
            }
            if api_key.is_none()
                && let Some(k) = &spec.api_key
            {
                api_key = self.expand_opt(src, k, false)?;
            }
        }
        let (env_url, env_key, default_url) = match provider {
            Provider::OpenAi => (
                Some("OPENAI_BASE_URL"),
                "OPENAI_API_KEY",
                DEFAULT_OPENAI_BASE_URL,
            ),
            Provider::Anthropic => (
                Some("ANTHROPIC_BASE_URL"),
                "ANTHROPIC_API_KEY",
                DEFAULT_ANTHROPIC_BASE_URL,
            ),
            // fast-agent's `hf` provider: `hf.base_url` or its router; the key is `HF_TOKEN`.
            Provider::HuggingFace => (None, "HF_TOKEN", DEFAULT_HF_BASE_URL),
        };
        let env_ignored =
            provider == Provider::OpenAi && crate::defect!("openai-base-url-env-ignored");
        let default_url = if env_ignored {
            // The defect's stand-in for the public default: a dead loopback port.
            "http://127.0.0.1:9/v1"
        } else if provider == Provider::OpenAi
            && crate::defect!("px-openai-default-base-url-without-v1")
        {
            // `px-openai-default-base-url-without-v1`: the host alone, nothing appends `/v1`.
            "https://api.openai.com"
        } else {
            default_url
        };
        let base_url = base_url
            .filter(|u| !u.is_empty() || crate::defect!("rx-empty-base-url-placeholder-no-default"))
            .or_else(|| {
                env_url
                    .and_then(|name| self.env.get(name))
                    .filter(|_| !env_ignored)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| default_url.to_owned());
        // `qx-models-url-via-urljoin`: whether the base URL was written with its trailing slash.
        #[cfg(feature = "defects")]
        crate::defects::remember_base_url(&base_url);
        let api_key = api_key
            .filter(|k| !k.is_empty())
            .or_else(|| self.env.get(env_key).map(str::to_owned));
        let mut settings = ProviderSettings::new(base_url.trim_end_matches('/'));
        settings.api_key = api_key.map(Secret::new);
        Ok(settings)
    }
}

/// `nx-unset-header-var-empty`: `value` with every `${VAR}` of an unset variable replaced by
/// nothing (a malformed reference is kept as written).
fn expand_unset_empty(value: &str, env: &Env) -> String {
    let mut text = value.to_owned();
    loop {
        match expand(&text, env) {
            Ok(expanded) => return expanded,
            Err(ExpandError::Unset(name)) => {
                let reference = format!("${{{name}}}");
                if !text.contains(&reference) {
                    return text;
                }
                text = text.replace(&reference, "");
            }
            Err(ExpandError::Malformed) => return text,
        }
    }
}

#[derive(Default)]
pub(super) struct MergedServer<'a> {
    layers: Vec<(&'a ServerSpec, &'a SourceFile)>,
}

pub(super) fn parse_model(
    src: &SourceFile,
    spanned: &Spanned<String>,
    text: &str,
) -> Result<ModelRef, ConfigError> {
    let text = text.trim();
    let (prefix, model) = if crate::defect!("cm-provider-from-last-dot") {
        text.rsplit_once('.').unwrap_or(("", text))
    } else {
        text.split_once('.').unwrap_or(("", text))
    };
    // fast-agent accepts query options after the model (`openai.gpt-4.1?reasoning=high`).
    let model = model.split('?').next().unwrap_or(model);
    let provider = match prefix {
        "openai" => Provider::OpenAi,
        "anthropic" => Provider::Anthropic,
        "hf" => Provider::HuggingFace,
        _ => {
            return Err(at(
                src,
                spanned,
                format!("model `{text}` does not name a supported provider"),
            )
            .with_hint(
                "write `openai.<model>` (any OpenAI-compatible server), `anthropic.<model>` or `hf.<model>`",
            ));
        }
    };
    if model.is_empty() {
        return Err(
            at(src, spanned, format!("model `{text}` has no model name"))
                .with_hint("write the model after the provider, e.g. openai.gpt-4.1"),
        );
    }
    Ok(ModelRef {
        provider,
        model: model.to_owned(),
    })
}
