//! Every named defect of the `defects` feature really changes behaviour: each test observes the
//! same exchange with no defect and with the defect, and asserts that the rule holds in the first
//! and is broken in the second. Defects are process-wide, so the tests take turns.

#![allow(clippy::unwrap_used)] // Tests may unwrap: a panic is a failure with its reason.

#[allow(dead_code)]
#[path = "agent/fixtures.rs"]
mod fixtures;

#[path = "defects/projects.rs"]
mod projects;

#[path = "defects/agent.rs"]
mod agent;

#[path = "defects/progress.rs"]
mod progress;

#[path = "defects/registry.rs"]
mod registry;

#[path = "defects/bearer.rs"]
mod bearer;

#[path = "defects/values.rs"]
mod values;

#[path = "defects/fresh.rs"]
mod fresh;

#[path = "defects/sixth.rs"]
mod sixth;

#[path = "defects/seventh.rs"]
mod seventh;

#[path = "defects/eighth.rs"]
mod eighth;

use pallas_reference::defects;

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Exclusive use of the process-wide defect set; resets it when dropped.
pub struct Defects(#[allow(dead_code)] tokio::sync::MutexGuard<'static, ()>);

impl Defects {
    /// Waits for its turn, with no defect active.
    pub async fn take() -> Self {
        let guard = SERIAL.lock().await;
        defects::set(&[]);
        Self(guard)
    }

    /// The same, from a test that is not async.
    pub fn take_blocking() -> Self {
        let guard = SERIAL.blocking_lock();
        defects::set(&[]);
        Self(guard)
    }

    /// Makes exactly `names` active.
    pub fn set(&self, names: &[&'static str]) {
        defects::set(names);
    }
}

impl Drop for Defects {
    fn drop(&mut self) {
        defects::set(&[]);
    }
}

#[test]
fn every_known_defect_is_proven_here_or_by_the_e2e_matrix() {
    let sources = [
        include_str!("defects/agent.rs"),
        include_str!("defects/progress.rs"),
        include_str!("defects/registry.rs"),
        include_str!("defects/bearer.rs"),
        include_str!("defects/values.rs"),
        include_str!("defects/fresh.rs"),
        include_str!("defects/sixth.rs"),
        include_str!("defects/seventh.rs"),
        include_str!("defects/eighth.rs"),
    ]
    .concat();
    // A defect whose effect shows only on the wire (a log line, a metric value, a probe) may be
    // proven by the end-to-end matrix instead: its trial runs the reference with the defect and
    // fails unless the named checks report it.
    let matrix = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/defects.yaml"),
    )
    .expect("tests/defects.yaml");
    // A contract mutant is held by its row of tests/mutants.yaml (caught, or a survivor with its
    // reason), which the e2e `generated` test runs.
    let mutants = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mutants.yaml"),
    )
    .expect("tests/mutants.yaml");
    let untested: Vec<&str> = defects::KNOWN
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| {
            !sources.contains(&format!("&[\"{name}\"]"))
                && !matrix.contains(&format!("- name: {name}\n"))
                && !mutants.contains(&format!("    defect: {name}\n"))
        })
        .collect();
    assert!(
        untested.is_empty(),
        "defects proven neither by a test here nor by a row of tests/defects.yaml or tests/mutants.yaml: {untested:?}"
    );
}

#[test]
fn every_known_defect_is_documented() {
    let doc = include_str!("../DEFECTS.md");
    let missing: Vec<&str> = defects::KNOWN
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "defects missing from DEFECTS.md: {missing:?}"
    );
}

#[test]
fn an_unknown_defect_stops_pallas_with_exit_code_2_listing_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pallas"))
        .current_dir(dir.path())
        .env("PALLAS_DEFECTS", "log-bearer,no-such-defect")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown defect `no-such-defect`"),
        "{stderr}"
    );
    // The help text is wrapped at the terminal width, possibly inside a name.
    let unwrapped: String = stderr.split_whitespace().collect();
    assert!(unwrapped.contains("bearer-to-all-servers"), "{stderr}");
}
