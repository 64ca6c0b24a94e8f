//! `/metrics` (seed 001 §Metrics).

pub(super) const KNOWN: &[(&str, &str)] = &[
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
        "metrics-agent-port-own-agent-only",
        "an agent's own port serves only the series of that agent (per-agent metrics instead of process-global ones)",
    ),
    (
        "metrics-no-process-collector",
        "`/metrics` leaves out the standard process metrics (`process_resident_memory_bytes`, `process_cpu_seconds_total`, `process_open_fds`, …)",
    ),
    (
        "send-duration-model-only",
        "`pallas_send_message_duration_seconds` leaves out the time the call spent in downstream tool calls",
    ),
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
        "metrics-turn-also-under-default-model",
        "an agent on its own model has each LLM turn counted under that model and again under `default_model`'s",
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
    (
        "llm-gauge-up-after-health",
        "a `get_health` that does not re-probe sets `pallas_llm_provider_up` to 1",
    ),
    (
        "llm-gauge-for-inactive-providers",
        "`pallas_llm_provider_up` has a series for every keyed provider, 0 for one whose key-only preflight failed",
    ),
];
