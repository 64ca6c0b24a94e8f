//! Generic assertions: JSONPath predicates on step outputs, timing windows, journal queries,
//! session accounting and log scans.
//!
//! One idea: what a scenario's own `assert:` observed, and the witness of each one that held;
//! every kind of assertion is one arm of [`run`], and its tests sit beside it.

use serde_json::{Value, json};
use serde_json_path::JsonPath;

use pallas_mocks::LlmJournalEntry;

use super::read::{excerpt, select_steps};
use super::verdict::{Evidence, Outcome, Witness};
use crate::observation::{Observed, StepRecord};
use crate::scenario::{
    AssertSpec, JournalAssert, LlmJournalAssert, LogsAssert, PathAssert, SessionsAssert,
    TimingAssert, WindowSpec,
};

/// Evaluates a predicate on a value; `Ok` is what it held on (the value judged), `Err` says
/// why it does not hold.
pub fn predicate(p: &PathAssert, value: &Value) -> Result<String, Evidence> {
    predicate_on(p, value, &p.path)
}

/// [`predicate`] with the path queried as `query` over `value` (the same nodes as `p.path` over
/// the whole output: see [`crate::observation::StepRecord::output_query`]); evidence names
/// `p.path`.
pub fn predicate_on(p: &PathAssert, value: &Value, query: &str) -> Result<String, Evidence> {
    let path = JsonPath::parse(query)
        .map_err(|e| Evidence::new("JSONPath", "a valid path", e.to_string()))?;
    predicate_over(p, path.query(value).all())
}

/// The error of a JSON Schema that does not compile.
type InvalidSchema = jsonschema::ValidationError<'static>;

/// A node a path selected: a value of a built output, or a node of a received message read
/// where it lies (a predicate over a 26 MB answer then builds nothing of it).
trait Selected<'a>: crate::client::evidence::Walk<'a> {
    fn equals(self, v: &Value) -> bool;
    /// Whether it is JSON `null`.
    fn is_null(self) -> bool;
    /// The text `matches` and `contains` read: the string, else its compact JSON.
    fn text(self) -> String;
    /// The first error of `schema` over any of `nodes`, as evidence reads it; `Err` when the
    /// schema itself does not compile.
    fn schema_error(nodes: &[Self], schema: &Value) -> Result<Option<String>, InvalidSchema>;
}

impl<'a> Selected<'a> for &'a Value {
    fn equals(self, v: &Value) -> bool {
        self == v
    }
    fn is_null(self) -> bool {
        Value::is_null(self)
    }
    fn text(self) -> String {
        match self {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    fn schema_error(nodes: &[Self], schema: &Value) -> Result<Option<String>, InvalidSchema> {
        let validator = jsonschema::validator_for(schema)?;
        Ok(nodes.iter().find_map(|n| {
            let err = validator.iter_errors(n).next()?;
            Some(format!("{err} (at {})", err.instance_path()))
        }))
    }
}

impl<'a> Selected<'a> for crate::client::JsonRef<'a> {
    fn equals(self, v: &Value) -> bool {
        self.eq_value(v)
    }
    fn is_null(self) -> bool {
        crate::client::JsonRef::is_null(self)
    }
    fn text(self) -> String {
        match self.as_str() {
            Some(s) => s.to_owned(),
            None => self.to_string(),
        }
    }
    fn schema_error(nodes: &[Self], schema: &Value) -> Result<Option<String>, InvalidSchema> {
        let validator = jsonschema::options_for::<crate::compact::Compact>().build(schema)?;
        Ok(nodes.iter().find_map(|n| {
            let err = validator.iter_errors(*n).next()?;
            Some(format!("{err} (at {})", err.instance_path()))
        }))
    }
}

/// What a predicate that held on no node saw.
const NOTHING_SELECTED: &str = "no value";

/// The list the first filter of `path` examines: `$.progress[?@.x != 1].y` examines
/// `$.progress`. `None` for a path without a filter.
fn filtered_collection(path: &str) -> Option<String> {
    let start = path.find("[?")?;
    Some(path[..start].to_owned())
}

/// [`predicate`] over the nodes `p.path` selected. A text predicate (`matches`, `contains`)
/// over a null node never holds: a missing value is not the text "null".
fn predicate_over<'a, N: Selected<'a>>(p: &PathAssert, nodes: Vec<N>) -> Result<String, Evidence> {
    let ev = |expected: String, seen: String| Evidence {
        what: format!("`{}`", p.path),
        expected: Some(expected),
        seen: Some(seen),
        path: Some(p.path.clone()),
    };
    if let Some(c) = &p.count
        && !c.holds(nodes.len() as u64)
    {
        return Err(ev(
            format!("count {}", c.describe()),
            nodes.len().to_string(),
        ));
    }
    // A value that is there but null is no value: `exists: true` wants one that is not null.
    if p.exists == Some(true) && !nodes.is_empty() && nodes.iter().all(|n| Selected::is_null(*n)) {
        return Err(ev("a value (not null)".into(), "null".into()));
    }
    if let Some(exists) = p.exists
        && exists == nodes.is_empty()
    {
        return Err(ev(
            if exists {
                "a value".into()
            } else {
                "nothing".into()
            },
            nodes.first().map_or("nothing".into(), |v| excerpt(*v, 200)),
        ));
    }
    let needs_first = p.equals.is_some() || p.matches.is_some() || p.contains.is_some();
    if needs_first {
        let Some(&first) = nodes.first() else {
            return Err(ev("a value".into(), "nothing".into()));
        };
        // `parse_json`: a string holding JSON is judged as that JSON.
        let parsed = match first.string() {
            Some(s) if p.parse_json => serde_json::from_str::<Value>(s).ok(),
            _ => None,
        };
        let (text, shown) = match &parsed {
            Some(v) => (Selected::text(v), excerpt(v, 200)),
            None => (first.text(), excerpt(first, 200)),
        };
        let null = parsed
            .as_ref()
            .map_or_else(|| Selected::is_null(first), Value::is_null);
        if null && (p.matches.is_some() || p.contains.is_some()) {
            return Err(ev("a text".into(), "null (no value)".into()));
        }
        if let Some(e) = &p.equals {
            let equal = match &parsed {
                Some(v) => v == e,
                None => first.equals(e),
            };
            if !equal {
                return Err(ev(excerpt(e, 200), shown));
            }
        }
        if let Some(re) = &p.matches {
            match regex::Regex::new(re) {
                Ok(r) if r.is_match(&text) => {}
                Ok(_) => return Err(ev(format!("matches /{re}/"), shown)),
                Err(e) => return Err(ev("a valid regex".into(), e.to_string())),
            }
        }
        if let Some(c) = &p.contains
            && !text.contains(c.as_str())
        {
            return Err(ev(format!("contains {c:?}"), shown));
        }
    }
    let seen = match nodes.first() {
        Some(&first) if nodes.len() == 1 => excerpt(first, 200),
        Some(&first) => format!("{} values, the first {}", nodes.len(), excerpt(first, 200)),
        None => NOTHING_SELECTED.into(),
    };
    let nodes = match p.first {
        Some(n) if nodes.len() < n => {
            return Err(ev(
                format!("at least {n} value(s)"),
                nodes.len().to_string(),
            ));
        }
        Some(n) => nodes.into_iter().take(n).collect(),
        None => nodes,
    };
    // `parse_json`: a string holding JSON is judged as that JSON by the schema too.
    let parsed: Option<Vec<Value>> = p.parse_json.then(|| {
        nodes
            .iter()
            .map(|n| {
                let text = n.text();
                serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text))
            })
            .collect()
    });
    let schema_error = |schema: &Value| match &parsed {
        Some(values) => {
            let refs: Vec<&Value> = values.iter().collect();
            <&Value as Selected>::schema_error(&refs, schema)
        }
        None => N::schema_error(&nodes, schema),
    };
    if let Some(schema) = &p.schema
        && let Some(err) = schema_error(schema)
            .map_err(|e| Evidence::new("schema", "a valid JSON Schema", e.to_string()))?
    {
        return Err(Evidence {
            what: format!("`{}`", p.path),
            expected: Some("valid against the schema".into()),
            seen: Some(err),
            path: Some(p.path.clone()),
        });
    }
    Ok(seen)
}

fn within(time: &str, steps: &[&StepRecord]) -> bool {
    steps
        .iter()
        .any(|s| time >= s.started_at.as_str() && time <= s.ended_at.as_str())
}

/// Runs one assertion: the arm of its kind (the scenario format's assertion table).
pub fn run(a: &AssertSpec, o: &Observed) -> Outcome {
    if let Some(p) = &a.output {
        return assert_output(p, o);
    }
    if let Some(t) = &a.timing {
        return assert_timing(t, o);
    }
    if let Some(j) = &a.journal {
        return assert_journal(j, o);
    }
    if let Some(j) = &a.llm_journal {
        return assert_llm_journal(j, o);
    }
    if let Some(s) = &a.sessions {
        return assert_sessions(s, o);
    }
    if let Some(l) = &a.logs {
        return assert_logs(l, o);
    }
    if !a.any.is_empty() {
        return assert_any(&a.any, o);
    }
    Outcome::Error("empty assertion".into())
}

/// `any:` holds when one of its assertions holds; when none does, the failures are reported
/// together (an alternative that could not be judged is reported as such, before them).
fn assert_any(alternatives: &[AssertSpec], o: &Observed) -> Outcome {
    let mut reasons = Vec::new();
    let mut evidence = Vec::new();
    let mut undecided = None;
    for a in alternatives {
        match run(a, o) {
            kept @ Outcome::Kept(_) => return kept,
            Outcome::Fail(r, e) => {
                reasons.push(r);
                evidence.extend(e);
            }
            other => {
                undecided.get_or_insert(other);
            }
        }
    }
    if let Some(u) = undecided {
        return u;
    }
    Outcome::Fail(
        format!(
            "none of {} alternatives holds: {}",
            alternatives.len(),
            reasons.join("; ")
        ),
        evidence,
    )
}

/// `output:` a step output: a path of its JSON, compared.
fn assert_output(p: &PathAssert, o: &Observed) -> Outcome {
    let globs: Vec<String> = p.step.iter().cloned().collect();
    let steps = select_steps(&o.steps, &globs);
    if steps.is_empty() {
        return Outcome::Error(format!(
            "no step named `{}` ran",
            p.step.as_deref().unwrap_or("")
        ));
    }
    let mut kept = Vec::new();
    for s in steps {
        // No output, or an exchange without its response: the step's error says why
        // (an unreadable answer, an answer to another id, a cut connection).
        if let Some(err) = &s.error
            && (s.output.is_null() || s.response_missing())
        {
            return Outcome::Error(format!("step `{}` could not run: {err}", s.name));
        }
        // A step that brought back nothing shows nothing to be present or absent.
        if s.output.is_null() && matches!(s.observation, crate::observation::Observation::Nothing) {
            return Outcome::Inconclusive(format!(
                "step `{}` brought back nothing to judge `{}` on",
                s.name, p.path
            ));
        }
        let in_place = s.output_node(&p.path);
        if p.schema.is_some()
            && p.count.is_none()
            && p.exists.is_none()
            && p.first.is_none()
            && in_place.is_none()
            && {
                let (root, query) = s.output_query(&p.path);
                JsonPath::parse(&query).is_ok_and(|q| q.query(&root).all().is_empty())
            }
        {
            // A schema over nothing holds vacuously: nothing was there to judge.
            return Outcome::Inconclusive(format!(
                "step `{}`: `{}` selected nothing to validate",
                s.name, p.path
            ));
        }
        if s.timed_out {
            return Outcome::Error(match &s.error {
                Some(e) => format!(
                    "step `{}` timed out: its output is incomplete ({e})",
                    s.name
                ),
                None => format!("step `{}` timed out: its output is incomplete", s.name),
            });
        }
        let held = match in_place {
            Some(node) => predicate_over(p, vec![node]),
            None => {
                let (root, query) = s.output_query(&p.path);
                predicate_on(p, &root, &query)
            }
        };
        match held {
            // No value selected, as the count allowed: a filter that had nothing to examine
            // saw no counterexample because it saw nothing.
            Ok(seen) if seen == NOTHING_SELECTED && p.count.is_some() => {
                match filtered_collection(&p.path) {
                    // Nothing there: what the step did receive is what could have held it.
                    None => kept.push(Witness::new(
                        format!("step `{}` `{}`", s.name, p.path),
                        match s.observed_summary() {
                            Some(received) => format!("{seen}; the step received: {received}"),
                            None => seen,
                        },
                    )),
                    Some(collection) => {
                        let (root, query) = s.output_query(&collection);
                        let present: Vec<usize> = JsonPath::parse(&query)
                            .map(|q| {
                                q.query(&root)
                                    .all()
                                    .into_iter()
                                    .filter_map(|v| match v {
                                        Value::Array(a) => Some(a.len()),
                                        Value::Object(m) => Some(m.len()),
                                        _ => None,
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        if present.is_empty() {
                            return Outcome::Inconclusive(format!(
                                "step `{}`: the filter of `{}` had nothing to examine (no `{collection}` list was received)",
                                s.name, p.path
                            ));
                        }
                        kept.push(Witness::new(
                            format!("step `{}` `{}`", s.name, p.path),
                            format!(
                                "{} item(s) of `{collection}` examined, none selected",
                                present.iter().sum::<usize>()
                            ),
                        ));
                    }
                }
            }
            Ok(seen) => kept.push(Witness::new(
                format!("step `{}` `{}`", s.name, p.path),
                seen,
            )),
            Err(mut e) => {
                e.what = format!("step `{}` {}", s.name, e.what);
                let mut evidence = vec![e];
                evidence.extend(surrounding_object(s, &p.path));
                return Outcome::Fail(
                    format!("step `{}`: `{}` does not hold", s.name, p.path),
                    evidence,
                );
            }
        }
    }
    Outcome::Kept(kept)
}

/// The object around a failed field, for the failure's evidence: `$.health` beside a failed
/// `$.health.status`, so the answer's other fields (its message) say why. Only for a plain
/// `$.a.b` path whose parent is a small object.
fn surrounding_object(s: &StepRecord, path: &str) -> Option<Evidence> {
    let (parent, field) = path.rsplit_once('.')?;
    let plain = |seg: &str| {
        !seg.is_empty()
            && seg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if parent == "$" || !parent.starts_with("$.") || !plain(field) {
        return None;
    }
    if !parent[2..].split('.').all(plain) {
        return None;
    }
    // A member each, its scalar as written (a long string cut), a list or an object by its
    // size: a received message is read in place, never copied whole.
    let members: Vec<(String, String)> = match s.output_node(parent) {
        Some(node) => node
            .as_object()?
            .into_iter()
            .map(|(k, v)| (k.to_owned(), bounded_ref(v)))
            .collect(),
        None => {
            let (root, query) = s.output_query(parent);
            let found = JsonPath::parse(&query).ok()?.query(&root).all();
            let [Value::Object(m)] = found.as_slice() else {
                return None;
            };
            m.iter().map(|(k, v)| (k.clone(), bounded(v))).collect()
        }
    };
    if members.len() < 2 || members.len() > 12 {
        return None;
    }
    let seen = members
        .iter()
        .map(|(k, v)| format!("{}: {v}", Value::String(k.clone())))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Evidence {
        what: format!("step `{}` `{parent}`, the object holding `{field}`", s.name),
        expected: None,
        seen: Some(format!("{{{seen}}}")),
        path: None,
    })
}

/// The longest string member [`surrounding_object`] shows whole.
const MEMBER_SHOWN: usize = 200;

/// A member's value for [`surrounding_object`]: a scalar as JSON (a string past
/// [`MEMBER_SHOWN`] characters cut, its length stated), a list or an object by its size.
fn bounded(v: &Value) -> String {
    match v {
        Value::String(text) => bounded_str(text),
        Value::Array(a) => format!("[{} item(s)]", a.len()),
        Value::Object(m) => format!("{{{} member(s)}}", m.len()),
        other => other.to_string(),
    }
}

/// [`bounded`] of a value read in place.
fn bounded_ref(v: crate::compact::JsonRef<'_>) -> String {
    if let Some(text) = v.as_str() {
        bounded_str(text)
    } else if let Some(a) = v.as_array() {
        format!("[{} item(s)]", a.len())
    } else if let Some(m) = v.as_object() {
        format!("{{{} member(s)}}", m.len())
    } else {
        v.to_value().to_string()
    }
}

fn bounded_str(text: &str) -> String {
    let chars = text.chars().count();
    if chars <= MEMBER_SHOWN {
        return Value::String(text.to_owned()).to_string();
    }
    let cut: String = text.chars().take(MEMBER_SHOWN).collect();
    format!("{}… ({chars} characters)", Value::String(cut))
}

/// `timing:` a step's duration.
fn assert_timing(t: &TimingAssert, o: &Observed) -> Outcome {
    let steps = select_steps(&o.steps, std::slice::from_ref(&t.step));
    if steps.is_empty() {
        return Outcome::Error(format!("no step named `{}` ran", t.step));
    }
    let mut kept = Vec::new();
    for s in steps {
        let d = s.elapsed_ms;
        if let Some(max) = t.max
            && d > max.as_secs_f64() * 1000.0
        {
            return Outcome::Fail(
                format!("step `{}` took {d:.0} ms", s.name),
                vec![Evidence::new(
                    format!("step `{}`", s.name),
                    format!("<= {} ms", max.as_millis()),
                    format!("{d:.0} ms"),
                )],
            );
        }
        if let Some(min) = t.min
            && d < min.as_secs_f64() * 1000.0
        {
            return Outcome::Fail(
                format!("step `{}` took {d:.0} ms", s.name),
                vec![Evidence::new(
                    format!("step `{}`", s.name),
                    format!(">= {} ms", min.as_millis()),
                    format!("{d:.0} ms"),
                )],
            );
        }
        kept.push(Witness::new(
            format!("step `{}` duration", s.name),
            format!("{d:.0} ms"),
        ));
    }
    Outcome::Kept(kept)
}

/// `journal:` what a mock MCP server's journal saw.
fn assert_journal(j: &JournalAssert, o: &Observed) -> Outcome {
    let Some(entries) = o.mcp_journals.get(&j.server) else {
        return Outcome::Error(format!("no journal for mock server `{}`", j.server));
    };
    let during = select_steps(&o.steps, &j.during);
    let mut selected = Vec::new();
    for e in entries {
        if j.method
            .as_ref()
            .is_some_and(|m| e.jsonrpc_method.as_ref() != Some(m))
        {
            continue;
        }
        if j.tool.as_ref().is_some_and(|t| e.tool.as_ref() != Some(t)) {
            continue;
        }
        if !j.during.is_empty() && !within(&e.time, &during) {
            continue;
        }
        let view = serde_json::to_value(e).unwrap_or_default();
        if let Some(f) = &j.filter
            && predicate(f, &view).is_err()
        {
            continue;
        }
        selected.push(e);
    }
    if let Some(c) = &j.count
        && !c.holds(selected.len() as u64)
    {
        return Outcome::Fail(
            format!("{} matching request(s) at `{}`", selected.len(), j.server),
            vec![Evidence::new(
                format!("journal of `{}`", j.server),
                format!("count {}", c.describe()),
                selected.len().to_string(),
            )],
        );
    }
    let mut kept = Vec::new();
    if let Some(c) = &j.count {
        kept.push(Witness::new(
            format!("journal of `{}` (count {})", j.server, c.describe()),
            format!("{} matching request(s)", selected.len()),
        ));
    }
    if let Some(h) = &j.header {
        if selected.is_empty() && kept.is_empty() {
            return Outcome::Inconclusive(format!(
                "no matching request reached `{}`: no `{h}` header to judge",
                j.server
            ));
        }
        if let Some(e) = selected.first() {
            let seen = e.headers.get(&h.to_ascii_lowercase());
            kept.push(Witness::new(
                format!(
                    "`{h}` of {} matching request(s) at `{}`, the first",
                    selected.len(),
                    j.server
                ),
                seen.map_or_else(|| format!("no `{h}` header"), |v| format!("{h}: {v}")),
            ));
        }
        for e in &selected {
            let seen = e.headers.get(&h.to_ascii_lowercase());
            let bad = if j.header_absent {
                seen.is_some()
            } else if let Some(want) = &j.header_equals {
                !seen.is_some_and(|v| pallas_mocks::redact::same_header_value(h, v, want))
            } else {
                seen.is_none()
            };
            if bad {
                // "no … header" rather than "authorization: absent", which the redaction of
                // Authorization values would hide.
                let expected = if j.header_absent {
                    format!("no `{h}` header")
                } else {
                    format!(
                        "{h}: {}",
                        j.header_equals.clone().unwrap_or_else(|| "present".into())
                    )
                };
                return Outcome::Fail(
                    format!(
                        "`{}` received `{h}` {}",
                        j.server,
                        seen.map_or("absent".to_owned(), |v| format!("= {v}"))
                    ),
                    vec![Evidence {
                        what: format!(
                            "{} {} at {}",
                            e.jsonrpc_method.as_deref().unwrap_or(&e.method),
                            e.tool.as_deref().unwrap_or(""),
                            e.time
                        ),
                        expected: Some(expected),
                        seen: Some(
                            seen.map_or_else(
                                || format!("no `{h}` header"),
                                |v| format!("{h}: {v}"),
                            ),
                        ),
                        path: None,
                    }],
                );
            }
        }
    }
    Outcome::Kept(kept)
}

/// `llm_journal:` what a mock LLM's journal saw.
fn assert_llm_journal(j: &LlmJournalAssert, o: &Observed) -> Outcome {
    let Some(entries) = o.llm_journals.get(&j.llm) else {
        return Outcome::Error(format!("no journal for mock LLM `{}`", j.llm));
    };
    let during = select_steps(&o.steps, &j.during);
    let selected: Vec<_> = entries
        .iter()
        .filter(|e| {
            j.path_contains
                .as_ref()
                .is_none_or(|p| e.path.contains(p.as_str()))
        })
        .filter(|e| j.path_equals.as_ref().is_none_or(|p| e.path == *p))
        .filter(|e| {
            j.method
                .as_ref()
                .is_none_or(|m| e.method.eq_ignore_ascii_case(m))
        })
        .filter(|e| j.during.is_empty() || within(&e.time, &during))
        .collect();
    // What the requests of the other filters carried in the `body` fields, for the evidence.
    let carried = body_fields_seen(&j.body, &selected);
    let carried = match (&j.body_contains, carried) {
        (Some(text), carried) => Some(
            [carried, Some(carried_text(&selected, text))]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; "),
        ),
        (None, carried) => carried,
    };
    let selected: Vec<_> = selected
        .into_iter()
        .filter(|e| j.body_contains.as_ref().is_none_or(|t| body_contains(e, t)))
        .collect();
    let selected: Vec<_> = selected
        .into_iter()
        .filter(|e| {
            j.body.iter().all(|(k, v)| {
                e.body
                    .as_ref()
                    .and_then(|b| b.get(k))
                    .is_some_and(|x| x == v)
            })
        })
        .collect();
    let n = selected
        .iter()
        .filter(|e| j.status.is_none_or(|s| e.status == Some(s)))
        .count();
    if j.count.holds(n as u64) {
        return match &j.given_up_after {
            Some(window) => given_up_after(&j.llm, window, &selected),
            None => Outcome::kept(
                format!("journal of `{}` (count {})", j.llm, j.count.describe()),
                match &carried {
                    Some(seen) => format!("{n} matching request(s); {seen}"),
                    None => format!("{n} matching request(s)"),
                },
            ),
        };
    }
    let mut evidence = vec![Evidence::new(
        format!("journal of `{}`", j.llm),
        format!("count {}", j.count.describe()),
        n.to_string(),
    )];
    if let Some(seen) = carried {
        let mut wanted = Vec::new();
        if !j.body.is_empty() {
            wanted.push(json!(j.body).to_string());
        }
        if let Some(text) = &j.body_contains {
            wanted.push(format!("a body containing {text:?}"));
        }
        evidence.push(Evidence::new(
            "the bodies of the requests the other filters select",
            wanted.join("; "),
            seen,
        ));
    }
    if let Some(status) = j.status {
        let seen: Vec<String> = selected
            .iter()
            .map(|e| {
                e.status
                    .map_or_else(|| "none".to_owned(), |s| s.to_string())
            })
            .collect();
        evidence.push(Evidence::new(
            "statuses the mock answered to the requests of that path and method",
            format!("{status}"),
            if seen.is_empty() {
                "no such request".to_owned()
            } else {
                seen.join(", ")
            },
        ));
    }
    Outcome::Fail(
        format!(
            "{n} request(s) to mock LLM `{}` matched, where {} {}",
            j.llm,
            if j.body.is_empty() && j.body_contains.is_none() {
                "the count wants"
            } else {
                "the count (of those carrying the body asked for) wants"
            },
            j.count.describe()
        ),
        evidence,
    )
}

/// For a `body` filter, the values each request of `selected` carried in those fields (`absent`
/// for a field it lacked), e.g. `POST /v1/chat/completions: {"temperature":0.6,"top_p":0.9}`.
fn body_fields_seen(
    fields: &std::collections::BTreeMap<String, Value>,
    selected: &[&LlmJournalEntry],
) -> Option<String> {
    if fields.is_empty() {
        return None;
    }
    if selected.is_empty() {
        return Some("no request of that path, method and time".to_owned());
    }
    let seen: Vec<String> = selected
        .iter()
        .map(|e| {
            let values: serde_json::Map<String, Value> = fields
                .keys()
                .map(|k| {
                    let v = e.body.as_ref().and_then(|b| b.get(k)).cloned();
                    (k.clone(), v.unwrap_or_else(|| json!("absent")))
                })
                .collect();
            format!("{} {}: {}", e.method, e.path, Value::Object(values))
        })
        .collect();
    Some(format!("the requests carried {}", seen.join("; ")))
}

/// How many of the `examined` requests carried `text`, and where the first one carried it: its
/// place among them, its path and an excerpt around the text.
fn carried_text(examined: &[&LlmJournalEntry], text: &str) -> String {
    let carrying: Vec<(usize, &&LlmJournalEntry)> = examined
        .iter()
        .enumerate()
        .filter(|(_, e)| body_contains(e, text))
        .collect();
    let mut out = format!(
        "{} of the {} request(s) of the other filters carried {text:?}",
        carrying.len(),
        examined.len()
    );
    if let Some((i, e)) = carrying.first() {
        let body = e.body.as_ref().map(Value::to_string).unwrap_or_default();
        if let Some(at) = body.find(text) {
            let from = body[..at]
                .char_indices()
                .rev()
                .nth(59)
                .map_or(0, |(i, _)| i);
            let to = body[at..]
                .char_indices()
                .nth(text.chars().count() + 40)
                .map_or(body.len(), |(i, _)| at + i);
            out.push_str(&format!(
                "; the first, request {} of {} ({} {}): …{}…",
                i + 1,
                examined.len(),
                e.method,
                e.path,
                &body[from..to]
            ));
        }
    }
    out
}

/// Whether `e`'s JSON body, written out, contains `text`.
fn body_contains(e: &LlmJournalEntry, text: &str) -> bool {
    e.body
        .as_ref()
        .is_some_and(|b| b.to_string().contains(text))
}

/// `llm_journal: {given_up_after}`: how long the client waited on each request the mock held
/// unanswered before it closed the connection.
fn given_up_after(llm: &str, window: &WindowSpec, selected: &[&LlmJournalEntry]) -> Outcome {
    let held: Vec<&&LlmJournalEntry> = selected.iter().filter(|e| e.status.is_none()).collect();
    if held.is_empty() {
        return Outcome::Inconclusive(format!(
            "no selected request to mock LLM `{llm}` was held unanswered: nothing was given up"
        ));
    }
    let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let mut kept = Vec::new();
    for e in held {
        let what = format!("{} {} to `{llm}` at {}", e.method, e.path, e.time);
        let Some(abandoned) = e.abandoned.as_deref() else {
            return Outcome::Fail(
                format!("the client never gave up {what} while the run lasted"),
                vec![Evidence::new(
                    what,
                    format!("given up {}", window_words(window)),
                    "still held when the journal was read",
                )],
            );
        };
        let waited = at(abandoned)
            .zip(at(&e.time))
            .and_then(|(end, start)| (end - start).to_std().ok())
            .unwrap_or_default();
        if let Some(expected) = window.broken_by(waited) {
            return Outcome::Fail(
                format!("the client gave up {what} after {} ms", waited.as_millis()),
                vec![Evidence::new(
                    what,
                    expected,
                    format!("given up after {} ms", waited.as_millis()),
                )],
            );
        }
        kept.push(Witness::new(
            what,
            format!("given up after {} ms", waited.as_millis()),
        ));
    }
    Outcome::Kept(kept)
}

/// A window in words: `after 4500 to 7000 ms`, `within 7000 ms`…
fn window_words(w: &WindowSpec) -> String {
    match (w.min, w.max) {
        (Some(a), Some(b)) => format!("after {} to {} ms", a.as_millis(), b.as_millis()),
        (Some(a), None) => format!("after at least {} ms", a.as_millis()),
        (None, Some(b)) => format!("within {} ms", b.as_millis()),
        (None, None) => "at some point".to_owned(),
    }
}

/// `sessions:` a mock MCP server's session accounting.
fn assert_sessions(s: &SessionsAssert, o: &Observed) -> Outcome {
    let names: Vec<&String> = match &s.server {
        Some(n) => vec![n],
        None => o.sessions.keys().collect(),
    };
    let mut kept = Vec::new();
    for n in names {
        let Some(st) = o.sessions.get(n) else {
            return Outcome::Error(format!("no session accounting for `{n}`"));
        };
        if let Some(c) = &s.open_now
            && !c.holds(st.open_now)
        {
            return Outcome::Fail(
                format!("`{n}` has {} session(s) open", st.open_now),
                vec![Evidence::new(
                    format!("sessions of `{n}`"),
                    format!("open_now {}", c.describe()),
                    json!(st).to_string(),
                )],
            );
        }
        if let Some(c) = &s.opened
            && !c.holds(st.opened)
        {
            return Outcome::Fail(
                format!("`{n}` opened {} session(s)", st.opened),
                vec![Evidence::new(
                    format!("sessions of `{n}`"),
                    format!("opened {}", c.describe()),
                    json!(st).to_string(),
                )],
            );
        }
        kept.push(Witness::new(
            format!("sessions of `{n}`"),
            json!(st).to_string(),
        ));
    }
    Outcome::Kept(kept)
}

/// `logs:` the implementation's logs.
fn assert_logs(l: &LogsAssert, o: &Observed) -> Outcome {
    if !o.logs_available {
        return Outcome::Error("the implementation's logs are not available (attach mode?)".into());
    }
    let mut forbidden: Vec<String> = l.never_contains.clone();
    if l.no_secrets {
        forbidden.extend(
            o.vars
                .iter()
                .filter(|(k, _)| k.starts_with("secret."))
                .map(|(_, v)| v.clone()),
        );
    }
    for f in forbidden.iter().filter(|f| !f.is_empty()) {
        if let Some(line) = o.logs.lines().find(|line| line.contains(f.as_str())) {
            return Outcome::Fail(
                "a forbidden string appears in the implementation's output".into(),
                vec![Evidence::new(
                    "log line",
                    "no secret",
                    line.chars().take(300).collect::<String>(),
                )],
            );
        }
    }
    let mut kept = Vec::new();
    for c in &l.contains {
        match o.logs.lines().find(|line| line.contains(c.as_str())) {
            None => return Outcome::Fail(format!("the logs never mention {c:?}"), vec![]),
            Some(line) => kept.push(Witness::new(
                format!("log line mentioning {c:?}"),
                line.chars().take(300).collect::<String>(),
            )),
        }
    }
    let scanned = forbidden.iter().filter(|f| !f.is_empty()).count();
    if scanned > 0 {
        // A string can only be seen missing from output that was written.
        if o.logs.trim().is_empty() {
            if kept.is_empty() {
                return Outcome::Inconclusive(
                    "the implementation wrote no output: nothing to scan for the forbidden strings"
                        .into(),
                );
            }
        } else {
            kept.push(Witness::new(
                format!("the implementation's output, scanned for {scanned} forbidden string(s)"),
                format!(
                    "{} line(s), {} byte(s), none of them holding one",
                    o.logs.lines().count(),
                    o.logs.len()
                ),
            ));
        }
    }
    Outcome::Kept(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_authorization_scheme_compares_without_case_and_nothing_else_does() {
        assert!(pallas_mocks::redact::same_header_value(
            "authorization",
            "bearer tok",
            "Bearer tok"
        ));
        assert!(pallas_mocks::redact::same_header_value(
            "Authorization",
            "BEARER tok",
            "Bearer tok"
        ));
        assert!(!pallas_mocks::redact::same_header_value(
            "authorization",
            "Bearer TOK",
            "Bearer tok"
        ));
        assert!(!pallas_mocks::redact::same_header_value(
            "authorization",
            "Bearer",
            "Bearer tok"
        ));
        assert!(!pallas_mocks::redact::same_header_value(
            "x-api-key",
            "bearer tok",
            "Bearer tok"
        ));
    }

    /// A missing text read as the string "null" passed "the error text is not empty": a text
    /// predicate, or `exists: true`, over a null node never holds; an explicit `equals: null`
    /// or absence check still can.
    #[test]
    fn a_null_value_is_no_text_and_no_value() {
        let p = |v: Value| -> PathAssert { serde_json::from_value(v).unwrap() };
        let doc = json!({"text": null, "error": {"message": "rate limited"}});
        for a in [
            json!({"path": "$.text", "matches": "\\S"}),
            json!({"path": "$.text", "contains": "null"}),
            json!({"path": "$.text", "exists": true}),
        ] {
            let err = predicate(&p(a.clone()), &doc).unwrap_err();
            assert!(
                err.seen.as_deref().unwrap_or("").contains("null"),
                "{a}: {err:?}"
            );
        }
        assert!(predicate(&p(json!({"path": "$.text", "equals": null})), &doc).is_ok());
        assert!(predicate(&p(json!({"path": "$.missing", "exists": false})), &doc).is_ok());
        assert_eq!(
            predicate(
                &p(json!({"path": "$.error.message", "matches": "\\S"})),
                &doc
            )
            .unwrap(),
            "rate limited"
        );
    }

    #[test]
    fn first_limits_the_schema_to_the_leading_values_and_wants_that_many() {
        let p: PathAssert = serde_json::from_value(json!({
            "path": "$[*]", "first": 2, "schema": {"type": "string", "pattern": "started$"}
        }))
        .unwrap();
        assert!(predicate(&p, &json!(["a: started", "b: started", "a: completed"])).is_ok());
        assert!(predicate(&p, &json!(["a: started", "a: completed", "b: started"])).is_err());
        assert!(predicate(&p, &json!(["a: started"])).is_err());
    }

    /// A node read in place in a received message is judged as its built value is.
    #[test]
    fn a_predicate_over_a_node_read_in_place_holds_as_over_its_value() {
        let value = json!({"content": [{"type": "text", "text": "reçu : Bonjour"}, {"type": "image", "n": 2}],
            "isError": false, "note": "{\"a\": [1, 2]}"});
        let doc = crate::client::JsonDoc::from_value(&value);
        let asserts = [
            json!({"path": "$", "contains": "reçu : Bonjour"}),
            json!({"path": "$", "contains": "\"type\":\"image\""}),
            json!({"path": "$", "matches": "^\\{\"content\""}),
            json!({"path": "$", "equals": value.clone()}),
            json!({"path": "$", "equals": {"content": []}}),
            json!({"path": "$", "exists": false}),
            json!({"path": "$", "count": {"equals": 1}}),
            json!({"path": "$", "first": 2}),
            json!({"path": "$", "schema": {"type": "object", "required": ["content"]}}),
            json!({"path": "$", "schema": {"type": "object", "properties": {"content": {"items": {"properties": {"type": {"const": "text"}}}}}}}),
            json!({"path": "$", "schema": {"type": "nope"}}),
        ];
        for a in asserts {
            let p: PathAssert = serde_json::from_value(a.clone()).unwrap();
            let built = predicate(&p, &value).map_err(|e| format!("{e:?}"));
            let in_place = predicate_over(&p, vec![doc.root()]).map_err(|e| format!("{e:?}"));
            assert_eq!(in_place, built, "{a}");
        }
        let note = json!("{\"a\": [1, 2]}");
        let doc = crate::client::JsonDoc::from_value(&note);
        let p: PathAssert = serde_json::from_value(
            json!({"path": "$", "parse_json": true, "equals": {"a": [1, 2]}}),
        )
        .unwrap();
        assert!(predicate_over(&p, vec![doc.root()]).is_ok());
        assert!(predicate(&p, &note).is_ok());
        // A schema judges the parsed JSON as well, read in place or built.
        let schema = |required: &str| -> PathAssert {
            serde_json::from_value(json!({"path": "$", "parse_json": true,
                "schema": {"type": "object", "required": [required]}}))
            .unwrap()
        };
        assert!(predicate_over(&schema("a"), vec![doc.root()]).is_ok());
        assert!(predicate(&schema("a"), &note).is_ok());
        assert!(predicate_over(&schema("b"), vec![doc.root()]).is_err());
        assert!(predicate(&schema("b"), &note).is_err());
        let not_json = json!("status: ok");
        assert!(predicate(&schema("status"), &not_json).is_err());
    }

    #[test]
    fn llm_journal_status_counts_only_the_answers_with_that_status_and_shows_the_others() {
        let entry = |status: u16| LlmJournalEntry {
            time: "2026-01-01T00:00:00Z".to_owned(),
            method: "GET".to_owned(),
            path: "/v1/models/mock-model".to_owned(),
            headers: Default::default(),
            body: None,
            model: None,
            matched_turn: None,
            status: Some(status),
            abandoned: None,
        };
        let mut o = Observed::default();
        o.llm_journals
            .insert("anthropic".to_owned(), vec![entry(401), entry(401)]);
        let j: LlmJournalAssert = serde_json::from_value(json!({
            "llm": "anthropic", "method": "GET", "path_equals": "/v1/models/mock-model",
            "status": 200, "count": {"min": 1}
        }))
        .unwrap();
        let Outcome::Fail(_, evidence) = assert_llm_journal(&j, &o) else {
            panic!("two 401 answers must not satisfy `status: 200`");
        };
        assert_eq!(evidence[1].seen.as_deref(), Some("401, 401"));
        o.llm_journals
            .get_mut("anthropic")
            .unwrap()
            .push(entry(200));
        assert!(assert_llm_journal(&j, &o).is_kept());
    }

    #[test]
    fn llm_journal_body_selects_the_requests_carrying_those_values_and_shows_what_each_carried() {
        let entry = |body: Value| LlmJournalEntry {
            time: "2026-01-01T00:00:00Z".to_owned(),
            method: "POST".to_owned(),
            path: "/v1/chat/completions".to_owned(),
            headers: Default::default(),
            body: Some(body),
            model: None,
            matched_turn: None,
            status: Some(200),
            abandoned: None,
        };
        let mut o = Observed::default();
        o.llm_journals.insert(
            "openai".to_owned(),
            vec![entry(json!({"model": "m", "temperature": 0.2}))],
        );
        let j: LlmJournalAssert = serde_json::from_value(json!({
            "llm": "openai", "body": {"temperature": 0.6, "top_p": 0.9}, "count": {"min": 1}
        }))
        .unwrap();
        let Outcome::Fail(_, evidence) = assert_llm_journal(&j, &o) else {
            panic!("a request with other sampling values must not select");
        };
        assert_eq!(
            evidence[1].seen.as_deref(),
            Some(
                "the requests carried POST /v1/chat/completions: {\"temperature\":0.2,\"top_p\":\"absent\"}"
            )
        );
        o.llm_journals
            .get_mut("openai")
            .unwrap()
            .push(entry(json!({"temperature": 0.6, "top_p": 0.9})));
        let Outcome::Kept(witnesses) = assert_llm_journal(&j, &o) else {
            panic!("the request carrying both values selects");
        };
        assert!(
            witnesses[0]
                .seen
                .contains("{\"temperature\":0.6,\"top_p\":0.9}"),
            "{:?}",
            witnesses[0].seen
        );
    }

    #[test]
    fn llm_journal_body_contains_selects_the_requests_that_carried_the_text() {
        let entry = |body: Value| LlmJournalEntry {
            time: "2026-01-01T00:00:00Z".to_owned(),
            method: "POST".to_owned(),
            path: "/v1/chat/completions".to_owned(),
            headers: Default::default(),
            body: Some(body),
            model: None,
            matched_turn: None,
            status: Some(200),
            abandoned: None,
        };
        let mut o = Observed::default();
        o.llm_journals.insert(
            "openai".to_owned(),
            vec![entry(
                json!({"messages": [{"role": "user", "content": "hi"}]}),
            )],
        );
        let j: LlmJournalAssert = serde_json::from_value(json!({
            "llm": "openai", "body_contains": "rows", "count": {"min": 1}
        }))
        .unwrap();
        let Outcome::Fail(_, evidence) = assert_llm_journal(&j, &o) else {
            panic!("no request carried `rows`");
        };
        assert_eq!(
            evidence[1].seen.as_deref(),
            Some("0 of the 1 request(s) of the other filters carried \"rows\"")
        );
        o.llm_journals.get_mut("openai").unwrap().push(entry(
            json!({"messages": [{"role": "tool", "content": "{\"rows\":3}"}]}),
        ));
        let Outcome::Kept(witnesses) = assert_llm_journal(&j, &o) else {
            panic!("the tool result's request carried `rows`");
        };
        assert_eq!(
            witnesses[0].seen,
            "1 matching request(s); 1 of the 2 request(s) of the other filters carried \"rows\"; the first, request 2 of 2 (POST /v1/chat/completions): …{\"messages\":[{\"role\":\"tool\",\"content\":\"{\\\"rows\\\":3}\"}]}…"
        );
    }

    #[test]
    fn given_up_after_measures_a_held_request_from_its_arrival_to_its_abandonment() {
        let entry = |time: &str, status: Option<u16>, abandoned: Option<&str>| LlmJournalEntry {
            time: time.to_owned(),
            method: "GET".to_owned(),
            path: "/v1/models".to_owned(),
            headers: Default::default(),
            body: None,
            model: None,
            matched_turn: None,
            status,
            abandoned: abandoned.map(str::to_owned),
        };
        let j: LlmJournalAssert = serde_json::from_value(json!({
            "llm": "openai", "count": {"min": 1},
            "given_up_after": {"min": "4500ms", "max": "7s"}
        }))
        .unwrap();
        let mut o = Observed::default();
        // Answered requests only: nothing was held, nothing to judge.
        o.llm_journals.insert(
            "openai".to_owned(),
            vec![entry("2026-01-01T00:00:04Z", Some(200), None)],
        );
        assert!(matches!(
            assert_llm_journal(&j, &o),
            Outcome::Inconclusive(_)
        ));
        // Held from 4 s (however late the process made the call) and given up at 9.1 s.
        let journal = o.llm_journals.get_mut("openai").unwrap();
        journal.insert(
            0,
            entry(
                "2026-01-01T00:00:04Z",
                None,
                Some("2026-01-01T00:00:09.100000Z"),
            ),
        );
        assert!(assert_llm_journal(&j, &o).is_kept());
        // Given up after 10 s: too late.
        o.llm_journals.get_mut("openai").unwrap()[0].abandoned =
            Some("2026-01-01T00:00:14Z".to_owned());
        let Outcome::Fail(_, evidence) = assert_llm_journal(&j, &o) else {
            panic!("10 s is over the window");
        };
        assert_eq!(evidence[0].expected.as_deref(), Some("<= 7000 ms"));
        assert_eq!(evidence[0].seen.as_deref(), Some("given up after 10000 ms"));
        // Never given up while the run lasted.
        o.llm_journals.get_mut("openai").unwrap()[0].abandoned = None;
        assert!(matches!(assert_llm_journal(&j, &o), Outcome::Fail(..)));
    }
}
