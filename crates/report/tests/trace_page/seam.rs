//! The recorder behind its seam (`crates/trace/src/recorder/` and `writer/`), with the race
//! question asked while the recording of the calls that can race, question included, averages
//! under 0.6 µs a call (`recorder/pending.rs`): the GPU evidence `docs/seam-runs.sh` made on one
//! H100 with NPP 13.0.1 (`reports/trace/seam/`, GPU-8fe838a0), as the tool wrote it:
//! - `ab.log`: the evidence programs traced with the interposer of build 5c262bc (`base`) and
//!   with this one (`new`), in turn, four rounds;
//! - `lib-ab.log`: the programs over 1 µs a call before, traced with the question's budget of
//!   0.25 µs a call for the question alone (`diag`) and with the budget on the whole recording
//!   (`adaptive`), interleaved, three rounds, with the question (`ask=budget`) and without
//!   (`ask=0`);
//! - the traces of the race program and the lifecycle programs (`lifecycle_program.cu`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nppbench_model::TraceFile;

use super::lifecycle::{forked_child_recorded_nothing, sigterm_kept_every_call, ten_thousand_threads_lost_no_call};
use super::race::{names_only_the_racing_site, ordering_atlas};

fn seam() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/trace/seam")
}

fn per_call(t: &TraceFile) -> f64 {
    t.overhead.per_call_ns().unwrap()
}

/// A log's recording costs, ns a call, by the words before the round's number ("new
/// seed_repro", "adaptive ask=budget race_program"); `cold.rs` reads its logs with it too.
pub(super) fn costs(log: &Path) -> BTreeMap<String, Vec<f64>> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for line in text.lines() {
        let Some((head, rest)) = line.split_once(": recording cost ") else {
            continue;
        };
        let (what, _round) = head.rsplit_once(' ').unwrap();
        let ns: f64 = rest.split(' ').next().unwrap().parse().unwrap();
        out.entry(what.to_owned()).or_default().push(ns);
    }
    out
}

pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Back to back with build 5c262bc: every program recorded under 1 µs a call in every round,
/// where the programs that upload before their calls took 2 to 3.7 µs with 5c262bc's recorder
/// (which asked every call that can race).
#[test]
fn the_seam_records_every_evidence_program_under_a_microsecond_a_call() {
    let c = costs(&seam().join("ab.log"));
    for program in ["seed_repro", "own_program", "overhead_check", "first_calls"] {
        let (base, new) = (&c[&format!("base {program}")], &c[&format!("new {program}")]);
        assert_eq!((base.len(), new.len()), (4, 4), "{program}");
        assert!(new.iter().all(|&ns| ns < 1000.0), "{program}: {new:?}");
        if matches!(program, "seed_repro" | "own_program") {
            assert!(mean(base) > 3.0 * mean(new), "{program}: {base:?} against {new:?}");
        }
    }
}

/// The question's budget on the whole recording: the programs whose threads allocate and
/// upload before their call, where the budget on the question alone took them over 1 µs a call
/// (lifecycle 0.97 to 1.25 µs, the race program 1.05 to 1.27), average under it; a program whose
/// recording is cheap (the seed's) is asked up to the target, and no further. Without the
/// question the race program's recording alone costs 0.86 to 1.18 µs a call (its threads' caches
/// cold after their uploads): it is asked once, and its mean stays under 1 µs, one run not.
#[test]
fn the_question_within_the_budget_keeps_each_program_under_a_microsecond_a_call() {
    let c = costs(&seam().join("lib-ab.log"));
    for program in ["lifecycle_program", "race_program", "own_program", "seed_repro"] {
        let adaptive = &c[&format!("adaptive ask=budget {program}")];
        let fixed = &c[&format!("diag ask=budget {program}")];
        assert_eq!(adaptive.len(), 3, "{program}");
        assert!(mean(adaptive) < 1000.0, "{program}: {adaptive:?}");
        assert!(
            mean(adaptive) < mean(fixed),
            "{program}: {adaptive:?} against {fixed:?}"
        );
    }
    assert!(mean(&c["diag ask=budget lifecycle_program"]) > 1000.0);
    // The seed's program: the asking fills the target (600 ns), and stops there.
    assert!(
        c["adaptive ask=budget seed_repro"]
            .iter()
            .all(|&ns| (560.0..=640.0).contains(&ns))
    );
}

#[test]
fn the_lifecycle_programs_keep_every_call_under_a_microsecond_each() {
    let term = sigterm_kept_every_call("seam/lifecycle-term");
    let fork = forked_child_recorded_nothing("seam/lifecycle-fork");
    let threads = ten_thousand_threads_lost_no_call("seam/lifecycle-threads");
    assert_eq!(threads.streams.len(), 10_000, "each thread's stream");
    assert!(
        threads.streams.iter().all(|s| s.destroyed_s.is_some()),
        "each destroyed"
    );
    for (name, t) in [("term", &term), ("fork", &fork), ("threads", &threads)] {
        assert!(per_call(t) < 1000.0, "{name}: {} ns a call", per_call(t));
        assert!(t.capture.process_first_call_ns.is_some() && t.capture.costliest_call_ns.is_some());
    }
}

/// The race program within the budget (its one question goes to the process's first call that
/// can race, the racing site's) and with every call asked: the racing call site is named, and
/// no other, either way.
#[test]
fn the_race_program_names_the_racing_site_within_the_budget_and_asking_every_call() {
    let atlas = ordering_atlas();
    let within = names_only_the_racing_site("seam/race-program", &atlas, "1 of 1 calls asked");
    names_only_the_racing_site("seam/race-program-ask-all", &atlas, "20 of 20 calls asked");
    assert!(per_call(&within) < 1000.0);
}
