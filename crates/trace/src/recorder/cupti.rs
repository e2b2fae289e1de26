//! Every CUDA stream created or destroyed in the process, from CUPTI's callback API: the
//! subscription (resource domain: streams created and destroyed; driver and runtime API domains:
//! the stream-creating calls, on their exit, for the flags they were given) and the one callback
//! CUPTI calls, on the program's thread that creates or destroys the stream. See
//! [the callback API](https://docs.nvidia.com/cupti/api/group__CUPTI__CALLBACK__API.html).
//!
//! The callback appends the event to its thread's feed (`feed.rs`), as a call does: inside a
//! catalogued call the stream is that call's; outside one, the creating stack's return addresses
//! go with it, for the writer to name. A stream created outside a catalogued call also tells the
//! flags cache (`flags.rs`), so that calls need not ask the driver. It takes no lock: the stream
//! registry is the writer's (`writer/streams.rs`). The time spent in these callbacks is recording
//! too: it is summed in two counters ([`callbacks`]).

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::cupti::{result, sys};

use crate::recorder::{clock, feed, flags, stack, work};

/// The callbacks handled and the time spent in them, ns.
static CALLBACKS: AtomicU64 = AtomicU64::new(0);
static CALLBACKS_NS: AtomicU64 = AtomicU64::new(0);

/// The callbacks handled so far and the time spent in them, ns.
pub(crate) fn callbacks() -> (u64, u64) {
    (CALLBACKS.load(Ordering::Relaxed), CALLBACKS_NS.load(Ordering::Relaxed))
}

/// A stream was created on the calling thread (CUPTI's resource callback, or a test hook).
pub(crate) fn on_created(handle: u64) {
    let now = clock::now_ns();
    work::on_cuda_work();
    feed::stream_created(handle, now, stack::stack);
}

/// The test hook ([`crate::protocol::TEST_STREAM_EVENTS`]): a stream `handle` created
/// (`created` not 0) or destroyed on the calling thread, handled as CUPTI's callback handles it,
/// timed as a callback. Does nothing unless the hook was switched on at start.
#[unsafe(no_mangle)]
pub(crate) extern "C" fn nppbench_trace_test_stream_event(handle: u64, created: libc::c_int) {
    if !work::test_stream_events() {
        return;
    }
    let entered = clock::now_ns();
    let _ = std::panic::catch_unwind(|| {
        if created != 0 {
            on_created(handle);
        } else {
            on_destroyed(handle);
        }
    });
    CALLBACKS.fetch_add(1, Ordering::Relaxed);
    CALLBACKS_NS.fetch_add(clock::now_ns().saturating_sub(entered), Ordering::Relaxed);
}

/// A stream is being destroyed on the calling thread: its flags are forgotten (a new stream may
/// get its handle).
pub(crate) fn on_destroyed(handle: u64) {
    let now = clock::now_ns();
    flags::destroyed(handle);
    feed::stream_destroyed(handle, now);
}

/// The arguments of the stream-creating calls that pass flags (CUPTI's `cuStreamCreate_params`,
/// `cudaStreamCreateWithFlags_v5000_params` and their priority variants), as far as they are read.
#[repr(C)]
struct CreateParams {
    stream: *mut u64,
    flags: u32,
}

/// The arguments of `cudaStreamCreate` (`cudaStreamCreate_v3020_params`): the pointer alone, 8
/// bytes. Reading them as [`CreateParams`] would read past them.
#[repr(C)]
struct CreateParamsNoFlags {
    stream: *mut u64,
}

/// The API calls subscribed to: (domain, callback id, whether the call passes flags).
fn creating_calls() -> [(sys::CUpti_CallbackDomain, u32, bool); 5] {
    use sys::CUpti_CallbackDomain::{CUPTI_CB_DOMAIN_DRIVER_API as DRIVER, CUPTI_CB_DOMAIN_RUNTIME_API as RUNTIME};
    use sys::CUpti_driver_api_trace_cbid as D;
    use sys::CUpti_runtime_api_trace_cbid as R;
    [
        (DRIVER, D::CUPTI_DRIVER_TRACE_CBID_cuStreamCreate as u32, true),
        (
            DRIVER,
            D::CUPTI_DRIVER_TRACE_CBID_cuStreamCreateWithPriority as u32,
            true,
        ),
        (
            RUNTIME,
            R::CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020 as u32,
            false,
        ),
        (
            RUNTIME,
            R::CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000 as u32,
            true,
        ),
        (
            RUNTIME,
            R::CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050 as u32,
            true,
        ),
    ]
}

/// A stream-creating call returned: where it succeeded outside a catalogued call, its stream's
/// flags go to the cache.
///
/// # Safety
/// `data` is the `CUpti_CallbackData` CUPTI passed at the exit of one of [`creating_calls`].
unsafe fn on_api_exit(data: &sys::CUpti_CallbackData, passes_flags: bool) {
    if data.functionParams.is_null() || data.functionReturnValue.is_null() || crate::recorder::feed::in_call() {
        return;
    }
    // SAFETY: for these calls CUPTI points `functionReturnValue` at the call's CUresult or
    // cudaError_t (both C enums, 0 on success) and `functionParams` at their arguments: a
    // `CreateParams` for the calls that pass flags, a `CreateParamsNoFlags` for the one that does
    // not, each read as what it is and no further; on success the stream pointer has been written.
    unsafe {
        if *data.functionReturnValue.cast::<i32>() != 0 {
            return;
        }
        let (stream, flags) = if passes_flags {
            let params = &*data.functionParams.cast::<CreateParams>();
            (params.stream, params.flags)
        } else {
            (data.functionParams.cast::<CreateParamsNoFlags>().read().stream, 0)
        };
        if stream.is_null() {
            return;
        }
        flags::created(*stream, flags);
    }
}

unsafe extern "C" fn on_callback(
    _userdata: *mut c_void,
    domain: sys::CUpti_CallbackDomain,
    cbid: u32,
    cbdata: *const c_void,
) {
    use sys::CUpti_CallbackDomain::{
        CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_RUNTIME_API,
    };
    use sys::CUpti_CallbackIdResource as Id;
    if cbdata.is_null() {
        return;
    }
    let entered = clock::now_ns();
    // Never unwind into CUPTI.
    let handled = std::panic::catch_unwind(|| match domain {
        CUPTI_CB_DOMAIN_RESOURCE if cbid == Id::CUPTI_CBID_RESOURCE_STREAM_CREATED as u32 => {
            on_created(resource_handle(cbdata));
            true
        }
        CUPTI_CB_DOMAIN_RESOURCE if cbid == Id::CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING as u32 => {
            on_destroyed(resource_handle(cbdata));
            true
        }
        CUPTI_CB_DOMAIN_DRIVER_API | CUPTI_CB_DOMAIN_RUNTIME_API => {
            // SAFETY: for API domains CUPTI passes a CUpti_CallbackData, valid during the call.
            let data = unsafe { &*cbdata.cast::<sys::CUpti_CallbackData>() };
            if data.callbackSite != sys::CUpti_ApiCallbackSite::CUPTI_API_EXIT {
                return false;
            }
            let Some((_, _, passes_flags)) = creating_calls()
                .into_iter()
                .find(|(d, id, _)| *d == domain && *id == cbid)
            else {
                return false;
            };
            // SAFETY: the id is one of `creating_calls`, at its exit.
            unsafe { on_api_exit(data, passes_flags) };
            true
        }
        _ => false,
    });
    if matches!(handled, Ok(true)) {
        let spent = clock::now_ns().saturating_sub(entered);
        CALLBACKS.fetch_add(1, Ordering::Relaxed);
        CALLBACKS_NS.fetch_add(spent, Ordering::Relaxed);
    }
}

fn resource_handle(cbdata: *const c_void) -> u64 {
    // SAFETY: for resource callbacks CUPTI passes a CUpti_ResourceData, valid during the call.
    unsafe {
        (*(cbdata as *const sys::CUpti_ResourceData))
            .resourceHandle
            .bindgen_union_field
    }
}

/// Subscribes to stream creation and destruction for the process's life. The error says why
/// streams cannot be counted.
pub(crate) fn subscribe() -> Result<(), String> {
    stack::prime();
    // By full path from the toolkit's folders, so that cudarc's open by name finds it mapped.
    let _ = nppbench_npp_sys::toolkit::preload("cupti");
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        let dirs: Vec<String> = nppbench_npp_sys::toolkit::toolkit_dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        return Err(format!(
            "libcupti could not be loaded (looked in {} and the loader's path)",
            dirs.join(", ")
        ));
    }
    let mut subscriber = std::ptr::null_mut();
    // SAFETY: `on_callback` matches CUpti_CallbackFunc and needs no user data; the subscription
    // is kept for the process's life.
    unsafe {
        result::subscribe(&mut subscriber, Some(on_callback), std::ptr::null_mut()).map_err(|e| {
            format!("cuptiSubscribe: {e:?} (another CUPTI client, such as a profiler, may hold the subscription)")
        })?;
        let domain = sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE;
        for id in [
            sys::CUpti_CallbackIdResource::CUPTI_CBID_RESOURCE_STREAM_CREATED,
            sys::CUpti_CallbackIdResource::CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING,
        ] {
            result::enable_callback(1, subscriber, domain, id as u32)
                .map_err(|e| format!("cuptiEnableCallback: {e:?}"))?;
        }
        // Without these, calls ask the driver for their streams' flags: slower, not wrong.
        for (domain, id, _) in creating_calls() {
            let _ = result::enable_callback(1, subscriber, domain, id);
        }
    }
    Ok(())
}
