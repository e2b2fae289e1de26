//! What each thread recorded, as the writer keeps it: the writer reads every thread's feed
//! (`feed.rs`, where the caller's thread appends its calls) and groups the calls into sites per
//! thread, here, off the call path. Its sites are searched in order until there are many; only
//! then is a map built, with a fixed hasher. Whether a thread has ended is read from
//! `/proc/self/task` (a thread-local destructor on the call path would cost the thread's first
//! call an allocation and the loader's lock); an ended thread's chunk goes back to the pool. The
//! streams created and destroyed on each thread come through its feed too: each pass hands them
//! to the stream registry (`streams.rs`), kept here under the same lock, the writer's alone.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::BuildHasherDefault;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use nppbench_npp_sys::NppStatus;

use crate::recorder::feed::{self, CallEvent, Cursor, Event, Feed};
use crate::writer::site::{SiteKey, SiteStats};
use crate::writer::streams::{self, Registry, StreamEvent, StreamRec};
use crate::writer::sync::lock_until;

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
    /// The most one call's recording took on this thread, ns.
    pub(crate) max_overhead_ns: u64,
    /// Calls that asked the driver for their stream's flags.
    pub(crate) flags_asked: u64,
    pub(crate) exited: bool,
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
            max_overhead_ns: 0,
            flags_asked: 0,
            exited: false,
            created_pending: Vec::new(),
        }
    }

    /// Takes in one event of the thread's feed: a stream's creation or destruction goes to the
    /// pass's stream events; a stream created during a call waits for the call's record, which
    /// names its site.
    fn take(&mut self, event: Event, pass: &mut streams::Pass) {
        match event {
            Event::Created {
                handle,
                ns,
                symbol,
                stack,
            } => {
                if symbol.is_some() {
                    self.created_pending.push(handle);
                }
                pass.events.push(StreamEvent::Created(StreamRec {
                    handle,
                    tid: self.tid,
                    created_ns: ns,
                    destroyed_ns: None,
                    site: None,
                    in_call: symbol,
                    stack,
                    named: None,
                }));
            }
            Event::Destroyed { handle, ns } => pass.events.push(StreamEvent::Destroyed { handle, ns }),
            Event::Call(call) => {
                let key = SiteKey::of(&call);
                self.add(key, call.start_ns, call.in_npp_ns, call.status);
                self.sites[self.last].1.count_pending(call.bits);
                self.add_overhead(u64::from(call.overhead_ns));
                self.flags_asked += u64::from(call.bits & CallEvent::FLAGS_ASKED != 0);
                pass.attach
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
        self.max_overhead_ns = self.max_overhead_ns.max(ns);
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

/// What the writer has read.
struct Reading {
    /// Every feed the writer has seen, in the order they were made.
    tracked: Vec<Tracked>,
    streams: Option<Registry>,
}

/// The writer's and the exit path's (with a deadline); no caller's thread takes this lock.
static READING: Mutex<Reading> = Mutex::new(Reading {
    tracked: Vec::new(),
    streams: None,
});

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

/// Reads every thread's feed to its last published record, then calls `f` on each thread's data,
/// with a thread that has ended marked exited (its chunk given back); the streams created and
/// destroyed go to the registry. `false` where another pass held the threads past `deadline`
/// (the exit path waits no longer): then nothing was read.
pub(crate) fn each_thread(deadline: Instant, f: impl FnMut(&mut ThreadData)) -> bool {
    let Some(mut reading) = lock_until(&READING, deadline) else {
        return false;
    };
    read(&mut reading, f);
    true
}

/// Runs `f` on the stream registry as the last pass over the feeds left it (so that a snapshot's
/// streams and calls come from the same pass); `None` where another pass held it past
/// `deadline`.
pub(crate) fn with_streams<R>(deadline: Instant, f: impl FnOnce(&mut Registry) -> R) -> Option<R> {
    let mut reading = lock_until(&READING, deadline)?;
    Some(f(reading.streams.get_or_insert_with(Registry::default)))
}

fn read(reading: &mut MutexGuard<'_, Reading>, mut f: impl FnMut(&mut ThreadData)) {
    let Reading { tracked, streams } = &mut **reading;
    let mut pass = streams::Pass::default();
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
        cursor.read(|e| data.take(e, &mut pass));
        if ended_now {
            t.data.exited = true;
            t.cursor.retire();
        }
        f(&mut t.data);
    }
    streams.get_or_insert_with(Registry::default).apply(pass);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::site::SiteKey;
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
        t.add(key(8), 30, 1, 0);
        t.add_overhead(950);
        assert_eq!(t.max_overhead_ns, 950, "the costliest call");
    }

    /// A call event at `key(width)` (through a real site's packing).
    fn call(width: i32, start_ns: u64) -> CallEvent {
        let ctx = nppbench_npp_sys::NppStreamContext::zeroed();
        let site = crate::recorder::site::Site {
            symbol: 0,
            roi: nppbench_npp_sys::NppiSize { width, height: 1 },
            src_step: Some(width),
            dst_step: None,
            ctx: &ctx,
            images: None,
        };
        crate::recorder::site::event(&site, None, false, None, start_ns, 1, 0)
    }

    #[test]
    fn a_threads_feed_is_read_into_its_sites_with_its_streams_and_its_end() {
        feed::refill();
        let tid = std::thread::spawn(|| {
            for (i, width) in [8, 8, 9].into_iter().enumerate() {
                let c = feed::enter(0).unwrap();
                if width == 9 {
                    crate::recorder::cupti::on_created(0x77_0001);
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
        let site = with_streams(Instant::now() + Duration::from_secs(1), |r| {
            let rec = r.live.get(&0x77_0001).expect("the stream, from the thread's feed");
            assert_eq!((rec.tid, rec.in_call), (tid, None));
            (rec.site, r.per_site.get(&key(9)).copied())
        });
        assert_eq!(
            site,
            Some((Some(key(9)), Some((1, 0)))),
            "attributed to the call it was created in"
        );
    }
}
