//! Paths shared by the tests.

use std::path::PathBuf;

pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn scenarios_dir() -> PathBuf {
    workspace().join("scenarios")
}
