//! The HTML report: one self-contained file (inline CSS and script, no network) with the
//! verdict, the counts, a table by family and every verdict in a table filterable by level,
//! family and verdict; each non-pass row expands to its evidence (rule quote, expected and seen,
//! transcript excerpt, reproduce command).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::findings::{FINDING_VERDICTS, Finding, findings, shared};
use crate::checks::{CheckResult, Verdict};
use crate::page::{STYLE, esc};
use crate::runner::{Counts, RunResult, ScenarioResult};

const SCRIPT: &str = r#"
(function () {
  var boxes = Array.prototype.slice.call(document.querySelectorAll('input[data-filter]'));
  var rows = Array.prototype.slice.call(document.querySelectorAll('#verdicts tbody tr.check'));
  var shown = document.getElementById('shown');
  var none = document.getElementById('none-shown');
  function apply() {
    var on = { level: {}, family: {}, verdict: {} };
    boxes.forEach(function (b) { if (b.checked) { on[b.getAttribute('data-filter')][b.value] = true; } });
    var n = 0;
    rows.forEach(function (r) {
      var show = on.level[r.getAttribute('data-level')] && on.family[r.getAttribute('data-family')]
        && on.verdict[r.getAttribute('data-verdict')];
      r.hidden = !show;
      if (show) { n += 1; }
    });
    shown.textContent = String(n);
    none.hidden = n !== 0;
  }
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
  apply();
})();
"#;

fn run_verdict(run: &RunResult) -> (&'static str, &'static str) {
    match run.exit_code() {
        0 => ("NO FAILURE", "ok"),
        1 => ("NOT CONFORMANT", "bad"),
        _ => ("INCOMPLETE (harness or setup errors)", "incomplete"),
    }
}

fn label(c: &CheckResult) -> String {
    if c.baselined {
        "fail (expected)".into()
    } else {
        c.verdict.as_str().into()
    }
}

fn count_of(c: &Counts, v: Verdict) -> usize {
    match v {
        Verdict::Pass => c.pass,
        Verdict::Fail => c.fail,
        Verdict::Warn => c.warn,
        Verdict::Info => c.info,
        Verdict::Inconclusive => c.inconclusive,
        Verdict::Skip => c.skip,
        Verdict::Error => c.error,
    }
}

/// The rule an entry cites, with its quote: the rule broken by a breach, else the rule held to
/// (a pass) or read (information).
fn cited(out: &mut String, c: &CheckResult, quote: &str) {
    if let Some(id) = &c.rule {
        let how = match c.verdict {
            Verdict::Fail | Verdict::Warn => "rule broken",
            Verdict::Pass => "rule held",
            _ => "rule",
        };
        let _ = write!(
            out,
            "<p class=\"rule\">{how}: <code>{}</code> ({})</p>",
            esc(id),
            c.level.as_str()
        );
    }
    let _ = write!(
        out,
        "<blockquote class=\"quote\">{}</blockquote>",
        esc(quote)
    );
}

/// What an entry observed, one witness per item.
fn witnesses(out: &mut String, c: &CheckResult) {
    let _ = write!(out, "<ul class=\"witnesses\">");
    for w in &c.observed {
        let _ = write!(
            out,
            "<li>{}: <code>{}</code></li>",
            esc(&w.what),
            esc(&w.seen)
        );
    }
    let _ = write!(out, "</ul>");
}

fn evidence(out: &mut String, s: &ScenarioResult, c: &CheckResult) {
    let _ = write!(out, "<details><summary>evidence</summary>");
    if !c.reason.is_empty() {
        let _ = write!(out, "<p class=\"reason\">{}</p>", esc(&c.reason));
    }
    if let Some(q) = &c.quote {
        cited(out, c, q);
    }
    if c.verdict == Verdict::Info && !c.observed.is_empty() {
        witnesses(out, c);
    }
    let _ = write!(out, "<dl class=\"ev\">");
    if !c.refs.is_empty() {
        let _ = write!(out, "<dt>refs</dt><dd>{}</dd>", esc(&c.refs.join("; ")));
    }
    if !c.location.is_empty() {
        let _ = write!(
            out,
            "<dt>location</dt><dd><code>{}</code></dd>",
            esc(&c.location)
        );
    }
    if let Some(m) = &c.mode {
        let _ = write!(out, "<dt>mode</dt><dd>{}</dd>", esc(m));
    }
    for e in &c.evidence {
        let _ = write!(
            out,
            "<dt>evidence</dt><dd>{}{}",
            esc(&e.what),
            e.path
                .as_ref()
                .map(|p| format!(" at <code>{}</code>", esc(p)))
                .unwrap_or_default()
        );
        if let Some(x) = &e.expected {
            let _ = write!(out, "<div>expected: <code>{}</code></div>", esc(x));
        }
        if let Some(x) = &e.seen {
            let _ = write!(
                out,
                "<div>seen: <code class=\"seen\">{}</code></div>",
                esc(x)
            );
        }
        let _ = write!(out, "</dd>");
    }
    let _ = write!(out, "</dl>");
    if !c.transcript.is_empty() {
        let _ = write!(
            out,
            "<div class=\"muted\">transcript</div><pre class=\"transcript\">{}</pre>",
            esc(&c.transcript.join("\n"))
        );
    }
    if !s.reproduce.is_empty() {
        let _ = write!(
            out,
            "<div class=\"muted\">reproduce</div><pre class=\"reproduce\">{}</pre>",
            esc(&s.reproduce)
        );
    }
    let _ = write!(out, "</details>");
}

/// The findings: each fail, warn or error once per cause, with every scenario where it occurred
/// (each one's evidence under it).
fn findings_section(out: &mut String, all: &[Finding<'_>]) {
    if all.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"findings\">\n<h2>Findings</h2>\n<p class=\"muted\">{} finding(s); the same check failing the same way in several scenarios is one finding.</p>",
        all.len()
    );
    for f in all {
        let k = f.first;
        let ids = f.scenario_ids();
        let _ = write!(
            out,
            "<article class=\"finding v-{v}\" data-check=\"{id}\" data-verdict=\"{v}\" data-scenarios=\"{n}\"><h3><span class=\"tag\">{label}</span> {id} ({l}) in {list}</h3><p>{title} — {reason}</p>",
            v = k.verdict.as_str(),
            id = esc(&k.id),
            n = ids.len(),
            label = esc(&label(k)),
            l = k.level.as_str(),
            list = ids
                .iter()
                .map(|i| format!("<code>{}</code>", esc(i)))
                .collect::<Vec<_>>()
                .join(", "),
            title = esc(&k.title),
            reason = esc(&f.reason()),
        );
        if f.members.len() > 1 {
            let _ = write!(out, "<p class=\"one-cause\">one cause, {}</p>", f.spread());
        }
        for (s, c) in &f.members {
            if ids.len() > 1 {
                let _ = write!(
                    out,
                    "<div class=\"muted\"><code>{}</code></div>",
                    esc(&s.id)
                );
            }
            evidence(out, s, c);
        }
        let _ = writeln!(out, "</article>");
    }
    let _ = writeln!(out, "</section>");
}

/// The HTML report of a run.
#[expect(
    clippy::too_many_lines,
    reason = "the page is written top to bottom in document order, as its template reads"
)]
pub fn html(run: &RunResult) -> String {
    let counts = run.counts();
    let families = run.by_family();
    let checks: Vec<(&ScenarioResult, &CheckResult)> = run
        .scenarios
        .iter()
        .flat_map(|s| s.checks.iter().map(move |c| (s, c)))
        .collect();
    let mut out = String::new();
    let (verdict, class) = run_verdict(run);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title}: {t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{title}: <code>{t}</code></h1>\n<p class=\"run-verdict {class}\" data-testid=\"run-verdict\">Verdict: <strong>{verdict}</strong></p>\n<p data-testid=\"level\">{level}</p>\n<p class=\"muted\">{} scenario(s), {} check(s); {:.2}s</p>\n<p class=\"muted\" data-testid=\"kit\">judged by {kit}</p>\n</header>\n",
        run.scenarios.len(),
        checks.len(),
        run.duration_ms / 1000.0,
        t = esc(&run.target),
        title = run.side.report_title(),
        kit = esc(&super::run_kit_line(run)),
        level = esc(&super::level_line(run)),
    );
    if let Some(e) = &run.error {
        let _ = writeln!(
            out,
            "<section id=\"run-error\"><h2>Run error</h2><pre>{}</pre></section>",
            esc(e)
        );
    }

    // Counts.
    let _ = writeln!(
        out,
        "<section id=\"counts\">\n<h2>Counts</h2>\n<ul class=\"counts\">"
    );
    for v in Verdict::ALL {
        let _ = writeln!(
            out,
            "<li class=\"c-{v}\"><span class=\"n\" data-count=\"{v}\">{}</span> {v}</li>",
            count_of(&counts, v),
            v = v.as_str()
        );
    }
    let _ = writeln!(
        out,
        "<li class=\"c-baselined\"><span class=\"n\" data-count=\"baselined\">{}</span> expected failure(s)</li>\n</ul>\n</section>",
        counts.baselined
    );

    // By family.
    let _ = write!(
        out,
        "<section id=\"families\">\n<h2>By check family</h2>\n<table>\n<thead><tr><th>family</th>"
    );
    for v in Verdict::ALL {
        let _ = write!(out, "<th class=\"n\">{}</th>", v.as_str());
    }
    let _ = writeln!(
        out,
        "<th class=\"n\">expected failure</th></tr></thead>\n<tbody>"
    );
    for (f, c) in &families {
        let _ = write!(
            out,
            "<tr data-family=\"{f}\"><td>{}</td>",
            esc(f),
            f = esc(f)
        );
        for v in Verdict::ALL {
            let _ = write!(out, "<td class=\"n\">{}</td>", count_of(c, v));
        }
        let _ = writeln!(out, "<td class=\"n\">{}</td></tr>", c.baselined);
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");

    // Verdicts with filters.
    let mut by_verdict: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, c) in &checks {
        *by_verdict.entry(c.verdict.as_str()).or_default() += 1;
    }
    let all = findings(run, FINDING_VERDICTS);
    findings_section(&mut out, &all);
    let _ = writeln!(
        out,
        "<section id=\"checks\">\n<h2>Verdicts</h2>\n<form id=\"filters\" onsubmit=\"return false\">"
    );
    let _ = write!(out, "<fieldset><legend>verdict</legend>");
    for v in Verdict::ALL {
        let _ = write!(
            out,
            "<label><input type=\"checkbox\" data-filter=\"verdict\" value=\"{v}\" checked> {v} ({})</label>",
            by_verdict.get(v.as_str()).copied().unwrap_or(0),
            v = v.as_str()
        );
    }
    let _ = write!(out, "</fieldset>\n<fieldset><legend>level</legend>");
    for l in ["MUST", "SHOULD", "MAY", "INFO"] {
        let _ = write!(
            out,
            "<label><input type=\"checkbox\" data-filter=\"level\" value=\"{l}\" checked> {l}</label>"
        );
    }
    let _ = write!(out, "</fieldset>\n<fieldset><legend>family</legend>");
    for f in families.keys() {
        let _ = write!(
            out,
            "<label><input type=\"checkbox\" data-filter=\"family\" value=\"{f}\" checked> {f}</label>",
            f = esc(f)
        );
    }
    let _ = writeln!(out, "</fieldset>\n</form>");
    let _ = writeln!(
        out,
        "<p><span id=\"shown\" data-testid=\"shown\">{n}</span> of <span data-testid=\"total\">{n}</span> check(s) shown<span id=\"none-shown\" hidden> — no verdict matches the filters</span></p>",
        n = checks.len()
    );
    let _ = writeln!(
        out,
        "<table id=\"verdicts\">\n<thead><tr><th>scenario</th><th>check</th><th>level</th><th>verdict</th><th>what</th><th>evidence</th></tr></thead>\n<tbody>"
    );
    for (s, c) in &checks {
        let _ = write!(
            out,
            "<tr class=\"check v-{v}{b}\" data-verdict=\"{v}\" data-level=\"{l}\" data-family=\"{f}\" data-scenario=\"{sid}\" data-check=\"{id}\"><td><code>{sid}</code></td><td>{id}</td><td>{l}</td><td><span class=\"tag\">{label}</span></td><td>{title}</td><td>",
            v = c.verdict.as_str(),
            b = if c.baselined { " baselined" } else { "" },
            l = c.level.as_str(),
            f = esc(crate::catalog::family_of(&c.id)),
            sid = esc(&s.id),
            id = esc(&c.id),
            label = esc(&label(c)),
            title = esc(&c.title),
        );
        if let Some(f) = shared(&all, s, c) {
            let _ = write!(
                out,
                "<div class=\"muted one-cause\">one cause, {}: {}</div>",
                f.spread(),
                esc(&f.scenario_ids().join(", "))
            );
        }
        if c.verdict != Verdict::Pass {
            evidence(&mut out, s, c);
        } else if !c.observed.is_empty() {
            // What the pass observed, on demand.
            let _ = write!(
                out,
                "<details class=\"observed\"><summary>observed{}</summary>",
                if c.premise { " (premise)" } else { "" }
            );
            if let Some(q) = &c.quote {
                cited(&mut out, c, q);
            }
            witnesses(&mut out, c);
            let _ = write!(out, "</details>");
        }
        let _ = writeln!(out, "</td></tr>");
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");

    // Harness and setup errors.
    let errored: Vec<&ScenarioResult> =
        run.scenarios.iter().filter(|s| s.error.is_some()).collect();
    if !errored.is_empty() {
        let _ = writeln!(
            out,
            "<section id=\"harness-errors\">\n<h2>Harness and setup errors</h2>"
        );
        for s in errored {
            let _ = write!(
                out,
                "<h3><code>{}</code></h3>\n<pre class=\"error\">{}</pre>\n<div class=\"muted\">file: <code>{}</code></div>\n",
                esc(&s.id),
                esc(s.error.as_deref().unwrap_or_default()),
                esc(&s.file)
            );
            if let Some(t) = &s.output_tail {
                let _ = writeln!(
                    out,
                    "<details><summary>implementation output</summary><pre>{}</pre></details>",
                    esc(t)
                );
            }
            if !s.reproduce.is_empty() {
                let _ = writeln!(
                    out,
                    "<div class=\"muted\">reproduce</div><pre class=\"reproduce\">{}</pre>",
                    esc(&s.reproduce)
                );
            }
        }
        let _ = writeln!(out, "</section>");
    }

    // Scenarios.
    let _ = writeln!(
        out,
        "<section id=\"scenarios\">\n<h2>Scenarios</h2>\n<table>\n<thead><tr><th>scenario</th><th>title</th><th>file</th><th>verdict</th><th class=\"n\">checks</th><th class=\"n\">time</th></tr></thead>\n<tbody>"
    );
    let pallas = super::claims_a_pallas(&run.claims);
    for s in &run.scenarios {
        let not_judged = super::not_judged(s, pallas);
        let _ = writeln!(
            out,
            "<tr class=\"v-{v}\"><td><code>{}</code></td><td>{}{}</td><td><code>{}</code></td><td><span class=\"tag\">{v}</span></td><td class=\"n\">{}</td><td class=\"n\">{:.2}s</td></tr>",
            esc(&s.id),
            esc(&s.title),
            match &s.skipped {
                Some(w) => format!(" <span class=\"muted\">(skipped: {})</span>", esc(w)),
                None => match &not_judged {
                    Some(why) => format!(" <span class=\"muted\">({})</span>", esc(why)),
                    None => String::new(),
                },
            },
            esc(&s.file),
            s.checks.len(),
            s.duration_ms / 1000.0,
            v = s.verdict.as_str(),
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");

    if !run.stale.is_empty() {
        let _ = writeln!(
            out,
            "<section id=\"stale\">\n<h2>Stale baseline entries</h2>\n<ul>"
        );
        for st in &run.stale {
            let _ = writeln!(
                out,
                "<li><code>{}</code> in <code>{}</code> is listed as an expected failure but did not fail</li>",
                esc(&st.check),
                esc(&st.scenario)
            );
        }
        let _ = writeln!(out, "</ul>\n</section>");
    }
    let _ = writeln!(out, "<script>{SCRIPT}</script>\n</body>\n</html>");
    out
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn markup_in_observed_values_is_escaped() {
        assert_eq!(
            esc("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }
}
