//! The wrong-pixel rule on real runs (issue #44): NPP 13.0.1's run of `docs/atlas/wrong.toml`
//! on an H200 (`reports/wrong-pixels/`), as the rule search fits it. Nine 8-bit one-channel
//! functions compute wrong pixels there, others of the same pixel formats never do.

use std::path::Path;

use nppbench_analysis::RunAnalysis;
use nppbench_analysis::rules::{Feature, RuleKind};
use nppbench_model::{Primitive, RunFile};

fn rules_of(version: &str) -> Vec<nppbench_analysis::evidence::FunctionRules> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../reports/wrong-pixels/h200-GPU-fd1537c9/wrong-npp-{version}.json.gz"
    ));
    let run = RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let analysis = RunAnalysis::new(&run);
    nppbench_analysis::evidence::pool(&[&analysis]).rules()
}

fn wrong_kind<'a>(rules: &'a [nppbench_analysis::evidence::FunctionRules], name: &str) -> &'a RuleKind {
    let p = Primitive::from_name(name).unwrap();
    let f = rules.iter().find(|f| f.primitive == p).unwrap();
    &f.wrong
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: no wrong-pixel rule"))
        .kind
}

/// Copy_8u_C1R's rule is exact: a destination stride that is a multiple of 128 bytes, a row of
/// 127 or 128 bytes and more, and a source row starting 9 to 11 bytes past a 16-byte boundary;
/// Transpose_8u_C1R, of the same formats, never computes wrong pixels and is not fitted with
/// Copy's scenarios (pooled with its family, it was said wrong at Copy's configurations).
#[test]
fn a_function_never_wrong_is_not_given_its_familys_rule() {
    let rules = rules_of("13.0.1");
    match wrong_kind(&rules, "Copy_8u_C1R") {
        RuleKind::Exactly { literals, .. } => {
            let features: Vec<&Feature> = literals.iter().map(|(l, _)| &l.feature).collect();
            assert!(features.contains(&&Feature::SrcRowStartsIn(9, 11)), "{features:?}");
            assert!(features.contains(&&Feature::DstStrideMultiple(128)), "{features:?}");
        }
        other => panic!("Copy_8u_C1R: {other:?}"),
    }
    for never in ["Transpose_8u_C1R", "Mirror_8u_C1R", "Set_8u_C1R", "Compare_8u_C1R"] {
        if let Some(f) = rules
            .iter()
            .find(|f| f.primitive == Primitive::from_name(never).unwrap())
        {
            assert!(
                matches!(f.wrong.as_ref().map(|r| &r.kind), Some(RuleKind::Never) | None),
                "{never}: {:?}",
                f.wrong
            );
        }
    }
    // NPP 12.2.3 computes every one right.
    let twelve = rules_of("12.2.3");
    assert!(matches!(wrong_kind(&twelve, "Copy_8u_C1R"), RuleKind::Never));
}
