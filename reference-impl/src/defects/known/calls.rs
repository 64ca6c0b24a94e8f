//! The message tools and bearer forwarding (seed 001 §Multimodal Support, §Bearer Token Propagation).

pub(super) const KNOWN: &[(&str, &str)] = &[
    (
        "hf-no-passthrough",
        "a HuggingFace (`hf.`) model is called with the configured key only: the inbound bearer is not passed through",
    ),
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
    (
        "provider-error-without-text",
        "a provider failure gives an `isError` result with an empty text",
    ),
    ("history-empty", "`{agent}_history` is always empty"),
    (
        "history-answers-as-user",
        "`{agent}_history` gives the model's answers the `user` role",
    ),
    (
        "history-images-dropped",
        "`{agent}_history` keeps a message's text but not its images",
    ),
    (
        "unknown-tool-is-result",
        "an unknown tool gets an `isError` result instead of a JSON-RPC error",
    ),
    (
        "invalid-arguments-accepted",
        "a `send_message` call without `message` runs as an empty message instead of an `isError` result",
    ),
    (
        "invalid-arguments-checked-after-model",
        "a `send_message` call with invalid arguments is first sent to the agent's model (its arguments as the message), then answered with an `isError` result",
    ),
    (
        "bearer-to-llm",
        "the inbound bearer replaces the configured API key on OpenAI model requests",
    ),
    (
        "bearer-not-forwarded",
        "a server marked `forward_inbound_auth` never receives the inbound bearer",
    ),
    (
        "bearer-previous-turn",
        "a server marked `forward_inbound_auth` receives the bearer of the previous turn instead of this one's",
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
        "bearer-not-on-session-open",
        "the session opened for a caller's bearer sends `initialize` and `tools/list` without it",
    ),
    (
        "request-params-ignored",
        "an agent decorator's `request_params` (temperature, top_p, …) are dropped: the provider request carries none",
    ),
    (
        "images-required",
        "the message tool lists `images` as required",
    ),
];
