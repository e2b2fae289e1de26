//! Change points and a figure that changed meaning, on generated histories with a known answer:
//! a step where the runs' builds began timing a call's kernels differently is no change point,
//! the same step within one meaning is.

use super::*;
use crate::Db;
use crate::generated::{self, jitter};
use crate::rows::Timing;
use crate::series::History;

/// Adds generated run `i` with one throughput result of `kernel_ns`, its figure meaning `m`.
fn add(db: &mut Db, i: usize, kernel_ns: f64, m: FigureMeaning) {
    let mut row = generated::throughput("blocking", "GPU-a", kernel_ns);
    let t = row.throughput.as_mut().unwrap();
    t.timing = if m == FigureMeaning::Events {
        Timing::Events
    } else {
        Timing::Cupti
    };
    t.per_pass.as_mut().unwrap().busy_time_known = m != FigureMeaning::KernelsSummed;
    db.add(&generated::run(i, "a", "GPU-a", "13.0.1", "580.1"), &[row])
        .unwrap();
}

/// Twelve runs, the kernel time 15% lower from the seventh on; the first six's figure `before`,
/// the rest's `after`.
fn step(before: FigureMeaning, after: FigureMeaning) -> SeriesFindings {
    let (_dir, mut db) = generated::db();
    for i in 0..12 {
        let (m, level) = if i < 6 { (before, 7000.0) } else { (after, 5950.0) };
        add(&mut db, i, level + 4.0 * jitter(i), m);
    }
    let h = History::load(&db).unwrap();
    analyse(&h, &Settings::default()).series.remove(0)
}

#[test]
fn no_change_point_where_the_kernels_summed_became_the_busy_time() {
    // An older build summed the kernels of a call (their shared time counted twice); a newer one
    // times the GPU's busy time: 15% lower with nothing changed.
    let f = step(FigureMeaning::KernelsSummed, FigureMeaning::BusyTime);
    assert!(f.shifts.is_empty(), "{:?}", f.shifts);
    assert_eq!(f.figure_changes, [6]);
}

#[test]
fn no_change_point_where_cuda_events_became_kernel_records() {
    let f = step(FigureMeaning::Events, FigureMeaning::BusyTime);
    assert!(f.shifts.is_empty(), "{:?}", f.shifts);
    assert_eq!(f.figure_changes, [6]);
}

#[test]
fn the_same_step_within_one_meaning_is_a_change_point() {
    let f = step(FigureMeaning::BusyTime, FigureMeaning::BusyTime);
    assert!(f.figure_changes.is_empty());
    let points: Vec<(usize, Direction)> = f.shifts.iter().map(|s| (s.point, s.direction)).collect();
    assert_eq!(points, [(6, Direction::Faster)]);
}

#[test]
fn a_step_within_a_stretch_of_one_meaning_is_still_found() {
    // Summed throughout the first twelve runs with a real 15% step at the seventh, then the
    // builds changed: the step is found, the change of meaning is not one.
    let (_dir, mut db) = generated::db();
    for i in 0..18 {
        let (m, level) = match i {
            0..6 => (FigureMeaning::KernelsSummed, 7000.0),
            6..12 => (FigureMeaning::KernelsSummed, 8050.0),
            _ => (FigureMeaning::BusyTime, 6000.0),
        };
        add(&mut db, i, level + 4.0 * jitter(i), m);
    }
    let h = History::load(&db).unwrap();
    let f = analyse(&h, &Settings::default()).series.remove(0);
    assert_eq!(f.figure_changes, [12]);
    let points: Vec<(usize, Direction)> = f.shifts.iter().map(|s| (s.point, s.direction)).collect();
    assert_eq!(points, [(6, Direction::Slower)]);
}
