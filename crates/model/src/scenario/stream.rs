//! The stream kind axis: which CUDA stream an NPP call is issued on.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ModelError;

/// The CUDA stream an NPP call is issued on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum StreamKind {
    /// The legacy default stream (the NULL handle), which synchronises with every blocking stream.
    LegacyDefault,
    /// The per-thread default stream (`cudaStreamPerThread`).
    PerThreadDefault,
    /// A stream created with `CU_STREAM_DEFAULT`: blocking with respect to the legacy stream.
    Blocking,
    /// A stream created with `CU_STREAM_NON_BLOCKING`.
    NonBlocking,
}

impl StreamKind {
    pub const ALL: [StreamKind; 4] = [
        StreamKind::LegacyDefault,
        StreamKind::PerThreadDefault,
        StreamKind::Blocking,
        StreamKind::NonBlocking,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StreamKind::LegacyDefault => "legacy_default",
            StreamKind::PerThreadDefault => "per_thread_default",
            StreamKind::Blocking => "blocking",
            StreamKind::NonBlocking => "non_blocking",
        }
    }
}

impl fmt::Display for StreamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StreamKind {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StreamKind::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| {
            ModelError::invalid(
                format!("stream kind {s:?}"),
                "unknown; use one of legacy_default, per_thread_default, blocking, non_blocking",
            )
        })
    }
}
