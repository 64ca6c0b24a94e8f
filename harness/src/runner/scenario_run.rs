//! One scenario from start to end: mocks, deployment, launch, steps, observations, checks.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pallas_mocks::Ecosystem;

use super::exec::{Exec, ScenarioContext, Shared, Start, StepSink};
use super::{HarnessError, Phases, RunOptions, ScenarioResult, StepSummary, ms, overall};
use crate::checks::{self, CheckResult, Verdict};
use crate::client::observe::{Recorder, WireEventKind};
use crate::client::{WireClient, fetch_registry, server_id, streamable_http_url};
use crate::deploy::{DeployError, Deployment, RunDir};
use crate::observation::{Observed, ReceivedMessage};
use crate::redact::Redactor;
use crate::scenario::{Scenario, template::Vars};
use crate::target::Target;
use crate::vocab::Capability;

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
                Some(def) => checks::subject_of(def, c.title.clone(), location),
                // As when it runs: a premise judges no rule, an unattributed assertion is at
                // the level its author wrote.
                None => checks::Subject::assertion(
                    c.level.unwrap_or(if c.premise {
                        crate::scenario::Level::Info
                    } else {
                        crate::scenario::Level::Should
                    }),
                    s.spec.refs.clone(),
                    c.title
                        .clone()
                        .unwrap_or_else(|| "scenario assertion".into()),
                    location,
                ),
            };
            let subject = match &c.rule {
                Some(rule) => subject.stating(rule),
                None => subject,
            };
            let mut result = CheckResult::judged(
                subject,
                checks::Outcome::NotApplicable(reason.clone()),
                &none,
                Default::default(),
                &Redactor::default(),
            );
            result.premise = c.premise;
            result
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
        phases: None,
        declared: Default::default(),
    }
}

/// The result of a scenario that could not run: an error with its reason and, when the
/// implementation ran, its output tail.
pub(super) fn errored(
    s: &Scenario,
    started: Instant,
    error: String,
    tail: Option<String>,
) -> ScenarioResult {
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
        phases: None,
        declared: Default::default(),
    }
}

/// Why a scenario is skipped before it starts, if it is.
fn skip_reason(s: &Scenario, target: &Target, opts: &RunOptions) -> Option<String> {
    if let Some(reason) = Capability::contract_skip(&s.spec.requires, |c| target.claims(c)) {
        return Some(reason);
    }
    if opts.registry_url.is_some() && s.spec.deployment.is_some() {
        return Some("needs a deployment of its own (attach mode)".into());
    }
    if opts.registry_url.is_none() && s.spec.deployment.is_none() {
        return Some("declares no deployment; run it in attach mode (--registry-url)".into());
    }
    s.spec
        .deployment
        .as_ref()
        .and_then(|d| target.scope_unavailable(d))
}

/// The scenario deadline and the step timeout, with the target's documented retry back-off:
/// each message may be retried for that long.
fn budgets(s: &Scenario, target: &Target, opts: &RunOptions) -> (Duration, Duration) {
    let backoff = target.spec.retry_backoff.unwrap_or_default();
    let deadline = s.spec.timeouts.scenario.unwrap_or(opts.scenario_deadline)
        + backoff * messages_sent(&s.spec.steps);
    let step = s
        .spec
        .timeouts
        .step
        .or(target.spec.step_timeout)
        .unwrap_or(opts.step_timeout)
        + backoff;
    (deadline, step)
}

/// Starts the scenario's mock ecosystem within 10 s.
async fn start_mocks(s: &Scenario) -> Result<Arc<Ecosystem>, HarnessError> {
    match tokio::time::timeout(Duration::from_secs(10), Ecosystem::start(&s.spec.ecosystem)).await {
        Ok(Ok(e)) => Ok(Arc::new(e)),
        Ok(Err(e)) => Err(HarnessError::Mocks(e)),
        Err(_) => Err(HarnessError::MocksTimedOut),
    }
}

/// The secrets the scenario declares or configures its mocks with.
fn scenario_redactor(s: &Scenario) -> Redactor {
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
    redactor
}

/// Where the steps reach the implementation, and the implementation when the scenario deploys
/// one.
struct Reach {
    deployment: Option<Deployment>,
    /// The run directory of an attach-mode scenario (a deployment owns its own).
    _attach_dir: Option<RunDir>,
    run_dir: std::path::PathBuf,
    vars: Vars,
    agent_urls: BTreeMap<String, String>,
    registry_url: Option<String>,
}

/// Deploys the scenario's deployment and waits for readiness, or attaches to `--registry-url`
/// (agent endpoints from its registry). A failure is the scenario's error, with the
/// implementation's output when it ran.
async fn deploy_or_attach(
    s: &Scenario,
    target: &Target,
    opts: &RunOptions,
    client: &WireClient,
    mock_urls: &BTreeMap<String, String>,
    redactor: &mut Redactor,
    phases: &mut Phases,
) -> Result<Reach, DeployError> {
    let starting = Instant::now();
    let keep = opts.keep_dir.as_ref().map(|root| root.join(&s.spec.id));
    let prefix = format!(
        "{}{}-",
        crate::escapees::RUN_DIR_PREFIX,
        crate::escapees::harness_identity()
    );
    let run_dir = RunDir::create(keep.as_deref(), &prefix)?;
    let mut vars = Vars::new();
    for (n, u) in mock_urls {
        vars.insert(format!("mocks.{n}.url"), u.clone());
    }
    if let Some(d) = &s.spec.deployment {
        let mut dep = Deployment::render(target, d, mock_urls, run_dir, redactor)?;
        let r = dep.rendered();
        vars.extend(r.vars.clone());
        let (agent_urls, registry_url) = (r.agent_urls.clone(), r.registry_url.clone());
        dep.spawn().await?;
        phases.start_ms = ms(starting);
        let readying = Instant::now();
        if d.ready != crate::scenario::Readiness::None {
            let within = dep.startup_timeout();
            dep.wait_ready(within).await?;
        }
        phases.ready_ms = ms(readying);
        return Ok(Reach {
            run_dir: dep.run_dir().to_path_buf(),
            deployment: Some(dep),
            _attach_dir: None,
            vars,
            agent_urls,
            registry_url,
        });
    }
    let mut agent_urls = BTreeMap::new();
    if let Some(reg) = &opts.registry_url {
        if let Ok(f) = fetch_registry(client, reg).await
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
    Ok(Reach {
        run_dir: run_dir.path().to_path_buf(),
        deployment: None,
        _attach_dir: Some(run_dir),
        vars,
        agent_urls,
        registry_url: opts.registry_url.clone(),
    })
}

/// Runs one scenario; never panics, never hangs past its deadline. The eight steps of
/// ARCHITECTURE.md: validated scenario in, mocks, deployment, launch, steps, observations,
/// judging, stop.
///
/// With `steps`, each step is reported as a `step_done` event as it finishes (and the result
/// lists none: the events carry them); without, the result lists them.
pub async fn run_one(
    s: &Scenario,
    target: &Target,
    opts: &RunOptions,
    steps: Option<StepSink>,
) -> ScenarioResult {
    if let Some(reason) = skip_reason(s, target, opts) {
        return skipped(s, reason);
    }
    let _serial = match super::serial::exclusive(s).await {
        Ok(guard) => guard,
        Err(e) => return errored(s, Instant::now(), e.to_string(), None),
    };
    let started = Instant::now();
    let mut phases = Phases::default();
    let (deadline, step_timeout) = budgets(s, target, opts);
    let eco = match start_mocks(s).await {
        Ok(e) => e,
        Err(e) => return errored(s, started, e.to_string(), None),
    };
    phases.mocks_ms = ms(started);
    let mock_urls = eco.urls();
    let mut redactor = scenario_redactor(s);
    let recorder = Recorder::new();
    let limits = target.spec.limits.unwrap_or_default().with(&opts.limits);
    let client = match WireClient::new(recorder.clone(), step_timeout) {
        Ok(c) => c.with_limits(limits),
        Err(e) => return finish_error(s, started, eco, e.to_string()).await,
    };
    let deployed = deploy_or_attach(
        s,
        target,
        opts,
        &client,
        &mock_urls,
        &mut redactor,
        &mut phases,
    );
    let reach = match deployed.await {
        Ok(r) => r,
        Err(e) => {
            eco_shutdown(eco).await;
            let tail = e.output.as_deref().map(|o| redactor.text(o));
            return errored(s, started, redactor.text(&e.message), tail);
        }
    };
    let mut vars = reach.vars;
    for (n, u) in &reach.agent_urls {
        vars.insert(format!("agents.{n}.url"), u.clone());
    }
    let deployed_agents = s.spec.deployment.iter().flat_map(|d| d.agents.keys());
    for n in reach.agent_urls.keys().chain(deployed_agents) {
        vars.insert(format!("agents.{n}.message_tool"), target.message_tool(n));
        vars.insert(
            format!("agents.{n}.message_key"),
            target.message_key().to_string(),
        );
    }
    let live = steps.is_some();
    let cx = ScenarioContext {
        client,
        registry_url: reach.registry_url,
        target: target.clone(),
        scenario: s.clone(),
        step_timeout,
        run_dir: reach.run_dir,
        steps,
        mocks: Arc::downgrade(&eco),
    };
    let start = Start {
        vars,
        redactor,
        agent_urls: reach.agent_urls.clone(),
    };
    let shared = Arc::new(Shared::new(Arc::new(cx), start, reach.deployment));
    // Message times (`at_ms`) count from here, not from before the start and readiness wait.
    recorder.restart_clock();
    let steps_started = Instant::now();
    let harness_error = run_steps(&shared, deadline).await;
    phases.steps_ms = ms(steps_started);
    let stopping = Instant::now();
    let logs_max = limits.logs_bytes();
    let (observed, redactor, tail) = observe(s, &shared, &eco, &recorder, logs_max).await;
    drop(reach._attach_dir);
    eco_shutdown(eco).await;
    phases.stop_ms = ms(stopping);
    // Judging counts against the scenario deadline too (at least JUDGE_FLOOR, so a scenario
    // whose steps used it all is still judged on what was seen); an overrun is an error.
    let budget = deadline
        .saturating_sub(steps_started.elapsed())
        .max(JUDGE_FLOOR);
    let cx = Judging {
        s,
        target,
        opts,
        harness_error,
        tail,
        started,
        phases,
        live,
    };
    judge(cx, observed, redactor, budget).await
}

/// The least time judging gets, even when the steps used the whole scenario deadline.
const JUDGE_FLOOR: Duration = Duration::from_secs(5);

/// The steps, under the scenario deadline; the harness error that stopped them, if any.
async fn run_steps(shared: &Arc<Shared>, deadline: Duration) -> Option<String> {
    let exec = Exec(shared.clone());
    match tokio::time::timeout(deadline, exec.run_all()).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(format!(
            "scenario deadline of {} exceeded; results below cover what was seen until then",
            humantime::format_duration(deadline)
        )),
    }
}

/// Collects what the scenario observed (steps, messages, journals, logs) and stops the
/// implementation; returns the observations, the final redactor and the output tail.
async fn observe(
    s: &Scenario,
    shared: &Shared,
    eco: &Ecosystem,
    recorder: &Recorder,
    logs_max: usize,
) -> (Observed, Redactor, Option<String>) {
    let target = &shared.cx.target;
    let mut deployment = shared.deployment.lock().await.take();
    // The endpoints as the last reload left them, beside the deployment as it stands.
    let agent_urls = shared.session.lock().await.agent_urls.clone();
    let mut observed = Observed {
        // Moved, not copied: a huge answer is held once.
        steps: std::mem::take(&mut shared.session.lock().await.records),
        deployment: deployment.as_ref().map(|d| d.spec().clone()),
        agent_urls,
        health_tool: target.spec.health_tool.clone(),
        message_key: Some(target.message_key()),
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
    let versions = shared.session.lock().await.versions.clone();
    observed.received = received_messages(recorder, &versions);
    let mut redactor = shared.session.lock().await.redactor.clone();
    // Bearers sent by steps are secrets too.
    for r in &observed.steps {
        if let Some(b) = &r.bearer {
            redactor.add(b.clone());
        }
    }
    let mut vars = shared.session.lock().await.vars.clone();
    for (i, sec) in redactor.secrets().iter().enumerate() {
        vars.insert(format!("secret.{i}"), sec.clone());
    }
    observed.vars = vars;
    // Stop the implementation and read its output.
    let mut tail = None;
    if let Some(d) = deployment.as_mut()
        && let Some(out) = d.stop().await
    {
        observed.logs = d.logs(&out, logs_max);
        observed.logs_available = true;
        tail = Some(redactor.text(&format!(
            "--- stdout\n{}\n--- stderr\n{}",
            last_lines(&out.stdout, 40),
            last_lines(&out.stderr, 40)
        )));
    }
    (observed, redactor, tail)
}

/// Every JSON-RPC message received, with its negotiated version and the method it answers.
///
/// In the 2025-11-25 era, the JSON body of an HTTP error (a status outside 2xx) counts only when
/// it is a JSON-RPC message (it has `jsonrpc`): that transport answers a request it cannot accept
/// with an HTTP error status, whose body "MAY comprise a JSON-RPC _error response_" — any other
/// body is no message of the protocol to judge. The 2026-07-28 transport requires JSON-RPC error
/// bodies on some of its HTTP errors: there every body is judged.
fn received_messages(
    recorder: &Recorder,
    versions: &BTreeMap<String, String>,
) -> Vec<ReceivedMessage> {
    let mut sent_methods: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut http_errors: std::collections::BTreeSet<u64> = std::collections::BTreeSet::new();
    let mut received = Vec::new();
    for o in recorder.take() {
        match o.kind {
            WireEventKind::Http(h) if h.status.is_some_and(|s| !(200..300).contains(&s)) => {
                http_errors.insert(o.seq);
            }
            WireEventKind::Received {
                message, http_seq, ..
            } if http_errors.contains(&http_seq)
                && message.get("jsonrpc").is_none()
                && versions
                    .get(&o.label)
                    .is_none_or(|v| v.as_str() < "2026-07-28") => {}
            WireEventKind::Sent(v) => {
                if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(|m| m.as_str()))
                {
                    sent_methods.insert((o.label.clone(), id.to_string()), m.to_owned());
                }
            }
            WireEventKind::Received { message, .. } => {
                let request_method = message
                    .get("id")
                    .and_then(|id| sent_methods.get(&(o.label.clone(), id.to_string())))
                    .cloned();
                let version = versions
                    .get(&o.label)
                    .cloned()
                    .unwrap_or_else(|| "2025-11-25".into());
                received.push(ReceivedMessage {
                    label: o.label,
                    version,
                    message,
                    request_method,
                });
            }
            _ => {}
        }
    }
    received
}

/// What judging needs besides the observations.
struct Judging<'a> {
    s: &'a Scenario,
    target: &'a Target,
    opts: &'a RunOptions,
    harness_error: Option<String>,
    tail: Option<String>,
    started: Instant,
    phases: Phases,
    /// The steps were reported live, as `step_done` events.
    live: bool,
}

/// The verdicts (within `budget`), and the scenario's result.
async fn judge(
    cx: Judging<'_>,
    observed: Observed,
    redactor: Redactor,
    budget: Duration,
) -> ScenarioResult {
    let Judging {
        s,
        target,
        opts,
        mut harness_error,
        tail,
        started,
        mut phases,
        live,
    } = cx;
    let judging = Instant::now();
    let declared = super::Declared::of(&observed);
    let steps = if live {
        Vec::new()
    } else {
        step_summaries(&observed, &redactor)
    };
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
                None => e.to_string(),
            });
            Vec::new()
        }
    };
    let claims = |c| target.claims(c);
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
    let verdict = overall(&checks, harness_error.is_some(), target.is_pallas());
    phases.judge_ms = ms(judging);
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
        phases: Some(phases),
        declared,
    }
}

fn step_summaries(observed: &Observed, redactor: &Redactor) -> Vec<StepSummary> {
    observed
        .steps
        .iter()
        .map(|r| StepSummary::of(r, redactor))
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

    /// An HTTP error's JSON body is a message to judge only when it is JSON-RPC; a 2xx body
    /// always is.
    #[test]
    fn an_http_errors_body_counts_as_a_message_only_when_it_is_json_rpc() {
        use crate::client::{Recorder, WireEventKind};
        use serde_json::json;
        let rec = Recorder::new();
        let answer = |status: u16, body: serde_json::Value| {
            let seq = rec.record("a", WireEventKind::Http(http(status)));
            rec.record(
                "a",
                WireEventKind::Received {
                    message: std::sync::Arc::new(body.into()),
                    sse_event_id: None,
                    http_seq: seq,
                },
            );
        };
        answer(404, json!({"error": "Session not found"}));
        answer(
            400,
            json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request"}}),
        );
        answer(200, json!({"error": "not JSON-RPC either"}));
        let kept = |versions: &std::collections::BTreeMap<String, String>| -> Vec<String> {
            super::received_messages(&rec, versions)
                .iter()
                .map(|m| m.message.root().to_value().to_string())
                .collect()
        };
        assert_eq!(
            kept(&Default::default()),
            vec![
                json!({"jsonrpc": "2.0", "error": {"code": -32000, "message": "Bad Request"}})
                    .to_string(),
                json!({"error": "not JSON-RPC either"}).to_string(),
            ]
        );
        // The 2026-07-28 transport requires JSON-RPC error bodies on some HTTP errors: every
        // body of that era is judged.
        answer(404, json!({"error": "Session not found"}));
        let era = [("a".to_owned(), "2026-07-28".to_owned())].into();
        assert_eq!(
            kept(&era),
            vec![json!({"error": "Session not found"}).to_string()]
        );
    }

    fn http(status: u16) -> crate::client::HttpExchange {
        crate::client::HttpExchange {
            method: "POST".into(),
            url: "http://127.0.0.1:1/mcp".into(),
            request_headers: Vec::new(),
            request_body: None,
            status: Some(status),
            response_headers: Vec::new(),
            content_type: Some("application/json".into()),
            response_body: None,
            elapsed_ms: 0.0,
            completed_ms: None,
            error: None,
        }
    }
}
