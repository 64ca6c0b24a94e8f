//! Certifying the other half of seed 000: a Daedalus-side client. `pallas-conformance daedalus
//! --client PROFILE` starts a mock Pallas per scenario (`pallas_mocks::MockPallas`), runs the
//! client with the registry URL as its last argument, and judges what the client sent, from the
//! mock's journal, with the client checks (`harness/rules/daedalus.yaml`). The run is a
//! [`RunResult`], so its reports are the server reports' formats.

mod checks;
pub mod profile;
pub mod scenario;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pallas_mocks::MockPallas;

pub use checks::Seen;
pub use profile::{ClientClaim, ClientProfile};
pub use scenario::{ClientScenario, Task};

use crate::checks::{CheckResult, Grading, Outcome, Subject, Verdict};
use crate::diag::SpecError;
use crate::process::{ImplProcess, LaunchSpec};
use crate::redact::Redactor;
use crate::rules::RuleBook;
use crate::runner::{RunResult, ScenarioResult};

/// The client rule file.
pub const RULES: (&str, &str) = (
    "harness/rules/daedalus.yaml",
    include_str!("../../rules/daedalus.yaml"),
);

static BOOK: OnceLock<Result<RuleBook, Box<SpecError>>> = OnceLock::new();

/// The client rule book (loaded once).
pub fn book() -> Result<&'static RuleBook, &'static SpecError> {
    BOOK.get_or_init(|| RuleBook::load(&[RULES]).map_err(Box::new))
        .as_ref()
        .map_err(|e| &**e)
}

/// A client profile's or scenario's text, with its name for errors (`what` says which).
#[allow(clippy::result_large_err)]
pub(crate) fn read_file(path: &std::path::Path, what: &str) -> Result<(String, String), SpecError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        SpecError::at(
            &name,
            "",
            0,
            0,
            format!("cannot read the {what}: {e}"),
            None,
        )
    })?;
    Ok((name, text))
}

/// The client checks as a Markdown table: ID, level, what is checked, and every rule it
/// enforces (the first gives the level) with its source and verbatim quote.
pub fn checks_table(book: &RuleBook) -> String {
    let mut out = String::from(
        "| check | level | what | rules (the first gives the level) |\n|---|---|---|---|\n",
    );
    for c in &book.checks {
        let rules: Vec<String> = c
            .rule_defs
            .iter()
            .map(|r| {
                let basis = book
                    .rule(&r.id)
                    .and_then(|full| full.basis.as_deref())
                    .map(|b| format!(" (no keyword; basis: {b})"))
                    .unwrap_or_default();
                format!(
                    "{} ({}), {}: \"{}\"{}",
                    r.id,
                    r.level.as_str(),
                    r.source,
                    r.quote,
                    basis
                )
                .replace('|', "\\|")
            })
            .collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.id,
            c.level.as_str(),
            c.title.replace('|', "\\|"),
            rules.join("<br>")
        ));
    }
    out
}

/// Runs every scenario against the client, one at a time, calling `each` as each ends.
pub async fn run(
    profile: &ClientProfile,
    scenarios: &[ClientScenario],
    grading: Grading,
    mut each: impl FnMut(&ScenarioResult),
) -> RunResult {
    let started = Instant::now();
    let mut results = Vec::new();
    for s in scenarios {
        let r = run_one(profile, s, grading).await;
        each(&r);
        results.push(r);
    }
    RunResult {
        side: crate::runner::Side::Client,
        target: profile.name.clone(),
        kit_version: env!("CARGO_PKG_VERSION").to_owned(),
        suite: None,
        claims: profile
            .claims
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect(),
        scenarios: results,
        stale: Vec::new(),
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        error: None,
    }
}

/// A scenario's result so far: no verdict yet, its wall time since `started`.
fn result(profile: &ClientProfile, s: &ClientScenario, started: Instant) -> ScenarioResult {
    ScenarioResult {
        id: s.id.clone(),
        title: s.title.clone(),
        file: s.file.clone(),
        verdict: Verdict::Skip,
        checks: Vec::new(),
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        error: None,
        skipped: None,
        output_tail: None,
        steps: Vec::new(),
        reproduce: format!(
            "pallas-conformance daedalus --client {} --filter {}",
            profile.path.display(),
            s.id
        ),
        phases: None,
        declared: crate::runner::Declared::default(),
    }
}

/// One scenario: the mock, the client, the verdicts.
pub async fn run_one(
    profile: &ClientProfile,
    s: &ClientScenario,
    grading: Grading,
) -> ScenarioResult {
    let started = Instant::now();
    if let Some(missing) = s.requires.iter().find(|c| !profile.claims(**c)) {
        let why = format!("the client does not claim `{}`", missing.as_str());
        return unclaimed(profile, s, why, started);
    }
    if s.task.bearer.is_some() && profile.bearer_args.is_empty() {
        let why =
            "the client's profile maps no user bearer (`bearer_args`), so it cannot be given one";
        return unclaimed(profile, s, why.to_owned(), started);
    }
    if !s.task.messages.is_empty() && profile.message_args.is_empty() {
        return errored(
            profile,
            s,
            started,
            "the task sends messages and the profile has no `message_args`".into(),
            None,
        );
    }
    let pallas = match MockPallas::start(&s.pallas).await {
        Ok(p) => p,
        Err(e) => {
            return errored(
                profile,
                s,
                started,
                format!("the mock Pallas did not start: {e}"),
                None,
            );
        }
    };
    let logs = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            return errored(
                profile,
                s,
                started,
                format!("no temporary folder for the client's output: {e}"),
                None,
            );
        }
    };
    let spec = launch_spec(profile, s, &pallas.registry_url(), logs.path());
    let mut redactor = Redactor::new();
    if let Some(b) = &s.task.bearer {
        redactor.add(b.clone());
    }
    let (outputs, changes) = match client_runs(&pallas, s, &spec, s.timeout(profile)).await {
        Ok(x) => x,
        Err(why) => {
            pallas.shutdown().await;
            return errored(profile, s, started, redactor.text(&why), None);
        }
    };
    let ended = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let tail = redactor.text(
        &outputs
            .iter()
            .map(|(o, _)| format!("{}{}", o.stdout, o.stderr))
            .collect::<String>(),
    );
    let journal = pallas.journal();
    let agent_urls: BTreeMap<String, String> = s
        .pallas
        .agents
        .keys()
        .filter_map(|k| Some((k.clone(), pallas.agent_url(k)?.to_owned())))
        .collect();
    pallas.shutdown().await;
    if journal.is_empty() {
        let exits: Vec<&str> = outputs
            .iter()
            .map(|(o, _)| o.exit.as_deref().unwrap_or("an unknown status"))
            .collect();
        return errored(
            profile,
            s,
            started,
            format!(
                "the client never reached the mock Pallas (it exited with {})",
                exits.join(", then ")
            ),
            Some(tail),
        );
    }
    let seen = Seen {
        journal: &journal,
        spec: &s.pallas,
        agent_urls: &agent_urls,
        ended,
        task: (s.task.agent.as_deref(), s.task.messages.len()),
        changes: &changes,
        bearer: s.task.bearer.as_deref(),
    };
    let checks = judge(s, &seen, grading, &redactor);
    let mut r = result(profile, s, started);
    let mut before = 0;
    r.steps = outputs
        .iter()
        .enumerate()
        .map(|(n, (o, upto))| {
            let step = client_step(n, o, upto.saturating_sub(before), started);
            before = *upto;
            step
        })
        .collect();
    r.verdict = overall(&checks);
    if r.verdict != Verdict::Pass {
        r.output_tail = Some(tail);
    }
    r.checks = checks;
    r
}

/// The arguments for a task: the profile's command after its program, the task mapped by the
/// profile's `*_args`, the registry URL last.
fn task_args(profile: &ClientProfile, task: &Task, registry_url: &str) -> Vec<String> {
    let mut args: Vec<String> = profile.command[1..].to_vec();
    if let Some(agent) = &task.agent {
        args.extend(
            profile
                .agent_args
                .iter()
                .map(|a| a.replace("{agent}", agent)),
        );
    }
    if let Some(bearer) = &task.bearer {
        args.extend(
            profile
                .bearer_args
                .iter()
                .map(|a| a.replace("{bearer}", bearer)),
        );
    }
    for m in &task.messages {
        args.extend(
            profile
                .message_args
                .iter()
                .map(|a| a.replace("{message}", m)),
        );
    }
    args.push(registry_url.to_owned());
    args
}

/// How the client is started for scenario `s`: the profile's command, the task's arguments, the
/// registry URL last, and the `PALLAS_CONFORMANCE_*` variables.
fn launch_spec(
    profile: &ClientProfile,
    s: &ClientScenario,
    registry_url: &str,
    log_dir: &std::path::Path,
) -> LaunchSpec {
    let mut env: Vec<(String, String)> = profile
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.push(("PALLAS_CONFORMANCE_SCENARIO".into(), s.id.clone()));
    env.push((
        "PALLAS_CONFORMANCE_REGISTRY".into(),
        registry_url.to_owned(),
    ));
    if let Some(a) = &s.task.agent {
        env.push(("PALLAS_CONFORMANCE_AGENT".into(), a.clone()));
    }
    env.push((
        "PALLAS_CONFORMANCE_MESSAGES".into(),
        serde_json::to_string(&s.task.messages).unwrap_or_default(),
    ));
    LaunchSpec {
        program: profile.program(),
        args: task_args(profile, &s.task, registry_url),
        cwd: profile.cwd(),
        env,
        env_remove: Vec::new(),
        log_dir: log_dir.to_path_buf(),
    }
}

fn errored(
    profile: &ClientProfile,
    s: &ClientScenario,
    started: Instant,
    why: String,
    tail: Option<String>,
) -> ScenarioResult {
    let mut r = result(profile, s, started);
    r.verdict = Verdict::Error;
    r.error = Some(why);
    r.output_tail = tail.map(|t| read_tail_of(&t));
    r
}

/// The last part of a client's output, as a scenario keeps it.
fn read_tail_of(text: &str) -> String {
    let keep = crate::process::OUTPUT_TAIL_BYTES;
    if text.len() <= keep {
        return text.to_owned();
    }
    let mut cut = text.len() - keep;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_owned()
}

/// A scenario the client's claims do not reach: each check entry skipped, with the reason.
fn unclaimed(
    profile: &ClientProfile,
    s: &ClientScenario,
    why: String,
    started: Instant,
) -> ScenarioResult {
    let mut r = result(profile, s, started);
    r.checks = s
        .checks
        .iter()
        .filter_map(|c| {
            let def = book().ok()?.check(&c.check)?;
            Some(CheckResult::judged(
                Subject::check(def, None, location(s, &c.check)),
                Outcome::NotApplicable(why.clone()),
                &|_| true,
                Grading::default(),
                &Redactor::new(),
            ))
        })
        .collect();
    r.skipped = Some(why);
    r
}

/// Each client run's output, with the journal's length when it ended, and the registry changes
/// made between runs (`again`: the journal's length then, the agents listed from then on).
type Runs = (
    Vec<(crate::observation::ProcessOutput, usize)>,
    Vec<(usize, std::collections::BTreeSet<String>)>,
);

/// The client's runs for scenario `s`: one, or two with the registry changed in between.
async fn client_runs(
    pallas: &MockPallas,
    s: &ClientScenario,
    spec: &LaunchSpec,
    timeout: Duration,
) -> Result<Runs, String> {
    let mut changes = Vec::new();
    let mut outputs = Vec::new();
    for run in 0..if s.again.is_some() { 2 } else { 1 } {
        if let (1, Some(again)) = (run, &s.again) {
            changes.push((
                pallas.journal().len(),
                again.registry_agents.iter().cloned().collect(),
            ));
            pallas.list_agents(Some(again.registry_agents.clone()));
        }
        match run_client(spec, timeout).await {
            Ok(output) => outputs.push((output, pallas.journal().len())),
            Err(why) => {
                let journal = pallas.journal().len();
                return Err(format!(
                    "{why} ({journal} request(s) reached the mock Pallas)"
                ));
            }
        }
    }
    Ok((outputs, changes))
}

/// One run of the client: started, given `timeout` to exit, then stopped with its whole
/// process group. The reason when it did not start or did not exit in time.
async fn run_client(
    spec: &LaunchSpec,
    timeout: Duration,
) -> Result<crate::observation::ProcessOutput, String> {
    let mut child = ImplProcess::spawn(spec)
        .await
        .map_err(|e| format!("the client did not start: {e}"))?;
    let exited = child.wait_exit(timeout).await;
    let output = child.stop(Duration::from_secs(2)).await;
    match exited {
        Some(_) => Ok(output),
        None => Err(format!(
            "the client did not exit within {} s; it was stopped",
            timeout.as_secs()
        )),
    }
}

/// One run of the client as a step of the report: how it ended, how many requests it sent, and
/// the last line it wrote.
fn client_step(
    run: usize,
    output: &crate::observation::ProcessOutput,
    requests: usize,
    started: Instant,
) -> crate::runner::StepSummary {
    let last = format!("{}\n{}", output.stdout, output.stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| {
            let l = l.trim();
            let cut: String = l.chars().take(160).collect();
            let more = if cut.len() < l.len() { "…" } else { "" };
            format!("; its last line: {cut}{more}")
        })
        .unwrap_or_default();
    crate::runner::StepSummary {
        name: if run == 0 {
            "client".into()
        } else {
            format!("client#{}", run + 1)
        },
        action: "run".into(),
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        observed: Some(format!(
            "exited with {}; {requests} request(s) to the mock Pallas{last}",
            output.exit.as_deref().unwrap_or("an unknown status"),
        )),
        ..crate::runner::StepSummary::default()
    }
}

/// `file:line` of a scenario's check entry.
fn location(s: &ClientScenario, check: &str) -> String {
    s.locations
        .get(check)
        .cloned()
        .unwrap_or_else(|| s.file.clone())
}

fn judge(
    s: &ClientScenario,
    seen: &Seen<'_>,
    grading: Grading,
    redactor: &Redactor,
) -> Vec<CheckResult> {
    let Ok(book) = book() else {
        return Vec::new();
    };
    s.checks
        .iter()
        .filter_map(|c| {
            let def = book.check(&c.check)?;
            let outcome = checks::evaluator(&c.check).map_or_else(
                || Outcome::Error(format!("no evaluator for {}", c.check)),
                |f| f(seen),
            );
            Some(CheckResult::judged(
                Subject::check(def, None, location(s, &c.check)),
                outcome,
                &|_| true,
                grading,
                redactor,
            ))
        })
        .collect()
}

/// The scenario's verdict: the worst of its checks (error > fail > warn > inconclusive > pass);
/// `skip` when every check was not applicable.
fn overall(checks: &[CheckResult]) -> Verdict {
    let rank = |v: Verdict| match v {
        Verdict::Error => 6,
        Verdict::Fail => 5,
        Verdict::Warn => 4,
        Verdict::Inconclusive => 3,
        Verdict::Pass => 2,
        Verdict::Info => 1,
        Verdict::Skip => 0,
    };
    match checks.iter().map(|c| c.verdict).max_by_key(|v| rank(*v)) {
        Some(v) if rank(v) >= rank(Verdict::Pass) => v,
        _ => Verdict::Skip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_maps_into_the_profiles_arguments_with_the_registry_last() {
        let p = ClientProfile::parse(
            "p.yaml",
            "name: d\ncommand: [python, d.py]\nmessage_args: [--message, \"{message}\"]\nagent_args: [--agent, \"{agent}\"]\n",
        )
        .expect("valid");
        let task = Task {
            agent: Some("research".into()),
            messages: vec!["a".into(), "b".into()],
            bearer: None,
        };
        assert_eq!(
            task_args(&p, &task, "http://127.0.0.1:1"),
            [
                "d.py",
                "--agent",
                "research",
                "--message",
                "a",
                "--message",
                "b",
                "http://127.0.0.1:1"
            ]
        );
    }

    #[test]
    fn the_client_book_loads_and_every_quote_is_verbatim_in_its_source() {
        let book = book().unwrap_or_else(|e| panic!("{}", e.render_plain()));
        let problems = crate::rules::sources::verify_quotes(book);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn every_client_check_has_its_evaluator() {
        let book = book().unwrap_or_else(|e| panic!("{}", e.render_plain()));
        for c in &book.checks {
            assert!(
                checks::evaluator(&c.id).is_some(),
                "{} has no evaluator",
                c.id
            );
        }
    }

    #[test]
    fn no_client_check_id_is_a_server_check_id() {
        let book = book().unwrap_or_else(|e| panic!("{}", e.render_plain()));
        for c in &book.checks {
            assert!(
                crate::catalog::get(&c.id).is_none(),
                "{} is also a server check",
                c.id
            );
        }
    }
}
