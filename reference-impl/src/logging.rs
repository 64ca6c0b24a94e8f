//! JSON logs through `tracing`, configured by the `PALLAS_LOG_*` variables (seed 001, "Logging
//! configuration knobs"): a size-rotated file sink that is always on, an optional stderr sink,
//! dependencies kept at WARN, and a last-line redaction of bearer tokens and known secrets.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use regex::Regex;
use tracing::Level;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Size at which the log file rotates.
pub const ROTATE_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept (`pallas.log.1` … `pallas.log.5`).
pub const ROTATE_KEEP: usize = 5;

/// Dependencies pinned at WARN unless `PALLAS_ROOT_LOG_LEVEL` asks otherwise.
const DEPENDENCIES: &[&str] = &[
    "rmcp",
    "hyper",
    "hyper_util",
    "h2",
    "reqwest",
    "tower",
    "tower_http",
    "axum",
    "mio",
];

/// Resolved logging knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// Level of Pallas's own logs (`PALLAS_LOG_LEVEL`, else `logger.level`, else INFO).
    pub level: Level,
    /// Level of everything else (`PALLAS_ROOT_LOG_LEVEL`, else the less verbose of `level` and INFO).
    pub root_level: Level,
    /// Whether `PALLAS_ROOT_LOG_LEVEL` was given (then dependencies are not pinned at WARN).
    pub root_explicit: bool,
    /// Also log to stderr (`PALLAS_LOG_STDERR`).
    pub stderr: bool,
    /// Rotating log file (`PALLAS_LOG_FILE`, default `~/.local/state/pallas/pallas.log`).
    pub file: Option<PathBuf>,
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// A level name is not a level.
    #[error("{variable}: `{value}` is not a log level (use trace, debug, info, warn or error)")]
    Level {
        /// Where it came from.
        variable: &'static str,
        /// The value.
        value: String,
    },
    /// The log file cannot be opened.
    #[error("cannot open the log file {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

fn parse_level(variable: &'static str, value: &str) -> Result<Level, LoggingError> {
    // `ms-log-level-case-sensitive`: `logging._nameToLevel.get(value, logging.INFO)`.
    if crate::defect!("ms-log-level-case-sensitive") {
        return Ok(match value {
            "DEBUG" => Level::DEBUG,
            "WARNING" | "WARN" => Level::WARN,
            "ERROR" | "CRITICAL" | "FATAL" => Level::ERROR,
            _ => Level::INFO,
        });
    }
    match value.trim().to_ascii_lowercase().as_str() {
        "trace" => Ok(Level::TRACE),
        "debug" => Ok(Level::DEBUG),
        "info" => Ok(Level::INFO),
        "warn" | "warning" => Ok(Level::WARN),
        "error" | "critical" => Ok(Level::ERROR),
        _ => Err(LoggingError::Level {
            variable,
            value: value.to_owned(),
        }),
    }
}

impl LogSettings {
    /// Reads the knobs from `var` (the environment) and `logger.level` of the config.
    pub fn from_lookup(
        var: impl Fn(&str) -> Option<String>,
        config_level: Option<&str>,
    ) -> Result<Self, LoggingError> {
        let env_level = var("PALLAS_LOG_LEVEL");
        // `qx-empty-log-level-env-counts-as-set`: `'PALLAS_LOG_LEVEL' in os.environ`, so an empty
        // assignment is a value, the INFO default, and `logger.level` is not consulted.
        let empty_counts = env_level.as_deref().is_some_and(str::is_empty)
            && crate::defect!("qx-empty-log-level-env-counts-as-set");
        let env_level = env_level
            .filter(|v| !v.is_empty())
            .filter(|_| !crate::defect!("log-level-env-ignored"))
            .filter(|v| {
                !(crate::defect!("log-level-lowercase-only") && v.chars().any(char::is_uppercase))
            });
        let level = match (env_level, config_level) {
            _ if empty_counts => Level::INFO,
            (Some(_), Some(c)) if crate::defect!("log-config-level-wins") => {
                parse_level("logger.level", c)?
            }
            (Some(v), _) => parse_level("PALLAS_LOG_LEVEL", &v)?,
            (None, Some(v)) => parse_level("logger.level", v)?,
            (None, None) => Level::INFO,
        };
        let root = var("PALLAS_ROOT_LOG_LEVEL")
            .filter(|v| !v.is_empty())
            .filter(|_| !crate::defect!("root-log-level-env-ignored"));
        let root_explicit = root.is_some();
        let root_level = match root {
            Some(v) => parse_level("PALLAS_ROOT_LOG_LEVEL", &v)?,
            // `Level` orders verbose > quiet; the less verbose of the two.
            None if crate::defect!("log-root-follows-pallas-level") => level,
            // `mr-root-log-level-info`: "third-party libraries stay at INFO", whatever Pallas's level.
            None if crate::defect!("mr-root-log-level-info") => Level::INFO,
            // `qx-root-level-min-not-max`: `min(pallas_level, logging.INFO)` of Python's numbers,
            // the more verbose of the two.
            None if crate::defect!("qx-root-level-min-not-max") => level.max(Level::INFO),
            None => level.min(Level::INFO),
        };
        let stderr = crate::defect!("log-stderr-always")
            || var("PALLAS_LOG_STDERR")
                .filter(|_| !crate::defect!("log-stderr-env-ignored"))
                .is_some_and(|v| {
                    // `px-stderr-flag-any-nonempty-value`: `if os.environ.get("PALLAS_LOG_STDERR")`.
                    if crate::defect!("px-stderr-flag-any-nonempty-value") {
                        return !v.is_empty();
                    }
                    !matches!(v.trim(), "" | "0" | "false" | "no" | "off")
                });
        let default_file = if crate::defect!("log-file-default-path") {
            ".local/share/pallas/pallas.log"
        } else {
            ".local/state/pallas/pallas.log"
        };
        // `ms-log-file-xdg-state-home`: `platformdirs.user_state_dir("pallas")`.
        let state_home = var("XDG_STATE_HOME")
            .filter(|v| !v.trim().is_empty())
            .filter(|_| crate::defect!("ms-log-file-xdg-state-home"));
        let file = match var("PALLAS_LOG_FILE")
            .filter(|v| !v.is_empty())
            .filter(|_| !crate::defect!("log-file-env-ignored"))
        {
            Some(p) => Some(PathBuf::from(p)),
            None if state_home.is_some() => {
                state_home.map(|s| Path::new(s.trim()).join("pallas/pallas.log"))
            }
            None => var("HOME").map(|h| Path::new(&h).join(default_file)),
        };
        let file = file.filter(|_| !(stderr && crate::defect!("log-file-off-with-stderr")));
        Ok(Self {
            level,
            root_level,
            root_explicit,
            stderr,
            file,
        })
    }

    /// Reads the knobs from the process environment.
    pub fn from_env(config_level: Option<&str>) -> Result<Self, LoggingError> {
        Self::from_lookup(|k| std::env::var(k).ok(), config_level)
    }

    /// The filter directives these settings stand for.
    pub fn filter(&self) -> EnvFilter {
        let mut directives = vec![
            self.root_level.as_str().to_ascii_lowercase(),
            format!(
                "pallas_reference={}",
                self.level.as_str().to_ascii_lowercase()
            ),
            format!("pallas={}", self.level.as_str().to_ascii_lowercase()),
        ];
        if !self.root_explicit && !crate::defect!("log-root-follows-pallas-level") {
            // `px-third-party-pins-at-info`: "third-party libraries stay at INFO".
            let pin = if crate::defect!("px-third-party-pins-at-info") {
                "info"
            } else {
                "warn"
            };
            directives.extend(DEPENDENCIES.iter().map(|d| format!("{d}={pin}")));
        }
        EnvFilter::new(directives.join(","))
    }
}

/// Installs the global subscriber. `secrets` are scrubbed from every line (as are bearer tokens).
pub fn init(settings: &LogSettings, secrets: Vec<String>) -> Result<(), LoggingError> {
    let redactor = Redactor::new(secrets);
    let file = match &settings.file {
        Some(path) => {
            let limit = if crate::defect!("log-rotate-20mb") {
                2 * ROTATE_BYTES
            } else if crate::defect!("log-rotate-1mb") {
                ROTATE_BYTES / 10
            } else {
                ROTATE_BYTES
            };
            let keep = if crate::defect!("log-backups-not-shifted") {
                1
            } else {
                ROTATE_KEEP
            };
            Some(RotatingFile::open(path, limit, keep)?)
        }
        None => None,
    };
    let writer = LogWriter {
        file: file.map(|f| Arc::new(Mutex::new(f))),
        stderr: settings.stderr,
        redactor: Arc::new(redactor),
        root_level: settings.root_level,
    };
    let layer = tracing_subscriber::fmt::layer()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_span_list(false)
        .with_writer(writer);
    // A second init (tests) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(settings.filter())
        .with(layer)
        .try_init();
    Ok(())
}

/// Scrubs secrets from log lines.
#[derive(Debug)]
pub struct Redactor {
    bearer: Option<Regex>,
    secrets: Vec<String>,
}

impl Redactor {
    /// Scrubs `Bearer <token>` and every value of `secrets` (values shorter than 4 are ignored).
    pub fn new(mut secrets: Vec<String>) -> Self {
        secrets.retain(|s| s.len() >= 4);
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self {
            bearer: Regex::new(r"(?i)(bearer\s+)[^\s\x22\\,;]+").ok(),
            secrets,
        }
    }

    /// The line with secrets replaced by `[redacted]`.
    pub fn redact(&self, line: &str) -> String {
        let mut out = match &self.bearer {
            Some(re) => re.replace_all(line, "${1}[redacted]").into_owned(),
            None => line.to_owned(),
        };
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[redacted]");
            }
        }
        out
    }
}

/// A log file that rotates by size: `pallas.log` → `pallas.log.1` → … → `pallas.log.{keep}`.
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    file: File,
    size: u64,
}

impl RotatingFile {
    /// Opens (appending) `path`, creating its directory.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> Result<Self, LoggingError> {
        let err = |source| LoggingError::File {
            path: path.to_path_buf(),
            source,
        };
        // `px-log-dir-not-created`: `RotatingFileHandler(path)` opened as it is.
        if let Some(dir) = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .filter(|_| !crate::defect!("px-log-dir-not-created"))
        {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(err)?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Self {
            path: path.to_path_buf(),
            max_bytes,
            keep,
            file,
            size,
        })
    }

    fn rotated(&self, n: usize) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        if self.keep == 0 {
            self.file = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&self.path)?;
        } else {
            let _ = std::fs::remove_file(self.rotated(self.keep));
            for n in (1..self.keep).rev() {
                let from = self.rotated(n);
                if from.exists() {
                    std::fs::rename(&from, self.rotated(n + 1))?;
                }
            }
            std::fs::rename(&self.path, self.rotated(1))?;
            self.file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
        }
        self.size = 0;
        Ok(())
    }

    /// Writes one whole record, rotating first when it would cross the size limit.
    pub fn write_record(&mut self, record: &[u8]) -> io::Result<()> {
        if self.size > 0 && self.size + record.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        self.file.write_all(record)?;
        self.size += record.len() as u64;
        Ok(())
    }
}

#[derive(Clone)]
struct LogWriter {
    file: Option<Arc<Mutex<RotatingFile>>>,
    stderr: bool,
    redactor: Arc<Redactor>,
    /// `px-file-sink-level-follows-root`: the level the file sink then keeps.
    root_level: Level,
}

/// One record being written: buffered, redacted and written whole on drop.
struct Record {
    target: LogWriter,
    buf: Vec<u8>,
}

impl Write for Record {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let line = self
            .target
            .redactor
            .redact(&seed_record(&String::from_utf8_lossy(&self.buf)));
        if let Some(file) = &self.target.file
            && let Ok(mut f) = file.lock()
        {
            let _ = f.write_record(line.as_bytes());
        }
        // `rx-stderr-handler-plain-text`: journald adds its own metadata, so stderr gets
        // `%(levelname)s %(name)s: %(message)s`; only the file keeps JSON.
        #[cfg(feature = "defects")]
        if self.target.stderr && crate::defect!("rx-stderr-handler-plain-text") {
            let text = crate::defects::plain_text_line(&line);
            let _ = io::stderr().lock().write_all(text.as_bytes());
            return;
        }
        if self.target.stderr {
            let _ = io::stderr().lock().write_all(line.as_bytes());
            // `ms-stderr-pallas-records-twice`: a stderr handler on `pallas` and on root, which
            // `pallas.*` records propagate to.
            if crate::defect!("ms-stderr-pallas-records-twice") && is_pallas_record(&line) {
                let _ = io::stderr().lock().write_all(line.as_bytes());
            }
        }
    }
}

/// `ms-stderr-pallas-records-twice`: whether a record's logger is `pallas` or `pallas.*`.
fn is_pallas_record(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .and_then(|record| {
            record
                .get("logger")
                .and_then(serde_json::Value::as_str)
                .map(|logger| logger == "pallas" || logger.starts_with("pallas."))
        })
        .unwrap_or(false)
}

/// A `tracing` JSON record rewritten in seed 001's record format (its `jq` line reads `.time`,
/// `.level`, `.logger`, `.message`): `timestamp` becomes `time`, the `target` becomes a dotted
/// `logger` (`pallas::health` → `pallas.health`, the crate `pallas_reference` → `pallas`), and the
/// level takes Python's names (`WARN` → `WARNING`, `TRACE` → `DEBUG`). Other fields follow.
/// A line that is not a JSON object is kept as it is.
pub fn seed_record(line: &str) -> String {
    let Ok(serde_json::Value::Object(mut rec)) = serde_json::from_str(line.trim_end()) else {
        return line.to_owned();
    };
    // `nx-log-keys-stdlib-names`: python-json-logger's default field names, those of the
    // stdlib format string (`asctime`, `levelname`, `name`).
    let (time_key, level_key, logger_key) = if crate::defect!("nx-log-keys-stdlib-names") {
        ("asctime", "levelname", "name")
    } else {
        ("time", "level", "logger")
    };
    let mut out = serde_json::Map::new();
    let time = rec.remove("timestamp").unwrap_or(serde_json::Value::Null);
    out.insert(time_key.into(), time);
    let level = match rec.remove("level").as_ref().and_then(|l| l.as_str()) {
        Some("WARN") => "WARNING".to_owned(),
        Some("TRACE") => "DEBUG".to_owned(),
        Some(l) => l.to_owned(),
        None => "INFO".to_owned(),
    };
    out.insert(level_key.into(), level.into());
    let target = rec
        .remove("target")
        .and_then(|t| t.as_str().map(str::to_owned))
        .unwrap_or_default();
    let logger = target.replace("::", ".");
    let logger = match logger.strip_prefix("pallas_reference") {
        Some(rest) => format!("pallas{rest}"),
        None => logger,
    };
    if crate::defect!("log-record-no-logger") {
        out.insert("target".into(), target.into());
    } else {
        out.insert(logger_key.into(), logger.into());
    }
    let message = rec.remove("message").unwrap_or(serde_json::Value::Null);
    out.insert("message".into(), message);
    for (k, v) in rec {
        out.entry(k).or_insert(v);
    }
    let mut text = serde_json::Value::Object(out).to_string();
    text.push('\n');
    text
}

impl<'a> MakeWriter<'a> for LogWriter {
    type Writer = Record;
    fn make_writer(&'a self) -> Record {
        Record {
            target: self.clone(),
            buf: Vec::with_capacity(256),
        }
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Record {
        let mut record = self.make_writer();
        // `px-file-sink-level-follows-root`: the file handler sits on the root logger with the
        // root level, so a record more verbose than that is not written to the file.
        if crate::defect!("px-file-sink-level-follows-root") && *meta.level() > self.root_level {
            record.target.file = None;
        }
        record
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn records_take_the_seeds_field_and_level_names() {
        let line = seed_record(
            "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"level\":\"WARN\",\"target\":\"pallas_reference::config\",\"message\":\"m\",\"variable\":\"X\"}\n",
        );
        assert_eq!(
            line,
            "{\"time\":\"2026-01-01T00:00:00Z\",\"level\":\"WARNING\",\"logger\":\"pallas.config\",\"message\":\"m\",\"variable\":\"X\"}\n"
        );
        let line =
            seed_record("{\"level\":\"TRACE\",\"target\":\"rmcp::service\",\"message\":\"x\"}");
        assert!(
            line.contains("\"level\":\"DEBUG\",\"logger\":\"rmcp.service\""),
            "{line}"
        );
        assert_eq!(seed_record("not json\n"), "not json\n");
    }

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn pallas_log_level_wins_over_logger_level_and_root_stays_at_info() {
        let s = LogSettings::from_lookup(lookup(&[("PALLAS_LOG_LEVEL", "debug")]), Some("error"))
            .unwrap();
        assert_eq!(s.level, Level::DEBUG);
        assert_eq!(s.root_level, Level::INFO);
        let s = LogSettings::from_lookup(lookup(&[]), Some("error")).unwrap();
        assert_eq!(s.level, Level::ERROR);
        assert_eq!(s.root_level, Level::ERROR);
        assert!(!s.stderr);
        assert!(s.filter().to_string().contains("rmcp=warn"));
    }

    #[test]
    fn explicit_root_level_unpins_dependencies() {
        let s = LogSettings::from_lookup(
            lookup(&[
                ("PALLAS_ROOT_LOG_LEVEL", "debug"),
                ("PALLAS_LOG_STDERR", "1"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(s.root_level, Level::DEBUG);
        assert!(s.stderr);
        assert!(!s.filter().to_string().contains("rmcp=warn"));
    }

    #[test]
    fn a_bad_level_is_an_error_naming_its_variable() {
        let e =
            LogSettings::from_lookup(lookup(&[("PALLAS_LOG_LEVEL", "loud")]), None).unwrap_err();
        assert!(e.to_string().contains("PALLAS_LOG_LEVEL"), "{e}");
    }

    #[test]
    fn the_log_file_defaults_under_local_state() {
        let s = LogSettings::from_lookup(lookup(&[("HOME", "/home/u")]), None).unwrap();
        assert_eq!(
            s.file.as_deref(),
            Some(Path::new("/home/u/.local/state/pallas/pallas.log"))
        );
    }

    #[test]
    fn bearer_tokens_and_known_secrets_are_redacted() {
        let r = Redactor::new(vec!["sk-test-key-123".into()]);
        let line = r#"{"authorization":"Bearer abc.def-ghi","key":"sk-test-key-123"}"#;
        let out = r.redact(line);
        assert!(!out.contains("abc.def-ghi"), "{out}");
        assert!(!out.contains("sk-test-key-123"), "{out}");
        assert!(out.contains("Bearer [redacted]"), "{out}");
    }

    #[test]
    fn the_file_rotates_by_size_and_keeps_five() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/pallas.log");
        let mut f = RotatingFile::open(&path, 100, 5).unwrap();
        for i in 0..40 {
            f.write_record(format!("{i:040}\n").as_bytes()).unwrap();
        }
        for n in 1..=5 {
            let rotated = dir.path().join(format!("logs/pallas.log.{n}"));
            let len = std::fs::metadata(&rotated).unwrap().len();
            assert!(len <= 100 && len > 0, "{n}: {len}");
        }
        assert!(!dir.path().join("logs/pallas.log.6").exists());
        assert!(std::fs::metadata(&path).unwrap().len() <= 100);
    }
}
