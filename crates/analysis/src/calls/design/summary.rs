//! What a file of design lines holds, counted (`call-catalogue --summarize`): its shapes, their
//! hazards, the held-out score, the throughput points, and where the shapes' time went.

use nppbench_stats::LeakClass;
use serde::Serialize;

use super::{Draw, Score, ShapeLine, score};

/// What a file of design lines holds, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub functions: usize,
    pub shapes: usize,
    /// Functions with no plan (no shape called), shapes with none, shapes NPP refused, shapes
    /// whose own call left the context dead; functions whose child died, and the shapes a child
    /// died in (the parent's lines, one a shape: a function that kills every child has one a
    /// shape of its design).
    pub not_planned_functions: usize,
    pub not_planned_shapes: usize,
    pub refused: usize,
    pub faulted: usize,
    pub ended_process: usize,
    pub ended_process_shapes: usize,
    /// Functions whose design is not whole ([`unfinished`]: a run stopped in them).
    pub unfinished: usize,
    /// Shapes measured in each leak class (`leak`, `bounded`, `flat`), racing of those asked,
    /// wrong of those judged.
    pub classes: Vec<(String, usize)>,
    pub racing: (usize, usize),
    pub wrong: (usize, usize),
    /// Functions with a shape of each hazard: a leak, a race, wrong pixels.
    pub functions_with: (usize, usize, usize),
    /// The held-out shapes, predicted by the rules fitted on the others.
    pub held_out: Score,
    /// Functions with a throughput point, the median of their GB/s, and functions whose point
    /// failed.
    pub throughput: (usize, Option<f64>, usize),
    /// Where the shapes' time went.
    pub times: Times,
}

/// The shapes' time, summed over the lines that record it, in seconds: their own (`ms`), that of
/// shapes that left the context dead, the part held alone on the GPU and the wait for turns
/// (`None` where no line records them: lines of builds before they were recorded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Times {
    pub own_s: f64,
    pub faulted_s: f64,
    pub alone_s: Option<f64>,
    pub wait_s: Option<f64>,
}

impl Times {
    fn of(shaped: &[&ShapeLine]) -> Times {
        let sum = |f: &dyn Fn(&ShapeLine) -> Option<f64>| {
            let mut recorded = shaped.iter().filter_map(|l| f(l)).peekable();
            recorded.peek()?;
            Some(recorded.fold(0.0, |s, ms| s + ms) / 1e3)
        };
        Times {
            own_s: sum(&|l| l.ms).unwrap_or(0.0),
            faulted_s: sum(&|l| if l.faulted() { l.ms } else { None }).unwrap_or(0.0),
            alone_s: sum(&|l| l.alone_ms),
            wait_s: sum(&|l| l.wait_ms),
        }
    }
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
        ended_process: names(&|l| l.ended_process.is_some()),
        ended_process_shapes: lines
            .iter()
            .filter(|l| l.ended_process.is_some() && l.shape_index.is_some())
            .count(),
        unfinished: unfinished(lines).len(),
        racing: pair(&ShapeLine::races),
        wrong: pair(&ShapeLine::wrong),
        functions_with: (
            names(&|l| l.class() == Some(LeakClass::Leak)),
            names(&|l| l.races() == Some(true)),
            names(&|l| l.wrong() == Some(true)),
        ),
        classes,
        held_out: score(&fit, &held)?.1,
        throughput: {
            let (n, median) = super::throughput::median_gbps(lines.iter().filter_map(|l| l.throughput.as_ref()));
            (n, median, lines.iter().filter(|l| l.throughput_error.is_some()).count())
        },
        times: Times::of(&shaped),
    })
}

/// What the lines of a function whose design is not whole hold: the indices in its design of the
/// shapes with a line (its own, or the parent's for a child that died in it), and whether its
/// throughput point has one. What a resumed run leaves out of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    pub shapes: std::collections::BTreeSet<usize>,
    pub point: bool,
}

/// The functions of `lines` (a design's, one NPP version's) whose design is not whole: a shape of
/// their design ([`super::design`] at their lines' pixels) with no line, neither its own nor the
/// parent's for a child that died in it (`shape_index`). A run stopped in a function leaves it so;
/// one whose probe could not be planned, whose rest was lost with its child, or with a shape that
/// left the context dead, is whole.
pub fn unfinished(lines: &[ShapeLine]) -> std::collections::BTreeSet<String> {
    unfinished_written(lines).into_keys().collect()
}

/// The functions of `lines` whose design is not whole ([`unfinished`]), each with what its lines
/// hold.
pub fn unfinished_written(lines: &[ShapeLine]) -> std::collections::BTreeMap<String, Written> {
    use std::collections::BTreeMap;
    let mut of: BTreeMap<&str, Vec<&ShapeLine>> = BTreeMap::new();
    for l in lines {
        of.entry(l.symbol.as_str()).or_default().push(l);
    }
    let written = |symbol: &str, ls: &[&ShapeLine]| -> Option<Written> {
        let given_up = |l: &ShapeLine| {
            l.shape.is_none() && (l.not_planned.is_some() || (l.ended_process.is_some() && l.shape_index.is_none()))
        };
        // Builds before 8d91992 lost the rest of a design after a shape that left the context
        // dead: what such a design has is all that build would give.
        if ls.iter().any(|l| given_up(l) || l.faulted()) {
            return None;
        }
        let px = ls.iter().find_map(|l| l.pixels)?;
        let shapes: Vec<super::Shape> = ls.iter().filter_map(|l| l.shape).collect();
        let design = super::design(symbol, &px);
        let mut w = Written {
            shapes: ls.iter().filter_map(|l| l.shape_index).collect(),
            point: ls
                .iter()
                .any(|l| l.throughput.is_some() || l.throughput_error.is_some()),
        };
        w.shapes
            .extend((0..design.len()).filter(|k| shapes.contains(&design[*k])));
        (0..design.len()).any(|k| !w.shapes.contains(&k)).then_some(w)
    };
    of.into_iter()
        .filter_map(|(symbol, ls)| written(symbol, &ls).map(|w| (symbol.to_owned(), w)))
        .collect()
}
