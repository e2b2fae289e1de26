//! Role assignment on small prototype texts, one shape of NPP's at a time.

use super::*;
use crate::prototype::parse;

fn types() -> Types {
    [
        ("NppiBorderType", TypeKind::Enum),
        ("NppiSize", TypeKind::Struct),
        ("NppiRect", TypeKind::Struct),
        ("NppiPoint", TypeKind::Struct),
        ("NppStreamContext", TypeKind::Struct),
        ("NppiResizeBatchCXR", TypeKind::Struct),
        ("Npp8u", TypeKind::Scalar),
        ("Npp32s", TypeKind::Scalar),
        ("Npp32f", TypeKind::Scalar),
        ("Npp64f", TypeKind::Scalar),
    ]
    .into_iter()
    .map(|(n, k)| (n.to_owned(), k))
    .collect()
}

/// (name, role, with) of each parameter of `line`.
fn roles(line: &str) -> Vec<(String, Role, Option<String>)> {
    assign(&parse(line).unwrap(), &types())
        .into_iter()
        .map(|a| (a.param.name, a.role, a.with))
        .collect()
}

fn r(name: &str, role: Role, with: Option<&str>) -> (String, Role, Option<String>) {
    (name.to_owned(), role, with.map(str::to_owned))
}

#[test]
fn steps_pair_with_their_images_by_name() {
    assert_eq!(
        roles(
            "NppStatus nppiAdd_8u_C1RSfs_Ctx(const Npp8u * pSrc1, int nSrc1Step, const Npp8u * pSrc2, int nSrc2Step, Npp8u * pDst, int nDstStep, NppiSize oSizeROI, int nScaleFactor, NppStreamContext nppStreamCtx);"
        ),
        vec![
            r("pSrc1", Role::Source, Some("nSrc1Step")),
            r("nSrc1Step", Role::Step, Some("pSrc1")),
            r("pSrc2", Role::Source, Some("nSrc2Step")),
            r("nSrc2Step", Role::Step, Some("pSrc2")),
            r("pDst", Role::Destination, Some("nDstStep")),
            r("nDstStep", Role::Step, Some("pDst")),
            r("oSizeROI", Role::Roi, None),
            r("nScaleFactor", Role::ScaleFactor, None),
            r("nppStreamCtx", Role::Context, None),
        ]
    );
}

#[test]
fn planes_in_place_images_and_constant_arrays() {
    let planar = roles(
        "NppStatus nppiNV12ToRGB_8u_P2C3R_Ctx(const Npp8u * const pSrc[2], int rSrcStep, Npp8u * pDst, int nDstStep, NppiSize oSizeROI, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(planar[0], r("pSrc", Role::SourcePlanes, Some("rSrcStep")));
    assert_eq!(planar[1], r("rSrcStep", Role::Step, Some("pSrc")));
    let in_place = roles(
        "NppStatus nppiAddC_8u_C3IRSfs_Ctx(const Npp8u aConstants[3], Npp8u * pSrcDst, int nSrcDstStep, NppiSize oSizeROI, int nScaleFactor, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(in_place[0], r("aConstants", Role::ConstantArray, None));
    assert_eq!(in_place[1], r("pSrcDst", Role::SourceDestination, Some("nSrcDstStep")));
}

#[test]
fn masks_scratch_buffers_and_results() {
    assert_eq!(
        roles(
            "NppStatus nppiMean_8u_C1MR_Ctx(const Npp8u * pSrc, int nSrcStep, const Npp8u * pMask, int nMaskStep, NppiSize oSizeROI, Npp8u * pDeviceBuffer, Npp64f * pMean, NppStreamContext nppStreamCtx);"
        )[2..7],
        [
            r("pMask", Role::Mask, Some("nMaskStep")),
            r("nMaskStep", Role::Step, Some("pMask")),
            r("oSizeROI", Role::Roi, None),
            r("pDeviceBuffer", Role::ScratchBuffer, None),
            r("pMean", Role::Result, None),
        ]
    );
    // Per-channel results by value are results too; a size query's host pointer is a result.
    let sizes = roles(
        "NppStatus nppiMeanGetBufferHostSize_8u_C1MR_Ctx(NppiSize oSizeROI, int * hpBufferSize, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(sizes[1], r("hpBufferSize", Role::Result, None));
}

#[test]
fn device_arrays_are_sized_by_a_neighbour() {
    let lut = roles(
        "NppStatus nppiLUT_Linear_8u_C1R_Ctx(const Npp8u * pSrc, int nSrcStep, Npp8u * pDst, int nDstStep, NppiSize oSizeROI, const Npp32s * pValues, const Npp32s * pLevels, int nLevels, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(lut[5], r("pValues", Role::DeviceArray, Some("nLevels")));
    assert_eq!(lut[6], r("pLevels", Role::DeviceArray, Some("nLevels")));
    assert_eq!(lut[7], r("nLevels", Role::Scalar, None));
    let filter = roles(
        "NppStatus nppiFilterBorder_32f_C1R_Ctx(const Npp32f * pSrc, Npp32s nSrcStep, NppiSize oSrcSize, NppiPoint oSrcOffset, Npp32f * pDst, Npp32s nDstStep, NppiSize oSizeROI, const Npp32f * pKernel, NppiSize oKernelSize, NppiPoint oAnchor, NppiBorderType eBorderType, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(filter[1], r("nSrcStep", Role::Step, Some("pSrc")));
    assert_eq!(filter[2], r("oSrcSize", Role::Size, None));
    assert_eq!(filter[3], r("oSrcOffset", Role::Point, None));
    assert_eq!(filter[7], r("pKernel", Role::DeviceArray, Some("oKernelSize")));
    assert_eq!(filter[10], r("eBorderType", Role::Enum, None));
    let add_device = roles(
        "NppStatus nppiAddDeviceC_8u_C3RSfs_Ctx(const Npp8u * pSrc1, int nSrc1Step, const Npp8u * pConstants, Npp8u * pDst, int nDstStep, NppiSize oSizeROI, int nScaleFactor, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(add_device[2], r("pConstants", Role::DeviceArray, Some("channels")));
}

#[test]
fn enums_by_type_or_by_name_and_rectangles() {
    let resize = roles(
        "NppStatus nppiResize_8u_C3R_Ctx(const Npp8u * pSrc, int nSrcStep, NppiSize oSrcSize, NppiRect oSrcRectROI, Npp8u * pDst, int nDstStep, NppiSize oDstSize, NppiRect oDstRectROI, int eInterpolation, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(resize[3], r("oSrcRectROI", Role::Rect, None));
    assert_eq!(resize[8], r("eInterpolation", Role::Enum, None));
}

#[test]
fn descriptor_lists_and_unpaired_steps_are_unknown() {
    let batch = roles(
        "NppStatus nppiResizeBatch_8u_C1R_Ctx(NppiSize oSmallestSrcSize, NppiRect oSrcRectROI, NppiSize oSmallestDstSize, NppiRect oDstRectROI, int eInterpolation, NppiResizeBatchCXR * pBatchList, unsigned int nBatchSize, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(batch[5], r("pBatchList", Role::Unknown, None));
    assert_eq!(batch[6], r("nBatchSize", Role::Scalar, None));
    let unpaired = roles(
        "NppStatus nppiX_8u_C1R_Ctx(Npp8u * pImageDev, int nOtherStep, NppiSize oSizeROI, NppStreamContext nppStreamCtx);",
    );
    assert_eq!(unpaired[1], r("nOtherStep", Role::Unknown, None));
}
