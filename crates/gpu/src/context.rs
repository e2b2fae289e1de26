//! The device and its primary context, which NPP's statically linked CUDA runtime shares.
//!
//! See the [primary context docs](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__PRIMARY__CTX.html).

use std::sync::Arc;

use cudarc::driver::{result, sys};

use crate::GpuError;

/// What NVIDIA libraries want to know of a device (NPP's stream context carries these).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProps {
    pub ordinal: u32,
    pub name: String,
    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as NVML and nvidia-smi print it.
    pub uuid: String,
    pub sm_count: i32,
    pub max_threads_per_sm: i32,
    pub max_threads_per_block: i32,
    pub shared_mem_per_block: usize,
    pub compute_capability: (i32, i32),
    pub total_mem: u64,
    pub l2_cache_bytes: u64,
}

struct Inner {
    device: sys::CUdevice,
    ctx: sys::CUcontext,
    props: DeviceProps,
}

// SAFETY: a CUcontext and a CUdevice are plain handles that the driver lets any host thread use;
// this type never frees them while a clone is alive (Arc).
unsafe impl Send for Inner {}
// SAFETY: as above; the handles are never mutated after creation.
unsafe impl Sync for Inner {}

impl Drop for Inner {
    fn drop(&mut self) {
        // SAFETY: `device` was retained once in `Gpu::open`; this is the matching release.
        let _ = unsafe { result::primary_ctx::release(self.device) };
    }
}

/// A CUDA device with its primary context retained. Cheap to clone and share between threads.
#[derive(Clone)]
pub struct Gpu(Arc<Inner>);

impl Gpu {
    /// Whether the CUDA driver library can be loaded at all. Checked before any cudarc call,
    /// because cudarc panics when the library is missing.
    pub fn driver_present() -> bool {
        // SAFETY: only tries to open the driver library with libloading and drops it.
        unsafe { sys::is_culib_present() }
    }

    /// Initialises the driver, retains device `ordinal`'s primary context and makes it current
    /// on this thread.
    pub fn open(ordinal: usize) -> Result<Gpu, GpuError> {
        if !Gpu::driver_present() {
            return Err(GpuError::NoDriver);
        }
        result::init().map_err(GpuError::driver("cuInit"))?;
        let count = result::device::get_count().map_err(GpuError::driver("cuDeviceGetCount"))?;
        if ordinal >= count.max(0) as usize {
            return Err(GpuError::NoDevice { ordinal, count });
        }
        let device = result::device::get(ordinal as i32).map_err(GpuError::driver("cuDeviceGet"))?;
        // SAFETY: `device` is a valid device handle from cuDeviceGet.
        let ctx =
            unsafe { result::primary_ctx::retain(device) }.map_err(GpuError::driver("cuDevicePrimaryCtxRetain"))?;
        // SAFETY: `ctx` is the primary context just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(GpuError::driver("cuCtxSetCurrent"))?;
        let props = read_props(ordinal as u32, device)?;
        Ok(Gpu(Arc::new(Inner { device, ctx, props })))
    }

    /// How many CUDA devices this machine has (0 without a driver).
    pub fn device_count() -> Result<usize, GpuError> {
        if !Gpu::driver_present() {
            return Err(GpuError::NoDriver);
        }
        result::init().map_err(GpuError::driver("cuInit"))?;
        let count = result::device::get_count().map_err(GpuError::driver("cuDeviceGetCount"))?;
        Ok(count.max(0) as usize)
    }

    /// Makes this device's primary context current on the calling thread, as the CUDA runtime
    /// does on a thread's first call.
    pub fn bind_to_thread(&self) -> Result<(), GpuError> {
        // SAFETY: the context is retained for as long as `self` lives.
        unsafe { result::ctx::set_current(self.0.ctx) }.map_err(GpuError::driver("cuCtxSetCurrent"))
    }

    pub fn props(&self) -> &DeviceProps {
        &self.0.props
    }

    /// `(free, total)` device memory in bytes, device-wide (`cuMemGetInfo`).
    pub fn mem_info(&self) -> Result<(u64, u64), GpuError> {
        self.bind_to_thread()?;
        let (free, total) = result::mem_get_info().map_err(GpuError::driver("cuMemGetInfo"))?;
        Ok((free as u64, total as u64))
    }

    /// Device-wide used memory in bytes: total − free.
    pub fn used_bytes(&self) -> Result<u64, GpuError> {
        let (free, total) = self.mem_info()?;
        Ok(total.saturating_sub(free))
    }

    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub fn driver_api_version() -> Result<i32, GpuError> {
        if !Gpu::driver_present() {
            return Err(GpuError::NoDriver);
        }
        let mut v = 0;
        // SAFETY: writes one int through a valid pointer.
        unsafe { sys::cuDriverGetVersion(&mut v) }
            .result()
            .map_err(GpuError::driver("cuDriverGetVersion"))?;
        Ok(v)
    }

    /// Waits for all work on the device's context.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.bind_to_thread()?;
        result::ctx::synchronize().map_err(GpuError::driver("cuCtxSynchronize"))
    }
}

fn read_props(ordinal: u32, device: sys::CUdevice) -> Result<DeviceProps, GpuError> {
    use sys::CUdevice_attribute as A;
    let attr = |a: A, call: &'static str| {
        // SAFETY: `device` is valid and `a` is an attribute every supported device reports.
        unsafe { result::device::get_attribute(device, a) }.map_err(GpuError::driver(call))
    };
    let name = result::device::get_name(device).map_err(GpuError::driver("cuDeviceGetName"))?;
    let uuid = result::device::get_uuid(device).map_err(GpuError::driver("cuDeviceGetUuid"))?;
    // SAFETY: `device` is valid.
    let total_mem = unsafe { result::device::total_mem(device) }.map_err(GpuError::driver("cuDeviceTotalMem"))?;
    Ok(DeviceProps {
        ordinal,
        name,
        uuid: format_uuid(&uuid.bytes.map(|b| b as u8)),
        sm_count: attr(
            A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)",
        )?,
        max_threads_per_sm: attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            "cuDeviceGetAttribute(MAX_THREADS_PER_MULTIPROCESSOR)",
        )?,
        max_threads_per_block: attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "cuDeviceGetAttribute(MAX_THREADS_PER_BLOCK)",
        )?,
        shared_mem_per_block: attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK)",
        )? as usize,
        compute_capability: (
            attr(
                A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)",
            )?,
            attr(
                A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)",
            )?,
        ),
        total_mem: total_mem as u64,
        l2_cache_bytes: attr(
            A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
            "cuDeviceGetAttribute(L2_CACHE_SIZE)",
        )?
        .max(0) as u64,
    })
}

/// Formats 16 UUID bytes the way NVML does: `GPU-8-4-4-4-12` hex digits.
fn format_uuid(b: &[u8; 16]) -> String {
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_is_formatted_like_nvml() {
        let b: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        assert_eq!(format_uuid(&b), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }
}
