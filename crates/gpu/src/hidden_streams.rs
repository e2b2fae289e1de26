//! Counting the CUDA streams anything in the process creates and destroys, per host thread,
//! with CUPTI's callback API (resource domain).
//!
//! NPP's statically linked runtime creates streams of its own; they never show in our code, but
//! every stream goes through the driver, and CUPTI sees it. See the
//! [callback API](https://docs.nvidia.com/cupti/api/group__CUPTI__CALLBACK__API.html).

use std::ffi::c_void;
use std::sync::Mutex;

use cudarc::cupti::{result, sys};

use crate::GpuError;

/// One stream created or about to be destroyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamEvent {
    pub created: bool,
    /// The stream handle, to pair a creation with its destruction.
    pub stream: u64,
    /// The kernel thread id of the host thread that created or destroyed it.
    pub thread: i64,
}

/// The calling host thread's kernel thread id, as [`StreamEvent::thread`] records it.
pub fn thread_id() -> i64 {
    // SAFETY: gettid has no preconditions.
    i64::from(unsafe { libc::gettid() })
}

/// A CUPTI subscriber recording stream creations and destructions until dropped.
pub struct StreamTracker {
    subscriber: sys::CUpti_SubscriberHandle,
    // Boxed so the address handed to CUPTI as user data stays put.
    events: Box<Mutex<Vec<StreamEvent>>>,
}

// SAFETY: the subscriber handle is only used to unsubscribe, which CUPTI allows from any thread;
// the events are behind a mutex.
unsafe impl Send for StreamTracker {}
// SAFETY: shared references only read the events, behind their mutex; the subscriber handle is
// touched by `Drop` alone, which needs the tracker by value.
unsafe impl Sync for StreamTracker {}

fn cupti(call: &'static str) -> impl FnOnce(result::CuptiError) -> GpuError {
    move |e| GpuError::Cupti(format!("{call}: {e:?}"))
}

unsafe extern "C" fn on_resource(
    userdata: *mut c_void,
    domain: sys::CUpti_CallbackDomain,
    cbid: u32,
    cbdata: *const c_void,
) {
    use sys::CUpti_CallbackIdResource as Id;
    if domain != sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE || userdata.is_null() || cbdata.is_null() {
        return;
    }
    let created = match cbid {
        x if x == Id::CUPTI_CBID_RESOURCE_STREAM_CREATED as u32 => true,
        x if x == Id::CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING as u32 => false,
        _ => return,
    };
    // SAFETY: for resource callbacks CUPTI passes a CUpti_ResourceData; userdata is the boxed
    // mutex of the StreamTracker that subscribed, alive until it unsubscribes.
    let (data, events) = unsafe {
        (
            &*(cbdata as *const sys::CUpti_ResourceData),
            &*(userdata as *const Mutex<Vec<StreamEvent>>),
        )
    };
    let event = StreamEvent {
        created,
        stream: data.resourceHandle.bindgen_union_field,
        thread: thread_id(),
    };
    events.lock().unwrap_or_else(|p| p.into_inner()).push(event);
}

impl StreamTracker {
    /// Subscribes to stream creation and destruction. Fails, without side effects, where
    /// libcupti cannot be loaded: the caller records 'not measured'.
    pub fn start() -> Result<StreamTracker, GpuError> {
        crate::toolkit::preload("cupti");
        // SAFETY: only tries to open the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuError::Cupti(
                "libcupti could not be loaded (looked in the CUDA toolkit folders and the loader path)".into(),
            ));
        }
        let events: Box<Mutex<Vec<StreamEvent>>> = Box::default();
        let mut subscriber = std::ptr::null_mut();
        let userdata = &*events as *const Mutex<Vec<StreamEvent>> as *mut c_void;
        // SAFETY: `on_resource` matches CUpti_CallbackFunc; `userdata` outlives the subscription
        // (it is dropped after `unsubscribe` in Drop).
        unsafe {
            result::subscribe(&mut subscriber, Some(on_resource), userdata).map_err(cupti("cuptiSubscribe"))?;
            let tracker = StreamTracker { subscriber, events };
            let domain = sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE;
            for id in [
                sys::CUpti_CallbackIdResource::CUPTI_CBID_RESOURCE_STREAM_CREATED,
                sys::CUpti_CallbackIdResource::CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING,
            ] {
                result::enable_callback(1, subscriber, domain, id as u32).map_err(cupti("cuptiEnableCallback"))?;
            }
            Ok(tracker)
        }
    }

    /// The events so far, in order.
    pub fn events(&self) -> Vec<StreamEvent> {
        self.events_since(0)
    }

    /// The events from the `from`th on, in order: what happened since [`StreamTracker::count`]
    /// said `from` (a probe that measures several scenarios marks where each begins).
    pub fn events_since(&self, from: usize) -> Vec<StreamEvent> {
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        events.get(from..).unwrap_or_default().to_vec()
    }

    /// How many events there have been so far.
    pub fn count(&self) -> usize {
        self.events.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Drop for StreamTracker {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuptiSubscribe and is unsubscribed once.
        let _ = unsafe { result::unsubscribe(self.subscriber) };
    }
}
