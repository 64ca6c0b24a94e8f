//! How a rendered deployment is launched and probed: the command line (with the per-run
//! arguments placed where the profile says), the environment, the readiness probes.

use std::collections::BTreeMap;
use std::path::Path;

use super::Target;
use crate::process::{LaunchSpec, ReadinessProbe};
use crate::scenario::template::{TemplateError, Vars, render};
use crate::scenario::{DeploymentSpec, Readiness};

/// The template of the deployment's per-run arguments (`deployment.args`, e.g. `--agent NAME`).
pub const RUN_ARGS: &str = "{{run.args}}";

/// How to launch the implementation: the profile's command and environment, rendered, with
/// the deployment's own arguments, environment and unset variables.
pub(super) fn launch_spec(
    target: &Target,
    deployment: &DeploymentSpec,
    vars: &Vars,
    run_dir: &Path,
) -> Result<LaunchSpec, TemplateError> {
    let mut env_vars = vars.clone();
    let mut env: Vec<(String, String)> = Vec::new();
    for (k, v) in target.spec.env.iter().chain(deployment.env.iter()) {
        env.push((k.clone(), render(v, &env_vars)?));
    }
    for (k, v) in &target.env_overrides {
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), render(v, &env_vars)?));
    }
    env.retain(|(n, _)| !deployment.unset_env.contains(n));
    env_vars.clear();
    let command = command_line(&target.spec.command, &deployment.args, vars)?;
    let (program, args) = command
        .split_first()
        .map(|(p, a)| (p.clone(), a.to_vec()))
        .unwrap_or_default();
    Ok(LaunchSpec {
        program,
        args,
        cwd: run_dir.to_path_buf(),
        env,
        env_remove: deployment.unset_env.clone(),
        log_dir: run_dir.join("logs"),
    })
}

/// The profile's readiness probes the deployment asks for, rendered (per agent where a probe
/// is `each_agent`).
pub(super) fn readiness_probes(
    target: &Target,
    deployment: &DeploymentSpec,
    vars: &Vars,
    agent_urls: &BTreeMap<String, String>,
    agent_ports: &BTreeMap<String, u16>,
) -> Result<Vec<ReadinessProbe>, TemplateError> {
    let mut probes = Vec::new();
    for p in &target.spec.readiness {
        match deployment.ready {
            Readiness::All => {}
            Readiness::Agents if p.each_agent => {}
            Readiness::Agents | Readiness::None => continue,
        }
        let agents: Vec<Option<&String>> = if p.each_agent {
            deployment
                .agents
                .keys()
                .filter(|a| {
                    deployment.ready_agents.is_empty() || deployment.ready_agents.contains(a)
                })
                .map(Some)
                .collect()
        } else {
            vec![None]
        };
        for agent in agents {
            let mut v = vars.clone();
            if let Some(a) = agent {
                v.insert("agent.name".into(), a.clone());
                v.insert(
                    "agent.url".into(),
                    agent_urls.get(a).cloned().unwrap_or_default(),
                );
                v.insert(
                    "agent.port".into(),
                    agent_ports.get(a).map(u16::to_string).unwrap_or_default(),
                );
            }
            if let Some(u) = &p.http_get {
                probes.push(ReadinessProbe::HttpGet {
                    url: render(u, &v)?,
                });
            }
            if let Some(u) = &p.mcp_initialize {
                probes.push(ReadinessProbe::McpInitialize {
                    url: render(u, &v)?,
                });
            }
            if let Some(u) = &p.tcp {
                probes.push(ReadinessProbe::Tcp {
                    addr: render(u, &v)?,
                });
            }
        }
    }
    Ok(probes)
}

/// The command line: the profile's command with the deployment's per-run arguments placed
/// where it says. An element that is exactly `{{run.args}}` becomes those arguments; inside a
/// longer element (a `sh -c` script) `{{run.args}}` is the arguments shell-quoted; a command
/// that names `{{run.args}}` nowhere gets them appended.
pub(crate) fn command_line(
    command: &[String],
    args: &[String],
    vars: &Vars,
) -> Result<Vec<String>, crate::scenario::template::TemplateError> {
    let args: Vec<String> = args
        .iter()
        .map(|a| render(a, vars))
        .collect::<Result<_, _>>()?;
    let quoted = args
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let placed = command.iter().any(|c| c.contains(RUN_ARGS));
    let mut out = Vec::new();
    for c in command {
        if c == RUN_ARGS {
            out.extend(args.iter().cloned());
        } else {
            let pieces: Vec<String> = c
                .split(RUN_ARGS)
                .map(|p| render(p, vars))
                .collect::<Result<_, _>>()?;
            out.push(pieces.join(&quoted));
        }
    }
    if !placed {
        out.extend(args);
    }
    Ok(out)
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./=:@%+-,".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod run_args_tests {
    use super::*;

    #[test]
    fn run_args_are_placed_where_the_profile_says_or_appended() {
        let vars = Vars::new();
        let args = vec!["--agent".to_owned(), "it's".to_owned()];
        let cmd = |c: &[&str]| c.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let line = command_line(
            &cmd(&["sh", "-c", "exec serve {{run.args}} --x"]),
            &args,
            &vars,
        );
        assert_eq!(
            line.ok(),
            Some(cmd(&["sh", "-c", "exec serve --agent 'it'\\''s' --x"]))
        );
        let line = command_line(&cmd(&["serve", "{{run.args}}", "--x"]), &args, &vars);
        assert_eq!(line.ok(), Some(cmd(&["serve", "--agent", "it's", "--x"])));
        let line = command_line(&cmd(&["serve"]), &args, &vars);
        assert_eq!(line.ok(), Some(cmd(&["serve", "--agent", "it's"])));
    }
}
