//! A step's action, typed: one variant per action key of [`StepSpec`], each with its own options.
//! The runner dispatches on it with an exhaustive `match`, so a new action cannot be forgotten.

use super::*;
use std::time::Duration;

/// What a step does. Borrowed from its [`StepSpec`] (the YAML form, validated at load).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepAction<'a> {
    /// `registry:` fetch the registry.
    Registry(&'a RegistryStep),
    /// `connect:` `initialize` and keep the session.
    Connect(&'a ConnectStep),
    /// `list_tools:` `tools/list`.
    ListTools(&'a AgentRef),
    /// `health:` call the health tool.
    Health(&'a CallStep),
    /// `send:` call the message tool.
    Send(&'a SendStep),
    /// `call:` call any tool.
    Call(&'a ToolCallStep),
    /// `history:` `prompts/get` of `{agent}_history`.
    History(&'a AgentRef),
    /// `request:` any JSON-RPC request or notification.
    Request(&'a RequestStep),
    /// `raw:` a raw POST.
    Raw(&'a RawStep),
    /// `delete:` `DELETE` the session.
    Delete(&'a AgentRef),
    /// `metrics:` scrape a metrics endpoint.
    Metrics(&'a MetricsStep),
    /// `reload:` rewrite the deployment and reload.
    Reload(&'a ReloadStep),
    /// `repeat:` inner steps `count` times.
    Repeat(&'a RepeatStep),
    /// `parallel:` inner steps at once.
    Parallel(&'a [StepSpec]),
    /// `http:` any HTTP request.
    Http(&'a HttpStep),
    /// `process:` the implementation's process state and output.
    Process(&'a ProcessStep),
    /// `file:` a file the implementation wrote.
    File(&'a FileStep),
    /// `wait:` a pause.
    Wait(Duration),
}

impl<'a> StepAction<'a> {
    /// Every action key, in the order of [`StepSpec`]'s fields.
    pub const KEYS: [&'static str; 18] = [
        "registry",
        "connect",
        "list_tools",
        "health",
        "send",
        "call",
        "history",
        "request",
        "raw",
        "delete",
        "metrics",
        "reload",
        "repeat",
        "parallel",
        "http",
        "process",
        "file",
        "wait",
    ];

    /// The keys of the actions that talk MCP to an agent.
    pub const MCP_KEYS: [&'static str; 9] = [
        "connect",
        "list_tools",
        "health",
        "send",
        "call",
        "history",
        "request",
        "raw",
        "delete",
    ];

    /// The YAML key of this action.
    pub fn key(&self) -> &'static str {
        match self {
            Self::Registry(_) => "registry",
            Self::Connect(_) => "connect",
            Self::ListTools(_) => "list_tools",
            Self::Health(_) => "health",
            Self::Send(_) => "send",
            Self::Call(_) => "call",
            Self::History(_) => "history",
            Self::Request(_) => "request",
            Self::Raw(_) => "raw",
            Self::Delete(_) => "delete",
            Self::Metrics(_) => "metrics",
            Self::Reload(_) => "reload",
            Self::Repeat(_) => "repeat",
            Self::Parallel(_) => "parallel",
            Self::Http(_) => "http",
            Self::Process(_) => "process",
            Self::File(_) => "file",
            Self::Wait(_) => "wait",
        }
    }

    /// The agent (connection name) the action talks to, if any.
    pub fn agent(self) -> Option<&'a str> {
        match self {
            Self::Connect(c) => Some(c.alias.as_deref().unwrap_or(c.agent.as_str())),
            Self::ListTools(a) | Self::History(a) | Self::Delete(a) => Some(&a.agent),
            Self::Health(c) => Some(&c.agent),
            Self::Send(s) => Some(&s.agent),
            Self::Call(c) => Some(&c.agent),
            Self::Request(r) => Some(&r.agent),
            Self::Raw(r) => Some(&r.agent),
            Self::Http(h) => h.agent.as_deref(),
            Self::Registry(_)
            | Self::Metrics(_)
            | Self::Reload(_)
            | Self::Repeat(_)
            | Self::Parallel(_)
            | Self::Process(_)
            | Self::File(_)
            | Self::Wait(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key of the YAML form yields its own variant, and `KEYS` lists them all in order.
    #[test]
    fn every_action_key_has_its_variant() {
        let mut seen = Vec::new();
        for key in StepAction::KEYS {
            let yaml = match key {
                "registry" => "registry: {}".to_owned(),
                "parallel" => "parallel: []".to_owned(),
                "wait" => "wait: 1s".to_owned(),
                "repeat" => "repeat: {count: 1, steps: []}".to_owned(),
                "reload" => "reload: {}".to_owned(),
                "process" => "process: {}".to_owned(),
                "metrics" => "metrics: {}".to_owned(),
                "file" => "file: {path: x}".to_owned(),
                "http" => "http: {url: 'http://127.0.0.1:1/'}".to_owned(),
                "send" => "send: {agent: a, message: m}".to_owned(),
                "call" => "call: {agent: a, tool: t}".to_owned(),
                "request" => "request: {agent: a, method: ping}".to_owned(),
                "raw" => "raw: {agent: a, body: '{}'}".to_owned(),
                other => format!("{other}: {{agent: a}}"),
            };
            let step: StepSpec = match serde_saphyr::from_str(&yaml) {
                Ok(s) => s,
                Err(e) => panic!("{yaml}: {e}"),
            };
            let actions = step.set_actions();
            assert_eq!(actions.len(), 1, "{yaml}");
            assert_eq!(actions[0].key(), key, "{yaml}");
            seen.push(actions[0].key());
        }
        assert_eq!(seen, StepAction::KEYS);
    }
}
