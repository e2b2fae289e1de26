//! The traces committed under reports/trace/, made on an H100 with NPP 13.0.1 by `nppbench trace`
//! (crates/trace/gpu-evidence/run.sh): what their findings must say, with the H100 atlas of the
//! same NPP given.

use std::path::{Path, PathBuf};

use nppbench_analysis::LeakClass;
use nppbench_analysis::trace::{TraceStatus, findings};
use nppbench_model::{RunFile, TraceFile};

fn reports() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports")
}

fn trace(name: &str) -> TraceFile {
    let path = reports().join("trace").join(name).join("trace.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn atlas() -> Vec<nppbench_analysis::knowledge::Knowledge> {
    let runs: Vec<RunFile> = nppbench_model::find_run_files(&reports().join("h100-atlas-npp-13.0.1"))
        .unwrap()
        .iter()
        .map(|p| RunFile::read(p).unwrap())
        .collect();
    nppbench_analysis::knowledge::Knowledge::of_runs(&runs).unwrap()
}

/// The seed report's case: the 31x31 convert (strides 32 and 128) grows, 3 streams and about
/// 1.6 MiB per new thread; the 32x35 one (stride 36) keeps nothing; the atlas agrees.
#[test]
fn the_seed_program_names_the_31x31_convert_and_not_the_32x35_one() {
    let f = findings(&trace("seed-repro"), &atlas());
    assert_eq!(f.status, TraceStatus::Grows);
    let kept: Vec<_> = f.groups.iter().filter(|g| g.streams_kept > 0).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let g = kept[0];
    assert_eq!(g.function, "nppiConvert_8u32f_C1R_Ctx");
    let geometry = g.geometry.as_ref().unwrap();
    assert_eq!(
        (
            geometry.width,
            geometry.height,
            geometry.src_stride,
            geometry.dst_stride
        ),
        (31, 31, Some(32), Some(128))
    );
    assert_eq!((g.calls, g.streams_kept), (100, 300));
    assert_eq!(g.observed, Some(LeakClass::Leak));
    assert_eq!(g.prediction.as_ref().unwrap().agrees, Some(true));
    let per_thread_mib = f.memory.unwrap().growth_mib / 100.0;
    assert!((1.4..1.9).contains(&per_thread_mib), "{per_thread_mib} MiB a thread");
    assert!(
        f.groups
            .iter()
            .filter(|g| g.geometry.as_ref().is_some_and(|x| x.width == 32))
            .all(|g| g.streams_kept == 0)
    );
}

/// nppbench's own program: every stream NPP kept is attributed to the call site that made it,
/// the three functions the catalogue lacks by the creating stack, and the atlas agrees with
/// every catalogued site that kept streams.
#[test]
fn the_own_program_attributes_every_kept_stream() {
    let f = findings(&trace("own-program"), &atlas());
    assert_eq!(f.status, TraceStatus::Grows);
    assert_eq!(f.other_streams.kept, 0, "no kept stream left unattributed");
    let kept = |name: &str| -> u64 {
        f.groups
            .iter()
            .filter(|g| g.function == name)
            .map(|g| g.streams_kept)
            .sum()
    };
    assert_eq!(kept("nppiSubC_8u_C1RSfs_Ctx"), 120);
    assert_eq!(kept("nppiCopy_16u_C1R_Ctx"), 120);
    assert_eq!(kept("nppiNot_8u_C1R_Ctx"), 120);
    assert_eq!(
        kept("nppiCopy_8u_C1R_Ctx"),
        120,
        "the non-blocking stream whose context declares blocking"
    );
    assert_eq!(
        kept("nppiConvert_8u32f_C1R_Ctx"),
        120 + 12,
        "31x31 per thread, and the pool of four once"
    );
    for g in f.groups.iter().filter(|g| g.streams_kept > 0 && g.primitive.is_some()) {
        assert_eq!(g.prediction.as_ref().unwrap().agrees, Some(true), "{}", g.function);
    }
}
