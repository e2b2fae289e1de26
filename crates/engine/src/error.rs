//! The probe's error: what kind of fault ended a scenario, and the message that says why.
//!
//! Errors keep their kind from the layer that raised them (a CUDA out-of-memory error stays out of
//! memory), so run.json, the report and `compare` can count failures by kind.

use nppbench_gpu::GpuError;
use nppbench_model::{FailureKind, ModelError, Outcome};
use nppbench_npp::{LoadError, NppError};

/// A fault that ends one scenario, or the reason it could not be measured at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct ProbeError {
    pub(crate) kind: FailureKind,
    pub(crate) message: String,
    /// This NPP lacks the primitive or its library: 'not measured', not a fault.
    pub(crate) unavailable: bool,
}

impl ProbeError {
    pub(crate) fn new(kind: FailureKind, message: impl Into<String>) -> ProbeError {
        ProbeError {
            kind,
            message: message.into(),
            unavailable: false,
        }
    }

    /// Nothing to measure: this NPP lacks what the scenario calls.
    pub(crate) fn unavailable(message: impl Into<String>) -> ProbeError {
        ProbeError {
            kind: FailureKind::Load,
            message: message.into(),
            unavailable: true,
        }
    }

    /// The outcome this error records: failed with its kind, or not measured.
    pub(crate) fn outcome(self) -> Outcome {
        if self.unavailable {
            Outcome::NotMeasured { reason: self.message }
        } else {
            Outcome::failed(self.kind, self.message)
        }
    }

    /// Whether the process that met this error can go on to another scenario: the scenario asked
    /// for nothing this NPP has, or for a geometry it cannot take, before any work reached the
    /// GPU; or NPP's output differed from the reference, which every call and check completed
    /// to find (the next scenario uploads its own sources and clears its destination). Any other
    /// fault (a CUDA or NPP error, a thread that died) may have left the CUDA context or NPP's
    /// state unsound.
    pub(crate) fn leaves_process_sound(&self) -> bool {
        self.unavailable || matches!(self.kind, FailureKind::Input | FailureKind::Mismatch)
    }

    /// Whether NPP returned an error status (not one saying it lacked memory): NPP's answer to
    /// the scenario's arguments, which a fresh process gets too. The process can go on where its
    /// context still works after it (`probe::memory::Process::context_works`); a kernel that
    /// poisoned the context fails every later call, and the process ends as at any other fault.
    pub(crate) fn is_npp_status(&self) -> bool {
        self.kind == FailureKind::Npp && !self.unavailable
    }

    /// The same error with `context` before its message.
    pub(crate) fn context(self, context: &str) -> ProbeError {
        ProbeError {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

impl From<GpuError> for ProbeError {
    fn from(e: GpuError) -> ProbeError {
        let kind = if e.is_out_of_memory() {
            FailureKind::OutOfMemory
        } else {
            FailureKind::Gpu
        };
        ProbeError::new(kind, e.to_string())
    }
}

impl From<NppError> for ProbeError {
    fn from(e: NppError) -> ProbeError {
        if matches!(e, NppError::Unavailable { .. }) {
            return ProbeError::unavailable(e.to_string());
        }
        let kind = match &e {
            NppError::Status { status, .. } if nppbench_npp::is_out_of_memory(*status) => FailureKind::OutOfMemory,
            NppError::BadArgument { .. } => FailureKind::Input,
            _ => FailureKind::Npp,
        };
        ProbeError::new(kind, e.to_string())
    }
}

impl From<LoadError> for ProbeError {
    fn from(e: LoadError) -> ProbeError {
        ProbeError::new(FailureKind::Load, e.to_string())
    }
}

impl From<ModelError> for ProbeError {
    fn from(e: ModelError) -> ProbeError {
        ProbeError::new(FailureKind::Input, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_keeps_its_kind() {
        let e = GpuError::Driver {
            call: "cuMemAlloc",
            name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            message: "out of memory".into(),
        };
        assert_eq!(ProbeError::from(e).kind, FailureKind::OutOfMemory);
        let e = GpuError::Driver {
            call: "cuStreamCreate",
            name: "CUDA_ERROR_INVALID_VALUE".into(),
            message: "invalid argument".into(),
        };
        assert_eq!(ProbeError::from(e).kind, FailureKind::Gpu);
    }

    #[test]
    fn npp_statuses_are_sorted_by_kind() {
        let e = NppError::Status {
            function: "f".into(),
            status: -9,
            status_name: "NPP_MEMORY_ALLOCATION_ERR",
            details: String::new(),
        };
        assert_eq!(ProbeError::from(e).kind, FailureKind::OutOfMemory);
        let e = NppError::Status {
            function: "f".into(),
            status: -14,
            status_name: "NPP_STEP_ERROR",
            details: String::new(),
        };
        assert_eq!(ProbeError::from(e).kind, FailureKind::Npp);
        let e = NppError::BadArgument {
            function: "f".into(),
            details: "src_stride 16 is smaller".into(),
        };
        assert_eq!(ProbeError::from(e).kind, FailureKind::Input);
    }

    #[test]
    fn only_faults_that_may_leave_the_context_unsound_end_a_batch() {
        let sound = |kind| ProbeError::new(kind, "x").leaves_process_sound();
        assert!(sound(FailureKind::Input) && sound(FailureKind::Mismatch));
        for kind in [
            FailureKind::Gpu,
            FailureKind::Npp,
            FailureKind::OutOfMemory,
            FailureKind::Thread,
            FailureKind::Other,
        ] {
            assert!(!sound(kind), "{kind:?}");
        }
        assert!(ProbeError::unavailable("no such function").leaves_process_sound());
    }

    #[test]
    fn an_unavailable_function_is_not_measured_not_failed() {
        let e = NppError::Unavailable {
            function: "nppiFoo_Ctx".into(),
            reason: "libnppif is missing".into(),
        };
        assert!(matches!(ProbeError::from(e).outcome(), Outcome::NotMeasured { .. }));
    }

    #[test]
    fn context_keeps_the_kind() {
        let e = ProbeError::new(FailureKind::Mismatch, "row 3").context("the reference kernel is wrong");
        assert_eq!(e.kind, FailureKind::Mismatch);
        assert_eq!(e.message, "the reference kernel is wrong: row 3");
    }
}
