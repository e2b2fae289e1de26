//! The draws of a `[[sample]]` table's numbers: strides of the unaligned and held-out draws,
//! and values by octave, near a power of two, log-uniform, or picked from a list.

use fastrand::Rng;

use super::Sample;

impl Sample {
    /// The `unaligned` draw's stride: half the time the row plus 1 to 7 bytes past a multiple of
    /// 8 (each remainder alike), else the row rounded up to 2^k.
    pub(super) fn unaligned_stride(&self, rng: &mut Rng, bytes: u64) -> u32 {
        let bytes = bytes.max(1);
        if rng.bool() {
            let remainder = rng.u64(1..=7);
            let base = bytes.next_multiple_of(8);
            let stride = base - 8 + remainder;
            clamp_u32(if stride >= bytes { stride } else { stride + 8 })
        } else {
            let align = 1u64 << rng.u32(0..=self.max_align_log2);
            clamp_u32(bytes.next_multiple_of(align))
        }
    }

    /// The held-out stride: the row plus 0 to 512 bytes, or the row rounded up to 2^k (k uniform
    /// in 0..=log2(max_stride_align)), each half the time.
    pub(super) fn independent_stride(&self, rng: &mut Rng, bytes: u64) -> u32 {
        let bytes = bytes.max(1);
        if rng.bool() {
            clamp_u32(bytes + rng.u64(0..=512))
        } else {
            let align = 1u64 << rng.u32(0..=self.max_align_log2);
            clamp_u32(bytes.next_multiple_of(align))
        }
    }
}

/// A value of `[lo, hi]` whose octave ([2^k, 2^(k+1))) is uniform among those the range meets,
/// then uniform within the octave's part of the range.
pub fn by_octave(rng: &mut Rng, (lo, hi): (u32, u32)) -> u32 {
    let k = rng.u32(lo.ilog2()..=hi.ilog2());
    let first = lo.max(1 << k);
    let last = hi.min(((1u64 << (k + 1)) - 1) as u32);
    rng.u32(first..=last)
}

/// A power of two of `[lo, hi]` (2^k, k uniform over the range's powers), plus -2 to 2, kept in
/// the range.
pub fn near_power_of_two(rng: &mut Rng, (lo, hi): (u32, u32)) -> u32 {
    let k = rng.u32(lo.ilog2()..=hi.ilog2());
    let v = i64::from(1u32 << k) + i64::from(rng.i32(-2..=2));
    v.clamp(i64::from(lo), i64::from(hi)) as u32
}

/// A value of `[lo, hi]` whose logarithm is uniform: floor(e^u), u uniform in [ln lo, ln(hi + 1)).
pub fn log_uniform(rng: &mut Rng, (lo, hi): (u32, u32)) -> u32 {
    let (a, b) = (f64::from(lo).ln(), (f64::from(hi) + 1.0).ln());
    let v = (a + rng.f64() * (b - a)).exp().floor();
    (v as u32).clamp(lo, hi)
}

pub fn pick<T: Copy>(rng: &mut Rng, list: &[T]) -> T {
    list[rng.usize(..list.len())]
}

pub fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}
