//! The generated deployments of a `pallas-conformance run`: drawn from a seed the run prints,
//! fitted to what the target profile claims, and a failing one shrunk to a minimal case that is
//! written out as a scenario file the implementer runs again.

use proptest::strategy::{BoxedStrategy, Strategy as _, ValueTree};
use serde::{Deserialize, Serialize};

use super::{Case, Mode, runner};
use crate::vocab::Capability;

/// Cases a run draws when it is not told how many: enough to reach the corners of the value
/// domains (capitals, digits and runs of underscores in keys, several agents, single-agent mode,
/// reloads, several images, second turns) on most seeds, few enough for the reference's whole run
/// to stay within seconds.
pub const DEFAULT_CASES: usize = 12;

/// What a run says of its generated deployments (in its `suite` header and report).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedInfo {
    /// The seed they were drawn from (`--generated-seed` draws the same cases again).
    pub seed: u64,
    /// How many were drawn.
    pub cases: usize,
    /// Why none ran on this target, when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

impl GeneratedInfo {
    /// One phrase for report headers.
    pub fn describe(&self) -> String {
        match &self.not_run {
            Some(why) => format!("no generated deployments ({why})"),
            None => format!(
                "{} generated deployment{} from seed {} (`--generated-seed {}` draws them again)",
                self.cases,
                if self.cases == 1 { "" } else { "s" },
                self.seed,
                self.seed
            ),
        }
    }
}

/// One drawn case, with the tree that shrinks it.
pub struct Drawn {
    /// The case as drawn.
    pub case: Case,
    tree: Box<dyn ValueTree<Value = Case>>,
}

impl std::fmt::Debug for Drawn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drawn").field("case", &self.case).finish()
    }
}

/// Why generated deployments do not apply to a target claiming `claims`, if they do not. They
/// vary the Pallas deployment files (`pallas_config`) and read what every case shows: the
/// registry or single-agent mode, the metrics, the history prompt and progress.
pub fn not_applicable(claims: &[Capability]) -> Option<String> {
    let has = |c: Capability| claims.contains(&c);
    let mut missing: Vec<&str> = [
        Capability::PallasConfig,
        Capability::Metrics,
        Capability::History,
        Capability::Progress,
    ]
    .into_iter()
    .filter(|c| !has(*c))
    .map(Capability::as_str)
    .collect();
    if !has(Capability::Registry) && !has(Capability::SingleAgent) {
        missing.push("registry or single_agent");
    }
    (!missing.is_empty()).then(|| {
        format!(
            "they vary a Pallas deployment and need the claims `{}`, which the target profile does not make",
            missing.join("`, `")
        )
    })
}

impl Case {
    /// The case with what the target does not claim taken out: no images without `images`, no
    /// bearer without `bearer`, no progress token without `pallas_progress`, and a mode the
    /// target claims (all agents with `registry`, else single-agent mode; a reload only with
    /// `reload`).
    pub fn fitted(mut self, claims: &[Capability]) -> Case {
        let has = |c: Capability| claims.contains(&c);
        if !has(Capability::Images) {
            self.images.clear();
        }
        if !has(Capability::Bearer) {
            self.bearer = false;
        }
        if !has(Capability::PallasProgress) {
            self.progress = 0;
        }
        let all_or_single = if has(Capability::Registry) {
            Mode::All
        } else {
            Mode::Single(0)
        };
        self.mode = match self.mode {
            Mode::Single(_) if !has(Capability::SingleAgent) => all_or_single,
            Mode::Reload(_) if !has(Capability::Reload) || !has(Capability::Registry) => {
                all_or_single
            }
            Mode::All => all_or_single,
            mode => mode,
        };
        self
    }

    /// Every case the seeds allow that a target claiming `claims` can be given.
    pub fn strategy_for(claims: &[Capability]) -> BoxedStrategy<Case> {
        fitted(Case::strategy(), claims)
    }

    /// Corner case `i` ([`super::corner_strategy`]) fitted to `claims`.
    pub fn corner_for(i: usize, claims: &[Capability]) -> BoxedStrategy<Case> {
        fitted(super::corner_strategy(i), claims)
    }
}

/// `strategy`'s cases with what a target claiming `claims` does not claim taken out.
fn fitted(
    strategy: impl proptest::strategy::Strategy<Value = Case> + 'static,
    claims: &[Capability],
) -> BoxedStrategy<Case> {
    let claims = claims.to_vec();
    strategy.prop_map(move |c| c.fitted(&claims)).boxed()
}

/// Draws `n` cases from `seed` for a target claiming `claims`: the corner cases first (as many
/// of the [`super::CORNERS`] as `n` allows), then cases from the whole domain. The same seed and
/// claims draw the same cases.
pub fn draw(seed: u64, n: usize, claims: &[Capability]) -> Vec<Drawn> {
    let mut runner = runner(seed);
    let whole = Case::strategy_for(claims);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let strategy = if i < super::CORNERS {
            Case::corner_for(i, claims)
        } else {
            whole.clone()
        };
        // The filters reject rarely (equal slugs): proptest draws again.
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            break;
        };
        out.push(Drawn {
            case: tree.current(),
            tree,
        });
    }
    out
}

/// A seed for a run not given one: below 10⁹, so a person copies it without error.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    (u64::from(nanos) ^ u64::from(std::process::id())) % 1_000_000_000
}

/// The smallest form of a failing case that still fails: each simpler candidate is run with
/// `fails` (at most `limit` runs); the candidate kept is one that fails while every simpler form
/// tried passed. Returns the case and the runs made.
pub async fn shrink(
    drawn: Drawn,
    limit: usize,
    mut fails: impl AsyncFnMut(&Case) -> bool,
) -> (Case, usize) {
    let Drawn { mut case, mut tree } = drawn;
    let mut runs = 0;
    let mut more = tree.simplify();
    while more && runs < limit {
        let candidate = tree.current();
        runs += 1;
        if fails(&candidate).await {
            case = candidate;
            more = tree.simplify();
        } else {
            more = tree.complicate();
        }
    }
    (case, runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_claims_draw_the_same_cases() {
        let claims = Capability::ALL.to_vec();
        let a: Vec<Case> = draw(7, 5, &claims).into_iter().map(|d| d.case).collect();
        let b: Vec<Case> = draw(7, 5, &claims).into_iter().map(|d| d.case).collect();
        assert_eq!(a, b);
        let c: Vec<Case> = draw(8, 5, &claims).into_iter().map(|d| d.case).collect();
        assert_ne!(a, c, "another seed, other cases");
    }

    #[test]
    fn a_case_never_needs_what_the_target_does_not_claim() {
        let claims = [
            Capability::PallasConfig,
            Capability::Metrics,
            Capability::History,
            Capability::Progress,
            Capability::Registry,
        ];
        assert_eq!(not_applicable(&claims), None);
        for d in draw(3, 40, &claims) {
            let c = d.case;
            assert!(c.images.is_empty() && !c.bearer && c.progress == 0, "{c:?}");
            assert_eq!(c.mode, Mode::All, "{c:?}");
        }
    }

    #[test]
    fn a_bridge_that_is_no_pallas_gets_no_generated_deployment_and_the_reason() {
        let why = not_applicable(&[Capability::Progress, Capability::Sessions]);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("pallas_config")),
            "{why:?}"
        );
    }
}
