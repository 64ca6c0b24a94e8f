//! The Markdown certification report.

use std::fmt::Write;

use crate::checks::Verdict;
use crate::runner::RunResult;

fn icon(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "**FAIL**",
        Verdict::Warn => "warn",
        Verdict::Skip => "skip",
        Verdict::Info => "info (MAY)",
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
pub fn markdown(run: &RunResult) -> String {
    let c = run.counts();
    let mut out = String::new();
    let verdict = match run.exit_code() {
        0 => "CONFORMANT",
        1 => "NOT CONFORMANT",
        _ => "INCOMPLETE (harness or setup errors)",
    };
    let _ = writeln!(out, "# Pallas conformance report: `{}`\n", run.target);
    let _ = writeln!(out, "**Verdict: {verdict}**\n");
    let _ = writeln!(
        out,
        "{} scenario(s); checks: {} pass, {} fail, {} warn, {} informational (MAY), {} inconclusive, {} skip, {} error, {} expected failure(s).\n",
        run.scenarios.len(),
        c.pass,
        c.fail,
        c.warn,
        c.info,
        c.inconclusive,
        c.skip,
        c.error,
        c.baselined
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
    for s in &run.scenarios {
        let ids: Vec<String> = s
            .checks
            .iter()
            .map(|k| format!("{} {}", k.id, check_icon(k)))
            .collect();
        let _ = writeln!(
            out,
            "| `{}` {} | {} | {} |",
            s.id,
            s.title.replace('|', "\\|"),
            icon(s.verdict),
            ids.join(", ")
        );
    }
    let mut failures = String::new();
    for s in &run.scenarios {
        if let Some(e) = &s.error {
            let _ = writeln!(failures, "\n### `{}`: harness error\n\n{}\n", s.id, e);
        }
        for k in s
            .checks
            .iter()
            .filter(|k| matches!(k.verdict, Verdict::Fail | Verdict::Error | Verdict::Warn))
        {
            let _ = writeln!(
                failures,
                "\n### {} {} in `{}` ({})\n\n{} — {}\n\n- location: `{}`\n- refs: {}",
                check_icon(k),
                k.id,
                s.id,
                k.level.as_str(),
                k.title,
                k.reason,
                k.location,
                k.refs.join("; ")
            );
            for e in &k.evidence {
                let _ = writeln!(
                    failures,
                    "- evidence: {} — expected `{}`, seen `{}`",
                    e.what,
                    e.expected.as_deref().unwrap_or("-"),
                    e.seen.as_deref().unwrap_or("-").replace('`', "'")
                );
            }
        }
    }
    if !failures.is_empty() {
        let _ = writeln!(out, "\n## Findings\n{failures}");
    }
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
