//! The wrong-pixel gates of `compare` on the committed bisected H100 atlases of NPP 12.2.3 and
//! 13.0.1 (the same draw on each version): the wrong outputs 13.0.1 filed as failures are a class,
//! gated by `wrong` (new against 12.2.3) and `any-wrong`, never by `failed`.

use std::path::Path;

use nppbench_analysis::compare::{Gate, Thresholds, compare};
use nppbench_model::{FailureKind, RunFile};

fn run(version: &str) -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports")
        .join(format!("h100-atlas-bisected-npp-{version}/run-1-npp-{version}.json.gz"));
    RunFile::read(&path).unwrap()
}

#[test]
fn wrong_pixels_of_13_0_1_are_new_against_12_2_3_and_never_a_failure() {
    let (old, new) = (run("12.2.3"), run("13.0.1"));
    let c = compare(&old, &new, Thresholds::default());
    let n = c.counts();
    assert!(n.new_wrong > 0, "{n:?}");
    assert_eq!(n.wrong_gone, 0, "{n:?}");
    assert!(c.cand_wrong.len() >= n.new_wrong);
    assert_eq!(
        c.tripped(&[Gate::Wrong, Gate::AnyWrong]),
        vec![Gate::Wrong, Gate::AnyWrong]
    );
    // A wrong output is a class: the failed gate never counts it, however the run filed it.
    assert!(
        c.cand_failed.iter().all(|f| f.kind != FailureKind::Mismatch),
        "{:?}",
        c.cand_failed
    );
    assert!(c.cand_wrong.iter().all(|id| !c.cand_failed.iter().any(|f| &f.id == id)));
    // The other way round, the pixels are right again, and nothing is newly wrong.
    let back = compare(&new, &old, Thresholds::default());
    assert_eq!((back.counts().new_wrong, back.counts().wrong_gone), (0, n.new_wrong));
    assert!(back.tripped(&[Gate::Wrong]).is_empty());
    // 12.2.3's only misses are nppbench's own reference's (Resize_32f_C1R): not wrong pixels.
    assert!(back.cand_wrong.is_empty(), "{:?}", back.cand_wrong);
}
