//! `pallas-conformance init`: writes a commented target profile for a bridge started by a
//! command (seed 001's Python Pallas layout by default) and prints the next commands.

use std::io::Write;
use std::path::PathBuf;

use crate::exit;

/// The commented profile; `__NAME__`, `__COMMAND__` and `__FILE__` are filled in.
const TEMPLATE: &str = include_str!("profile.yaml");

/// `init` arguments.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Where to write the profile.
    #[arg(default_value = "pallas-target.yaml")]
    pub file: PathBuf,
    /// The target's name in reports.
    #[arg(long, default_value = "my-pallas")]
    pub name: String,
    /// The command that starts the bridge in its deployment directory, as one shell-like line
    /// split on whitespace (default: seed 001's `python -m pallas.server`).
    #[arg(long, default_value = "python -m pallas.server")]
    pub command: String,
    /// Replace the file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// The profile text for these arguments.
pub fn render(args: &InitArgs) -> String {
    let command: Vec<String> = args
        .command
        .split_whitespace()
        .map(|w| serde_json::Value::String(w.to_owned()).to_string())
        .collect();
    TEMPLATE
        .replace("__NAME__", &args.name)
        .replace("__COMMAND__", &format!("[{}]", command.join(", ")))
        .replace("__FILE__", &args.file.display().to_string())
}

/// Runs `init`; returns the exit code.
pub fn run(args: &InitArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    if args.command.split_whitespace().next().is_none() {
        let _ = writeln!(err, "error: --command is empty");
        return exit::INVALID_INPUT;
    }
    if args.file.exists() && !args.force {
        let _ = writeln!(
            err,
            "error: {} exists; --force replaces it",
            args.file.display()
        );
        return exit::INVALID_INPUT;
    }
    let text = render(args);
    // The profile written must load: a template mistake is the kit's, not the user's.
    if let Err(e) = crate::target::parse_str(&args.file.display().to_string(), &text) {
        let _ = write!(err, "{}", e.render_plain());
        return exit::HARNESS_ERROR;
    }
    let written = args
        .file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&args.file, text));
    if let Err(e) = written {
        let _ = writeln!(err, "error: cannot write {}: {e}", args.file.display());
        return exit::HARNESS_ERROR;
    }
    let f = args.file.display();
    let _ = writeln!(
        out,
        "wrote {f}: a target profile for `{}`; edit the command, files and capabilities to match your bridge.\n\nnext:\n  pallas-conformance validate --target {f}\n  pallas-conformance run --target {f} --junit junit.xml --html report.html",
        args.command
    );
    exit::SUCCESS
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn args(file: PathBuf) -> InitArgs {
        InitArgs {
            file,
            name: "mine".into(),
            command: "python -m pallas.server".into(),
            force: false,
        }
    }

    #[test]
    fn the_profile_loads_claims_the_seed_layout_and_is_not_overwritten_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.yaml");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(&args(file.clone()), &mut out, &mut err), exit::SUCCESS);
        let t = crate::target::load(&file).unwrap();
        assert_eq!(t.spec.name, "mine");
        assert_eq!(t.spec.command, ["python", "-m", "pallas.server"]);
        assert!(t.spec.files.iter().any(|f| f.path == "agents.yaml"));
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains(&format!("run --target {}", file.display())),
            "{out}"
        );

        std::fs::write(&file, "mine").unwrap();
        let mut err = Vec::new();
        assert_eq!(
            run(&args(file.clone()), &mut Vec::new(), &mut err),
            exit::INVALID_INPUT
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
        let mut forced = args(file.clone());
        forced.force = true;
        assert_eq!(
            run(&forced, &mut Vec::new(), &mut Vec::new()),
            exit::SUCCESS
        );
        assert!(crate::target::load(&file).is_ok());
    }
}
