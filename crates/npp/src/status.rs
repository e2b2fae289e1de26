//! NPP's statuses: each `NppStatus` becomes a `Result` that names the function and the case (the
//! thin layer between the raw calls and the safe types), and each status code has its name.

use crate::sys::NppStatus;

/// An NPP call that returned an error status, or could not be made.
#[derive(Debug, thiserror::Error)]
pub enum NppError {
    /// `nppiConvert_8u32f_C1R_Ctx: NPP_STEP_ERROR (-14) (src_stride 30 < width 31)`
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

/// Checks a status: errors (negative) become `Err`, warnings (positive) pass.
pub(crate) fn check(function: &str, status: NppStatus, details: impl FnOnce() -> String) -> Result<(), NppError> {
    if status >= 0 {
        return Ok(());
    }
    Err(NppError::Status {
        function: function.to_owned(),
        status,
        status_name: status_name(status),
        details: details(),
    })
}

/// Whether a status says NPP could not get the memory it needed.
pub fn is_out_of_memory(status: NppStatus) -> bool {
    matches!(status, -4 | -9)
}

/// The name `nppdefs.h` gives a status code.
pub fn status_name(status: NppStatus) -> &'static str {
    match status {
        0 => "NPP_NO_ERROR",
        -1 => "NPP_ERROR_RESERVED",
        -2 => "NPP_ERROR",
        -3 => "NPP_NOT_IMPLEMENTED_ERROR",
        -4 => "NPP_NO_MEMORY_ERROR",
        -5 => "NPP_BAD_ARGUMENT_ERROR",
        -6 => "NPP_SIZE_ERROR",
        -7 => "NPP_RANGE_ERROR",
        -8 => "NPP_NULL_POINTER_ERROR",
        -9 => "NPP_MEMORY_ALLOCATION_ERR",
        -10 => "NPP_DIVIDE_BY_ZERO_ERROR",
        -11 => "NPP_OUT_OFF_RANGE_ERROR",
        -12 => "NPP_DATA_TYPE_ERROR",
        -13 => "NPP_SCALE_RANGE_ERROR",
        -14 => "NPP_STEP_ERROR",
        -17 => "NPP_CONTEXT_MATCH_ERROR",
        -37 => "NPP_STRIDE_ERROR",
        -108 => "NPP_NOT_EVEN_STEP_ERROR",
        -1000 => "NPP_CUDA_KERNEL_EXECUTION_ERROR",
        -1002 => "NPP_ALIGNMENT_ERROR",
        -1003 => "NPP_MEMCPY_ERROR",
        -1004 => "NPP_MEMSET_ERROR",
        -1005 => "NPP_MEMFREE_ERROR",
        -1027 => "NPP_NOT_SUFFICIENT_COMPUTE_CAPABILITY",
        -1031 => "NPP_INVALID_DEVICE_POINTER_ERROR",
        -1032 => "NPP_INVALID_HOST_POINTER_ERROR",
        -9999 => "NPP_NOT_SUPPORTED_MODE_ERROR",
        s if s > 0 => "NPP warning",
        _ => "unknown NPP status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_error_names_function_status_and_details() {
        let err = check("nppiConvert_8u32f_C1R_Ctx", -14, || "src_stride 30 < width 31".into()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "nppiConvert_8u32f_C1R_Ctx: NPP_STEP_ERROR (-14) (src_stride 30 < width 31)"
        );
    }

    #[test]
    fn warnings_pass() {
        assert!(check("f", 10000, String::new).is_ok());
        assert!(check("f", 0, String::new).is_ok());
    }
}
