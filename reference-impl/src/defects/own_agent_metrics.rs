//! `metrics-agent-port-own-agent-only`: an agent's own `/metrics` shows only that agent's series,
//! as if each agent kept its own metrics instead of the process-global set seed 001 describes.

use axum::Router;
use axum::body::Body;
use axum::response::Response;

/// `router` (an agent port's `/metrics`) with, under the defect, every series labelled with
/// another agent left out of its answers.
pub fn own_agent_metrics_only(router: Router, agent: &str) -> Router {
    let own = format!("agent=\"{agent}\"");
    router.layer(axum::middleware::map_response(move |response: Response| {
        let own = own.clone();
        async move {
            if !crate::defect!("metrics-agent-port-own-agent-only") {
                return response;
            }
            let (mut parts, body) = response.into_parts();
            parts.headers.remove(http::header::CONTENT_LENGTH);
            let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
                return Response::from_parts(parts, Body::empty());
            };
            let text: String = String::from_utf8_lossy(&bytes)
                .lines()
                .filter(|line| {
                    line.starts_with('#') || !line.contains("agent=\"") || line.contains(&own)
                })
                .map(|line| format!("{line}\n"))
                .collect();
            Response::from_parts(parts, Body::from(text))
        }
    }))
}
