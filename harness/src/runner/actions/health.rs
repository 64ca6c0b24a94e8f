//! The `health` step: the health tool, and how Daedalus would read its answer.

use super::*;

impl Exec {
    pub(super) async fn health(&self, h: &CallStep, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &h.agent);
        let r = c
            .call_tool(
                &self.0.cx.target.spec.health_tool,
                json!({}),
                &opts(&h.bearer, &h.progress_token),
            )
            .await;
        let health = match &r {
            Ok(x) => match x.result() {
                Some(res) => parse_health(&res.to_value()).map_err(|e| e.to_string()),
                None => Err(format!(
                    "no result (HTTP {}{})",
                    x.status,
                    x.error()
                        .map(|e| format!(", error {e}"))
                        .unwrap_or_default()
                )),
            },
            Err(e) => Err(e.to_string()),
        };
        let gate = match chat_gate(health.as_ref()) {
            crate::client::ChatGate::Allowed => "allowed".to_owned(),
            crate::client::ChatGate::AllowedWithWarning(w) => format!("warning: {w}"),
            crate::client::ChatGate::Blocked503(w) => format!("blocked: {w}"),
        };
        let answered = |exchange| {
            Observation::HealthAnswered(HealthAnswered {
                exchange,
                health: health.clone(),
                gate: gate.clone(),
            })
        };
        let mut out = from_client(r, |x| answered(Some(x)));
        if matches!(out.observation, Observation::Nothing) {
            // No answer: Daedalus still reads it (as blocked), so the reading is kept.
            out.observation = answered(None);
        }
        out
    }
}
