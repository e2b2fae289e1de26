//! `call-catalogue --summarize` of a file of design lines (`--design`, `--stranger N`): the
//! shapes counted, the fitted rules scored on the held-out shapes, and, with `--score FILE`, on
//! a stranger's draw.

use std::path::Path;

use nppbench_analysis::calls::design::{self, Score, ShapeLine};

use crate::exit::bad_input;

/// Whether a file holds design lines (its first line has a shape, or a function's `pixels`),
/// from that line alone.
pub(crate) fn is_design(file: &Path) -> anyhow::Result<bool> {
    use std::io::BufRead;
    let bytes = std::fs::read(file).map_err(|e| bad_input(format!("{}: {e}", file.display())))?;
    let reader: Box<dyn BufRead> = if bytes.starts_with(&[0x1f, 0x8b]) {
        Box::new(std::io::BufReader::new(flate2::read::MultiGzDecoder::new(&bytes[..])))
    } else {
        Box::new(&bytes[..])
    };
    let first = reader.lines().map_while(Result::ok).find(|l| !l.trim().is_empty());
    let first: Option<serde_json::Value> = first.and_then(|l| serde_json::from_str(&l).ok());
    Ok(first.is_some_and(|v| v.get("shape").is_some() || v.get("pixels").is_some()))
}

fn read<T: serde::de::DeserializeOwned>(file: &Path) -> anyhow::Result<Vec<T>> {
    let bytes = std::fs::read(file).map_err(|e| bad_input(format!("{}: {e}", file.display())))?;
    nppbench_analysis::calls::read_lines_of(&bytes).map_err(|e| bad_input(format!("{}: {e}", file.display())))
}

/// `right/scored (p%)` of a hazard.
fn rate(pair: (usize, usize)) -> String {
    match Score::percent(pair) {
        Some(p) => format!("{}/{} ({p:.1}%)", pair.0, pair.1),
        None => "none scored".to_owned(),
    }
}

/// Prints what `file`'s design lines hold, then, with `scored`, how the rules fitted on them
/// predict that file's shapes.
pub(crate) fn summarize(file: &Path, scored: Option<&Path>) -> anyhow::Result<()> {
    let lines: Vec<ShapeLine> = read(file)?;
    let s = design::summary(&lines).map_err(|e| bad_input(format!("{}: {e}", file.display())))?;
    println!("{} functions, {} shapes in {}", s.functions, s.shapes, file.display());
    for (what, n) in [
        ("functions not planned", s.not_planned_functions),
        ("shapes not planned", s.not_planned_shapes),
        ("shapes NPP refused", s.refused),
        ("shapes that left the context dead", s.faulted),
        ("functions whose child died", s.ended_process),
        ("shapes a child died in", s.ended_process_shapes),
        ("functions not finished (a run stopped in them)", s.unfinished),
    ] {
        println!("{n:>7}  {what}");
    }
    let classes: Vec<String> = s.classes.iter().map(|(c, n)| format!("{c} {n}")).collect();
    println!("shapes by leak class: {}", classes.join(", "));
    println!(
        "shapes racing: {} of {}; computing other pixels: {} of {}",
        s.racing.0, s.racing.1, s.wrong.0, s.wrong.1
    );
    let (l, r, w) = s.functions_with;
    println!("functions with a shape that leaks: {l}, races: {r}, computes other pixels: {w}");
    match s.throughput {
        (0, _, failed) => println!("no throughput point ({failed} failed)"),
        (n, median, failed) => println!(
            "throughput at {}×{}: {n} functions, median {} GB/s ({failed} failed)",
            design::throughput::AT.0,
            design::throughput::AT.1,
            median.map_or("-".to_owned(), |g| format!("{g:.1}"))
        ),
    }
    let t = s.times;
    if t.own_s > 0.0 {
        let or_none = |s: Option<f64>| s.map_or("not recorded".to_owned(), |s| format!("{s:.1} s"));
        println!(
            "time of the shapes: {:.1} s their own, {:.1} s of it in shapes that left the context dead, alone on the GPU {}; waiting for turns {}",
            t.own_s,
            t.faulted_s,
            or_none(t.alone_s),
            or_none(t.wait_s)
        );
    }
    let h = &s.held_out;
    println!(
        "held-out shapes predicted by the rules fitted on the others: leak {}, race {}, wrong {}",
        rate(h.leak),
        rate(h.race),
        rate(h.wrong)
    );
    if let Some(other) = scored {
        let theirs: Vec<ShapeLine> = read(other)?;
        let (_, s) = design::score(&lines, &theirs).map_err(|e| bad_input(format!("{}: {e}", other.display())))?;
        println!(
            "{} predicted by the rules fitted on {}: leak {}, race {}, wrong {}",
            other.display(),
            file.display(),
            rate(s.leak),
            rate(s.race),
            rate(s.wrong)
        );
        println!(
            "{:>7}  shapes NPP refused (nothing to predict)\n{:>7}  shapes of functions the design did not call",
            s.refused, s.no_rules
        );
        println!("by width octave (pixels): leak, race, wrong");
        for (octave, [leak, race, wrong]) in &s.by_octave {
            let widths = format!("{octave}-{}", 2 * octave - 1);
            println!(
                "{widths:>11}  leak {}, race {}, wrong {}",
                rate(*leak),
                rate(*race),
                rate(*wrong)
            );
        }
    }
    Ok(())
}
