//! `get_health` and its downstream probes (seed 000 §2, seed 001 §Runtime get_health Tool).

pub(super) const KNOWN: &[(&str, &str)] = &[
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
        "health probes carry the bearer of the last message call that had one, after that call ended",
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
        "health-slow-degraded",
        "a reachable downstream whose probe takes over 1 s makes `get_health` `degraded` (a slowness threshold no seed sets)",
    ),
    (
        "probe-timeout-reachable",
        "a downstream that gives no answer within the probe timeout counts as reachable",
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
        "health-routed-through-llm",
        "`get_health` is handed to the model as a user turn before the report is built",
    ),
    (
        "health-tool-unlisted",
        "`get_health` is callable but not listed by `tools/list`",
    ),
];
