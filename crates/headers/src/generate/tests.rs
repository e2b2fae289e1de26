//! Rows generated from a few prototypes: the sizer found, overrides, and every reason.

use super::*;
use crate::extract::TypeKind;

fn prototypes() -> Prototypes {
    let f = |s: &str, lib: Option<&str>, args: &str| {
        (s.to_owned(), lib.map(str::to_owned), format!("NppStatus {s}({args});"))
    };
    Prototypes {
        version: "12.2.3.2".into(),
        types: vec![
            (TypeKind::Struct, "NppiSize".into()),
            (TypeKind::Struct, "NppStreamContext".into()),
            (TypeKind::Scalar, "Npp8u".into()),
            (TypeKind::Scalar, "Npp16u".into()),
            (TypeKind::Scalar, "Npp32f".into()),
            (TypeKind::Scalar, "Npp64f".into()),
        ],
        statuses: Vec::new(),
        functions: vec![
            f(
                "nppiConvert_8u32f_C1R_Ctx",
                Some("nppidei"),
                "const Npp8u * pSrc, int nSrcStep, Npp32f * pDst, int nDstStep, NppiSize oSizeROI, NppStreamContext nppStreamCtx",
            ),
            f(
                "nppiMean_16u_C1R_Ctx",
                Some("nppist"),
                "const Npp16u * pSrc, int nSrcStep, NppiSize oSizeROI, Npp8u * pDeviceBuffer, Npp64f * pMean, NppStreamContext nppStreamCtx",
            ),
            f(
                "nppiMeanGetBufferHostSize_16u_C1R_Ctx",
                Some("nppist"),
                "NppiSize oSizeROI, int * hpBufferSize, NppStreamContext nppStreamCtx",
            ),
            f(
                "nppiSum_8u_C1R_Ctx",
                None,
                "const Npp8u * pSrc, int nSrcStep, NppiSize oSizeROI, Npp8u * pDeviceBuffer, Npp64f * pSum, NppStreamContext nppStreamCtx",
            ),
            // Only the plain form is kept for a sizer: no row of its own.
            f(
                "nppiMorphGetBufferSize_8u_C1R",
                Some("nppim"),
                "NppiSize oSizeROI, int * hpBufferSize",
            ),
        ],
    }
}

#[test]
fn rows_say_what_is_synthesisable_and_why_not() {
    let rows = rows(&prototypes()).unwrap();
    let symbols: Vec<_> = rows.iter().map(|r| r.symbol.as_str()).collect();
    assert_eq!(
        symbols,
        [
            "nppiConvert_8u32f_C1R_Ctx",
            "nppiMean_16u_C1R_Ctx",
            "nppiMeanGetBufferHostSize_16u_C1R_Ctx",
            "nppiSum_8u_C1R_Ctx"
        ]
    );
    let convert = &rows[0];
    assert!(convert.synthesisable && convert.overridden, "{convert:?}");
    assert_eq!(convert.formats.samples, ["8u", "32f"]);
    let mean = &rows[1];
    assert!(mean.synthesisable && !mean.overridden, "{mean:?}");
    assert_eq!(
        mean.params[3].with.as_deref(),
        Some("nppiMeanGetBufferHostSize_16u_C1R_Ctx")
    );
    assert_eq!(rows[2].reasons.len(), 1);
    assert!(rows[2].reasons[0].starts_with("no image:"), "{:?}", rows[2].reasons);
    let sum = &rows[3];
    assert!(!sum.synthesisable);
    assert_eq!(
        sum.reasons,
        [
            "not exported: no library of this version exports it",
            "buffer unsized: no …GetBufferSize… function sizes pDeviceBuffer"
        ]
    );
    let summary = summary("12.2.3.2", &rows);
    assert_eq!(
        (summary.functions, summary.synthesisable, summary.not_exported),
        (4, 2, 1)
    );
    assert_eq!(summary.reasons["buffer unsized"], 1);
}
