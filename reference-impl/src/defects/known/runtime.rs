//! Configuration, environment, startup, preflight and logging (seed 001).

pub(super) const KNOWN: &[(&str, &str)] = &[
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
        "key-only-openai-unchecked",
        "an OpenAI provider with a key that no agent makes active is never preflighted",
    ),
    (
        "registry-default-port-wrong",
        "without `registry_port` in `agents.yaml`, the registry listens on 24201 instead of 24200",
    ),
    (
        "preflight-before-dotenv",
        "the startup preflight runs before `.env` is loaded: a provider key that only `.env` sets is not sent",
    ),
    (
        "key-only-failure-degrades",
        "a failed preflight of a provider with a key that no agent makes active makes every agent's `get_health` degraded",
    ),
    (
        "key-only-anthropic-unchecked",
        "an Anthropic provider with a key that no agent makes active is never preflighted",
    ),
    (
        "preflight-unset-key-counted",
        "a provider whose `api_key` names an unset variable counts as keyed: its key-only preflight sends the literal `${VAR}`",
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
        "log-backups-not-shifted",
        "a rotation overwrites `<file>.1` instead of shifting the backups up to `<file>.5`",
    ),
    (
        "log-rotate-1mb",
        "the log file rotates at 1 MB instead of 10 MB",
    ),
    (
        "log-level-lowercase-only",
        "`PALLAS_LOG_LEVEL` in Python's upper-case spelling (`WARNING`, `ERROR`) is ignored: the level stays INFO",
    ),
    (
        "bind-loopback-default",
        "without an explicit bind address, agents and the registry listen on 127.0.0.1 instead of 0.0.0.0",
    ),
    (
        "log-stderr-env-ignored",
        "`PALLAS_LOG_STDERR` is ignored: no JSON records on stderr",
    ),
    (
        "config-name-optional",
        "`agents.yaml` without `name` is accepted (the project is called `pallas`)",
    ),
    (
        "config-port-optional",
        "an agent without `port` is accepted and gets a free port",
    ),
    (
        "single-agent-starts-dependencies",
        "`--agent NAME` also starts the agents NAME depends on",
    ),
];
