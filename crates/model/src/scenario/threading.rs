//! The threading axis: how host threads issue a memory scenario's calls.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ModelError;

/// How host threads issue the calls of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(try_from = "String", into = "String")]
pub enum Threading {
    /// Every call from the thread that set the scenario up.
    Single,
    /// Every call from a new host thread, which exits after its call.
    ThreadPerCall,
    /// Calls handed round-robin to a fixed pool of this many threads.
    Pool(u32),
    /// A new thread per call, each creating (and destroying) its own non-blocking stream.
    ThreadPerCallOwnStream,
}

impl Threading {
    /// Whether the scenario's stream kind is fixed by the threading model itself.
    pub fn owns_stream(self) -> bool {
        matches!(self, Threading::ThreadPerCallOwnStream)
    }

    /// The most distinct threads this model ever calls from, or `None` when unbounded.
    pub fn thread_bound(self) -> Option<u32> {
        match self {
            Threading::Single => Some(1),
            Threading::Pool(n) => Some(n),
            Threading::ThreadPerCall | Threading::ThreadPerCallOwnStream => None,
        }
    }

    /// The calls a memory scenario of this model makes at least, whatever the matrix's `calls`:
    /// a pool of n, 2n + 4, so that each thread calls twice and the pool is then seen flat
    /// (the settle rule's minimum, `nppbench_stats::settle::minimum_calls`); others, none.
    pub fn calls_to_decide(self) -> u32 {
        match self.thread_bound() {
            Some(n) if n > 1 => 2 * n + 4,
            _ => 0,
        }
    }

    /// The family the report groups by: pool sizes share one.
    pub fn family(self) -> &'static str {
        match self {
            Threading::Single => "single",
            Threading::ThreadPerCall => "thread_per_call",
            Threading::Pool(_) => "pool",
            Threading::ThreadPerCallOwnStream => "thread_per_call_own_stream",
        }
    }
}

impl fmt::Display for Threading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threading::Pool(n) => write!(f, "pool:{n}"),
            other => f.write_str(other.family()),
        }
    }
}

impl FromStr for Threading {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || {
            ModelError::invalid(
                format!("threading model {s:?}"),
                "unknown; use one of single, thread_per_call, pool:N (N ≥ 1), thread_per_call_own_stream",
            )
        };
        match s {
            "single" => Ok(Threading::Single),
            "thread_per_call" => Ok(Threading::ThreadPerCall),
            "thread_per_call_own_stream" => Ok(Threading::ThreadPerCallOwnStream),
            _ => {
                let n = s.strip_prefix("pool:").ok_or_else(unknown)?;
                match n.parse::<u32>() {
                    Ok(n) if n >= 1 => Ok(Threading::Pool(n)),
                    _ => Err(unknown()),
                }
            }
        }
    }
}

impl TryFrom<String> for Threading {
    type Error = ModelError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Threading> for String {
    fn from(t: Threading) -> String {
        t.to_string()
    }
}
