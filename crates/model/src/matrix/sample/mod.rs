//! A matrix's `[[sample]]` tables: memory scenarios drawn at random from a seed, for each
//! primitive, part of them held out so that the leak rules can be tested on what they were not
//! fitted on.
//!
//! The draw, for each primitive of the table, from a generator seeded with the table's `seed`
//! and the primitive's name (so adding a primitive leaves the others' draws as they were):
//! first the `fit` scenarios, then the `held_out` ones.
//!
//! **Fitted scenarios.** The first `round(leak_prone_share × count)` take the first item of
//! `streams`, `context` and `threading` (the leak-prone configuration); the others pick each of
//! the three uniformly and independently. Widths and heights as `fit_draw` says:
//! - `uniform_and_aligned` (the default, as every file written before `fit_draw` draws): the
//!   height uniform in its range; the width uniform for half the draws, else a multiple of 2^k
//!   (k uniform in 1..=9), uniform among the range's multiples.
//! - `octaves`: the height's octave ([2^k, 2^(k+1))) uniform among those the range meets, then
//!   the height uniform in it, so 1 and 2 come as often as any octave; the width one of three
//!   ways, each a third of the time: likewise by octave; a multiple of 2^k as above; or a power of
//!   two (2^k, k uniform over the range) plus -2 to 2, so that rows end on both sides of every
//!   power-of-two chunk, narrow ones as often as wide.
//!
//! Then the source and destination strides independently: a row's bytes (width × that side's
//! bytes per pixel) rounded up to an odd or an even multiple of 2^k (each half the time), k
//! uniform in 0..=log2(max_stride_align), plus 0 or 2·2^k, so strides fall just above the row and
//! on both sides of every alignment.
//!
//! - `unaligned`: the wrong-pixel hazard's draw. The width as `octaves` draws it; the height
//!   uniform in 1..=16 half the time (short images, where few rows start at each offset), else
//!   by octave; each stride on its own either unaligned on purpose (the row plus 1 to 7 bytes past
//!   a multiple of 8, each remainder alike, so strides that are not multiples of 2, of 4 or of 8
//!   come as often as one another) or the row rounded up to 2^k, k uniform in
//!   0..=log2(max_stride_align), each half the time.
//!
//! **Held-out scenarios**, as `held_out_draw` says: `like_fit` (the default) draws them as the
//! fitted ones; `log_uniform` from a distribution the fit never draws from, so that a rule's
//! score shares no blind spot with its fit: every axis uniform from its list (no leak-prone
//! share), the width log-uniform over its range, the height uniform, and each stride on its own
//! either the row plus 0 to 512 bytes (uniform) or the row rounded up to 2^k (k uniform in
//! 0..=log2(max_stride_align)), each half the time.
//!
//! A draw that the primitive cannot take ([`Geometry::validate`], the check a `[[geometry]]`
//! table's geometry passes) or whose id the matrix already holds is drawn again, at most
//! [`ATTEMPTS`] times.
//!
//! The same file draws the same scenarios on every machine: the generator is fastrand's wyrand
//! (its version pinned by Cargo.lock; a test pins the first draws) and the name is hashed with
//! FNV-1a, not with std's hasher, whose output may change between Rust releases.

pub mod draws;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use fastrand::Rng;
use toml::Spanned;

use super::locate::Locator;
use super::spec::SampleSpec;
use crate::{ContextFill, Geometry, MemoryScenario, ModelError, Primitive, StreamKind, Threading};
use draws::{by_octave, clamp_u32, log_uniform, near_power_of_two, pick};

/// Draws of one scenario before the sample gives up on it.
const ATTEMPTS: u32 = 1000;

/// The matrix's own lists, which a table that gives none of its own draws from.
pub(super) struct MatrixLists<'a> {
    pub(super) primitives: &'a [Primitive],
    pub(super) streams: &'a [StreamKind],
    pub(super) contexts: &'a [ContextFill],
    pub(super) threading: &'a [Threading],
}

/// How a group of scenarios is drawn (see the module's doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draw {
    UniformAndAligned,
    Octaves,
    LogUniform,
    Unaligned,
}

impl Draw {
    fn parse(
        loc: &Locator<'_>,
        key: &str,
        v: Option<&Spanned<String>>,
        default: Draw,
        allowed: &[(&str, Draw)],
    ) -> Result<Draw, ModelError> {
        let Some(v) = v else { return Ok(default) };
        match allowed.iter().find(|(name, _)| *name == v.get_ref()) {
            Some((_, d)) => Ok(*d),
            None => Err(ModelError::invalid(
                loc.at(v.span()),
                format!(
                    "{key} {:?} is not known; give one of {}",
                    v.get_ref(),
                    allowed
                        .iter()
                        .map(|(n, _)| format!("{n:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}

/// A `[[sample]]` table with its numbers checked and its lists resolved.
struct Sample {
    fit_draw: Draw,
    held_out_draw: Draw,
    fit: u32,
    held_out: u32,
    seed: u64,
    width: (u32, u32),
    height: (u32, u32),
    max_align_log2: u32,
    primitives: Vec<Primitive>,
    streams: Vec<StreamKind>,
    contexts: Vec<ContextFill>,
    threading: Vec<Threading>,
    leak_prone_share: f64,
    /// Where the table starts, for messages about the table as a whole.
    at: String,
}

/// The scenarios of one `[[sample]]` table, none of whose ids is in `taken`; their ids are added
/// to it.
pub(super) fn draw(
    spec: &Spanned<SampleSpec>,
    matrix: &MatrixLists<'_>,
    calls: u32,
    loc: &Locator<'_>,
    taken: &mut BTreeSet<String>,
) -> Result<Vec<MemoryScenario>, ModelError> {
    let sample = Sample::parse(spec, matrix, loc)?;
    let mut out = Vec::new();
    for &primitive in &sample.primitives {
        let mut rng = Rng::with_seed(seed_for(sample.seed, primitive.name()));
        for (count, held_out, draw) in [
            (sample.fit, false, sample.fit_draw),
            (sample.held_out, true, sample.held_out_draw),
        ] {
            // Exact counts, rounded: a held-out group drawn like the fit has its share of
            // leak-prone draws too; one drawn log-uniform has none.
            let share = if draw == Draw::LogUniform {
                0.0
            } else {
                sample.leak_prone_share
            };
            let leak_prone = (f64::from(count) * share).round() as u32;
            for i in 0..count {
                let s = sample.draw_one(&mut rng, draw, primitive, i < leak_prone, calls, taken)?;
                taken.insert(s.id.clone());
                out.push(MemoryScenario { held_out, ..s });
            }
        }
    }
    Ok(out)
}

/// The generator's seed for one primitive of a table: FNV-1a of its name, mixed with the seed.
fn seed_for(seed: u64, name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Sample {
    fn parse(spec: &Spanned<SampleSpec>, matrix: &MatrixLists<'_>, loc: &Locator<'_>) -> Result<Sample, ModelError> {
        let at = loc.at(spec.span());
        let s = spec.get_ref();
        let count = |name, v: &Option<Spanned<i64>>| v.as_ref().map_or(Ok(0), |v| loc.int(name, v, 0, 100_000));
        let (fit, held_out) = (count("fit", &s.fit)?, count("held_out", &s.held_out)?);
        if fit == 0 && held_out == 0 {
            return Err(ModelError::invalid(
                at,
                "the sample draws nothing: give fit or held_out (scenarios per primitive) above 0",
            ));
        }
        let max_align: u32 = match &s.max_stride_align {
            Some(v) => loc.int("max_stride_align", v, 1, 1 << 20)?,
            None => 512,
        };
        if !max_align.is_power_of_two() {
            let span = s.max_stride_align.as_ref().map_or(spec.span(), Spanned::span);
            return Err(ModelError::invalid(
                loc.at(span),
                format!("max_stride_align {max_align} is not a power of two; give 1, 2, 4, … 1048576"),
            ));
        }
        let leak_prone_share = match &s.leak_prone_share {
            Some(v) if !(0.0..=1.0).contains(v.get_ref()) => {
                return Err(ModelError::invalid(
                    loc.at(v.span()),
                    format!(
                        "leak_prone_share {} is out of range; it must be between 0 and 1",
                        v.get_ref()
                    ),
                ));
            }
            Some(v) => *v.get_ref(),
            None => 0.5,
        };
        let fit_draw = Draw::parse(
            loc,
            "fit_draw",
            s.fit_draw.as_ref(),
            Draw::UniformAndAligned,
            &[
                ("uniform_and_aligned", Draw::UniformAndAligned),
                ("octaves", Draw::Octaves),
                ("unaligned", Draw::Unaligned),
            ],
        )?;
        let held_out_draw = Draw::parse(
            loc,
            "held_out_draw",
            s.held_out_draw.as_ref(),
            fit_draw,
            &[("like_fit", fit_draw), ("log_uniform", Draw::LogUniform)],
        )?;
        Ok(Sample {
            fit_draw,
            held_out_draw,
            fit,
            held_out,
            seed: loc.int("seed", &s.seed, 0, i64::MAX)?,
            width: range(loc, "width", s.width.as_ref(), (1, 4096))?,
            height: range(loc, "height", s.height.as_ref(), (1, 256))?,
            max_align_log2: max_align.trailing_zeros(),
            primitives: match &s.primitive {
                Some(p) => loc.primitives(p)?,
                None => matrix.primitives.to_vec(),
            },
            streams: list(loc, &at, "streams", s.streams.as_deref(), matrix.streams)?,
            contexts: list(loc, &at, "context", s.context.as_deref(), matrix.contexts)?,
            threading: list(loc, &at, "threading", s.threading.as_deref(), matrix.threading)?,
            leak_prone_share,
            at,
        })
    }

    /// One scenario of `primitive` that it can take and that the matrix does not hold yet.
    fn draw_one(
        &self,
        rng: &mut Rng,
        draw: Draw,
        primitive: Primitive,
        leak_prone: bool,
        calls: u32,
        taken: &BTreeSet<String>,
    ) -> Result<MemoryScenario, ModelError> {
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let geometry = self.geometry(rng, draw, primitive);
            let (stream, context, threading) = if leak_prone {
                (self.streams[0], self.contexts[0], self.threading[0])
            } else {
                (
                    pick(rng, &self.streams),
                    pick(rng, &self.contexts),
                    pick(rng, &self.threading),
                )
            };
            // The own-stream model makes its own non-blocking streams, as in a geometry table.
            let stream = if threading.owns_stream() {
                StreamKind::NonBlocking
            } else {
                stream
            };
            if let Err(e) = geometry.validate(primitive) {
                last = e.to_string();
                continue;
            }
            let s = MemoryScenario::new(primitive, geometry, stream, context, threading, calls);
            if taken.contains(&s.id) {
                last = format!("{} is in the matrix already", s.id);
                continue;
            }
            return Ok(s);
        }
        Err(ModelError::invalid(
            &self.at,
            format!(
                "no new scenario of {primitive} in {ATTEMPTS} draws (the last: {last}); widen width, height or max_stride_align, or draw fewer"
            ),
        ))
    }

    /// A width and height from their ranges, and each side's stride drawn on its own, as `draw`
    /// says.
    fn geometry(&self, rng: &mut Rng, draw: Draw, primitive: Primitive) -> Geometry {
        let (width, height) = match draw {
            Draw::UniformAndAligned => (self.width(rng), rng.u32(self.height.0..=self.height.1)),
            Draw::Octaves => {
                let width = match rng.u32(0..3) {
                    0 => by_octave(rng, self.width),
                    1 => self.width(rng),
                    _ => near_power_of_two(rng, self.width),
                };
                (width, by_octave(rng, self.height))
            }
            Draw::LogUniform => (log_uniform(rng, self.width), rng.u32(self.height.0..=self.height.1)),
            Draw::Unaligned => {
                let width = match rng.u32(0..3) {
                    0 => by_octave(rng, self.width),
                    1 => self.width(rng),
                    _ => near_power_of_two(rng, self.width),
                };
                let short = (self.height.0, self.height.1.min(16).max(self.height.0));
                let height = if rng.bool() {
                    rng.u32(short.0..=short.1)
                } else {
                    by_octave(rng, self.height)
                };
                (width, height)
            }
        };
        let stride = |rng: &mut Rng, bytes: u64| match draw {
            Draw::LogUniform => self.independent_stride(rng, bytes),
            Draw::Unaligned => self.unaligned_stride(rng, bytes),
            _ => self.stride(rng, bytes),
        };
        let row = primitive.row();
        let src_stride = (row.sources > 0).then(|| stride(rng, u64::from(width) * primitive.src_bytes_per_pixel()));
        let (dst_w, _) = row.dst_size(width, height);
        let dst_stride = if row.dst_is_image() {
            stride(rng, u64::from(dst_w) * primitive.dst_bytes_per_pixel())
        } else {
            // A reduction's values, 8 bytes apart, as every geometry has them.
            clamp_u32(8 * u64::from(dst_w))
        };
        Geometry {
            width,
            height,
            // Set has no source: its one stride is the destination's.
            src_stride: src_stride.unwrap_or(dst_stride),
            dst_stride,
            padded_from: None,
        }
    }

    /// Half the widths uniform in the range; the other half a multiple of 2^k, k uniform in
    /// 1..=9, uniform among the range's multiples (where it has one): a uniform draw alone gives
    /// few widths that are multiples of 16 or more, and the rules need both sides of each.
    fn width(&self, rng: &mut Rng) -> u32 {
        let (lo, hi) = self.width;
        let uniform = rng.u32(lo..=hi);
        if rng.bool() {
            return uniform;
        }
        let align = 1u32 << rng.u32(1..=9);
        let (first, last) = (lo.div_ceil(align), hi / align);
        if first > last {
            uniform
        } else {
            rng.u32(first..=last) * align
        }
    }

    /// A row of `bytes` rounded up to a multiple of 2^k (k uniform in 0..=log2(max)), then to an
    /// odd or an even multiple of it (each half the time), plus 0 or 2 more: so that for every k,
    /// strides aligned to exactly 2^k and to more come alike.
    fn stride(&self, rng: &mut Rng, bytes: u64) -> u32 {
        let align = 1u64 << rng.u32(0..=self.max_align_log2);
        let mut units = bytes.div_ceil(align).max(1);
        if (units % 2 == 1) != rng.bool() {
            units += 1;
        }
        clamp_u32((units + 2 * rng.u64(0..=1)) * align)
    }
}

/// `[lo, hi]`, each at least 1 and within NPP's `int`, `lo ≤ hi`; `default` when not given.
fn range(
    loc: &Locator<'_>,
    name: &str,
    v: Option<&Spanned<Vec<Spanned<i64>>>>,
    default: (u32, u32),
) -> Result<(u32, u32), ModelError> {
    let Some(v) = v else { return Ok(default) };
    let [lo, hi] = v.get_ref().as_slice() else {
        return Err(ModelError::invalid(
            loc.at(v.span()),
            format!("{name} takes two numbers, [lo, hi], not {}", v.get_ref().len()),
        ));
    };
    let max = i64::from(i32::MAX);
    let (lo, hi): (u32, u32) = (loc.int(name, lo, 1, max)?, loc.int(name, hi, 1, max)?);
    if lo > hi {
        return Err(ModelError::invalid(
            loc.at(v.span()),
            format!("{name} [{lo}, {hi}] is empty; give [lo, hi] with lo ≤ hi"),
        ));
    }
    Ok((lo, hi))
}

/// A table's own list, else the matrix's; never empty, since every draw picks from it.
fn list<T: std::str::FromStr<Err = ModelError> + Clone>(
    loc: &Locator<'_>,
    at: &str,
    name: &str,
    own: Option<&[Spanned<String>]>,
    matrix: &[T],
) -> Result<Vec<T>, ModelError> {
    let list = own.map_or_else(|| Ok(matrix.to_vec()), |l| loc.list(l))?;
    if list.is_empty() {
        return Err(ModelError::invalid(
            at,
            format!("the sample's {name} list is empty; give at least one (the first is the leak-prone one)"),
        ));
    }
    Ok(list)
}
