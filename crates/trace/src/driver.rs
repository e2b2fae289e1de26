//! The CUDA driver, only where the program has loaded it: the interposer never loads CUDA into a
//! program. Whether it is mapped is read from the loader's list of objects (`dl_iterate_phdr`:
//! no file is opened, and where the loader added nothing since the last look, one entry is
//! read); cudarc's search for the library by its candidate names (`is_culib_present` and
//! `culib`, a `dlopen` of each name, most of them failing after a search of the library path)
//! runs once the driver is mapped, once per process, on the writer's thread where it can.
//! Asked through cudarc: a stream's flags (`flags.rs`) and a device's PCI bus id (for NVML).

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use cudarc::driver::sys;

/// The driver as far as this process knows: not seen mapped yet, usable, or mapped where cudarc
/// finds no library by its names.
const UNSEEN: u8 = 0;
const USABLE: u8 = 1;
const NOT_FOR_CUDARC: u8 = 2;

static DRIVER: AtomicU8 = AtomicU8::new(UNSEEN);

/// Whether the process has loaded a CUDA driver that cudarc can call (without loading it).
pub(crate) fn usable() -> bool {
    match DRIVER.load(Ordering::Acquire) {
        USABLE => true,
        NOT_FOR_CUDARC => false,
        _ => {
            if !driver_mapped() {
                return false;
            }
            // SAFETY: cudarc opens each of its candidate names (the driver is mapped: one of them
            // is found among the loaded objects) and closes it again; then opens the one it
            // keeps for the process's life. Once per process.
            let usable = unsafe {
                let usable = sys::is_culib_present();
                if usable {
                    sys::culib();
                }
                usable
            };
            DRIVER.store(if usable { USABLE } else { NOT_FOR_CUDARC }, Ordering::Release);
            usable
        }
    }
}

/// Does the once-per-process part of asking flags where the driver is already mapped: the
/// writer calls it at each tick, so that a program that loaded CUDA before its first NPP call
/// does not pay it on that call.
pub(crate) fn prepare() {
    let _ = usable();
}

/// `dlpi_adds` (the loader's count of objects added) when the driver was last looked for and
/// not found: until the loader adds an object, it is not looked for again.
static NOT_MAPPED_AT: AtomicU64 = AtomicU64::new(u64::MAX);

/// What a walk of the loader's list found.
struct Walk {
    not_mapped_at: u64,
    adds: Option<u64>,
    found: bool,
}

/// Whether an object named `libcuda.so*` is mapped, from the loader's list (no file is opened;
/// where nothing was added since it was last not found, the first entry says so).
fn driver_mapped() -> bool {
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
        let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes();
        let file = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
        walk.found = file.starts_with(b"libcuda.so");
        c_int::from(walk.found)
    }
    let mut walk = Walk {
        not_mapped_at: NOT_MAPPED_AT.load(Ordering::Relaxed),
        adds: None,
        found: false,
    };
    // SAFETY: `visit` reads only the entries it is given and the walk it is passed.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut walk).cast()) };
    if !walk.found
        && let Some(adds) = walk.adds
    {
        NOT_MAPPED_AT.store(adds, Ordering::Relaxed);
    }
    walk.found
}

/// The PCI bus id of the device the program calls CUDA `ordinal` (`cuDeviceGet`,
/// `cuDeviceGetPCIBusId`), where the driver is loaded and initialised; NVML names devices by it.
pub(crate) fn pci_bus_id(ordinal: i32) -> Option<String> {
    if !usable() {
        return None;
    }
    let mut device = 0;
    let mut id = [0 as c_char; 32];
    // SAFETY: the driver is loaded; both write through valid pointers (`id` holds the length
    // passed). Before `cuInit` they return an error, not a fault.
    let found = unsafe {
        sys::cuDeviceGet(&mut device, ordinal) == sys::CUresult::CUDA_SUCCESS
            && sys::cuDeviceGetPCIBusId(id.as_mut_ptr(), id.len() as c_int, device) == sys::CUresult::CUDA_SUCCESS
    };
    // SAFETY: on success the driver wrote a NUL-terminated string within `id`.
    found.then(|| unsafe { CStr::from_ptr(id.as_ptr()) }.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_without_the_driver_has_none_and_asks_nothing() {
        if driver_mapped() {
            eprintln!("skipped: this process has the CUDA driver loaded");
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
        assert!(!driver_mapped());
    }
}
