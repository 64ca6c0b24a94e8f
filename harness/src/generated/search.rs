//! Running generated cases in batches and shrinking the first failure to a minimal case.

use proptest::strategy::Strategy as _;

use super::Case;

/// What a search found: nothing, or the smallest failing case with its problems.
#[derive(Debug)]
pub struct Found {
    /// The shrunk case.
    pub case: Case,
    /// The problems its run showed.
    pub problems: String,
    /// Cases run while shrinking.
    pub shrink_runs: usize,
}

/// How many cases and from which seed.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Cases generated (run in parallel batches).
    pub cases: usize,
    /// The RNG seed: the same seed generates the same cases.
    pub seed: u64,
    /// At most this many runs while shrinking a failure.
    pub shrink_runs: usize,
}

/// A deterministic proptest runner: the same seed generates the same cases.
pub fn runner(seed: u64) -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// Generates `budget.cases` cases and runs them with `run` (a batch at a time; one result per
/// case, `Err` with the problems when a case fails). The first failing case is shrunk, one run
/// per candidate, to a case that still fails but whose every simpler form passes.
pub fn search(
    budget: Budget,
    batch: usize,
    mut run: impl FnMut(&[Case]) -> Vec<Result<(), String>>,
) -> Result<usize, Box<Found>> {
    use proptest::strategy::ValueTree as _;
    let mut runner = runner(budget.seed);
    let strategy = Case::strategy();
    let mut done = 0;
    while done < budget.cases {
        let n = batch.max(1).min(budget.cases - done);
        let mut trees = Vec::with_capacity(n);
        for _ in 0..n {
            match strategy.new_tree(&mut runner) {
                Ok(t) => trees.push(t),
                Err(_) => break,
            }
        }
        let cases: Vec<Case> = trees.iter().map(|t| t.current()).collect();
        let results = run(&cases);
        if let Some(i) = results.iter().position(Result::is_err) {
            let problems = results
                .into_iter()
                .nth(i)
                .and_then(Result::err)
                .unwrap_or_default();
            return Err(Box::new(shrink(
                trees.swap_remove(i),
                problems,
                budget.shrink_runs,
                &mut run,
            )));
        }
        done += cases.len();
        if cases.is_empty() {
            break;
        }
    }
    Ok(done)
}

fn shrink(
    mut tree: impl proptest::strategy::ValueTree<Value = Case>,
    mut problems: String,
    limit: usize,
    run: &mut impl FnMut(&[Case]) -> Vec<Result<(), String>>,
) -> Found {
    let mut best = tree.current();
    let mut runs = 0;
    let mut more = tree.simplify();
    while more && runs < limit {
        let candidate = tree.current();
        runs += 1;
        match run(std::slice::from_ref(&candidate)).pop() {
            Some(Err(p)) => {
                best = candidate;
                problems = p;
                more = tree.simplify();
            }
            _ => more = tree.complicate(),
        }
    }
    Found {
        case: best,
        problems,
        shrink_runs: runs,
    }
}
