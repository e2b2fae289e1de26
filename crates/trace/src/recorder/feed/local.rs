//! The producer's side of the feeds: one thread-local block per thread ([`Local`]), reached once
//! per call, which registers the thread, makes room and appends its records.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use super::{
    Body, CALL, CREATED, CallEvent, Chunk, Created, DESTROYED, Destroyed, FEEDS, FRAMES, FRAMES_PER_RECORD, Feed,
    Frames, OUTSIDE_CALLS, RECORDS, Record, take_chunk, take_spare,
};
use crate::recorder::errno::keeping_errno;
use crate::recorder::hot::HOT;
#[cfg(target_arch = "x86_64")]
use crate::recorder::hot::thread_pointer;
use crate::recorder::prefetch;
use crate::recorder::stack::DEPTH;

/// One thread's state.
struct Local {
    /// The catalogued call the thread is in: its symbol index + 1; 0 outside one.
    in_call: Cell<u32>,
    /// The next record to write in `chunk`; [`RECORDS`] when full, as it starts (no chunk).
    index: Cell<u32>,
    chunk: Cell<*mut Chunk>,
    feed: Cell<Option<&'static Feed>>,
    /// The kernel's id of the thread; 0 until asked.
    tid: Cell<i64>,
    /// Whether the thread has made a catalogued call.
    called: Cell<bool>,
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            in_call: Cell::new(0),
            index: Cell::new(RECORDS as u32),
            chunk: Cell::new(std::ptr::null_mut()),
            feed: Cell::new(None),
            tid: Cell::new(0),
            called: Cell::new(false),
        }
    };
}

/// Where the calling thread's [`Local`] is from its thread pointer.
#[cfg(target_arch = "x86_64")]
fn own_offset() -> Option<usize> {
    LOCAL
        .try_with(|l| (l as *const Local as usize).wrapping_sub(thread_pointer()))
        .ok()
}

/// How far below its thread pointer a thread's static thread-local area may reach, at most, for
/// an offset to be trusted (glibc's area holds the program's and its libraries' blocks: a few
/// KiB to some hundreds).
#[cfg(target_arch = "x86_64")]
const STATIC_AREA: usize = 16 << 20;

/// The offset the interposer's first thread found ([`note_offset`]); 0 until then.
#[cfg(target_arch = "x86_64")]
static NOTED_OFFSET: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// On the thread that loads the interposer: notes where its [`Local`] is from its thread pointer.
pub(crate) fn note_offset() {
    #[cfg(target_arch = "x86_64")]
    if let Some(offset) = own_offset() {
        NOTED_OFFSET.store(offset, Ordering::Relaxed);
    }
}

/// On another thread (the writer's, at its start): where its [`Local`] is at the offset the first
/// thread noted, every thread's is (the interposer's thread-local block is then in the static
/// block each thread is given at its creation, as for every library loaded at the process's
/// start), and calls reach theirs from their thread pointer ([`enter`]), without
/// `__tls_get_addr`: its code, the loader's generation counter and the thread's vector of
/// blocks are three more lines a cold call would miss. Where they differ (a library loaded later,
/// whose blocks are allocated one by one), calls keep asking `__tls_get_addr`.
pub(crate) fn confirm_offset() {
    #[cfg(target_arch = "x86_64")]
    {
        let noted = NOTED_OFFSET.load(Ordering::Relaxed);
        // A static block lies just below the thread pointer (the x86-64 ABI's variant II), within
        // the static area every thread is given: never more than that area away.
        let in_static_area = (-(STATIC_AREA as isize)..0).contains(&(noted as isize));
        if in_static_area && own_offset() == Some(noted) {
            HOT.local_offset.store(noted, Ordering::Relaxed);
        }
    }
}

/// The calling thread's [`Local`].
#[inline(always)]
fn local() -> Option<*const Local> {
    #[cfg(target_arch = "x86_64")]
    {
        let offset = HOT.local_offset.load(Ordering::Relaxed);
        if offset != 0 {
            return Some(thread_pointer().wrapping_add(offset) as *const Local);
        }
    }
    LOCAL.try_with(|l| l as *const Local).ok()
}

/// The kernel's id of the calling thread (asked once per thread).
pub(crate) fn tid() -> i64 {
    LOCAL
        .try_with(Local::tid)
        .unwrap_or_else(|_| crate::recorder::tid::current())
}

impl Local {
    fn tid(&self) -> i64 {
        if self.tid.get() == 0 {
            self.tid.set(crate::recorder::tid::current());
        }
        self.tid.get()
    }

    /// Takes a spare feed (or, where none is left, makes and registers one), with the thread's
    /// id; hints the lines the first record will write.
    #[cold]
    #[inline(never)]
    #[cfg_attr(target_os = "linux", unsafe(link_section = "nppbench_hot"))]
    fn register(&self) {
        let feed = take_spare().unwrap_or_else(|| {
            let f = Feed::new();
            FEEDS.push(f);
            f
        });
        prefetch::lines_to_write((&raw const feed.tid).cast(), 8);
        prefetch::lines_to_write(feed.first.as_ptr().cast::<u8>().wrapping_add(64), 64);
        feed.tid.store(self.tid(), Ordering::Release);
        self.feed.set(Some(feed));
        self.chunk.set(feed.first.as_ptr());
        self.index.set(0);
    }

    /// Makes room for a record: registers the thread, or links a fresh chunk after a full one.
    /// The caller's `errno` is kept (a chunk may be allocated).
    #[cold]
    #[inline(never)]
    #[cfg_attr(target_os = "linux", unsafe(link_section = "nppbench_hot"))]
    fn make_room(&self) {
        keeping_errno(|| self.make_room_now());
    }

    #[inline(always)]
    fn make_room_now(&self) {
        let full = self.chunk.get();
        if full.is_null() {
            self.register();
            return;
        }
        let fresh = take_chunk();
        // SAFETY: the thread's own current chunk, full: this link is its last write there.
        unsafe { (*full).next.store(fresh.as_ptr(), Ordering::Release) };
        self.chunk.set(fresh.as_ptr());
        self.index.set(0);
    }

    /// The record the next append writes.
    #[inline]
    fn slot(&self) -> *mut Record {
        // SAFETY: after `make_room`, the chunk is the thread's own and `index < RECORDS`.
        unsafe {
            (&raw mut (*self.chunk.get()).records)
                .cast::<Record>()
                .add(self.index.get() as usize)
        }
    }

    /// Writes the next record (`write` fills its body), then publishes it with `tag`.
    #[inline]
    fn append(&self, tag: u32, write: impl FnOnce(*mut Body)) {
        if self.index.get() as usize >= RECORDS {
            self.make_room();
        }
        let slot = self.slot();
        // SAFETY: the record is the thread's own and unpublished (its tag is EMPTY), so the
        // writer does not read it until the store below.
        unsafe {
            write((*slot).body.get());
            (*slot).tag.store(tag, Ordering::Release);
        }
        self.index.set(self.index.get() + 1);
    }
}

/// The calling thread inside one catalogued call, from [`enter`].
pub(crate) struct InCall {
    local: *const Local,
}

/// Marks the calling thread as inside `symbol`'s call, with room for its record (whose line it
/// hints). `None` where it already is in one (NPP calling one of its own exported functions:
/// not the program's call).
#[inline]
pub(crate) fn enter(symbol: u16) -> Option<InCall> {
    let local = local()?;
    let call = InCall { local };
    let l = call.local();
    if l.in_call.get() != 0 {
        return None;
    }
    l.in_call.set(u32::from(symbol) + 1);
    if l.index.get() as usize >= RECORDS {
        l.make_room();
    }
    prefetch::lines_to_write(l.slot().cast(), 64);
    if !l.called.get() {
        l.called.set(true);
        crate::recorder::work::on_call();
    }
    Some(call)
}

impl InCall {
    #[inline]
    fn local(&self) -> &Local {
        // SAFETY: the calling thread's own block (an `InCall` is not `Send`), which has no
        // destructor and so lives as long as the thread.
        unsafe { &*self.local }
    }

    /// The call returned.
    #[inline]
    pub(crate) fn leave(&self) {
        self.local().in_call.set(0);
    }

    /// Appends the call's record; `overhead` is asked last, just before it is published.
    #[inline]
    pub(crate) fn append(self, event: CallEvent, overhead: impl FnOnce() -> u64) {
        self.local().append(CALL, |body| {
            // SAFETY: the unpublished record's body (`Local::append`).
            unsafe {
                (*body).call = event;
                (*body).call.overhead_ns = u32::try_from(overhead()).unwrap_or(u32::MAX);
            }
        });
    }
}

/// Whether the calling thread is inside a catalogued call (a thread whose state is gone counts as
/// inside one: nothing is told from it).
pub(crate) fn in_call() -> bool {
    LOCAL.try_with(|l| l.in_call.get() != 0).unwrap_or(true)
}

/// A stream `handle` was created on the calling thread at `ns`: appended to the thread's feed
/// (registering the thread where it has no feed yet: it usually creates its stream before its
/// first NPP call, and pays for its feed here, in a callback already costly, not on that call).
/// Inside a catalogued call it comes before the call's record, which names its site; outside
/// one, after the creating stack that `stack` writes into the buffer it is given (returning how
/// many frames), a few frames a record. Nothing is allocated. Returns the call's symbol, `None`
/// outside one.
pub(crate) fn stream_created(handle: u64, ns: u64, stack: impl FnOnce(&mut [usize]) -> usize) -> Option<u16> {
    LOCAL
        .try_with(|l| {
            let symbol = l.in_call.get().checked_sub(1).and_then(|s| u16::try_from(s).ok());
            if symbol.is_none() {
                let mut frames = [0; DEPTH];
                let n = stack(&mut frames).min(DEPTH);
                for part in frames[..n].chunks(FRAMES_PER_RECORD) {
                    let mut addrs = [0; FRAMES_PER_RECORD];
                    addrs[..part.len()].copy_from_slice(part);
                    l.append(FRAMES, |body| {
                        // SAFETY: the unpublished record's body (`Local::append`).
                        unsafe {
                            (*body).frames = Frames {
                                n: part.len() as u32,
                                addrs,
                            }
                        }
                    });
                }
            }
            l.append(CREATED, |body| {
                // SAFETY: the unpublished record's body (`Local::append`).
                unsafe {
                    (*body).created = Created {
                        handle,
                        ns,
                        symbol: symbol.unwrap_or(OUTSIDE_CALLS),
                    }
                }
            });
            symbol
        })
        .ok()
        .flatten()
}

/// A stream `handle` was destroyed on the calling thread at `ns`: appended to its feed.
pub(crate) fn stream_destroyed(handle: u64, ns: u64) {
    let _ = LOCAL.try_with(|l| {
        l.append(DESTROYED, |body| {
            // SAFETY: the unpublished record's body (`Local::append`).
            unsafe { (*body).destroyed = Destroyed { handle, ns } }
        });
    });
}

/// The calling thread's feed, where it has one.
#[cfg(test)]
pub(crate) fn own_feed() -> Option<&'static Feed> {
    LOCAL.with(|l| l.feed.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_two_threads_agree_every_thread_reaches_its_state_from_its_thread_pointer() {
        note_offset();
        std::thread::spawn(confirm_offset).join().unwrap();
        #[cfg(target_arch = "x86_64")]
        assert_ne!(
            HOT.local_offset.load(Ordering::Relaxed),
            0,
            "a test binary's thread-local blocks are static: the offsets agree"
        );
        for _ in 0..4 {
            std::thread::spawn(|| {
                let by_offset = local().expect("the thread's state");
                let by_loader = LOCAL.with(|l| l as *const Local);
                assert_eq!(by_offset, by_loader);
                // SAFETY: the thread's own state, as `enter` reads it.
                assert_eq!(unsafe { (*by_offset).in_call.get() }, 0);
            })
            .join()
            .unwrap();
        }
    }
}
