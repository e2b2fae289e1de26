//! What NVML says of one device: this process's memory (`nvmlDeviceGetComputeRunningProcesses`),
//! the other processes using it, and its clocks, power, temperature and throttling.
//!
//! Device-wide used memory moves with every process on the GPU; NVML's per-process figure moves
//! only with ours, so a leak is judged on ours (the memory probes read the device's only where
//! NVML gives none). See the
//! [NVML device queries](https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;

use crate::GpuError;
use crate::listings::{LISTINGS_ENV, ListingClient, socket_path};
use crate::process::DeviceProcess;

/// Throttle reasons that slow the GPU below what it would run at (power and thermal limits,
/// hardware slowdown), as opposed to idling or clocks set on purpose.
const SLOWDOWN: ThrottleReasons = ThrottleReasons::SW_POWER_CAP
    .union(ThrottleReasons::HW_SLOWDOWN)
    .union(ThrottleReasons::SW_THERMAL_SLOWDOWN)
    .union(ThrottleReasons::HW_THERMAL_SLOWDOWN)
    .union(ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN);

/// One reading of the device's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceReading {
    pub sm_mhz: u32,
    pub memory_mhz: u32,
    pub power_mw: u32,
    pub temperature_c: u32,
    pub throttle_reasons: u64,
}

impl DeviceReading {
    /// Whether the GPU was slowed by a power or thermal limit when read.
    pub fn throttled(&self) -> bool {
        ThrottleReasons::from_bits_truncate(self.throttle_reasons).intersects(SLOWDOWN)
    }
}

/// NVML, loaded for one device (matched by UUID).
pub struct ProcessMemoryProbe {
    nvml: Nvml,
    /// The device's NVML handle, looked up once by UUID (a memory probe reads after every call,
    /// and the lookup by UUID is a query of its own): an `nvmlDevice_t`, which nvml-wrapper does
    /// not name.
    handle: *mut std::ffi::c_void,
    pid: u32,
    /// Entries each listing (compute, graphics) gives NVML: what the last listing of its kind
    /// needed, with room for more.
    listed: [AtomicUsize; 2],
    /// The compute processes the last [`ProcessMemoryProbe::used_bytes`] listed, until a census
    /// takes them ([`ProcessMemoryProbe::processes_since_reading`]).
    last_compute: Mutex<Option<Vec<DeviceProcess>>>,
    /// The run's listing server for this device, where the run's parent lists for all its probes
    /// ([`crate::LISTINGS_ENV`]); dropped at its first failure, after which this process lists
    /// for itself.
    shared: Mutex<Option<ListingClient>>,
}

/// Which of NVML's process lists to read.
#[derive(Clone, Copy)]
enum Listing {
    Compute,
    Graphics,
}

/// Entries for processes that start between two readings.
const LISTED_HEADROOM: usize = 16;

// SAFETY: the handle is an opaque NVML device handle, valid while `nvml` is loaded; NVML is
// thread-safe, and nvml-wrapper's own `Device` is Send and Sync.
unsafe impl Send for ProcessMemoryProbe {}
// SAFETY: as for Send: every use of the handle is an NVML call, which NVML makes thread-safe.
unsafe impl Sync for ProcessMemoryProbe {}

fn nvml(call: &'static str) -> impl FnOnce(nvml_wrapper::error::NvmlError) -> GpuError {
    move |e| GpuError::Nvml(format!("{call}: {e}"))
}

impl ProcessMemoryProbe {
    /// Loads NVML (`libnvidia-ml.so.1`, then `libnvidia-ml.so`) for the device with `uuid`.
    pub fn new(uuid: &str) -> Result<ProcessMemoryProbe, GpuError> {
        let nvml = Nvml::builder()
            .lib_path(std::ffi::OsStr::new("libnvidia-ml.so.1"))
            .init()
            .or_else(|_| Nvml::init())
            .map_err(|e| GpuError::Nvml(format!("cannot initialise NVML: {e}")))?;
        let device = nvml
            .device_by_uuid(uuid)
            .map_err(|e| GpuError::Nvml(format!("no NVML device with UUID {uuid}: {e}")))?;
        // SAFETY: reads the handle out of a device NVML just returned; it stays valid while
        // `nvml` is loaded, which this struct keeps.
        let handle = unsafe { device.handle() }.cast();
        // The run's parent lists for this process where it says so (`--memory-readings shared`).
        let shared = std::env::var_os(LISTINGS_ENV)
            .map(|dir| socket_path(std::path::Path::new(&dir), uuid))
            .and_then(|path| {
                ListingClient::connect(&path)
                    .map_err(|e| eprintln!("{e}; listing for itself"))
                    .ok()
            });
        Ok(ProcessMemoryProbe {
            nvml,
            handle,
            pid: std::process::id(),
            listed: [AtomicUsize::new(4 * LISTED_HEADROOM), AtomicUsize::new(LISTED_HEADROOM)],
            last_compute: Mutex::new(None),
            shared: Mutex::new(shared),
        })
    }

    /// Whether this process's readings come from the run's listing server.
    pub fn reads_shared(&self) -> bool {
        self.shared.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// The device's compute processes, listed by this process itself: what a listing server
    /// answers with.
    pub fn list_compute(&self) -> Result<Vec<DeviceProcess>, GpuError> {
        self.list(Listing::Compute)
    }

    /// The compute processes, from the run's listing server where there is one, else listed here.
    fn compute(&self) -> Result<Vec<DeviceProcess>, GpuError> {
        let mut shared = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = shared.as_ref() {
            match client.list() {
                Ok(listed) => return Ok(listed),
                Err(e) => {
                    eprintln!("{e}; listing for itself from now on");
                    *shared = None;
                }
            }
        }
        drop(shared);
        self.list(Listing::Compute)
    }

    fn device(&self) -> Result<nvml_wrapper::Device<'_>, GpuError> {
        // SAFETY: the handle came from `device_by_uuid` on this same `nvml`, which is still loaded.
        Ok(unsafe { nvml_wrapper::Device::new(self.handle.cast(), &self.nvml) })
    }

    /// The kernel driver's version, e.g. `580.159.04`.
    pub fn driver_version(&self) -> Result<String, GpuError> {
        self.nvml
            .sys_driver_version()
            .map_err(|e| GpuError::Nvml(e.to_string()))
    }

    /// Every process NVML lists on the device, compute and graphics, this one included: two
    /// listings, each one query of the kernel driver where the entries the last one needed
    /// suffice.
    pub fn processes(&self) -> Result<Vec<DeviceProcess>, GpuError> {
        let compute = self.compute()?;
        Ok(self.with_graphics(compute))
    }

    /// As [`ProcessMemoryProbe::processes`], with the compute processes the last
    /// [`ProcessMemoryProbe::used_bytes`] listed instead of listing them again (a memory probe
    /// takes its census right after a scenario's last reading: one query of the driver, not
    /// two); lists them where no reading was taken since the last census.
    pub fn processes_since_reading(&self) -> Result<Vec<DeviceProcess>, GpuError> {
        let last = self.last_compute.lock().unwrap_or_else(|p| p.into_inner()).take();
        let compute = match last {
            Some(listed) => listed,
            None => self.compute()?,
        };
        Ok(self.with_graphics(compute))
    }

    /// `compute` with the graphics processes NVML lists (none where it cannot list them), each
    /// process once.
    fn with_graphics(&self, compute: Vec<DeviceProcess>) -> Vec<DeviceProcess> {
        let mut out = compute;
        for p in self.list(Listing::Graphics).unwrap_or_default() {
            if !out.iter().any(|o| o.pid == p.pid) {
                out.push(p);
            }
        }
        out
    }

    /// This process's used memory in bytes, or `None` when NVML lists no figure for it (a
    /// process that has not touched the device yet, or a platform that hides it). Asks for the
    /// compute processes alone (a process with a CUDA context is one), in one call where they fit
    /// in the entries the last reading needed: a memory probe reads after every call, with other
    /// probes doing the same, and each NVML listing is a query of the kernel driver
    /// (nvml-wrapper's `running_compute_processes` makes two, asking the count first). The
    /// listing is kept for [`ProcessMemoryProbe::processes_since_reading`]. Where the run's parent
    /// lists for its probes ([`crate::LISTINGS_ENV`]), the listing is the parent's, begun after
    /// this call began.
    pub fn used_bytes(&self) -> Result<Option<u64>, GpuError> {
        let listed = self.compute()?;
        let own = listed.iter().find(|p| p.pid == self.pid).and_then(|p| p.used_bytes);
        *self.last_compute.lock().unwrap_or_else(|p| p.into_inner()) = Some(listed);
        Ok(own)
    }

    /// The processes NVML lists of one kind, in one call where they fit in the entries the last
    /// listing of that kind needed.
    fn list(&self, listing: Listing) -> Result<Vec<DeviceProcess>, GpuError> {
        let lib = self.nvml.lib();
        let (list, name, listed) = match listing {
            Listing::Compute => (
                lib.nvmlDeviceGetComputeRunningProcesses_v3.as_ref(),
                "nvmlDeviceGetComputeRunningProcesses_v3",
                &self.listed[0],
            ),
            Listing::Graphics => (
                lib.nvmlDeviceGetGraphicsRunningProcesses_v3.as_ref(),
                "nvmlDeviceGetGraphicsRunningProcesses_v3",
                &self.listed[1],
            ),
        };
        let list = list.map_err(|e| GpuError::Nvml(format!("{name}: {e}")))?;
        let mut entries = vec![
            // SAFETY: a plain C struct of integers, for which all zeros is a valid value.
            unsafe { std::mem::zeroed::<nvml_wrapper_sys::bindings::nvmlProcessInfo_t>() };
            listed.load(Ordering::Relaxed)
        ];
        loop {
            let mut count = entries.len() as std::ffi::c_uint;
            // SAFETY: `handle` is this NVML's device handle (see `new`); `entries` holds `count`
            // writable entries, and NVML writes at most that many.
            let status = unsafe { list(self.handle.cast(), &mut count, entries.as_mut_ptr()) };
            match status {
                nvml_wrapper_sys::bindings::nvmlReturn_enum_NVML_SUCCESS => {
                    entries.truncate(count as usize);
                    break;
                }
                // More processes than entries: `count` says how many there are now.
                nvml_wrapper_sys::bindings::nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE => {
                    let room = count as usize + LISTED_HEADROOM;
                    listed.store(room, Ordering::Relaxed);
                    entries.resize(room, entries[0]);
                }
                other => {
                    return Err(GpuError::Nvml(format!(
                        "{name}: {}",
                        nvml_wrapper::error::NvmlError::from(other)
                    )));
                }
            }
        }
        Ok(entries
            .into_iter()
            .map(|p| DeviceProcess {
                pid: p.pid,
                used_bytes: match UsedGpuMemory::from(p.usedGpuMemory) {
                    UsedGpuMemory::Used(b) => Some(b),
                    UsedGpuMemory::Unavailable => None,
                },
            })
            .collect())
    }

    /// The device's clocks, power, temperature and throttle reasons now.
    pub fn reading(&self) -> Result<DeviceReading, GpuError> {
        let d = self.device()?;
        Ok(DeviceReading {
            sm_mhz: d.clock_info(Clock::SM).map_err(nvml("nvmlDeviceGetClockInfo(SM)"))?,
            memory_mhz: d.clock_info(Clock::Memory).unwrap_or(0),
            power_mw: d.power_usage().unwrap_or(0),
            temperature_c: d.temperature(TemperatureSensor::Gpu).unwrap_or(0),
            throttle_reasons: d.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0),
        })
    }

    /// The highest SM clock the device runs at, MHz.
    pub fn max_sm_mhz(&self) -> Result<u32, GpuError> {
        self.device()?
            .max_clock_info(Clock::SM)
            .map_err(nvml("nvmlDeviceGetMaxClockInfo(SM)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_and_thermal_limits_count_as_throttling_idling_does_not() {
        let idle = DeviceReading {
            throttle_reasons: ThrottleReasons::GPU_IDLE.bits(),
            ..Default::default()
        };
        assert!(!idle.throttled());
        let capped = DeviceReading {
            throttle_reasons: (ThrottleReasons::SW_POWER_CAP | ThrottleReasons::GPU_IDLE).bits(),
            ..Default::default()
        };
        assert!(capped.throttled());
    }
}
