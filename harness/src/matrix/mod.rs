//! `pallas-conformance matrix`: the compliance matrix of certified implementations, built from
//! their JSON reports (`run --report-json`, the committed `docs/certification/*.json`) and never
//! by hand. One [`Matrix`] value holds everything; the page ([`page::html`]), `matrix.json` and
//! the badges ([`badge::svg`]) are each rendered from it.
//!
//! Rows are check IDs grouped by family (catalogue order); columns are implementations (the
//! reports' `target`, in the order given). A cell is every entry of that check in that report:
//! its verdict is the worst of theirs (error, fail, warn, inconclusive, info, pass, skip), shown
//! with how many entries gave it ("fail 1/3"). Each implementation's level comes from
//! [`levels::score`] over its entries in row order.

pub mod badge;
pub mod capabilities;
pub mod downstream;
pub mod levels;
pub mod page;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::checks::{CheckResult, Evidence, Verdict};
use crate::runner::Counts;
use crate::scenario::Level;
use levels::{LEVELS, LevelDef, Score};

/// The `format` of `matrix.json`.
pub const FORMAT: &str = "pallas-conformance/matrix/v1";

/// The `format` a JSON report carries.
const REPORT_FORMAT: &str = "pallas-conformance/report/v1";

/// The reports read when none is given.
pub const DEFAULT_REPORTS: &str = "docs/certification";

/// A report that cannot be used, or a matrix that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not the downstream results file (`.ci/certify-downstream`).
    #[error("{path} is not the downstream results of `.ci/certify-downstream`: {why}")]
    NotDownstream {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Not a JSON report of this kit.
    #[error("{path} is not a pallas-conformance JSON report: {why}")]
    NotAReport {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Two reports of one implementation.
    #[error(
        "{path}: a second report of `{target}` (the first: {first}); give one per implementation"
    )]
    Duplicate {
        /// The second report.
        path: PathBuf,
        /// Its target.
        target: String,
        /// The first report of it.
        first: PathBuf,
    },
    /// No report at all.
    #[error("no JSON report given, and none in {0}")]
    NoReports(PathBuf),
    /// A file of the matrix could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The part of a JSON report the matrix reads.
#[derive(Debug, Deserialize)]
struct ReportFile {
    format: String,
    target: String,
    kit_version: String,
    #[serde(default)]
    kit_commit: Option<String>,
    #[serde(default)]
    suite: Option<SuiteRef>,
    /// When the report was made, if it says.
    #[serde(default)]
    date: Option<String>,
    /// The capabilities the profile claims (absent in reports made before it was written).
    #[serde(default)]
    claims: Option<Vec<String>>,
    /// What the implementation declared on the wire (likewise).
    #[serde(default)]
    declared: Option<crate::runner::Declared>,
    /// Which party the report judged (a bridge when absent).
    #[serde(default)]
    side: crate::runner::Side,
    scenarios: Vec<ReportScenario>,
}

#[derive(Debug, Deserialize)]
struct SuiteRef {
    #[serde(default)]
    digest: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ReportScenario {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    checks: Vec<CheckResult>,
}

/// The compliance matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    /// [`FORMAT`].
    pub format: &'static str,
    /// The kit that built it.
    pub kit_version: String,
    /// The levels table ([`LEVELS`]).
    pub levels: Vec<LevelDef>,
    /// The columns.
    pub implementations: Vec<Implementation>,
    /// The rows, by family.
    pub families: Vec<Family>,
    /// The Daedalus-side clients (`daedalus` reports), a matrix of their own: the client checks
    /// × the clients, each client's level over its entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<Box<Matrix>>,
    /// Each bridge's downstream side: the official suite's client scenarios driven through it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downstream: Option<downstream::Downstream>,
}

/// One implementation: a report's header, its counts and its level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implementation {
    /// The report's `target`.
    pub name: String,
    /// The report file's name.
    pub report: String,
    /// The kit version that made the report.
    pub kit_version: String,
    /// The kit commit that made the report.
    pub kit_commit: Option<String>,
    /// The digest of the suite the report names.
    pub suite_digest: Option<String>,
    /// When the report was made, if it says.
    pub date: Option<String>,
    /// Every entry by verdict.
    pub counts: Counts,
    /// Its level as an MCP agent bridge: over the entries of the generic contract (checks that
    /// need no capability or a generic one: `harness/docs/capabilities.md`).
    pub score: Score,
    /// Its level as a Pallas: over the entries of the Pallas-only checks (registry, health,
    /// metrics, Pallas config, logging, preflight, single-agent mode, seed 000's progress
    /// wording). A bridge that claims none of them is not scored.
    pub pallas: Score,
    /// The badge of `score`, relative to the matrix folder.
    pub badge: String,
    /// The badge of `pallas`, relative to the matrix folder.
    pub pallas_badge: String,
    /// Each capability claimed or declared, with its standing ([`capabilities::rows`]); absent
    /// for a report made before it recorded claims and declarations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Vec<capabilities::CapabilityRow>>,
}

impl Implementation {
    /// The first 12 digits of the suite digest.
    pub fn suite_short(&self) -> Option<&str> {
        self.suite_digest
            .as_deref()
            .map(|d| d.get(..12).unwrap_or(d))
    }
}

/// A family of checks (`PROG`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Family {
    /// The family.
    pub name: String,
    /// Its checks.
    pub rows: Vec<Row>,
}

/// One check across implementations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The check ID.
    pub check: String,
    /// Its title (the catalogue's, else its first entry's).
    pub title: String,
    /// The level of its rule (the catalogue's, else its first entry's).
    pub level: Level,
    /// The verbatim rule (the catalogue's, else its first entry's), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// Each implementation's cell, by name; absent where its report has no entry of the check.
    pub cells: BTreeMap<String, Cell>,
}

/// Every entry of one check in one report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The worst verdict of the entries.
    pub verdict: Verdict,
    /// How many entries gave it.
    pub count: usize,
    /// How many entries there are.
    pub total: usize,
    /// What the page shows: `fail`, or `fail 1/3` for several entries.
    pub label: String,
    /// The page's anchor of the entries.
    pub anchor: String,
    /// The entries, in report order.
    pub entries: Vec<Entry>,
}

/// One entry of a check in a report, as the report has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// The scenario.
    pub scenario: String,
    /// The scenario's title.
    pub scenario_title: String,
    /// What the entry checked.
    pub title: String,
    /// Its level.
    pub level: Level,
    /// Its verdict (a baselined fail is `fail`, with `baselined`).
    pub verdict: Verdict,
    /// Listed in an expected-failures baseline.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
    /// Why.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// The rule broken, for a non-pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// `file:line` of the entry.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub location: String,
    /// Expected and seen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

/// How bad a verdict is in a cell: the highest is shown.
fn severity(v: Verdict) -> u8 {
    match v {
        Verdict::Error => 6,
        Verdict::Fail => 5,
        Verdict::Warn => 4,
        Verdict::Inconclusive => 3,
        Verdict::Info => 2,
        Verdict::Pass => 1,
        Verdict::Skip => 0,
    }
}

/// A name safe in a file name and an HTML id: letters, digits, `.`, `_`, `-`; anything else `_`.
pub fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn read_report(path: &Path) -> Result<ReportFile, MatrixError> {
    let text = std::fs::read_to_string(path).map_err(|source| MatrixError::Read {
        path: path.to_owned(),
        source,
    })?;
    let not = |why: String| MatrixError::NotAReport {
        path: path.to_owned(),
        why,
    };
    let report: ReportFile = serde_json::from_str(&text).map_err(|e| not(e.to_string()))?;
    if report.format != REPORT_FORMAT {
        return Err(not(format!(
            "its `format` is `{}`, not `{REPORT_FORMAT}`",
            report.format
        )));
    }
    Ok(report)
}

/// The JSON files of `dir`, sorted.
pub fn reports_in(dir: &Path) -> Result<Vec<PathBuf>, MatrixError> {
    let read = |source| MatrixError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Where a check's row goes: catalogue order, then checks the catalogue does not list
/// (`ASSERT`, a retired ID) by ID.
type RowKey = (usize, String);

/// One row's entries by implementation, each with the report's result it came from.
type ByImplementation<'a> = BTreeMap<String, Vec<(Entry, &'a CheckResult)>>;

/// Builds the matrix of the given reports (one per implementation).
pub fn build(paths: &[PathBuf]) -> Result<Matrix, MatrixError> {
    let mut reports: Vec<(PathBuf, ReportFile)> = Vec::with_capacity(paths.len());
    for path in paths {
        let r = read_report(path)?;
        if let Some((first, _)) = reports.iter().find(|(_, o)| o.target == r.target) {
            return Err(MatrixError::Duplicate {
                path: path.clone(),
                target: r.target,
                first: first.clone(),
            });
        }
        reports.push((path.clone(), r));
    }
    let (clients, bridges): (Vec<_>, Vec<_>) = reports
        .into_iter()
        .partition(|(_, r)| r.side == crate::runner::Side::Client);
    let mut matrix = table(&bridges);
    if !clients.is_empty() {
        let mut c = table(&clients);
        for i in &mut c.implementations {
            i.badge = format!("badges/client-{}.svg", slug(&i.name));
            i.pallas_badge = String::new();
        }
        matrix.clients = Some(Box::new(c));
    }
    Ok(matrix)
}

/// The matrix of one party's reports.
fn table(reports: &[(PathBuf, ReportFile)]) -> Matrix {
    // Every check ID, in row order, with each implementation's entries.
    let catalogue = levels::catalogue_order();
    let row_key = |id: &str| -> RowKey {
        (
            catalogue.get(id).copied().unwrap_or(usize::MAX),
            id.to_owned(),
        )
    };
    let mut rows: BTreeMap<RowKey, ByImplementation<'_>> = BTreeMap::new();
    for (_, r) in reports {
        for s in &r.scenarios {
            for c in &s.checks {
                rows.entry(row_key(&c.id))
                    .or_default()
                    .entry(r.target.clone())
                    .or_default()
                    .push((entry(s, c), c));
            }
        }
    }
    let mut implementations = Vec::with_capacity(reports.len());
    for (path, r) in reports {
        let in_row_order: Vec<&CheckResult> = rows
            .values()
            .filter_map(|cells| cells.get(&r.target))
            .flat_map(|es| es.iter().map(|(_, c)| *c))
            .collect();
        let capabilities =
            capabilities::rows(r.claims.as_deref(), r.declared.as_ref(), &in_row_order);
        let not_seen = capabilities::claimed_not_seen(r.claims.as_deref(), r.declared.as_ref());
        let (score, pallas) = levels::report_levels(in_row_order, &not_seen);
        let mut counts = Counts::default();
        for c in r.scenarios.iter().flat_map(|s| &s.checks) {
            counts.add(c);
        }
        implementations.push(Implementation {
            name: r.target.clone(),
            report: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            kit_version: r.kit_version.clone(),
            kit_commit: r.kit_commit.clone(),
            suite_digest: r.suite.as_ref().and_then(|s| s.digest.clone()),
            date: r.date.clone(),
            counts,
            score,
            pallas,
            badge: format!("badges/{}.svg", slug(&r.target)),
            pallas_badge: format!("badges/{}-pallas.svg", slug(&r.target)),
            capabilities,
        });
    }
    let mut families: Vec<Family> = Vec::new();
    for ((_, id), cells) in rows {
        let first = cells.values().flatten().map(|(_, c)| *c).next();
        let def = crate::catalog::get(&id);
        let row = Row {
            title: def
                .map(|d| d.title.clone())
                .or_else(|| first.map(|c| c.title.clone()))
                .unwrap_or_default(),
            level: def
                .map(|d| d.level)
                .or_else(|| first.map(|c| c.level))
                .unwrap_or(Level::Info),
            quote: def
                .map(|d| d.quote.clone())
                .or_else(|| first.and_then(|c| c.quote.clone())),
            cells: cells
                .into_iter()
                .map(|(name, es)| {
                    let cell = cell(&name, &id, es.into_iter().map(|(e, _)| e).collect());
                    (name, cell)
                })
                .collect(),
            check: id,
        };
        let family = crate::rules::family_of(&row.check).to_owned();
        match families.last_mut() {
            Some(f) if f.name == family => f.rows.push(row),
            _ => families.push(Family {
                name: family,
                rows: vec![row],
            }),
        }
    }
    Matrix {
        format: FORMAT,
        kit_version: env!("CARGO_PKG_VERSION").to_owned(),
        levels: LEVELS.to_vec(),
        implementations,
        families,
        clients: None,
        downstream: None,
    }
}

fn entry(s: &ReportScenario, c: &CheckResult) -> Entry {
    Entry {
        scenario: s.id.clone(),
        scenario_title: s.title.clone(),
        title: c.title.clone(),
        level: c.level,
        verdict: c.verdict,
        baselined: c.baselined,
        reason: c.reason.clone(),
        rule: c.rule.clone(),
        location: c.location.clone(),
        evidence: c.evidence.clone(),
    }
}

fn cell(implementation: &str, check: &str, entries: Vec<Entry>) -> Cell {
    let verdict = entries
        .iter()
        .map(|e| e.verdict)
        .max_by_key(|v| severity(*v))
        .unwrap_or(Verdict::Skip);
    let count = entries.iter().filter(|e| e.verdict == verdict).count();
    let total = entries.len();
    let label = if total == 1 {
        verdict.as_str().to_owned()
    } else {
        format!("{} {count}/{total}", verdict.as_str())
    };
    Cell {
        verdict,
        count,
        total,
        label,
        anchor: format!("cell-{}-{}", slug(implementation), slug(check)),
        entries,
    }
}

impl Matrix {
    /// `matrix.json`: the matrix as pretty JSON.
    pub fn json_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Writes `index.html`, `matrix.json` and `badges/<implementation>.svg` into `dir`; returns
    /// the files written.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, MatrixError> {
        let mut files: Vec<(PathBuf, String)> = vec![
            (dir.join("index.html"), page::html(self)),
            (dir.join("matrix.json"), self.json_text()),
        ];
        for i in &self.implementations {
            files.push((
                dir.join(&i.badge),
                badge::svg(badge::BRIDGE_LABEL, i.score.level),
            ));
            files.push((
                dir.join(&i.pallas_badge),
                badge::svg(badge::PALLAS_LABEL, i.pallas.level),
            ));
        }
        for i in self.clients.iter().flat_map(|c| &c.implementations) {
            files.push((
                dir.join(&i.badge),
                badge::svg(badge::CLIENT_LABEL, i.score.level),
            ));
        }
        let mut written = Vec::with_capacity(files.len());
        for (path, text) in files {
            let io = |source| MatrixError::Write {
                path: path.clone(),
                source,
            };
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&path, text).map_err(io)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// `matrix` arguments.
#[derive(Debug, clap::Args)]
pub struct MatrixArgs {
    /// JSON reports (`run --report-json`, `daedalus --report-json`), one per implementation
    /// (default: every `docs/certification/*.json` and `docs/certification/clients/*.json`).
    /// Reports of Daedalus-side clients make the matrix's client side.
    pub reports: Vec<PathBuf>,
    /// The folder to write `index.html`, `matrix.json` and `badges/` into (created if needed).
    #[arg(long)]
    pub out: PathBuf,
    /// The bridges' downstream results (`.ci/certify-downstream`: the official suite's client
    /// scenarios through each bridge); default: `docs/certification/downstream/results.json`
    /// when the default reports are read and it exists.
    #[arg(long)]
    pub downstream: Option<PathBuf>,
}

/// `pallas-conformance matrix`: exit 0 when written, 2 when a report is unusable, 3 when a file
/// cannot be written.
pub fn run_command(
    args: &MatrixArgs,
    out: &mut impl std::io::Write,
    err: &mut impl std::io::Write,
) -> u8 {
    let paths = if args.reports.is_empty() {
        match reports_in(Path::new(DEFAULT_REPORTS)) {
            Ok(mut p) if !p.is_empty() => {
                // The Daedalus-side clients' reports, when there are any.
                p.extend(
                    reports_in(&Path::new(DEFAULT_REPORTS).join("clients")).unwrap_or_default(),
                );
                p
            }
            Ok(_) => {
                let _ = writeln!(
                    err,
                    "error: {}",
                    MatrixError::NoReports(DEFAULT_REPORTS.into())
                );
                return crate::exit::INVALID_INPUT;
            }
            Err(e) => {
                let _ = writeln!(err, "error: {e}");
                return crate::exit::INVALID_INPUT;
            }
        }
    } else {
        args.reports.clone()
    };
    let mut matrix = match build(&paths) {
        Ok(m) => m,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return crate::exit::INVALID_INPUT;
        }
    };
    let results = args.downstream.clone().or_else(|| {
        let default = Path::new(downstream::DEFAULT_RESULTS);
        (args.reports.is_empty() && default.exists()).then(|| default.to_owned())
    });
    if let Some(path) = results {
        match downstream::read(&path) {
            Ok(d) => matrix.downstream = Some(d),
            Err(e) => {
                let _ = writeln!(err, "error: {e}");
                return crate::exit::INVALID_INPUT;
            }
        }
    }
    if let Err(e) = matrix.write(&args.out) {
        let _ = writeln!(err, "error: {e}");
        return crate::exit::HARNESS_ERROR;
    }
    let rows: usize = matrix.families.iter().map(|f| f.rows.len()).sum();
    let _ = writeln!(
        out,
        "wrote {}: {} implementation(s) × {rows} check(s) (index.html, matrix.json, badges/)",
        args.out.display(),
        matrix.implementations.len()
    );
    for i in &matrix.implementations {
        let _ = writeln!(
            out,
            "  {:<24} agent bridge {:<14} {}\n  {:<24} Pallas       {:<14} {}",
            i.name,
            i.score.level.as_str(),
            i.score.reason,
            "",
            i.pallas.level.as_str(),
            i.pallas.reason
        );
    }
    for i in matrix.clients.iter().flat_map(|c| &c.implementations) {
        let _ = writeln!(
            out,
            "  {:<24} Daedalus client {:<11} {}",
            i.name,
            i.score.level.as_str(),
            i.score.reason
        );
    }
    crate::exit::SUCCESS
}
