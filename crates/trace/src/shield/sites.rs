//! The shield's counts: one slot per call site (function, ROI, steps, stream, declared flags and
//! the action taken), found by hashing the site into a fixed table of atomics. A call adds one to
//! its slot's count and the nanoseconds the shield spent on it, as it leaves; a site's first call claims an empty slot and publishes its key. No lock, no
//! allocation, nothing waits: a slot another thread is still publishing is passed over (the site
//! may then hold two slots, merged when the report is written), and a site that finds no room
//! in [`PROBES`] slots is counted per action in [`NOT_LISTED`].

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use super::decide::action::CODES;
use crate::site::Site;

/// Slots in the table (call sites a process can list).
pub(crate) const SLOTS: usize = 4096;
/// Slots a site looks at before it counts as not listed.
const PROBES: usize = 16;

const EMPTY: u32 = 0;
const WRITING: u32 = 1;
const READY: u32 = 2;

/// One site's slot, a cache line of its own: a call writes its count and time together, and
/// never the line of a site beside it.
#[repr(align(64))]
pub(crate) struct Slot {
    state: AtomicU32,
    action: AtomicU8,
    key: [AtomicU64; 3],
    pub(crate) calls: AtomicU64,
    /// Nanoseconds the shield spent on the calls counted.
    pub(crate) ns: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const SLOT: Slot = Slot {
    state: AtomicU32::new(EMPTY),
    action: AtomicU8::new(0),
    key: [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)],
    calls: AtomicU64::new(0),
    ns: AtomicU64::new(0),
};

static TABLE: [Slot; SLOTS] = [SLOT; SLOTS];

/// Calls at sites that found no slot, per action code (`decide::action`, below `CODES`), and
/// the shield's nanoseconds on them all.
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
pub(crate) static NOT_LISTED: [AtomicU64; CODES] = [ZERO; CODES];
pub(crate) static NOT_LISTED_NS: AtomicU64 = AtomicU64::new(0);

/// A step's packing: `None` as `i32::MIN`, which no step is.
fn step(s: Option<i32>) -> u32 {
    s.unwrap_or(i32::MIN) as u32
}

fn unstep(v: u32) -> Option<i32> {
    Some(v as i32).filter(|s| *s != i32::MIN)
}

/// The stream's class in a key: 0 NULL, 1 `cudaStreamLegacy`, 2 `cudaStreamPerThread`, 3 created.
fn stream_class(handle: u64) -> u64 {
    handle.min(3)
}

/// A site's key: the site and the created stream's non-blocking bit (`nb`; 2 unknown).
#[inline]
pub(crate) fn key(site: &Site<'_>, nb: Option<bool>) -> [u64; 3] {
    let nb = nb.map_or(2, u64::from);
    [
        u64::from(site.symbol)
            | (stream_class(site.ctx.h_stream as u64) << 16)
            | (nb << 20)
            | (u64::from(site.ctx.n_stream_flags) << 32),
        u64::from(site.roi.width as u32) | (u64::from(site.roi.height as u32) << 32),
        u64::from(step(site.src_step)) | (u64::from(step(site.dst_step)) << 32),
    ]
}

/// A key unpacked: symbol, stream class, created stream's non-blocking bit, declared flags, ROI,
/// steps.
pub(crate) struct Unpacked {
    pub(crate) symbol: u16,
    pub(crate) stream_class: u8,
    pub(crate) stream_nb: Option<bool>,
    pub(crate) declared_flags: u32,
    pub(crate) width: i32,
    pub(crate) height: i32,
    pub(crate) src_step: Option<i32>,
    pub(crate) dst_step: Option<i32>,
}

pub(crate) fn unpack(k: [u64; 3]) -> Unpacked {
    Unpacked {
        symbol: k[0] as u16,
        stream_class: ((k[0] >> 16) & 0xf) as u8,
        stream_nb: match (k[0] >> 20) & 0xf {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        },
        declared_flags: (k[0] >> 32) as u32,
        width: k[1] as u32 as i32,
        height: (k[1] >> 32) as u32 as i32,
        src_step: unstep(k[2] as u32),
        dst_step: unstep((k[2] >> 32) as u32),
    }
}

fn first_slot(k: &[u64; 3], action: u8) -> usize {
    let mut h = k[0] ^ k[1].rotate_left(21) ^ k[2].rotate_left(42) ^ u64::from(action);
    h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 40) as usize % SLOTS
}

/// Counts one call at the site with key `k` that met `action`, on which the shield spent `ns`.
#[inline]
pub(crate) fn count(k: [u64; 3], action: u8, ns: u64) {
    let start = first_slot(&k, action);
    for i in 0..PROBES {
        let slot = &TABLE[(start + i) % SLOTS];
        let state = slot.state.load(Ordering::Acquire);
        if state == READY
            && slot.action.load(Ordering::Relaxed) == action
            && slot.key.iter().zip(k).all(|(a, b)| a.load(Ordering::Relaxed) == b)
        {
            slot.calls.fetch_add(1, Ordering::Relaxed);
            slot.ns.fetch_add(ns, Ordering::Relaxed);
            return;
        }
        if state == EMPTY
            && slot
                .state
                .compare_exchange(EMPTY, WRITING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            for (a, b) in slot.key.iter().zip(k) {
                a.store(b, Ordering::Relaxed);
            }
            slot.action.store(action, Ordering::Relaxed);
            slot.calls.store(1, Ordering::Relaxed);
            slot.ns.store(ns, Ordering::Relaxed);
            slot.state.store(READY, Ordering::Release);
            return;
        }
    }
    NOT_LISTED[usize::from(action) % CODES].fetch_add(1, Ordering::Relaxed);
    NOT_LISTED_NS.fetch_add(ns, Ordering::Relaxed);
}

/// Every published slot: its key, action, calls and nanoseconds (the report's; `f` is not
/// called for a slot with no calls, as in a forked child before its first).
pub(crate) fn each(mut f: impl FnMut([u64; 3], u8, u64, u64)) {
    for slot in &TABLE {
        if slot.state.load(Ordering::Acquire) != READY {
            continue;
        }
        let calls = slot.calls.load(Ordering::Relaxed);
        if calls > 0 {
            let k = [0, 1, 2].map(|i| slot.key[i].load(Ordering::Relaxed));
            f(
                k,
                slot.action.load(Ordering::Relaxed),
                calls,
                slot.ns.load(Ordering::Relaxed),
            );
        }
    }
}

/// In a forked child: the counts start again at zero (the parent's report has the calls before
/// the fork). Atomic stores only, as a child of a threaded process may make.
pub(crate) fn restart_counts() {
    for slot in &TABLE {
        slot.calls.store(0, Ordering::Relaxed);
        slot.ns.store(0, Ordering::Relaxed);
    }
    for n in &NOT_LISTED {
        n.store(0, Ordering::Relaxed);
    }
    NOT_LISTED_NS.store(0, Ordering::Relaxed);
}
