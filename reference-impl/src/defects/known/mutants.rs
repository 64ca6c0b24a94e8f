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
];
