//! Semantic validation of a parsed scenario: everything the YAML shape cannot say.

use std::collections::BTreeSet;

use super::template::{collect_strings, is_known, placeholders};
use super::{Locations, PROVIDERS, ScenarioSpec, SpecError, StepAction, StepSpec, did_you_mean};
use crate::catalog::{self, Evaluation};
use crate::scenario::{AssertSpec, PathAssert, SendStep};

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    errors: Vec<SpecError>,
}

impl Ctx<'_> {
    fn err(&mut self, line: usize, col: usize, msg: String, hint: Option<String>) {
        self.errors
            .push(SpecError::at(self.file, self.text, line, col, msg, hint));
    }

    /// Line/column of the first occurrence of `needle` at or after `from_line`.
    fn find(&self, needle: &str, from_line: usize) -> (usize, usize) {
        crate::diag::find_from(self.text, needle, from_line)
    }
}

pub(crate) fn validate(
    spec: &ScenarioSpec,
    file: &str,
    text: &str,
    locs: &Locations,
) -> Vec<SpecError> {
    let mut cx = Ctx {
        file,
        text,
        errors: Vec::new(),
    };
    if spec.id.trim().is_empty() {
        let (l, c) = cx.find("id:", 1);
        cx.err(l, c, "scenario `id` is empty".into(), None);
    }
    if spec.eras.is_empty() {
        let (l, c) = cx.find("eras:", 1);
        cx.err(
            l,
            c,
            "`eras` is empty".into(),
            Some("list at least one of 2025-11-25, 2026-07-28".into()),
        );
    }

    let agent_keys: Vec<String> = match &spec.deployment {
        Some(d) => {
            check_deployment(&mut cx, spec, d);
            d.agents.keys().cloned().collect()
        }
        None => Vec::new(),
    };
    // Steps.
    let mut names: Vec<String> = Vec::new();
    let mut captures: Vec<String> = Vec::new();
    let mut connections: BTreeSet<String> = agent_keys.iter().cloned().collect();
    for (i, step) in spec.steps.iter().enumerate() {
        let line = locs.steps.get(i).copied().unwrap_or(0);
        check_step(
            &mut cx,
            spec,
            step,
            i,
            line,
            false,
            &mut names,
            &mut captures,
            &mut connections,
        );
    }

    check_entries(&mut cx, spec, locs, &names, &captures);
    cx.errors
}

/// Cross-references of the deployment: servers, dependencies, mocks, providers, the model.
fn check_deployment(cx: &mut Ctx<'_>, spec: &ScenarioSpec, d: &super::DeploymentSpec) {
    if d.default_registry_port && !spec.serial {
        let (l, c) = cx.find("default_registry_port", 1);
        let hint = "add `serial: true`: a fixed port must not be used by two scenarios at once";
        cx.err(
            l,
            c,
            "`default_registry_port` needs a `serial` scenario".into(),
            Some(hint.into()),
        );
    }
    for (name, a) in &d.agents {
        for s in &a.servers {
            if !d.servers.contains_key(s) {
                let (l, c) = cx.find(s, 1);
                let hint = did_you_mean(s, d.servers.keys().map(String::as_str))
                    .map(|m| format!("did you mean `{m}`?"));
                cx.err(l, c, format!("agent `{name}` uses server `{s}`, which `deployment.servers` does not declare"), hint);
            }
        }
        for dep in &a.depends_on {
            if !d.agents.contains_key(dep) {
                let (l, c) = cx.find(dep, 1);
                cx.err(
                    l,
                    c,
                    format!("agent `{name}` depends on unknown agent `{dep}`"),
                    None,
                );
            }
        }
    }
    for (name, s) in &d.servers {
        match (&s.mock, &s.url) {
            (Some(m), None) => {
                if !spec.ecosystem.mcp_servers.contains_key(m) {
                    let (l, c) = cx.find(&format!("mock: {m}"), 1);
                    let hint =
                        did_you_mean(m, spec.ecosystem.mcp_servers.keys().map(String::as_str))
                            .map(|x| format!("did you mean `{x}`?"))
                            .or(Some("declare it under `ecosystem.mcp_servers`".into()));
                    cx.err(l, c, format!("server `{name}` refers to mock `{m}`, which the ecosystem does not declare"), hint);
                }
            }
            (None, Some(_)) => {}
            _ => {
                let (l, c) = cx.find(&format!("{name}:"), 1);
                cx.err(
                    l,
                    c,
                    format!("server `{name}` needs exactly one of `mock` or `url`"),
                    None,
                );
            }
        }
    }
    for (name, p) in &d.providers {
        if !PROVIDERS.contains(&name.as_str()) {
            let (l, c) = cx.find(&format!("{name}:"), 1);
            cx.err(
                l,
                c,
                format!("unknown provider `{name}`"),
                Some("providers are `openai`, `anthropic` and `hf` (HuggingFace)".into()),
            );
        }
        if let Some(m) = &p.mock
            && !spec.ecosystem.llms.contains_key(m)
        {
            let (l, c) = cx.find(&format!("mock: {m}"), 1);
            cx.err(l, c, format!("provider `{name}` refers to mock LLM `{m}`, which the ecosystem does not declare"), None);
        }
    }
    if !d.model.contains('.') {
        let (l, c) = cx.find("model:", 1);
        cx.err(
            l,
            c,
            format!("model `{}` is not `provider.model`", d.model),
            Some("e.g. `openai.mock-model`".into()),
        );
    }
}

/// The `checks:` entries: known IDs, levels, premises, typed `with:`, step globs, assertions.
fn check_entries(
    cx: &mut Ctx<'_>,
    spec: &ScenarioSpec,
    locs: &Locations,
    names: &[String],
    captures: &[String],
) {
    let all_ids: Vec<&str> = catalog::ids().collect();
    for (i, check) in spec.checks.iter().enumerate() {
        let line = locs.checks.get(i).copied().unwrap_or(0);
        let in_loop = check.for_each.as_ref().map(|f| f.var.clone());
        if let Some(id) = &check.check {
            let (l, c) = locs
                .check_ids
                .get(i)
                .copied()
                .flatten()
                .unwrap_or((line, 1));
            match catalog::get(id) {
                None => {
                    let hint = did_you_mean(id, all_ids.iter().copied())
                        .map(|m| format!("did you mean `{m}`?"))
                        .or(Some("`pallas-conformance checks` lists every ID".into()));
                    cx.err(l, c, format!("unknown check `{id}`"), hint);
                }
                Some(def) if def.evaluation == Evaluation::Assertion && check.assert.is_none() => {
                    cx.err(
                        l,
                        c,
                        format!("check `{id}` is proven by an assertion; add `assert:`"),
                        Some(format!("{id}: {}", def.title)),
                    );
                }
                Some(def) => {
                    if let Some(level) = check.level {
                        cx.err(
                            line,
                            1,
                            format!(
                                "`level: {}` on an entry of `{id}`: a check's level comes from its rules ({})",
                                level.as_str(),
                                def.level.as_str()
                            ),
                            Some("remove `level:`, or drop `check:` to make it a scenario expectation at your own level".into()),
                        );
                    }
                    if let Some(rule) = &check.rule
                        && !def.rules.contains(rule)
                    {
                        let (l, c) = cx.find("rule:", line);
                        cx.err(
                            l,
                            c,
                            format!("`rule: {rule}` is not one of the rules of `{id}`"),
                            Some(format!("{id} enforces: {}", def.rules.join(", "))),
                        );
                    }
                    if check.premise {
                        cx.err(
                            line,
                            1,
                            format!("`premise: true` on an entry of `{id}`: a premise is a scenario's own assertion"),
                            Some("drop `check:`".into()),
                        );
                    }
                }
            }
        } else if check.assert.is_some() && check.level.is_none() && !check.premise {
            cx.err(
                line,
                1,
                "a scenario assertion without `check:` needs its level".into(),
                Some("add `level: MUST|SHOULD|INFO` (the strength of what it expects), or `premise: true` when it only confirms the scenario exercised what the other checks judge".into()),
            );
        } else if check.assert.is_none() {
            cx.err(
                line,
                1,
                "a check entry needs `check:` or `assert:`".into(),
                None,
            );
        }
        if check.check.is_none() && check.rule.is_some() {
            cx.err(
                line,
                1,
                "`rule:` names one of a catalogued check's rules; this entry names no check".into(),
                Some(
                    "add `check:`, or drop `rule:` (a scenario assertion states its own `level:`)"
                        .into(),
                ),
            );
        }
        for g in &check.steps {
            step_glob(cx, g, names, line);
        }
        if let Some(a) = &check.assert {
            check_assert(cx, a, line, names, captures, in_loop.as_deref(), spec);
        }
        if let Some(g) = &check.given {
            if check.premise {
                cx.err(
                    line,
                    1,
                    "`given:` on a `premise: true` entry: a premise is judged unconditionally"
                        .into(),
                    Some("drop `given:`, or make the entry a check or an expectation".into()),
                );
            }
            check_assert(cx, g, line, names, captures, in_loop.as_deref(), spec);
        }
    }
}

/// What a `send` step cannot combine.
fn check_send(cx: &mut Ctx<'_>, spec: &ScenarioSpec, m: &SendStep, line: usize) {
    if m.cancel_after_progress.is_some() && m.drop_after_progress.is_some() {
        let (l, c) = cx.find("drop_after_progress", line);
        cx.err(
            l,
            c,
            "`send` has both `cancel_after_progress` and `drop_after_progress`".into(),
            Some("a call is either cancelled or its stream dropped: keep one".into()),
        );
    }
    if let Some(called) = &m.cancel_once_called {
        let (l, c) = cx.find("cancel_once_called", line);
        if m.cancel_after_progress.is_none() {
            cx.err(
                l,
                c,
                "`cancel_once_called` without `cancel_after_progress`".into(),
                Some("it delays a cancellation: add `cancel_after_progress`".into()),
            );
        }
        let known = called.split_once('/').is_some_and(|(server, tool)| {
            spec.ecosystem
                .mcp_servers
                .get(server)
                .is_some_and(|s| s.tools.iter().any(|t| t.name == tool))
        });
        if !known {
            cx.err(
                l,
                c,
                format!("`cancel_once_called: {called}` names no tool of the ecosystem's mock MCP servers"),
                Some("write `server/tool`, with a server under `ecosystem.mcp_servers` and one of its tools".into()),
            );
        }
    }
    if m.bearer_scheme.is_some() && m.bearer.is_none() {
        let (l, c) = cx.find("bearer_scheme", line);
        cx.err(
            l,
            c,
            "`send` has a `bearer_scheme` but no `bearer`".into(),
            Some("add the `bearer` the scheme spells, or remove `bearer_scheme`".into()),
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn check_step(
    cx: &mut Ctx<'_>,
    spec: &ScenarioSpec,
    step: &StepSpec,
    index: usize,
    line: usize,
    in_repeat: bool,
    names: &mut Vec<String>,
    captures: &mut Vec<String>,
    connections: &mut BTreeSet<String>,
) {
    let actions = step.actions();
    if actions.len() != 1 {
        let msg = if actions.is_empty() {
            format!("step {} has no action", index + 1)
        } else {
            format!(
                "step {} has several actions: {}",
                index + 1,
                actions.join(", ")
            )
        };
        cx.err(
            line,
            1,
            msg,
            Some(format!("one of: {}", StepAction::KEYS.join(", "))),
        );
        return;
    }
    if let Some(n) = &step.name {
        if names.contains(n) {
            let (l, c) = cx.find(&format!("name: {n}"), line);
            cx.err(l, c, format!("duplicate step name `{n}`"), None);
        }
        names.push(n.clone());
    }
    if let Some(c) = &step.connect {
        if spec.deployment.is_some() && !connections.contains(&c.agent) && !c.agent.contains("{{") {
            let (l, col) = cx.find(&c.agent, line);
            let hint = did_you_mean(&c.agent, connections.iter().map(String::as_str))
                .map(|m| format!("did you mean `{m}`?"));
            cx.err(l, col, format!("unknown agent `{}`", c.agent), hint);
        }
        connections.insert(c.alias.clone().unwrap_or_else(|| c.agent.clone()));
    } else if let Some(agent) = step.agent()
        && spec.deployment.is_some()
        && !connections.contains(agent)
        && !agent.contains("{{")
    {
        let (l, col) = cx.find(agent, line);
        let hint = did_you_mean(agent, connections.iter().map(String::as_str))
            .map(|m| format!("did you mean `{m}`?"));
        cx.err(l, col, format!("unknown agent `{agent}`"), hint);
    }
    if let Some(r) = &step.reload {
        let _ = r;
        if spec.deployment.is_none() {
            cx.err(line, 1, "`reload` needs a `deployment`".into(), None);
        }
    }
    for (cap, path) in &step.capture {
        check_path(cx, path, line);
        captures.push(cap.clone());
    }
    if let Some(u) = &step.until {
        check_predicate(cx, &u.that, line);
    }
    if let Some(m) = &step.send {
        check_send(cx, spec, m, line);
    }
    // Templates inside the step.
    let extra: Vec<String> = if in_repeat {
        vec!["i".to_owned()]
    } else {
        Vec::new()
    };
    if let Ok(v) = serde_json::to_value(step) {
        let mut strings = Vec::new();
        collect_strings(&v, &mut strings);
        for s in strings {
            for p in placeholders(&s) {
                if !is_known(&p, captures, &extra) {
                    let (l, c) = cx.find(&format!("{{{{{p}"), line);
                    let (l, c) = if l == line && c == 1 {
                        cx.find(&p, line)
                    } else {
                        (l, c)
                    };
                    cx.err(
                        l,
                        c,
                        format!("unknown template variable `{{{{{p}}}}}`"),
                        Some(template_hint(&p, captures, in_repeat)),
                    );
                }
            }
        }
    }
    if let Some(r) = &step.repeat {
        for (j, s) in r.steps.iter().enumerate() {
            check_step(cx, spec, s, j, line, true, names, captures, connections);
        }
    }
    if let Some(p) = &step.parallel {
        for (j, s) in p.iter().enumerate() {
            check_step(
                cx,
                spec,
                s,
                j,
                line,
                in_repeat,
                names,
                captures,
                connections,
            );
        }
    }
}

fn template_hint(p: &str, captures: &[String], in_repeat: bool) -> String {
    if let Some(c) = p.strip_prefix("capture.") {
        if let Some(m) = did_you_mean(c, captures.iter().map(String::as_str)) {
            return format!("did you mean `{{{{capture.{m}}}}}`?");
        }
        return "captures must be defined by an earlier step's `capture:`".into();
    }
    if p == "i" && !in_repeat {
        return "`{{i}}` exists only inside `repeat` steps and `for_each` checks".into();
    }
    "known variables: capture.NAME, mocks.NAME.url, agents.NAME.url, registry.url, env.NAME, i"
        .into()
}

fn step_glob(cx: &mut Ctx<'_>, glob: &str, names: &[String], line: usize) {
    match globset::Glob::new(glob) {
        Err(e) => {
            let (l, c) = cx.find(glob, line);
            cx.err(l, c, format!("invalid step glob `{glob}`: {e}"), None);
        }
        Ok(g) => {
            let m = g.compile_matcher();
            // Repeat expansions are named `name[i]`.
            let any = names
                .iter()
                .any(|n| m.is_match(n) || m.is_match(format!("{n}[0]")));
            if !any && !glob.contains("{{") {
                let (l, c) = cx.find(glob, line);
                let hint = did_you_mean(glob, names.iter().map(String::as_str))
                    .map(|x| format!("did you mean `{x}`?"));
                cx.err(
                    l,
                    c,
                    format!("no step is named `{glob}`"),
                    hint.or(Some("name steps with `name:`".into())),
                );
            }
        }
    }
}

fn check_path(cx: &mut Ctx<'_>, path: &str, line: usize) {
    if let Err(e) = serde_json_path::JsonPath::parse(path) {
        let (l, c) = cx.find(path, line);
        cx.err(
            l,
            c,
            format!("invalid JSONPath `{path}`: {e}"),
            Some("JSONPath starts with `$`, e.g. `$.result.content[0].text`".into()),
        );
    }
}

fn check_predicate(cx: &mut Ctx<'_>, p: &PathAssert, line: usize) {
    check_path(cx, &p.path, line);
    if let Some(re) = &p.matches
        && !re.contains("{{")
        && let Err(e) = regex::Regex::new(re)
    {
        let (l, c) = cx.find("matches:", line);
        cx.err(l, c, format!("invalid regular expression: {e}"), None);
    }
    if let Some(s) = &p.schema
        && let Err(e) = jsonschema::validator_for(s)
    {
        let (l, c) = cx.find("schema:", line);
        cx.err(l, c, format!("invalid JSON Schema: {e}"), None);
    }
}

fn check_assert(
    cx: &mut Ctx<'_>,
    a: &AssertSpec,
    line: usize,
    names: &[String],
    captures: &[String],
    loop_var: Option<&str>,
    spec: &ScenarioSpec,
) {
    let kinds = a.kinds();
    if kinds.len() != 1 {
        let (l, c) = cx.find("assert:", line);
        cx.err(
            l,
            c,
            format!(
                "an assertion needs exactly one kind, found {}",
                if kinds.is_empty() {
                    "none".to_owned()
                } else {
                    kinds.join(", ")
                }
            ),
            Some("one of: output, timing, journal, llm_journal, sessions, logs, any".into()),
        );
        return;
    }
    for alternative in &a.any {
        check_assert(cx, alternative, line, names, captures, loop_var, spec);
    }
    if let Some(o) = &a.output {
        match &o.step {
            None => {
                let (l, c) = cx.find("output:", line);
                cx.err(l, c, "an `output` assertion needs `step:`".into(), None);
            }
            Some(s) => step_glob(cx, s, names, line),
        }
        check_predicate(cx, o, line);
    }
    if let Some(t) = &a.timing {
        step_glob(cx, &t.step, names, line);
    }
    if let Some(j) = &a.journal {
        if !spec.ecosystem.mcp_servers.contains_key(&j.server) {
            let (l, c) = cx.find(&j.server, line);
            let hint = did_you_mean(
                &j.server,
                spec.ecosystem.mcp_servers.keys().map(String::as_str),
            )
            .map(|x| format!("did you mean `{x}`?"));
            cx.err(
                l,
                c,
                format!("journal of unknown mock server `{}`", j.server),
                hint,
            );
        }
        if let Some(f) = &j.filter {
            check_predicate(cx, f, line);
        }
        for d in &j.during {
            step_glob(cx, d, names, line);
        }
    }
    if let Some(j) = &a.llm_journal {
        if !spec.ecosystem.llms.contains_key(&j.llm) {
            let (l, c) = cx.find(&j.llm, line);
            cx.err(
                l,
                c,
                format!("journal of unknown mock LLM `{}`", j.llm),
                None,
            );
        }
        for d in &j.during {
            step_glob(cx, d, names, line);
        }
    }
    if let Some(s) = &a.sessions
        && let Some(name) = &s.server
        && !spec.ecosystem.mcp_servers.contains_key(name)
    {
        let (l, c) = cx.find(name, line);
        cx.err(
            l,
            c,
            format!("sessions of unknown mock server `{name}`"),
            None,
        );
    }
    let extra: Vec<String> = loop_var.map(|v| vec![v.to_owned()]).unwrap_or_default();
    if let Ok(v) = serde_json::to_value(a) {
        let mut strings = Vec::new();
        collect_strings(&v, &mut strings);
        for s in strings {
            for p in placeholders(&s) {
                if !is_known(&p, captures, &extra) {
                    let (l, c) = cx.find(&p, line);
                    cx.err(
                        l,
                        c,
                        format!("unknown template variable `{{{{{p}}}}}`"),
                        Some(template_hint(&p, captures, false)),
                    );
                }
            }
        }
    }
}
