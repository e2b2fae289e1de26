//! The race in words where rounds were spared (`--race-rounds where-split`) and where a race
//! breaks that choice's premise. Altered copy (generated) of a real run: the page's sentences
//! are under test, not the data.

use super::load;

#[test]
fn the_page_says_which_configurations_needed_no_round_and_flags_a_race_on_one_stream() {
    use nppbench_model::{CallStreams, MemoryRecord, OrderingRounds};
    fn rounds(m: &mut MemoryRecord) -> Option<&mut OrderingRounds> {
        m.result.as_mut().and_then(|r| r.ordering.as_mut())
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/judge/npp-13.0.1/run.json.gz");
    let mut run = load(&path);
    let html = nppbench_report::render(std::slice::from_ref(&run)).unwrap().index_html;
    assert!(!html.contains("needed no round") && !html.contains("--race-rounds always"));
    let on = Some(CallStreams {
        on_caller: 3,
        elsewhere: 0,
    });
    for o in run
        .memory
        .iter_mut()
        .filter_map(rounds)
        .filter(|o| o.rounds > 0 && o.wrong_rounds == 0)
        .take(2)
    {
        (o.rounds, o.first_call) = (0, on);
    }
    let html = nppbench_report::render(std::slice::from_ref(&run)).unwrap().index_html;
    assert!(
        html.contains("2 configurations needed no round"),
        "the spared rounds said"
    );
    assert!(!html.contains("--race-rounds always"));
    let racing = run
        .memory
        .iter_mut()
        .filter_map(rounds)
        .find(|o| o.wrong_rounds > 0)
        .expect("a racing scenario");
    racing.first_call = on;
    let html = nppbench_report::render(std::slice::from_ref(&run)).unwrap().index_html;
    assert!(
        html.contains("1 of the races had all of their first call"),
        "the broken premise said"
    );
}
