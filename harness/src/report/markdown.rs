//! The Markdown certification report.

use std::fmt::Write;

use crate::checks::{CheckResult, Verdict};
use crate::runner::RunResult;

fn icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "**FAIL**",
        Verdict::Warn => "warn",
        Verdict::Skip => "skip",
        Verdict::Info => "info",
        Verdict::Inconclusive => "inconclusive",
        Verdict::Error => "**ERROR**",
    }
}

fn check_icon(k: &crate::checks::CheckResult) -> &'static str {
    if k.baselined {
        "expected failure"
    } else {
        icon(k.verdict)
    }
}

/// A certification report: verdict, totals, table by family, per-scenario results, failures
/// with evidence.
#[expect(
    clippy::too_many_lines,
    reason = "the report is written top to bottom in document order, section by section"
)]
pub fn markdown(run: &RunResult) -> String {
    let c = run.counts();
    let mut out = String::new();
    let verdict = match run.exit_code() {
        0 => "NO FAILURE",
        1 => "NOT CONFORMANT",
        _ => "INCOMPLETE (harness or setup errors)",
    };
    let _ = writeln!(out, "# {}: `{}`\n", run.side.report_title(), run.target);
    let _ = writeln!(out, "**Verdict: {verdict}**; {}\n", super::level_line(run));
    let _ = writeln!(out, "Judged by {}.\n", super::run_kit_line(run));
    let _ = writeln!(
        out,
        "{} scenario(s); checks: {} pass, {} fail, {} warn, {} informational, {} inconclusive, {} skip, {} error, {} expected failure(s); {} scenario premise(s) held (not counted as passes).\n",
        run.scenarios.len(),
        c.pass,
        c.fail,
        c.warn,
        c.info,
        c.inconclusive,
        c.skip,
        c.error,
        c.baselined,
        c.premises
    );
    let _ = writeln!(
        out,
        "## By check family\n\n| family | pass | fail | warn | info | inconclusive | skip | error |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (f, c) in run.by_family() {
        let _ = writeln!(
            out,
            "| {f} | {} | {} | {} | {} | {} | {} | {} |",
            c.pass, c.fail, c.warn, c.info, c.inconclusive, c.skip, c.error
        );
    }
    let _ = writeln!(
        out,
        "\n## Scenarios\n\n| scenario | verdict | checks |\n|---|---|---|"
    );
    let pallas = super::claims_a_pallas(&run.claims);
    let mut shown_not_judged = false;
    for s in &run.scenarios {
        let ids: Vec<String> = s
            .checks
            .iter()
            .map(|k| format!("{} {}", k.id, check_icon(k)))
            .collect();
        let pallas_only = super::not_judged(s, pallas).is_some();
        shown_not_judged |= pallas_only;
        let _ = writeln!(
            out,
            "| `{}` {} | {}{} | {} |",
            s.id,
            s.title.replace('|', "\\|"),
            icon(s.verdict),
            if pallas_only { " (binds a Pallas)" } else { "" },
            ids.join(", ")
        );
    }
    if shown_not_judged {
        let _ = writeln!(
            out,
            "\n*skip (binds a Pallas)*: the scenario ran, and every entry it was written to judge binds a Pallas alone (seed 000's and 001's Pallas wording), which this target does not claim to be: their passes are shown, not counted for the scenario (a failure among them would still count); the automatic MCP entries beside them are judged as in every scenario. The JSON report gives each such scenario's entries in its `not_judged`."
        );
    }
    let mut failures = String::new();
    // One cause, one finding: the same check failing for the same reason in several scenarios
    // is listed once, with every scenario (and each one's evidence).
    // (first result, reason, members, scenario ids once each, how far it reaches)
    type Group<'a> = (
        &'a crate::checks::CheckResult,
        String,
        Vec<(&'a str, &'a crate::checks::CheckResult)>,
        Vec<String>,
        String,
    );
    let groups: Vec<Group<'_>> = super::findings(run, super::FINDING_VERDICTS)
        .into_iter()
        .map(|f| {
            let members = f.members.iter().map(|(s, c)| (s.id.as_str(), *c)).collect();
            let ids: Vec<String> = f
                .scenario_ids()
                .iter()
                .map(|id| format!("`{id}`"))
                .collect();
            (f.first, f.reason(), members, ids, f.spread())
        })
        .collect();
    for (k, reason, members, scenarios, spread) in &groups {
        let _ = writeln!(
            failures,
            "\n### {} {} in {} ({})\n\n{} — {}\n",
            check_icon(k),
            k.id,
            scenarios.join(", "),
            k.level.as_str(),
            k.title,
            reason,
        );
        if members.len() > 1 {
            let _ = writeln!(failures, "- one cause, {spread}: {}", scenarios.join(", "));
        }
        for (id, m) in members.iter().filter(|(_, m)| !m.location.is_empty()) {
            let prefix = if members.len() > 1 {
                format!("`{id}`: ")
            } else {
                String::new()
            };
            let _ = writeln!(failures, "- {prefix}location: `{}`", m.location);
        }
        if let Some(q) = k.cited_rule() {
            let _ = writeln!(failures, "- rule: {q}");
        }
        let _ = writeln!(failures, "- refs: {}", k.refs.join("; "));
        for (id, m) in members {
            for e in &m.evidence {
                let prefix = if members.len() > 1 {
                    format!("`{id}`: ")
                } else {
                    String::new()
                };
                let _ = writeln!(
                    failures,
                    "- evidence: {prefix}{} — expected `{}`, seen `{}`",
                    e.what,
                    e.expected.as_deref().unwrap_or("-"),
                    e.seen.as_deref().unwrap_or("-").replace('`', "'")
                );
            }
        }
    }
    for s in &run.scenarios {
        if let Some(e) = &s.error {
            let _ = writeln!(failures, "\n### `{}`: harness error\n\n{}\n", s.id, e);
        }
    }
    if !failures.is_empty() {
        let _ = writeln!(out, "\n## Findings\n{failures}");
    }
    if !run.side.is_server() {
        not_judged(&mut out, run);
    }
    observed(&mut out, run);
    if !run.stale.is_empty() {
        let _ = writeln!(out, "\n## Stale baseline entries\n");
        for s in &run.stale {
            let _ = writeln!(
                out,
                "- `{}` in `{}` is listed as an expected failure but passed",
                s.check, s.scenario
            );
        }
    }
    out
}

/// A client report's entries that judged nothing, each with why: not applicable to what was
/// seen, or a promise the client does not claim. (A bridge's report has hundreds, one reason
/// each per capability: its scenarios table and JSON carry them.)
fn not_judged(out: &mut String, run: &RunResult) {
    let skipped: Vec<(&str, &crate::checks::CheckResult)> = run
        .scenarios
        .iter()
        .flat_map(|s| s.checks.iter().map(move |k| (s.id.as_str(), k)))
        .filter(|(_, k)| k.verdict == Verdict::Skip)
        .collect();
    if skipped.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "
## Not judged
"
    );
    for (id, k) in skipped {
        let _ = writeln!(
            out,
            "- {} in `{id}`: {}",
            k.id,
            k.reason.replace('|', "\\|")
        );
    }
}

/// What each pass observed: per scenario, folded, every pass with its witnesses (the observed
/// value that could have broken the rule).
fn observed(out: &mut String, run: &RunResult) {
    // A pass, or information that was seen.
    let shown = |k: &CheckResult| {
        k.verdict == Verdict::Pass || (k.verdict == Verdict::Info && !k.observed.is_empty())
    };
    let count = |s: &crate::runner::ScenarioResult, v: Verdict| {
        s.checks
            .iter()
            .filter(|k| k.verdict == v && shown(k))
            .count()
    };
    let any = |s: &crate::runner::ScenarioResult| s.checks.iter().any(&shown);
    if !run.scenarios.iter().any(any) {
        return;
    }
    let _ = writeln!(out, "\n## What each pass observed\n");
    for s in run.scenarios.iter().filter(|s| any(s)) {
        let info = match count(s, Verdict::Info) {
            0 => String::new(),
            n => format!(", {n} informational"),
        };
        let _ = writeln!(
            out,
            "<details><summary><code>{}</code>: {} pass(es){info}</summary>\n",
            s.id,
            count(s, Verdict::Pass)
        );
        for k in s.checks.iter().filter(|k| shown(k)) {
            let kind = match (k.premise, k.verdict) {
                (true, _) => " (premise)".to_owned(),
                (_, Verdict::Info) => " (information, not judged)".to_owned(),
                _ => k
                    .rule
                    .as_deref()
                    .map(|r| format!(" (rule `{r}`, {})", k.level.as_str()))
                    .unwrap_or_default(),
            };
            let _ = writeln!(out, "- {}{kind} — {}", k.id, k.title.replace('|', "\\|"));
            for w in &k.observed {
                let _ = writeln!(
                    out,
                    "  - {}: `{}`",
                    w.what,
                    w.seen.replace('`', "'").replace('\n', " ")
                );
            }
        }
        let _ = writeln!(out, "\n</details>\n");
    }
}
