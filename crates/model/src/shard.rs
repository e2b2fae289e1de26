//! One of N disjoint parts of a matrix (`nppbench run --shard K/N`), for runs spread over hosts
//! with no scheduler of nppbench's own: a scenario belongs to the shard its id hashes to (FNV-1a,
//! the same on every host and build), so the N shards together are exactly the unsharded run's
//! scenarios, each once; and the shards' runs merged back into one (`nppbench report --from`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// `K/N` with 1 ≤ K ≤ N.
    pub fn new(index: u32, count: u32) -> Result<Shard, String> {
        if count == 0 || index == 0 || index > count {
            return Err(format!(
                "shard {index}/{count}: K/N needs 1 <= K <= N (the first of four is 1/4)"
            ));
        }
        Ok(Shard { index, count })
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether the scenario `id` belongs to this shard.
    pub fn holds(self, id: &str) -> bool {
        // FNV-1a, 64 bits: stable across hosts, builds and Rust versions, unlike std's hasher.
        let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        hash % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s}: give K/N, the K-th of N parts (1/4, 2/4, 3/4, 4/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k = k.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        Shard::new(k, n)
    }
}

impl TryFrom<String> for Shard {
    type Error = String;
    fn try_from(s: String) -> Result<Shard, String> {
        s.parse()
    }
}

impl From<Shard> for String {
    fn from(s: Shard) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_and_refuse_what_is_not_k_of_n() {
        assert_eq!("2/4".parse::<Shard>().unwrap(), Shard::new(2, 4).unwrap());
        for bad in ["0/4", "5/4", "1/0", "2", "a/b"] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(err.contains("K/N"), "{bad}: {err}");
        }
    }
}
