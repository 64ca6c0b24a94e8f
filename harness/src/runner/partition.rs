//! `run --partition k/n`: which share of the selected scenarios a run takes, so that a CI
//! matrix of `n` jobs runs every scenario exactly once.
//!
//! The rule: the scenarios left after `--filter` are sorted by id (byte order) and dealt
//! round-robin; share `k` (1-based) takes the ids at sorted positions `k-1`, `k-1+n`,
//! `k-1+2n`… It depends only on the set of ids, never on file order on disk or the machine, and
//! the shares differ in size by at most one. Within a share, scenarios keep their input order.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The `k`-th of `n` shares (`1 <= k <= n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    /// Which share, 1-based.
    pub k: usize,
    /// How many shares.
    pub n: usize,
}

impl FromStr for Partition {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let usage = || format!("`{s}` is not a partition K/N (e.g. 1/4: the first of 4 shares)");
        let (k, n) = s.split_once('/').ok_or_else(usage)?;
        let k: usize = k.trim().parse().map_err(|_| usage())?;
        let n: usize = n.trim().parse().map_err(|_| usage())?;
        if n == 0 {
            return Err(format!("`{s}`: the number of shares N must be at least 1"));
        }
        if k == 0 || k > n {
            return Err(format!(
                "`{s}`: the share K must be between 1 and {n} (shares are numbered from 1)"
            ));
        }
        Ok(Self { k, n })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Partition {
    /// The positions (into `ids`, ascending) of the ids this share takes.
    pub fn select(&self, ids: &[&str]) -> Vec<usize> {
        let mut by_id: Vec<usize> = (0..ids.len()).collect();
        by_id.sort_by(|&a, &b| ids[a].cmp(ids[b]).then(a.cmp(&b)));
        let mut mine: Vec<usize> = by_id
            .into_iter()
            .enumerate()
            .filter(|(rank, _)| rank % self.n == self.k - 1)
            .map(|(_, pos)| pos)
            .collect();
        mine.sort_unstable();
        mine
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn p(s: &str) -> Partition {
        s.parse().unwrap()
    }

    #[test]
    fn parses_and_refuses_what_is_not_a_share() {
        assert_eq!(p("1/2"), Partition { k: 1, n: 2 });
        assert_eq!(p("4/4").to_string(), "4/4");
        for bad in ["0/2", "3/2", "a/b", "1/0", "2", "", "1/2/3", "-1/2"] {
            assert!(bad.parse::<Partition>().is_err(), "{bad}");
        }
        assert!(
            "0/2"
                .parse::<Partition>()
                .unwrap_err()
                .contains("between 1 and 2")
        );
        assert!("a/b".parse::<Partition>().unwrap_err().contains("K/N"));
    }

    #[test]
    fn the_shares_cover_every_scenario_once_and_are_balanced() {
        let ids: Vec<String> = (0..23).map(|i| format!("s-{:02}", (i * 7) % 23)).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        for n in 1..=6 {
            let mut seen = vec![0; ids.len()];
            let mut sizes = Vec::new();
            for k in 1..=n {
                let mine = Partition { k, n }.select(&refs);
                assert!(mine.windows(2).all(|w| w[0] < w[1]), "input order kept");
                sizes.push(mine.len());
                for i in mine {
                    seen[i] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n={n}: {seen:?}");
            let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
            assert!(hi.unwrap() - lo.unwrap() <= 1, "n={n}: {sizes:?}");
        }
    }

    #[test]
    fn a_share_depends_on_the_ids_not_on_their_order() {
        let ids = ["gamma", "alpha", "delta", "beta", "epsilon"];
        let mut shuffled = ids;
        shuffled.reverse();
        let share = Partition { k: 2, n: 2 };
        let pick = |list: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = share
                .select(list)
                .into_iter()
                .map(|i| list[i].to_owned())
                .collect();
            v.sort();
            v
        };
        // Sorted: alpha beta delta epsilon gamma; share 2 of 2 takes beta and epsilon.
        assert_eq!(pick(&ids), ["beta", "epsilon"]);
        assert_eq!(pick(&shuffled), pick(&ids));
    }
}
