//! A design line (`ShapeLine`): what `call-catalogue --design` wrote for one shape, its compact
//! form, the lines of one function read from a version's file, the line as a `Case`, the
//! evidence and rules of a function's lines, and their score per hazard on shapes not fitted.

use nppbench_model::{Geometry, Primitive};
use nppbench_stats::LeakClass;
use serde::{Deserialize, Serialize};

use super::{Draw, Pixels, Shape};
use crate::evidence::{Evidence, FunctionRules};
use crate::rules::Case;

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
    /// With `ended_process`: the index in its function's design of the shape the child died in
    /// (the parent's line for it); absent where the rest of the function was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape_index: Option<usize>,
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
    /// the flags its context declared, and the shape's time from its turn on the GPU on (`ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_step_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_step_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_non_blocking: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    /// How long the shape waited for its turn on the GPU before `ms` began, and how much of `ms`
    /// it held the GPU alone (its first call at unaligned steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone_ms: Option<f64>,
    /// A shape at unaligned steps whose call a child before made alone and lived through, that
    /// child ending at a later call of its batch: this line's calls were made in a shared turn
    /// (`--shapes-alive`), so it has no `alone_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lived_alone_before: Option<bool>,
    /// The function's throughput point (`throughput.rs`), on a line of its own without a shape,
    /// or why it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<super::Throughput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_error: Option<String>,
}

impl ShapeLine {
    /// Whether the context died at the shape's own call: the wrong-pixel hazard's worst form.
    pub(super) fn faulted(&self) -> bool {
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

    /// What predicting needs of the line, where it has a shape: its function, shape, pixels,
    /// steps, declared flags and what each question measured (an error kept only as `sticky`, a
    /// context killed); the card, the build, the times and the words dropped. `None` without a
    /// shape but for the function's throughput point (or why it failed), kept as it is.
    pub fn compact(&self) -> Option<ShapeLine> {
        if self.throughput.is_some() || self.throughput_error.is_some() {
            return Some(ShapeLine {
                symbol: self.symbol.clone(),
                throughput: self.throughput,
                throughput_error: self.throughput_error.clone(),
                ..ShapeLine::default()
            });
        }
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
pub fn lines_of(bytes: &[u8], symbol: &str) -> Result<Vec<ShapeLine>, crate::calls::LinesError> {
    use std::io::BufRead;
    let needle = format!("\"symbol\":{}", serde_json::to_string(symbol).unwrap_or_default());
    let reader: Box<dyn BufRead + '_> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(bytes)))
    } else {
        Box::new(bytes)
    };
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(crate::calls::LinesError::Gzip)?;
        if line.contains(&needle) {
            out.push(
                serde_json::from_str(&line).map_err(|source| crate::calls::LinesError::Line { line: i + 1, source })?,
            );
        }
    }
    Ok(out)
}

/// Functions a gzip member of a designs file holds: enough lines for gzip to find their
/// repetitions, few enough that one function's member decompresses in about a millisecond.
const FUNCTIONS_PER_MEMBER: usize = 16;

/// Design lines as a version's designs file holds them: the lines of [`FUNCTIONS_PER_MEMBER`]
/// functions (each function's lines consecutive, in order) one gzip member, the members one after
/// another (a valid gzip file, which [`lines_of`] and `read_lines_of` read whole), and an index
/// saying where each function's member lies, a line `SYMBOL\tOFFSET\tLENGTH` each, so that one
/// function's lines are read without the rest. The same lines give the same bytes (gzip's header
/// carries no time).
pub fn members(lines: &[ShapeLine]) -> (Vec<u8>, String) {
    // Each function's run of lines.
    let mut runs: Vec<&[ShapeLine]> = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let symbol = &lines[start].symbol;
        let end = start + lines[start..].iter().take_while(|l| &l.symbol == symbol).count();
        runs.push(&lines[start..end]);
        start = end;
    }
    let (mut bytes, mut index) = (Vec::new(), String::new());
    for group in runs.chunks(FUNCTIONS_PER_MEMBER) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        for l in group.iter().flat_map(|run| run.iter()) {
            let text = serde_json::to_string(l).expect("a line serialises") + "\n";
            std::io::Write::write_all(&mut gz, text.as_bytes()).expect("writing to memory");
        }
        let member = gz.finish().expect("writing to memory");
        for run in group {
            index.push_str(&format!("{}\t{}\t{}\n", run[0].symbol, bytes.len(), member.len()));
        }
        bytes.extend(member);
    }
    (bytes, index)
}

/// The lines of `symbol` in a designs file through its index ([`members`]): its member alone
/// decompressed, and its lines taken from it; none where the index does not name it. A malformed index, or an entry past the
/// bytes, is an error.
pub fn lines_indexed(bytes: &[u8], index: &str, symbol: &str) -> Result<Vec<ShapeLine>, String> {
    for (n, entry) in index.lines().enumerate() {
        let mut parts = entry.split('\t');
        if parts.next() != Some(symbol) {
            continue;
        }
        let number = |p: Option<&str>| p.and_then(|v| v.parse::<usize>().ok());
        let (Some(at), Some(len)) = (number(parts.next()), number(parts.next())) else {
            return Err(format!("index line {}: not SYMBOL, OFFSET and LENGTH", n + 1));
        };
        let member = bytes.get(at..at + len).ok_or_else(|| {
            format!(
                "index line {}: bytes {at}..{} past the file's {}",
                n + 1,
                at + len,
                bytes.len()
            )
        })?;
        return lines_of(member, symbol).map_err(|e| e.to_string());
    }
    Ok(Vec::new())
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Score {
    pub leak: (usize, usize),
    pub race: (usize, usize),
    pub wrong: (usize, usize),
    /// Shapes with no function's rules to predict them (a function not in the design lines).
    pub no_rules: usize,
    /// Scored shapes NPP refused (an error status): nothing measured to predict.
    pub refused: usize,
    /// The same three tallies (leak, race, wrong) for the shapes of each width octave, by its
    /// first width (2^k: widths 2^k to 2^(k+1) - 1), narrowest first.
    pub by_octave: Vec<(u32, [(usize, usize); 3])>,
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
    // Each answer counts in all and in its width's octave: hazard 0 the leak, 1 the race, 2 the
    // wrong pixels.
    let mut octaves: std::collections::BTreeMap<u32, [(usize, usize); 3]> = Default::default();
    let mut tally = |s: &mut Score, c: &Case, hazard: usize, right: bool| {
        let total = match hazard {
            0 => &mut s.leak,
            1 => &mut s.race,
            _ => &mut s.wrong,
        };
        let octave = &mut octaves.entry(1 << c.geometry.width.max(1).ilog2()).or_default()[hazard];
        for pair in [total, octave] {
            pair.1 += 1;
            pair.0 += usize::from(right);
        }
    };
    for c in &theirs.cases {
        let Some(r) = of(c.primitive) else {
            s.no_rules += 1;
            continue;
        };
        tally(&mut s, c, 0, r.predict(c) == c.class);
        // A hazard measured where the design measured none is an answer missed, not skipped.
        if let Some(races) = c.race {
            tally(&mut s, c, 1, r.predict_race(c) == Some(races));
        }
    }
    for c in &theirs.outputs {
        let Some(r) = of(c.primitive) else {
            s.no_rules += 1;
            continue;
        };
        if let Some(wrong) = c.wrong {
            tally(&mut s, c, 2, r.predict_wrong(c) == Some(wrong));
        }
    }
    s.by_octave = octaves.into_iter().collect();
    s.refused = scored.iter().filter(|l| l.status.is_some_and(|st| st < 0)).count();
    Ok((rules, s))
}
