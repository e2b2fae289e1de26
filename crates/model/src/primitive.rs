//! The NPP primitives nppbench can measure, described by what the model needs to know of them.
//!
//! The GPU side (`nppbench-npp`) maps each variant to the function it calls and to a CPU
//! reference. Adding a primitive is a variant here and a row in that table.

use serde::{Deserialize, Serialize};

/// An NPP image primitive under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Primitive {
    /// `nppiConvert_8u32f_C1R_Ctx`: one channel, 8-bit unsigned to 32-bit float.
    #[default]
    Convert8u32fC1,
}

impl Primitive {
    /// Every primitive, in the order reports list them.
    pub const ALL: [Primitive; 1] = [Primitive::Convert8u32fC1];

    /// The NPP function's name, as NVIDIA's documentation spells it.
    pub fn npp_name(self) -> &'static str {
        match self {
            Primitive::Convert8u32fC1 => "nppiConvert_8u32f_C1R_Ctx",
        }
    }

    /// Bytes one source pixel occupies.
    pub fn src_bytes_per_pixel(self) -> u64 {
        match self {
            Primitive::Convert8u32fC1 => 1,
        }
    }

    /// Bytes one destination pixel occupies.
    pub fn dst_bytes_per_pixel(self) -> u64 {
        match self {
            Primitive::Convert8u32fC1 => 4,
        }
    }

    /// Bytes a call reads plus writes per pixel: what a memory-bound kernel moves.
    pub fn bytes_moved_per_pixel(self) -> u64 {
        self.src_bytes_per_pixel() + self.dst_bytes_per_pixel()
    }
}
