//! `pallas-conformance matrix` from the committed certifications: the levels they earn, a cell
//! recomputed from the raw report, and one changed verdict moving the page, the badge and the
//! JSON together.

use std::path::{Path, PathBuf};

use pallas_conformance::matrix::{self, Matrix, MatrixArgs, levels::ConformanceLevel};
use serde_json::Value;

fn committed() -> Vec<PathBuf> {
    matrix::reports_in(&super::common::workspace().join("docs/certification")).unwrap()
}

fn level_of<'a>(m: &'a Matrix, name: &str) -> &'a pallas_conformance::matrix::levels::Score {
    &m.implementations
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("no implementation {name}"))
        .score
}

fn cell<'a>(m: &'a Matrix, check: &str, name: &str) -> &'a matrix::Cell {
    m.families
        .iter()
        .flat_map(|f| &f.rows)
        .find(|r| r.check == check)
        .and_then(|r| r.cells.get(name))
        .unwrap_or_else(|| panic!("no cell {check} × {name}"))
}

/// Runs the command as the CLI does; returns (exit code, stdout, stderr).
fn run(reports: Vec<PathBuf>, out: &Path) -> (u8, String, String) {
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let code = matrix::run_command(
        &MatrixArgs {
            reports,
            out: out.to_owned(),
            downstream: None,
        },
        &mut o,
        &mut e,
    );
    (
        code,
        String::from_utf8(o).unwrap(),
        String::from_utf8(e).unwrap(),
    )
}

fn read(p: PathBuf) -> String {
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The `<tr>` of one implementation in the page's implementations table.
fn header_row<'a>(page: &'a str, name: &str) -> &'a str {
    let start = page
        .find(&format!("<tr data-implementation=\"{name}\""))
        .unwrap_or_else(|| panic!("no header row of {name}"));
    let len = page[start..].find("</tr>").unwrap();
    &page[start..start + len]
}

/// The certified implementation whose every judged MUST and SHOULD entry passes.
const FULL: &str = "langgraph";

/// The matrix cell of one check and implementation in the page.
fn page_cell<'a>(page: &'a str, check: &str, name: &str) -> &'a str {
    let row = page.find(&format!("<tr data-check=\"{check}\">")).unwrap();
    let row = &page[row..row + page[row..].find("</tr>").unwrap()];
    let at = row
        .find(&format!("data-implementation=\"{name}\""))
        .unwrap_or_else(|| panic!("no cell {check} × {name}"));
    let start = row[..at].rfind("<td").unwrap();
    &row[start..at + row[at..].find("</td>").unwrap()]
}

#[test]
fn a_capability_claimed_and_never_seen_carries_no_level() {
    let m = matrix::build(&committed()).unwrap();
    // Google ADK claims progress and never sent a notification: its progress entries carry no
    // level, and the reason says so.
    let adk = level_of(&m, "google-adk");
    assert_eq!(adk.claimed_not_seen, vec!["progress".to_owned()]);
    assert!(
        adk.reason.contains("claimed and never seen"),
        "{}",
        adk.reason
    );
}

#[test]
fn the_committed_certifications_make_a_matrix_with_honest_levels() {
    let reports = committed();
    assert!(reports.len() >= 6, "{reports:?}");
    let m = matrix::build(&reports).unwrap();
    assert_eq!(m.implementations.len(), reports.len());
    // LangGraph: every judged MUST and SHOULD entry passes.
    assert_eq!(level_of(&m, FULL).level, ConformanceLevel::Full);
    // The others fail MUST entries (MCP-009's id-null errors, MCP-011, PROG-003): not compliant,
    // the first failing check named.
    for name in [
        "fast-agent-0.7.22",
        "fast-agent-latest",
        "pallas-fastagent",
        "voltagent",
        "agno",
        "mastra",
    ] {
        let s = level_of(&m, name);
        assert_eq!(s.level, ConformanceLevel::NotCompliant, "{name}");
        let first = s.decided_by.as_deref().unwrap();
        assert!(
            s.reason.starts_with(&format!("MUST {first} ")),
            "{}",
            s.reason
        );
    }
    // Agno: three progress notifications per call are enough to judge PROG-003 per call; what
    // its level rests on is MCP-009, not progress.
    assert_eq!(level_of(&m, "agno").decided_by.as_deref(), Some("MCP-009"));

    // One cell recomputed from the raw report: every MCP-009 entry of fast-agent 0.7.22.
    let raw: Value = serde_json::from_str(&read(
        super::common::workspace().join("docs/certification/fast-agent-0.7.22.json"),
    ))
    .unwrap();
    let verdicts: Vec<&str> = raw["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["checks"].as_array().unwrap())
        .filter(|c| c["id"] == "MCP-009")
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    let fails = verdicts.iter().filter(|v| **v == "fail").count();
    assert!(fails > 0 && verdicts.len() > 1, "{verdicts:?}");
    let c = cell(&m, "MCP-009", "fast-agent-0.7.22");
    assert_eq!(c.label, format!("fail {fails}/{}", verdicts.len()));
    assert_eq!(c.entries.len(), verdicts.len());
    // Skipped entries are shown, not counted: every one at a graded level on one scale or the
    // other (information is on neither).
    let skips = raw["counts"]["skip"].as_u64().unwrap() - info_skips(&raw);
    let fa = m
        .implementations
        .iter()
        .find(|i| i.name == "fast-agent-0.7.22")
        .unwrap();
    assert_eq!((fa.score.skipped + fa.pallas.skipped) as u64, skips);

    // The Pallas scale: the five bridges that are not a Pallas claim no Pallas-only capability
    // and are not scored on it, saying why; pallas-fastagent is judged on it.
    for i in &m.implementations {
        if i.name == "pallas-fastagent" {
            assert!(matrix::levels::judged(&i.pallas.must) > 0, "{:?}", i.pallas);
            assert_ne!(
                i.pallas.level,
                ConformanceLevel::NotScored,
                "{:?}",
                i.pallas
            );
        } else {
            assert_eq!(i.pallas.level, ConformanceLevel::NotScored, "{}", i.name);
            assert!(
                i.pallas.reason.starts_with("not scored as a Pallas"),
                "{}",
                i.pallas.reason
            );
            assert!(i.pallas.skipped > 0, "{}", i.name);
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(reports, dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(FULL) && out.contains("full"), "{out}");
    let page = read(dir.path().join("index.html"));
    // Self-contained: no resource fetched (report text may quote URLs, never load them).
    for external in ["src=", "<link", "@import", "url(http", "href=\"http"] {
        assert!(
            !page.contains(external),
            "the page loads something: {external}"
        );
    }
    let label = format!("fail {fails}/{}", verdicts.len());
    let html_cell = page_cell(&page, "MCP-009", "fast-agent-0.7.22");
    assert!(
        html_cell.contains(&format!("<span class=\"tag\">{label}</span>")),
        "{html_cell}"
    );
    assert!(
        html_cell.contains(&format!("href=\"#{}\"", c.anchor)),
        "{html_cell}"
    );
    assert!(
        html_cell.contains("(MUST)"),
        "the rule's level in the tooltip: {html_cell}"
    );
    assert!(page.contains(&format!("<section class=\"cell\" id=\"{}\"", c.anchor)));
    let agno_row = header_row(&page, "agno");
    assert!(agno_row.contains(">not scored</span>"), "{agno_row}");
    // The kit commit and suite digest that made the report, as the report states them.
    let agno_raw: Value = serde_json::from_str(&read(
        super::common::workspace().join("docs/certification/agno.json"),
    ))
    .unwrap();
    let commit = agno_raw["kit_commit"].as_str().unwrap();
    let digest = agno_raw["suite"]["digest"].as_str().unwrap();
    assert!(
        agno_row.contains(&format!("<code>{}</code>", &commit[..12])),
        "{agno_row}"
    );
    assert!(
        agno_row.contains(&format!("<code>{}</code>", &digest[..12])),
        "{agno_row}"
    );
    assert!(agno_row.contains(&format!("data-count=\"skip\">{}<", raw_skips("agno.json"))));
    let json: Value = serde_json::from_str(&read(dir.path().join("matrix.json"))).unwrap();
    assert_eq!(json, serde_json::to_value(&m).unwrap());
    assert_eq!(json["format"], "pallas-conformance/matrix/v1");
    assert!(read(dir.path().join(format!("badges/{FULL}.svg"))).contains(">full</text>"));
    assert!(read(dir.path().join("badges/agno.svg")).contains(">not compliant</text>"));
    assert!(read(dir.path().join("badges/agno-pallas.svg")).contains(">not scored</text>"));
}

fn raw_skips(file: &str) -> u64 {
    let raw: Value = serde_json::from_str(&read(
        super::common::workspace()
            .join("docs/certification")
            .join(file),
    ))
    .unwrap();
    raw["counts"]["skip"].as_u64().unwrap()
}

/// The committed reports with `<name>.json` replaced by a copy changed by `edit`, in `dir`.
fn with_changed(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> Vec<PathBuf> {
    let file = format!("{name}.json");
    let mut raw: Value = serde_json::from_str(&read(
        super::common::workspace()
            .join("docs/certification")
            .join(&file),
    ))
    .unwrap();
    edit(&mut raw);
    let copy = dir.join(&file);
    std::fs::write(&copy, serde_json::to_string(&raw).unwrap()).unwrap();
    committed()
        .into_iter()
        .map(|p| {
            if p.file_name().unwrap() == file.as_str() {
                copy.clone()
            } else {
                p
            }
        })
        .collect()
}

/// The committed reports with `mastra.json` changed by `edit`.
fn with_mastra_changed(dir: &Path, edit: impl FnOnce(&mut Value)) -> Vec<PathBuf> {
    with_changed(dir, "mastra", edit)
}

/// One implementation of a `matrix.json`.
fn implementation_json<'a>(matrix: &'a Value, name: &str) -> &'a Value {
    matrix["implementations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no implementation {name} in matrix.json"))
}

/// Every check entry of a report, mutably.
fn entries(raw: &mut Value) -> impl Iterator<Item = &mut Value> {
    raw["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|s| s["checks"].as_array_mut().unwrap().iter_mut())
}

#[test]
fn one_must_pass_turned_fail_drops_the_level_on_the_page_the_badge_and_the_json() {
    let before_dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(committed(), before_dir.path());
    assert_eq!(code, 0, "{err}");
    let before_page = read(before_dir.path().join("index.html"));
    assert!(header_row(&before_page, FULL).contains(">full</span>"));

    let work = tempfile::tempdir().unwrap();
    let mut changed = None;
    let reports = with_changed(work.path(), FULL, |raw| {
        let e = entries(raw)
            .find(|c| c["level"] == "MUST" && c["verdict"] == "pass")
            .unwrap();
        e["verdict"] = "fail".into();
        e["reason"] = "changed for the test".into();
        changed = Some(e["id"].as_str().unwrap().to_owned());
    });
    let check = changed.unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, stdout, err) = run(reports, out.path());
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("not compliant"), "{stdout}");

    // The JSON.
    let json: Value = serde_json::from_str(&read(out.path().join("matrix.json"))).unwrap();
    let full = implementation_json(&json, FULL);
    assert_eq!(full["score"]["level"], "not compliant");
    assert_eq!(full["score"]["decided_by"], check.as_str());
    assert_eq!(full["counts"]["fail"], 1);
    let json_cell = json["families"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["rows"].as_array().unwrap())
        .find(|r| r["check"] == check.as_str())
        .map(|r| r["cells"][FULL].clone())
        .unwrap();
    assert_eq!(json_cell["verdict"], "fail");
    assert_eq!(json_cell["count"], 1);
    assert!(
        json_cell["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["reason"] == "changed for the test")
    );
    let label = json_cell["label"].as_str().unwrap();
    assert!(label == "fail" || label.starts_with("fail 1/"), "{label}");

    // The page.
    let page = read(out.path().join("index.html"));
    let row = header_row(&page, FULL);
    assert!(row.contains(">not compliant</span>"), "{row}");
    assert!(row.contains(&format!("MUST {check} ")), "{row}");
    assert!(row.contains("data-count=\"fail\">1<"), "{row}");
    let c = page_cell(&page, &check, FULL);
    assert!(c.contains("data-verdict=\"fail\""), "{c}");
    assert!(
        c.contains(&format!("<span class=\"tag\">{label}</span>")),
        "{c}"
    );
    assert!(page.contains("changed for the test"));
    let was = page_cell(&before_page, &check, FULL);
    assert!(was.contains("data-verdict=\"pass\""), "{was}");

    // The badge.
    let badge = read(out.path().join(format!("badges/{FULL}.svg")));
    assert!(
        badge.contains("<title>MCP agent bridge: not compliant</title>"),
        "{badge}"
    );
    assert!(badge.contains("#e05d44"), "{badge}");
    let before_badge = read(before_dir.path().join(format!("badges/{FULL}.svg")));
    assert!(before_badge.contains("<title>MCP agent bridge: full</title>"));
    let pallas_badge = read(out.path().join(format!("badges/{FULL}-pallas.svg")));
    assert!(
        pallas_badge.contains("<title>Pallas: not scored</title>"),
        "{pallas_badge}"
    );
    // The others did not move.
    assert_eq!(
        read(out.path().join("badges/voltagent.svg")),
        read(before_dir.path().join("badges/voltagent.svg"))
    );
}

/// How many informational entries of a raw report are skipped.
fn info_skips(raw: &Value) -> u64 {
    raw["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["checks"].as_array().unwrap())
        .filter(|c| c["level"] == "INFO" && c["verdict"] == "skip")
        .count() as u64
}

#[test]
fn nothing_judged_at_must_is_not_scored_everywhere() {
    let work = tempfile::tempdir().unwrap();
    let reports = with_changed(work.path(), FULL, |raw| {
        for e in entries(raw).filter(|c| c["level"] == "MUST") {
            e["verdict"] = "skip".into();
            e["reason"] = "capability not claimed".into();
        }
    });
    let m = matrix::build(&reports).unwrap();
    let s = level_of(&m, FULL);
    assert_eq!(s.level, ConformanceLevel::NotScored);
    assert!(
        s.reason.starts_with("no MUST entry judged ("),
        "{}",
        s.reason
    );
    assert_eq!(s.must.skip, s.skipped - s.should.skip - s.may.skip);

    let out = tempfile::tempdir().unwrap();
    let (code, _, err) = run(reports, out.path());
    assert_eq!(code, 0, "{err}");
    let row = header_row(&read(out.path().join("index.html")), FULL).to_owned();
    assert!(
        row.contains(">not scored</span>") && row.contains("no MUST entry judged"),
        "{row}"
    );
    assert!(read(out.path().join(format!("badges/{FULL}.svg"))).contains(">not scored</text>"));
    let json: Value = serde_json::from_str(&read(out.path().join("matrix.json"))).unwrap();
    assert!(
        json["implementations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == FULL && i["score"]["level"] == "not scored")
    );

    // A MUST entry in error, none failing: not scored either, the entry named.
    let reports = with_changed(work.path(), FULL, |raw| {
        let e = entries(raw)
            .find(|c| c["level"] == "MUST" && c["verdict"] == "pass")
            .unwrap();
        e["verdict"] = "error".into();
    });
    let s = level_of(&matrix::build(&reports).unwrap(), FULL).clone();
    assert_eq!(s.level, ConformanceLevel::NotScored);
    assert!(
        s.reason
            .contains(" is error (0 MUST entries inconclusive, 1 in error)"),
        "{}",
        s.reason
    );
}

#[test]
fn unusable_inputs_are_refused_with_the_file_named() {
    let work = tempfile::tempdir().unwrap();
    let bogus = work.path().join("bogus.json");
    std::fs::write(
        &bogus,
        r#"{"format": "something/else", "target": "x", "kit_version": "0", "scenarios": []}"#,
    )
    .unwrap();
    let (code, _, err) = run(vec![bogus], &work.path().join("out"));
    assert_eq!(code, 2);
    assert!(
        err.contains("bogus.json is not a pallas-conformance JSON report"),
        "{err}"
    );
    assert!(err.contains("something/else"), "{err}");

    let mastra = super::common::workspace().join("docs/certification/mastra.json");
    let (code, _, err) = run(vec![mastra.clone(), mastra], &work.path().join("out"));
    assert_eq!(code, 2);
    assert!(err.contains("a second report of `mastra`"), "{err}");
    assert!(!work.path().join("out").exists());
}

#[test]
fn the_levels_table_is_the_documented_one() {
    let doc = read(super::common::workspace().join("docs/certification/LEVELS.md"));
    for d in matrix::levels::LEVELS {
        let line = format!("| {} | {} |", d.level.as_str(), d.rule);
        assert!(
            doc.contains(&line),
            "docs/certification/LEVELS.md lacks the row\n{line}"
        );
    }
}

fn standing(m: &Matrix, name: &str, capability: &str) -> Option<String> {
    let i = m.implementations.iter().find(|i| i.name == name)?;
    let row = i
        .capabilities
        .as_ref()?
        .iter()
        .find(|r| r.capability == capability)?;
    Some(row.standing.label().to_owned())
}

#[test]
fn every_committed_report_sets_its_claims_beside_what_the_wire_showed() {
    let m = matrix::build(&committed()).unwrap();
    for i in &m.implementations {
        assert!(
            i.capabilities.is_some(),
            "{}: the report records no claims or declarations: re-certify it",
            i.name
        );
    }
    let expected = [
        // Google ADK claims progress (it reports an intermediate event with text as progress),
        // and none of the calls with a token got any: the page says so.
        ("google-adk", "progress", "claimed, never seen in this run"),
        // fast-agent's progress MUST failures are its claim's; Mastra's sessions hold.
        ("fast-agent-0.7.22", "progress", "claimed, a MUST fails"),
        ("mastra", "sessions", "claimed, no MUST fails"),
        // An `initialize` capability no claim covers is shown, untested.
        ("mastra", "server capability: logging", "shown, not tested"),
    ];
    for (name, capability, label) in expected {
        assert_eq!(
            standing(&m, name, capability).as_deref(),
            Some(label),
            "{name} {capability}"
        );
    }
}

#[test]
fn sessions_never_issued_turn_a_sessions_claim_into_not_seen_on_the_page_and_the_json() {
    let dir = tempfile::tempdir().unwrap();
    let reports = with_mastra_changed(dir.path(), |raw| {
        raw["declared"]["session_ids"] = 0.into();
    });
    let out = dir.path().join("site");
    let (code, _, err) = run(reports, &out);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&read(out.join("matrix.json"))).unwrap();
    let mastra = implementation_json(&json, "mastra");
    let sessions = mastra["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["capability"] == "sessions")
        .unwrap();
    assert_eq!(sessions["standing"], "claimed_not_seen");
    assert_eq!(
        sessions["seen"],
        "0 of 8 2025-11-25 connections got an `Mcp-Session-Id`"
    );
    let page = read(out.join("index.html"));
    assert!(
        page.contains(
            "data-capabilities-of=\"mastra\" data-capability=\"sessions\" data-standing=\"claimed, never seen in this run\""
        ),
        "the page shows the changed standing"
    );
}

#[test]
fn the_downstream_results_make_a_column_and_a_section_and_a_changed_result_moves_both() {
    let dir = tempfile::tempdir().unwrap();
    let committed_results = super::common::workspace().join(matrix::downstream::DEFAULT_RESULTS);
    let mut results: Value = serde_json::from_str(&read(committed_results)).unwrap();
    results["targets"]["agno"]["results"]["sse-retry"] = "fail".into();
    results["targets"]["agno"]["checks"]["sse-retry"] =
        serde_json::json!(["client-sse-retry-timing"]);
    let path = dir.path().join("results.json");
    std::fs::write(&path, results.to_string()).unwrap();
    let out = dir.path().join("m");
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let code = matrix::run_command(
        &MatrixArgs {
            reports: committed(),
            out: out.clone(),
            downstream: Some(path),
        },
        &mut o,
        &mut e,
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&e));
    let page = read(out.join("index.html"));
    let agno = header_row(&page, "agno");
    assert!(
        agno.contains("2/3 pass; sse-retry: fail"),
        "the column shows the changed result: {agno}"
    );
    let langgraph = header_row(&page, "langgraph");
    assert!(langgraph.contains("3/3 pass"), "{langgraph}");
    let section = &page[page.find("<section id=\"downstream\">").unwrap()..];
    assert!(section.contains("@modelcontextprotocol/conformance@"));
    assert!(
        section.contains("<tr data-bridge=\"reference\">"),
        "the reference, which has no report, is listed"
    );
    assert!(section.contains("title=\"client-sse-retry-timing\""));
    let json: Value = serde_json::from_str(&read(out.join("matrix.json"))).unwrap();
    assert_eq!(
        json["downstream"]["targets"]["agno"]["results"]["sse-retry"],
        "fail"
    );

    // A file that is not the results is refused with its name.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let code = matrix::run_command(
        &MatrixArgs {
            reports: committed(),
            out,
            downstream: Some(bad),
        },
        &mut o,
        &mut e,
    );
    assert_eq!(code, pallas_conformance::exit::INVALID_INPUT);
    assert!(String::from_utf8_lossy(&e).contains("bad.json"));
}
