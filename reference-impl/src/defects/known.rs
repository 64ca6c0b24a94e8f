//! The defect catalogue: every defect's name and what it breaks (mirrored in `DEFECTS.md`).

/// Every known defect with what it breaks, in catalog order.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "registry-invalid-entry",
        "registry entries lose their required `version`",
    ),
    (
        "registry-wrong-content-type",
        "the registry answers with Content-Type text/plain",
    ),
    (
        "registry-name-keeps-underscores",
        "registry slugs keep the agent key's underscores",
    ),
    (
        "registry-remote-dead",
        "registry remotes point at a path that is not an MCP endpoint",
    ),
    (
        "registry-keeps-removed-agent",
        "a removed agent stays in the registry",
    ),
    (
        "registry-capabilities-always",
        "`capabilities` is published even when `model_capabilities` is not configured",
    ),
    (
        "health-tool-schema-open",
        "`get_health` is listed without `additionalProperties: false`",
    ),
    (
        "health-no-message",
        "a degraded `get_health` answer carries no `message`",
    ),
    (
        "health-ok-when-down",
        "`get_health` reports ok although downstream servers are unreachable",
    ),
    (
        "health-timestamp-epoch",
        "`get_health` stamps its answer with Unix seconds instead of an ISO 8601 time",
    ),
    (
        "health-calls-llm",
        "`get_health` sends a chat completion to the LLM",
    ),
    (
        "probe-serially",
        "downstream servers are probed one after another",
    ),
    (
        "probe-skip-delete",
        "probe sessions are never closed with DELETE",
    ),
    (
        "probe-accept-json-only",
        "health probes send `Accept: application/json` without `text/event-stream`",
    ),
    (
        "health-progress",
        "`get_health` sends progress notifications when given a token",
    ),
    (
        "probe-with-bearer",
        "health probes carry the inbound bearer",
    ),
    (
        "progress-without-token",
        "progress is sent although the request carried no token",
    ),
    (
        "progress-token-as-string",
        "numeric progress tokens are echoed as strings",
    ),
    (
        "progress-not-monotonic",
        "`progress` decreases from one notification to the next",
    ),
    (
        "progress-drop-started",
        "`{server}/{tool}: started` notifications are not sent",
    ),
    (
        "progress-after-result",
        "a progress notification follows the request's result",
    ),
    (
        "progress-after-cancel",
        "a cancelled call gets one more notification on its stream",
    ),
    (
        "progress-bad-message",
        "loop step messages lose their `(llm)` / `(tool)` suffix",
    ),
    ("progress-total-on-steps", "loop steps carry a `total`"),
    (
        "bearer-to-all-servers",
        "the inbound bearer is forwarded to every downstream server",
    ),
    (
        "bearer-over-configured-header",
        "the inbound bearer replaces a configured Authorization header",
    ),
    (
        "reuse-first-bearer",
        "the first inbound bearer is forwarded on every later call",
    ),
    ("log-bearer", "the inbound bearer is written to the log"),
    (
        "metrics-wrong-content-type",
        "`/metrics` answers with Content-Type application/json",
    ),
    (
        "metrics-missing-metric",
        "`/metrics` leaves out `pallas_send_message_total`",
    ),
    (
        "metrics-frozen-counters",
        "send_message and tool call counters and histograms never move",
    ),
    (
        "metrics-health-gauge-stale",
        "`pallas_agent_health_status` ignores `get_health`",
    ),
    (
        "images-items-untyped",
        "the message tool's `images` items are untyped (no `data`/`mime_type` object)",
    ),
    (
        "message-tool-schema-loose",
        "`send_message` is listed without `message` being required",
    ),
    (
        "reply-empty",
        "`send_message` answers an empty text instead of the model's reply",
    ),
    (
        "images-dropped",
        "images of a message never reach the model: only its text is sent",
    ),
    (
        "provider-error-as-success",
        "a provider failure gives a result without `isError`",
    ),
    ("history-empty", "`{agent}_history` is always empty"),
    (
        "unknown-tool-is-result",
        "an unknown tool gets an `isError` result instead of a JSON-RPC error",
    ),
    (
        "invalid-arguments-accepted",
        "a `send_message` call without `message` runs as an empty message instead of an `isError` result",
    ),
    (
        "dotenv-overrides-env",
        "`.env` overrides a variable already set in the environment",
    ),
    (
        "agents-config-env-ignored",
        "`PALLAS_AGENTS_CONFIG` is ignored: `agents.yaml` is always read",
    ),
    (
        "config-error-exit-zero",
        "a configuration error is reported but the process exits with code 0",
    ),
    (
        "host-default-127",
        "an omitted `host` defaults to `127.0.0.1` instead of `localhost`",
    ),
    (
        "default-context-window-128k",
        "an omitted `context_window` defaults to 128000 instead of 131072",
    ),
    (
        "default-max-output-8192",
        "an omitted `max_output_tokens` defaults to 8192 instead of 16384",
    ),
    (
        "module-card-path-flat",
        "`module: agents.x` is read from `x.md` instead of `agents/x.md`",
    ),
    (
        "placeholder-left-literal",
        "a `${VAR}` placeholder is used as written instead of being replaced by the variable's value",
    ),
    (
        "depends-on-reversed",
        "agents start in reverse `depends_on` order, without waiting for their dependencies (which come up 3 s later)",
    ),
    (
        "no-warn-unset-header-var",
        "a header referring to an unset variable is dropped without a warning",
    ),
    (
        "single-agent-starts-registry",
        "`--agent NAME` also serves the registry",
    ),
    (
        "single-agent-starts-all",
        "`--agent NAME` serves every agent",
    ),
    (
        "preflight-per-agent",
        "the provider preflight runs once per agent instead of once",
    ),
    (
        "preflight-blocks-startup",
        "a failed provider preflight stops the process (exit code 3)",
    ),
    (
        "preflight-timeout-10s",
        "the provider preflight waits 10 s instead of 5 s",
    ),
    ("log-level-env-ignored", "`PALLAS_LOG_LEVEL` is ignored"),
    (
        "log-config-level-wins",
        "`logger.level` wins over `PALLAS_LOG_LEVEL`",
    ),
    (
        "log-stderr-always",
        "JSON log lines go to stderr although `PALLAS_LOG_STDERR` is unset",
    ),
    (
        "log-file-env-ignored",
        "`PALLAS_LOG_FILE` is ignored: the log goes to the default path",
    ),
    (
        "log-file-default-path",
        "the default log file is `~/.local/share/pallas/pallas.log`",
    ),
    (
        "registry-schema-url-old",
        "registry entries name the 2025-09-29 server schema in `$schema`",
    ),
    (
        "registry-meta-not-latest",
        "registry `_meta` says `isLatest: false`",
    ),
    (
        "capabilities-model-with-prefix",
        "`capabilities.model` keeps the provider prefix (`openai.mock-model`)",
    ),
    (
        "default-vision-true",
        "an omitted `vision` defaults to true instead of false",
    ),
    (
        "log-file-off-with-stderr",
        "the log file is not written while `PALLAS_LOG_STDERR` is set",
    ),
    (
        "log-root-follows-pallas-level",
        "third-party libraries log at Pallas's own level (debug) by default",
    ),
    (
        "probe-any-reply-ok",
        "`get_health` counts a server whose `initialize` answer is a JSON-RPC error as reachable",
    ),
    (
        "probe-discover-only",
        "`get_health` ignores a successful `initialize` and judges each server by `server/discover` alone",
    ),
    (
        "probe-skips-last-server",
        "`get_health` probes every downstream server but the last one configured",
    ),
    (
        "metrics-send-counted-twice",
        "a successful `send_message` is counted twice in `pallas_send_message_total`",
    ),
    (
        "metrics-tokens-cumulative",
        "each LLM turn adds the request's running token total instead of its own usage",
    ),
    (
        "metrics-tool-iserror-as-ok",
        "a downstream `isError` result is counted as `outcome=\"ok\"`",
    ),
    (
        "llm-gauge-unset-at-preflight",
        "the startup preflight does not set `pallas_llm_provider_up`",
    ),
    (
        "progress-starts-at-one",
        "a call's first progress notification reports 1 instead of 0",
    ),
    (
        "progress-steps-from-zero",
        "loop steps are numbered from 0 (`step 0 (llm)`)",
    ),
    (
        "bearer-to-llm",
        "the inbound bearer replaces the configured API key on OpenAI model requests",
    ),
    (
        "probe-http-error-reachable",
        "a downstream answering `initialize` with an HTTP 5xx counts as reachable",
    ),
    (
        "probe-timeout-5s",
        "each downstream probe waits 5 s instead of 3 s",
    ),
    (
        "probe-delete-without-session-id",
        "the probe's `DELETE` is sent without the `Mcp-Session-Id` it was given",
    ),
    (
        "health-slow-ok",
        "a reachable downstream that answers its probe slowly leaves `get_health` ok",
    ),
    (
        "health-ok-when-some-down",
        "`get_health` is degraded only when every downstream server is unreachable",
    ),
    (
        "health-degraded-when-all-up",
        "`get_health` reports degraded although every downstream server is reachable and the provider healthy",
    ),
    (
        "health-message-json",
        "a degraded `get_health` message is a JSON document instead of an explanation",
    ),
    (
        "health-ignores-provider",
        "the active provider's failed check is left out of `get_health`",
    ),
    (
        "health-status-renamed",
        "`get_health` names its status field `state`",
    ),
    (
        "health-two-content-blocks",
        "`get_health` answers two text content blocks",
    ),
    (
        "health-tool-takes-argument",
        "`get_health` is listed with an optional `verbose` argument",
    ),
    (
        "health-description-reworded",
        "`get_health` is listed with another description than the seed's",
    ),
    (
        "health-tool-only-with-servers",
        "an agent without downstream servers does not list `get_health`",
    ),
    (
        "registry-servers-renamed",
        "the registry document lists its entries under `agents` instead of `servers`",
    ),
    (
        "registry-entry-no-name",
        "registry entries lose their `server.name`",
    ),
    (
        "registry-version-v-prefix",
        "registry versions are published with a `v` prefix (`v2.3.4`), not semver",
    ),
    (
        "registry-description-multiline",
        "registry descriptions get a second line",
    ),
    (
        "registry-capabilities-no-max-output",
        "published `capabilities` lack `max_output_tokens`",
    ),
    (
        "registry-capabilities-first-only",
        "only the first registry entry carries `capabilities`",
    ),
    (
        "registry-title-raw-key",
        "an agent without a title is published under its raw key instead of `name.title()`",
    ),
    (
        "registry-version-default-0.1.0",
        "without a configured version entries are published as `0.1.0`",
    ),
    (
        "registry-description-ignored",
        "a configured agent description is ignored for the fallback",
    ),
    // ── Metrics values, one seed row each (issue 21) ──
    (
        "metrics-duration-never-sampled",
        "`pallas_send_message_duration_seconds` is declared but never records a sample",
    ),
    ("metrics-up-zero", "`pallas_up` is 0 while the process runs"),
    (
        "metrics-agent-info-first-only",
        "`pallas_agent_info` is published for the first agent served only, not per configured agent",
    ),
    (
        "metrics-send-duration-zero",
        "`pallas_send_message_duration_seconds` records 0 instead of the call's wall-clock duration",
    ),
    (
        "metrics-turns-final-only",
        "`pallas_llm_turns_total` counts only the final LLM turn of a call, not every round-trip",
    ),
    (
        "metrics-tokens-drop-reasoning",
        "`pallas_llm_tokens_total` never counts the `reasoning` kind",
    ),
    (
        "metrics-tool-operation-method",
        "`pallas_tool_calls_total` labels a tool call `operation=\"tools/call\"` instead of `tool`",
    ),
    (
        "metrics-tool-duration-zero",
        "`pallas_tool_call_duration_seconds` records 0 instead of the operation's duration",
    ),
    (
        "metrics-downstream-up-always",
        "`pallas_downstream_up` is 1 for a server that failed its `get_health` probe",
    ),
    (
        "metrics-llm-provider-up-always",
        "`pallas_llm_provider_up` is 1 even when the provider failed its preflight",
    ),
    (
        "metrics-degraded-as-zero",
        "`pallas_agent_health_status` is 0 instead of 0.5 for a degraded agent",
    ),
    (
        "metrics-agent-port-absent",
        "an agent's own port does not serve `/metrics`",
    ),
    (
        "metrics-require-auth",
        "`/metrics` answers 401 to a request without an `Authorization` header",
    ),
    (
        "metrics-skip-second-server",
        "a downstream operation is not counted unless it lands on the agent's first server",
    ),
    (
        "metrics-send-error-uncounted",
        "a failed `send_message` is not counted in `pallas_send_message_total`",
    ),
    // ── Progress and bearer, one seed sentence each (issue 21) ──
    (
        "bearer-not-forwarded",
        "a server marked `forward_inbound_auth` never receives the inbound bearer",
    ),
    (
        "bearer-previous-turn",
        "a server marked `forward_inbound_auth` receives the bearer of the previous turn instead of this one's",
    ),
    (
        "progress-token-stale",
        "every call's progress notifications echo the first progress token the process saw",
    ),
    (
        "progress-counter-stalls",
        "a call's second progress notification repeats the first one's `progress` value",
    ),
    (
        "progress-completed-total-one",
        "a finished sub-task reports `total` 1.0 whatever its `progress`",
    ),
    (
        "progress-completed-without-total",
        "a finished sub-task is reported without `total`",
    ),
    (
        "progress-started-no-server",
        "a tool start is reported as `{tool}: started`, without the server",
    ),
    (
        "progress-completed-as-done",
        "a finished tool is reported as `{server}/{tool}: done`",
    ),
    (
        "progress-failed-as-completed",
        "a failed tool is reported as `{server}/{tool}: completed`",
    ),
    (
        "progress-llm-step-as-turn",
        "an LLM turn is reported as `{agent} step N (turn)`",
    ),
    (
        "progress-tool-step-as-llm",
        "a tool execution step is reported as `{agent} step N (llm)`",
    ),
    (
        "anthropic-preflight-lists-models",
        "the Anthropic preflight requests the model listing `GET /v1/models` instead of `GET /v1/models/{model}`",
    ),
    (
        "openai-preflight-retrieves-model",
        "the OpenAI preflight requests `GET {base_url}/models/{model}` instead of the listing `GET {base_url}/models`",
    ),
    (
        "openai-preflight-model-unchecked",
        "the OpenAI preflight accepts any model listing without confirming the configured model is in it",
    ),
    (
        "openai-base-url-env-ignored",
        "`OPENAI_BASE_URL` is ignored: OpenAI requests go to the default endpoint (a dead loopback port stands in for `https://api.openai.com/v1`, so the trial never leaves the machine)",
    ),
    (
        "provider-prefix-ignored",
        "an agent's provider is OpenAI whenever an `openai` section is configured, whatever the `default_model` prefix names",
    ),
    (
        "log-record-no-logger",
        "log file records carry the raw `target` field instead of `logger`",
    ),
    (
        "root-log-level-env-ignored",
        "`PALLAS_ROOT_LOG_LEVEL` is ignored: third-party libraries stay at `max(pallas_level, INFO)` and pinned",
    ),
    (
        "forward-trace-missing",
        "a downstream tool call that raises leaves no `pallas.forward.trace` record in the log file",
    ),
    (
        "log-rotate-20mb",
        "the log file rotates at 20 MB instead of 10 MB",
    ),
    (
        "bind-loopback-default",
        "without an explicit bind address, agents and the registry listen on 127.0.0.1 instead of 0.0.0.0",
    ),
    (
        "bearer-per-agent",
        "the inbound bearer goes to every server of an agent that has one server opted in",
    ),
    (
        "bearer-scheme-kept",
        "the captured bearer keeps its `Bearer ` scheme, so servers receive `Bearer Bearer …`",
    ),
    (
        "progress-free-text",
        "a tool start is reported in free text (`calling {tool} on {server}`)",
    ),
    (
        "bearer-not-on-session-open",
        "the session opened for a caller's bearer sends `initialize` and `tools/list` without it",
    ),
    (
        "llm-gauge-up-after-health",
        "a `get_health` that does not re-probe sets `pallas_llm_provider_up` to 1",
    ),
    (
        "progress-agent-prefix",
        "every tool's progress notes carry the agent's first server as prefix, not the tool's own",
    ),
    (
        "probe-sse-reply-unread",
        "a probe answered with an SSE stream is counted unreachable (only JSON bodies are read)",
    ),
    (
        "health-anthropic-misread",
        "a healthy active Anthropic provider is reported with an unknown status",
    ),
    (
        "health-llm-ping",
        "`get_health` pings the LLM with a one-word completion",
    ),
    (
        "health-llm-summary",
        "a degraded `get_health` asks the LLM to summarise the problem",
    ),
    (
        "registry-extra-dead-remote",
        "each registry entry gets a second `streamable-http` remote that is no MCP endpoint",
    ),
    (
        "registry-meta-string",
        "`servers[]._meta` is published as a JSON string instead of an object",
    ),
    (
        "registry-jsonrpc-envelope",
        "the registry document is wrapped in a JSON-RPC response envelope",
    ),
    (
        "registry-ignores-added-agent",
        "an agent added by a reload serves but is never listed in the registry",
    ),
    (
        "health-routed-through-llm",
        "`get_health` is handed to the model as a user turn before the report is built",
    ),
    (
        "registry-requires-auth",
        "the registry answers 401 to a request without an Authorization header",
    ),
];
