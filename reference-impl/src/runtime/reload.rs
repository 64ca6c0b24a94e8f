//! Live reload: signals, file watching and the reload of a running deployment.

use crate::config::{self, AgentEntry};
use crate::registry::PublishedAgent;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use super::*;

/// The process signals Pallas reacts to, installed up front (SIGHUP's default action would
/// otherwise end the process).
pub struct Signals {
    #[cfg(unix)]
    pub(super) hup: Option<tokio::signal::unix::Signal>,
    #[cfg(not(unix))]
    pub(super) hup: Option<()>,
    #[cfg(unix)]
    pub(super) term: Option<tokio::signal::unix::Signal>,
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signals").finish_non_exhaustive()
    }
}

impl Signals {
    /// Installs the SIGHUP and SIGTERM handlers (Ctrl-C is watched when waiting).
    pub fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                hup: signal(SignalKind::hangup()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Self { hup: None }
        }
    }

    pub(super) async fn terminated(&mut self) {
        #[cfg(unix)]
        if let Some(term) = self.term.as_mut() {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub(super) async fn reload(shared: &Arc<Shared>) -> Result<ReloadSummary, RuntimeError> {
    let deployment = config::load(&shared.dir, &shared.options.load)?;
    let file = deployment.agents_file.display().to_string();
    let mut state = shared.state.lock().await;
    let mut summary = ReloadSummary::default();
    if deployment.registry_port != state.deployment.registry_port {
        tracing::warn!("registry_port changed; it takes effect at the next start");
    }
    let wanted: Vec<AgentEntry> = deployment
        .start_order()
        .into_iter()
        .filter(|a| {
            shared
                .options
                .agent
                .as_deref()
                .is_none_or(|n| n == a.name())
        })
        .cloned()
        .collect();

    // The agents listed before this reload (a defect leaves every agent added since unlisted).
    let listed_before: Vec<String> = shared
        .registry
        .agents()
        .into_iter()
        .map(|a| a.agent)
        .collect();
    // Stop removed and changed agents.
    let names: Vec<String> = state.agents.keys().cloned().collect();
    for name in names {
        let keep = wanted.iter().find(|w| w.name() == name);
        let changed = match keep {
            None => true,
            Some(w) => state.agents.get(&name).is_some_and(|r| {
                if crate::defect!("cm-reload-keeps-title-description") {
                    let mut same = w.clone();
                    same.title.clone_from(&r.entry.title);
                    same.description.clone_from(&r.entry.description);
                    return r.entry != same;
                }
                r.entry != *w
            }),
        };
        if changed {
            if let Some(running) = state.agents.shift_remove(&name) {
                stop_agent(shared, running).await;
            }
            if keep.is_some() {
                summary.restarted.push(name);
            } else {
                summary.removed.push(name);
            }
        }
    }
    let registry_meta_changed = (
        &deployment.namespace,
        &deployment.version,
        &deployment.host,
        deployment.publish_capabilities,
    ) != (
        &state.deployment.namespace,
        &state.deployment.version,
        &state.deployment.host,
        state.deployment.publish_capabilities,
    );
    state.cells = preflight_all(
        &wanted,
        &deployment.keyed_providers,
        &state.cells,
        &shared.http,
        &shared.metrics,
    )
    .await;
    shared
        .registry
        .set_providers(state.cells.values().cloned().collect());
    state.deployment = deployment;

    for entry in wanted {
        if let Some(running) = state.agents.get(entry.name()) {
            if registry_meta_changed {
                let d = &state.deployment;
                shared.registry.publish(PublishedAgent::new(
                    &running.entry,
                    &d.namespace,
                    &d.version,
                    &d.host,
                    published_port(d, entry.name(), running.addr.port()),
                    d.publish_capabilities,
                ));
            }
            summary.unchanged.push(entry.name().to_owned());
            continue;
        }
        let addr = agent_addr(shared.options.bind, &state.deployment.host, entry.port).await;
        let listener = match bind(addr, &format!("agent `{}`", entry.name()), &file).await {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(error = %e, "agent not started");
                continue;
            }
        };
        if let Err(e) = wait_for_dependencies(&entry, &state, shared.options.ready_timeout).await {
            tracing::error!(error = %e, "agent not started");
            continue;
        }
        let name = entry.name().to_owned();
        if !summary.restarted.contains(&name) {
            summary.added.push(name.clone());
        }
        let listed =
            listed_before.contains(&name) || !crate::defect!("registry-ignores-added-agent");
        let running = serve_agent(shared, &state, entry, listener, listed);
        state.agents.insert(name, running);
    }
    tracing::info!(
        added = ?summary.added, removed = ?summary.removed,
        restarted = ?summary.restarted, "configuration reloaded"
    );
    Ok(summary)
}

/// A cheap fingerprint of the watched files: modification time and length of each.
pub(super) fn fingerprint(files: &[PathBuf]) -> Vec<Option<(SystemTime, u64)>> {
    files
        .iter()
        .map(|f| {
            std::fs::metadata(f)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())))
        })
        .collect()
}

/// Reloads whenever the fingerprint of `files` differs from `last` (taken before they were read).
pub(super) async fn watch_files(
    shared: Arc<Shared>,
    mut files: Vec<PathBuf>,
    mut last: Vec<Option<(SystemTime, u64)>>,
) {
    let mut tick = tokio::time::interval(shared.options.watch_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shared.root.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = fingerprint(&files);
        if now == last {
            continue;
        }
        last = now;
        tracing::info!("configuration file changed: reloading");
        match reload(&shared).await {
            Ok(_) => {
                files = shared.state.lock().await.deployment.watched_files.clone();
                last = fingerprint(&files);
            }
            Err(e) => {
                tracing::error!(error = %e, "reload failed; the previous configuration stays in force");
            }
        }
    }
}
