//! The capability vocabulary: the generic agent-over-MCP contract versus Pallas deployment.

use std::path::{Path, PathBuf};

use pallas_conformance::checks::{Grading, Verdict, evaluate};
use pallas_conformance::observation::Observed;
use pallas_conformance::redact::Redactor;
use pallas_conformance::scenario::Scenario;
use pallas_conformance::suite;
use pallas_conformance::target;
use pallas_conformance::vocab::Capability;

use super::common::scenarios_dir;

/// The areas that exercise Pallas deployment, not the agent-over-MCP contract.
const PALLAS_AREAS: [&str; 6] = [
    "config", "logging", "startup", "registry", "health", "metrics",
];
/// The check families of those areas.
const PALLAS_FAMILIES: [&str; 6] = ["CFG-", "LOG-", "START-", "REG-", "HEALTH-", "MET-"];

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml")
            && !p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('_'))
        {
            out.push(p);
        }
    }
}

/// Every scenario outside `targets/` and the packs of other systems.
fn pallas_scenarios() -> Vec<(String, Scenario)> {
    let mut files = Vec::new();
    yaml_files(&scenarios_dir(), &mut files);
    files
        .into_iter()
        .filter_map(|f| {
            let rel = f
                .strip_prefix(scenarios_dir())
                .unwrap()
                .display()
                .to_string();
            let skip = ["targets/", "percolate/", "mcpctl/", "agentic-server/"]
                .iter()
                .any(|p| rel.starts_with(p));
            (!skip).then(|| (rel, suite::load_file(&f).expect("scenario loads")))
        })
        .collect()
}

#[test]
fn every_check_of_the_pallas_families_needs_a_pallas_only_capability() {
    let missing: Vec<String> = pallas_conformance::catalog::all()
        .iter()
        .filter(|d| PALLAS_FAMILIES.iter().any(|f| d.id.starts_with(f)))
        .filter(|d| !d.capability.is_some_and(Capability::is_pallas_only))
        .map(|d| format!("{} ({:?})", d.id, d.capability))
        .collect();
    assert!(missing.is_empty(), "not Pallas-only: {missing:?}");
}

#[test]
fn every_scenario_of_the_pallas_areas_requires_a_pallas_only_capability() {
    let missing: Vec<String> = pallas_scenarios()
        .into_iter()
        .filter(|(rel, _)| {
            PALLAS_AREAS
                .iter()
                .any(|a| rel.starts_with(&format!("{a}/")))
        })
        .filter(|(_, s)| !s.spec.requires.iter().any(|c| c.is_pallas_only()))
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        missing.is_empty(),
        "a generic target would run: {missing:?}"
    );
}

/// The claims of a target that is not a Pallas: every generic capability, no Pallas-only one.
fn generic_only(c: Capability) -> bool {
    !c.is_pallas_only() && !Capability::PACKS.contains(&c)
}

/// What a profile claims.
type Claims = Box<dyn Fn(Capability) -> bool>;

#[test]
fn no_pallas_only_check_judges_a_target_that_does_not_claim_it() {
    let mut profiles: Vec<(String, Claims)> = vec![("generic-only".into(), Box::new(generic_only))];
    // Every profile of scenarios/targets/, each with its own claims.
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir().join("targets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    for file in files {
        let t = target::load(&file).unwrap();
        profiles.push((t.spec.name.clone(), Box::new(move |c| t.claims(c))));
    }
    for name in [
        "fast-agent-0.7.22",
        "fast-agent-latest",
        "agno",
        "langgraph",
        "llamaindex",
        "mastra",
        "voltagent",
        "google-adk",
        "ms-agent-framework",
    ] {
        assert!(
            profiles.iter().any(|(n, _)| n == name),
            "profile {name} is in scenarios/targets"
        );
    }
    let mut judged = Vec::new();
    let mut skipped_scenarios = 0;
    for (name, claims) in &profiles {
        for (rel, s) in pallas_scenarios() {
            if Capability::contract_skip(&s.spec.requires, claims).is_some() {
                skipped_scenarios += 1; // the runner skips the whole scenario, with the reason
                continue;
            }
            // Nothing observed: whatever is not skipped is inconclusive or failing.
            let results = evaluate(
                &s,
                &Observed::default(),
                &|c| claims(c),
                Grading::default(),
                &Redactor::default(),
            );
            for r in results {
                let pallas_only = pallas_conformance::catalog::get(&r.id)
                    .and_then(|d| d.capability)
                    .is_some_and(|c| c.is_pallas_only() && !claims(c));
                if pallas_only && r.verdict != Verdict::Skip {
                    judged.push(format!("{name}: {rel}: {} {:?}", r.id, r.verdict));
                }
            }
        }
    }
    assert!(skipped_scenarios > 0, "the Pallas areas are skipped");
    assert!(
        judged.is_empty(),
        "Pallas-only checks judged:\n{}",
        judged.join("\n")
    );
}

#[test]
fn a_profile_claiming_an_unknown_capability_is_refused_with_a_did_you_mean() {
    let text = "name: t\ncommand: [x]\nagent_url: \"http://127.0.0.1:1/mcp\"\ncapabilities: [progress, pallas_confg]\n";
    let err = target::parse_str("t.yaml", text).expect_err("unknown capability");
    let out = err.render_plain();
    assert!(out.contains("pallas_confg"), "{out}");
    assert!(out.contains("did you mean `pallas_config`"), "{out}");
}

/// Every scenario of the tree, with its path under `scenarios/`.
fn all_scenarios() -> Vec<(String, Scenario)> {
    let mut files = Vec::new();
    yaml_files(&scenarios_dir(), &mut files);
    files
        .into_iter()
        .filter_map(|f| {
            let rel = f
                .strip_prefix(scenarios_dir())
                .unwrap()
                .display()
                .to_string();
            (!rel.starts_with("targets/"))
                .then(|| (rel, suite::load_file(&f).expect("scenario loads")))
        })
        .collect()
}

/// The pack folder of each pack capability.
fn pack_folder(c: Capability) -> &'static str {
    match c {
        Capability::Mcpctl => "mcpctl/",
        Capability::Percolate => "percolate/",
        Capability::AgenticServer => "agentic-server/",
        _ => unreachable!("not a pack"),
    }
}

#[test]
fn a_pack_target_runs_only_its_pack_and_a_pallas_target_no_pack() {
    let scenarios = all_scenarios();
    let mut profiles: Vec<PathBuf> = std::fs::read_dir(scenarios_dir().join("targets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let tests_targets = scenarios_dir().join("../tests/targets");
    profiles.extend(
        std::fs::read_dir(tests_targets)
            .unwrap()
            .map(|e| e.unwrap().path()),
    );
    profiles.retain(|p| p.extension().is_some_and(|e| e == "yaml"));
    profiles.sort();
    let mut wrong = Vec::new();
    let mut pack_targets = 0;
    let mut ran_generic = 0;
    for file in &profiles {
        let t = target::load(file).unwrap();
        let pack = Capability::PACKS.into_iter().find(|c| t.claims(*c));
        pack_targets += usize::from(pack.is_some());
        for (rel, s) in &scenarios {
            let runs = Capability::contract_skip(&s.spec.requires, |c| t.claims(c)).is_none();
            let in_pack = Capability::PACKS
                .into_iter()
                .find(|c| rel.starts_with(pack_folder(*c)));
            let ok = match (pack, in_pack) {
                // A pack target: its own pack's scenarios may run, nothing else does.
                (Some(p), Some(q)) => p == q || !runs,
                (Some(_), None) => !runs,
                // A Pallas (or generic) target: no pack scenario runs.
                (None, Some(_)) => !runs,
                (None, None) => true,
            };
            if !ok {
                wrong.push(format!("{}: {rel}", t.spec.name));
            }
            if pack.is_none() && in_pack.is_none() && runs {
                ran_generic += 1;
            }
        }
    }
    assert_eq!(pack_targets, 3, "the three pack mocks are profiles");
    assert!(ran_generic > 0, "the non-pack targets still run scenarios");
    // Each pack target runs its whole pack.
    for file in &profiles {
        let t = target::load(file).unwrap();
        if let Some(p) = Capability::PACKS.into_iter().find(|c| t.claims(*c)) {
            let own: Vec<&String> = scenarios
                .iter()
                .filter(|(rel, _)| rel.starts_with(pack_folder(p)))
                .filter(|(_, s)| {
                    Capability::contract_skip(&s.spec.requires, |c| t.claims(c)).is_some()
                })
                .map(|(rel, _)| rel)
                .collect();
            assert!(own.is_empty(), "{} skips its own {own:?}", t.spec.name);
        }
    }
    assert!(
        wrong.is_empty(),
        "scenarios run where they do not belong:\n{}",
        wrong.join("\n")
    );
    // The generic scenarios keep running on a generic target (fast-agent claims no pack).
    let generic_runs = scenarios
        .iter()
        .filter(|(rel, _)| rel.starts_with("mcp/"))
        .filter(|(_, s)| Capability::contract_skip(&s.spec.requires, generic_only).is_none())
        .count();
    assert!(
        generic_runs > 0,
        "the generic MCP scenarios run on a generic target"
    );
    let on_pack = scenarios
        .iter()
        .filter(|(rel, _)| rel.starts_with("mcp/"))
        .filter(|(_, s)| {
            Capability::contract_skip(&s.spec.requires, |c| {
                c == Capability::Percolate || c == Capability::Sessions
            })
            .is_none()
        })
        .count();
    assert_eq!(on_pack, 0, "a pack target runs no generic MCP scenario");
}

#[test]
fn a_profile_claiming_two_systems_is_refused() {
    for caps in ["[percolate, mcpctl]", "[percolate, health]"] {
        let text = format!(
            "name: t\ncommand: [x]\nagent_url: \"http://127.0.0.1:1/mcp\"\ncapabilities: {caps}\n"
        );
        let err = target::parse_str("t.yaml", &text).expect_err("two systems");
        assert!(
            err.render_plain().contains("implements one system"),
            "{caps}"
        );
    }
    let ok = "name: t\ncommand: [x]\nagent_url: \"http://127.0.0.1:1/mcp\"\ncapabilities: [percolate, sessions]\n";
    assert!(target::parse_str("t.yaml", ok).is_ok());
}
