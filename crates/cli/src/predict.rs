//! `nppbench predict`: the class of any scenario (leak, bounded, flat, or unknown) from the atlas
//! runs given, with what the answer rests on: the measurement of that very scenario, the
//! function's rule (its text and held-out score), or nothing. No GPU is needed.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use nppbench_analysis::LeakClass;
use nppbench_analysis::RunAnalysis;
use nppbench_analysis::evidence::Evidence;
use nppbench_analysis::evidence::FunctionRules;
use nppbench_analysis::predict::{
    Answer, Basis, answer, answer_race, answer_wrong, assess, query, race_word, wrong_word,
};
use nppbench_analysis::rules::Case;
use nppbench_model::{ContextFill, Geometry, Matrix, Primitive, StreamKind, Threading};
use serde::Serialize;

use crate::exit::bad_input;

mod designed;
mod fixes;
mod other_version;
mod tables;
mod unmeasured;
use crate::runs::{one_npp_version, read_runs};
use fixes::{fixes, wrong_fixes};
use tables::{score_table, table};

#[derive(Args)]
#[command(group(clap::ArgGroup::new("question").required(true).args(["primitive", "matrix", "against"])))]
pub(crate) struct PredictArgs {
    /// A run (run.json, or a folder holding runs) whose scenarios are the evidence, or a knowledge
    /// file (`cargo xtask knowledge`); repeat it to pool several runs of one NPP version. Without
    /// it, the knowledge built into nppbench answers, of the NPP version asked or found.
    #[arg(long, value_name = "RUN")]
    atlas: Vec<PathBuf>,
    /// The NPP version to answer for (`13.0.1.2`, or its first parts: `13.0`): the built-in
    /// knowledge of it, or, with --atlas, refuse runs of any other.
    #[arg(long, value_name = "VERSION", value_parser = npp_version)]
    npp_version: Option<String>,
    /// Answer for the NPP in this folder (its version, read from libnppc: no GPU needed), from the
    /// built-in knowledge; default: the NPP nppbench finds (NPPBENCH_NPP_DIR, the toolkit, the
    /// loader), where neither --npp-version nor --atlas is given.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["atlas", "npp_version"])]
    npp: Option<PathBuf>,
    /// Design lines, as `nppbench call-catalogue` writes them for a design (`.gz` too): a
    /// function known from its headers alone is answered from them instead of the designs built
    /// in (a design you measured).
    #[arg(long, value_name = "FILE")]
    designs: Option<PathBuf>,
    /// Every memory scenario of a matrix file (`nppbench preset NAME` prints one).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["primitive", "width", "height", "src_stride"])]
    matrix: Option<PathBuf>,
    /// Every memory scenario a run measured, answered as if it had not been, and scored against
    /// what it measured: in all, by width octave and by function (a table), or each answer with
    /// its measured class (CSV, JSON). Score the atlas on a draw of your own this way
    /// (docs/atlas/judge.toml).
    #[arg(long, value_name = "RUN", conflicts_with_all = ["matrix", "primitive", "width", "height", "src_stride"])]
    against: Option<PathBuf>,
    /// One scenario: the function (`Convert_8u32f_C1R`, or NVIDIA's `nppiConvert_8u32f_C1R_Ctx`).
    #[arg(long, requires_all = ["width", "height", "src_stride"])]
    primitive: Option<String>,
    /// ROI width in pixels.
    #[arg(long, allow_negative_numbers = true, value_parser = npp_int())]
    width: Option<u32>,
    /// ROI height in rows.
    #[arg(long, allow_negative_numbers = true, value_parser = npp_int())]
    height: Option<u32>,
    /// Source row stride in bytes.
    #[arg(long, allow_negative_numbers = true, value_parser = npp_int())]
    src_stride: Option<u32>,
    /// Destination row stride in bytes; default: the source's padding, in pixels.
    #[arg(long, allow_negative_numbers = true, value_parser = npp_int())]
    dst_stride: Option<u32>,
    /// The stream kind: blocking, non_blocking, legacy_default, per_thread_default.
    #[arg(long, default_value = "blocking", value_parser = typed::<StreamKind>)]
    stream: StreamKind,
    /// How the stream context is filled: from_stream, zeroed, npp_get_stream_context,
    /// declared_blocking, declared_non_blocking.
    #[arg(long, default_value = "from_stream", value_parser = typed::<ContextFill>)]
    context: ContextFill,
    /// The threading model: thread_per_call, thread_per_call_own_stream, pool:N, single.
    #[arg(long, default_value = "thread_per_call", value_parser = typed::<Threading>)]
    threading: Threading,
    /// How to write the answer: a table for a person, or CSV or JSON (the columns scenarios.csv
    /// names alike) for a program.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write the answer here instead of to standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

/// One answer, with the columns scenarios.csv names alike.
#[derive(Debug, Serialize)]
struct Row {
    primitive: String,
    width: u32,
    height: u32,
    src_stride: u32,
    dst_stride: u32,
    stream: String,
    context: String,
    threading: String,
    predicted_class: String,
    basis: String,
    /// exact (measured), rule (held on every fitted and held-out scenario), approximate,
    /// extrapolated (outside what was measured of the function), or none.
    confidence: String,
    confidence_reason: String,
    /// What decides the answer: for a leak rule that does not hold, its first condition that
    /// fails; for bounded, what bounded means.
    deciding: String,
    /// For a leak: the configurations the same evidence says end it, each with its class and basis.
    fixes: String,
    rule: String,
    /// Whether the call can leave wrong pixels when the caller's stream writes the source late:
    /// `races`, `ordered` or `not measured`; its basis (`measured`, `rule`, `none`) and the
    /// function's race rule.
    race_class: String,
    race_basis: String,
    race_rule: String,
    /// Whether the call computes wrong pixels (or faults) with every call synchronised: `wrong`,
    /// `right` or `not measured`; its basis and the function's wrong-pixel rule.
    wrong_class: String,
    wrong_basis: String,
    wrong_rule: String,
    /// For wrong pixels: the stride changes the same evidence says compute them right, each with
    /// its basis and what it costs.
    wrong_fixes: String,
    /// With --against: the class the run measured, its race and its output (`wrong`, `right`
    /// or `not measured`).
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_class: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_race: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_wrong: Option<String>,
}

pub(crate) fn predict(args: PredictArgs) -> anyhow::Result<()> {
    // A function the headers declare and no row of nppbench's catalogue measures: answered
    // unknown, after the knowledge is read (the answer names it).
    if let Some(name) = args.primitive.as_deref().filter(|n| Primitive::from_name(n).is_none()) {
        let found = unmeasured::declared(name);
        if !found.is_empty() {
            let mut known = crate::knowledge::resolve(&args.atlas, args.npp_version.as_deref(), args.npp.as_deref())?;
            if let Some(file) = &args.designs {
                let bytes = std::fs::read(file).map_err(|e| bad_input(format!("--designs {}: {e}", file.display())))?;
                known.designs = Some(crate::knowledge::Designs {
                    name: file.display().to_string(),
                    bytes: bytes.into(),
                    index: None,
                });
            }
            answered_from(&args, &known.from);
            // A function a design of this version measured is answered from its shapes.
            let short = crate::knowledge::short(&known.version);
            let of_version = found.iter().find(|d| crate::knowledge::short(&d.version) == short);
            let (lines, designed) = match of_version {
                Some(d) => {
                    let lines = known.design_lines(&d.symbol)?;
                    let row = designed::answer_row(&args, &d.symbol, &lines)?;
                    (lines, row)
                }
                None => (Vec::new(), None),
            };
            // Else, where no design of this version called it (one NPP refused throughout says
            // more of this version than another's), from the knowledge built in alone, a design
            // of another version of its major release.
            let designed = match designed {
                None if lines.is_empty() && args.atlas.is_empty() && args.designs.is_none() => {
                    other_version::answer_row(&args, &found, &known.version)?
                }
                designed => designed,
            };
            if let Some(row) = designed {
                return write(&args, answers(&args, &[row], &known.version, &known.from)?);
            }
            let row = unmeasured::row(&args, &found, &known);
            return write(&args, answers(&args, &[row], &known.version, &known.from)?);
        }
    }
    // The question is checked before the atlas is read (which takes a while).
    let mut queries = queries(&args)?;
    let judged = match &args.against {
        Some(path) => Some(read_runs(std::slice::from_ref(path))?),
        None => None,
    };
    let truth: Vec<Case> = judged
        .iter()
        .flatten()
        .flat_map(|(_, r)| nppbench_analysis::evidence::cases_of(&RunAnalysis::new(r)))
        .collect();
    if judged.is_some() {
        if truth.is_empty() {
            return Err(bad_input(format!(
                "--against {}: the run has no memory scenario with a class to score against",
                args.against
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )));
        }
        queries = truth
            .iter()
            .map(|c| query(c.primitive, c.geometry, c.stream, c.context, c.threading))
            .collect();
    }
    let known = crate::knowledge::resolve(&args.atlas, args.npp_version.as_deref(), args.npp.as_deref())?;
    let version = known.version.clone();
    if let Some(judged) = &judged {
        one_npp_version(judged, Some(&crate::knowledge::short(&version)))
            .map_err(|e| bad_input(format!("--against: {e}")))?;
    }
    let (evidence, rules) = (&known.evidence, &known.rules);
    answered_from(&args, &known.from);
    // A score needs the answers' classes alone, not every row's words (its fixes ask again).
    if matches!(args.format, Format::Table) && judged.is_some() {
        let score = nppbench_analysis::score::against(evidence, rules, &truth);
        return write(&args, score_table(&score, &version, &known.from));
    }
    let mut rows: Vec<Row> = queries
        .iter()
        .map(|q| row(q, &answer(evidence, rules, q), evidence, rules))
        .collect();
    for (r, c) in rows.iter_mut().zip(&truth) {
        r.measured_class = Some(c.class.as_str().to_owned());
        r.measured_race = Some(race_word(c.race).to_owned());
        r.measured_wrong = Some(wrong_word(c.wrong).to_owned());
    }
    write(&args, answers(&args, &rows, &version, &known.from)?)
}

/// The answers in the format asked for.
fn answers(args: &PredictArgs, rows: &[Row], version: &str, from: &str) -> anyhow::Result<String> {
    Ok(match args.format {
        Format::Csv => csv_text(rows)?,
        Format::Json => serde_json::to_string_pretty(rows)? + "\n",
        Format::Table => table(rows, version, from),
    })
}

/// What answered, on standard error where the answer is CSV or JSON (a table says it first).
fn answered_from(args: &PredictArgs, from: &str) {
    if !matches!(args.format, Format::Table) {
        eprintln!("answered from {from}");
    }
}

/// The answer to `--out`, or to standard output.
fn write(args: &PredictArgs, text: String) -> anyhow::Result<()> {
    match &args.out {
        Some(path) => std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}

/// An axis value parsed as clap parses the options, so that a typo is a usage error before
/// anything is read.
fn typed<T: std::str::FromStr>(text: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    text.parse::<T>().map_err(|e| e.to_string())
}

/// A width, height or stride as NPP takes it: an `int` of at least 1, so that the range clap
/// states is the one the geometry is checked against.
fn npp_int() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..=i64::from(i32::MAX))
}

/// `--npp-version`: numbers separated by dots (`13.0.1.2`, `13.0`), checked before any run is
/// read, so that a word is not taken for a version no run has.
fn npp_version(text: &str) -> Result<String, String> {
    let numbers = text
        .split('.')
        .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    if numbers {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?} is not an NPP version: give its numbers separated by dots, as `13.0.1.2` or `13.0`"
        ))
    }
}

/// The catalogue's name nearest to `name` (by edit distance, case aside), where one is near.
fn nearest_primitive(name: &str) -> Option<&'static str> {
    let wanted = name.trim_start_matches("nppi").trim_end_matches("_Ctx").to_lowercase();
    Primitive::all()
        .map(|p| (strsim::levenshtein(&wanted, &p.name().to_lowercase()), p.name()))
        .filter(|(d, _)| *d <= 3.max(wanted.len() / 5))
        .min()
        .map(|(_, n)| n)
}

/// The scenarios asked about: the matrix's memory scenarios, or the one the options give.
fn queries(args: &PredictArgs) -> anyhow::Result<Vec<Case>> {
    if args.against.is_some() {
        // The run's own scenarios, once it is read.
        return Ok(Vec::new());
    }
    if let Some(path) = &args.matrix {
        let m = Matrix::from_file(path).map_err(bad_input)?;
        return Ok(m
            .memory
            .iter()
            .map(|s| query(s.primitive, s.geometry, s.stream, s.context, s.threading))
            .collect());
    }
    let name = args.primitive.as_deref().unwrap_or_default();
    let primitive = Primitive::from_name(name).ok_or_else(|| {
        let hint = nearest_primitive(name).map_or_else(String::new, |n| format!(" (did you mean {n}?)"));
        bad_input(format!(
            "--primitive {name}: {}{hint}",
            nppbench_model::catalog::unknown_primitive(name)
        ))
    })?;
    let (width, height, src) = (
        args.width.unwrap_or_default(),
        args.height.unwrap_or_default(),
        args.src_stride.unwrap_or_default(),
    );
    let mut g = Geometry::new(primitive, width, height, src);
    if let Some(d) = args.dst_stride {
        g.dst_stride = d;
    } else if g.dst_stride > i32::MAX as u32 {
        // Derived from the source's padding, it would pass NPP's limit (and saturate the label).
        let (dst_w, _) = primitive.row().dst_size(width, height);
        return Err(bad_input(format!(
            "{primitive} {width}x{height}: its destination rows take {} bytes or more, beyond NPP's limit of {} bytes a stride: give a smaller --width",
            u64::from(dst_w) * primitive.dst_bytes_per_pixel(),
            i32::MAX
        )));
    }
    g.validate(primitive)
        .map_err(|e| bad_input(format!("{primitive} cannot take this geometry: {e}")))?;
    Ok(vec![query(primitive, g, args.stream, args.context, args.threading)])
}

fn row(q: &Case, a: &Answer, evidence: &Evidence, rules: &[FunctionRules]) -> Row {
    let g = &q.geometry;
    let assessment = assess(evidence, rules, q, a);
    let race = answer_race(evidence, rules, q);
    let wrong = answer_wrong(evidence, rules, q);
    let deciding = match (a.class, &assessment.deciding) {
        (Some(LeakClass::Bounded), _) => "bounded: memory grows while each of the pool's threads makes its first call (NPP keeps streams per thread), then stops".to_owned(),
        (Some(c), Some(l)) => format!(
            "{}: {}",
            c.as_str(),
            nppbench_report::view::literal_words(&nppbench_analysis::rules::Literal {
                feature: l.feature.clone(),
                holds: !l.holds,
            })
        ),
        _ => String::new(),
    };
    let rule = match &a.basis {
        Basis::Measured(classes) if classes.len() > 1 => format!(
            "measured in several processes, not stable: {}",
            classes.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", then ")
        ),
        Basis::Measured(_) => String::new(),
        Basis::Rule => rules
            .iter()
            .find(|f| f.primitive == q.primitive)
            .map(nppbench_report::view::rule_sentence)
            .unwrap_or_default(),
        Basis::None => "no scenario of this function was measured".to_owned(),
    };
    Row {
        primitive: q.primitive.to_string(),
        width: g.width,
        height: g.height,
        src_stride: g.src_stride,
        dst_stride: g.dst_stride,
        stream: q.stream.to_string(),
        context: q.context.to_string(),
        threading: q.threading.to_string(),
        predicted_class: a.class.map_or("unknown", |c| c.as_str()).to_owned(),
        basis: a.basis.as_str().to_owned(),
        confidence: assessment.confidence.as_str().to_owned(),
        confidence_reason: assessment.reason,
        deciding,
        fixes: fixes(q, a, evidence, rules),
        rule,
        race_class: race_word(race.races).to_owned(),
        race_basis: race.basis.as_str().to_owned(),
        race_rule: rules
            .iter()
            .find(|f| f.primitive == q.primitive)
            .and_then(|f| f.race.as_ref())
            .map(nppbench_report::view::race_sentence)
            .unwrap_or_default(),
        wrong_class: wrong_word(wrong.wrong).to_owned(),
        wrong_basis: wrong.basis.as_str().to_owned(),
        wrong_fixes: if wrong.wrong == Some(true) {
            wrong_fixes(q, evidence, rules)
        } else {
            String::new()
        },
        wrong_rule: rules
            .iter()
            .find(|f| f.primitive == q.primitive)
            .and_then(|f| f.wrong.as_ref())
            .map(nppbench_report::view::wrong_sentence)
            .unwrap_or_default(),
        measured_class: None,
        measured_race: None,
        measured_wrong: None,
    }
}

fn csv_text(rows: &[Row]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
