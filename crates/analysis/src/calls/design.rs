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
use nppbench_model::{ContextFill, Geometry, Primitive, StreamKind, Threading};
use nppbench_stats::LeakClass;
use serde::{Deserialize, Serialize};

use crate::evidence::{Evidence, FunctionRules};
use crate::rules::Case;

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
/// other stream and context pair; a pool of two threads), then [`HELD_OUT`] shapes drawn from
/// the same axes at random, seeded by the name. Steps are whole samples (a step off the sample
/// faults NPP's loads).
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
        out.extend(src.map(|k| Shape {
            src_step: Some(s + k),
            ..prone(width, 32)
        }));
        // A function whose output is no image (a reduction's values) has no destination step.
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
            src_step: step(&mut rng, s, px.src_sample_bytes),
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
                src_step: Some(step(&mut rng, width, px.src_bytes_per_pixel, px.src_sample_bytes)),
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

/// What `call-catalogue --design` writes for one shape of one function (fields absent where they
/// do not apply); a function whose child died before its shapes has one line with `ended_process`
/// and no shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShapeLine {
    pub symbol: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub npp_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<Pixels>,
    /// No call could be planned (at the aligned steps: no shape follows), or the child ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_planned: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_process: Option<String>,
    /// The call at the shape: NPP's status, or how it failed (`sticky: …` where the context died).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The output bytes that differ from the same call at aligned steps (0 where the shape's
    /// steps are aligned), or how that call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differing_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aligned_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leak_calls: Option<u32>,
    /// The threads that kept a stream NPP created on them (each call's own thread, or the pool's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads_keeping_streams: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race_rounds: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race_rounds_differing: Option<u32>,
    /// Why a question measured nothing, or how its calls failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub questions_error: Option<String>,
    /// The steps the call was made with, in bytes (the first source's and the destination's),
    /// and the flags its context declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_step_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_step_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_non_blocking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
}

impl ShapeLine {
    /// Whether the context died at the shape's own call: the wrong-pixel hazard's worst form.
    fn faulted(&self) -> bool {
        self.error.as_deref().is_some_and(|e| e.starts_with("sticky"))
    }

    /// The leak class its streams say: a leak where most new threads kept streams; bounded where
    /// a pool's threads (or fewer than half of the new ones) did; flat where none did.
    pub fn class(&self) -> Option<LeakClass> {
        let (calls, keeping) = (self.leak_calls?, self.threads_keeping_streams?);
        let shape = self.shape?;
        Some(if keeping == 0 {
            LeakClass::Flat
        } else if shape.threading.thread_bound().is_none() && 2 * keeping >= calls {
            LeakClass::Leak
        } else {
            LeakClass::Bounded
        })
    }

    /// Other pixels at the shape's steps than at aligned ones, or a context killed there.
    pub fn wrong(&self) -> Option<bool> {
        if self.faulted() {
            return Some(true);
        }
        if self.status? < 0 {
            return None;
        }
        self.differing_bytes.map(|d| d > 0)
    }

    pub fn races(&self) -> Option<bool> {
        Some(self.race_rounds_differing? > 0)
    }

    /// The line as a case of its function's generated primitive; `None` without a shape, pixels,
    /// or anything measured.
    pub fn case(&self) -> Result<Option<Case>, String> {
        let (Some(shape), Some(px)) = (self.shape, self.pixels) else {
            return Ok(None);
        };
        let wrong = self.wrong();
        let class = self.class();
        if class.is_none() && wrong.is_none() {
            return Ok(None);
        }
        let primitive = Primitive::generated(
            &self.symbol,
            u64::from(px.src_bytes_per_pixel),
            u64::from(px.dst_bytes_per_pixel),
        )?;
        let (s, d) = shape.steps(&px);
        let (src_stride, dst_stride) = (self.src_step_bytes.unwrap_or(s), self.dst_step_bytes.unwrap_or(d));
        let geometry = Geometry {
            width: shape.width,
            height: shape.height,
            src_stride,
            dst_stride,
            padded_from: None,
        };
        // The id a memory scenario of the same axes has: what `predict` asks by.
        let id =
            nppbench_model::MemoryScenario::new(primitive, geometry, shape.stream, shape.context, shape.threading, 0)
                .id;
        Ok(Some(Case {
            id,
            primitive,
            geometry,
            stream: shape.stream,
            context: shape.context,
            threading: shape.threading,
            declared_non_blocking: self.declared_non_blocking,
            class: class.unwrap_or(LeakClass::Undecided),
            race: self.races(),
            wrong,
            held_out: shape.draw != Draw::Fit,
        }))
    }
}

impl ShapeLine {
    /// What predicting needs of the line, where it has a shape: its function, shape, pixels,
    /// steps, declared flags and what each question measured (an error kept only as `sticky`, a
    /// context killed); the card, the build, the times and the words dropped. `None` without a
    /// shape.
    pub fn compact(&self) -> Option<ShapeLine> {
        self.shape?;
        Some(ShapeLine {
            symbol: self.symbol.clone(),
            shape: self.shape,
            pixels: self.pixels,
            not_planned: self.not_planned.as_ref().map(|_| String::new()),
            status: self.status,
            error: self.faulted().then(|| "sticky".to_owned()),
            differing_bytes: self.differing_bytes,
            leak_calls: self.leak_calls,
            threads_keeping_streams: self.threads_keeping_streams,
            race_rounds: self.race_rounds,
            race_rounds_differing: self.race_rounds_differing,
            src_step_bytes: self.src_step_bytes,
            dst_step_bytes: self.dst_step_bytes,
            declared_non_blocking: self.declared_non_blocking,
            ..ShapeLine::default()
        })
    }
}

/// The lines of `symbol` in a file of design lines (its text, gzip-compressed or not), parsing
/// only the lines that name it: a version's file holds thousands of functions.
pub fn lines_of(bytes: &[u8], symbol: &str) -> Result<Vec<ShapeLine>, super::LinesError> {
    use std::io::BufRead;
    let needle = format!("\"symbol\":{}", serde_json::to_string(symbol).unwrap_or_default());
    let reader: Box<dyn BufRead + '_> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(bytes)))
    } else {
        Box::new(bytes)
    };
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(super::LinesError::Gzip)?;
        if line.contains(&needle) {
            out.push(serde_json::from_str(&line).map_err(|source| super::LinesError::Line { line: i + 1, source })?);
        }
    }
    Ok(out)
}

/// The evidence of design lines (of one NPP version): cases where the leak was measured, outputs
/// where the pixels were judged. A line of a name registered with other pixel sizes is an error.
pub fn evidence(lines: &[ShapeLine]) -> Result<Evidence, String> {
    let mut cases = Vec::new();
    let mut outputs = Vec::new();
    for line in lines {
        let Some(case) = line.case()? else { continue };
        if case.wrong.is_some() {
            outputs.push(case.clone());
        }
        if case.class != LeakClass::Undecided {
            cases.push(case);
        }
    }
    Ok(Evidence {
        measurements: cases.len(),
        cases,
        inconclusive: 0,
        flips: Vec::new(),
        outputs,
        output_flips: Vec::new(),
        runs: 1,
    })
}

/// How the rules did on shapes they were not fitted on, per hazard: (right, scored).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    pub leak: (usize, usize),
    pub race: (usize, usize),
    pub wrong: (usize, usize),
    /// Shapes with no function's rules to predict them (a function not in the design lines).
    pub no_rules: usize,
    /// Scored shapes NPP refused (an error status): nothing measured to predict.
    pub refused: usize,
}

impl Score {
    /// Right answers in percent, per hazard (`None` where nothing was scored).
    pub fn percent(pair: (usize, usize)) -> Option<f64> {
        (pair.1 > 0).then(|| 100.0 * pair.0 as f64 / pair.1 as f64)
    }
}

/// The rules fitted on `fitted`'s lines (their held-out shapes scored in the rules), then
/// `scored`'s cases predicted by them: the leak class, the race and the wrong pixels, each where
/// the scored line measured it.
pub fn score(fitted: &[ShapeLine], scored: &[ShapeLine]) -> Result<(Vec<FunctionRules>, Score), String> {
    let rules = evidence(fitted)?.rules();
    let theirs = evidence(scored)?;
    let mut s = Score::default();
    let of = |p: Primitive| rules.iter().find(|r| r.primitive == p);
    let tally = |pair: &mut (usize, usize), right: bool| {
        pair.1 += 1;
        pair.0 += usize::from(right);
    };
    for c in &theirs.cases {
        let Some(r) = of(c.primitive) else {
            s.no_rules += 1;
            continue;
        };
        tally(&mut s.leak, r.predict(c) == c.class);
        // A hazard measured where the design measured none is an answer missed, not skipped.
        if let Some(races) = c.race {
            tally(&mut s.race, r.predict_race(c) == Some(races));
        }
    }
    for c in &theirs.outputs {
        let Some(r) = of(c.primitive) else {
            s.no_rules += 1;
            continue;
        };
        if let Some(wrong) = c.wrong {
            tally(&mut s.wrong, r.predict_wrong(c) == Some(wrong));
        }
    }
    s.refused = scored.iter().filter(|l| l.status.is_some_and(|st| st < 0)).count();
    Ok((rules, s))
}

/// What a file of design lines holds, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub shapes: usize,
    /// Functions with no plan (no shape called), shapes with none, shapes NPP refused, shapes
    /// whose own call left the context dead, functions whose child died.
    pub not_planned_functions: usize,
    pub not_planned_shapes: usize,
    pub refused: usize,
    pub faulted: usize,
    pub ended_process: usize,
    /// Shapes measured in each leak class (`leak`, `bounded`, `flat`), racing of those asked,
    /// wrong of those judged.
    pub classes: Vec<(String, usize)>,
    pub racing: (usize, usize),
    pub wrong: (usize, usize),
    /// Functions with a shape of each hazard: a leak, a race, wrong pixels.
    pub functions_with: (usize, usize, usize),
    /// The held-out shapes, predicted by the rules fitted on the others.
    pub held_out: Score,
}

/// The counts of `lines` (one NPP version's), and how the rules fitted on their fitted shapes
/// predict their held-out ones.
pub fn summary(lines: &[ShapeLine]) -> Result<Summary, String> {
    use std::collections::BTreeSet;
    let shaped: Vec<&ShapeLine> = lines.iter().filter(|l| l.shape.is_some()).collect();
    let names = |f: &dyn Fn(&ShapeLine) -> bool| -> usize {
        lines
            .iter()
            .filter(|l| f(l))
            .map(|l| l.symbol.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    };
    let mut classes: Vec<(String, usize)> = Vec::new();
    for c in shaped.iter().filter_map(|l| l.class()) {
        let name = c.as_str().to_owned();
        match classes.iter_mut().find(|(n, _)| *n == name) {
            Some((_, k)) => *k += 1,
            None => classes.push((name, 1)),
        }
    }
    let pair = |f: &dyn Fn(&ShapeLine) -> Option<bool>| {
        let judged: Vec<bool> = shaped.iter().filter_map(|l| f(l)).collect();
        (judged.iter().filter(|w| **w).count(), judged.len())
    };
    let (fit, held): (Vec<ShapeLine>, Vec<ShapeLine>) = shaped
        .iter()
        .map(|l| (*l).clone())
        .partition(|l| l.shape.is_some_and(|s| s.draw == Draw::Fit));
    Ok(Summary {
        functions: names(&|_| true),
        shapes: shaped.len(),
        not_planned_functions: lines
            .iter()
            .filter(|l| l.shape.is_none() && l.not_planned.is_some())
            .count(),
        not_planned_shapes: shaped.iter().filter(|l| l.not_planned.is_some()).count(),
        refused: shaped.iter().filter(|l| l.status.is_some_and(|s| s < 0)).count(),
        faulted: shaped.iter().filter(|l| l.faulted()).count(),
        ended_process: lines.iter().filter(|l| l.ended_process.is_some()).count(),
        racing: pair(&ShapeLine::races),
        wrong: pair(&ShapeLine::wrong),
        functions_with: (
            names(&|l| l.class() == Some(LeakClass::Leak)),
            names(&|l| l.races() == Some(true)),
            names(&|l| l.wrong() == Some(true)),
        ),
        classes,
        held_out: score(&fit, &held)?.1,
    })
}

#[cfg(test)]
mod tests;
