//! A process on the device as NVML lists it: what a memory probe's own listing and the run's
//! listing server (`listings.rs`) both give.

/// A process NVML lists on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProcess {
    pub pid: u32,
    pub used_bytes: Option<u64>,
}
