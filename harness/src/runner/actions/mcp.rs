//! MCP steps on an agent session: `connect`, `list_tools`, `call`, `history`, `request`, `raw`,
//! `delete`, `listen`.

use super::*;

impl Exec {
    pub(super) async fn connect(&self, c: &ConnectStep, timeout: Duration) -> ActionOutput {
        let err = |e: String| ActionOutput::failed(e, false);
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let alias = c.alias.clone().unwrap_or_else(|| c.agent.clone());
        let Some(url) = self
            .0
            .session
            .lock()
            .await
            .agent_urls
            .get(&c.agent)
            .cloned()
        else {
            return err(format!("no endpoint for agent `{}`", c.agent));
        };
        let era = era_of(
            c.era
                .or(self.0.cx.spec().eras.first().copied())
                .unwrap_or(EraSpec::V2025_11_25),
        );
        return match McpConnection::connect(
            &self.0.cx.client,
            &alias,
            &url,
            era,
            &opts(&c.bearer, &None),
        )
        .await
        {
            Ok((conn, exchange)) => {
                let connected = Connected {
                    exchange,
                    session_id: conn.session_id().map(str::to_owned),
                    protocol_version: conn.protocol_version().to_owned(),
                    era: era.as_str(),
                    initialized: conn.initialized_ack().cloned(),
                };
                let mut session = self.0.session.lock().await;
                session
                    .versions
                    .insert(alias.clone(), conn.protocol_version().to_owned());
                session.alias_agents.insert(alias.clone(), c.agent.clone());
                session.conns.insert(alias, conn);
                drop(session);
                ActionOutput::observed(Observation::Connected(connected))
            }
            Err(e) => err(e.to_string()),
        };
    }

    pub(super) async fn list_tools(&self, a: &AgentRef, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &a.agent);
        return from_client(
            c.list_tools(&opts(&a.bearer, &None)).await,
            Observation::Exchanged,
        );
    }

    pub(super) async fn call(&self, t: &ToolCallStep, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &t.agent);
        return from_client(
            c.call_tool(
                &t.tool,
                t.arguments.clone().unwrap_or(json!({})),
                &opts(&t.bearer, &t.progress_token),
            )
            .await,
            Observation::Exchanged,
        );
    }

    pub(super) async fn history(&self, a: &AgentRef, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &a.agent);
        return from_client(
            c.get_prompt(
                &format!("{}_history", a.agent),
                Value::Null,
                &opts(&a.bearer, &None),
            )
            .await,
            Observation::Exchanged,
        );
    }

    pub(super) async fn request(&self, r: &RequestStep, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &r.agent);
        let params = r.params.clone().unwrap_or(json!({}));
        let o = opts(&r.bearer, &None);
        let x = if r.notification {
            c.notify(&r.method, params, &o).await
        } else {
            c.request(&r.method, params, &o).await
        };
        from_client(x, Observation::Exchanged)
    }

    pub(super) async fn raw(&self, r: &RawStep, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &r.agent);
        let headers = r
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        return from_client(
            c.post_raw(
                Bytes::from(r.body.clone()),
                headers,
                r.with_session,
                &opts(&None, &None),
            )
            .await,
            Observation::Exchanged,
        );
    }

    pub(super) async fn listen(&self, l: &ListenStep) -> ActionOutput {
        let c = conn!(self, &l.agent);
        return from_client(
            c.listen(l.duration, &call_options(&l.bearer, &None, l.duration))
                .await,
            Observation::Exchanged,
        );
    }

    pub(super) async fn delete(&self, a: &AgentRef, timeout: Duration) -> ActionOutput {
        let opts =
            |bearer: &Option<String>, token: &Option<Value>| call_options(bearer, token, timeout);
        let c = conn!(self, &a.agent);
        return from_client(
            c.delete(&opts(&a.bearer, &None)).await,
            Observation::Exchanged,
        );
    }
}
