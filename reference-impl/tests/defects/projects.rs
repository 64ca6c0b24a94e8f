//! Projects on disk for the defect proofs: an `agents.yaml`, a `fastagent.config.yaml` and agent
//! cards written to a temporary folder, loaded the way `pallas` loads them.

use std::collections::HashMap;
use std::path::Path;

use pallas_reference::config::{self, Deployment, LoadOptions};
use pallas_reference::registry::PublishedAgent;

pub fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project whose `agents.yaml` is `agents` and whose `fastagent.config.yaml` is `fastagent`;
/// each `(key, front matter)` of `cards` is written as `agents/<key>.md`.
pub fn project(agents: &str, cards: &[(&str, &str)], fastagent: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "agents.yaml", agents);
    write(dir.path(), "fastagent.config.yaml", fastagent);
    for (key, front) in cards {
        write(
            dir.path(),
            &format!("agents/{key}.md"),
            &format!("---\nname: {key}\n{front}---\nDo {key} things.\n"),
        );
    }
    dir
}

/// `agents.yaml` of `my-project` with one agent `research` on port 0.
pub const ONE_AGENT: &str = "name: my-project\nnamespace: com.example.project\nregistry_port: 0\nagents:\n  research:\n    module: agents.research\n    port: 0\n";

/// Two agents, `jarvis` depending on `research`.
pub const TWO_AGENTS: &str = "name: my-project\nnamespace: com.example.project\nregistry_port: 0\nagents:\n  research:\n    module: agents.research\n    port: 0\n  jarvis:\n    module: agents.jarvis\n    port: 0\n    depends_on: [research]\n";

pub const NO_SERVERS: &str = "servers: []\n";

/// The deployment in `dir`, loaded with `env` as the environment.
pub fn load_with(dir: &Path, env: &[(&str, &str)]) -> Deployment {
    let env: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    config::load(
        dir,
        &LoadOptions {
            agents_config: None,
            env: Some(env),
        },
    )
    .unwrap()
}

/// The deployment in `dir`, loaded with an empty environment.
pub fn load(dir: &Path) -> Deployment {
    load_with(dir, &[])
}

/// The registry entry of agent `i` of `d`, published on port 8250.
pub fn published(d: &Deployment, i: usize) -> PublishedAgent {
    PublishedAgent::new(
        &d.agents[i],
        &d.namespace,
        &d.version,
        &d.host,
        8250,
        d.publish_capabilities,
    )
}
