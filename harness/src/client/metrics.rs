//! Scraping `/metrics` and parsing the Prometheus text exposition format (0.0.4): `# HELP`,
//! `# TYPE`, samples with labels, histogram and summary suffixes. Unreadable lines are kept as
//! parse errors with their line number instead of failing the whole scrape, because a
//! conformance report must say which line broke.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ClientError, WireClient};

/// One sample line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The sample name (`pallas_send_message_duration_seconds_bucket`).
    pub name: String,
    /// Labels, sorted by name.
    pub labels: BTreeMap<String, String>,
    /// The value (`+Inf`, `-Inf` and `NaN` included).
    pub value: f64,
}

/// A metric family: the samples sharing one base name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricFamily {
    /// Base name (`pallas_send_message_duration_seconds`).
    pub name: String,
    /// `counter`, `gauge`, `histogram`, `summary`, `untyped`.
    pub kind: String,
    /// The `# HELP` text, if any.
    pub help: Option<String>,
    /// Samples in the order they appeared.
    pub samples: Vec<Sample>,
}

/// What a scrape returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsScrape {
    /// URL scraped.
    pub url: String,
    /// HTTP status.
    pub status: u16,
    /// Response `Content-Type`.
    pub content_type: Option<String>,
    /// The body.
    pub text: String,
    /// The families, in order of first appearance.
    pub families: Vec<MetricFamily>,
    /// `line N: problem` for every line that could not be read.
    pub parse_errors: Vec<String>,
}

impl MetricsScrape {
    /// The family of that name.
    pub fn family(&self, name: &str) -> Option<&MetricFamily> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The samples named `name` whose labels include every pair of `labels`.
    pub fn samples<'a>(
        &'a self,
        name: &'a str,
        labels: &'a [(&'a str, &'a str)],
    ) -> impl Iterator<Item = &'a Sample> + 'a {
        self.families
            .iter()
            .flat_map(|f| f.samples.iter())
            .filter(move |s| {
                s.name == name
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
    }

    /// The value of the single sample matching `name` and `labels`, if exactly one matches.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut it = self.samples(name, labels);
        let first = it.next()?;
        it.next().is_none().then_some(first.value)
    }
}

/// `GET`s a metrics endpoint (`/metrics` is appended to a URL without a path), recorded under
/// label `metrics`.
pub async fn scrape_metrics(client: &WireClient, url: &str) -> Result<MetricsScrape, ClientError> {
    scrape_metrics_with_timeout(client, url, None).await
}

/// [`scrape_metrics`] with an explicit deadline.
pub async fn scrape_metrics_with_timeout(
    client: &WireClient,
    url: &str,
    timeout: Option<Duration>,
) -> Result<MetricsScrape, ClientError> {
    let url = metrics_url(url);
    let exchange = client
        .get_bounded(
            "metrics",
            &url,
            vec![("accept".to_owned(), "text/plain".to_owned())],
            timeout,
            client.limits().metrics_bytes(),
        )
        .await?;
    if exchange.timed_out {
        return Err(ClientError::Timeout {
            url,
            after_ms: timeout.unwrap_or(client.default_timeout()).as_millis() as u64,
        });
    }
    let text = exchange.body_text.clone().unwrap_or_default();
    let (families, parse_errors) = parse_prometheus_text(&text);
    Ok(MetricsScrape {
        url,
        status: exchange.status,
        content_type: exchange.content_type,
        text,
        families,
        parse_errors,
    })
}

fn metrics_url(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    match after_scheme.find('/') {
        None => format!("{url}/metrics"),
        Some(i) if &after_scheme[i..] == "/" => format!("{}metrics", url),
        Some(_) => url.to_owned(),
    }
}

/// Parses the text exposition format into families plus `line N: …` errors.
pub fn parse_prometheus_text(text: &str) -> (Vec<MetricFamily>, Vec<String>) {
    let mut families: Vec<MetricFamily> = Vec::new();
    let mut errors = Vec::new();
    let family_index = |families: &mut Vec<MetricFamily>, name: &str| -> usize {
        if let Some(i) = families.iter().position(|f| f.name == name) {
            return i;
        }
        families.push(MetricFamily {
            name: name.to_owned(),
            kind: "untyped".to_owned(),
            help: None,
            samples: Vec::new(),
        });
        families.len() - 1
    };
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim_start();
            let mut parts = comment.splitn(3, char::is_whitespace);
            match (parts.next(), parts.next(), parts.next()) {
                (Some("HELP"), Some(name), help) => {
                    let i = family_index(&mut families, name);
                    families[i].help = Some(unescape_help(help.unwrap_or("")));
                }
                (Some("TYPE"), Some(name), Some(kind)) => {
                    let kind = kind.trim();
                    if !matches!(
                        kind,
                        "counter" | "gauge" | "histogram" | "summary" | "untyped"
                    ) {
                        errors.push(format!("line {line_no}: unknown metric type `{kind}`"));
                    }
                    let i = family_index(&mut families, name);
                    if !families[i].samples.is_empty() {
                        errors.push(format!(
                            "line {line_no}: TYPE for `{name}` after its samples"
                        ));
                    }
                    families[i].kind = kind.to_owned();
                }
                (Some("TYPE"), _, _) => {
                    errors.push(format!("line {line_no}: TYPE line without a type"));
                }
                _ => {} // other comments
            }
            continue;
        }
        match parse_sample(line) {
            Ok(sample) => {
                let base = family_name(&families, &sample.name);
                let i = family_index(&mut families, &base);
                families[i].samples.push(sample);
            }
            Err(e) => errors.push(format!("line {line_no}: {e}: `{raw}`")),
        }
    }
    (families, errors)
}

/// The family a sample belongs to: its own name, or the declared histogram/summary/counter
/// whose name it extends with `_bucket`, `_sum`, `_count`, `_total` or `_created`.
fn family_name(families: &[MetricFamily], sample: &str) -> String {
    for suffix in ["_bucket", "_sum", "_count", "_total", "_created"] {
        if let Some(base) = sample.strip_suffix(suffix)
            && families
                .iter()
                .any(|f| f.name == base && f.kind != "untyped" && f.kind != "gauge")
        {
            return base.to_owned();
        }
    }
    sample.to_owned()
}

fn unescape_help(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Why a sample line of the text exposition format does not parse.
#[derive(Debug, thiserror::Error)]
enum SampleError {
    #[error("invalid metric name")]
    Name,
    #[error("missing value")]
    MissingValue,
    #[error("invalid value `{0}`")]
    Value(String),
    #[error("invalid timestamp `{0}`")]
    Timestamp(String),
    #[error("trailing text after the timestamp")]
    Trailing,
    #[error("invalid label name")]
    LabelName,
    #[error("expected `=` after label `{0}`")]
    LabelEquals(String),
    #[error("label `{0}` value must be quoted")]
    LabelUnquoted(String),
    #[error("invalid escape `\\{0}`")]
    Escape(char),
    #[error("unterminated value of label `{0}`")]
    Unterminated(String),
    #[error("duplicate label `{0}`")]
    DuplicateLabel(String),
    #[error("expected `,` or `}}` in labels")]
    LabelSeparator,
}

fn parse_sample(line: &str) -> Result<Sample, SampleError> {
    let name_end = line
        .char_indices()
        .find(|(_, c)| !is_name_char(*c))
        .map_or(line.len(), |(i, _)| i);
    let name = &line[..name_end];
    if name.is_empty() || !name.starts_with(is_name_start) {
        return Err(SampleError::Name);
    }
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after_brace) = rest.strip_prefix('{') {
        let (parsed, remaining) = parse_labels(after_brace)?;
        labels = parsed;
        rest = remaining;
    }
    let mut fields = rest.split_whitespace();
    let value_text = fields.next().ok_or(SampleError::MissingValue)?;
    let value = parse_value(value_text).ok_or_else(|| SampleError::Value(value_text.to_owned()))?;
    if let Some(ts) = fields.next()
        && ts.parse::<i64>().is_err()
    {
        return Err(SampleError::Timestamp(ts.to_owned()));
    }
    if fields.next().is_some() {
        return Err(SampleError::Trailing);
    }
    Ok(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

fn parse_labels(mut s: &str) -> Result<(BTreeMap<String, String>, &str), SampleError> {
    let mut labels = BTreeMap::new();
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix('}') {
            return Ok((labels, rest));
        }
        let end = s
            .char_indices()
            .find(|(_, c)| !is_name_char(*c))
            .map_or(s.len(), |(i, _)| i);
        let name = &s[..end];
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(SampleError::LabelName);
        }
        s = s[end..].trim_start();
        s = s
            .strip_prefix('=')
            .ok_or_else(|| SampleError::LabelEquals(name.to_owned()))?
            .trim_start();
        s = s
            .strip_prefix('"')
            .ok_or_else(|| SampleError::LabelUnquoted(name.to_owned()))?;
        let mut value = String::new();
        let mut chars = s.char_indices();
        let mut closed = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, other)) => return Err(SampleError::Escape(other)),
                    None => break,
                },
                '"' => {
                    closed = Some(i);
                    break;
                }
                other => value.push(other),
            }
        }
        let close = closed.ok_or_else(|| SampleError::Unterminated(name.to_owned()))?;
        if labels.insert(name.to_owned(), value).is_some() {
            return Err(SampleError::DuplicateLabel(name.to_owned()));
        }
        s = s[close + 1..].trim_start();
        if let Some(rest) = s.strip_prefix(',') {
            s = rest;
        } else if !s.starts_with('}') {
            return Err(SampleError::LabelSeparator);
        }
    }
}

fn parse_value(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        other => other.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each malformed sample line is reported with its line number, what is wrong and the line.
    #[test]
    fn a_malformed_sample_line_says_what_is_wrong_with_it() {
        let text = "a{x=\"1\\q\"} 1\nb{x=\"1\",x=\"2\"} 1\nc\nd{x=\"1} 1\ne 1 later\n9f 1\n";
        let (_, errors) = parse_prometheus_text(text);
        assert_eq!(
            errors,
            [
                "line 1: invalid escape `\\q`: `a{x=\"1\\q\"} 1`",
                "line 2: duplicate label `x`: `b{x=\"1\",x=\"2\"} 1`",
                "line 3: missing value: `c`",
                "line 4: unterminated value of label `x`: `d{x=\"1} 1`",
                "line 5: invalid timestamp `later`: `e 1 later`",
                "line 6: invalid metric name: `9f 1`",
            ]
        );
    }

    const TEXT: &str = r#"# HELP pallas_up 1 while the process runs
# TYPE pallas_up gauge
pallas_up 1
# HELP pallas_send_message_total send_message calls
# TYPE pallas_send_message_total counter
pallas_send_message_total{agent="harper",outcome="ok"} 3
# TYPE pallas_send_message_duration_seconds histogram
pallas_send_message_duration_seconds_bucket{agent="harper",le="0.5"} 1
pallas_send_message_duration_seconds_bucket{agent="harper",le="+Inf"} 3
pallas_send_message_duration_seconds_sum{agent="harper"} 2.5
pallas_send_message_duration_seconds_count{agent="harper"} 3
weird{a="x\"y\\z"} NaN 1700000000000
"#;

    #[test]
    fn families_group_histogram_suffixes_under_their_base_name() {
        let (families, errors) = parse_prometheus_text(TEXT);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "pallas_up",
                "pallas_send_message_total",
                "pallas_send_message_duration_seconds",
                "weird"
            ]
        );
        assert_eq!(families[2].kind, "histogram");
        assert_eq!(families[2].samples.len(), 4);
        assert_eq!(families[2].samples[1].labels["le"], "+Inf");
        assert_eq!(families[2].samples[1].value, 3.0);
        assert_eq!(parse_value("+Inf"), Some(f64::INFINITY));
        assert_eq!(families[3].samples[0].labels["a"], "x\"y\\z");
        assert!(families[3].samples[0].value.is_nan());
    }

    #[test]
    fn unreadable_lines_are_reported_with_their_line_number() {
        let (families, errors) = parse_prometheus_text("ok 1\nbad{a=1} 2\nnovalue\n");
        assert_eq!(families.len(), 1);
        assert_eq!(errors.len(), 2);
        assert!(
            errors[0].starts_with("line 2: label `a` value must be quoted"),
            "{errors:?}"
        );
        assert!(errors[1].starts_with("line 3: missing value"), "{errors:?}");
    }

    #[test]
    fn metrics_path_is_added_only_to_bare_hosts() {
        assert_eq!(metrics_url("http://h:1"), "http://h:1/metrics");
        assert_eq!(metrics_url("http://h:1/"), "http://h:1/metrics");
        assert_eq!(metrics_url("http://h:1/custom"), "http://h:1/custom");
    }
}
