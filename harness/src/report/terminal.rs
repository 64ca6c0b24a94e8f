//! Terminal output: one line per finished scenario with a counter, a summary table by family,
//! then every failure with its evidence and scenario file:line.

use std::fmt::Write;

use crate::checks::Verdict;
use crate::runner::{RunEvent, RunResult, ScenarioFinished};

fn tag(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "PASS ",
        Verdict::Fail => "FAIL ",
        Verdict::Warn => "WARN ",
        Verdict::Skip => "SKIP ",
        Verdict::Info => "INFO ",
        Verdict::Inconclusive => "INCON",
        Verdict::Error => "ERROR",
    }
}

/// The live line for an event (`None` for events that print nothing): the run's start, the
/// target's build as a phase with its duration, and one line per finished scenario.
pub fn event_line(e: &RunEvent) -> Option<String> {
    match e {
        RunEvent::RunStarted(s) => Some(match s.partition {
            None => format!(
                "running {} scenario(s) ({})",
                s.scenarios,
                super::kit_line(&s.kit_version, s.suite.as_ref())
            ),
            Some(p) => format!(
                "running {} scenario(s): share {}/{} of {} ({})",
                s.scenarios,
                p.k,
                p.n,
                p.of,
                super::kit_line(&s.kit_version, s.suite.as_ref())
            ),
        }),
        RunEvent::BuildStarted(b) => Some(format!(
            "building the target: {} (once per run)",
            b.command.join(" ")
        )),
        RunEvent::BuildFinished(b) => Some(match &b.error {
            None => format!("built in {:.2}s", b.elapsed_ms / 1000.0),
            Some(_) => format!("build failed after {:.2}s", b.elapsed_ms / 1000.0),
        }),
        RunEvent::ScenarioFinished(f) => Some(scenario_line(f)),
        RunEvent::ScenarioStarted(_)
        | RunEvent::StepDone(_)
        | RunEvent::Verdict(_)
        | RunEvent::RunFinished(_) => None,
    }
}

fn scenario_line(r: &ScenarioFinished) -> String {
    let (done, total) = (r.done, r.total);
    let width = total.to_string().len();
    let c = &r.counts;
    let checks =
        c.pass + c.fail + c.warn + c.skip + c.error + c.inconclusive + c.info + c.baselined;
    let (failed, errors) = (c.fail, c.error);
    let extra = match (&r.skipped, failed, errors) {
        (Some(why), _, _) => format!(" ({why})"),
        (None, 0, 0) => format!(" {checks} check(s)"),
        (None, f, 0) => format!(" {f} of {checks} check(s) failed"),
        (None, 0, e) => format!(" {e} of {checks} check(s) could not be judged"),
        (None, f, e) => format!(" {f} of {checks} check(s) failed, {e} could not be judged"),
    };
    format!(
        "[{done:>width$}/{total}] {} {:<36} {:>6.2}s{extra}",
        tag(r.verdict),
        r.id,
        r.duration_ms / 1000.0
    )
}

/// Summary table by check family, then failures with evidence, stale baseline entries and
/// the totals line.
#[expect(
    clippy::too_many_lines,
    reason = "the summary is written top to bottom in the order a reader sees it"
)]
pub fn summary(run: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\nsummary by check family ({})", run.target);
    let _ = writeln!(out, "  judged by {}", super::run_kit_line(run));
    let _ = writeln!(
        out,
        "  {:<8} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>9}",
        "family", "pass", "fail", "warn", "info", "incon", "skip", "error", "baselined"
    );
    for (fam, c) in run.by_family() {
        let _ = writeln!(
            out,
            "  {fam:<8} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>5} {:>9}",
            c.pass, c.fail, c.warn, c.info, c.inconclusive, c.skip, c.error, c.baselined
        );
    }
    let mut problems = String::new();
    // One cause, one finding: a check failing again for the same reason is named, not repeated.
    let mut seen: Vec<(&str, Verdict, &str, &str, &str)> = Vec::new();
    for s in &run.scenarios {
        if let Some(e) = &s.error {
            let _ = writeln!(problems, "\nERROR {} — {e}\n  --> {}", s.id, s.file);
            if let Some(t) = &s.output_tail {
                for l in t.lines().take(30) {
                    let _ = writeln!(problems, "  | {l}");
                }
            }
        }
        for c in &s.checks {
            if !matches!(
                c.verdict,
                Verdict::Fail | Verdict::Warn | Verdict::Error | Verdict::Inconclusive
            ) || c.id == "HARNESS"
            {
                continue;
            }
            let key = (
                c.id.as_str(),
                c.verdict,
                c.title.as_str(),
                c.reason.as_str(),
            );
            if let Some(first) = seen
                .iter()
                .find(|(id, v, t, r, _)| (*id, *v, *t, *r) == key)
                .map(|x| x.4)
            {
                let _ = writeln!(
                    problems,
                    "\n{} {} [{}] in {} — the same finding as in {first} (one cause){}",
                    tag(c.verdict).trim(),
                    c.id,
                    c.level.as_str(),
                    s.id,
                    if c.baselined {
                        " (expected failure)"
                    } else {
                        ""
                    }
                );
                if !c.location.is_empty() {
                    let _ = writeln!(problems, "  --> {}", c.location);
                }
                continue;
            }
            seen.push((key.0, key.1, key.2, key.3, s.id.as_str()));
            let _ = writeln!(
                problems,
                "\n{} {} [{}] in {} — {}{}{}",
                tag(c.verdict).trim(),
                c.id,
                c.level.as_str(),
                s.id,
                c.title,
                if c.reason.is_empty() {
                    String::new()
                } else {
                    format!("\n  reason: {}", c.reason)
                },
                if c.baselined {
                    " (expected failure)"
                } else {
                    ""
                }
            );
            if !c.location.is_empty() {
                let _ = writeln!(problems, "  --> {}", c.location);
            }
            if let Some(m) = &c.mode {
                let _ = writeln!(problems, "  mode: {m}");
            }
            for e in c.evidence.iter().take(5) {
                let _ = writeln!(
                    problems,
                    "  evidence: {}{}",
                    e.what,
                    e.path
                        .as_ref()
                        .map(|p| format!(" at {p}"))
                        .unwrap_or_default()
                );
                if let Some(x) = &e.expected {
                    let _ = writeln!(problems, "    expected: {x}");
                }
                if let Some(x) = &e.seen {
                    let _ = writeln!(problems, "    seen:     {x}");
                }
            }
            if let Some(q) = c.cited_rule() {
                let _ = writeln!(problems, "  rule: {q}");
            }
            let _ = writeln!(problems, "  refs: {}", c.refs.join("; "));
            for t in &c.transcript {
                let _ = writeln!(problems, "  transcript: {t}");
            }
            if !s.reproduce.is_empty() {
                let _ = writeln!(problems, "  reproduce: {}", s.reproduce);
            }
        }
    }
    if !problems.is_empty() {
        out.push_str("\nproblems");
        out.push_str(&problems);
    }
    for st in &run.stale {
        let _ = writeln!(
            out,
            "\nSTALE {} in {}: listed as an expected failure but it did not fail; remove it from the baseline",
            st.check, st.scenario
        );
    }
    if let Some(e) = &run.error {
        let _ = writeln!(out, "\nERROR {e}");
    }
    let c = run.counts();
    // A scenario that never reached its checks (mocks, deployment or launch failed) is an
    // error of its own, counted beside the checks' errors.
    let setup = run
        .scenarios
        .iter()
        .filter(|s| s.verdict == Verdict::Error && s.error.is_some() && s.checks.is_empty())
        .count();
    let setup_text = if setup > 0 {
        format!(" ({setup} scenario(s) failed to set up)")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "\n{} scenario(s){setup_text}, {} check(s): {} passed, {} failed, {} warned, {} informational, {} inconclusive, {} skipped, {} errors, {} expected failures; {:.2}s",
        run.scenarios.len(),
        c.pass + c.fail + c.warn + c.info + c.inconclusive + c.skip + c.error + c.baselined,
        c.pass,
        c.fail,
        c.warn,
        c.info,
        c.inconclusive,
        c.skip,
        c.error,
        c.baselined,
        run.duration_ms / 1000.0
    );
    out
}
