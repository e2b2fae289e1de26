//! The context axis: how each call's `NppStreamContext` is filled.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ModelError;

/// How the `NppStreamContext` of each call is filled: what real code does, which is not always
/// what nppbench's own correct filling does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, Default)]
#[serde(rename_all = "snake_case")]
pub enum ContextFill {
    /// Every field from the device, `nStreamFlags` from the stream (`cuStreamGetFlags`): what
    /// NVIDIA documents.
    #[default]
    FromStream,
    /// Zeroed, with only `hStream` set: what much real code does.
    Zeroed,
    /// From `nppGetStreamContext` after `nppSetStream` (deprecated since CUDA 12.9).
    NppGetStreamContext,
    /// As `from_stream`, but `nStreamFlags` declares a blocking stream whatever the stream is.
    DeclaredBlocking,
    /// As `from_stream`, but `nStreamFlags` declares a non-blocking stream whatever the stream is.
    DeclaredNonBlocking,
}

impl ContextFill {
    pub const ALL: [ContextFill; 5] = [
        ContextFill::FromStream,
        ContextFill::Zeroed,
        ContextFill::NppGetStreamContext,
        ContextFill::DeclaredBlocking,
        ContextFill::DeclaredNonBlocking,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ContextFill::FromStream => "from_stream",
            ContextFill::Zeroed => "zeroed",
            ContextFill::NppGetStreamContext => "npp_get_stream_context",
            ContextFill::DeclaredBlocking => "declared_blocking",
            ContextFill::DeclaredNonBlocking => "declared_non_blocking",
        }
    }
}

impl fmt::Display for ContextFill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ContextFill {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ContextFill::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| {
            ModelError::invalid(
                format!("context {s:?}"),
                "unknown; use one of from_stream, zeroed, npp_get_stream_context, declared_blocking, declared_non_blocking",
            )
        })
    }
}
