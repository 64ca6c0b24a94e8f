//! The transport defects of the MCP endpoint, where rmcp's Streamable HTTP service would
//! otherwise keep the rule: `get-endpoint-json` answers a GET with a JSON description of the
//! server (neither an SSE stream nor 405), `notification-answered-200` turns the 202 Accepted of
//! an accepted notification or response into a 200.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Applies the transport defects to the requests of the MCP endpoint.
pub async fn transport_defects(request: Request, next: Next) -> Response {
    if request.method() == http::Method::GET && crate::defect!("get-endpoint-json") {
        let description = serde_json::json!({
            "name": "pallas",
            "transport": "streamable-http",
            "hint": "POST JSON-RPC messages to this endpoint",
        });
        return (
            http::StatusCode::OK,
            [(http::header::CONTENT_TYPE, "application/json")],
            description.to_string(),
        )
            .into_response();
    }
    if request.method() == http::Method::POST && crate::defect!("notification-answered-200") {
        let response = next.run(request).await;
        if response.status() == http::StatusCode::ACCEPTED {
            let (mut parts, body) = response.into_parts();
            parts.status = http::StatusCode::OK;
            return Response::from_parts(parts, body);
        }
        return response;
    }
    next.run(request).await
}
