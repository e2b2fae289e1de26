//! Per-thread recording: each host thread counts its calls in data of its own, behind a mutex
//! only it and the writer take.
//!
//! Registering a thread is kept off its calls where it can be, and small where it cannot: the
//! writer keeps [`SPARE`] thread data allocated and registered ahead, in a lock-free queue
//! (crossbeam's `Injector`), and a thread takes one at its first stream creation (a CUPTI
//! callback, `streams.rs`) or else just before its first NPP call, hinting the lines it will
//! write. So no allocation (glibc gives a new thread's first allocation an arena of its own), no
//! lock shared by all threads, and no thread-local with a destructor (whether a thread has ended
//! is read by the writer from `/proc/self/task`). Only when the spares run out (more new threads
//! in one writer tick than it keeps) does a thread allocate and register its own under the
//! registry's lock. Its sites are searched in order until there are many; only then is a map
//! built, with a fixed hasher (std's random one would ask the kernel for keys on every new
//! thread).

use std::cell::Cell;
use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal};
use nppbench_npp::sys::NppStatus;

use crate::site::{SiteKey, SiteStats};

/// What one thread recorded.
#[derive(Debug)]
pub(crate) struct ThreadData {
    pub(crate) tid: i64,
    pub(crate) first_ns: u64,
    pub(crate) last_ns: u64,
    pub(crate) calls: u64,
    /// The site of the thread's first call.
    pub(crate) first_site: Option<SiteKey>,
    pub(crate) sites: Vec<(SiteKey, SiteStats)>,
    /// Built once there are more than [`SEARCHED_IN_ORDER`] sites.
    index: HashMap<SiteKey, usize, BuildHasherDefault<DefaultHasher>>,
    /// The site of the previous call: most calls repeat it.
    last: usize,
    /// Recording time on this thread, ns, and the part of it spent on its first call.
    pub(crate) overhead_ns: u64,
    pub(crate) first_call_overhead_ns: u64,
    /// Calls that asked the driver for their stream's flags.
    pub(crate) flags_asked: u64,
    pub(crate) exited: bool,
    /// Streams created during this thread's catalogued calls, with the call's site, until the
    /// writer takes them in its pass over the threads and attributes them (`streams::attach`).
    pub(crate) created_in_calls: Vec<(u64, SiteKey)>,
}

impl ThreadData {
    fn new(tid: i64) -> ThreadData {
        let mut data = ThreadData {
            tid,
            first_ns: 0,
            last_ns: 0,
            calls: 0,
            first_site: None,
            sites: Vec::with_capacity(SITES_AHEAD),
            index: HashMap::default(),
            last: 0,
            overhead_ns: 0,
            first_call_overhead_ns: 0,
            flags_asked: 0,
            exited: false,
            created_in_calls: Vec::with_capacity(SITES_AHEAD),
        };
        // Written once here, by the writer that keeps spares, so that the thread that takes
        // them does not take the page faults of memory never touched.
        data.sites
            .spare_capacity_mut()
            .iter_mut()
            .for_each(|s| *s = std::mem::MaybeUninit::zeroed());
        data.created_in_calls
            .spare_capacity_mut()
            .iter_mut()
            .for_each(|s| *s = std::mem::MaybeUninit::zeroed());
        data
    }

    /// Counts one call at `key`; returns where its site's counts are (for [`prefetch_own`]).
    #[inline]
    pub(crate) fn add(&mut self, key: SiteKey, start_ns: u64, in_npp_ns: u64, status: NppStatus) -> *const u8 {
        let i = match self.sites.get(self.last) {
            Some((k, _)) if *k == key => self.last,
            _ => self.find_or_insert(key, start_ns),
        };
        self.last = i;
        self.sites[i].1.add(start_ns, in_npp_ns, status);
        if self.calls == 0 {
            self.first_ns = start_ns;
            self.first_site = Some(key);
        }
        self.calls += 1;
        self.last_ns = start_ns;
        (&raw const self.sites[i]).cast()
    }

    /// Adds the recording time of a call just counted.
    #[inline]
    pub(crate) fn add_overhead(&mut self, ns: u64) {
        if self.calls == 1 {
            self.first_call_overhead_ns = ns;
        }
        self.overhead_ns += ns;
    }

    /// A call at another site than the last one's: kept out of line, so that the common call's
    /// code stays small (a cold call pays for every line of code it runs).
    #[cold]
    #[inline(never)]
    fn find_or_insert(&mut self, key: SiteKey, start_ns: u64) -> usize {
        match self.find(&key) {
            Some(i) => i,
            None => self.insert(key, start_ns),
        }
    }

    fn find(&self, key: &SiteKey) -> Option<usize> {
        if self.index.is_empty() {
            self.sites.iter().position(|(k, _)| k == key)
        } else {
            self.index.get(key).copied()
        }
    }

    fn insert(&mut self, key: SiteKey, start_ns: u64) -> usize {
        let i = self.sites.len();
        self.sites.push((key, SiteStats::new(start_ns)));
        if self.sites.len() > SEARCHED_IN_ORDER {
            if self.index.is_empty() {
                self.index = self.sites.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
            } else {
                self.index.insert(key, i);
            }
        }
        i
    }
}

/// Room for sites a thread's data is given ahead (most threads call one or two).
const SITES_AHEAD: usize = 4;

/// Sites a thread searches in order before it builds a map.
const SEARCHED_IN_ORDER: usize = 8;

/// Locks `m`, recovering a poisoned lock (the data is counts: still meaningful).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks `m` unless it stays held past `deadline` (the exit path must not wait on a thread
/// interrupted while holding its own lock).
pub(crate) fn lock_until<T>(m: &Mutex<T>, deadline: Instant) -> Option<MutexGuard<'_, T>> {
    loop {
        match m.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) if Instant::now() >= deadline => return None,
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_micros(200)),
        }
    }
}

type Shared = Arc<Mutex<ThreadData>>;

/// Every thread that recorded, in the order they first did.
static THREADS: Mutex<Vec<Shared>> = Mutex::new(Vec::new());

thread_local! {
    /// The calling thread's id, once asked (0: not yet).
    static TID: Cell<i64> = const { Cell::new(0) };
}

/// The kernel's id of the calling thread (`gettid`, asked once per thread).
pub(crate) fn tid() -> i64 {
    let cached = TID.try_with(Cell::get).unwrap_or(0);
    if cached != 0 {
        return cached;
    }
    // SAFETY: gettid has no preconditions.
    let tid = i64::from(unsafe { libc::gettid() });
    let _ = TID.try_with(|c| c.set(tid));
    tid
}

/// Thread data the writer keeps allocated and registered for threads to come.
pub(crate) const SPARE: usize = 256;

/// Registered data no thread has claimed yet (tid 0), with the addresses of its buffers, so
/// that the thread that takes it can hint them without reading the data first.
struct Spare {
    data: Shared,
    buffers: [usize; 2],
}

impl Spare {
    fn new() -> Spare {
        let data = ThreadData::new(0);
        let buffers = [data.sites.as_ptr() as usize, data.created_in_calls.as_ptr() as usize];
        Spare {
            data: Arc::new(Mutex::new(data)),
            buffers,
        }
    }
}

static SPARES: LazyLock<Injector<Spare>> = LazyLock::new(Injector::new);

/// Tops the spares up to [`SPARE`]: the writer calls it at start and at every tick.
pub(crate) fn refill_spares() {
    let missing = SPARE.saturating_sub(SPARES.len());
    if missing == 0 {
        return;
    }
    let fresh: Vec<Spare> = (0..missing).map(|_| Spare::new()).collect();
    lock(&THREADS).extend(fresh.iter().map(|s| Arc::clone(&s.data)));
    for spare in fresh {
        SPARES.push(spare);
    }
}

/// Registered data for the calling thread: a spare where one is left (its lines hinted), else
/// its own. The pointer comes from `Arc::into_raw` of a reference the registry (`THREADS`) also
/// holds: it stays valid for the process's life (the reference it stands for is never dropped,
/// so no count changes on the call path). The tid is set under the lock taken after NPP's call.
fn register() -> *const Mutex<ThreadData> {
    loop {
        match SPARES.steal() {
            Steal::Success(spare) => {
                let p = Arc::into_raw(spare.data);
                crate::prefetch::lines_to_write(p.cast(), std::mem::size_of::<Mutex<ThreadData>>());
                crate::prefetch::lines_to_write(
                    spare.buffers[0] as *const u8,
                    std::mem::size_of::<(SiteKey, SiteStats)>(),
                );
                crate::prefetch::lines_to_write(spare.buffers[1] as *const u8, 64);
                return p;
            }
            Steal::Retry => continue,
            Steal::Empty => break,
        }
    }
    let data = Arc::new(Mutex::new(ThreadData::new(0)));
    lock(&THREADS).push(Arc::clone(&data));
    Arc::into_raw(data)
}

thread_local! {
    /// The calling thread's data (null: not yet registered). A plain pointer, not the `Arc`:
    /// a thread-local with a destructor would register it at the thread's first call
    /// (`__cxa_thread_atexit_impl`, which allocates and takes the loader's lock). The registry
    /// holds every thread's `Arc` for the life of the process, so the pointer stays valid.
    static LOCAL: Cell<*const Mutex<ThreadData>> = const { Cell::new(std::ptr::null()) };
    /// Where the thread's last call counted (its site in its data), for [`prefetch_own`].
    static LAST_SITE: Cell<*const u8> = const { Cell::new(std::ptr::null()) };
}

/// Remembers where the thread's last call counted.
#[inline]
pub(crate) fn remember_site(p: *const u8) {
    let _ = LAST_SITE.try_with(|l| l.set(p));
}

/// The data `local` names, registered first where it names none.
fn registered(local: &Cell<*const Mutex<ThreadData>>) -> *const Mutex<ThreadData> {
    if local.get().is_null() {
        local.set(register());
    }
    local.get()
}

/// Registers the calling thread ahead of its first NPP call (a stream it creates outside a call
/// does, from CUPTI's callback): that call then finds its data, and its lines. Nothing for a
/// thread already registered.
pub(crate) fn register_early() {
    let _ = LOCAL.try_with(registered);
}

/// Before NPP's call: registers a new thread (taking a spare, whose lines it hints), or hints
/// the lines of a registered thread's data and last site, so that they load while NPP runs
/// (`with_thread` and `add` touch them after it).
#[inline]
pub(crate) fn prefetch_own() {
    let _ = LOCAL.try_with(|l| {
        let p = l.get();
        if p.is_null() {
            l.set(register());
        } else {
            crate::prefetch::lines_to_write(p.cast(), std::mem::size_of::<Mutex<ThreadData>>());
            let _ = LAST_SITE.try_with(|s| {
                crate::prefetch::lines_to_write(s.get(), std::mem::size_of::<(SiteKey, SiteStats)>());
            });
        }
    });
}

/// Runs `f` on the calling thread's data. A thread whose thread-local storage is already torn
/// down (a call from another destructor at thread exit) gets data of its own for the call.
#[inline]
pub(crate) fn with_thread<R>(f: impl FnOnce(&mut ThreadData) -> R) -> R {
    match LOCAL.try_with(registered) {
        Ok(p) => {
            // SAFETY: the pointer came from `register`: data the registry (`THREADS`) keeps for
            // the life of the process; only this thread and the writer lock it.
            let mut g = lock(unsafe { &*p });
            if g.tid == 0 {
                g.tid = tid();
            }
            f(&mut g)
        }
        Err(_) => {
            // SAFETY: as above.
            let mut g = lock(unsafe { &*register() });
            g.tid = tid();
            g.exited = true;
            f(&mut g)
        }
    }
}

/// Whether the thread `tid` of this process has ended (`/proc/self/task/TID` is gone). A thread
/// id the kernel has given to a newer thread reads as alive: the writer marks a thread exited
/// the first time it finds it gone, and never asks again.
fn ended(tid: i64) -> bool {
    !std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

/// Calls `f` on every thread's data (the writer's one pass: it takes the streams a thread's calls
/// created), waiting for a busy one until `deadline`, with a thread that has ended marked exited;
/// returns how many were skipped.
pub(crate) fn each_thread(deadline: Instant, mut f: impl FnMut(&mut ThreadData)) -> usize {
    let Some(all) = lock_until(&THREADS, deadline) else {
        return usize::MAX;
    };
    let all: Vec<Shared> = all.clone();
    let mut skipped = 0;
    for t in &all {
        match lock_until(t, deadline) {
            // A spare no thread has claimed.
            Some(g) if g.tid == 0 => {}
            Some(mut g) => {
                if !g.exited && ended(g.tid) {
                    g.exited = true;
                }
                f(&mut g)
            }
            None => skipped += 1,
        }
    }
    skipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::SiteKey;
    use nppbench_model::TraceStreamKind;

    fn key(width: i32) -> SiteKey {
        SiteKey {
            symbol: 0,
            width,
            height: 1,
            src_stride: Some(width),
            dst_stride: None,
            declared_flags: 0,
            stream: TraceStreamKind::LegacyDefault,
            real_flags: None,
            device: 0,
        }
    }

    #[test]
    fn calls_are_counted_per_site_with_the_first_site_kept() {
        let mut t = ThreadData::new(7);
        t.add(key(8), 10, 1, 0);
        t.add(key(8), 20, 1, 0);
        t.add(key(9), 30, 1, -6);
        t.add(key(8), 40, 1, 0);
        assert_eq!(t.calls, 4);
        assert_eq!((t.first_ns, t.last_ns), (10, 40));
        assert_eq!(t.first_site, Some(key(8)));
        let counts: Vec<(i32, u64)> = t.sites.iter().map(|(k, s)| (k.width, s.calls)).collect();
        assert_eq!(counts, [(8, 3), (9, 1)]);
    }

    #[test]
    fn many_sites_are_found_through_the_map_built_past_the_first_few() {
        let mut t = ThreadData::new(7);
        let n = SEARCHED_IN_ORDER as i32 * 3;
        for round in 0..2 {
            for w in 0..n {
                t.add(key(w), 10, 1, 0);
                assert_eq!(t.index.is_empty(), round == 0 && w < SEARCHED_IN_ORDER as i32, "{w}");
            }
        }
        assert_eq!(t.sites.len(), n as usize);
        assert!(t.sites.iter().all(|(_, s)| s.calls == 2));
    }

    #[test]
    fn the_first_calls_recording_is_kept_apart() {
        let mut t = ThreadData::new(7);
        t.add(key(8), 10, 1, 0);
        t.add_overhead(900);
        t.add(key(8), 20, 1, 0);
        t.add_overhead(100);
        assert_eq!((t.first_call_overhead_ns, t.overhead_ns), (900, 1000));
    }

    #[test]
    fn a_new_thread_takes_a_registered_spare_and_unclaimed_spares_are_not_threads() {
        refill_spares();
        let before = SPARES.len();
        assert!(before > 0);
        let tid = std::thread::spawn(|| with_thread(|t| t.tid)).join().unwrap();
        assert!(tid > 0);
        assert!(SPARES.len() < before, "the thread took a spare");
        let mut tids = Vec::new();
        each_thread(Instant::now() + Duration::from_secs(1), |t| tids.push(t.tid));
        assert!(tids.contains(&tid));
        assert!(!tids.contains(&0), "no unclaimed spare is reported as a thread");
    }

    #[test]
    fn each_thread_sees_a_thread_that_exited() {
        let tid = std::thread::spawn(|| with_thread(|t| t.tid)).join().unwrap();
        // Looked at again while the kernel may have given its id to another test's thread
        // (tests run in parallel): such a thread ends too, and a thread once marked stays so.
        let mut seen = None;
        for _ in 0..200 {
            each_thread(Instant::now() + Duration::from_secs(1), |t| {
                if t.tid == tid {
                    seen = Some(t.exited);
                }
            });
            if seen == Some(true) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(seen, Some(true));
    }
}
