//! Contract mutants: one-sentence misreadings of seeds 000/001 that show only on inputs or modes
//! other than the suite's first example (capitalised keys, several images, a second call, a
//! dotted model, single-agent mode, a reload). Written from the seeds by a reviewer; each is held
//! by `tests/mutants.yaml`.

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
];
