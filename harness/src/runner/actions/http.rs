//! HTTP steps that are not MCP: `http`, `registry`, `metrics`.

use super::*;

impl Exec {
    pub(super) async fn http(&self, h: &HttpStep, timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let agent_url = match &h.agent {
            Some(a) => self.0.session.lock().await.agent_urls.get(a).cloned(),
            None => None,
        };
        let url = match crate::client::http::target_url(h, agent_url.as_deref()) {
            Ok(u) => u,
            Err(e) => return err(e.to_string()),
        };
        return match crate::client::http::send(h, &url, timeout).await {
            Ok(answer) => ActionOutput::observed(Observation::HttpAnswered(answer)),
            Err((e, timed_out)) => ActionOutput::failed(e, timed_out),
        };
    }

    pub(super) async fn registry(&self, _step: &RegistryStep, timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let Some(url) = &self.0.cx.registry_url else {
            return err("the target has no registry".into());
        };
        return from_fetch(
            fetch_registry_with_timeout(&self.0.cx.client, url, Some(timeout)).await,
            Observation::RegistryFetched,
        );
    }

    pub(super) async fn metrics(&self, m: &MetricsStep, timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let vars = self.0.session.lock().await.vars.clone();
        let url = match &m.agent {
            None => self
                .0
                .cx
                .target
                .spec
                .metrics_url
                .as_ref()
                .map(|t| render(t, &vars)),
            Some(a) => self.0.cx.target.spec.agent_metrics_url.as_ref().map(|t| {
                let mut v = vars.clone();
                v.insert(
                    "agent.port".into(),
                    vars.get(&format!("agents.{a}.port"))
                        .cloned()
                        .unwrap_or_default(),
                );
                v.insert("agent.name".into(), a.clone());
                render(t, &v)
            }),
        };
        let url = match url {
            None => return err("the target declares no metrics URL".into()),
            Some(Err(e)) => return err(e.to_string()),
            Some(Ok(u)) => u,
        };
        return from_fetch(
            scrape_metrics_with_timeout(&self.0.cx.client, &url, Some(timeout)).await,
            Observation::MetricsScraped,
        );
    }
}
