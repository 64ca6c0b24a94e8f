//! One agent of the mock Pallas as an MCP server (rmcp): `send_message` and `get_health`, with
//! its scripted health, reply, progress and slowness.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use super::AgentShared;
use super::progress;
use super::spec::{HealthPhaseSpec, ReplySpec};

/// The `get_health` description, exactly as seed 000 §2 gives it.
pub const HEALTH_DESCRIPTION: &str =
    "Returns the health status of this agent and its downstream dependencies.";

/// The tools every agent lists: `send_message`, then `get_health`.
pub(crate) fn tools(key: &str) -> Vec<Tool> {
    let object = |v: Value| match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    };
    let send = json!({
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "Text message to the agent"},
            "images": {
                "type": "array",
                "description": "Base64-encoded images",
                "items": {
                    "type": "object",
                    "properties": {
                        "data": {"type": "string"},
                        "mime_type": {"type": "string"}
                    },
                    "required": ["data", "mime_type"]
                }
            }
        },
        "required": ["message"]
    });
    let health = json!({"type": "object", "properties": {}, "additionalProperties": false});
    vec![
        Tool::new_with_raw(
            "send_message",
            Some(format!("Send a message to the {key} agent and get its reply.").into()),
            object(send),
        ),
        Tool::new_with_raw(
            "get_health",
            Some(HEALTH_DESCRIPTION.into()),
            object(health),
        ),
    ]
}

/// The rmcp handler of one agent.
#[derive(Debug, Clone)]
pub(crate) struct AgentServer {
    pub(crate) agent: Arc<AgentShared>,
}

impl AgentServer {
    /// Waits `d`, unless the call is cancelled or the mock stops first (then `false`).
    async fn wait(&self, d: std::time::Duration, ctx: &RequestContext<RoleServer>) -> bool {
        tokio::select! {
            () = tokio::time::sleep(d) => true,
            () = ctx.ct.cancelled() => false,
            () = self.agent.ct.cancelled() => false,
        }
    }

    async fn health(&self, ctx: &RequestContext<RoleServer>) -> Result<CallToolResult, ErrorData> {
        let fallback = HealthPhaseSpec::default();
        let phase = self.agent.health.call().map_or(&fallback, |(_, p)| p);
        if let Some(d) = phase.latency
            && !self.wait(d, ctx).await
        {
            return Err(cancelled());
        }
        let text = match &phase.raw {
            Some(raw) => raw.clone(),
            None => {
                let timestamp =
                    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
                let mut body = json!({"status": phase.status.as_str(), "timestamp": timestamp});
                if let (Some(m), Some(obj)) = (&phase.message, body.as_object_mut()) {
                    obj.insert("message".to_owned(), Value::String(m.clone()));
                }
                body.to_string()
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    async fn send_message(
        &self,
        arguments: Option<&Map<String, Value>>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let message = arguments.and_then(|a| a.get("message"));
        let Some(Value::String(message)) = message else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "send_message: `message` (a string) is required",
            )]));
        };
        if let Some(images) = arguments.and_then(|a| a.get("images"))
            && !images.is_array()
        {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "send_message: `images` must be a list",
            )]));
        }
        let spec = &self.agent.spec;
        let slow = spec.faults.slow;
        let notices = match ctx.meta.get_progress_token() {
            Some(token) => progress::plan(&spec.progress, &self.agent.key)
                .into_iter()
                .map(|n| (token.clone(), n))
                .collect(),
            None => Vec::new(),
        };
        let count = notices.len();
        for (i, (token, n)) in notices.into_iter().enumerate() {
            if i > 0
                && let Some(d) = spec.progress.interval
                && !self.wait(d, ctx).await
            {
                return Err(cancelled());
            }
            // The slow answer's wait goes before the last notification, so progress shows
            // during it.
            if i + 1 == count
                && let Some(d) = slow
                && !self.wait(d, ctx).await
            {
                return Err(cancelled());
            }
            let mut param =
                ProgressNotificationParam::new(token, n.progress).with_message(n.message);
            if let Some(t) = n.total {
                param = param.with_total(t);
            }
            if let Err(e) = ctx.peer.notify_progress(param).await {
                tracing::debug!(agent = %self.agent.key, "progress notification not sent: {e}");
            }
        }
        if count == 0
            && let Some(d) = slow
            && !self.wait(d, ctx).await
        {
            return Err(cancelled());
        }
        Ok(match &spec.reply {
            ReplySpec::Echo => CallToolResult::success(vec![ContentBlock::text(message.clone())]),
            ReplySpec::Text(t) => CallToolResult::success(vec![ContentBlock::text(t.clone())]),
            ReplySpec::IsError(t) => CallToolResult::error(vec![ContentBlock::text(t.clone())]),
        })
    }
}

fn cancelled() -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        "mock Pallas call cancelled",
        None,
    )
}

impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        let version = self
            .agent
            .spec
            .version
            .clone()
            .unwrap_or_else(|| self.agent.pallas_version.clone());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.agent.key.clone(), version))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.agent.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result = match request.name.as_ref() {
            "get_health" => self.health(&ctx).await,
            "send_message" => self.send_message(request.arguments.as_ref(), &ctx).await,
            other => Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("tool not found: {other}"),
                None,
            )),
        };
        result.map(Into::into)
    }
}
