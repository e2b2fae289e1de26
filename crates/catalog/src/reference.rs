//! What the CPU references share: NPP's saturation, rounding and integer result scaling; and the
//! GPU reference kernels a row may name ([`GpuReference`]).

use crate::Sample;

/// Clamps `v` to the range of `sample` (floats pass unchanged).
pub fn saturate(sample: Sample, v: f64) -> f64 {
    match sample {
        Sample::U8 => v.clamp(0.0, 255.0),
        Sample::U16 => v.clamp(0.0, 65535.0),
        Sample::S16 => v.clamp(-32768.0, 32767.0),
        Sample::F32 => f64::from(v as f32),
        Sample::F64 => v,
    }
}

/// Rounds to the nearest integer, ties to even (`NPP_RND_NEAR`).
pub fn round_half_even(v: f64) -> f64 {
    let r = v.round();
    if (v - v.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - v.signum()
    } else {
        r
    }
}

/// NPP's integer result scaling (`…Sfs` functions): `v × 2^-scale`, rounded to nearest (ties to
/// even), then saturated to `sample`.
pub fn scaled(sample: Sample, v: f64, scale: i32) -> f64 {
    saturate(sample, round_half_even(v * 2f64.powi(-scale)))
}

/// A float operation as the GPU does it: in single precision.
pub fn f32op(v: f64) -> f64 {
    f64::from(v as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_even() {
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(3.5), 4.0);
        assert_eq!(round_half_even(-2.5), -2.0);
        assert_eq!(round_half_even(2.25), 2.0);
        assert_eq!(round_half_even(2.75), 3.0);
    }

    #[test]
    fn scaling_rounds_then_saturates() {
        assert_eq!(scaled(Sample::U8, 301.0, 1), 150.0);
        assert_eq!(scaled(Sample::U8, 303.0, 1), 152.0);
        assert_eq!(scaled(Sample::U8, 600.0, 0), 255.0);
        assert_eq!(scaled(Sample::U8, -4.0, 0), 0.0);
    }
}

/// A kernel of nppbench's own that computes what a function computes, timed beside NPP's as a
/// ceiling for the geometry (`nppbench-gpu`'s `reference.rs` compiles it with NVRTC; the
/// throughput probe checks it against the CPU reference, then times it as NPP was timed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuReference {
    /// 8-bit to 32-bit float, one channel: a vectorised kernel where the row and steps allow,
    /// else one pixel per thread.
    ConvertU8ToF32,
}
