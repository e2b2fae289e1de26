//! A call site of a function known from NPP's headers alone, predicted from design lines the
//! knowledge carries, on made-up lines (no GPU wrote them).

use std::collections::BTreeMap;

use crate::calls::design::{self, Pixels, ShapeLine};
use crate::knowledge::{FORMAT, Knowledge, SCHEMA_VERSION, Scores};
use crate::predict::Basis;

use super::*;

/// A name no other test registers, with other pixel sizes or none.
const MADE_UP: &str = "nppiMadeUpTraced_8u_C1R_Ctx";
const PX: Pixels = Pixels {
    src_bytes_per_pixel: 1,
    src_sample_bytes: 1,
    dst_bytes_per_pixel: 1,
    dst_sample_bytes: 1,
};

/// Knowledge of NPP 13.0.1 that measured no catalogued function, carrying made-up design lines
/// (not measurements) of [`MADE_UP`]: every shape of its design, streams kept on every new
/// thread where a row is not a multiple of 16 bytes, the same pixels at aligned steps.
fn knowledge_with_a_made_up_design() -> Knowledge {
    let lines: Vec<ShapeLine> = design::design(MADE_UP, &PX)
        .into_iter()
        .map(|s| {
            let keeps = !s.width.is_multiple_of(16) && s.threading == Threading::ThreadPerCall;
            design::made_up_line(MADE_UP, PX, s, keeps)
        })
        .collect();
    Knowledge {
        format: FORMAT.into(),
        schema_version: SCHEMA_VERSION,
        npp_version: "13.0.1".into(),
        gpu_arch: "sm90".into(),
        gpu_models: vec!["NVIDIA H100 80GB HBM3".into()],
        sources: Vec::new(),
        made_by: "a test".into(),
        scores: Scores::default(),
        evidence: design::evidence(&[]).unwrap(),
        rules: Vec::new(),
        fixes: Vec::new(),
        calls: None,
        designs: BTreeMap::from([(MADE_UP.to_owned(), lines)]),
        designs_from: BTreeMap::new(),
    }
}

/// The trace's sites of the made-up function are asked of its design: a 31-pixel row (a shape
/// the design measured) leaks as measured there, a 47-pixel one by the rule, a 48-pixel one is
/// flat by the rule; a function with no design lines stays not catalogued.
#[test]
fn a_designed_functions_call_sites_are_predicted_from_its_design() {
    let mut t = empty_trace();
    for (width, src, dst) in [(31, 512, 512), (47, 1024, 1024), (48, 1024, 1024)] {
        let mut s = site((width, 32, src, dst), TraceStreamKind::Created, Some(0), 0, 8, 8, 0, 0);
        s.function = MADE_UP.into();
        t.call_sites.push(s);
    }
    let mut other = site((31, 32, 512, 512), TraceStreamKind::Created, Some(0), 0, 8, 8, 0, 0);
    other.function = "nppiNeverDesigned_8u_C1R_Ctx".into();
    t.call_sites.push(other);
    let f = findings(&t, &[knowledge_with_a_made_up_design()]);
    let by = |function: &str, width: i32| {
        f.groups
            .iter()
            .find(|g| g.function == function && g.geometry.unwrap().width == width)
            .unwrap()
    };
    let answered = |width: i32| {
        let g = by(MADE_UP, width);
        let p = g.prediction.as_ref().unwrap_or_else(|e| panic!("{width}: {e:?}"));
        assert!(p.primitive.is_generated() && g.primitive == Some(p.primitive));
        assert!(
            g.advice.as_ref().unwrap().rules.is_some(),
            "the design's rules are the advice"
        );
        (p.answer.class, p.answer.basis.clone())
    };
    let (class, basis) = answered(31);
    assert_eq!(class, Some(LeakClass::Leak));
    assert!(matches!(basis, Basis::Measured(_)), "{basis:?}");
    assert_eq!(answered(47), (Some(LeakClass::Leak), Basis::Rule));
    assert_eq!(answered(48), (Some(LeakClass::Flat), Basis::Rule));
    assert_eq!(by(MADE_UP, 31).prediction.as_ref().unwrap().from_version, None);
    let other = by("nppiNeverDesigned_8u_C1R_Ctx", 31);
    assert_eq!(other.prediction, Err(Unpredicted::NotCatalogued));
    assert_eq!(other.primitive, None);
}

/// Lines of another version's design (`designs_from`) answer as the version's own do, and each
/// prediction names the version whose design answered.
#[test]
fn a_call_site_answered_from_another_versions_design_names_that_version() {
    let mut t = empty_trace();
    let mut s = site((31, 32, 512, 512), TraceStreamKind::Created, Some(0), 0, 8, 8, 0, 0);
    s.function = MADE_UP.into();
    t.call_sites.push(s);
    let mut k = knowledge_with_a_made_up_design();
    k.npp_version = "13.2.0".into();
    k.designs_from.insert(MADE_UP.to_owned(), "13.0.1".into());
    let f = findings(&t, &[k]);
    let p = f.groups[0].prediction.as_ref().unwrap();
    assert_eq!(p.from_version.as_deref(), Some("13.0.1"));
    assert_eq!(p.answer.class, Some(LeakClass::Leak));
}
