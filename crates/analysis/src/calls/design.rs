//! The design of a function known from its headers alone (issue #45): the shapes
//! `nppbench call-catalogue --design` calls it at, the line it writes for each, and the rules
//! fitted on those lines, scored on shapes drawn from another distribution.
//!
//! A shape is a memory scenario of the atlas without its 20 calls: the ROI, both steps, the
//! stream, the context filling and the threading model. At each, the function is called
//! synchronised, then asked three questions, none with a reference written by hand:
//! - **wrong pixels**: the same pixels at aligned steps must give the same ROI (skipped where the
//!   shape's steps are the aligned ones);
//! - **the leak**: [`LEAK_CALLS`] calls, each from a new host thread (or handed round a pool),
//!   with the streams NPP created on each thread and never destroyed counted;
//! - **the race**: rounds with the inputs written late on the caller's stream, as the
//!   catalogue's race oracle makes them, on the shape's stream and context.
//!
//! Each line becomes a [`Case`] of a [generated](nppbench_model::Primitive::generated) primitive,
//! so the atlas's own rule search ([`crate::evidence::Evidence::rules`]) fits the function's
//! leak, race and wrong-pixel rules; [`score`] predicts shapes it was not fitted on.

use nppbench_model::draws::{clamp_u32, log_uniform, near_power_of_two, pick};
use nppbench_model::{ContextFill, StreamKind, Threading};
use serde::{Deserialize, Serialize};

/// Calls of the leak question at a shape: new threads where each call has its own, else the
/// calls handed round the pool (each of its threads calls several times).
pub const LEAK_CALLS: u32 = 4;
/// Rounds of the race question at a shape.
pub const RACE_ROUNDS: u32 = 2;
/// Steps are rounded up to this many bytes where a shape leaves them aligned, a row and its
/// margins ([`MARGINS`]), as the synthesised calls round them.
pub const ALIGNED: u32 = 512;
/// The bytes a synthesised image keeps beside each row, both sides together
/// (`nppbench_headers::synth::MARGIN_BYTES` twice; the engine's tests hold them equal): a step
/// is at least a row and these.
pub const MARGINS: u64 = 128;

/// What a shape was drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Draw {
    /// Fitted on.
    Fit,
    /// Drawn as the fitted ones are, scored only.
    HeldOut,
    /// Drawn from another distribution ([`stranger`]), scored only.
    Stranger,
}

/// The bytes of a pixel and of one sample of the function's first source and of its destination
/// (one plane's where planar), from its synthesised call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pixels {
    pub src_bytes_per_pixel: u32,
    pub src_sample_bytes: u32,
    pub dst_bytes_per_pixel: u32,
    pub dst_sample_bytes: u32,
}

impl Pixels {
    fn aligned(row: u64) -> u32 {
        clamp_u32((row + MARGINS).next_multiple_of(u64::from(ALIGNED)))
    }

    /// Both steps of a `width`-pixel row where a shape leaves them aligned.
    pub fn aligned_steps(&self, width: u32) -> (u32, u32) {
        (
            Pixels::aligned(u64::from(width) * u64::from(self.src_bytes_per_pixel)),
            Pixels::aligned(u64::from(width) * u64::from(self.dst_bytes_per_pixel)),
        )
    }
}

/// One shape: a scenario's axes, the steps in bytes (`None`: aligned, [`ALIGNED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    pub width: u32,
    pub height: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_step: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_step: Option<u32>,
    pub stream: StreamKind,
    pub context: ContextFill,
    pub threading: Threading,
    pub draw: Draw,
}

impl Shape {
    /// The steps the calls are made with, in bytes.
    pub fn steps(&self, px: &Pixels) -> (u32, u32) {
        let (s, d) = px.aligned_steps(self.width);
        (self.src_step.unwrap_or(s), self.dst_step.unwrap_or(d))
    }

    /// Whether both steps are the aligned ones (the wrong-pixel question has nothing to ask).
    pub fn aligned(&self, px: &Pixels) -> bool {
        self.steps(px) == px.aligned_steps(self.width)
    }

    /// The scenario id: `W×H/src/dst/stream/context/threading`.
    pub fn id(&self, px: &Pixels) -> String {
        let (s, d) = self.steps(px);
        format!(
            "{}x{}/{s}/{d}/{}/{}/{}",
            self.width, self.height, self.stream, self.context, self.threading
        )
    }
}

/// The leak-prone configuration: a created blocking stream whose context says so, a new thread
/// per call.
fn prone(width: u32, height: u32) -> Shape {
    Shape {
        width,
        height,
        src_step: None,
        dst_step: None,
        stream: StreamKind::Blocking,
        context: ContextFill::FromStream,
        threading: Threading::ThreadPerCall,
        draw: Draw::Fit,
    }
}

/// Widths on both sides of the powers of two a function may split its rows at, 1 to 3,839.
const WIDTHS: [u32; 20] = [
    1, 7, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 511, 512, 1000, 1024, 1918, 1920, 3839,
];
/// The stream and context pairs besides the leak-prone one: each other declaration of the flags,
/// each other stream.
const CONFIGURATIONS: [(StreamKind, ContextFill); 8] = [
    (StreamKind::NonBlocking, ContextFill::FromStream),
    (StreamKind::Blocking, ContextFill::DeclaredNonBlocking),
    (StreamKind::NonBlocking, ContextFill::DeclaredBlocking),
    (StreamKind::LegacyDefault, ContextFill::Zeroed),
    (StreamKind::LegacyDefault, ContextFill::FromStream),
    (StreamKind::PerThreadDefault, ContextFill::FromStream),
    (StreamKind::Blocking, ContextFill::Zeroed),
    (StreamKind::Blocking, ContextFill::NppGetStreamContext),
];
/// Shapes held out of the fit, drawn as the fitted ones.
pub const HELD_OUT: usize = 8;

/// A function's design: the fitted shapes (the leak-prone configuration at every width of
/// [`WIDTHS`] and at four heights; at 1,918 and 31 pixels the source's rows 1 to 3 samples and 4
/// and 16 bytes further apart than aligned, the destination's 1 sample, 4 and 16 bytes; every
/// other stream and context pair; a pool of two threads), and [`HELD_OUT`] shapes drawn from the
/// same axes at random, seeded by the name; the shapes at aligned steps first. Steps are whole
/// samples (a step off the sample faults NPP's loads).
pub fn design(symbol: &str, px: &Pixels) -> Vec<Shape> {
    let mut out: Vec<Shape> = WIDTHS.iter().map(|&w| prone(w, 32)).collect();
    out.extend([1, 2, 8, 100].map(|h| prone(1918, h)));
    for width in [1918, 31] {
        let (s, d) = px.aligned_steps(width);
        let (ss, ds) = (px.src_sample_bytes.max(1), px.dst_sample_bytes.max(1));
        let src = [
            ss,
            2 * ss,
            3 * ss,
            4u32.next_multiple_of(ss),
            16u32.next_multiple_of(ss),
        ];
        let dst = [ds, 4u32.next_multiple_of(ds), 16u32.next_multiple_of(ds)];
        // A function with no source image (Set) has no source step, and one whose output is no
        // image (a reduction's values) no destination step.
        if px.src_bytes_per_pixel > 0 {
            out.extend(src.map(|k| Shape {
                src_step: Some(s + k),
                ..prone(width, 32)
            }));
        }
        if px.dst_bytes_per_pixel > 0 {
            out.extend(dst.map(|k| Shape {
                dst_step: Some(d + k),
                ..prone(width, 32)
            }));
        }
    }
    out.extend(CONFIGURATIONS.map(|(stream, context)| Shape {
        stream,
        context,
        ..prone(1918, 32)
    }));
    out.extend([StreamKind::Blocking, StreamKind::NonBlocking].map(|stream| Shape {
        stream,
        threading: Threading::Pool(2),
        ..prone(1918, 32)
    }));
    // Steps that coincide for this function's samples (4 bytes are one 32-bit sample) once.
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|s| seen.insert(s.id(px)));
    let mut rng = fastrand::Rng::with_seed(fnv1a(symbol));
    let mut held = Vec::new();
    while held.len() < HELD_OUT {
        let width = near_power_of_two(&mut rng, (1, 4096));
        let (s, d) = px.aligned_steps(width);
        let step = |rng: &mut fastrand::Rng, aligned: u32, sample: u32| {
            rng.bool().then(|| aligned + sample.max(1) * rng.u32(1..=4))
        };
        let (stream, context) = pick(&mut rng, &CONFIGURATIONS);
        let mut shape = Shape {
            src_step: step(&mut rng, s, px.src_sample_bytes).filter(|_| px.src_bytes_per_pixel > 0),
            dst_step: step(&mut rng, d, px.dst_sample_bytes).filter(|_| px.dst_bytes_per_pixel > 0),
            draw: Draw::HeldOut,
            ..prone(width, pick(&mut rng, &[1, 8, 32, 100]))
        };
        if rng.bool() {
            (shape.stream, shape.context) = (stream, context);
        }
        if !out.iter().chain(&held).any(|o| o.id(px) == shape.id(px)) {
            held.push(shape);
        }
    }
    out.extend(held);
    // The shapes at unaligned steps last: where a call leaves the CUDA context dead there (a
    // fault, the wrong pixels' worst form), its child ends and the function's later shapes are
    // not called, so every other axis is measured first.
    out.sort_by_key(|s| !s.aligned(px));
    out
}

/// `count` shapes from a distribution the design never draws from, as a stranger would: the
/// width log-uniform over 1 to 4,096 pixels, the height log-uniform over 1 to 256, each step on
/// its own the row and its [`MARGINS`] plus 0 to 64 samples (uniform) or rounded up to 2^k bytes
/// (k uniform in 0..=9, then up to a whole sample), and every stream, context filling and
/// threading model uniform. Seeded by `seed` and the name.
pub fn stranger(symbol: &str, px: &Pixels, count: usize, seed: u64) -> Vec<Shape> {
    let mut rng = fastrand::Rng::with_seed(seed ^ fnv1a(symbol));
    let step = |rng: &mut fastrand::Rng, width: u32, bpp: u32, sample: u32| {
        let row = u64::from(width) * u64::from(bpp) + MARGINS;
        let sample = u64::from(sample.max(1));
        let s = if rng.bool() {
            row + sample * rng.u64(0..=64)
        } else {
            row.next_multiple_of(1 << rng.u32(0..=9)).next_multiple_of(sample)
        };
        clamp_u32(s)
    };
    let threadings = [Threading::ThreadPerCall, Threading::Pool(2)];
    (0..count)
        .map(|_| {
            let width = log_uniform(&mut rng, (1, 4096));
            Shape {
                width,
                height: log_uniform(&mut rng, (1, 256)),
                src_step: Some(step(&mut rng, width, px.src_bytes_per_pixel, px.src_sample_bytes))
                    .filter(|_| px.src_bytes_per_pixel > 0),
                dst_step: Some(step(&mut rng, width, px.dst_bytes_per_pixel, px.dst_sample_bytes))
                    .filter(|_| px.dst_bytes_per_pixel > 0),
                stream: pick(&mut rng, &StreamKind::ALL),
                context: pick(&mut rng, &ContextFill::ALL),
                threading: pick(&mut rng, &threadings),
                draw: Draw::Stranger,
            }
        })
        .collect()
}

/// FNV-1a of a name: a seed that no Rust release changes.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

mod designed;
mod lines;
mod summary;
pub mod throughput;

pub use designed::{Designed, generated_geometry};
pub use lines::{Score, ShapeLine, evidence, lines_indexed, lines_of, members, score};
pub use summary::{Summary, Times, Written, summary, unfinished, unfinished_written};
pub use throughput::Throughput;

#[cfg(test)]
mod tests;

/// A made-up line (no GPU wrote it) of `symbol` at `shape`: the call ran and matched at aligned
/// steps, and kept streams on every new thread where `keeps`, none otherwise. What the tests of
/// the crates' readers of design lines build their functions from.
#[cfg(test)]
pub(crate) fn made_up_line(symbol: &str, px: Pixels, shape: Shape, keeps: bool) -> ShapeLine {
    ShapeLine {
        symbol: symbol.into(),
        shape: Some(shape),
        pixels: Some(px),
        status: Some(0),
        differing_bytes: Some(0),
        leak_calls: Some(LEAK_CALLS),
        threads_keeping_streams: Some(if keeps { LEAK_CALLS } else { 0 }),
        ..ShapeLine::default()
    }
}
