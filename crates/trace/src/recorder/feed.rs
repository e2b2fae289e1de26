//! Where a thread's calls go: each thread appends fixed-size records, one cache line each, to a
//! chain of chunks of its own (its [`Feed`]), and the writer reads them and does the rest
//! (`writer/thread.rs` groups them into sites). This is bytehound's shape: the caller appends, a
//! background thread aggregates.
//!
//! A thread's records are its calls and the streams created and destroyed on it (told by CUPTI's
//! callbacks, `cupti.rs`): the stream registry is the writer's alone, built from these.
//!
//! A record is published by its tag, stored last with release ordering: the writer reads a record
//! only once its tag is set, so it never sees half a record, and a thread never waits for the
//! writer. A thread that fills a chunk links the next one (from a pool the writer keeps filled)
//! after its last record; the writer takes a chunk back into the pool only once it has read past
//! that link, or once the thread has ended. No record is ever dropped: a thread whose pool is
//! empty allocates its next chunk.
//!
//! A thread's whole state is one thread-local block (`Local`, in `local.rs`), reached once per
//! call, without a destructor (a thread-local with one would register it at the thread's first
//! call, which allocates and takes the loader's lock). A thread takes a feed the writer
//! registered ahead (a spare) at its first stream creation or else its first call, and hints the
//! lines it will write ([`crate::recorder::prefetch`]). The only memory every thread touches is the
//! spares' ring (one slot swapped, [`SPARES`]), on a thread's start, and the pool's and the new
//! feeds' lock-free queues (crossbeam's `Injector`), once per chunk; no lock is taken on a call.
//! Where the ring's next slot is empty (more new threads in one writer tick than it keeps), a
//! thread makes its feed itself, on its call.

use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU32, AtomicUsize, Ordering};

use crossbeam_deque::{Injector, Steal};

mod local;

pub(crate) use local::{InCall, confirm_offset, enter, in_call, note_offset, stream_created, stream_destroyed, tid};

/// Records in a chunk: with its link, a chunk is 64 lines (4 KiB).
pub(crate) const RECORDS: usize = 63;

/// Feeds the writer keeps registered for threads to come.
pub(crate) const SPARE: usize = 256;

/// Chunks the writer keeps in the pool. A chunk given back is kept there, never freed: a
/// program's thread may have allocated it (where the pool was empty), and freeing it on the
/// writer would take that thread's malloc arena, which a signal may have interrupted it holding
/// (the pool thus holds the most chunks ever in use at once).
const POOLED: usize = 256;

/// A record's tag: not yet published, a call, a stream created, a stream destroyed, frames of
/// the creating stack of the stream created next.
const EMPTY: u32 = 0;
const CALL: u32 = 1;
const CREATED: u32 = 2;
const DESTROYED: u32 = 3;
const FRAMES: u32 = 4;

/// A catalogued call as its thread appended it: the site's facts packed into one line (the
/// writer unpacks them into a `SiteKey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C)]
pub(crate) struct CallEvent {
    pub(crate) start_ns: u64,
    pub(crate) in_npp_ns: u64,
    pub(crate) width: i32,
    pub(crate) height: i32,
    /// Meaningful where `bits` has [`CallEvent::SRC_STEP`].
    pub(crate) src_step: i32,
    /// Meaningful where `bits` has [`CallEvent::DST_STEP`].
    pub(crate) dst_step: i32,
    pub(crate) declared_flags: u32,
    /// Meaningful where `bits` has [`CallEvent::REAL_FLAGS`].
    pub(crate) real_flags: u32,
    pub(crate) device: i32,
    pub(crate) status: i32,
    /// The recording's time, ns (saturated).
    pub(crate) overhead_ns: u32,
    pub(crate) symbol: u16,
    /// The context's stream handle where it is 0, 1 or 2, else 3 (`site::stream_kind`).
    pub(crate) stream: u8,
    pub(crate) bits: u8,
}

impl CallEvent {
    pub(crate) const SRC_STEP: u8 = 1;
    pub(crate) const DST_STEP: u8 = 2;
    pub(crate) const REAL_FLAGS: u8 = 4;
    /// The call asked the driver for its stream's flags.
    pub(crate) const FLAGS_ASKED: u8 = 8;
    /// The call could race (`site::can_race`) and the driver said whether its stream still had
    /// work queued when NPP was called; [`CallEvent::PENDING`] if it had.
    pub(crate) const PENDING_ASKED: u8 = 16;
    pub(crate) const PENDING: u8 = 32;
}

/// A stream created on the thread: during a catalogued call (appended before the call's own
/// record, which names its site), or outside one, after [`Frames`] records holding the creating
/// stack's return addresses (nothing is allocated on the program's thread: the writer, who
/// reads them, must never free a program thread's memory, `POOLED`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Created {
    handle: u64,
    ns: u64,
    /// The call's symbol, or [`OUTSIDE_CALLS`].
    symbol: u16,
}

/// Return addresses a [`Frames`] record holds.
const FRAMES_PER_RECORD: usize = 6;

/// Up to [`FRAMES_PER_RECORD`] of a creating stack's return addresses, innermost first, for the
/// [`Created`] record that follows them.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Frames {
    n: u32,
    addrs: [usize; FRAMES_PER_RECORD],
}

/// [`Created::symbol`] of a stream created outside a catalogued call.
const OUTSIDE_CALLS: u16 = u16::MAX;

/// A stream destroyed on the thread.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Destroyed {
    handle: u64,
    ns: u64,
}

#[derive(Clone, Copy)]
#[repr(C)]
union Body {
    call: CallEvent,
    created: Created,
    destroyed: Destroyed,
    frames: Frames,
}

#[repr(C, align(64))]
struct Record {
    tag: AtomicU32,
    body: UnsafeCell<Body>,
}

#[repr(C, align(64))]
struct Chunk {
    /// The chunk its thread went on to, stored after this one's last record.
    next: AtomicPtr<Chunk>,
    records: [Record; RECORDS],
}

const _: () = assert!(size_of::<Record>() == 64 && size_of::<Chunk>() == 4096);

/// A chunk, zeroed and written once (so that its pages are the writer's faults, not a thread's).
fn new_chunk() -> NonNull<Chunk> {
    let layout = Layout::new::<Chunk>();
    // SAFETY: the layout's size is not zero.
    let p = unsafe { alloc_zeroed(layout) }.cast::<Chunk>();
    let Some(p) = NonNull::new(p) else {
        handle_alloc_error(layout)
    };
    // SAFETY: `p` is a zeroed chunk (all-zero atomics and records are valid), owned here.
    let chunk = unsafe { p.as_ref() };
    for r in &chunk.records {
        r.tag.store(EMPTY, Ordering::Relaxed);
    }
    p
}

/// A chunk's pointer, owned by whoever holds it: the pool, one thread, or the writer.
struct Owned(NonNull<Chunk>);

// SAFETY: a chunk is plain memory with atomics; only its one owner writes its records.
unsafe impl Send for Owned {}

static POOL: LazyLock<Injector<Owned>> = LazyLock::new(Injector::new);

/// Takes one item from `queue`, retrying a steal another thread interrupted; `None` where it is
/// empty.
fn steal<T>(queue: &Injector<T>) -> Option<T> {
    loop {
        match queue.steal() {
            Steal::Success(item) => return Some(item),
            Steal::Retry => continue,
            Steal::Empty => return None,
        }
    }
}

fn take_chunk() -> NonNull<Chunk> {
    steal(&POOL).map_or_else(new_chunk, |c| c.0)
}

/// Gives a chunk no thread will write again back to the pool, emptied.
///
/// # Safety
///
/// `chunk` came from [`new_chunk`], and nothing else holds or will use it.
unsafe fn give_back(chunk: NonNull<Chunk>) {
    // SAFETY: as above, the chunk is allocated and this caller's alone.
    let c = unsafe { chunk.as_ref() };
    c.next.store(std::ptr::null_mut(), Ordering::Relaxed);
    for r in &c.records {
        r.tag.store(EMPTY, Ordering::Relaxed);
    }
    POOL.push(Owned(chunk));
}

/// One thread's records: registered with the writer before any thread takes it.
pub(crate) struct Feed {
    /// The kernel's id of the thread that took it; 0 while it is a spare.
    tid: AtomicI64,
    first: NonNull<Chunk>,
}

// SAFETY: `first` is only read; the chunks are handed over through the records' tags and links.
unsafe impl Send for Feed {}
// SAFETY: as above.
unsafe impl Sync for Feed {}

impl Feed {
    fn new() -> &'static Feed {
        Box::leak(Box::new(Feed {
            tid: AtomicI64::new(0),
            first: new_chunk(),
        }))
    }

    /// The thread that took it; 0 while it is a spare.
    pub(crate) fn tid(&self) -> i64 {
        self.tid.load(Ordering::Acquire)
    }

    /// Where the writer starts reading it.
    pub(crate) fn cursor(&self) -> Cursor {
        Cursor {
            chunk: self.first.as_ptr(),
            index: 0,
            frames: Vec::new(),
        }
    }
}

/// Feeds made (spares included) that the writer has not taken yet (`new_feeds`): a lock-free
/// queue, since a thread that finds no spare left makes its own and adds it here, on its call.
/// The writer keeps every feed it took (a feed is a few bytes; its chunks go back to the pool
/// once its thread has ended).
static FEEDS: LazyLock<Injector<&'static Feed>> = LazyLock::new(Injector::new);

/// Spare feeds the writer registered ahead, in a ring of slots: a thread takes the next with
/// one swap ([`take_spare`]), and the writer fills the empty slots ([`refill`]). Two lines a
/// thread touches, where stealing from a crossbeam `Injector` touched its head, its block and
/// the slot: a thread's first call after it had swept its caches spent 0.94 µs of 2.4 registering
/// in the steal alone (`benches/overhead.rs`, `first_on_a_new_thread_after_sweeping_its_caches`,
/// on the machine that builds nppbench).
static SPARES: [AtomicPtr<Feed>; SPARE] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SPARE];

/// The slot the next thread takes from, modulo [`SPARE`].
static NEXT_SPARE: AtomicUsize = AtomicUsize::new(0);

/// The next spare feed, or `None` where its slot is empty (more threads started since the
/// writer's last refill than it keeps).
pub(crate) fn take_spare() -> Option<&'static Feed> {
    let slot = &SPARES[NEXT_SPARE.fetch_add(1, Ordering::Relaxed) % SPARE];
    let feed = slot.swap(std::ptr::null_mut(), Ordering::Acquire);
    // SAFETY: a non-null slot holds a feed `refill` leaked ('static), now this thread's alone.
    (!feed.is_null()).then(|| unsafe { &*feed })
}

/// Tops the spares up to [`SPARE`] and the pool to [`POOLED`]: the writer calls it at start and
/// at every tick.
pub(crate) fn refill() {
    let mut made: Option<&'static Feed> = None;
    for slot in &SPARES {
        if !slot.load(Ordering::Relaxed).is_null() {
            continue;
        }
        let f = *made.get_or_insert_with(Feed::new);
        let p = std::ptr::from_ref(f).cast_mut();
        // Only empty slots are filled (a second refiller, as a bench's, may have filled it).
        if slot
            .compare_exchange(std::ptr::null_mut(), p, Ordering::Release, Ordering::Relaxed)
            .is_ok()
        {
            FEEDS.push(f);
            made = None;
        }
    }
    if let Some(f) = made {
        // Made for a slot another refiller filled first: registered all the same, never used.
        FEEDS.push(f);
    }
    for _ in POOL.len()..POOLED {
        POOL.push(Owned(new_chunk()));
    }
}

/// The feeds made since the last time this was asked, in the order they were added (the
/// writer's, under its own lock: one taker at a time).
pub(crate) fn new_feeds() -> Vec<&'static Feed> {
    std::iter::from_fn(|| steal(&FEEDS)).collect()
}

/// An event as the writer reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    Call(CallEvent),
    /// A stream created at `ns` during a call of `symbol` (which had not returned yet), or outside
    /// one (`symbol` `None`), with the creating stack's return addresses, innermost first.
    Created {
        handle: u64,
        ns: u64,
        symbol: Option<u16>,
        stack: Option<Box<[usize]>>,
    },
    /// A stream destroyed at `ns`.
    Destroyed {
        handle: u64,
        ns: u64,
    },
}

/// How far the writer has read a feed.
#[derive(Debug)]
pub(crate) struct Cursor {
    /// Null once the feed's thread has ended and its chunk went back.
    chunk: *mut Chunk,
    index: usize,
    /// The frames read for the stream created next (the writer's memory).
    frames: Vec<usize>,
}

// SAFETY: the writer's alone; the chunk it points at is read through its tags (see `read`).
unsafe impl Send for Cursor {}

impl Cursor {
    /// Hands `f` every event published since the last read, in the order they were appended, and
    /// gives back the chunks the thread has left.
    pub(crate) fn read(&mut self, mut f: impl FnMut(Event)) {
        while let Some(chunk) = NonNull::new(self.chunk) {
            // SAFETY: the feed's current chunk or a later one: a chunk goes back only once its
            // thread linked the next (below) or ended (`retire`).
            let c = unsafe { chunk.as_ref() };
            if self.index == RECORDS {
                let next = c.next.load(Ordering::Acquire);
                if next.is_null() {
                    return;
                }
                // SAFETY: its thread linked the next chunk after its last record here and never
                // touches it again; this cursor was its last reader.
                unsafe { give_back(chunk) };
                (self.chunk, self.index) = (next, 0);
                continue;
            }
            let r = &c.records[self.index];
            let body = r.body.get();
            let event = match r.tag.load(Ordering::Acquire) {
                CALL => {
                    // SAFETY: the tag was stored (release) after the body, which its thread no
                    // longer writes; the union's field is the one the tag names.
                    Event::Call(unsafe { (*body).call })
                }
                CREATED => {
                    // SAFETY: as above.
                    let c = unsafe { (*body).created };
                    let symbol = (c.symbol != OUTSIDE_CALLS).then_some(c.symbol);
                    let frames = std::mem::take(&mut self.frames);
                    Event::Created {
                        handle: c.handle,
                        ns: c.ns,
                        symbol,
                        stack: symbol.is_none().then(|| frames.into_boxed_slice()),
                    }
                }
                FRAMES => {
                    // SAFETY: as above.
                    let f = unsafe { (*body).frames };
                    self.frames
                        .extend_from_slice(&f.addrs[..(f.n as usize).min(FRAMES_PER_RECORD)]);
                    self.index += 1;
                    continue;
                }
                DESTROYED => {
                    // SAFETY: as above.
                    let d = unsafe { (*body).destroyed };
                    Event::Destroyed {
                        handle: d.handle,
                        ns: d.ns,
                    }
                }
                _ => return,
            };
            f(event);
            self.index += 1;
        }
    }

    /// Gives back the chunk of a feed whose thread has ended; read it to the end first.
    pub(crate) fn retire(&mut self) {
        if let Some(chunk) = NonNull::new(std::mem::replace(&mut self.chunk, std::ptr::null_mut())) {
            // SAFETY: the thread has ended: nothing writes the chunk again; this cursor was its
            // last reader and forgets it.
            unsafe { give_back(chunk) };
        }
    }
}

#[cfg(test)]
mod tests;
