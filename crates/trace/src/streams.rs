//! Every CUDA stream created or destroyed in the process, from CUPTI's callback API (resource
//! domain), each attributed to the catalogued call it was created in or, outside one, to the NPP
//! function its creating stack names. See
//! [the callback API](https://docs.nvidia.com/cupti/api/group__CUPTI__CALLBACK__API.html).
//!
//! Stream events are rare next to calls: one global mutex holds them.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use cudarc::cupti::{result, sys};

use crate::clock;
use crate::protocol::DESTROYED_STREAMS_LISTED;
use crate::site::SiteKey;
use crate::symbolise;
use crate::thread::{lock, tid};

/// One stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamRec {
    pub(crate) handle: u64,
    pub(crate) tid: i64,
    pub(crate) created_ns: u64,
    pub(crate) destroyed_ns: Option<u64>,
    /// The catalogued call it was created in, once that call returned.
    pub(crate) site: Option<SiteKey>,
    /// Outside a catalogued call (or in one that has not returned): the NPP function named.
    pub(crate) function: Option<String>,
    pub(crate) library: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Registry {
    pub(crate) live: HashMap<u64, StreamRec>,
    /// Destroyed streams, oldest first, at most [`DESTROYED_STREAMS_LISTED`].
    pub(crate) gone: VecDeque<StreamRec>,
    pub(crate) not_listed: u64,
    /// Streams created and destroyed per call site.
    pub(crate) per_site: HashMap<SiteKey, (u64, u64)>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

/// Streams destroyed so far: a handle cached before may now name another stream.
static DESTROYED: AtomicU64 = AtomicU64::new(0);

pub(crate) fn destroyed() -> u64 {
    DESTROYED.load(Ordering::Relaxed)
}

thread_local! {
    /// The catalogued call the thread is in: its symbol index + 1, 0 outside.
    static IN_CALL: Cell<u32> = const { Cell::new(0) };
    /// Streams created during the current call.
    static CREATED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Marks the thread as inside `symbol`'s call. `false` where it already is: NPP calling one of
/// its own exported functions, which is not the program's call.
#[inline]
pub(crate) fn enter_call(symbol: u16) -> bool {
    IN_CALL
        .try_with(|c| {
            let outer = c.get() == 0;
            if outer {
                c.set(u32::from(symbol) + 1);
            }
            outer
        })
        .unwrap_or(true)
}

#[inline]
pub(crate) fn leave_call() {
    let _ = IN_CALL.try_with(|c| c.set(0));
}

/// Attributes the streams created during the call that just returned to its site.
#[inline]
pub(crate) fn attach_created(key: SiteKey) {
    let created = CREATED
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            (!c.is_empty()).then(|| std::mem::take(&mut *c))
        })
        .ok()
        .flatten();
    let Some(created) = created else { return };
    let mut r = lock(&REGISTRY);
    for handle in created {
        let destroyed = {
            let rec = match r.live.get_mut(&handle) {
                Some(rec) => Some(rec),
                None => r.gone.iter_mut().rev().find(|s| s.handle == handle),
            };
            let Some(rec) = rec else { continue };
            rec.site = Some(key);
            rec.function = None;
            rec.destroyed_ns.is_some()
        };
        let counts = r.per_site.entry(key).or_default();
        counts.0 += 1;
        counts.1 += u64::from(destroyed);
    }
}

fn on_created(handle: u64) {
    let now = clock::now_ns();
    let in_call = IN_CALL.try_with(Cell::get).unwrap_or(0);
    let (function, library) = if in_call > 0 {
        let _ = CREATED.try_with(|c| c.try_borrow_mut().map(|mut c| c.push(handle)));
        let name = crate::SYMBOLS.get(in_call as usize - 1).map(|s| (*s).to_owned());
        (name, None)
    } else {
        match symbolise::npp_on_stack() {
            Some((f, l)) => (Some(f), Some(l)),
            None => (None, None),
        }
    };
    let rec = StreamRec {
        handle,
        tid: tid(),
        created_ns: now,
        destroyed_ns: None,
        site: None,
        function,
        library,
    };
    let mut r = lock(&REGISTRY);
    if let Some(old) = r.live.insert(handle, rec) {
        // A handle created again without a destruction seen: keep the old one listed.
        push_gone(&mut r, old);
    }
}

fn on_destroyed(handle: u64) {
    let now = clock::now_ns();
    DESTROYED.fetch_add(1, Ordering::Relaxed);
    let mut r = lock(&REGISTRY);
    let Some(mut rec) = r.live.remove(&handle) else { return };
    rec.destroyed_ns = Some(now);
    if let Some(key) = rec.site {
        r.per_site.entry(key).or_default().1 += 1;
    }
    push_gone(&mut r, rec);
}

fn push_gone(r: &mut Registry, rec: StreamRec) {
    r.gone.push_back(rec);
    if r.gone.len() > DESTROYED_STREAMS_LISTED {
        r.gone.pop_front();
        r.not_listed += 1;
    }
}

/// Runs `f` on the registry (the writer's view).
pub(crate) fn with_registry<R>(f: impl FnOnce(&Registry) -> R) -> R {
    f(&lock(&REGISTRY))
}

unsafe extern "C" fn on_resource(
    _userdata: *mut c_void,
    domain: sys::CUpti_CallbackDomain,
    cbid: u32,
    cbdata: *const c_void,
) {
    use sys::CUpti_CallbackIdResource as Id;
    if domain != sys::CUpti_CallbackDomain::CUPTI_CB_DOMAIN_RESOURCE || cbdata.is_null() {
        return;
    }
    let created = match cbid {
        x if x == Id::CUPTI_CBID_RESOURCE_STREAM_CREATED as u32 => true,
        x if x == Id::CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING as u32 => false,
        _ => return,
    };
    // SAFETY: for resource callbacks CUPTI passes a CUpti_ResourceData, valid during the call.
    let handle = unsafe {
        (*(cbdata as *const sys::CUpti_ResourceData))
            .resourceHandle
            .bindgen_union_field
    };
    // Never unwind into CUPTI.
    let _ = std::panic::catch_unwind(|| {
        if created {
            on_created(handle);
        } else {
            on_destroyed(handle);
        }
    });
}

/// Opens libcupti by full path from the CUDA toolkit folders, so that cudarc's open by name
/// finds it mapped (a toolkit outside the loader's path is otherwise not found).
fn preload_cupti() {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            dirs.push(std::path::PathBuf::from(home).join("extras/CUPTI/lib64"));
        }
    }
    dirs.push("/usr/local/cuda/extras/CUPTI/lib64".into());
    for dir in dirs {
        for file in ["libcupti.so.13", "libcupti.so.12", "libcupti.so"] {
            let Ok(path) = std::ffi::CString::new(dir.join(file).into_os_string().into_encoded_bytes()) else {
                continue;
            };
            // SAFETY: opening CUPTI runs only its own initialisers; the handle stays open for the
            // process's life.
            if !unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) }.is_null() {
                return;
            }
        }
    }
}

/// Subscribes to stream creation and destruction for the process's life. The error says why
/// streams cannot be counted.
pub(crate) fn subscribe() -> Result<(), String> {
    symbolise::prime();
    preload_cupti();
    // SAFETY: only tries to open the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("libcupti could not be loaded (looked in $CUDA_HOME, $CUDA_PATH, \
                    /usr/local/cuda/extras/CUPTI/lib64 and the loader's path)"
            .into());
    }
    let mut subscriber = std::ptr::null_mut();
    // SAFETY: `on_resource` matches CUpti_CallbackFunc and needs no user data; the subscription
    // is kept for the process's life.
    unsafe {
        result::subscribe(&mut subscriber, Some(on_resource), std::ptr::null_mut()).map_err(|e| {
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
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nppbench_model::TraceStreamKind;

    fn key() -> SiteKey {
        SiteKey {
            symbol: 1,
            width: 64,
            height: 32,
            src_stride: Some(64),
            dst_stride: Some(256),
            declared_flags: 1,
            stream: TraceStreamKind::Created,
            real_flags: Some(1),
            device: 0,
        }
    }

    #[test]
    fn a_stream_created_in_a_call_counts_at_its_site_and_its_destruction_too() {
        assert!(enter_call(1), "not inside a call");
        assert!(!enter_call(2), "a nested call is not the program's");
        on_created(0xdead_0001);
        on_created(0xdead_0002);
        on_destroyed(0xdead_0002);
        leave_call();
        attach_created(key());
        on_destroyed(0xdead_0001);
        with_registry(|r| {
            assert_eq!(r.per_site[&key()], (2, 2));
            let mine: Vec<_> = r.gone.iter().filter(|s| s.handle >> 16 == 0xdead).collect();
            assert_eq!(mine.len(), 2);
            assert!(mine.iter().all(|s| s.site == Some(key()) && s.function.is_none()));
        });
        // Outside a call: no site, and no NPP frame on this test's stack.
        on_created(0xbeef_0001);
        with_registry(|r| {
            let s = &r.live[&0xbeef_0001];
            assert_eq!((s.site, &s.function, s.tid), (None, &None, tid()));
        });
    }
}
