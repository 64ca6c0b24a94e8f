//! One scenario from start to end: mocks, deployment, launch, steps, observations, checks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pallas_mocks::Ecosystem;
use tokio::sync::Mutex;

use super::exec::{Exec, Shared};
use super::{RunOptions, ScenarioResult, StepSummary, ms, overall};
use crate::checks::{self, CheckResult, Observed, ReceivedMessage, Verdict};
use crate::client::observe::{ObservationKind, Recorder};
use crate::client::{WireClient, fetch_registry, server_id, streamable_http_url};
use crate::process::ImplProcess;
use crate::redact::Redactor;
use crate::scenario::{Scenario, template::Vars};
use crate::target::{Target, render_deployment};

fn skipped(s: &Scenario, reason: String) -> ScenarioResult {
    let none = |_| true;
    let checks = s
        .spec
        .checks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let location = s.check_location(i);
            let subject = match c.check.as_deref().and_then(crate::catalog::get) {
                Some(def) => checks::Subject::check(def, c.title.clone(), location),
                None => checks::Subject::assertion(
                    c.level.unwrap_or(crate::scenario::Level::Should),
                    s.spec.refs.clone(),
                    c.title
                        .clone()
                        .unwrap_or_else(|| "scenario assertion".into()),
                    location,
                ),
            };
            CheckResult::judged(
                subject,
                checks::Outcome::NotApplicable(reason.clone()),
                &none,
                Default::default(),
                &Redactor::default(),
            )
        })
        .collect();
    ScenarioResult {
        id: s.spec.id.clone(),
        title: s.spec.title.clone(),
        file: s.path.display().to_string(),
        verdict: Verdict::Skip,
        checks,
        duration_ms: 0.0,
        error: None,
        skipped: Some(reason),
        output_tail: None,
        steps: Vec::new(),
        reproduce: String::new(),
    }
}

fn errored(s: &Scenario, started: Instant, error: String, tail: Option<String>) -> ScenarioResult {
    ScenarioResult {
        id: s.spec.id.clone(),
        title: s.spec.title.clone(),
        file: s.path.display().to_string(),
        verdict: Verdict::Error,
        checks: Vec::new(),
        duration_ms: ms(started),
        error: Some(error),
        skipped: None,
        output_tail: tail,
        steps: Vec::new(),
        reproduce: String::new(),
    }
}

/// Runs one scenario; never panics, never hangs past its deadline.
pub async fn run_one(s: &Scenario, target: &Target, opts: &RunOptions) -> ScenarioResult {
    let started = Instant::now();
    if let Some(cap) = s.spec.requires.iter().find(|c| !target.claims(**c)) {
        return skipped(s, format!("the target does not claim `{}`", cap.as_str()));
    }
    if opts.registry_url.is_some() && s.spec.deployment.is_some() {
        return skipped(s, "needs a deployment of its own (attach mode)".into());
    }
    if opts.registry_url.is_none() && s.spec.deployment.is_none() {
        return skipped(
            s,
            "declares no deployment; run it in attach mode (--registry-url)".into(),
        );
    }
    // Each message may be retried by the target for as long as its documented back-off.
    let deadline = s.spec.timeouts.scenario.unwrap_or(opts.scenario_deadline)
        + target.spec.retry_backoff.unwrap_or_default() * messages_sent(&s.spec.steps);
    let step_timeout = s
        .spec
        .timeouts
        .step
        .or(target.spec.step_timeout)
        .unwrap_or(opts.step_timeout)
        + target.spec.retry_backoff.unwrap_or_default();

    // Mocks.
    let eco =
        match tokio::time::timeout(Duration::from_secs(10), Ecosystem::start(&s.spec.ecosystem))
            .await
        {
            Ok(Ok(e)) => Arc::new(e),
            Ok(Err(e)) => {
                return errored(
                    s,
                    started,
                    format!("mock ecosystem did not start: {e}"),
                    None,
                );
            }
            Err(_) => {
                return errored(
                    s,
                    started,
                    "mock ecosystem did not start within 10s".into(),
                    None,
                );
            }
        };
    let mock_urls = eco.urls();

    let mut redactor = Redactor::new();
    for sec in &s.spec.secrets {
        redactor.add(sec.clone());
    }
    for llm in s.spec.ecosystem.llms.values() {
        if let Some(k) = &llm.api_key {
            redactor.add(k.clone());
        }
    }
    for m in s.spec.ecosystem.mcp_servers.values() {
        if let Some(k) = &m.require_bearer {
            redactor.add(k.clone());
        }
    }

    // Deployment and launch.
    let dir = match &opts.keep_dir {
        Some(root) => {
            let p = root.join(&s.spec.id);
            let _ = std::fs::remove_dir_all(&p);
            Ok((p, None))
        }
        None => tempfile::Builder::new()
            .prefix(&format!(
                "{}{}-",
                crate::escapees::RUN_DIR_PREFIX,
                crate::escapees::harness_identity()
            ))
            .tempdir()
            .map(|t| (t.path().to_path_buf(), Some(t))),
    };
    let (run_dir, _guard) = match dir {
        Ok(d) => d,
        Err(e) => {
            return finish_error(
                s,
                started,
                eco,
                format!("cannot create a run directory: {e}"),
            )
            .await;
        }
    };
    let mut vars = Vars::new();
    for (n, u) in &mock_urls {
        vars.insert(format!("mocks.{n}.url"), u.clone());
    }
    let mut ports = BTreeMap::new();
    let mut agent_urls = BTreeMap::new();
    let mut registry_url = opts.registry_url.clone();
    let mut process: Option<ImplProcess> = None;
    let mut log_files = Vec::new();
    let mut rendered_launch = None;
    let recorder = Recorder::new();
    let limits = target.spec.limits.unwrap_or_default().with(&opts.limits);
    let client = match WireClient::new(recorder.clone(), step_timeout) {
        Ok(c) => c.with_limits(limits),
        Err(e) => return finish_error(s, started, eco, e.to_string()).await,
    };
    if let Some(d) = &s.spec.deployment {
        let r = match render_deployment(target, d, &mock_urls, &run_dir, &mut ports, &mut redactor)
        {
            Ok(r) => r,
            Err(e) => return finish_error(s, started, eco, e.to_string()).await,
        };
        vars.extend(r.vars.clone());
        agent_urls = r.agent_urls.clone();
        registry_url = r.registry_url.clone();
        log_files = r.log_files.clone();
        let mut p = match ImplProcess::spawn(&r.launch).await {
            Ok(p) => p,
            Err(e) => {
                return finish_error(
                    s,
                    started,
                    eco,
                    format!("the implementation did not start: {e}"),
                )
                .await;
            }
        };
        let startup = target
            .spec
            .startup_timeout
            .unwrap_or(Duration::from_secs(30));
        let wait = d.ready != crate::scenario::Readiness::None;
        if wait && let Err(e) = p.wait_ready(&r.probes, startup).await {
            let out = p.stop(Duration::from_secs(2)).await;
            eco_shutdown(eco).await;
            let tail = redactor.text(&format!(
                "--- stdout\n{}\n--- stderr\n{}",
                out.stdout, out.stderr
            ));
            return errored(
                s,
                started,
                redactor.text(&format!("the implementation did not become ready: {e}")),
                Some(tail),
            );
        }
        rendered_launch = Some(r);
        process = Some(p);
    } else if let Some(reg) = &registry_url {
        // Attach mode: agent endpoints come from the registry.
        if let Ok(f) = fetch_registry(&client, reg).await
            && let Some(servers) = f
                .body
                .as_ref()
                .and_then(|b| b.get("servers"))
                .and_then(|v| v.as_array())
        {
            for e in servers {
                let Some(server) = e.get("server") else {
                    continue;
                };
                let name = server.get("name").and_then(|v| v.as_str()).unwrap_or("");
                if let Some(url) = streamable_http_url(server) {
                    agent_urls.insert(server_id(name).to_owned(), url.to_owned());
                }
            }
        }
        vars.insert("registry.url".into(), reg.clone());
    }
    for (n, u) in &agent_urls {
        vars.insert(format!("agents.{n}.url"), u.clone());
    }
    let agent_names: Vec<String> = agent_urls
        .keys()
        .cloned()
        .chain(
            s.spec
                .deployment
                .iter()
                .flat_map(|d| d.agents.keys().cloned()),
        )
        .collect();
    for n in agent_names {
        vars.insert(format!("agents.{n}.message_tool"), target.message_tool(&n));
    }

    // Steps, under the scenario deadline.
    let shared = Arc::new(Shared::new(
        client,
        vars,
        agent_urls.clone(),
        registry_url.clone(),
        redactor.clone(),
        target.clone(),
        s.spec.clone(),
        step_timeout,
        process,
        rendered_launch,
        ports,
        mock_urls.clone(),
        run_dir.clone(),
    ));
    let exec = Exec(shared.clone());
    let steps = s.spec.steps.clone();
    let steps_started = Instant::now();
    let mut harness_error: Option<String> = None;
    match tokio::time::timeout(deadline, exec.run_steps(&steps, None, "")).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => harness_error = Some(e),
        Err(_) => {
            harness_error = Some(format!(
                "scenario deadline of {} exceeded; results below cover what was seen until then",
                humantime::format_duration(deadline)
            ))
        }
    }

    // Observations.
    let mut observed = Observed {
        // Moved, not copied: a huge answer is held once.
        steps: std::mem::take(&mut *shared.records.lock().await),
        deployment: shared.deployment.lock().await.clone(),
        agent_urls,
        health_tool: target.spec.health_tool.clone(),
        ..Observed::default()
    };
    if let Some(d) = &observed.deployment {
        observed.message_tools = d
            .agents
            .keys()
            .map(|a| (a.clone(), target.message_tool(a)))
            .collect();
    }
    for name in s.spec.ecosystem.mcp_servers.keys() {
        if let Some(m) = eco.mcp(name) {
            observed.mcp_journals.insert(name.clone(), m.journal());
            observed.sessions.insert(name.clone(), m.sessions());
        }
    }
    for name in s.spec.ecosystem.llms.keys() {
        if let Some(m) = eco.llm(name) {
            observed.llm_journals.insert(name.clone(), m.journal());
        }
    }
    // Received messages, with their negotiated version and the method they answer.
    let versions = shared.versions.lock().await.clone();
    let mut sent_methods: BTreeMap<(String, String), String> = BTreeMap::new();
    for o in recorder.take() {
        match o.kind {
            ObservationKind::Sent(v) => {
                if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(|m| m.as_str()))
                {
                    sent_methods.insert((o.label.clone(), id.to_string()), m.to_owned());
                }
            }
            ObservationKind::Received { message, .. } => {
                let request_method = message
                    .get("id")
                    .and_then(|id| sent_methods.get(&(o.label.clone(), id.to_string())))
                    .cloned();
                let version = versions
                    .get(&o.label)
                    .cloned()
                    .unwrap_or_else(|| "2025-11-25".into());
                observed.received.push(ReceivedMessage {
                    label: o.label,
                    version,
                    message,
                    request_method,
                });
            }
            _ => {}
        }
    }
    let mut redactor = shared.redactor.lock().await.clone();
    // Bearers sent by steps are secrets too.
    for r in &observed.steps {
        if let Some(b) = &r.bearer {
            redactor.add(b.clone());
        }
    }
    let mut vars = shared.vars.lock().await.clone();
    for (i, sec) in redactor.secrets().iter().enumerate() {
        vars.insert(format!("secret.{i}"), sec.clone());
    }
    observed.vars = vars;

    // Stop the implementation and read its output.
    let proc = shared.process.lock().await.take();
    let mut tail = None;
    if let Some(p) = proc {
        let out = p.stop(Duration::from_secs(3)).await;
        let mut logs = format!("{}\n{}", out.stdout, out.stderr);
        for f in &log_files {
            if let Ok(t) = crate::client::limits::read_file_tail(f, limits.logs_bytes()) {
                logs.push('\n');
                logs.push_str(&String::from_utf8_lossy(&t));
            }
        }
        observed.logs_available = true;
        tail = Some(redactor.text(&format!(
            "--- stdout\n{}\n--- stderr\n{}",
            last_lines(&out.stdout, 40),
            last_lines(&out.stderr, 40)
        )));
        observed.logs = logs;
    }
    eco_shutdown(eco).await;

    let claims = |c| target.claims(c);
    // Judging counts against the scenario deadline too (at least JUDGE_FLOOR, so a scenario
    // whose steps used it all is still judged on what was seen); an overrun is an error.
    let budget = deadline
        .saturating_sub(steps_started.elapsed())
        .max(JUDGE_FLOOR);
    let steps = step_summaries(&observed, &redactor);
    let mut checks = match super::judge::judge_within(
        budget,
        s.clone(),
        observed,
        target.clone(),
        opts.grading,
        redactor.clone(),
    )
    .await
    {
        Ok(c) => c,
        Err(e) => {
            harness_error = Some(match harness_error {
                Some(h) => format!("{h}; {e}"),
                None => e,
            });
            Vec::new()
        }
    };
    if let Some(e) = &harness_error {
        checks.push(CheckResult::judged(
            checks::Subject::harness(
                "the scenario's steps ran to completion".into(),
                format!("{}:1", s.path.display()),
            ),
            checks::Outcome::Error(e.clone()),
            &claims,
            opts.grading,
            &redactor,
        ));
    }
    let verdict = overall(&checks, harness_error.is_some());
    ScenarioResult {
        id: s.spec.id.clone(),
        title: s.spec.title.clone(),
        file: s.path.display().to_string(),
        verdict,
        checks,
        duration_ms: ms(started),
        error: harness_error.map(|e| redactor.text(&e)),
        skipped: None,
        output_tail: if matches!(verdict, Verdict::Fail | Verdict::Error) {
            tail
        } else {
            None
        },
        steps,
        reproduce: String::new(),
    }
}

/// The least time judging gets, even when the steps used the whole scenario deadline.
const JUDGE_FLOOR: Duration = Duration::from_secs(5);

fn step_summaries(observed: &Observed, redactor: &Redactor) -> Vec<StepSummary> {
    observed
        .steps
        .iter()
        .map(|r| StepSummary {
            name: r.name.clone(),
            action: r.action.clone(),
            elapsed_ms: r.elapsed_ms,
            error: r.error.as_ref().map(|e| {
                crate::client::evidence::bounded_text(
                    &redactor.text(e),
                    crate::client::evidence::EVIDENCE_MAX,
                )
            }),
            timed_out: r.timed_out,
        })
        .collect()
}

fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

async fn eco_shutdown(eco: Arc<Ecosystem>) {
    if let Ok(e) = Arc::try_unwrap(eco) {
        let _ = tokio::time::timeout(Duration::from_secs(5), e.shutdown()).await;
    }
}

async fn finish_error(
    s: &Scenario,
    started: Instant,
    eco: Arc<Ecosystem>,
    e: String,
) -> ScenarioResult {
    eco_shutdown(eco).await;
    errored(s, started, e, None)
}

#[allow(dead_code)]
type SharedMutex<T> = Arc<Mutex<T>>;

/// How many messages the steps send (`send` steps, repeats counted), saturating.
fn messages_sent(steps: &[crate::scenario::StepSpec]) -> u32 {
    use crate::scenario::StepAction;
    steps
        .iter()
        .map(|step| match step.action() {
            Some(StepAction::Send(_)) => 1,
            Some(StepAction::Repeat(r)) => r.count.saturating_mul(messages_sent(&r.steps)),
            Some(StepAction::Parallel(p)) => messages_sent(p),
            _ => 0,
        })
        .fold(0u32, u32::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::messages_sent;
    use crate::scenario::StepSpec;

    #[test]
    fn messages_sent_counts_repeats_and_parallel_groups() {
        let yaml = "- send: {agent: a, message: one}\n\
                    - repeat: {count: 3, steps: [{send: {agent: a, message: r}}, {health: {agent: a}}]}\n\
                    - parallel: [{send: {agent: a, message: p}}, {registry: {}}]\n\
                    - health: {agent: a}\n";
        let steps: Vec<StepSpec> = match serde_saphyr::from_str(yaml) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(messages_sent(&steps), 1 + 3 + 1);
        assert_eq!(messages_sent(&[]), 0);
    }
}
