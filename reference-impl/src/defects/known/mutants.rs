//! Contract mutants: one-sentence misreadings of seeds 000/001 that show only on inputs or modes
//! other than the suite's first example (capitalised keys, several images, a second call, a
//! dotted model, single-agent mode, a reload). Written from the seeds by a reviewer; each is held
//! by `tests/mutants.yaml`. `fm-…`, `mr-…`, `ms-…`, `nx-…`, `px-…`, `qx-…` and `rx-…` realise a
//! second, a third, a fourth, a fifth, a sixth, a seventh and an eighth fresh list of misreadings.

pub(super) const KNOWN: &[(&str, &str)] = &[
    (
        "cm-slug-first-underscore",
        "the registry slug replaces only the first underscore of the agent key",
    ),
    ("cm-slug-lowercased", "the registry slug is lower-cased"),
    (
        "cm-slug-collapses-underscores",
        "a run of underscores in the agent key becomes one hyphen in the registry slug",
    ),
    (
        "cm-title-underscores-as-spaces",
        "the default title turns the key's underscores into spaces before `title()`",
    ),
    (
        "cm-title-first-letter-only",
        "the default title upper-cases only the key's first character",
    ),
    (
        "cm-title-no-capital-after-digit",
        "the default title does not capitalise a letter that follows a digit",
    ),
    (
        "cm-history-prompt-from-slug",
        "the history prompt is named from the registry slug (`tech-research_history`)",
    ),
    (
        "cm-history-prompt-lowercased",
        "the history prompt name is lower-cased",
    ),
    (
        "cm-step-prefix-slug",
        "loop step progress messages are led by the registry slug instead of the agent name",
    ),
    (
        "cm-send-metric-label-slug",
        "`pallas_send_message_total` labels the agent with its registry slug",
    ),
    (
        "cm-health-gauge-label-lowercased",
        "`pallas_agent_health_status` lower-cases its `agent` label",
    ),
    (
        "cm-capabilities-model-after-last-dot",
        "`capabilities.model` is the model string after its last dot",
    ),
    (
        "cm-preflight-model-first-segment",
        "the OpenAI preflight looks up only the first dot-segment of the model name",
    ),
    (
        "cm-provider-from-last-dot",
        "the provider prefix is taken up to the model string's last dot",
    ),
    (
        "cm-image-first-only",
        "only the first image of a message reaches the model and the history",
    ),
    (
        "cm-images-reversed",
        "the images of a message reach the model in reverse order",
    ),
    (
        "cm-image-mime-always-png",
        "every image is passed on as `image/png`, whatever its `mime_type`",
    ),
    (
        "cm-header-placeholder-authorization-only",
        "`${VAR}` is expanded only in a downstream's `Authorization` header",
    ),
    (
        "cm-step-counter-per-process",
        "loop steps are numbered across the whole process, not from 1 in each call",
    ),
    (
        "cm-tool-error-counted-ok",
        "a failed downstream tool call is counted with `outcome=\"ok\"`",
    ),
    (
        "cm-progress-token-zero-absent",
        "a progress token `0` is treated as no token",
    ),
    (
        "cm-health-degraded-without-servers",
        "an agent without downstream servers reports `degraded`",
    ),
    (
        "cm-reload-keeps-title-description",
        "a reload that changes only an agent's title or description leaves its registry entry as it was",
    ),
    (
        "fm-registry-frozen-at-startup",
        "the registry keeps serving the agents of startup: a reload's added and removed agents never show",
    ),
    (
        "fm-slug-from-module",
        "the registry slug is built from the last segment of the agent's `module`, not its key",
    ),
    (
        "fm-model-after-last-dot",
        "the model name (`capabilities.model`, the preflight's model) is taken after the last dot of `default_model`",
    ),
    (
        "fm-health-all-down-error",
        "`get_health` reports `error` instead of `degraded` when every downstream server is unreachable",
    ),
    (
        "fm-llm-never-reprobed",
        "`get_health` never re-probes the LLM provider: the startup preflight result is kept for good",
    ),
    (
        "fm-health-llm-only-no-message",
        "a `get_health` degraded only by the LLM provider carries no `message`",
    ),
    (
        "fm-iserror-reported-completed",
        "a downstream `isError` result is announced as `{server}/{tool}: completed`",
    ),
    (
        "fm-step-counters-per-kind",
        "LLM turns and tool executions are numbered by two separate step counters",
    ),
    (
        "fm-step-total-set",
        "loop step notifications carry `total` (equal to `progress`) instead of none",
    ),
    (
        "fm-progress-server-from-last-dunder",
        "a tool's progress prefix is its namespaced name up to the last `__`, not the server it went to",
    ),
    (
        "fm-history-prompt-request-scope",
        "a request-scoped agent lists `{agent}_history` too, always empty",
    ),
    (
        "fm-explicit-auth-case-sensitive",
        "a configured header counts as explicit Authorization only when spelt `Authorization`",
    ),
    (
        "fm-bearer-kept-after-error",
        "the bearer of a failed `send_message` stays published for later calls without one",
    ),
    (
        "fm-placeholder-whole-value-only",
        "`${VAR}` is expanded only when it is the whole value",
    ),
    (
        "fm-preflight-fatal-definitive",
        "a rejected key or missing model at preflight stops the process (exit code 3); an unreachable provider only warns",
    ),
    (
        "fm-depends-on-two-waves",
        "startup runs two waves (every agent named in a `depends_on`, then the rest); the first wave waits for nothing",
    ),
    (
        "fm-health-counted-as-send",
        "each `get_health` call is counted in `pallas_send_message_total` (outcome ok)",
    ),
    (
        "fm-llm-turns-per-request",
        "`pallas_llm_turns_total` counts one turn per `send_message`, not every round-trip",
    ),
    (
        "fm-duration-success-only",
        "a failed `send_message` is not observed in `pallas_send_message_duration_seconds`",
    ),
    (
        "fm-operation-label-tool-name",
        "`pallas_tool_calls_total` labels `operation` with the downstream tool's name instead of `tool`",
    ),
    (
        "fm-downstream-up-not-zeroed",
        "a failed probe leaves `pallas_downstream_up` as it was instead of setting 0",
    ),
    (
        "mr-registry-omits-subagents",
        "the registry leaves out every agent named in another agent's `depends_on`",
    ),
    (
        "mr-capabilities-always-defaults",
        "without `model_capabilities` every registry entry still publishes `capabilities`, with the registration defaults",
    ),
    (
        "mr-registry-rereads-agents-file",
        "the registry re-reads `agents.yaml` on every request and lists the file's agents, served or not",
    ),
    (
        "mr-probe-timeout-1s",
        "each downstream probe of `get_health` waits 1 s instead of 3 s",
    ),
    (
        "mr-probe-4xx-reachable",
        "a downstream answering `initialize` with any HTTP status below 500 (401, 403, 404 included) counts as reachable",
    ),
    (
        "mr-health-probes-all-servers",
        "`get_health` probes every server under `mcp.servers`, not only the agent's own",
    ),
    (
        "mr-health-error-as-tool-error",
        "an agent that cannot process requests answers `get_health` with an `isError` traceback instead of `status: error`, and its health gauge is left as it was",
    ),
    (
        "mr-health-message-urls",
        "a degraded `get_health` message names unreachable servers by URL and puts the LLM part first",
    ),
    (
        "mr-step-prefix-app-name",
        "loop step progress messages are led by the module's `FastAgent(\"…\")` application name instead of the agent name",
    ),
    (
        "mr-progress-subagent-tools-only",
        "`{server}/{tool}: started` / `completed` are announced only for calls to another agent (its `send_message`), not for plain MCP tools",
    ),
    (
        "mr-message-tool-named-after-agent",
        "the message tool is listed and called under the agent's name; no `send_message` tool exists",
    ),
    (
        "mr-history-prompt-shared-only",
        "`{agent}_history` is offered only for `instance_scope: shared`, not for `connection`",
    ),
    (
        "mr-bearer-scheme-case-sensitive",
        "the inbound bearer is taken only under a scheme spelt exactly `Bearer` (`bearer X`, `BEARER X` carry none)",
    ),
    (
        "mr-bearer-replaces-provider-key",
        "the inbound bearer replaces the configured API key of whatever provider is active (OpenAI `Authorization`, Anthropic `x-api-key`)",
    ),
    (
        "mr-empty-bearer-published",
        "a call without an inbound bearer sends `Authorization: Bearer None` to every `forward_inbound_auth` server",
    ),
    (
        "mr-placeholder-upper-letters-only",
        "`${VAR}` is expanded only for names of upper-case letters and underscores; others stay verbatim",
    ),
    (
        "mr-dotenv-quotes-kept",
        "`.env` is read as plain `KEY=VALUE` lines: quotes and trailing comments stay in the value",
    ),
    (
        "mr-raw-placeholder-key-counts",
        "a provider whose `api_key` is an unexpanded `${VAR}` of an unset variable counts as keyed, and its key-only preflight sends the placeholder",
    ),
    (
        "mr-other-prefix-health-as-openai",
        "a model prefix other than `anthropic` (`hf.`) makes OpenAI the provider whose preflight decides health",
    ),
    (
        "mr-probe-authorization-only",
        "health probes send only the configured `Authorization` header, not the server's other headers",
    ),
    (
        "mr-probe-delete-without-headers",
        "the probe's teardown `DELETE` carries the session id without the server's configured headers",
    ),
    (
        "mr-tokens-cumulative-across-requests",
        "an agent with a shared or per-connection history adds its running LLM turn and token totals to the counters after every call",
    ),
    (
        "mr-root-log-level-info",
        "without `PALLAS_ROOT_LOG_LEVEL` the root level is always INFO, not the less verbose of Pallas's level and INFO",
    ),
    (
        "mr-forward-trace-debug",
        "`pallas.forward.trace` records are logged at DEBUG, so the default INFO level drops them",
    ),
    (
        "mr-readiness-get-200",
        "a `depends_on` agent counts as ready only when a plain `GET /mcp` answers 200: the wait runs to its timeout, then startup goes on",
    ),
    (
        "mr-preflight-model-substring",
        "the OpenAI preflight finds the configured model when it is a substring of a listed id",
    ),
    (
        "mr-single-agent-no-metrics",
        "`--agent NAME` serves no `/metrics` on the agent's port",
    ),
    (
        "ms-version-yaml-scalar",
        "an unquoted numeric `version` (`2.0`, `1.10`) is published as the JSON number YAML reads (`2.0`, `1.1`) instead of the string",
    ),
    (
        "ms-host-default-machine-hostname",
        "an omitted `host` defaults to the machine's hostname instead of `localhost`",
    ),
    (
        "ms-title-default-from-project-name",
        "an agent without a title is published as `name.title()` of the project's `name`, not of its key",
    ),
    (
        "ms-description-absent-null",
        "an agent without a `description` in `agents.yaml` is published with a null `description`",
    ),
    (
        "ms-agent-info-frozen-at-startup",
        "`pallas_agent_info` keeps the series of startup: a reload neither removes, adds nor re-ports any",
    ),
    (
        "ms-health-tool-framework-schema",
        "`get_health` is listed with a docstring description and a schema without `additionalProperties: false`, and accepts arguments",
    ),
    (
        "ms-probe-sse-initialize-unreachable",
        "a probe whose `initialize` is answered with an SSE stream counts as unreachable and sends no `DELETE`",
    ),
    (
        "ms-probe-delete-rejection-unreachable",
        "a downstream that refuses the probe's `DELETE` (405, any non-2xx) counts as unreachable",
    ),
    (
        "ms-llm-reprobed-every-health",
        "every `get_health` re-probes the LLM provider, whatever the TTL",
    ),
    (
        "ms-progress-namespaced-tool",
        "tool progress names the namespaced tool: `{server}/{server}__{tool}: started`",
    ),
    (
        "ms-raised-tool-no-failed-progress",
        "a downstream tool call that raises gets no `{server}/{tool}: failed` notification",
    ),
    (
        "ms-loop-progress-off",
        "no `{agent} step N (llm|tool)` notifications: only tool started/completed are sent",
    ),
    (
        "ms-images-stripped-without-vision",
        "with `vision: false` the images of a message are dropped with a warning and the text alone is sent",
    ),
    (
        "ms-any-authorization-scheme-forwarded",
        "the token after the first space of `Authorization` is taken as the bearer whatever its scheme (`Basic …` included)",
    ),
    (
        "ms-llm-passthrough-needs-forwarding-server",
        "the inbound bearer reaches a passthrough LLM provider only when one of the agent's servers has `forward_inbound_auth`",
    ),
    (
        "ms-provider-up-for-key-only-providers",
        "the startup preflight of a keyed provider no agent makes active sets `pallas_llm_provider_up` for it",
    ),
    (
        "ms-send-duration-default-buckets",
        "`pallas_send_message_duration_seconds` has the client library's default buckets (up to 10 s)",
    ),
    (
        "ms-tokens-counted-on-success-only",
        "the LLM turns and tokens of a `send_message` are counted only when it succeeds",
    ),
    (
        "ms-log-file-xdg-state-home",
        "the default log file follows `$XDG_STATE_HOME` (`$XDG_STATE_HOME/pallas/pallas.log`)",
    ),
    (
        "ms-log-level-case-sensitive",
        "a log level not spelt in Python's upper case (`debug`) is silently INFO",
    ),
    (
        "ms-stderr-pallas-records-twice",
        "with `PALLAS_LOG_STDERR` every `pallas.*` record is written twice to stderr",
    ),
    (
        "ms-dotenv-from-executable-dir",
        "`.env` is searched upwards from the executable's directory, not read from the working directory",
    ),
    (
        "ms-project-dir-from-agents-config",
        "with `agents.yaml` elsewhere (`PALLAS_AGENTS_CONFIG`), the fast-agent files and `.env` are read beside it instead of from the working directory",
    ),
    (
        "ms-preflight-active-providers-only",
        "the startup preflight checks only the providers an agent makes active, no key-only provider",
    ),
    (
        "ms-registry-started-after-agents",
        "the registry (and its `/metrics`) starts listening only after every agent serves",
    ),
    (
        "ms-module-from-agent-key",
        "an agent's module is `agents.<key>` whatever its `module` says",
    ),
    (
        "ms-single-agent-models-unregistered",
        "`--agent NAME` runs its model unregistered, with fast-agent's fallback parameters (text-only, 2048 output tokens) instead of `model_capabilities`",
    ),
    (
        "ms-history-prompt-template-instance",
        "`{agent}_history` of a per-connection agent reads the template instance's history (empty), not the session's",
    ),
    (
        "ms-tool-call-instrumented-twice",
        "each downstream tool call is counted and timed twice, and a raised one traced twice",
    ),
    (
        "nx-registry-name-project-prefixed",
        "registry names are `{namespace}/{project name}-{slug}` instead of `{namespace}/{slug}`",
    ),
    (
        "nx-title-omitted-when-unset",
        "an agent without a `title` in `agents.yaml` is published without `title` instead of `name.title()` of its key",
    ),
    (
        "nx-partial-capabilities-as-written",
        "`capabilities` publishes only the `model_capabilities` keys written in the file (and `model`), without the defaults of the others",
    ),
    (
        "nx-capabilities-from-model-database",
        "for a model fast-agent's `ModelDatabase` knows (`gpt-4.1`, `claude-sonnet-4-5`, …) `capabilities` publishes its built-in vision, context window and output limit instead of `model_capabilities`",
    ),
    (
        "nx-probe-placeholders-unexpanded",
        "`get_health` probes a downstream with its URL and headers as written in the files, `${VAR}` placeholders unexpanded",
    ),
    (
        "nx-unset-header-var-empty",
        "a header referring to an unset variable is sent with the variable expanded to nothing (`Bearer `), without a warning",
    ),
    (
        "nx-agent-binds-registry-host",
        "agents listen on the address of the `agents.yaml` `host` (loopback for the default `localhost`) instead of the bind address (`0.0.0.0`)",
    ),
    (
        "nx-preflight-timeout-3s",
        "the startup provider preflight waits 3 s (the downstream probe timeout) instead of 5 s",
    ),
    (
        "nx-preflight-any-200-ok",
        "the OpenAI preflight counts any 2xx answer to `GET {base_url}/models` as a pass, without looking for the configured model",
    ),
    (
        "nx-preflight-base-url-env-only",
        "the OpenAI preflight ignores a `base_url` written in the files: it asks `OPENAI_BASE_URL`, else the default endpoint (a dead loopback port stands in for `https://api.openai.com/v1`)",
    ),
    (
        "nx-llm-failure-error",
        "an active provider that failed its check makes `get_health` `error` instead of `degraded`",
    ),
    (
        "nx-probe-requires-session-id",
        "a downstream answering `initialize` successfully without an `Mcp-Session-Id` counts as unreachable",
    ),
    (
        "nx-health-nonok-iserror",
        "a `degraded` or `error` `get_health` answer is flagged `isError: true`",
    ),
    (
        "nx-parallel-same-tool-one-completion",
        "parallel calls to the same `{server}/{tool}` in one model turn are each announced `started`, but only one is announced `completed` or `failed`",
    ),
    (
        "nx-progress-token-first-call",
        "an agent's `send_message` notifications carry the progress token of the agent's first call that sent one, not the call's own",
    ),
    (
        "nx-tool-start-total-one",
        "`{server}/{tool}: started` notifications carry `total: 1` instead of none",
    ),
    (
        "nx-failed-progress-with-error",
        "a failed tool is announced as `{server}/{tool}: failed: <error text>` instead of `{server}/{tool}: failed`",
    ),
    (
        "nx-forwarded-bearer-without-scheme",
        "a forwarded bearer reaches the downstream as `Authorization: X`, without `Bearer `",
    ),
    (
        "nx-bearer-never-revoked",
        "a `send_message` without a bearer forwards the bearer an earlier call published to each `forward_inbound_auth` server",
    ),
    (
        "nx-images-separate-message",
        "a message's images reach the model (and the history) as a second user message after its text",
    ),
    (
        "nx-metrics-openmetrics-negotiated",
        "`/metrics` answers OpenMetrics (`# EOF`, `_created` series) to an Accept asking for it, and `text/plain; version=0.0.4; charset=utf-8` otherwise",
    ),
    (
        "nx-agent-port-no-metrics",
        "no agent port serves `/metrics`: only the registry's app mounts it",
    ),
    (
        "nx-token-kind-openai-names",
        "an OpenAI-compatible provider's tokens are counted under its usage field names (`kind=\"prompt\"`, `completion`, `cached`, `reasoning`) instead of `input`, `output`, …",
    ),
    (
        "nx-downstream-up-labelled-by-url",
        "`pallas_downstream_up` labels `server` with the server's URL instead of its name",
    ),
    (
        "nx-provider-up-set-by-health-only",
        "`pallas_llm_provider_up` is not set by the startup preflight; each `get_health` copies the stored result into it",
    ),
    (
        "nx-log-keys-stdlib-names",
        "log file records carry `asctime`, `levelname`, `name`, `message` instead of `time`, `level`, `logger`, `message`",
    ),
    (
        "nx-log-traceback-dropped",
        "a `pallas.forward.trace` record keeps its message (`downstream call raised`) and fields but not the error: no error text, no `error` field (the reference's traceback)",
    ),
    (
        "nx-trace-logger-module-name",
        "the traceback record of a downstream call that raises is logged by `pallas._fastagent_patch` instead of `pallas.forward.trace`",
    ),
    (
        "px-remote-port-from-registry-offset",
        "a registry entry's remote URL has the port `registry_port + 1 + i` (i: the agent's place in `agents.yaml`) instead of the agent's own port",
    ),
    (
        "px-version-default-package-version",
        "an `agents.yaml` without `version` publishes the Pallas package version instead of `1.0.0`",
    ),
    (
        "px-registry-port-default-from-contract",
        "an `agents.yaml` without `registry_port` serves the registry (and its `/metrics`) on 23030 instead of 24200",
    ),
    (
        "px-capabilities-model-keeps-provider-prefix",
        "`capabilities.model` is the model string as written (`openai.my-model-name`) instead of the name after the provider prefix",
    ),
    (
        "px-context-window-default-128000",
        "a `model_capabilities` block without `context_window` defaults it to 128000 instead of 131072",
    ),
    (
        "px-meta-updatedat-is-request-time",
        "`_meta…official.updatedAt` is the time of each `GET`, so two fetches of an unchanged catalogue differ",
    ),
    (
        "px-get-health-only-with-downstreams",
        "an agent without downstream servers has no `get_health` tool: not listed, and a call is an unknown tool",
    ),
    (
        "px-health-probes-run-sequentially",
        "`get_health` probes its downstream servers one after another (each `initialize` and its `DELETE`), not concurrently",
    ),
    (
        "px-probe-url-trailing-slash-stripped",
        "the health probe strips the trailing `/` of a server URL and does not follow redirects: a server at `…/mcp/` answering `POST /mcp` with 307 counts as unreachable",
    ),
    (
        "px-history-prompt-one-transcript-message",
        "`{agent}_history` answers one user message holding a `role: text` transcript of the history instead of one message per turn",
    ),
    (
        "px-stderr-flag-any-nonempty-value",
        "any non-empty `PALLAS_LOG_STDERR` (`0`, `false`, `no` included) turns the stderr sink on",
    ),
    (
        "px-progress-sent-fire-and-forget",
        "each progress notification is sent from a detached task that is never awaited, so a notification may go out after the result or be lost",
    ),
    (
        "px-progress-token-made-mandatory",
        "a `send_message` call without `_meta.progressToken` is refused with an `isError` result (`progressToken required`) instead of running",
    ),
    (
        "px-progress-server-from-serverinfo",
        "tool progress names the server by the `serverInfo.name` of its `initialize` answer instead of its configured key",
    ),
    (
        "px-dotenv-loaded-only-in-preflight",
        "`PALLAS_AGENTS_CONFIG` written only in `.env` is ignored: `.env` is read after the deployment file is chosen",
    ),
    (
        "px-openai-default-base-url-without-v1",
        "with no `base_url` and no `OPENAI_BASE_URL` the OpenAI base URL is `https://api.openai.com` (no `/v1`)",
    ),
    (
        "px-anthropic-probe-path-keeps-prefix",
        "the active Anthropic preflight asks `GET /v1/models/anthropic.<model>` (provider prefix kept), which a real API answers 404",
    ),
    (
        "px-sampling-params-stripped-for-all-anthropic",
        "`temperature`, `top_p` and `top_k` are left out of every Anthropic request, not only for Claude Opus 4.7",
    ),
    (
        "px-subagents-inverted",
        "at startup the agents that have a `depends_on` start first (each waited for until it answers), and the agents they depend on last",
    ),
    (
        "px-pallas-up-only-after-startup",
        "`pallas_up` is 0 until every agent has started, although the registry already serves `/metrics`",
    ),
    (
        "px-metrics-mount-redirects",
        "the registry's `GET /metrics` answers `307` to `/metrics/` (a mounted app); only `/metrics/` serves the exposition",
    ),
    (
        "px-health-gauges-from-background-poller",
        "a background task checks each agent's health every 60 s; `get_health` answers the last cached report without probing",
    ),
    (
        "px-third-party-pins-at-info",
        "the dependency loggers (`rmcp`, `hyper`, `reqwest`, …) are pinned at INFO instead of WARN",
    ),
    (
        "px-file-sink-level-follows-root",
        "the log file drops records more verbose than the root level: with `PALLAS_LOG_LEVEL=debug`, `pallas.*` DEBUG records do not reach it",
    ),
    (
        "px-log-dir-not-created",
        "the log file's directory is not created: a missing `~/.local/state/pallas/` stops Pallas at startup",
    ),
    (
        "px-bearer-only-on-tool-calls",
        "the forwarded bearer rides on `tools/call` requests only: a server that demands credentials to open its session is never given them, so its tools are unavailable",
    ),
    (
        "px-images-before-text",
        "a message's images come before its text in the user message sent to the model",
    ),
    (
        "qx-schema-on-first-entry-only",
        "only the first registry entry carries `$schema`; every later `servers[]` entry has none",
    ),
    (
        "qx-remotes-url-trailing-slash",
        "a registry entry's remote URL ends in `/mcp/` (trailing slash) instead of `/mcp`",
    ),
    (
        "qx-duration-observed-in-milliseconds",
        "`pallas_send_message_duration_seconds` is observed in milliseconds: `_sum` 1000 times too large, observations in the high buckets",
    ),
    (
        "qx-reasoning-tokens-folded-into-output",
        "reasoning tokens have no `kind=\"reasoning\"` series: they are only counted inside `kind=\"output\"`",
    ),
    (
        "qx-model-label-from-default-model",
        "the `model` label of `pallas_llm_turns_total` and `pallas_llm_tokens_total` is the `default_model`'s, not the model the agent called",
    ),
    (
        "qx-health-message-null-when-ok",
        "an `ok` `get_health` answer carries `\"message\": null` instead of leaving `message` out",
    ),
    (
        "qx-probe-accept-json-only",
        "health probes send `Accept: application/json` only, so a server enforcing Streamable HTTP's Accept rule (406) counts as unreachable",
    ),
    (
        "qx-probe-timeout-connect-only",
        "the probe timeout bounds only the connection: a server that accepts and never answers `initialize` makes `get_health` hang",
    ),
    (
        "qx-probe-pings-persistent-session",
        "`get_health` sends `ping` over the agent's persistent downstream session instead of a fresh `initialize` and `DELETE`",
    ),
    (
        "qx-preflight-runs-once-per-agent",
        "in all-agents mode the whole provider preflight runs once per agent, before each agent starts, instead of once",
    ),
    (
        "qx-dotless-default-model-aborts-startup",
        "a missing `default_model` stops startup at the preflight (configuration error), although every agent names its own model",
    ),
    (
        "qx-inactive-anthropic-probes-configured-model",
        "the key-only Anthropic preflight asks `GET /v1/models/{default_model's model}` instead of `/v1/models/claude-sonnet-4-5`",
    ),
    (
        "qx-models-url-via-urljoin",
        "the OpenAI preflight URL is `urljoin(base_url, \"models\")`: a base without trailing slash loses its last segment (`…/v1` → `…/models`)",
    ),
    (
        "qx-root-level-min-not-max",
        "without `PALLAS_ROOT_LOG_LEVEL` the root level is the more verbose of Pallas's level and INFO (DEBUG with `PALLAS_LOG_LEVEL=debug`)",
    ),
    (
        "qx-empty-log-level-env-counts-as-set",
        "an empty `PALLAS_LOG_LEVEL=` counts as set: the level is INFO and `logger.level` is ignored",
    ),
    (
        "qx-warns-on-servers-without-auth",
        "every downstream server without any configured header is warned about at each start (\"no auth header\")",
    ),
    (
        "qx-progress-send-failure-aborts-call",
        "a progress notification that cannot be sent fails the call: the tool call counts as failed, or `send_message` answers an error",
    ),
    (
        "qx-loop-steps-numbered-from-zero",
        "loop steps are numbered from 0: the first is `{agent} step 0 (llm)`",
    ),
    (
        "qx-forward-flag-read-from-parsed-config",
        "`forward_inbound_auth: true` is ignored: no downstream ever receives the inbound bearer",
    ),
    (
        "qx-image-mime-allowlist",
        "an image whose `mime_type` is not `image/png` or `image/jpeg` (`image/webp`, `image/gif`) fails the whole call",
    ),
    (
        "qx-history-prompt-registered-lazily",
        "`{agent}_history` is neither listed nor gettable until the agent's first `send_message`",
    ),
    (
        "qx-dependents-of-late-subagent-skipped",
        "an agent whose `depends_on` agent is not ready in time is not started (an error is logged) while startup goes on and the registry lists it",
    ),
    (
        "qx-dotenv-splits-on-every-equals",
        "a `.env` value is cut at its first `=` (`abc==` → `abc`, `…?api-version=1` → `…?api-version`)",
    ),
    (
        "qx-placeholders-expanded-before-dotenv",
        "`${VAR}` in a downstream server's `url` and headers is expanded without `.env`: a variable only `.env` sets becomes empty (`Bearer `)",
    ),
    (
        "rx-remotes-type-http",
        "a registry entry's remote is `{\"type\": \"http\", …}` instead of `\"streamable-http\"`: a client looking for the `streamable-http` entry finds no endpoint",
    ),
    (
        "rx-registry-hides-unhealthy-agents",
        "an agent whose last check failed (a failed readiness probe at startup, a `get_health` answering `error`) is left out of the registry until it recovers",
    ),
    (
        "rx-registry-name-without-namespace",
        "without `namespace` in `agents.yaml` the registry `server.name` is the bare slug (`research`), with no `{namespace}/` prefix",
    ),
    (
        "rx-empty-base-url-placeholder-no-default",
        "a provider `base_url: \"${OPENAI_BASE_URL}\"` with the variable unset is used as the empty URL instead of the default: the preflight fails",
    ),
    (
        "rx-unset-header-var-blocks-agent",
        "an agent with a downstream header that references an unset variable is not started (an error is logged) while the registry lists it",
    ),
    (
        "rx-unknown-agent-name-starts-all",
        "`--agent` naming no agent starts every agent and the registry instead of failing",
    ),
    (
        "rx-readiness-probe-uses-public-host",
        "the `depends_on` readiness probe asks `http://{agents.yaml host}:{port}/mcp`: a host that does not resolve locally delays the dependant by the whole timeout",
    ),
    (
        "rx-health-json-in-structured-content",
        "`get_health` returns its JSON in `structuredContent`; its text block holds a sentence (`Agent healthy`) that is not JSON",
    ),
    (
        "rx-health-requires-arguments-object",
        "a `get_health` call without `arguments` is refused (invalid params); only `\"arguments\": {}` works",
    ),
    (
        "rx-llm-reprobe-by-completion",
        "the provider re-probe of `get_health` posts a one-token chat completion (`max_tokens: 1`, `ping`) instead of the model listing",
    ),
    (
        "rx-initialize-probe-minimal-params",
        "the health probe's `initialize` carries `protocolVersion` alone (no `capabilities`, no `clientInfo`): a server that validates it counts as unreachable",
    ),
    (
        "rx-slow-probe-reported-degraded",
        "a downstream that answers its probe in over 1 s makes `get_health` `degraded` (`argos slow (1.2s)`) although it is reachable",
    ),
    (
        "rx-health-queued-behind-send-message",
        "every `tools/call` of an agent, `get_health` included, waits behind one lock: `get_health` waits for a running `send_message`",
    ),
    (
        "rx-probe-forwards-bearer-to-all-servers",
        "the inbound bearer of `get_health` is sent on the probes of every downstream server, opted in or not",
    ),
    (
        "rx-agent-info-as-info-metric",
        "the agent info metric is exposed as `pallas_agent_info_info` (a Prometheus `Info`), not `pallas_agent_info`",
    ),
    (
        "rx-cancelled-send-message-not-counted",
        "a cancelled `send_message` is neither counted in `pallas_send_message_total` nor observed in its duration histogram",
    ),
    (
        "rx-duration-histogram-outcome-label",
        "`pallas_send_message_duration_seconds` has an `outcome` label besides `agent`",
    ),
    (
        "rx-private-registry-drops-process-metrics",
        "the metrics live in a private registry: no `process_*` series on `/metrics`",
    ),
    (
        "rx-health-gauge-copies-daedalus-labels",
        "`pallas_agent_health_status` carries an `instance` label (the project name) besides `agent`",
    ),
    (
        "rx-stderr-handler-plain-text",
        "`PALLAS_LOG_STDERR=1` writes plain-text lines (`INFO pallas.x: message`) to stderr instead of JSON records",
    ),
    (
        "rx-empty-text-dropped-with-images",
        "a `send_message` with an empty `message` and images sends the model a user turn of images alone, no text part",
    ),
    (
        "rx-json-response-mode-drops-progress",
        "every POST is answered with one `application/json` body: no progress notification ever reaches the client",
    ),
    (
        "rx-final-result-last-turn-only",
        "the `send_message` result holds the last model turn's text alone: what the model said beside its tool calls is dropped",
    ),
    (
        "rx-cancel-does-not-stop-loop",
        "a cancelled `send_message` only stops its progress: the loop runs on, its downstream call is not cancelled and the model is asked again",
    ),
    (
        "rx-default-temperature-injected",
        "an agent with no sampling parameters sends `\"temperature\": 0.7` in every model request",
    ),
    (
        "rx-auth-middleware-on-pallas-tools",
        "every `tools/call` but `get_health`, and `prompts/get`, is refused with 401 without an `Authorization: Bearer` header",
    ),
    (
        "rx-anthropic-preflight-bearer-auth",
        "the Anthropic preflight authenticates with `Authorization: Bearer` and no `x-api-key` nor `anthropic-version`: the real API rejects a valid key",
    ),
    (
        "rx-shared-scope-history-not-kept",
        "a shared-scope agent runs each `send_message` on a fresh history: the model never sees the earlier exchanges and `{agent}_history` holds the last one only",
    ),
    (
        "rx-sigterm-exits-with-traceback",
        "SIGTERM or Ctrl-C ends Pallas with exit status 1, a traceback on stderr and an error record per agent",
    ),
];
