//! A step's action, typed: one variant per action key of [`StepSpec`], each with its own options.
//! The runner dispatches on it with an exhaustive `match`, so a new action cannot be forgotten.

use super::*;
use serde_json::Value;
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
    /// `listen:` read the session's standalone SSE stream.
    Listen(&'a ListenStep),
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
    pub const KEYS: [&'static str; 19] = [
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
        "listen",
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
    pub const MCP_KEYS: [&'static str; 10] = [
        "connect",
        "list_tools",
        "health",
        "send",
        "call",
        "history",
        "request",
        "raw",
        "delete",
        "listen",
    ];

    /// Which action this is.
    pub fn kind(&self) -> ActionKind {
        match self {
            Self::Registry(_) => ActionKind::Registry,
            Self::Connect(_) => ActionKind::Connect,
            Self::ListTools(_) => ActionKind::ListTools,
            Self::Health(_) => ActionKind::Health,
            Self::Send(_) => ActionKind::Send,
            Self::Call(_) => ActionKind::Call,
            Self::History(_) => ActionKind::History,
            Self::Request(_) => ActionKind::Request,
            Self::Raw(_) => ActionKind::Raw,
            Self::Delete(_) => ActionKind::Delete,
            Self::Listen(_) => ActionKind::Listen,
            Self::Metrics(_) => ActionKind::Metrics,
            Self::Reload(_) => ActionKind::Reload,
            Self::Repeat(_) => ActionKind::Repeat,
            Self::Parallel(_) => ActionKind::Parallel,
            Self::Http(_) => ActionKind::Http,
            Self::Process(_) => ActionKind::Process,
            Self::File(_) => ActionKind::File,
            Self::Wait(_) => ActionKind::Wait,
        }
    }

    /// The YAML key of this action.
    pub fn key(&self) -> &'static str {
        self.kind().key()
    }

    /// The bearer the action sends to an agent: of `send`, `call`, `health`, `connect`,
    /// `request` and `list_tools` steps.
    pub fn bearer(self) -> Option<&'a str> {
        match self {
            Self::Send(s) => s.bearer.as_deref(),
            Self::Call(c) => c.bearer.as_deref(),
            Self::Health(h) => h.bearer.as_deref(),
            Self::Connect(c) => c.bearer.as_deref(),
            Self::Request(r) => r.bearer.as_deref(),
            Self::ListTools(a) => a.bearer.as_deref(),
            Self::Listen(l) => l.bearer.as_deref(),
            _ => None,
        }
    }

    /// The progress token the action sends, if any.
    pub fn progress_token(self) -> Option<&'a Value> {
        match self {
            Self::Send(s) => s.progress_token.as_ref(),
            Self::Call(c) => c.progress_token.as_ref(),
            Self::Health(h) => h.progress_token.as_ref(),
            _ => None,
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
            Self::Listen(l) => Some(&l.agent),
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

/// The kind of a step's action, without its options: what checks select steps by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    /// `registry:`
    Registry,
    /// `connect:`
    Connect,
    /// `list_tools:`
    ListTools,
    /// `health:`
    Health,
    /// `send:`
    Send,
    /// `call:`
    Call,
    /// `history:`
    History,
    /// `request:`
    Request,
    /// `raw:`
    Raw,
    /// `delete:`
    Delete,
    /// `listen:`
    Listen,
    /// `metrics:`
    Metrics,
    /// `reload:`
    Reload,
    /// `repeat:`
    Repeat,
    /// `parallel:`
    Parallel,
    /// `http:`
    Http,
    /// `process:`
    Process,
    /// `file:`
    File,
    /// `wait:`
    Wait,
}

impl ActionKind {
    /// The actions that talk MCP to an agent.
    pub const MCP: [ActionKind; 10] = [
        ActionKind::Connect,
        ActionKind::ListTools,
        ActionKind::Health,
        ActionKind::Send,
        ActionKind::Call,
        ActionKind::History,
        ActionKind::Request,
        ActionKind::Raw,
        ActionKind::Delete,
        ActionKind::Listen,
    ];

    /// The YAML key of this kind of action.
    pub fn key(self) -> &'static str {
        match self {
            Self::Registry => "registry",
            Self::Connect => "connect",
            Self::ListTools => "list_tools",
            Self::Health => "health",
            Self::Send => "send",
            Self::Call => "call",
            Self::History => "history",
            Self::Request => "request",
            Self::Raw => "raw",
            Self::Delete => "delete",
            Self::Listen => "listen",
            Self::Metrics => "metrics",
            Self::Reload => "reload",
            Self::Repeat => "repeat",
            Self::Parallel => "parallel",
            Self::Http => "http",
            Self::Process => "process",
            Self::File => "file",
            Self::Wait => "wait",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each key of the YAML form yields its own variant, and `KEYS` lists them all in order.
    #[test]
    fn the_mcp_kinds_are_the_mcp_keys() {
        let keys: Vec<&str> = ActionKind::MCP.iter().map(|k| k.key()).collect();
        assert_eq!(keys, StepAction::MCP_KEYS);
    }

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
                "listen" => "listen: {agent: a, for: 1s}".to_owned(),
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
