//! Semantic checks of a `pallas:` section beyond its shape, each reported at the offending key.

use std::collections::BTreeMap;
use std::time::Duration;

use super::spec::{HealthStatus, MockPallasSpec, PallasAgentSpec};
use crate::issue::{Ports, SpecIssue};
use crate::yaml::did_you_mean;

/// Where issues go.
struct Out<'a>(&'a mut Vec<SpecIssue>);

impl Out<'_> {
    fn add(&mut self, path: String, message: String, hint: Option<&str>) {
        self.0.push(SpecIssue::new(path, message, hint));
    }
}

/// Every problem of `spec`, whose keys sit under `base` (e.g. `pallas`).
pub(crate) fn validate_pallas(spec: &MockPallasSpec, base: &str) -> Vec<SpecIssue> {
    let mut issues = Vec::new();
    validate_pallas_into(spec, base, &mut Ports::default(), &mut issues);
    issues
}

/// Same, checking fixed ports against `ports` (the ecosystem's other mocks).
pub(crate) fn validate_pallas_into(
    spec: &MockPallasSpec,
    base: &str,
    ports: &mut Ports,
    issues: &mut Vec<SpecIssue>,
) {
    ports.check(spec.port, format!("{base}.port"), issues);
    let out = &mut Out(issues);
    if spec.namespace.is_empty()
        || !spec
            .namespace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
    {
        out.add(
            format!("{base}.namespace"),
            format!("`{}` is not a reverse-domain namespace", spec.namespace),
            Some("letters, digits, `.` and `-` only, e.g. `com.example.project`"),
        );
    }
    text_field(out, &format!("{base}.version"), Some(&spec.version), 255);
    if let Some(h) = &spec.host
        && (h.is_empty() || h.contains("://") || h.contains('/'))
    {
        out.add(
            format!("{base}.host"),
            format!("`{h}` is not a host name"),
            Some("a name only, e.g. `puck.incus`: the scheme and port come from the mock"),
        );
    }
    if spec.agents.is_empty() {
        out.add(
            format!("{base}.agents"),
            "a mock Pallas needs at least one agent".to_owned(),
            Some("e.g. `agents: {research: {}}`"),
        );
    }
    let mut slugs: BTreeMap<String, &str> = BTreeMap::new();
    for (key, a) in &spec.agents {
        let path = format!("{base}.agents.{key}");
        let slug = key.replace('_', "-");
        if slug.is_empty()
            || !slug
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            out.add(
                path.clone(),
                format!("agent key `{key}` does not make a registry name"),
                Some("letters, digits, `.`, `_` and `-` only"),
            );
        } else if let Some(other) = slugs.insert(slug.clone(), key) {
            out.add(
                path.clone(),
                format!("`{key}` and `{other}` both make the registry name `…/{slug}`"),
                Some("`_` becomes `-` in a registry name: rename one of them"),
            );
        }
        ports.check(a.port, format!("{path}.port"), out.0);
        validate_agent(a, &path, out);
    }
    if let Some(r) = &spec.registry {
        let keys: Vec<&str> = spec.agents.keys().map(String::as_str).collect();
        let count = r.schedule.len();
        for (i, p) in r.schedule.iter().enumerate() {
            let ppath = format!("{base}.registry.schedule.{i}");
            phase_end(out, &ppath, p.lasts, p.after_calls, i + 1 == count);
            for (j, name) in p.agents.iter().flatten().enumerate() {
                if !keys.contains(&name.as_str()) {
                    out.add(
                        format!("{ppath}.agents.{j}"),
                        format!("no agent `{name}` is declared"),
                        Some(&did_you_mean(name, &keys, "declared agents")),
                    );
                } else if p.agents.iter().flatten().take(j).any(|n| n == name) {
                    out.add(
                        format!("{ppath}.agents.{j}"),
                        format!("`{name}` is listed twice"),
                        None,
                    );
                }
            }
            if let Some(s) = p.status {
                error_status(out, &format!("{ppath}.status"), s);
            }
        }
    }
}

fn validate_agent(a: &PallasAgentSpec, path: &str, out: &mut Out<'_>) {
    text_field(out, &format!("{path}.title"), a.title.as_deref(), 100);
    text_field(
        out,
        &format!("{path}.description"),
        a.description.as_deref(),
        100,
    );
    text_field(out, &format!("{path}.version"), a.version.as_deref(), 255);
    for (i, icon) in a.icons.iter().enumerate() {
        if icon.src.is_empty() {
            out.add(
                format!("{path}.icons.{i}.src"),
                "empty icon URL".to_owned(),
                None,
            );
        }
        for (j, s) in icon.sizes.iter().enumerate() {
            let ok = s == "any"
                || s.split_once('x').is_some_and(|(w, h)| {
                    !w.is_empty()
                        && !h.is_empty()
                        && w.chars().chain(h.chars()).all(|c| c.is_ascii_digit())
                });
            if !ok {
                out.add(
                    format!("{path}.icons.{i}.sizes.{j}"),
                    format!("`{s}` is not a size"),
                    Some("`WxH` (e.g. `48x48`) or `any`"),
                );
            }
        }
    }
    let count = a.health.len();
    for (i, p) in a.health.iter().enumerate() {
        let ppath = format!("{path}.health.{i}");
        phase_end(out, &ppath, p.lasts, p.after_calls, i + 1 == count);
        if p.raw.is_some() && p.message.is_some() {
            out.add(
                format!("{ppath}.message"),
                "`message` is not sent with `raw`".to_owned(),
                Some("`raw` is the whole answer: put the message in it, or remove `raw`"),
            );
        }
        if p.raw.is_none() && p.status != HealthStatus::Ok && p.message.is_none() {
            out.add(
                format!("{ppath}.status"),
                format!(
                    "seed 000 requires a `message` with status `{}`",
                    p.status.as_str()
                ),
                Some("add `message: …`, or send a deliberately malformed answer with `raw: …`"),
            );
        }
    }
    if !a.progress.tool.contains('/') {
        out.add(
            format!("{path}.progress.tool"),
            format!("`{}` is not `{{server}}/{{tool}}`", a.progress.tool),
            Some("e.g. `argos/search_web`, as seed 000's progress messages name a tool"),
        );
    }
    if a.require_bearer.as_deref() == Some("") {
        out.add(
            format!("{path}.require_bearer"),
            "empty bearer token".to_owned(),
            Some("omit `require_bearer` to accept any request"),
        );
    }
    let f = &a.faults;
    if let Some(e) = &f.http_error {
        error_status(out, &format!("{path}.faults.http_error.status"), e.status);
        if e.times == Some(0) {
            out.add(
                format!("{path}.faults.http_error.times"),
                "`times: 0` makes the fault never fire".to_owned(),
                Some("remove the fault, or set `times` to 1 or more"),
            );
        }
    }
    if f.drop_stream.as_ref().is_some_and(|d| d.times == Some(0)) {
        out.add(
            format!("{path}.faults.drop_stream.times"),
            "`times: 0` makes the fault never fire".to_owned(),
            Some("remove the fault, or set `times` to 1 or more"),
        );
    }
    if let Some(e) = &f.session_expiry {
        let epath = format!("{path}.faults.session_expiry");
        match (e.after_requests, e.after) {
            (Some(_), Some(_)) | (None, None) => out.add(
                epath,
                "give one of `after_requests` and `after`".to_owned(),
                Some("e.g. `{after_requests: 3}` or `{after: 30s}`"),
            ),
            _ if e.sessions == Some(0) => out.add(
                format!("{epath}.sessions"),
                "no session would ever expire".to_owned(),
                Some("1 or more, or leave `sessions` out for every session"),
            ),
            (Some(0), None) => out.add(
                format!("{epath}.after_requests"),
                "a session that answers no request can never be used".to_owned(),
                Some("1 or more"),
            ),
            (None, Some(Duration::ZERO)) => out.add(
                format!("{epath}.after"),
                "a session that expires at once can never be used".to_owned(),
                Some("a duration such as `30s`"),
            ),
            _ => {}
        }
    }
}

/// A phase ends by `for` or by `after_calls`, not both; every phase but the last must end.
fn phase_end(
    out: &mut Out<'_>,
    path: &str,
    lasts: Option<Duration>,
    after_calls: Option<u32>,
    last: bool,
) {
    match (lasts, after_calls) {
        (Some(_), Some(_)) => out.add(
            format!("{path}.after_calls"),
            "a phase ends after a time (`for`) or after calls (`after_calls`), not both".to_owned(),
            Some("keep one of them"),
        ),
        (None, Some(0)) => out.add(
            format!("{path}.after_calls"),
            "`after_calls: 0` ends the phase before it answers anything".to_owned(),
            Some("1 or more, or remove the phase"),
        ),
        (Some(Duration::ZERO), None) => out.add(
            format!("{path}.for"),
            "`for: 0s` ends the phase before it answers anything".to_owned(),
            Some("a duration such as `5s`, or remove the phase"),
        ),
        (None, None) if !last => out.add(
            path.to_owned(),
            "this phase never ends, so the phases after it are never reached".to_owned(),
            Some("add `for: 5s` or `after_calls: 2` (the last phase holds for good)"),
        ),
        _ => {}
    }
}

/// A registry text: 1 to `max` characters when given.
fn text_field(out: &mut Out<'_>, path: &str, value: Option<&str>, max: usize) {
    if let Some(v) = value {
        let n = v.chars().count();
        if n == 0 || n > max {
            out.add(
                path.to_owned(),
                format!("{n} characters; the registry schema allows 1 to {max}"),
                None,
            );
        }
    }
}

fn error_status(out: &mut Out<'_>, path: &str, s: u16) {
    if !(400..=599).contains(&s) {
        out.add(
            path.to_owned(),
            format!("{s} is not an error status"),
            Some("use 400–599, e.g. 500 or 503"),
        );
    }
}
