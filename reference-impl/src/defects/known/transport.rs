//! The Streamable HTTP transport (MCP 2025-11-25 basic/transports).

pub(super) const KNOWN: &[(&str, &str)] = &[
    (
        "get-endpoint-json",
        "a GET of the MCP endpoint answers 200 with a JSON description of the server instead of an SSE stream or 405",
    ),
    (
        "notification-answered-200",
        "a POSTed notification the server accepts is answered 200 instead of 202 Accepted",
    ),
];
