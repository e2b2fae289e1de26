//! What each thread recorded, as the writer keeps it: the writer reads every thread's feed
//! (`feed.rs`, where the caller's thread appends its calls) and groups the calls into sites per
//! thread, here, off the call path. Its sites are searched in order until there are many; only
//! then is a map built, with a fixed hasher. Whether a thread has ended is read from
//! `/proc/self/task` (a thread-local destructor on the call path would cost the thread's first
//! call an allocation and the loader's lock); an ended thread's chunk goes back to the pool.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::BuildHasherDefault;
use std::sync::Mutex;
use std::time::Instant;

use nppbench_npp_sys::NppStatus;

use crate::feed::{self, CallEvent, Cursor, Event, Feed};
use crate::site::{SiteKey, SiteStats};
use crate::sync::lock_until;

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
    /// snapshot takes them and attributes them (`streams::attach`).
    pub(crate) created_in_calls: Vec<(u64, SiteKey)>,
    /// Streams created during a call whose record has not been read yet.
    created_pending: Vec<u64>,
}

impl ThreadData {
    fn new(tid: i64) -> ThreadData {
        ThreadData {
            tid,
            first_ns: 0,
            last_ns: 0,
            calls: 0,
            first_site: None,
            sites: Vec::new(),
            index: HashMap::default(),
            last: 0,
            overhead_ns: 0,
            first_call_overhead_ns: 0,
            flags_asked: 0,
            exited: false,
            created_in_calls: Vec::new(),
            created_pending: Vec::new(),
        }
    }

    /// Takes in one event of the thread's feed: a stream created during a call waits for the
    /// call's record, which names its site.
    fn take(&mut self, event: Event) {
        match event {
            Event::Created { handle, .. } => self.created_pending.push(handle),
            Event::Call(call) => {
                let key = SiteKey::of(&call);
                self.add(key, call.start_ns, call.in_npp_ns, call.status);
                self.sites[self.last].1.count_pending(call.bits);
                self.add_overhead(u64::from(call.overhead_ns));
                self.flags_asked += u64::from(call.bits & CallEvent::FLAGS_ASKED != 0);
                self.created_in_calls
                    .extend(self.created_pending.drain(..).map(|handle| (handle, key)));
            }
        }
    }

    /// Counts one call at `key`.
    pub(crate) fn add(&mut self, key: SiteKey, start_ns: u64, in_npp_ns: u64, status: NppStatus) {
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
    }

    /// Adds the recording time of a call just counted.
    pub(crate) fn add_overhead(&mut self, ns: u64) {
        if self.calls == 1 {
            self.first_call_overhead_ns = ns;
        }
        self.overhead_ns += ns;
    }

    /// A call at another site than the last one's.
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

/// Sites a thread searches in order before it builds a map.
const SEARCHED_IN_ORDER: usize = 8;

/// A feed, where the writer has read it to, and what it read.
struct Tracked {
    feed: &'static Feed,
    cursor: Cursor,
    data: ThreadData,
}

/// Every feed the writer has seen, in the order they were made (the writer's and the exit
/// path's; no caller's thread takes this lock).
static TRACKED: Mutex<Vec<Tracked>> = Mutex::new(Vec::new());

/// Whether the thread `tid` of this process has ended (`/proc/self/task/TID` is gone). A thread
/// id the kernel has given to a newer thread reads as alive: the writer marks a thread exited
/// the first time it finds it gone, and never asks again.
fn ended(tid: i64) -> bool {
    !std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

/// Whether `/proc` tells this process's threads apart: it lists the calling thread, alive by
/// definition. Where it does not (no `/proc`, or another PID namespace's), no thread is taken
/// for ended: its chunk would go back to the pool while the thread may still write it.
fn proc_lists_threads() -> bool {
    !ended(feed::tid())
}

/// Reads every thread's feed to its last published record, then calls `f` on each thread's data
/// (the writer's one pass: it takes the streams a thread's calls created), with a thread that has
/// ended marked exited (its chunk given back). `false` where another pass held the threads past
/// `deadline` (the exit path waits no longer): then nothing was read.
pub(crate) fn each_thread(deadline: Instant, mut f: impl FnMut(&mut ThreadData)) -> bool {
    let Some(mut tracked) = lock_until(&TRACKED, deadline) else {
        return false;
    };
    tracked.extend(feed::new_feeds().into_iter().map(|feed| Tracked {
        feed,
        cursor: feed.cursor(),
        data: ThreadData::new(0),
    }));
    let proc_lists_threads = proc_lists_threads();
    for t in tracked.iter_mut() {
        if t.data.tid == 0 {
            // A spare no thread has taken yet.
            t.data.tid = t.feed.tid();
            if t.data.tid == 0 {
                continue;
            }
        }
        // Ended before the read: then the read sees its every record.
        let ended_now = !t.data.exited && proc_lists_threads && ended(t.data.tid);
        let Tracked { cursor, data, .. } = t;
        cursor.read(|e| data.take(e));
        if ended_now {
            t.data.exited = true;
            t.cursor.retire();
        }
        f(&mut t.data);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::SiteKey;
    use nppbench_model::TraceStreamKind;
    use std::time::Duration;

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

    /// A call event at `key(width)` (through a real site's packing).
    fn call(width: i32, start_ns: u64) -> CallEvent {
        let ctx = nppbench_npp_sys::NppStreamContext::zeroed();
        let site = crate::site::Site {
            symbol: 0,
            roi: nppbench_npp_sys::NppiSize { width, height: 1 },
            src_step: Some(width),
            dst_step: None,
            ctx: &ctx,
        };
        crate::site::event(&site, None, false, None, start_ns, 1, 0)
    }

    #[test]
    fn a_threads_feed_is_read_into_its_sites_with_its_streams_and_its_end() {
        feed::refill();
        let tid = std::thread::spawn(|| {
            for (i, width) in [8, 8, 9].into_iter().enumerate() {
                let c = feed::enter(0).unwrap();
                if width == 9 {
                    feed::created_in_call(0x77_0001);
                }
                c.leave();
                c.append(call(width, 10 * i as u64 + 10), || 5);
            }
            feed::tid()
        })
        .join()
        .unwrap();
        // Looked at until seen ended (tests run in parallel: the kernel may have given its id to
        // another test's thread meanwhile, which ends too).
        let mut seen = None;
        for _ in 0..200 {
            let mut tids = Vec::new();
            each_thread(Instant::now() + Duration::from_secs(1), |t| {
                tids.push(t.tid);
                if t.tid == tid {
                    let counts: Vec<(i32, u64)> = t.sites.iter().map(|(k, s)| (k.width, s.calls)).collect();
                    assert_eq!(counts, [(8, 2), (9, 1)]);
                    assert_eq!((t.overhead_ns, t.first_call_overhead_ns), (15, 5));
                    if seen.is_none() {
                        assert_eq!(std::mem::take(&mut t.created_in_calls), [(0x77_0001, key(9))]);
                    }
                    seen = Some(t.exited);
                }
            });
            assert!(!tids.contains(&0), "no spare is reported as a thread");
            if seen == Some(true) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(seen, Some(true));
    }
}
