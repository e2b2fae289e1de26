//! NPP's statuses: each `NppStatus` becomes a `Result` that names the function and the case (the
//! thin layer between the raw calls and the safe types), and each status code has its name.

use crate::Version;
use crate::sys::NppStatus;

/// An NPP call that returned an error status, or could not be made.
#[derive(Debug, thiserror::Error)]
pub enum NppError {
    /// `nppiConvert_8u32f_C1R_Ctx: NPP_STEP_ERROR (-14) (src_stride 30 < width 31)` (NPP 13.0)
    #[error("{function}: {status_name} ({status}) ({details})")]
    Status {
        function: String,
        status: NppStatus,
        status_name: &'static str,
        details: String,
    },
    /// This NPP lacks the function or the library that exports it: 'not measured', not a fault.
    #[error("{function}: {reason}")]
    Unavailable { function: String, reason: String },
    #[error("{function}: {details}")]
    BadArgument { function: String, details: String },
}

/// Checks a status of NPP `version`: errors (negative) become `Err`, warnings (positive) pass.
pub(crate) fn check(
    function: &str,
    status: NppStatus,
    version: Version,
    details: impl FnOnce() -> String,
) -> Result<(), NppError> {
    if status >= 0 {
        return Ok(());
    }
    Err(NppError::Status {
        function: function.to_owned(),
        status,
        status_name: status_name(status, version),
        details: details(),
    })
}

/// Whether a status says NPP could not get the memory it needed.
pub fn is_out_of_memory(status: NppStatus) -> bool {
    matches!(status, -4 | -9)
}

/// The name the headers of NPP `version` give a status code. NPP 13.2 numbered its errors anew:
/// `-14` is `NPP_STEP_ERROR` up to 13.0 and `NPP_NOT_SUPPORTED_MODE_ERROR` from 13.2, where a
/// step error is `-16`. The tables are the `NppStatus` enums of the headers of 13.0.1.2 (12.2.3.2's
/// and one code more) and of 13.2.0.58, as `catalogue/npp-VERSION/prototypes.tsv.gz` keeps them
/// (a test holds them to it); a version between the two takes the older numbering.
pub fn status_name(status: NppStatus, version: Version) -> &'static str {
    if (version.major, version.minor) >= (13, 2) {
        numbered_from_13_2(status)
    } else {
        numbered_before_13_2(status)
    }
}

fn numbered_before_13_2(status: NppStatus) -> &'static str {
    match status {
        -9999 => "NPP_NOT_SUPPORTED_MODE_ERROR",
        -1032 => "NPP_INVALID_HOST_POINTER_ERROR",
        -1031 => "NPP_INVALID_DEVICE_POINTER_ERROR",
        -1030 => "NPP_LUT_PALETTE_BITSIZE_ERROR",
        -1028 => "NPP_ZC_MODE_NOT_SUPPORTED_ERROR",
        -1027 => "NPP_NOT_SUFFICIENT_COMPUTE_CAPABILITY",
        -1024 => "NPP_TEXTURE_BIND_ERROR",
        -1020 => "NPP_WRONG_INTERSECTION_ROI_ERROR",
        -1006 => "NPP_HAAR_CLASSIFIER_PIXEL_MATCH_ERROR",
        -1005 => "NPP_MEMFREE_ERROR",
        -1004 => "NPP_MEMSET_ERROR",
        -1003 => "NPP_MEMCPY_ERROR",
        -1002 => "NPP_ALIGNMENT_ERROR",
        -1000 => "NPP_CUDA_KERNEL_EXECUTION_ERROR",
        -215 => "NPP_STREAM_CTX_ERROR",
        -213 => "NPP_ROUND_MODE_NOT_SUPPORTED_ERROR",
        -210 => "NPP_QUALITY_INDEX_ERROR",
        -201 => "NPP_RESIZE_NO_OPERATION_ERROR",
        -109 => "NPP_OVERFLOW_ERROR",
        -108 => "NPP_NOT_EVEN_STEP_ERROR",
        -107 => "NPP_HISTOGRAM_NUMBER_OF_LEVELS_ERROR",
        -106 => "NPP_LUT_NUMBER_OF_LEVELS_ERROR",
        -61 => "NPP_CORRUPTED_DATA_ERROR",
        -60 => "NPP_CHANNEL_ORDER_ERROR",
        -59 => "NPP_ZERO_MASK_VALUE_ERROR",
        -58 => "NPP_QUADRANGLE_ERROR",
        -57 => "NPP_RECTANGLE_ERROR",
        -56 => "NPP_COEFFICIENT_ERROR",
        -53 => "NPP_NUMBER_OF_CHANNELS_ERROR",
        -52 => "NPP_COI_ERROR",
        -51 => "NPP_DIVISOR_ERROR",
        -47 => "NPP_CHANNEL_ERROR",
        -37 => "NPP_STRIDE_ERROR",
        -34 => "NPP_ANCHOR_ERROR",
        -33 => "NPP_MASK_SIZE_ERROR",
        -23 => "NPP_RESIZE_FACTOR_ERROR",
        -22 => "NPP_INTERPOLATION_ERROR",
        -21 => "NPP_MIRROR_FLIP_ERROR",
        -20 => "NPP_MOMENT_00_ZERO_ERROR",
        -19 => "NPP_THRESHOLD_NEGATIVE_LEVEL_ERROR",
        -18 => "NPP_THRESHOLD_ERROR",
        -17 => "NPP_CONTEXT_MATCH_ERROR",
        -16 => "NPP_FFT_FLAG_ERROR",
        -15 => "NPP_FFT_ORDER_ERROR",
        -14 => "NPP_STEP_ERROR",
        -13 => "NPP_SCALE_RANGE_ERROR",
        -12 => "NPP_DATA_TYPE_ERROR",
        -11 => "NPP_OUT_OFF_RANGE_ERROR",
        -10 => "NPP_DIVIDE_BY_ZERO_ERROR",
        -9 => "NPP_MEMORY_ALLOCATION_ERR",
        -8 => "NPP_NULL_POINTER_ERROR",
        -7 => "NPP_RANGE_ERROR",
        -6 => "NPP_SIZE_ERROR",
        -5 => "NPP_BAD_ARGUMENT_ERROR",
        -4 => "NPP_NO_MEMORY_ERROR",
        -3 => "NPP_NOT_IMPLEMENTED_ERROR",
        -2 => "NPP_ERROR",
        -1 => "NPP_ERROR_RESERVED",
        0 => "NPP_NO_ERROR",
        1 => "NPP_NO_OPERATION_WARNING",
        6 => "NPP_DIVIDE_BY_ZERO_WARNING",
        28 => "NPP_AFFINE_QUAD_INCORRECT_WARNING",
        29 => "NPP_WRONG_INTERSECTION_ROI_WARNING",
        30 => "NPP_WRONG_INTERSECTION_QUAD_WARNING",
        35 => "NPP_DOUBLE_SIZE_WARNING",
        10000 => "NPP_MISALIGNED_DST_ROI_WARNING",
        s if s > 0 => "NPP warning",
        _ => "unknown NPP status",
    }
}

fn numbered_from_13_2(status: NppStatus) -> &'static str {
    match status {
        -9998 => "NPP_LIBRARY_VERSION_MISMATCH_ERROR",
        -1032 => "NPP_INVALID_HOST_POINTER_ERROR",
        -1031 => "NPP_INVALID_DEVICE_POINTER_ERROR",
        -1030 => "NPP_LUT_PALETTE_BITSIZE_ERROR",
        -1028 => "NPP_ZC_MODE_NOT_SUPPORTED_ERROR",
        -1027 => "NPP_NOT_SUFFICIENT_COMPUTE_CAPABILITY",
        -1024 => "NPP_TEXTURE_BIND_ERROR",
        -1020 => "NPP_WRONG_INTERSECTION_ROI_ERROR",
        -1006 => "NPP_HAAR_CLASSIFIER_PIXEL_MATCH_ERROR",
        -1005 => "NPP_MEMFREE_ERROR",
        -1004 => "NPP_MEMSET_ERROR",
        -1003 => "NPP_MEMCPY_ERROR",
        -1002 => "NPP_ALIGNMENT_ERROR",
        -1000 => "NPP_CUDA_KERNEL_EXECUTION_ERROR",
        -215 => "NPP_STREAM_CTX_ERROR",
        -213 => "NPP_ROUND_MODE_NOT_SUPPORTED_ERROR",
        -210 => "NPP_QUALITY_INDEX_ERROR",
        -201 => "NPP_RESIZE_NO_OPERATION_ERROR",
        -109 => "NPP_OVERFLOW_ERROR",
        -108 => "NPP_NOT_EVEN_STEP_ERROR",
        -107 => "NPP_HISTOGRAM_NUMBER_OF_LEVELS_ERROR",
        -106 => "NPP_LUT_NUMBER_OF_LEVELS_ERROR",
        -62 => "NPP_ZERO_MASK_VALUE_ERROR",
        -61 => "NPP_CORRUPTED_DATA_ERROR",
        -60 => "NPP_CHANNEL_ORDER_ERROR",
        -59 => "NPP_DATA_TYPE_ERROR",
        -58 => "NPP_QUADRANGLE_ERROR",
        -57 => "NPP_RECTANGLE_ERROR",
        -56 => "NPP_COEFFICIENT_ERROR",
        -53 => "NPP_NUMBER_OF_CHANNELS_ERROR",
        -52 => "NPP_COI_ERROR",
        -51 => "NPP_DIVISOR_ERROR",
        -47 => "NPP_CHANNEL_ERROR",
        -37 => "NPP_STRIDE_ERROR",
        -34 => "NPP_ANCHOR_ERROR",
        -33 => "NPP_MASK_SIZE_ERROR",
        -24 => "NPP_RESIZE_FACTOR_ERROR",
        -23 => "NPP_INTERPOLATION_ERROR",
        -22 => "NPP_MIRROR_FLIP_ERROR",
        -21 => "NPP_MOMENT_00_ZERO_ERROR",
        -20 => "NPP_THRESHOLD_NEGATIVE_LEVEL_ERROR",
        -19 => "NPP_THRESHOLD_ERROR",
        -18 => "NPP_FFT_FLAG_ERROR",
        -17 => "NPP_FFT_ORDER_ERROR",
        -16 => "NPP_STEP_ERROR",
        -14 => "NPP_NOT_SUPPORTED_MODE_ERROR",
        -13 => "NPP_CONTEXT_MATCH_ERROR",
        -12 => "NPP_SCALE_RANGE_ERROR",
        -11 => "NPP_OUT_OFF_RANGE_ERROR",
        -10 => "NPP_DIVIDE_BY_ZERO_ERROR",
        -9 => "NPP_MEMORY_ALLOCATION_ERR",
        -8 => "NPP_NULL_POINTER_ERROR",
        -7 => "NPP_RANGE_ERROR",
        -6 => "NPP_SIZE_ERROR",
        -5 => "NPP_BAD_ARGUMENT_ERROR",
        -4 => "NPP_NO_MEMORY_ERROR",
        -3 => "NPP_NOT_IMPLEMENTED_ERROR",
        -2 => "NPP_ERROR",
        -1 => "NPP_ERROR_RESERVED",
        0 => "NPP_NO_ERROR",
        1 => "NPP_NO_OPERATION_WARNING",
        6 => "NPP_DIVIDE_BY_ZERO_WARNING",
        28 => "NPP_AFFINE_QUAD_INCORRECT_WARNING",
        29 => "NPP_WRONG_INTERSECTION_ROI_WARNING",
        30 => "NPP_WRONG_INTERSECTION_QUAD_WARNING",
        35 => "NPP_DOUBLE_SIZE_WARNING",
        10000 => "NPP_MISALIGNED_DST_ROI_WARNING",
        s if s > 0 => "NPP warning",
        _ => "unknown NPP status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: i32, minor: i32) -> Version {
        Version { major, minor, build: 0 }
    }

    #[test]
    fn step_error_names_function_status_and_details() {
        let err = check("nppiConvert_8u32f_C1R_Ctx", -14, v(13, 0), || {
            "src_stride 30 < width 31".into()
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "nppiConvert_8u32f_C1R_Ctx: NPP_STEP_ERROR (-14) (src_stride 30 < width 31)"
        );
        let err = check("nppiConvert_8u32f_C1R_Ctx", -16, v(13, 2), || {
            "src_stride 30 < width 31".into()
        })
        .unwrap_err();
        assert!(err.to_string().contains("NPP_STEP_ERROR (-16)"), "{err}");
    }

    /// Every status each committed version's headers declare is named as they name it (the
    /// statuses `cargo xtask catalogue` read from `nppdefs.h`), and codes no header gives are
    /// unknown.
    #[test]
    fn each_version_names_the_codes_its_headers_declare() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue");
        for (folder, version) in [
            ("npp-12.2.3.2", v(12, 2)),
            ("npp-13.0.1.2", v(13, 0)),
            ("npp-13.2.0.58", v(13, 2)),
        ] {
            let p = nppbench_headers::files::Prototypes::read(&root.join(folder)).unwrap();
            assert!(p.statuses.len() > 60, "{folder}: {}", p.statuses.len());
            for (code, name) in &p.statuses {
                assert_eq!(status_name(*code, version), name, "{folder}: {code}");
            }
            assert_eq!(status_name(-77, version), "unknown NPP status");
        }
        assert_eq!(status_name(-14, v(13, 0)), "NPP_STEP_ERROR");
        assert_eq!(status_name(-14, v(13, 2)), "NPP_NOT_SUPPORTED_MODE_ERROR");
    }

    #[test]
    fn warnings_pass() {
        assert!(check("f", 10000, v(13, 2), String::new).is_ok());
        assert!(check("f", 0, v(13, 2), String::new).is_ok());
    }
}
