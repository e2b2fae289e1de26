//! The race between runs (#29): a scenario whose ordering rounds found wrong pixels in the
//! candidate and none in the base is a change, and trips the race gate. The test alters a copy of
//! a real run (labelled where it does): the comparison's logic is under test, not the data.

use std::path::Path;

use nppbench_analysis::compare::{Gate, Thresholds, compare};
use nppbench_model::RunFile;

fn read(path: &str) -> RunFile {
    RunFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(path)).unwrap()
}

#[test]
fn a_new_race_is_a_change_and_trips_the_race_gate() {
    // The judge's draw of NPP 13.0.1, its race measured in every memory scenario. Altered copy
    // (generated): the base has one racing scenario's rounds all right, as if it had not raced.
    let cand = read("judge/npp-13.0.1/run.json.gz");
    let mut base = cand.clone();
    let racing = base
        .memory
        .iter_mut()
        .find(|m| {
            m.result
                .as_ref()
                .and_then(|r| r.ordering.as_ref())
                .is_some_and(|o| o.wrong_rounds > 0)
        })
        .expect("a racing scenario");
    let id = racing.scenario.id.clone();
    let o = racing.result.as_mut().unwrap().ordering.as_mut().unwrap();
    (o.wrong_rounds, o.wrong_pixels, o.columns, o.rows) = (0, 0, None, None);
    let c = compare(&base, &cand, Thresholds::default());
    let n = c.counts();
    assert_eq!((n.new_races, n.races_gone, n.new_leaks), (1, 0, 0));
    assert_eq!(c.tripped(&[Gate::Race]), vec![Gate::Race]);
    let m = c.memory.iter().find(|m| m.new_race).unwrap();
    assert_eq!((m.id.as_str(), m.trips(&[Gate::Race])), (id.as_str(), Some(Gate::Race)));
    // The other way round the race is gone, which trips nothing; and a run against itself has
    // no race change.
    let back = compare(&cand, &base, Thresholds::default());
    assert_eq!((back.counts().new_races, back.counts().races_gone), (0, 1));
    assert!(back.tripped(&[Gate::Race]).is_empty());
    assert_eq!(compare(&cand, &cand, Thresholds::default()).counts().new_races, 0);
}

/// A configuration whose first call put all of NPP's work on the caller's stream is ordered
/// without rounds (`--race-rounds where-split`); with work elsewhere and no round made, or with
/// nothing recorded, the race is not measured. Altered copy (generated) of a real record.
#[test]
fn work_all_on_the_callers_stream_is_ordered_without_rounds() {
    use nppbench_analysis::memory::RaceClass;
    use nppbench_model::CallStreams;
    let run = read("judge/npp-13.0.1/run.json.gz");
    let mut record = run
        .memory
        .iter()
        .find(|m| m.result.as_ref().and_then(|r| r.ordering.as_ref()).is_some())
        .expect("a scenario with rounds")
        .clone();
    let mut set = |first_call: Option<CallStreams>| {
        let o = record.result.as_mut().unwrap().ordering.as_mut().unwrap();
        (o.rounds, o.wrong_rounds, o.first_call, o.not_measured) = (0, 0, first_call, None);
        RaceClass::of(&record)
    };
    let on = CallStreams {
        on_caller: 2,
        elsewhere: 0,
    };
    assert_eq!(set(Some(on)), RaceClass::Ordered);
    let split = CallStreams {
        on_caller: 1,
        elsewhere: 1,
    };
    assert!(matches!(set(Some(split)), RaceClass::NotMeasured(_)));
    assert!(matches!(set(None), RaceClass::NotMeasured(_)));
    assert!(matches!(set(Some(CallStreams::default())), RaceClass::NotMeasured(_)));
}

/// The verdict counts the scenarios ordered with no round, and flags a race found where CUPTI saw
/// all of the first call's work on the caller's stream (the premise of `--race-rounds
/// where-split` broken). Altered copy (generated) of a real run.
#[test]
fn the_verdict_counts_rounds_spared_and_flags_a_race_on_one_stream() {
    use nppbench_analysis::RunAnalysis;
    use nppbench_analysis::verdict::verdict;
    use nppbench_model::CallStreams;
    let mut run = read("judge/npp-13.0.1/run.json.gz");
    let before = verdict(&RunAnalysis::new(&run));
    assert_eq!((before.race_by_one_stream, before.races_on_one_stream), (0, 0));
    let on = Some(CallStreams {
        on_caller: 1,
        elsewhere: 0,
    });
    fn rounds(m: &mut nppbench_model::MemoryRecord) -> Option<&mut nppbench_model::OrderingRounds> {
        m.result.as_mut().and_then(|r| r.ordering.as_mut())
    }
    let o = run
        .memory
        .iter_mut()
        .filter_map(rounds)
        .find(|o| o.rounds > 0 && o.wrong_rounds == 0)
        .expect("an ordered scenario");
    (o.rounds, o.first_call) = (0, on);
    let racing = run
        .memory
        .iter_mut()
        .filter_map(rounds)
        .find(|o| o.wrong_rounds > 0)
        .expect("a racing scenario");
    racing.first_call = on;
    let after = verdict(&RunAnalysis::new(&run));
    assert_eq!((after.race_by_one_stream, after.races_on_one_stream), (1, 1));
    assert_eq!((after.race_measured, after.races), (before.race_measured, before.races));
}
