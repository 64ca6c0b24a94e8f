//! The registry endpoint (seed 000 §1, seed 001 §Registry Server).

pub(super) const KNOWN: &[(&str, &str)] = &[
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
        "registry-requires-auth",
        "the registry answers 401 to a request without an Authorization header",
    ),
    ("registry-no-remotes", "registry entries carry no `remotes`"),
    (
        "registry-namespace-ignored",
        "the configured `namespace` is ignored: registry names use the default prefix",
    ),
    (
        "registry-capabilities-defaults",
        "`capabilities` publishes the default values instead of the configured `model_capabilities`",
    ),
    (
        "registry-path-moved",
        "the registry is served at `/server.json` instead of `/.well-known/mcp/server.json`",
    ),
];
