//! What the implementation left behind, as `process` and `file` steps observe it: its process's
//! exit state and output, and a file it wrote; with their JSON faces.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::log_format::LogFormat;

/// What the process left behind.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ProcessOutput {
    /// Tail of stdout.
    pub stdout: String,
    /// Tail of stderr.
    pub stderr: String,
    /// Exit status as text (`exit status: 0`, `signal: 15 (SIGTERM)`), if it exited.
    pub exit: Option<String>,
    /// Exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// How the target's JSON log records read (for `stdout_lines`, `stderr_lines`).
    #[serde(skip)]
    pub log_format: LogFormat,
}

impl ProcessOutput {
    /// The output of a `process` step: `{running, exit_code, exit, stdout, stderr, stdout_lines,
    /// stderr_lines}` (`*_lines`: each non-empty line parsed as JSON, `null` when it is not JSON).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "running": self.exit.is_none(),
            "exit_code": self.exit_code,
            "exit": self.exit,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "stdout_lines": self.log_format.lines(&self.stdout),
            "stderr_lines": self.log_format.lines(&self.stderr),
        })
    }
}

/// A file the implementation wrote, as a `file` step read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// Its path.
    pub path: PathBuf,
    /// Whether it exists.
    pub exists: bool,
    /// Its text, when it could be read as UTF-8.
    pub text: Option<String>,
    /// How the target's JSON log records read (for `lines`).
    pub log_format: LogFormat,
    /// Its size when only its metadata was read ([`FileRead::stat`]).
    pub stat_size: Option<u64>,
}

impl FileRead {
    /// Reads `path`.
    pub fn read(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).ok();
        Self {
            path: path.to_owned(),
            exists: text.is_some() || path.exists(),
            text,
            log_format: LogFormat::default(),
            stat_size: None,
        }
    }

    /// Reads only whether `path` exists and its size (a large file, e.g. a rotated log).
    pub fn stat(path: &Path) -> Self {
        let meta = std::fs::metadata(path).ok();
        Self {
            path: path.to_owned(),
            exists: meta.is_some(),
            text: None,
            log_format: LogFormat::default(),
            stat_size: meta.map(|m| m.len()),
        }
    }

    /// The same, its JSON records read as `format` says.
    pub fn with_format(mut self, format: LogFormat) -> Self {
        self.log_format = format;
        self
    }

    /// The output of a `file` step: `{path, exists, size, text, lines}` (`lines`: each
    /// non-empty line parsed as JSON, `null` when it is not JSON).
    pub fn to_json(&self) -> serde_json::Value {
        let path = self.path.display().to_string();
        match &self.text {
            Some(text) => serde_json::json!({
                "path": path,
                "exists": true,
                "size": text.len(),
                "lines": self.log_format.lines(text),
                "text": text,
            }),
            None => serde_json::json!({
                "path": path,
                "exists": self.exists,
                "size": self.stat_size.unwrap_or(0),
                "lines": [],
                "text": "",
            }),
        }
    }
}
