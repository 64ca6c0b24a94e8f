//! The corner cases a run draws first: the same value domains as [`Case::strategy`], narrowed so
//! that every corner the seeds' sentences turn on is reached on every seed. A key with a capital,
//! a digit followed by a letter and a run of underscores (the slug, `name.title()`, the
//! `{agent}_history` prompt, metric labels); three agents, one with a tool that answers, one
//! whose tool fails with a JSON-RPC error and one without tools; a dotted model name with a
//! second prefix or a version (a real one, `gpt-4.1`, on the first corner); two or three images of two types; a `${VAR}` placeholder inside a
//! longer header value, its variable in `.env` (quoted or not) or in the environment over `.env`, and once an explicit
//! `authorization` header spelt in lower case; a second agent that `depends_on` the first; the
//! OpenAI and the Anthropic provider in turn; two turns, each with its own bearer (the second's
//! scheme spelt `bearer` or `BEARER` on two corners) and progress token (a number, 0 first, or a
//! string); and each mode in turn: all agents, one agent alone, a reload that removes an agent, a
//! reload that adds one.

use proptest::collection::vec;
use proptest::prelude::*;

use super::{Agent, Case, Change, Header, Mode, Provider, Source, Tool, slug};

/// How many corner cases there are (one per mode).
pub const CORNERS: usize = 4;

/// A key with a capital first, a digit followed by a letter, a run of two or three underscores
/// and a capital after it.
fn corner_key() -> impl Strategy<Value = String> {
    "[A-Z][a-z]{1,3}[0-9][a-z]{1,2}_{2,3}[a-z][A-Z][a-z0-9]{0,2}"
}

fn words() -> impl Strategy<Value = String> {
    "[A-Z][a-z]{1,6}( [A-Za-z0-9]{1,6}){0,2}"
}

fn corner_agent(tool: Tool) -> impl Strategy<Value = Agent> {
    (corner_key(), proptest::option::of(words())).prop_map(move |(key, description)| Agent {
        key,
        // No title: the default (`name.title()`) is what the corners are about.
        title: None,
        description,
        tool,
        // The slug corners also name each module apart from its key: the slug comes from the
        // key alone.
        module_apart: true,
        depends_on: None,
        twice: false,
    })
}

/// A model part with dots: a version (`abc.4.x`), a second provider-like prefix, or a real
/// model name with a dot (`gpt-4.1`).
fn corner_model(i: usize) -> BoxedStrategy<String> {
    if i.is_multiple_of(CORNERS) {
        // With the corner's own `context_window` and `max_output_tokens`: a name a model
        // database knows, whose published limits must still be the configured ones.
        return prop_oneof![Just("gpt-4.1".to_owned()), Just("gpt-4.1-mini".to_owned())].boxed();
    }
    prop_oneof![
        "[a-z][a-z0-9-]{0,6}\\.[0-9]{1,2}\\.[a-z0-9-]{1,4}",
        "(openai|anthropic)\\.[a-z][a-z0-9-]{0,6}\\.[0-9]",
    ]
    .boxed()
}

fn corner_header() -> impl Strategy<Value = Header> {
    (
        prop_oneof![
            Just("X-Kit-Tenant".to_owned()),
            Just("X-Api-Key".to_owned())
        ],
        // Base64-like, padded: a `.env` value holds `=` after its first one.
        "[a-zA-Z0-9]{4,12}={1,2}",
    )
        .prop_map(|(name, value)| Header {
            name,
            value,
            source: Source::Env,
        })
}

/// Corner case `i` (of [`CORNERS`]): its mode, whether the downstream opted into the bearer, and
/// whether its progress tokens are numbers follow from `i`; every other value is drawn.
pub fn corner_strategy(i: usize) -> BoxedStrategy<Case> {
    let agents = (
        corner_agent(Tool::Echo),
        corner_agent(Tool::RpcError),
        corner_agent(Tool::None),
    )
        // The second depends on the first: a subagent in the registry, started first.
        .prop_map(move |(a, b, c)| {
            vec![
                // On every other corner the tool that answers is called twice in one turn.
                Agent {
                    twice: i % 2 == 1,
                    ..a
                },
                Agent {
                    depends_on: Some(0),
                    ..b
                },
                c,
            ]
        })
        .prop_filter("distinct slugs", |a| {
            let mut slugs: Vec<String> = a.iter().map(|x| slug(&x.key)).collect();
            slugs.sort();
            slugs.dedup();
            slugs.len() == a.len()
        });
    (
        "[a-z]{2,4}\\.[a-z0-9-]{2,8}(\\.[a-z]{2,5})?",
        corner_model(i),
        agents,
        vec(corner_header(), 1..=1),
        vec(vec(any::<u8>(), 3), 2..=3),
        corner_agent(Tool::Echo),
    )
        .prop_filter_map(
            "the added agent's slug is new",
            move |(namespace, default_model, agents, headers, images, added)| {
                let mode = match i % CORNERS {
                    0 => Mode::All,
                    1 => Mode::Single(1),
                    2 => Mode::Reload(Change::Remove),
                    _ => {
                        if agents.iter().any(|a| slug(&a.key) == slug(&added.key)) {
                            return None;
                        }
                        Mode::Reload(Change::Add(added))
                    }
                };
                // One corner configures its own bearer, spelt in lower case (HTTP header names
                // are case-insensitive): it wins over the forwarded one.
                // Each corner sets the header's variable another way: in `.env` quoted, in
                // `.env`, in the environment (the third's `authorization` wins over a forwarded
                // bearer: one cause for its value), in the environment over another `.env` value.
                let source = [
                    Source::DotenvQuoted,
                    Source::Dotenv,
                    Source::Env,
                    Source::EnvOverDotenv,
                ][i % CORNERS];
                let headers = headers
                    .into_iter()
                    .map(|h| Header {
                        name: if i % CORNERS == 2 {
                            "authorization".to_owned()
                        } else {
                            h.name
                        },
                        source,
                        ..h
                    })
                    .collect();
                Some(Case {
                    namespace,
                    // Every other corner runs behind the Anthropic provider.
                    provider: if i % 2 == 1 {
                        Provider::Anthropic
                    } else {
                        Provider::OpenAi
                    },
                    default_model,
                    vision: Some(true),
                    // Half the corners give the limits and a version; the others leave the
                    // registry's defaults.
                    limits: if i.is_multiple_of(2) {
                        (Some(200_000), Some(32_000))
                    } else {
                        (None, None)
                    },
                    version: i.is_multiple_of(2).then(|| "2.4.1".to_owned()),
                    agents,
                    headers,
                    forward: i.is_multiple_of(2),
                    // The single-agent corner's downstream refuses the probe's DELETE with 405.
                    delete_not_allowed: i % CORNERS == 1,
                    // Two corners configure the downstream by a URL ending in `/`.
                    trailing_slash: i % 2 == 1,
                    images,
                    bearer: true,
                    // The second turn spells the scheme in another case on two corners (the
                    // first forwards the bearer; the third's configured header wins over it).
                    scheme: ["bearer", "Bearer", "BEARER", "Bearer"][i % CORNERS],
                    progress: 3,
                    numeric_tokens: i < 2,
                    turns: 2,
                    mode,
                })
            },
        )
        .boxed()
}
