//! The rmcp handler of a mock MCP server: the declared tools, their faults, and the conformance
//! preset's tools, resources and prompts.

// Logging (`logging/setLevel`) is deprecated in rmcp (SEP-2577) but part of MCP 2025-11-25, which
// the conformance preset serves.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, ErrorCode, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::*;

/// The rmcp handler serving the declared tools.
#[derive(Debug, Clone)]
pub(super) struct MockServer {
    pub(super) shared: Arc<McpShared>,
}

impl MockServer {
    fn preset(&self) -> bool {
        self.shared.spec.preset == Some(McpPreset::Conformance)
    }

    /// The preset's answer, or "method not found" for a server without the preset.
    fn with_preset<T>(&self, f: impl FnOnce() -> Result<T, ErrorData>) -> Result<T, ErrorData> {
        if self.preset() {
            f()
        } else {
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "method not found",
                None,
            ))
        }
    }
}

impl ServerHandler for MockServer {
    fn get_info(&self) -> ServerConfig {
        let name = self
            .shared
            .spec
            .server_name
            .clone()
            .unwrap_or_else(|| self.shared.name.clone());
        #[allow(deprecated)] // logging: see the import of SetLevelRequestParams
        let capabilities = if self.preset() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_completions()
                .enable_logging()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        let version = self
            .shared
            .spec
            .server_version
            .clone()
            .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());
        let config =
            ServerConfig::new(capabilities).with_server_info(Implementation::new(name, version));
        match &self.shared.spec.instructions {
            Some(i) => config.with_instructions(i.clone()),
            None => config,
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.with_preset(conformance::resources)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.with_preset(conformance::resource_templates)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.with_preset(|| conformance::read_resource(&request.uri))
            .map(Into::into)
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.with_preset(|| Ok(()))
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.with_preset(|| Ok(()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.with_preset(conformance::prompts)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.with_preset(|| conformance::get_prompt(&request.name, request.arguments.as_ref()))
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.with_preset(|| conformance::complete(&request.argument.value))
    }

    #[allow(deprecated)] // logging: see the import of SetLevelRequestParams
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.with_preset(|| Ok(()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = self
            .shared
            .spec
            .tools
            .iter()
            .find(|t| t.name == request.name)
        else {
            if self.preset()
                && let Some(result) =
                    conformance::call_tool(&request.name, request.arguments.as_ref(), &ctx).await
            {
                return result.map(Into::into);
            }
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!("tool not found: {}", request.name),
                None,
            ));
        };
        let stopped = || async {
            tokio::select! {
                () = ctx.ct.cancelled() => {}
                () = self.shared.ct.cancelled() => {}
            }
        };
        if let Some(d) = spec.delay {
            let released = async {
                match &spec.until_called {
                    Some(other) => self.shared.called(other).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep(d) => {}
                () = released => {}
                () = stopped() => return Err(cancelled()),
            }
        }
        if let Some(n) = spec.progress
            && let Some(token) = ctx.meta.get_progress_token()
        {
            for i in 1..=n {
                let p = ProgressNotificationParam::new(token.clone(), f64::from(i))
                    .with_total(f64::from(n))
                    .with_message(format!("{} step {i}/{n}", spec.name));
                if let Err(e) = ctx.peer.notify_progress(p).await {
                    tracing::debug!("progress notification failed: {e}");
                }
            }
        }
        let result = match &spec.result {
            ToolResultSpec::Text(t) => CallToolResult::success(vec![ContentBlock::text(t.clone())]),
            ToolResultSpec::Json(v) => CallToolResult::structured(v.clone()),
            ToolResultSpec::IsError(t) => {
                CallToolResult::error(vec![ContentBlock::text(t.clone())])
            }
            ToolResultSpec::JsonrpcError { code, message } => {
                return Err(ErrorData::new(ErrorCode(*code), message.clone(), None));
            }
            ToolResultSpec::EchoHeaders => {
                let headers = ctx
                    .extensions
                    .get::<http::request::Parts>()
                    .map(|p| header_map(&p.headers))
                    .unwrap_or_default();
                let text = serde_json::to_string(&headers).unwrap_or_default();
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            ToolResultSpec::EchoArgs => {
                let args = request.arguments.clone().map_or(json!({}), Value::Object);
                CallToolResult::success(vec![ContentBlock::text(args.to_string())])
            }
            ToolResultSpec::Hang => {
                stopped().await;
                return Err(cancelled());
            }
            ToolResultSpec::Recorded(calls) => return recorded(calls, &request),
        };
        Ok(result.into())
    }
}

fn cancelled() -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, "mock tool call cancelled", None)
}

/// The recorded answer to a call with these arguments (absent arguments are `{}`).
fn recorded(
    calls: &[crate::spec::RecordedCallSpec],
    request: &CallToolRequestParams,
) -> Result<CallToolResponse, ErrorData> {
    let args = request.arguments.clone().map_or(json!({}), Value::Object);
    let Some(call) = calls
        .iter()
        .find(|c| c.arguments == args || (c.arguments.is_null() && args == json!({})))
    else {
        return Err(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "pallas-mocks: no call of `{}` was recorded with these arguments: {args}",
                request.name
            ),
            None,
        ));
    };
    if let Some(e) = &call.error {
        return Err(ErrorData::new(
            ErrorCode(e.code),
            e.message.clone(),
            e.data.clone(),
        ));
    }
    let result = call
        .result
        .clone()
        .unwrap_or_else(|| json!({"content": []}));
    serde_json::from_value::<CallToolResult>(result)
        .map(Into::into)
        .map_err(|e| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("pallas-mocks: the recorded result is not a CallToolResult: {e}"),
                None,
            )
        })
}
