//! `pallas-reference`: the reference Pallas. It reads `agents.yaml`, `fastagent.config.yaml`,
//! `fastagent.secrets.yaml` and `.env` from its working directory, serves a registry of its agents
//! and one MCP Streamable HTTP server per agent, and runs each agent's loop against
//! OpenAI-compatible or Anthropic providers with downstream MCP servers as tools.

/// `true` when the named defect is active (`PALLAS_DEFECTS`). Without the `defects` feature it is
/// the constant `false`, so the defect's code is dead and optimised away; with it, a misspelt
/// name is a compile error.
#[cfg(feature = "defects")]
#[macro_export]
macro_rules! defect {
    ($name:literal) => {{
        const _: () = assert!(
            $crate::defects::is_known($name),
            concat!("unknown defect ", $name)
        );
        $crate::defects::active($name)
    }};
}

/// `true` when the named defect is active; without the `defects` feature, always `false`.
#[cfg(not(feature = "defects"))]
#[macro_export]
macro_rules! defect {
    ($name:literal) => {
        $crate::no_defect()
    };
}

/// What [`defect!`] expands to without the `defects` feature: `false`, inlined and optimised
/// away with every branch it guards.
#[cfg(not(feature = "defects"))]
#[doc(hidden)]
#[inline(always)]
pub const fn no_defect() -> bool {
    false
}

pub mod agent;
pub mod config;
#[cfg(feature = "defects")]
pub mod defects;
pub mod downstream;
pub mod health;
pub mod llm;
pub mod logging;
pub mod metrics;
pub mod net;
pub mod progress;
pub mod registry;
pub mod runtime;
pub mod settings;
