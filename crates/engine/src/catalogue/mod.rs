//! The GPU half of `nppbench call-catalogue` (issue #45): every function of a version's catalogue
//! a call can be synthesised for, called from its plan (`nppbench_headers::synth`,
//! `nppbench_npp::generic`) at an aligned geometry, asked the leak and race oracles
//! (`oracles.rs`), and called again at an unaligned source step (the wrong-pixel oracle: the same
//! pixels at another layout must give the same ROI), each synchronised; one JSON line a
//! function. A child process of the CLI runs it from one function on and exits 3 after a function
//! that left the CUDA context dead; the CLI starts the next.

mod design;
mod names;
mod oracles;
mod turns;

pub use design::Shapes;
pub use oracles::{HEIGHT as ORACLE_HEIGHT, WIDTH as ORACLE_WIDTH};
pub use turns::GpuTurns;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use nppbench_gpu::{Gpu, Stream};
use nppbench_headers::files::Prototypes;
use nppbench_headers::generate::FunctionRow;
use nppbench_headers::roles::Role;
use nppbench_headers::synth::{CallPlan, Shape, Sizers, plan};
use nppbench_model::{ContextFill, StreamKind};
use nppbench_npp::generic::Outputs;
use nppbench_npp::{Npp, NppSearch, StreamContext};
use serde_json::json;

/// Of a design resumed: the functions a run stopped in, by symbol, with the shapes and point their
/// lines hold.
pub(crate) type Resumed = std::collections::BTreeMap<String, nppbench_analysis::calls::design::Written>;

/// What to call and where the lines go.
#[derive(Debug, Clone)]
pub struct CatalogueCalls {
    /// The version's catalogue folder (`catalogue/npp-13.0.1.2`).
    pub catalogue: PathBuf,
    pub npp: Option<PathBuf>,
    pub out: PathBuf,
    /// Only symbols containing this.
    pub only: Option<String>,
    /// Only the functions this file names (symbols or bare names, `Add_8u_C1RSfs`, separated by
    /// white space; `#` starts a comment line): a list to call again, say.
    pub names: Option<PathBuf>,
    /// Only this host's part of the functions (by symbol, as `run --shard` parts scenarios).
    pub shard: Option<nppbench_model::Shard>,
    pub width: u32,
    pub height: u32,
    /// The lock files the children share ([`GpuTurns`]); `None`: calls take no turns.
    pub turns: Option<PathBuf>,
    /// A file of lines already written: its functions are left out (a run resumed).
    pub done: Option<PathBuf>,
    /// Each function called at the shapes of its design or of a stranger's draw, a line each
    /// (`design.rs`), instead of once at `width × height` with the oracles.
    pub shapes: Option<Shapes>,
    /// With `shapes`: the functions designed a batch of this many consecutive ones at a time, the
    /// unaligned calls of a batch in one turn alone (`design/batch.rs`); at least 1.
    pub alone_batch: usize,
    /// With `shapes`: the shapes skipped, as (function, shape): their lines written by a child
    /// before, or lost with it (a child started again after one whose context died, or which
    /// died itself). Out of order: a batch's unaligned shapes are called first, asked after.
    pub shapes_done: Vec<(usize, usize)>,
    /// With `shapes`: shapes at unaligned steps whose call a child before made alone and lived
    /// through, as (function, shape): called in a shared turn, as the aligned ones are.
    pub shapes_alive: Vec<(usize, usize)>,
    /// With `shapes`: the functions skipped whole, the rest of each lost with a child that died
    /// outside its shapes.
    pub functions_lost: Vec<usize>,
    /// The functions in an order shuffled by this seed, not the catalogue's: a run stopped at a
    /// time limit has then called a uniform random part of them, not each share's first.
    pub shuffle: Option<u64>,
}

impl CatalogueCalls {
    /// The calls of every function of the committed 13.0.1 catalogue, once each at 64 × 32, as the
    /// tests take them.
    #[cfg(test)]
    pub(crate) fn of_13_0_1() -> CatalogueCalls {
        CatalogueCalls {
            catalogue: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue/npp-13.0.1.2"),
            npp: None,
            out: PathBuf::new(),
            only: None,
            names: None,
            shard: None,
            width: 64,
            height: 32,
            turns: None,
            done: None,
            shapes: None,
            alone_batch: 8,
            shapes_done: Vec::new(),
            shapes_alive: Vec::new(),
            functions_lost: Vec::new(),
            shuffle: None,
        }
    }

    /// The functions called, in the catalogue's order.
    pub fn functions(&self) -> anyhow::Result<(Prototypes, Vec<FunctionRow>)> {
        self.functions_resumed().map(|(p, rows, _)| (p, rows))
    }

    /// [`Self::functions`], and of a design resumed the functions among them a run stopped in,
    /// with what their lines hold ([`names::resumed_in`]), the file read once.
    pub(crate) fn functions_resumed(&self) -> anyhow::Result<(Prototypes, Vec<FunctionRow>, Resumed)> {
        let prototypes =
            Prototypes::read(&self.catalogue).with_context(|| format!("reading {}", self.catalogue.display()))?;
        let (mut done, unfinished) = match &self.done {
            Some(file) => names::resumed_in(file, self.shapes == Some(Shapes::Design))?,
            None => Default::default(),
        };
        for symbol in unfinished.keys() {
            done.remove(symbol);
        }
        let all = nppbench_headers::generate::rows(&prototypes)?;
        let named = match &self.names {
            Some(file) => Some(names::named_in(file, &all)?),
            None => None,
        };
        let rows = all
            .into_iter()
            .filter(|r| named.as_ref().is_none_or(|n| n.contains(&r.symbol)))
            .filter(|r| self.only.as_deref().is_none_or(|o| r.symbol.contains(o)))
            .filter(|r| self.shard.is_none_or(|s| s.holds(&r.symbol)))
            .filter(|r| !done.contains(&r.symbol))
            .collect();
        let mut rows: Vec<FunctionRow> = rows;
        if let Some(seed) = self.shuffle {
            fastrand::Rng::with_seed(seed).shuffle(&mut rows);
        }
        Ok((prototypes, rows, unfinished))
    }
}

/// Appends one JSON line to `out`.
pub fn append_line(out: &Path, v: &serde_json::Value) -> anyhow::Result<()> {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(out)?;
    writeln!(f, "{v}")?;
    Ok(())
}

/// Calls the functions `from..to` (to the last where `to` is `None`), saying `begin i` before and
/// `done i` once its line is written; exits 3 at a function after which the context is dead.
/// With shapes, the functions are designed in batches (`design/batch.rs`, which says the order of
/// what the child says): `at i k` before each step of shape `k` of function `i` (and of its
/// throughput point), `wrote i k` once its line is written, `done i` once all of function `i`'s
/// are; a shape that leaves the context dead ends the child after its line, with the batch's
/// functions not done: the parent starts the next at the first of them, leaving out the shapes
/// written (`--shapes-done`).
pub fn call_catalogue_from(args: &CatalogueCalls, from: usize, to: Option<usize>) -> anyhow::Result<()> {
    let (prototypes, rows, resumed) = args.functions_resumed()?;
    let sizers = Sizers::new(&prototypes);
    let gpu = Gpu::open(0)?;
    let npp = Npp::load(&NppSearch::new(args.npp.as_deref()))?;
    let stream = Stream::new(&gpu, StreamKind::NonBlocking)?;
    let ctx = npp.context(ContextFill::FromStream, &stream, gpu.props())?;
    let oracles = oracles::Oracles::new(&gpu, &npp)?;
    let turns = args
        .turns
        .as_deref()
        .map(GpuTurns::open)
        .transpose()
        .context("opening the GPU's turns")?;
    let called = Called {
        npp: &npp,
        gpu: &gpu,
        ctx: &ctx,
        oracles: &oracles,
        sizers: &sizers,
        turns: turns.as_ref(),
    };
    let to = to.unwrap_or(rows.len()).min(rows.len());
    if let Some(shapes) = args.shapes {
        return design::design_from(&called, args, &rows[..to], (from, resumed), shapes);
    }
    let aligned = Shape {
        width: args.width,
        height: args.height,
        src_step: None,
        dst_step: None,
    };
    let npp_version = npp.version().to_string();
    for (i, row) in rows.iter().enumerate().take(to).skip(from) {
        println!("begin {i}");
        std::io::stdout().flush()?;
        let start = Instant::now();
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // When it began: a stall of every child (a GPU reset) is found among the lines by it. The
        // ROI, the card and NPP's build, so that lines of runs at other ROIs, on other cards (a
        // run resumed on another machine) or of another build are told apart.
        let mut line = json!({"index": i, "symbol": row.symbol, "library": row.library,
            "started_unix_ms": started, "width": args.width, "height": args.height,
            "gpu_uuid": gpu.props().uuid, "npp_version": npp_version});
        let dead = one(&called, row, &aligned, &mut line);
        line["ms"] = json!(start.elapsed().as_secs_f64() * 1e3);
        append_line(&args.out, &line)?;
        // The parent writes the line of a function begun and never done.
        println!("done {i}");
        std::io::stdout().flush()?;
        if dead {
            nppbench_gpu::exit_now(3);
        }
    }
    Ok(())
}

/// An error after which the CUDA context is dead; its line says so, and the child ends.
fn sticky(e: impl std::fmt::Display) -> CallError {
    CallError::Sticky(e.to_string())
}

/// Why a function's call gave no answer: the CUDA context is dead after it (a sticky error: the
/// child ends once the function's line is written), or an error that leaves it alive. Written
/// into the line as its message (`sticky: …` for the first).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    #[error("sticky: {0}")]
    Sticky(String),
    #[error("{0}")]
    Alive(String),
}

impl CallError {
    /// An error that leaves the context alive.
    fn alive(e: impl std::fmt::Display) -> CallError {
        CallError::Alive(e.to_string())
    }

    /// Whether the context is dead after it.
    fn is_sticky(&self) -> bool {
        matches!(self, CallError::Sticky(_))
    }
}

/// What every function's calls are made with.
struct Called<'a> {
    npp: &'a Npp,
    gpu: &'a Gpu,
    ctx: &'a StreamContext,
    oracles: &'a oracles::Oracles,
    sizers: &'a Sizers<'a>,
    turns: Option<&'a GpuTurns>,
}

/// One function's calls, written into `line`: at the aligned steps, the leak and race oracles
/// where it ran, then at the unaligned source step and at the unaligned destination step (last:
/// at those steps many functions leave the context dead); whether the CUDA context is dead after
/// them.
fn one(c: &Called<'_>, row: &FunctionRow, aligned: &Shape, line: &mut serde_json::Value) -> bool {
    let (npp, gpu, ctx, sizers) = (c.npp, c.gpu, c.ctx, c.sizers);
    let shared = turns::take_or_say(c.turns, false, line);
    let a = match plan(row, sizers, aligned) {
        Ok(p) => p,
        Err(why) => {
            line["not_planned"] = json!(why);
            return false;
        }
    };
    let made = |p: &CallPlan| -> Made {
        let m = npp.call_planned(gpu, p, ctx).map_err(CallError::alive)?;
        gpu.synchronize().map_err(sticky)?;
        let out = (m.status >= 0).then(|| m.outputs()).transpose().map_err(sticky)?;
        Ok((m.status, out))
    };
    let first = match made(&a) {
        Ok(x) => x,
        Err(e) => {
            let dead = e.is_sticky();
            line["error"] = json!(e.to_string());
            return dead;
        }
    };
    line["status"] = json!(first.0);
    line["status_name"] = json!(npp.status_name(first.0));
    let Some(out_a) = first.1 else { return false };
    line["outputs_vary"] = json!(out_a.varies());
    line["output_bytes"] = json!(out_a.by_param.iter().map(|(_, b)| b.len()).sum::<usize>());
    if oracles::ask(c.oracles, npp, gpu, row, sizers, line) {
        return true;
    }
    // The wrong-pixel oracle: the same pixels with the sources' rows 3 samples (at least 6 bytes)
    // further apart than aligned, so that rows start off every 16 bytes but on a sample (a step
    // off the sample faults NPP's loads: a sticky error, not an answer).
    let source = a.buffers.iter().find(|b| b.image.is_some());
    let step = source.and_then(|b| b.image.map(|im| im.step)).unwrap_or(512);
    let off = source.map_or(6, |b| (3 * b.elem.scalar.bytes()).max(6));
    let shifted = Shape {
        src_step: Some(step + off),
        ..*aligned
    };
    let Ok(b) = plan(row, sizers, &shifted) else {
        return false;
    };
    line["unaligned_src_step"] = json!(step + off);
    drop(shared);
    let _alone = turns::take_or_say(c.turns, true, line);
    if at_step(&made, &b, &out_a, "unaligned", line) {
        return true;
    }
    // Then the destination's rows 4 bytes further apart (a whole sample where one is wider, as a
    // step off the sample faults NPP's loads), the sources' aligned: a stride that is a multiple
    // of 4 bytes and not of 8, where the atlas's AddC_8u_C3RSfs faults on NPP 13 (a misaligned
    // address, the wrong-pixel hazard's worst form) with its sources aligned. In-place images
    // moved with the sources.
    let destination = a
        .buffers
        .iter()
        .find(|b| b.image.is_some() && matches!(b.role, Role::Destination | Role::DestinationPlanes));
    let Some((step, sample)) = destination.and_then(|b| b.image.map(|im| (im.step, b.elem.bytes()))) else {
        return false;
    };
    let shifted = Shape {
        dst_step: Some(step + sample.max(4)),
        ..*aligned
    };
    let Ok(d) = plan(row, sizers, &shifted) else {
        return false;
    };
    line["unaligned_dst_step"] = json!(step + sample.max(4));
    at_step(&made, &d, &out_a, "unaligned_dst", line)
}

/// A call made and synchronised: NPP's status and, where it succeeded, the outputs; or the error
/// (sticky where the context is dead).
type Made = Result<(i32, Option<Outputs>), CallError>;

/// The call of `plan`, its outputs against the aligned call's (`out_a`), written into `line`
/// under `key`: `KEY_status` and `KEY_differing_bytes`, or `KEY_error`; whether the context is
/// dead after it.
fn at_step(
    made: &dyn Fn(&CallPlan) -> Made,
    plan: &CallPlan,
    out_a: &Outputs,
    key: &str,
    line: &mut serde_json::Value,
) -> bool {
    match made(plan) {
        Ok((status, out)) => {
            line[format!("{key}_status")] = json!(status);
            if let Some(out) = out {
                line[format!("{key}_differing_bytes")] = json!(out.differing_bytes(out_a));
            }
            false
        }
        Err(e) => {
            let dead = e.is_sticky();
            line[format!("{key}_error")] = json!(e.to_string());
            dead
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sticky error is told apart by its kind, and written as `sticky: …` (what the lines
    /// committed before the type say, and what `CallLine` reads as a fault).
    #[test]
    fn a_sticky_error_says_so_and_one_that_leaves_the_context_alive_does_not() {
        let s = sticky("an illegal address");
        assert!(s.is_sticky() && s.to_string() == "sticky: an illegal address", "{s}");
        let a = CallError::alive("NPP_STEP_ERROR");
        assert!(!a.is_sticky() && a.to_string() == "NPP_STEP_ERROR", "{a}");
    }

    /// N hosts' shards of a catalogue are its functions, each once; shuffled, they are too.
    #[test]
    fn shards_of_a_catalogue_are_its_functions_each_once() {
        let calls = |shard| CatalogueCalls {
            shard,
            ..CatalogueCalls::of_13_0_1()
        };
        let symbols = |shard| -> Vec<String> {
            calls(shard)
                .functions()
                .unwrap()
                .1
                .into_iter()
                .map(|r| r.symbol)
                .collect()
        };
        let all = symbols(None);
        let mut merged: Vec<String> = (1..=3)
            .flat_map(|k| symbols(Some(nppbench_model::Shard::new(k, 3).unwrap())))
            .collect();
        merged.sort();
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(merged, sorted);
        assert!(all.len() > 5_000);
        // Shuffled by a seed: the same functions, in another order, the same for the same seed.
        let shuffled = |seed| -> Vec<String> {
            let c = CatalogueCalls {
                shuffle: Some(seed),
                ..calls(None)
            };
            c.functions().unwrap().1.into_iter().map(|r| r.symbol).collect()
        };
        let (a, b) = (shuffled(7), shuffled(7));
        assert_eq!(a, b);
        assert_ne!(a, all);
        assert_ne!(a, shuffled(8));
        let mut a_sorted = a.clone();
        a_sorted.sort();
        assert_eq!(a_sorted, sorted);
    }

    /// A made-up list: the functions a file names, by symbol or bare name, in the catalogue's
    /// order; a name of no function is refused, naming it.
    #[test]
    fn a_file_of_names_picks_those_functions_and_a_name_of_none_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let names = dir.path().join("names.txt");
        std::fs::write(&names, "# again\nNot_8u_C1R nppiAdd_8u_C1RSfs_Ctx\n\nNot_8u_C1R\n").unwrap();
        let calls = CatalogueCalls {
            names: Some(names.clone()),
            ..CatalogueCalls::of_13_0_1()
        };
        let symbols: Vec<String> = calls.functions().unwrap().1.into_iter().map(|r| r.symbol).collect();
        assert_eq!(symbols, ["nppiAdd_8u_C1RSfs_Ctx", "nppiNot_8u_C1R_Ctx"]);
        std::fs::write(&names, "Not_8u_C1R Nott_8u_C1R").unwrap();
        let err = calls.functions().unwrap_err().to_string();
        assert!(err.contains("does not declare: Nott_8u_C1R"), "{err}");
    }
}
