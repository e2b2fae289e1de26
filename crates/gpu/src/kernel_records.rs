//! Kernels from CUPTI's activity API: the GPU's own start and end timestamps of each
//! kernel, with no launch gap in them — the figure Nsight Compute's `gpu__time_duration` gives.
//!
//! CUPTI's activity state belongs to the process, so there is one recorder at a time. See the
//! [activity API](https://docs.nvidia.com/cupti/api/group__CUPTI__ACTIVITY__API.html).

use std::alloc::Layout;
use std::sync::Mutex;

use cudarc::cupti::{result, sys};

use crate::{GpuError, Stream};

/// Each activity buffer CUPTI asks for.
const BUFFER: usize = 4 << 20;
/// CUPTI wants its buffers aligned to 8 bytes.
const ALIGN: usize = 8;
/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`.
const FLUSH_FORCED: u32 = 1;
const KIND: sys::CUpti_ActivityKind = sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
const MEMCPY: sys::CUpti_ActivityKind = sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY;
const MEMSET: sys::CUpti_ActivityKind = sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET;
/// The name of a copy's record, and of a fill's, where a recorder records them
/// ([`KernelRecorder::start_with_copies`]).
pub const COPY_RECORD: &str = "[memcpy]";
pub const FILL_RECORD: &str = "[memset]";

/// One kernel as CUPTI recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRecord {
    /// The kernel's (mangled) name.
    pub name: String,
    /// The GPU's timestamps of its start and end, ns.
    pub start: u64,
    pub end: u64,
    /// CUPTI's correlation id of the launch: launches in the order the host made them.
    pub correlation: u32,
    /// CUPTI's id of the stream it ran on.
    pub stream: u32,
}

impl KernelRecord {
    pub fn duration_ns(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// Kernels delivered by CUPTI since the last `take`.
static RECORDS: Mutex<Vec<KernelRecord>> = Mutex::new(Vec::new());
/// Only one recorder at a time; and libcupti is loaded and its callbacks registered once per
/// process (or found missing once).
static ACTIVE: Mutex<bool> = Mutex::new(false);
static REGISTERED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();

fn layout() -> Layout {
    Layout::from_size_align(BUFFER, ALIGN).expect("a valid layout")
}

unsafe extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    // SAFETY: CUPTI passes valid out-pointers; the buffer is freed in `buffer_completed`.
    unsafe {
        let p = std::alloc::alloc(layout());
        *buffer = p;
        *size = if p.is_null() { 0 } else { BUFFER };
        *max_records = 0;
    }
}

unsafe extern "C" fn buffer_completed(
    _ctx: cudarc::driver::sys::CUcontext,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut out = Vec::new();
    let mut record: *mut sys::CUpti_Activity = std::ptr::null_mut();
    // SAFETY: `buffer` holds `valid` bytes of records CUPTI wrote; records of the concurrent-kernel
    // kind start with the layout of CUpti_ActivityKernel4 (every later version keeps that prefix,
    // `start`, `end`, `name`, `correlationId` and `streamId` included); `name` is NULL or a NUL-terminated string CUPTI keeps.
    // The buffer came from `buffer_requested`'s allocation.
    unsafe {
        while result::activity::get_next_record(buffer, valid, &mut record).is_ok() {
            // The first version of each copy and fill record is the prefix of every later one
            // (`bytes`, `start`, `end`, `streamId` and `correlationId` included).
            if (*record).kind == MEMCPY {
                let c = record as *const sys::CUpti_ActivityMemcpy;
                out.push(KernelRecord {
                    name: COPY_RECORD.into(),
                    start: std::ptr::addr_of!((*c).start).read_unaligned(),
                    end: std::ptr::addr_of!((*c).end).read_unaligned(),
                    correlation: std::ptr::addr_of!((*c).correlationId).read_unaligned(),
                    stream: std::ptr::addr_of!((*c).streamId).read_unaligned(),
                });
            } else if (*record).kind == MEMSET {
                let f = record as *const sys::CUpti_ActivityMemset;
                out.push(KernelRecord {
                    name: FILL_RECORD.into(),
                    start: std::ptr::addr_of!((*f).start).read_unaligned(),
                    end: std::ptr::addr_of!((*f).end).read_unaligned(),
                    correlation: std::ptr::addr_of!((*f).correlationId).read_unaligned(),
                    stream: std::ptr::addr_of!((*f).streamId).read_unaligned(),
                });
            } else if (*record).kind == KIND {
                let k = record as *const sys::CUpti_ActivityKernel4;
                let stream = std::ptr::addr_of!((*k).streamId).read_unaligned();
                let (start, end, name, correlation) = (
                    std::ptr::addr_of!((*k).start).read_unaligned(),
                    std::ptr::addr_of!((*k).end).read_unaligned(),
                    std::ptr::addr_of!((*k).name).read_unaligned(),
                    std::ptr::addr_of!((*k).correlationId).read_unaligned(),
                );
                let name = if name.is_null() {
                    String::new()
                } else {
                    std::ffi::CStr::from_ptr(name).to_string_lossy().into_owned()
                };
                out.push(KernelRecord {
                    name,
                    start,
                    end,
                    correlation,
                    stream,
                });
            }
        }
        std::alloc::dealloc(buffer, layout());
    }
    RECORDS.lock().unwrap_or_else(|p| p.into_inner()).extend(out);
}

/// Records the duration of every kernel launched while it lives (and of every copy and fill,
/// where asked).
pub struct KernelRecorder {
    /// The activity kinds it enabled.
    kinds: Vec<sys::CUpti_ActivityKind>,
}

impl KernelRecorder {
    /// Enables kernel records. Fails, without side effects, where libcupti cannot be loaded or
    /// another CUPTI client (a profiler) holds the activity API.
    pub fn start() -> Result<KernelRecorder, GpuError> {
        KernelRecorder::enable(&[KIND])
    }

    /// Enables the records of kernels, copies and fills (the copies' and fills' named
    /// [`COPY_RECORD`] and [`FILL_RECORD`]): all the device work on a stream.
    pub fn start_with_copies() -> Result<KernelRecorder, GpuError> {
        KernelRecorder::enable(&[KIND, MEMCPY, MEMSET])
    }

    fn enable(kinds: &[sys::CUpti_ActivityKind]) -> Result<KernelRecorder, GpuError> {
        let mut active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
        if *active {
            return Err(GpuError::Cupti(
                "a kernel recorder is already running in this process".into(),
            ));
        }
        // Once a process: an ordering probe starts a recorder for each configuration's first call.
        REGISTERED
            .get_or_init(|| {
                crate::toolkit::preload("cupti");
                // SAFETY: only tries to open the library.
                if !unsafe { sys::is_culib_present() } {
                    return Err(
                        "libcupti could not be loaded (looked in the CUDA toolkit folders and the loader path)".into(),
                    );
                }
                result::activity::register_callbacks(Some(buffer_requested), Some(buffer_completed))
                    .map_err(|e| format!("cuptiActivityRegisterCallbacks: {e:?}"))
            })
            .clone()
            .map_err(GpuError::Cupti)?;
        for (i, kind) in kinds.iter().enumerate() {
            if let Err(e) = result::activity::enable(*kind) {
                for enabled in &kinds[..i] {
                    let _ = result::activity::disable(*enabled);
                }
                return Err(GpuError::Cupti(format!("cuptiActivityEnable({kind:?}): {e:?}")));
            }
        }
        RECORDS.lock().unwrap_or_else(|p| p.into_inner()).clear();
        *active = true;
        Ok(KernelRecorder { kinds: kinds.to_vec() })
    }

    /// Waits for `stream`, flushes CUPTI's buffers and returns the kernels recorded since the
    /// last call, in the order the host launched them (by correlation id: kernels a library
    /// puts on streams of its own may start in another order).
    pub fn take(&self, stream: &Stream) -> Result<Vec<KernelRecord>, GpuError> {
        stream.synchronize()?;
        result::activity::flush_all(FLUSH_FORCED)
            .map_err(|e| GpuError::Cupti(format!("cuptiActivityFlushAll: {e:?}")))?;
        let mut records = std::mem::take(&mut *RECORDS.lock().unwrap_or_else(|p| p.into_inner()));
        records.sort_by_key(|r| r.correlation);
        Ok(records)
    }
}

impl Drop for KernelRecorder {
    fn drop(&mut self) {
        for kind in &self.kinds {
            let _ = result::activity::disable(*kind);
        }
        let _ = result::activity::flush_all(FLUSH_FORCED);
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = false;
    }
}
