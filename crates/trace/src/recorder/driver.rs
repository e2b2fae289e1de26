//! The CUDA driver, only where the program has loaded it: the interposer never loads CUDA into a
//! program, and only ever calls the driver the program mapped. Whether it is mapped is read from
//! the loader's list of objects (`dl_iterate_phdr`: no file is opened, and where the loader added
//! nothing since the last look, one entry is read). The three functions asked (a stream's flags
//! for `flags.rs`, a device and its PCI bus id for NVML) are looked up once per process in that
//! very object (`dlopen` with `RTLD_NOLOAD` of its path, then `dlsym`), and so are those the
//! shield stages a call with ([`Staging`], `shield/stage.rs`).
//!
//! Not through cudarc's loader, by design: it opens the driver by its candidate names, which
//! finds another libcuda than the program's where the program loaded one from elsewhere (CUDA's
//! forward-compatibility folder, a test's stand-in): the interposer would then call a second
//! driver with the program's handles, which crashed a test on the GPU machine. cudarc's types
//! are used for the signatures.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use cudarc::driver::sys;

/// The driver as far as this process knows: not seen mapped yet, usable, or mapped without the
/// functions asked.
const UNSEEN: u8 = 0;
const USABLE: u8 = 1;
const NOT_USABLE: u8 = 2;

static DRIVER: AtomicU8 = AtomicU8::new(UNSEEN);

/// The driver functions the interposer calls, from the object the program mapped.
struct Functions {
    stream_get_flags: unsafe extern "C" fn(sys::CUstream, *mut c_uint) -> sys::CUresult,
    /// `cuStreamQuery`, for whether a stream still has work queued; `None` in a driver without it.
    stream_query: Option<unsafe extern "C" fn(sys::CUstream) -> sys::CUresult>,
    /// The two NVML needs to name a device; `None` in a driver without them.
    device: Option<(DeviceGet, DeviceGetPciBusId)>,
    /// The shield's staging; `None` in a driver without stream-ordered pools.
    staging: Option<Staging>,
}

/// The driver functions the shield stages a call with (`shield/stage.rs`): the current context,
/// a stream-ordered pool per device, its buffers, and copies between pitches.
pub(crate) struct Staging {
    pub(crate) ctx_get_current: CtxGetCurrent,
    pub(crate) ctx_set_current: CtxSetCurrent,
    pub(crate) ctx_get_device: CtxGetDevice,
    pub(crate) pointer_get_attribute: PointerGetAttribute,
    pub(crate) pool_create: PoolCreate,
    pub(crate) pool_destroy: PoolDestroy,
    pub(crate) pool_set_attribute: PoolSetAttribute,
    pub(crate) alloc_from_pool_async: AllocFromPoolAsync,
    pub(crate) free_async: FreeAsync,
    pub(crate) memcpy_2d_async: Memcpy2dAsync,
}

type CtxGetCurrent = unsafe extern "C" fn(*mut sys::CUcontext) -> sys::CUresult;
type CtxSetCurrent = unsafe extern "C" fn(sys::CUcontext) -> sys::CUresult;
type CtxGetDevice = unsafe extern "C" fn(*mut sys::CUdevice) -> sys::CUresult;
type PointerGetAttribute =
    unsafe extern "C" fn(*mut c_void, sys::CUpointer_attribute, sys::CUdeviceptr) -> sys::CUresult;
type PoolCreate = unsafe extern "C" fn(*mut sys::CUmemoryPool, *const sys::CUmemPoolProps) -> sys::CUresult;
type PoolDestroy = unsafe extern "C" fn(sys::CUmemoryPool) -> sys::CUresult;
type PoolSetAttribute = unsafe extern "C" fn(sys::CUmemoryPool, sys::CUmemPool_attribute, *mut c_void) -> sys::CUresult;
type AllocFromPoolAsync =
    unsafe extern "C" fn(*mut sys::CUdeviceptr, usize, sys::CUmemoryPool, sys::CUstream) -> sys::CUresult;
type FreeAsync = unsafe extern "C" fn(sys::CUdeviceptr, sys::CUstream) -> sys::CUresult;
type Memcpy2dAsync = unsafe extern "C" fn(*const sys::CUDA_MEMCPY2D, sys::CUstream) -> sys::CUresult;

/// The staging functions in the driver at `handle`, where it has them all.
fn staging(symbol: &dyn Fn(&CStr) -> Option<*mut c_void>) -> Option<Staging> {
    // SAFETY: each name is the driver API's exported function of that documented signature
    // (cuda.h; `_v2` where the header maps the name to it), with cudarc's types.
    unsafe {
        Some(Staging {
            ctx_get_current: std::mem::transmute::<*mut c_void, CtxGetCurrent>(symbol(c"cuCtxGetCurrent")?),
            ctx_set_current: std::mem::transmute::<*mut c_void, CtxSetCurrent>(symbol(c"cuCtxSetCurrent")?),
            ctx_get_device: std::mem::transmute::<*mut c_void, CtxGetDevice>(symbol(c"cuCtxGetDevice")?),
            pointer_get_attribute: std::mem::transmute::<*mut c_void, PointerGetAttribute>(symbol(
                c"cuPointerGetAttribute",
            )?),
            pool_create: std::mem::transmute::<*mut c_void, PoolCreate>(symbol(c"cuMemPoolCreate")?),
            pool_destroy: std::mem::transmute::<*mut c_void, PoolDestroy>(symbol(c"cuMemPoolDestroy")?),
            pool_set_attribute: std::mem::transmute::<*mut c_void, PoolSetAttribute>(symbol(c"cuMemPoolSetAttribute")?),
            alloc_from_pool_async: std::mem::transmute::<*mut c_void, AllocFromPoolAsync>(symbol(
                c"cuMemAllocFromPoolAsync",
            )?),
            free_async: std::mem::transmute::<*mut c_void, FreeAsync>(symbol(c"cuMemFreeAsync")?),
            memcpy_2d_async: std::mem::transmute::<*mut c_void, Memcpy2dAsync>(symbol(c"cuMemcpy2DAsync_v2")?),
        })
    }
}

type DeviceGet = unsafe extern "C" fn(*mut sys::CUdevice, c_int) -> sys::CUresult;
type DeviceGetPciBusId = unsafe extern "C" fn(*mut c_char, c_int, sys::CUdevice) -> sys::CUresult;

static FUNCTIONS: OnceLock<Functions> = OnceLock::new();

/// The functions in the mapped driver at `path`, without loading anything.
fn look_up(path: &CStr) -> Option<Functions> {
    // SAFETY: RTLD_NOLOAD only returns a handle to an object already mapped (and takes a
    // reference to it, which is kept for the process's life); nothing is loaded or initialised.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if handle.is_null() {
        return None;
    }
    let symbol = |name: &CStr| {
        // SAFETY: `handle` is a live handle; `name` is NUL-terminated.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    let flags = symbol(c"cuStreamGetFlags")?;
    let device = symbol(c"cuDeviceGet").zip(symbol(c"cuDeviceGetPCIBusId"));
    let query = symbol(c"cuStreamQuery");
    let staging = staging(&symbol);
    // SAFETY: the driver API's documented signatures for these exported names (cuda.h), with
    // cudarc's types; the object stays mapped (the handle above is never closed).
    unsafe {
        Some(Functions {
            stream_get_flags: std::mem::transmute::<
                *mut c_void,
                unsafe extern "C" fn(sys::CUstream, *mut c_uint) -> sys::CUresult,
            >(flags),
            stream_query: query
                .map(|q| std::mem::transmute::<*mut c_void, unsafe extern "C" fn(sys::CUstream) -> sys::CUresult>(q)),
            device: device.map(|(get, bus_id)| {
                (
                    std::mem::transmute::<*mut c_void, DeviceGet>(get),
                    std::mem::transmute::<*mut c_void, DeviceGetPciBusId>(bus_id),
                )
            }),
            staging,
        })
    }
}

/// The driver's functions where the process has mapped a CUDA driver that has them.
fn functions() -> Option<&'static Functions> {
    match DRIVER.load(Ordering::Acquire) {
        USABLE => FUNCTIONS.get(),
        NOT_USABLE => None,
        _ => {
            let path = driver_mapped()?;
            match look_up(&path) {
                Some(f) => {
                    let _ = FUNCTIONS.set(f);
                    DRIVER.store(USABLE, Ordering::Release);
                    FUNCTIONS.get()
                }
                None => {
                    DRIVER.store(NOT_USABLE, Ordering::Release);
                    None
                }
            }
        }
    }
}

/// Whether the process has loaded a CUDA driver the interposer can ask (without loading it).
pub(crate) fn usable() -> bool {
    functions().is_some()
}

/// Does the once-per-process part of asking flags where the driver is already mapped: the
/// writer calls it at each tick, so that a program that loaded CUDA before its first NPP call
/// does not pay it on that call.
pub(crate) fn prepare() {
    let _ = usable();
}

/// The driver's functions where they have already been looked up (by the writer's
/// [`prepare`], or an earlier call): never looks them up itself, so that a caller's thread never
/// pays for the lookup (a walk of the loaded objects, `dlopen` and `dlsym`, under the loader's
/// lock) for a question it may skip.
fn functions_looked_up() -> Option<&'static Functions> {
    (DRIVER.load(Ordering::Acquire) == USABLE)
        .then(|| FUNCTIONS.get())
        .flatten()
}

/// A stream's flags (`cuStreamGetFlags`), where the program's driver is loaded; `None` where it
/// is not or the driver does not know the handle.
pub(crate) fn stream_flags(handle: u64) -> Option<u32> {
    let f = functions()?;
    let mut flags: c_uint = 0;
    // SAFETY: the program's own driver; `handle` is the stream the program just passed to NPP,
    // alive for that call, and the flags are written through a valid pointer. A handle the
    // driver does not know gives an error, not a fault.
    let r = unsafe { (f.stream_get_flags)(handle as sys::CUstream, &mut flags) };
    (r == sys::CUresult::CUDA_SUCCESS).then_some(flags)
}

/// Whether `handle` still has work queued (`cuStreamQuery`: not ready), where the program's
/// driver is loaded, already looked up ([`functions_looked_up`]) and answers; `None` where it is
/// not, or answers with an error (no context current for a default stream's handle, a handle it
/// does not know). Asking changes nothing in the stream's order.
pub(crate) fn stream_pending(handle: u64) -> Option<bool> {
    let query = functions_looked_up()?.stream_query?;
    // SAFETY: the program's own driver; `handle` is the stream the program is passing to NPP,
    // alive for that call. A handle the driver does not know gives an error, not a fault.
    match unsafe { query(handle as sys::CUstream) } {
        sys::CUresult::CUDA_SUCCESS => Some(false),
        sys::CUresult::CUDA_ERROR_NOT_READY => Some(true),
        _ => None,
    }
}

/// The shield's staging functions, where the program's driver is mapped and has them (looked
/// up on the first staged call where the writer has not yet).
pub(crate) fn staging_functions() -> Option<&'static Staging> {
    functions()?.staging.as_ref()
}

/// `dlpi_adds` (the loader's count of objects added) when the driver was last looked for and
/// not found: until the loader adds an object, it is not looked for again.
static NOT_MAPPED_AT: AtomicU64 = AtomicU64::new(u64::MAX);

/// What a walk of the loader's list found.
struct Walk {
    not_mapped_at: u64,
    adds: Option<u64>,
    found: Option<CString>,
}

/// The path of the object named `libcuda.so*` the process has mapped, from the loader's list (no
/// file is opened; where nothing was added since it was last not found, the first entry says so).
fn driver_mapped() -> Option<CString> {
    #[cfg(test)]
    tests::WALKS.fetch_add(1, Ordering::Relaxed);
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, size: usize, data: *mut c_void) -> c_int {
        // SAFETY: `data` is the `Walk` passed below, borrowed by this walk only.
        let walk = unsafe { &mut *data.cast::<Walk>() };
        // SAFETY: the loader passes a valid entry of `size` bytes; `dlpi_adds` is read only
        // where the entry holds it.
        let info = unsafe { &*info };
        if walk.adds.is_none() && size >= std::mem::offset_of!(libc::dl_phdr_info, dlpi_subs) {
            walk.adds = Some(info.dlpi_adds);
            if info.dlpi_adds == walk.not_mapped_at {
                return 1;
            }
        }
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a non-null name is NUL-terminated.
        let name = unsafe { CStr::from_ptr(info.dlpi_name) };
        let path = name.to_bytes();
        let file = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
        if file.starts_with(b"libcuda.so") {
            walk.found = Some(name.to_owned());
            return 1;
        }
        0
    }
    let mut walk = Walk {
        not_mapped_at: NOT_MAPPED_AT.load(Ordering::Relaxed),
        adds: None,
        found: None,
    };
    // SAFETY: `visit` reads only the entries it is given and the walk it is passed.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut walk).cast()) };
    if walk.found.is_none()
        && let Some(adds) = walk.adds
    {
        NOT_MAPPED_AT.store(adds, Ordering::Relaxed);
    }
    walk.found
}

/// The PCI bus id of the device the program calls CUDA `ordinal` (`cuDeviceGet`,
/// `cuDeviceGetPCIBusId`), where the driver is loaded and initialised; NVML names devices by it.
pub(crate) fn pci_bus_id(ordinal: i32) -> Option<String> {
    let (device_get, device_get_pci_bus_id) = functions()?.device?;
    let mut device: sys::CUdevice = 0;
    let mut id = [0 as c_char; 32];
    // SAFETY: the program's own driver; both write through valid pointers (`id` holds the length
    // passed). Before `cuInit` they return an error, not a fault.
    let found = unsafe {
        device_get(&mut device, ordinal) == sys::CUresult::CUDA_SUCCESS
            && device_get_pci_bus_id(id.as_mut_ptr(), id.len() as c_int, device) == sys::CUresult::CUDA_SUCCESS
    };
    // SAFETY: on success the driver wrote a NUL-terminated string within `id`.
    found.then(|| unsafe { CStr::from_ptr(id.as_ptr()) }.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;

    /// Walks of the loader's list, in this test process.
    pub(super) static WALKS: AtomicU32 = AtomicU32::new(0);

    /// The race's question, asked on a program's call, never looks the driver up: where no lookup
    /// found it, the call asks nothing (a lookup walks the loader's list, `dlopen`s and `dlsym`s,
    /// under the loader's lock; the writer looks it up, `prepare`).
    #[test]
    fn the_question_on_a_call_never_looks_the_driver_up() {
        let _driver = crate::DRIVER_TESTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if DRIVER.load(Ordering::Acquire) == USABLE {
            nppbench_model::say_skipped(
                "the_question_on_a_call_never_looks_the_driver_up",
                "this process has looked the CUDA driver up",
            );
            return;
        }
        let walks = WALKS.load(Ordering::Relaxed);
        for _ in 0..3 {
            assert_eq!(stream_pending(0x7f00_dead_0000), None);
        }
        assert_eq!(WALKS.load(Ordering::Relaxed), walks, "no walk of the loader's list");
        prepare();
        assert_eq!(WALKS.load(Ordering::Relaxed), walks + 1, "the writer's lookup walks it");
    }

    #[test]
    fn a_process_without_the_driver_has_none_and_asks_nothing() {
        let _driver = crate::DRIVER_TESTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if driver_mapped().is_some() {
            nppbench_model::say_skipped(
                "a_process_without_the_driver_has_none_and_asks_nothing",
                "this process has the CUDA driver loaded",
            );
            return;
        }
        assert!(!usable());
        assert_eq!(pci_bus_id(0), None);
        assert_eq!(DRIVER.load(Ordering::Acquire), UNSEEN, "looked for again later");
        assert_ne!(
            NOT_MAPPED_AT.load(Ordering::Relaxed),
            u64::MAX,
            "and remembered as not mapped"
        );
        assert!(driver_mapped().is_none());
    }
}
