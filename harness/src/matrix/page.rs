//! The matrix page: one self-contained HTML file (the reports' inline stylesheet, no script, no
//! network) rendered from a [`Matrix`] alone: the implementations with their levels and counts,
//! the levels table, the matrix (a row per check, grouped by family; a column per
//! implementation; each cell's title the rule's level and quote, its link the entries below) and
//! every cell's entries as the reports have them.

use std::fmt::Write;

use super::levels::ConformanceLevel;
use super::{Cell, Matrix, Row};
use crate::checks::Verdict;
use crate::page::{STYLE, esc};
use crate::runner::Counts;

const MATRIX_STYLE: &str = r"
body { max-width: none; }
#matrix-table td.cell, #matrix-table th.impl { text-align: center; white-space: nowrap; }
#matrix-table tr.family th { background: #e9ecf2; }
#matrix-table td.cell a { text-decoration: none; }
#matrix-table td.absent { color: var(--skip); text-align: center; }
.lvl-full { color: var(--pass); } .lvl-core { color: #4d7c0f; }
.lvl-not-compliant { color: var(--fail); } .lvl-not-scored { color: var(--skip); }
.lvl { font-weight: 600; }
#implementations td.reason { min-width: 26rem; }
section.cell { border-top: 1px solid var(--line); margin-top: .8rem; }
section.cell h3 { font-size: 1rem; margin: .5rem 0; }
";

/// The verdict order of the counts columns.
const COLUMNS: [Verdict; 7] = [
    Verdict::Pass,
    Verdict::Fail,
    Verdict::Warn,
    Verdict::Info,
    Verdict::Inconclusive,
    Verdict::Error,
    Verdict::Skip,
];

fn count_of(c: &Counts, v: Verdict) -> usize {
    match v {
        Verdict::Pass => c.pass,
        Verdict::Fail => c.fail + c.baselined,
        Verdict::Warn => c.warn,
        Verdict::Info => c.info,
        Verdict::Inconclusive => c.inconclusive,
        Verdict::Skip => c.skip,
        Verdict::Error => c.error,
    }
}

fn level_class(level: ConformanceLevel) -> String {
    format!("lvl lvl-{}", level.as_str().replace(' ', "-"))
}

/// The cell's tooltip: the check, its rule's level, its title and the verbatim rule.
fn tooltip(row: &Row, cell: &Cell) -> String {
    let mut t = format!("{} ({}): {}", row.check, row.level.as_str(), row.title);
    match &row.quote {
        Some(q) => {
            let _ = write!(t, "\n“{q}”");
        }
        None => t.push_str("\n(scenario assertions: no catalogued rule)"),
    }
    let _ = write!(
        t,
        "\n{} entr{}, {} {}",
        cell.total,
        if cell.total == 1 { "y" } else { "ies" },
        cell.count,
        cell.verdict.as_str()
    );
    t
}

fn implementations(out: &mut String, m: &Matrix) {
    let _ = write!(
        out,
        "<section id=\"implementations\">\n<h2>Implementations</h2>\n<table>\n<thead><tr><th>implementation</th><th>MCP agent bridge</th><th>why</th><th>Pallas</th><th>why</th><th>kit (commit)</th><th>suite</th><th>date</th>"
    );
    for v in COLUMNS {
        let _ = write!(out, "<th class=\"n\">{}</th>", v.as_str());
    }
    if m.downstream.is_some() {
        let _ = write!(out, "<th>downstream client</th>");
    }
    let _ = writeln!(out, "<th>report</th><th>badge</th></tr></thead>\n<tbody>");
    for i in &m.implementations {
        let _ = write!(
            out,
            "<tr data-implementation=\"{n}\" data-level=\"{l}\" data-pallas-level=\"{pl}\"><td><strong>{n}</strong></td><td><span class=\"{lc}\" data-testid=\"level\">{l}</span></td><td class=\"reason\">{why}</td><td><span class=\"{plc}\" data-testid=\"pallas-level\">{pl}</span></td><td class=\"reason\">{pwhy}</td><td>{kit} <code>{commit}</code></td><td><code>{suite}</code></td><td>{date}</td>",
            n = esc(&i.name),
            l = i.score.level.as_str(),
            lc = level_class(i.score.level),
            why = esc(&i.score.reason),
            pl = i.pallas.level.as_str(),
            plc = level_class(i.pallas.level),
            pwhy = esc(&i.pallas.reason),
            kit = esc(&i.kit_version),
            commit = esc(i.kit_commit.as_deref().unwrap_or("—")),
            suite = esc(i.suite_short().unwrap_or("—")),
            date = esc(i.date.as_deref().unwrap_or("—")),
        );
        for v in COLUMNS {
            let _ = write!(
                out,
                "<td class=\"n\" data-count=\"{v}\">{}</td>",
                count_of(&i.counts, v),
                v = v.as_str()
            );
        }
        if let Some(d) = &m.downstream {
            let shown = d
                .targets
                .get(&i.name)
                .map_or_else(|| "not driven".to_owned(), super::downstream::Target::label);
            let _ = write!(
                out,
                "<td data-testid=\"downstream\"><a href=\"#downstream\">{}</a></td>",
                esc(&shown)
            );
        }
        let _ = writeln!(
            out,
            "<td><code>{}</code></td><td><code>{}</code><br><code>{}</code></td></tr>",
            esc(&i.report),
            esc(&i.badge),
            esc(&i.pallas_badge)
        );
    }
    let _ = writeln!(
        out,
        "</tbody>\n</table>\n<p class=\"muted\">Two levels: as an MCP agent bridge, over the checks of the generic contract (no capability, or one any bridge may have), and as a Pallas, over the checks only a Pallas has (registry, health, metrics, Pallas config and logging, preflight, single-agent mode, seed 000's progress wording). Skipped entries (a capability the profile does not claim) are not counted for a level; the <em>skip</em> column shows how many there are.</p>\n</section>"
    );
}

/// The bridges' downstream side: the official suite's client scenarios driven through each
/// bridge (every bridge of the results, the reference among them), and why the others are not.
fn downstream(out: &mut String, d: &super::downstream::Downstream) {
    let _ = write!(
        out,
        "<section id=\"downstream\">\n<h2>Downstream side: the official suite's client scenarios</h2>\n<p class=\"muted\">Every bridge is also an MCP client of the servers behind it. {} in client mode started its own server for each scenario; the bridge, started through its target profile with that server as its agent's one downstream server, got one message, and the kit's mock model made the tool call the scenario needs. The results are the suite's (<code>.ci/certify-downstream</code>).</p>\n<table id=\"downstream-table\">\n<thead><tr><th>bridge</th>",
        esc(&d.suite)
    );
    for s in d.driven.keys() {
        let _ = write!(out, "<th><code>{}</code></th>", esc(s));
    }
    let _ = writeln!(out, "</tr></thead>\n<tbody>");
    for (name, t) in &d.targets {
        let _ = write!(
            out,
            "<tr data-bridge=\"{}\"><td><strong>{}</strong></td>",
            esc(name),
            esc(name)
        );
        for s in d.driven.keys() {
            let r = t.results.get(s).map_or("not run", String::as_str);
            let checks = t.checks.get(s).map(|c| c.join(", ")).unwrap_or_default();
            let _ = write!(
                out,
                "<td class=\"v-{r}\" data-scenario=\"{}\" title=\"{}\"><span class=\"tag\">{r}</span></td>",
                esc(s),
                esc(&checks),
                r = esc(r)
            );
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(
        out,
        "</tbody>\n</table>\n<details><summary>{} client scenario(s) not driven through a bridge</summary>\n<ul>",
        d.not_driven.len()
    );
    for (s, why) in &d.not_driven {
        let _ = writeln!(out, "<li><code>{}</code>: {}</li>", esc(s), esc(why));
    }
    let _ = writeln!(out, "</ul>\n</details>\n</section>");
}

/// Each implementation's claimed and declared capabilities ([`super::capabilities`]).
fn capabilities(out: &mut String, m: &Matrix) {
    let _ = writeln!(
        out,
        "<section id=\"capabilities\">\n<h2>Capabilities: claimed and declared</h2>\n<p class=\"muted\">What each profile claims beside what the implementation showed on the wire: an <code>Mcp-Session-Id</code> on <code>initialize</code> (sessions), a <code>notifications/progress</code> with the token of a call carrying a <code>progressToken</code>, on the call's stream before its answer (progress), <code>prompts</code> among the <code>initialize</code> or <code>server/discover</code> capabilities (history, where claimed). Other claims have no sign on the wire: their checks alone tell. A claim never seen in this run is the profile's claim not shown, not a breach of MCP, which lets a server send no progress and issue no session. What the implementation showed and the profile does not claim was not tested.</p>\n<table>\n<thead><tr><th>implementation</th><th>capability</th><th>standing</th><th>seen on the wire</th><th class=\"n\">MUST entries failed / judged</th><th>checks with a failing MUST entry</th></tr></thead>\n<tbody>"
    );
    for i in &m.implementations {
        let Some(rows) = &i.capabilities else {
            let _ = writeln!(
                out,
                "<tr data-capabilities-of=\"{n}\"><td><strong>{n}</strong></td><td colspan=\"4\" class=\"muted\">its report records no claims or declarations (made by an older kit)</td></tr>",
                n = esc(&i.name)
            );
            continue;
        };
        for r in rows {
            let _ = writeln!(
                out,
                "<tr data-capabilities-of=\"{n}\" data-capability=\"{c}\" data-standing=\"{st}\"><td><strong>{n}</strong></td><td><code>{c}</code></td><td>{st}</td><td>{seen}</td><td class=\"n\">{f} / {j}</td><td>{failed}</td></tr>",
                n = esc(&i.name),
                c = esc(&r.capability),
                st = r.standing.label(),
                seen = if r.seen.is_empty() {
                    "—".to_owned()
                } else {
                    esc(&r.seen)
                },
                f = r.musts_failed,
                j = r.musts_judged,
                failed = esc(&r.failed_checks.join(", ")),
            );
        }
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");
}

fn levels(out: &mut String, m: &Matrix) {
    let _ = writeln!(
        out,
        "<section id=\"levels\">\n<h2>Levels</h2>\n<p class=\"muted\">Tried in this order; the first whose rule holds is the level. An entry is judged when its verdict is pass, fail or warn. MAY and INFO entries never raise or lower a level.</p>\n<table>\n<thead><tr><th>level</th><th>when</th></tr></thead>\n<tbody>"
    );
    for d in &m.levels {
        let _ = writeln!(
            out,
            "<tr><td class=\"lvl lvl-{}\">{}</td><td>{}</td></tr>",
            d.level.as_str().replace(' ', "-"),
            d.level.as_str(),
            esc(d.rule)
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");
}

fn table(out: &mut String, m: &Matrix) {
    let _ = write!(
        out,
        "<section id=\"matrix\">\n<h2>Matrix</h2>\n<table id=\"matrix-table\">\n<thead><tr><th>check</th><th>level</th>"
    );
    for i in &m.implementations {
        let _ = write!(
            out,
            "<th class=\"impl\" data-implementation=\"{n}\">{n}<br><span class=\"{lc}\">{l}</span><br><span class=\"{plc}\">Pallas: {pl}</span></th>",
            n = esc(&i.name),
            lc = level_class(i.score.level),
            l = i.score.level.as_str(),
            plc = level_class(i.pallas.level),
            pl = i.pallas.level.as_str()
        );
    }
    let _ = writeln!(out, "</tr></thead>");
    let width = m.implementations.len() + 2;
    for f in &m.families {
        let _ = writeln!(
            out,
            "<tbody data-family=\"{n}\"><tr class=\"family\"><th colspan=\"{width}\">{n}</th></tr>",
            n = esc(&f.name)
        );
        for row in &f.rows {
            let _ = write!(
                out,
                "<tr data-check=\"{id}\"><td><code>{id}</code> {t}</td><td>{l}</td>",
                id = esc(&row.check),
                t = esc(&row.title),
                l = row.level.as_str()
            );
            for i in &m.implementations {
                match row.cells.get(&i.name) {
                    Some(c) => {
                        let _ = write!(
                            out,
                            "<td class=\"cell v-{v}\" data-implementation=\"{n}\" data-verdict=\"{v}\"><a href=\"#{a}\" title=\"{tip}\"><span class=\"tag\">{label}</span></a></td>",
                            v = c.verdict.as_str(),
                            n = esc(&i.name),
                            a = esc(&c.anchor),
                            tip = esc(&tooltip(row, c)),
                            label = esc(&c.label)
                        );
                    }
                    None => {
                        let _ = write!(
                            out,
                            "<td class=\"absent\" data-implementation=\"{}\" title=\"no entry in this report\">—</td>",
                            esc(&i.name)
                        );
                    }
                }
            }
            let _ = writeln!(out, "</tr>");
        }
        let _ = writeln!(out, "</tbody>");
    }
    let _ = writeln!(out, "</table>\n</section>");
}

fn details(out: &mut String, m: &Matrix) {
    let _ = writeln!(
        out,
        "<section id=\"details\">\n<h2>Entries</h2>\n<p class=\"muted\">Every entry of every cell, as its report has it.</p>"
    );
    for row in m.families.iter().flat_map(|f| &f.rows) {
        for i in &m.implementations {
            let Some(c) = row.cells.get(&i.name) else {
                continue;
            };
            let _ = writeln!(
                out,
                "<section class=\"cell\" id=\"{a}\" data-check=\"{id}\" data-implementation=\"{n}\" data-verdict=\"{v}\">\n<h3><code>{id}</code> on {n}: <span class=\"v-{v}\"><span class=\"tag\">{label}</span></span></h3>",
                a = esc(&c.anchor),
                id = esc(&row.check),
                n = esc(&i.name),
                v = c.verdict.as_str(),
                label = esc(&c.label)
            );
            if c.entries.iter().all(|e| e.verdict == Verdict::Skip) {
                // Entries that were not run: each reason once, with the scenarios it holds in.
                let mut by_reason: std::collections::BTreeMap<&str, Vec<&str>> =
                    std::collections::BTreeMap::new();
                for e in &c.entries {
                    let scenarios = by_reason.entry(e.reason.as_str()).or_default();
                    if !scenarios.contains(&e.scenario.as_str()) {
                        scenarios.push(e.scenario.as_str());
                    }
                }
                for (reason, scenarios) in by_reason {
                    let _ = writeln!(
                        out,
                        "<p class=\"v-skip\">not run: {r} <span class=\"muted\">(<code>{s}</code>)</span></p>",
                        r = esc(reason),
                        s = esc(&scenarios.join(", "))
                    );
                }
                let _ = writeln!(out, "</section>");
                continue;
            }
            let _ = writeln!(
                out,
                "<table>\n<thead><tr><th>scenario</th><th>entry</th><th>level</th><th>verdict</th><th>reason and evidence</th></tr></thead>\n<tbody>"
            );
            for e in &c.entries {
                let _ = write!(
                    out,
                    "<tr class=\"v-{v}\"><td><code>{sid}</code><div class=\"muted\">{st}</div></td><td>{t}{loc}</td><td>{l}</td><td><span class=\"tag\">{v}{b}</span></td><td>",
                    v = e.verdict.as_str(),
                    sid = esc(&e.scenario),
                    st = esc(&e.scenario_title),
                    t = esc(&e.title),
                    loc = if e.location.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " <span class=\"muted\"><code>{}</code></span>",
                            esc(&e.location)
                        )
                    },
                    l = e.level.as_str(),
                    b = if e.baselined { " (baselined)" } else { "" },
                );
                if !e.reason.is_empty() {
                    let _ = write!(out, "<div class=\"reason\">{}</div>", esc(&e.reason));
                }
                if let Some(r) = &e.rule {
                    let _ = write!(
                        out,
                        "<div class=\"muted\">rule <code>{}</code></div>",
                        esc(r)
                    );
                }
                for ev in &e.evidence {
                    let _ = write!(out, "<div class=\"evidence\">{}", esc(&ev.what));
                    if let Some(x) = &ev.expected {
                        let _ = write!(out, "<div>expected: <code>{}</code></div>", esc(x));
                    }
                    if let Some(x) = &ev.seen {
                        let _ = write!(out, "<div>seen: <code>{}</code></div>", esc(x));
                    }
                    let _ = write!(out, "</div>");
                }
                let _ = writeln!(out, "</td></tr>");
            }
            let _ = writeln!(out, "</tbody>\n</table>\n</section>");
        }
    }
    let _ = writeln!(out, "</section>");
}

/// The Daedalus-side clients: each client's level, counts and report, and the client checks ×
/// the clients (each cell's tooltip the rule and the entries' verdicts; the entries are in the
/// clients' reports).
fn clients(out: &mut String, c: &Matrix) {
    let _ = write!(
        out,
        "<section id=\"clients\">\n<h2>Daedalus-side clients</h2>\n<p class=\"muted\">MCP clients of a Pallas, certified by <code>pallas-conformance daedalus</code> against the mock Pallas: what each sent, judged by the client checks (seed 000's Daedalus requirements, MCP's client rules). The level is computed as above over the client checks' entries.</p>\n<table>\n<thead><tr><th>client</th><th>level</th><th>why</th><th>kit (commit)</th>"
    );
    for v in COLUMNS {
        let _ = write!(out, "<th class=\"n\">{}</th>", v.as_str());
    }
    let _ = writeln!(out, "<th>report</th><th>badge</th></tr></thead>\n<tbody>");
    for i in &c.implementations {
        let _ = write!(
            out,
            "<tr data-client=\"{n}\" data-client-level=\"{l}\"><td><strong>{n}</strong></td><td><span class=\"{lc}\">{l}</span></td><td class=\"reason\">{why}</td><td>{kit} <code>{commit}</code></td>",
            n = esc(&i.name),
            l = i.score.level.as_str(),
            lc = level_class(i.score.level),
            why = esc(&i.score.reason),
            kit = esc(&i.kit_version),
            commit = esc(i.kit_commit.as_deref().unwrap_or("—")),
        );
        for v in COLUMNS {
            let _ = write!(out, "<td class=\"n\">{}</td>", count_of(&i.counts, v));
        }
        let _ = writeln!(
            out,
            "<td><code>clients/{}</code></td><td><code>{}</code></td></tr>",
            esc(&i.report),
            esc(&i.badge)
        );
    }
    let _ = write!(
        out,
        "</tbody>\n</table>\n<table id=\"client-matrix-table\">\n<thead><tr><th>check</th><th>level</th>"
    );
    for i in &c.implementations {
        let _ = write!(out, "<th>{}</th>", esc(&i.name));
    }
    let _ = writeln!(out, "</tr></thead>\n<tbody>");
    for row in c.families.iter().flat_map(|f| &f.rows) {
        let _ = write!(
            out,
            "<tr data-client-check=\"{id}\"><td><code>{id}</code> {t}</td><td>{l}</td>",
            id = esc(&row.check),
            t = esc(&row.title),
            l = row.level.as_str()
        );
        for i in &c.implementations {
            match row.cells.get(&i.name) {
                Some(cell) => {
                    let _ = write!(
                        out,
                        "<td class=\"cell v-{v}\" data-client=\"{n}\" data-verdict=\"{v}\" title=\"{tip}\"><span class=\"tag\">{label}</span></td>",
                        v = cell.verdict.as_str(),
                        n = esc(&i.name),
                        tip = esc(&tooltip(row, cell)),
                        label = esc(&cell.label)
                    );
                }
                None => {
                    let _ = write!(out, "<td class=\"absent\">—</td>");
                }
            }
        }
        let _ = writeln!(out, "</tr>");
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</section>");
}

/// The page.
pub fn html(m: &Matrix) -> String {
    let rows: usize = m.families.iter().map(|f| f.rows.len()).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Pallas conformance matrix</title>\n<style>{STYLE}{MATRIX_STYLE}</style>\n</head>\n<body>\n<header>\n<h1>Pallas conformance matrix</h1>\n<p class=\"muted\">{} implementation(s) × {rows} check(s), built by pallas-conformance {} from the implementations' JSON reports (the same data as <code>matrix.json</code>).</p>\n</header>",
        m.implementations.len(),
        esc(&m.kit_version)
    );
    implementations(&mut out, m);
    capabilities(&mut out, m);
    levels(&mut out, m);
    table(&mut out, m);
    if let Some(d) = &m.downstream {
        downstream(&mut out, d);
    }
    if let Some(c) = &m.clients {
        clients(&mut out, c);
    }
    details(&mut out, m);
    let _ = writeln!(out, "</body>\n</html>");
    out
}
