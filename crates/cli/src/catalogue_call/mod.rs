//! `nppbench call-catalogue` (hidden; issue #45): every function of a version's catalogue that a
//! call can be synthesised for, called on the GPU from its roles by child processes
//! (`nppbench_engine::call_catalogue_from`). One JSON line a function, never one dropped: a
//! function that cannot be planned or loaded says why, and one that kills the CUDA context (a
//! fault, a sticky error) is recorded here, and a new child starts at the next function (where
//! each is called at many shapes, in the same function or batch, past the shapes written:
//! `restart.rs`).

mod design;
mod parts;
mod restart;
mod stop;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use nppbench_engine::{CatalogueCalls, GpuTurns, append_line, call_catalogue_from};
use serde_json::json;

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The version's catalogue folder (`catalogue/npp-13.0.1.2`: prototypes.tsv.gz).
    #[arg(long, value_name = "DIR", required_unless_present = "summarize")]
    catalogue: Option<PathBuf>,
    /// NPP's libraries (of that version); default: the same search as `run`.
    #[arg(long, value_name = "DIR")]
    npp: Option<PathBuf>,
    /// The JSON lines written, one a function (appended to).
    #[arg(long, value_name = "FILE", required_unless_present = "summarize")]
    out: Option<PathBuf>,
    /// Instead of calling: count the outcomes of a file of such lines (`.gz` too), the most first.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["catalogue", "out"])]
    summarize: Option<PathBuf>,
    /// With --summarize: how another run's oracles agree with that file's, on the functions both
    /// asked (another GPU, or a run before a change).
    #[arg(long, value_name = "FILE", requires = "summarize")]
    against: Option<PathBuf>,
    /// With --summarize FILE of design lines: how the rules fitted on them predict this file's
    /// shapes (a stranger's draw, `--stranger N`), right answers per hazard.
    #[arg(long, value_name = "FILE", requires = "summarize", conflicts_with = "against")]
    score: Option<PathBuf>,
    /// Call each function at every shape of its design (about 50: widths across powers of two,
    /// unaligned steps, every stream and context, a pool; 8 held out), a line a shape, each
    /// asked the leak, race and wrong-pixel questions, instead of once with the oracles.
    #[arg(long, conflicts_with = "stranger")]
    design: bool,
    /// Call each function at N shapes drawn as a stranger would (log-uniform widths from 1
    /// pixel, independent steps, every stream, context and threading model), a line a shape:
    /// what `--summarize DESIGN --score FILE` scores the design's rules on.
    #[arg(long, value_name = "N")]
    stranger: Option<usize>,
    /// The stranger's seed.
    #[arg(long, default_value_t = 1, requires = "stranger")]
    seed: u64,
    /// Only functions whose symbol contains this.
    #[arg(long)]
    only: Option<String>,
    /// Only the functions this file names (symbols or bare names such as `Add_8u_C1RSfs`,
    /// separated by white space; `#` starts a comment line): those to call again, say. A name of
    /// no function of the catalogue is refused.
    #[arg(long, value_name = "FILE")]
    functions: Option<PathBuf>,
    /// The ROI's width and height, of every call (default: the leak and race oracles' 1918×32,
    /// a row wide enough for the functions measured to split their work and to compute the wrong
    /// pixels of NPP 13; at 64×32, as before, a source row of 64 bytes is shorter than that).
    #[arg(long, default_value_t = nppbench_engine::ORACLE_WIDTH)]
    width: u32,
    #[arg(long, default_value_t = nppbench_engine::ORACLE_HEIGHT)]
    height: u32,
    /// This host's part of the functions (K/N by symbol, as `run --shard`): the N parts' lines
    /// together are every function's, each once.
    #[arg(long, value_name = "K/N")]
    shard: Option<nppbench_model::Shard>,
    /// Child processes at once, each calling its share of the functions in order (a function
    /// that kills its context costs its child a restart, a GPU's worth of others go on).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// With --design or --stranger: each child designs its functions in batches of G
    /// consecutive ones, the unaligned calls of a batch (and its throughput points) in one turn
    /// alone on the GPU, so that the other children wait for it once a batch, not once a
    /// function (1: a turn alone a function).
    #[arg(long, value_name = "G", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    alone_batch: u16,
    /// Keep the lines already in --out and call only the functions without one (a run stopped
    /// by Ctrl-C, SIGTERM or a time limit, continued), and with --design the functions whose
    /// designs it stopped in, without the shapes written; the whole lines of the part files a
    /// killed run left beside it are kept first, and the functions whose library was missing
    /// from NPP's folder are called again. Without it, an --out that holds lines is refused.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Call the functions in an order shuffled by this seed, not the catalogue's: a run stopped
    /// at a time limit has then called a uniform random part of them.
    #[arg(long, value_name = "SEED")]
    shuffle: Option<u64>,
    /// Internal: the file whose functions are left out (the parent's --out, when resumed).
    #[arg(long, hide = true)]
    done: Option<PathBuf>,
    /// Internal: a child's first function, and the one past its last.
    #[arg(long, hide = true)]
    from: Option<usize>,
    #[arg(long, hide = true)]
    to: Option<usize>,
    /// Internal: the shapes already written or given up, as FUNCTION:SHAPE.
    #[arg(long, hide = true, value_delimiter = ',', value_parser = restart::function_shape)]
    shapes_done: Vec<(usize, usize)>,
    /// Internal: the shapes at unaligned steps whose call a child before made alone and lived
    /// through, as FUNCTION:SHAPE: called again in a shared turn.
    #[arg(long, hide = true, value_delimiter = ',', value_parser = restart::function_shape)]
    shapes_alive: Vec<(usize, usize)>,
    /// Internal: the functions given up whole (the rest of each lost with a child).
    #[arg(long, hide = true, value_delimiter = ',')]
    functions_lost: Vec<usize>,
    /// Internal: the lock files the children take turns on the GPU with (`GpuTurns`).
    #[arg(long, hide = true)]
    turns: Option<PathBuf>,
}

impl CallArgs {
    /// Whether these arguments only read and print (`--summarize`).
    pub(crate) fn only_prints(&self) -> bool {
        self.summarize.is_some()
    }

    fn calls(&self) -> CatalogueCalls {
        CatalogueCalls {
            catalogue: self.catalogue.clone().unwrap_or_default(),
            npp: self.npp.clone(),
            out: self.out.clone().unwrap_or_default(),
            only: self.only.clone(),
            names: self.functions.clone(),
            shard: self.shard,
            width: self.width,
            height: self.height,
            turns: self.turns.clone(),
            shapes: match (self.design, self.stranger) {
                (true, _) => Some(nppbench_engine::Shapes::Design),
                (false, Some(count)) => Some(nppbench_engine::Shapes::Stranger { count, seed: self.seed }),
                (false, None) => None,
            },
            alone_batch: usize::from(self.alone_batch),
            shapes_done: self.shapes_done.clone(),
            shapes_alive: self.shapes_alive.clone(),
            functions_lost: self.functions_lost.clone(),
            shuffle: self.shuffle,
            done: if self.resume {
                self.out.clone()
            } else {
                self.done.clone()
            },
        }
    }
}

pub(crate) fn call_catalogue(args: CallArgs) -> anyhow::Result<()> {
    if let Some(file) = &args.summarize {
        if design::is_design(file)? {
            return design::summarize(file, args.score.as_deref());
        }
        if args.score.is_some() {
            return Err(crate::exit::bad_input(format!(
                "--score: {} holds no design lines: give the file `call-catalogue --design` wrote",
                file.display()
            )));
        }
        summarize(file)?;
        return match &args.against {
            Some(other) => against(file, other),
            None => Ok(()),
        };
    }
    match args.from {
        Some(from) => {
            // A function that faults ends the child: without a core file, which for a process
            // holding a CUDA context takes seconds to write.
            let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
            call_catalogue_from(&args.calls(), from, args.to)
        }
        None => parent(&args),
    }
}

/// Splits the functions into `--jobs` runs of consecutive ones, each written to a file of its own
/// by its children, then appends the files to `--out` in the catalogue's order. The children take
/// turns on the GPU through lock files beside `--out` (the unaligned step alone), removed after.
fn parent(args: &CallArgs) -> anyhow::Result<()> {
    let calls = args.calls();
    if let Some(f) = args.functions.as_deref().filter(|f| !f.is_file()) {
        return Err(crate::exit::bad_input(format!(
            "--functions {}: no such file: give a file of function names (`Add_8u_C1RSfs`), separated by white space",
            f.display()
        )));
    }
    if args.resume {
        let kept = parts::join_left_parts(&calls.out)?;
        if kept > 0 {
            eprintln!(
                "kept {kept} lines of the part files a stopped run left beside {}",
                calls.out.display()
            );
        }
        let forgotten = parts::forget_missing_libraries(&calls.out)?;
        if forgotten > 0 {
            eprintln!("calling again {forgotten} functions whose library was missing from NPP's folder");
        }
    } else {
        parts::refuse_unless_fresh(&calls.out)?;
    }
    // What it reads (the catalogue, --functions, --out when resumed) is what it was given.
    let (_, rows) = calls
        .functions()
        .map_err(|e| crate::exit::bad_input(format!("{e:#}")))?;
    let jobs = usize::from(args.jobs).min(rows.len().max(1));
    let share = rows.len().div_ceil(jobs);
    let parts: Vec<(PathBuf, usize, usize)> = (0..jobs)
        .map(|k| (parts::part(&calls.out, k), k * share, ((k + 1) * share).min(rows.len())))
        .collect();
    GpuTurns::open(&calls.out).with_context(|| format!("creating the lock files beside {}", calls.out.display()))?;
    let children = Arc::new(stop::Children::default());
    let on_signal = children.clone();
    ctrlc::set_handler(move || on_signal.stop()).context("installing the Ctrl-C and SIGTERM handler")?;
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|(out, from, to)| scope.spawn(|| share_of(args, &rows, out, (*from, *to), &children)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a share's thread"))
            .collect()
    });
    // The parts, in order, into --out: as a resumed run joins those a killed parent left.
    parts::join_left_parts(&calls.out)?;
    for lock in GpuTurns::paths(&calls.out) {
        let _ = std::fs::remove_file(lock);
    }
    if children.stopped() {
        let lines = std::fs::read_to_string(&calls.out).map_or(0, |t| t.lines().count());
        return Err(crate::exit::CallsInterrupted {
            out: calls.out.display().to_string(),
            lines,
        }
        .into());
    }
    results.into_iter().collect()
}

/// Starts children over functions `from..to` until every one has its lines in `out`: a child
/// that dies leaves the function (or shape) it was in without one, which gets a line saying how
/// the child ended; with shapes, the next child starts at the first function of its batch not
/// done, leaving out the shapes written in every function (`restart.rs`). A child that ends
/// before its first function is started again,
/// twice at most. After a stop (`children`), no child starts and the function a child was stopped
/// in gets no line.
fn share_of(
    args: &CallArgs,
    rows: &[nppbench_headers::generate::FunctionRow],
    out: &Path,
    (from, to): (usize, usize),
    children: &stop::Children,
) -> anyhow::Result<()> {
    let shapes = args.calls().shapes.is_some();
    let (mut start, mut not_started) = (restart::Start::at(from), 0);
    while start.from < to && !children.stopped() {
        let mut child = child_command(args, out, &start, to)?
            .stdout(Stdio::piped())
            .spawn()
            .context("starting a child")?;
        children.started(child.id());
        let mut progress = restart::Progress::default();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            progress.read(&line?);
        }
        let status = child.wait()?;
        children.ended(child.id());
        // Ctrl-C reaches the children too, maybe before the parent's handler has run: a child
        // ended by SIGINT or SIGTERM was stopped, not at fault, and so is the run.
        if matches!(status.signal(), Some(2 | 15)) {
            children.stop();
        }
        if children.stopped() {
            break;
        }
        let ended = match (status.success(), status.code()) {
            (true, _) => restart::Ended::Success,
            (false, Some(3)) => restart::Ended::ContextDead,
            _ => restart::Ended::Died,
        };
        match restart::next(&progress, ended, &start, shapes) {
            restart::Next::Finished => break,
            restart::Next::NotStarted if not_started < 2 => {
                not_started += 1;
                eprintln!("a child ended ({status}) before its first function: starting it again");
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
            restart::Next::NotStarted => {
                anyhow::bail!("a child ended ({status}) before its first function, three times")
            }
            restart::Next::Restart { start: s, lost } => {
                if let Some((i, at)) = lost {
                    let mut line = json!({"index": i, "symbol": rows[i].symbol, "library": rows[i].library,
                        "ended_process": format!("{status}")});
                    if let Some(at) = at {
                        line["shape_index"] = json!(at);
                    }
                    append_line(out, &line)?;
                }
                start = s;
            }
        }
    }
    Ok(())
}

/// The command of a child calling functions `start.from..to`, leaving out what `start` says.
fn child_command(args: &CallArgs, out: &Path, start: &restart::Start, to: usize) -> anyhow::Result<Command> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.arg("call-catalogue")
        .arg("--catalogue")
        .arg(args.catalogue.as_deref().unwrap_or(Path::new("")))
        .arg("--out")
        .arg(out)
        .args(["--width", &args.width.to_string(), "--height", &args.height.to_string()])
        .args(start.args())
        .args(["--to", &to.to_string()])
        .args(["--alone-batch", &args.alone_batch.to_string()])
        .arg("--turns")
        .arg(args.out.as_deref().unwrap_or(Path::new("")));
    if let Some(npp) = &args.npp {
        cmd.arg("--npp").arg(npp);
    }
    if let Some(o) = &args.only {
        cmd.args(["--only", o]);
    }
    if let Some(f) = &args.functions {
        cmd.arg("--functions").arg(f);
    }
    if let Some(s) = args.shard {
        cmd.args(["--shard", &s.to_string()]);
    }
    if let Some(seed) = args.shuffle {
        cmd.args(["--shuffle", &seed.to_string()]);
    }
    if args.design {
        cmd.arg("--design");
    }
    if let Some(n) = args.stranger {
        cmd.args(["--stranger", &n.to_string(), "--seed", &args.seed.to_string()]);
    }
    if let Some(done) = args.calls().done {
        cmd.arg("--done").arg(done);
    }
    Ok(cmd)
}

/// Prints `heading` and each count under it; nothing where there is none.
fn section(heading: &str, counts: Vec<(String, usize)>) {
    if !counts.is_empty() {
        println!("{heading}");
        for (kind, n) in counts {
            println!("{n:>6}  {kind}");
        }
    }
}

/// Prints the outcomes of a file of lines, counted, the most first, then the oracles' leads.
fn summarize(file: &Path) -> anyhow::Result<()> {
    let lines = crate::catalogue::read_call_lines(file)?;
    println!("{} functions in {}", lines.len(), file.display());
    for (kind, n) in nppbench_analysis::calls::summarize(&lines) {
        println!("{n:>6}  {kind}");
    }
    section(
        "at the unaligned destination step:",
        nppbench_analysis::calls::destination_counts(&lines),
    );
    section(
        "ran, not judged by the leak or race oracle:",
        nppbench_analysis::calls::oracles_missing(&lines),
    );
    section(
        "leads from the leak and race oracles:",
        nppbench_analysis::calls::lead_counts(&lines),
    );
    section("called on:", nppbench_analysis::calls::made_on(&lines));
    Ok(())
}

/// Prints how the oracles of `other` agree with those of `file`, then, by name, the functions
/// each oracle flagged in one of them only.
fn against(file: &Path, other: &Path) -> anyhow::Result<()> {
    let first = crate::catalogue::read_call_lines(file)?;
    let second = crate::catalogue::read_call_lines(other)?;
    println!(
        "against {}: functions both asked, flagged by both, by this file only, by the other only",
        other.display()
    );
    // Runs at other ROIs answer other questions (at 64×32 the wrong-pixel oracle sees none of NPP
    // 13's), and on other cards a difference may be the card's: said first, where the lines
    // record them.
    type Key = fn(&nppbench_analysis::calls::CallLine) -> Option<String>;
    let notes: [(&str, Key); 2] = [
        ("at other ROIs", |l| Some(format!("{}x{}", l.width?, l.height?))),
        ("on other cards", |l| l.gpu_uuid.clone()),
    ];
    for (what, key) in notes {
        let of = |lines: &[nppbench_analysis::calls::CallLine]| -> Vec<String> {
            let set: std::collections::BTreeSet<String> = lines.iter().filter_map(key).collect();
            set.into_iter().collect()
        };
        let (this, that) = (of(&first), of(&second));
        if !this.is_empty() && !that.is_empty() && this != that {
            println!(
                "note: the calls were made {what}: this file {}, the other {}",
                this.join(", "),
                that.join(", ")
            );
        }
    }
    let agreement = nppbench_analysis::calls::agreement(&first, &second);
    for (oracle, a) in &agreement {
        println!(
            "{oracle:>6}  {:>5} asked  {:>5} both  {:>5} this only  {:>5} other only",
            a.asked,
            a.both,
            a.first_only.len(),
            a.second_only.len()
        );
    }
    // Then the functions each oracle flagged in one file only, by name.
    let short = |s: &String| nppbench_headers::name::bare(s).to_owned();
    for (oracle, a) in &agreement {
        for (whose, names) in [("this only", &a.first_only), ("other only", &a.second_only)] {
            if !names.is_empty() {
                let names: Vec<String> = names.iter().map(short).collect();
                println!("{oracle}, {whose}: {}", names.join(" "));
            }
        }
    }
    Ok(())
}
