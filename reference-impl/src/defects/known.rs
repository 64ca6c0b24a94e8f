//! The defect catalogue: every defect's name and what it breaks (mirrored in `DEFECTS.md`),
//! one file per area of the contract.

mod calls;
mod health;
mod metrics;
mod mutants;
mod progress;
mod registry;
mod runtime;
mod transport;

type Entry = (&'static str, &'static str);

/// The areas' catalogues, in catalogue order.
const AREAS: [&[Entry]; 8] = [
    registry::KNOWN,
    health::KNOWN,
    progress::KNOWN,
    calls::KNOWN,
    metrics::KNOWN,
    runtime::KNOWN,
    transport::KNOWN,
    mutants::KNOWN,
];

/// Every known defect with what it breaks, area by area.
pub const KNOWN: &[Entry] = &concat::<{ total(&AREAS) }>(&AREAS);

/// How many defects the areas hold together.
const fn total(areas: &[&[Entry]]) -> usize {
    let (mut a, mut n) = (0, 0);
    while a < areas.len() {
        n += areas[a].len();
        a += 1;
    }
    n
}

/// The areas' catalogues one after the other (`N` is their [`total`]).
const fn concat<const N: usize>(areas: &[&[Entry]]) -> [Entry; N] {
    let mut out: [Entry; N] = [("", ""); N];
    let (mut a, mut n) = (0, 0);
    while a < areas.len() {
        let mut i = 0;
        while i < areas[a].len() {
            out[n] = areas[a][i];
            n += 1;
            i += 1;
        }
        a += 1;
    }
    out
}
