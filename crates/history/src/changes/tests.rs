//! Findings on generated histories with a known answer: where the level shifts, which
//! environment change it lines up with, which class changed, which runner is off, which gates
//! trip.

use super::*;
use crate::Db;
use crate::gates::{Gate, HISTORY_GATES, Tripped, unjudged_gates};
use crate::generated::{self, jitter};
use crate::series::History;
use nppbench_analysis::compare::Change;

/// Adds generated run `i` on (`host`, `uuid`) with one throughput result of `kernel_ns`.
fn add_tp(db: &mut Db, i: usize, host: &str, uuid: &str, npp: &str, driver: &str, kernel_ns: f64) {
    db.add(
        &generated::run(i, host, uuid, npp, driver),
        &[generated::throughput("blocking", uuid, kernel_ns)],
    )
    .unwrap();
}

fn findings(db: &Db) -> (History, Findings) {
    let h = History::load(db).unwrap();
    let f = analyse(&h, &Settings::default());
    (h, f)
}

#[test]
fn generated_step_is_a_change_point_aligned_with_the_npp_change() {
    let (_dir, mut db) = generated::db();
    for i in 0..12 {
        let (npp, level) = if i < 6 { ("12.2.3", 1000.0) } else { ("13.0.1", 1200.0) };
        add_tp(&mut db, i, "a", "GPU-a", npp, "580.1", level + 4.0 * jitter(i));
    }
    let (h, f) = findings(&db);
    assert_eq!(h.series.len(), 1);
    assert_eq!(h.series[0].points.len(), 12);
    let s = &f.series[0];
    assert_eq!(s.env.len(), 1, "{:?}", s.env);
    assert_eq!(s.shifts.len(), 1, "{:?}", s.shifts);
    let shift = &s.shifts[0];
    assert_eq!((shift.point, shift.direction), (6, Direction::Slower));
    assert!((shift.shift_pct - 20.0).abs() < 1.0, "{}", shift.shift_pct);
    let aligned = shift.aligned.as_ref().unwrap();
    assert_eq!(aligned.offset, 0);
    assert_eq!(
        aligned.changes,
        [EnvChange {
            field: EnvField::Npp,
            from: "12.2.3".into(),
            to: "13.0.1".into()
        }]
    );
    assert!(!shift.latest);
    // Its run against the run before, by compare's rule: slower (three passes a side, 20% apart).
    let judged: Vec<(usize, usize, Change)> = shift
        .judged
        .iter()
        .map(|j| (j.before_point, j.point, j.verdict()))
        .collect();
    assert_eq!(judged, [(5, 6, Change::Slower)]);
    assert!(f.tripped(&[Gate::Regression, Gate::Leak]).is_empty());
}

#[test]
fn a_change_point_a_run_after_the_driver_change_lines_up_within_one() {
    let (_dir, mut db) = generated::db();
    for i in 0..12 {
        let driver = if i < 5 { "570.1" } else { "580.159.04" };
        let level = if i < 6 { 1000.0 } else { 900.0 };
        add_tp(&mut db, i, "a", "GPU-a", "13.0.1", driver, level + 4.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    let shift = &f.series[0].shifts[0];
    assert_eq!((shift.point, shift.direction), (6, Direction::Faster));
    let aligned = shift.aligned.as_ref().unwrap();
    assert_eq!((aligned.point, aligned.offset), (5, -1));
    assert_eq!(aligned.changes[0].field, EnvField::Driver);
    assert_eq!(aligned.changes[0].to, "580.159.04");
}

#[test]
fn a_change_point_far_from_any_environment_change_lines_up_with_none() {
    let (_dir, mut db) = generated::db();
    for i in 0..12 {
        let level = if i < 8 { 1000.0 } else { 1100.0 };
        add_tp(&mut db, i, "a", "GPU-a", "13.0.1", "580.1", level + 4.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    assert_eq!(f.series[0].shifts.len(), 1);
    assert_eq!(f.series[0].shifts[0].aligned, None);
}

#[test]
fn noise_and_shifts_within_the_noise_threshold_are_not_change_points() {
    let (_dir, mut db) = generated::db();
    for i in 0..20 {
        // Generated: ±1% jitter, and a 3% step (real, but under the 5% noise threshold).
        let level = if i < 10 { 1000.0 } else { 1030.0 };
        add_tp(&mut db, i, "a", "GPU-a", "13.0.1", "580.1", level + 20.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    assert!(f.series[0].shifts.is_empty(), "{:?}", f.series[0].shifts);
}

#[test]
fn a_new_regression_in_the_latest_run_trips_the_regression_gate() {
    let (_dir, mut db) = generated::db();
    for i in 0..10 {
        let level = if i < 9 { 1000.0 } else { 1300.0 };
        add_tp(&mut db, i, "a", "GPU-a", "13.0.1", "580.1", level + 2.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    let new: Vec<_> = f.new_shifts().collect();
    assert_eq!(new.len(), 1);
    assert_eq!((new[0].1.point, new[0].1.direction), (9, Direction::Slower));
    assert_eq!(f.series[0].latest.len(), 1);
    assert_eq!(f.series[0].latest[0].verdict(), Change::Slower);
    let latest = f.latest_changes();
    assert_eq!((latest.slower, latest.faster, latest.unjudged), (1, 0, 0));
    let tripped = f.tripped(&[Gate::Regression, Gate::Leak]);
    assert_eq!(
        tripped,
        [Tripped {
            gate: Gate::Regression,
            series: 0,
            point: 9
        }]
    );
    assert!(f.tripped(&[Gate::Leak]).is_empty());
}

#[test]
fn a_faster_latest_run_trips_nothing() {
    let (_dir, mut db) = generated::db();
    for i in 0..10 {
        let level = if i < 9 { 1000.0 } else { 700.0 };
        add_tp(&mut db, i, "a", "GPU-a", "13.0.1", "580.1", level + 2.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    assert_eq!(f.new_shifts().count(), 1);
    assert!(f.tripped(&[Gate::Regression]).is_empty());
}

#[test]
fn leak_class_changes_are_listed_and_a_new_leak_trips_the_leak_gate() {
    use nppbench_analysis::LeakClass::{Flat, Leak};
    let (_dir, mut db) = generated::db();
    let classes = [Flat, Flat, Leak, Flat, Flat, Leak];
    for (i, class) in classes.into_iter().enumerate() {
        let npp = if i < 2 { "12.2.3" } else { "13.0.1" };
        db.add(
            &generated::run(i, "a", "GPU-a", npp, "580.1"),
            &[generated::memory("thread_per_call", "GPU-a", class)],
        )
        .unwrap();
    }
    let (_, f) = findings(&db);
    let changes = &f.series[0].class_changes;
    let seen: Vec<(usize, LeakClass, LeakClass)> = changes.iter().map(|c| (c.point, c.from, c.to)).collect();
    assert_eq!(seen, [(2, Flat, Leak), (3, Leak, Flat), (5, Flat, Leak)]);
    assert_eq!(changes[0].changes[0].field, EnvField::Npp);
    assert!(changes[2].latest);
    assert_eq!(f.tripped(&[Gate::Leak]).len(), 1);
    assert!(f.tripped(&[Gate::Regression]).is_empty());
}

#[test]
fn fleet_runners_whose_latest_figures_disagree_are_named() {
    let (_dir, mut db) = generated::db();
    let mut i = 0;
    for round in 0..3 {
        for (host, uuid, level) in [("a", "GPU-a", 1000.0), ("b", "GPU-b", 1010.0), ("c", "GPU-c", 1250.0)] {
            add_tp(&mut db, i, host, uuid, "13.0.1", "580.1", level + round as f64);
            i += 1;
        }
    }
    // A runner on another NPP is not compared with these.
    add_tp(&mut db, i, "d", "GPU-d", "12.2.3", "580.1", 2000.0);
    let (h, f) = findings(&db);
    assert_eq!(f.fleet.len(), 1, "{:?}", f.fleet);
    let d = &f.fleet[0];
    assert_eq!((d.fastest.host.as_str(), d.slowest.host.as_str()), ("a", "c"));
    assert_eq!(d.runners, 3);
    assert_eq!(d.npp_version, "13.0.1");
    assert!((d.pct - 25.0).abs() < 0.5, "{}", d.pct);
    // Its latest figures: the third round.
    assert_eq!(
        h.runs[d.slowest.run].run.started_at,
        generated::run(8, "c", "GPU-c", "", "").started_at
    );
}

#[test]
fn fleet_runners_within_the_noise_agree() {
    let (_dir, mut db) = generated::db();
    add_tp(&mut db, 0, "a", "GPU-a", "13.0.1", "580.1", 1000.0);
    add_tp(&mut db, 1, "b", "GPU-b", "13.0.1", "580.1", 1030.0);
    let (_, f) = findings(&db);
    assert!(f.fleet.is_empty(), "{:?}", f.fleet);
}

#[test]
fn several_gpus_of_one_model_make_one_point_per_run() {
    let (_dir, mut db) = generated::db();
    for i in 0..3 {
        let mut run = generated::run(i, "a", "GPU-a", "13.0.1", "580.1");
        run.gpu_uuids.push("GPU-b".into());
        run.gpu_models.push(generated::H200.into());
        db.add(
            &run,
            &[
                generated::throughput("blocking", "GPU-a", 1000.0),
                generated::throughput("blocking", "GPU-b", 1100.0),
            ],
        )
        .unwrap();
    }
    let (h, f) = findings(&db);
    assert_eq!(h.series.len(), 1);
    let p = &h.series[0].points[0];
    assert_eq!(p.gpus.len(), 2);
    assert_eq!(p.kernel_ns, Some(1050.0));
    // The two cards of one runner disagree by 10%: the fleet view says so.
    assert_eq!(f.fleet.len(), 1);
    assert_eq!(f.fleet[0].slowest.gpu_uuid, "GPU-b");
}

#[test]
fn the_history_judges_regression_and_leak_gates_only() {
    assert_eq!(HISTORY_GATES, [Gate::Regression, Gate::Leak]);
    assert_eq!(unjudged_gates(&[Gate::Leak, Gate::Streams]), vec![Gate::Streams]);
    assert!(unjudged_gates(&[Gate::Regression, Gate::Leak]).is_empty());
}

/// The case: a history of one-pass runs called a 30% step "slower" and tripped the
/// regression gate where compare, on the same two runs, judges nothing.
#[test]
fn a_step_between_one_pass_runs_is_not_judged_and_trips_nothing() {
    let (_dir, mut db) = generated::db();
    for i in 0..10 {
        let level = if i < 9 { 1000.0 } else { 1300.0 };
        db.add(
            &generated::run(i, "a", "GPU-a", "13.0.1", "580.1"),
            &[generated::throughput_passes(
                "blocking",
                "GPU-a",
                &[level + 2.0 * jitter(i)],
            )],
        )
        .unwrap();
    }
    let (_, f) = findings(&db);
    // The trend still shows the step, as a change point at the latest run …
    assert_eq!(f.new_shifts().count(), 1);
    // … but the latest run against the one before is compare's verdict: not judged.
    let s = &f.series[0];
    assert_eq!((s.latest[0].before_point, s.latest[0].point), (8, 9));
    assert_eq!(s.latest[0].verdict(), Change::NotEnoughPasses);
    assert_eq!(s.shifts[0].judged[0].verdict(), Change::NotEnoughPasses);
    let latest = f.latest_changes();
    assert_eq!((latest.slower, latest.faster, latest.unjudged), (0, 0, 1));
    assert!(!latest.alarm());
    assert!(f.tripped(&[Gate::Regression]).is_empty());
}

#[test]
fn results_without_per_pass_figures_are_not_judged() {
    let (_dir, mut db) = generated::db();
    for (i, level) in [1000.0, 2000.0].into_iter().enumerate() {
        let mut row = generated::throughput("blocking", "GPU-a", level);
        if i == 0 {
            // Added before the history kept per-pass figures.
            row.throughput.as_mut().unwrap().per_pass = None;
        }
        db.add(&generated::run(i, "a", "GPU-a", "13.0.1", "580.1"), &[row])
            .unwrap();
    }
    let (_, f) = findings(&db);
    let step = &f.series[0].latest[0];
    assert_eq!((step.judged.clone(), step.verdict()), (None, Change::NotEnoughPasses));
    assert!(f.tripped(&[Gate::Regression]).is_empty());
}

#[test]
fn the_same_level_again_is_the_same_and_the_latest_point_needs_a_figure() {
    let (_dir, mut db) = generated::db();
    add_tp(&mut db, 0, "a", "GPU-a", "13.0.1", "580.1", 1000.0);
    add_tp(&mut db, 1, "a", "GPU-a", "13.0.1", "580.1", 1001.0);
    let (_, f) = findings(&db);
    assert_eq!(f.series[0].latest[0].verdict(), Change::Same);
    assert_eq!(f.latest_changes().same, 1);
    // A series whose latest run has no figure (it failed) has no latest verdict.
    let mut failed = generated::throughput("blocking", "GPU-a", 1000.0);
    failed.throughput = None;
    failed.status = nppbench_model::Status::Failed;
    db.add(&generated::run(2, "a", "GPU-a", "13.0.1", "580.1"), &[failed])
        .unwrap();
    let (_, f) = findings(&db);
    assert!(f.series[0].latest.is_empty());
}

/// What the history page draws (generated histories): a series whose level moved says something;
/// one that only crossed an environment change at the same level does not.
#[test]
fn a_series_says_something_when_its_level_moves_not_when_only_its_environment_changed() {
    let (_dir, mut db) = generated::db();
    for i in 0..12 {
        let (npp, level) = if i < 6 { ("12.2.3", 1000.0) } else { ("13.0.1", 1200.0) };
        add_tp(&mut db, i, "a", "GPU-a", npp, "580.1", level + 4.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    assert!(f.series[0].says_something());

    let (_dir, mut db) = generated::db();
    for i in 0..12 {
        let driver = if i < 6 { "580.1" } else { "580.2" };
        add_tp(&mut db, i, "a", "GPU-a", "13.0.1", driver, 1000.0 + 4.0 * jitter(i));
    }
    let (_, f) = findings(&db);
    assert!(!f.series[0].env.is_empty(), "the driver changed");
    assert!(!f.series[0].says_something());
}
