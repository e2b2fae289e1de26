//! Every CUDA stream created or destroyed in the process, from CUPTI's callback API (resource
//! domain), each attributed to the catalogued call it was created in or, outside one, to the NPP
//! function its creating stack names. The stream-creating API calls (driver and runtime) are
//! subscribed to as well, on their exit, for the flags they were given: a stream created outside
//! a catalogued call tells the flags cache (`flags.rs`), so that calls need not ask the driver.
//! See [the callback API](https://docs.nvidia.com/cupti/api/group__CUPTI__CALLBACK__API.html).
//!
//! The time spent in these callbacks is recording too: it is summed ([`Registry::callbacks`]).
//! The subscription and the callbacks themselves are in `cupti.rs`.
//!
//! Stream events are rare next to calls: one global mutex holds them. Outside a catalogued call
//! the creating thread keeps only its stack's return addresses; the writer names them
//! ([`name_stacks`]) before each write.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{LazyLock, Mutex};

use crate::clock;
use crate::feed::{self, tid};
use crate::flags;
use crate::protocol::DESTROYED_STREAMS_LISTED;
use crate::site::SiteKey;
use crate::symbolise::{self, Names, NppStack};
use crate::sync::lock;

mod cupti;

pub(crate) use cupti::subscribe;

/// One stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamRec {
    pub(crate) handle: u64,
    pub(crate) tid: i64,
    pub(crate) created_ns: u64,
    pub(crate) destroyed_ns: Option<u64>,
    /// The catalogued call it was created in, once that call returned.
    pub(crate) site: Option<SiteKey>,
    /// The catalogued call it was created in, until that call returns: the symbol's index.
    pub(crate) in_call: Option<u16>,
    /// Created outside a catalogued call: the creating stack's return addresses, innermost
    /// first, until the writer names them.
    pub(crate) stack: Option<Box<[usize]>>,
    /// What the creating stack named of NPP, once named; `None` where it named no NPP code.
    pub(crate) named: Option<NppStack>,
}

impl StreamRec {
    /// The NPP function it is attributed to outside a call site, and its library.
    pub(crate) fn attributed(&self) -> (Option<String>, Option<String>) {
        match (&self.site, self.in_call, &self.named) {
            (Some(_), _, _) => (None, None),
            (None, Some(symbol), _) => (crate::SYMBOLS.get(usize::from(symbol)).map(|s| (*s).to_owned()), None),
            (None, None, Some(n)) => (Some(n.function.clone()), Some(n.library.clone())),
            (None, None, None) => (None, None),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Registry {
    pub(crate) live: HashMap<u64, StreamRec>,
    /// Destroyed streams, oldest first, at most [`DESTROYED_STREAMS_LISTED`].
    pub(crate) gone: VecDeque<StreamRec>,
    pub(crate) not_listed: u64,
    /// Streams created and destroyed per call site.
    pub(crate) per_site: HashMap<SiteKey, (u64, u64)>,
    /// Streams per distinct run of NPP frames on the creating stack ([`NppStack::text`]).
    pub(crate) npp_stacks: BTreeMap<String, u64>,
    /// The callbacks this module received and the time spent in them, ns.
    pub(crate) callbacks: (u64, u64),
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

/// Attributes streams created during catalogued calls to their sites (the writer's, before each
/// snapshot). A stream already destroyed is found among the destroyed ones still listed.
pub(crate) fn attach(created: Vec<(u64, SiteKey)>) {
    if created.is_empty() {
        return;
    }
    let mut r = lock(&REGISTRY);
    for (handle, key) in created {
        let destroyed = {
            let rec = match r.live.get_mut(&handle) {
                Some(rec) => Some(rec),
                None => r.gone.iter_mut().rev().find(|s| s.handle == handle),
            };
            let Some(rec) = rec else { continue };
            rec.site = Some(key);
            rec.in_call = None;
            rec.destroyed_ns.is_some()
        };
        let counts = r.per_site.entry(key).or_default();
        counts.0 += 1;
        counts.1 += u64::from(destroyed);
    }
}

fn on_created(handle: u64) {
    let now = clock::now_ns();
    crate::work::on_cuda_work();
    // Inside a catalogued call: kept in the thread's feed, before the call's record, which
    // names its site.
    let in_call = feed::created_in_call(handle);
    let stack = if in_call.is_some() {
        None
    } else {
        // A thread usually creates its stream before its first NPP call: it registers here, in
        // a callback already costly, so that the call does not.
        feed::register_early();
        Some(symbolise::stack())
    };
    let rec = StreamRec {
        handle,
        tid: tid(),
        created_ns: now,
        destroyed_ns: None,
        site: None,
        in_call,
        stack,
        named: None,
    };
    let mut r = lock(&REGISTRY);
    if let Some(old) = r.live.insert(handle, rec) {
        // A handle created again without a destruction seen: keep the old one listed.
        push_gone(&mut r, old);
    }
}

fn on_destroyed(handle: u64) {
    let now = clock::now_ns();
    flags::destroyed(handle);
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

/// Every address the writer has named.
static NAMES: LazyLock<Mutex<Names>> = LazyLock::new(Mutex::default);

/// Names the stacks of the streams created outside catalogued calls since the last time (the
/// writer's, before each write): the stacks are taken out under the registry's lock, named
/// without it, and the names put back.
pub(crate) fn name_stacks() {
    let pending: Vec<(u64, u64, Box<[usize]>)> = {
        let mut r = lock(&REGISTRY);
        let Registry { live, gone, .. } = &mut *r;
        live.values_mut()
            .chain(gone.iter_mut())
            .filter_map(|s| Some((s.handle, s.created_ns, s.stack.take()?)))
            .collect()
    };
    if pending.is_empty() {
        return;
    }
    let named: Vec<(u64, u64, Option<NppStack>)> = {
        let mut names = lock(&NAMES);
        pending
            .into_iter()
            .map(|(h, t, stack)| (h, t, NppStack::of(&stack, &mut names)))
            .collect()
    };
    let mut r = lock(&REGISTRY);
    for (handle, created_ns, n) in named {
        let Some(n) = n else { continue };
        *r.npp_stacks.entry(n.text.clone()).or_insert(0) += 1;
        let Registry { live, gone, .. } = &mut *r;
        let rec = live
            .get_mut(&handle)
            .filter(|s| s.created_ns == created_ns)
            .or_else(|| {
                gone.iter_mut()
                    .rev()
                    .find(|s| s.handle == handle && s.created_ns == created_ns)
            });
        if let Some(rec) = rec {
            rec.named = Some(n);
        }
    }
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
        feed::refill();
        let call = feed::enter(1).expect("not inside a call");
        on_created(0xdead_0001);
        on_created(0xdead_0002);
        on_destroyed(0xdead_0002);
        call.leave();
        with_registry(|r| {
            let open = r.gone.iter().find(|s| s.handle == 0xdead_0002).unwrap();
            assert_eq!((open.in_call, open.site, open.stack.is_none()), (Some(1), None, true));
            assert_eq!(open.attributed(), (Some(crate::SYMBOLS[1].to_owned()), None));
        });
        // What the thread's feed hands the writer once the call's record names its site.
        attach(vec![(0xdead_0001, key()), (0xdead_0002, key())]);
        on_destroyed(0xdead_0001);
        with_registry(|r| {
            assert_eq!(r.per_site[&key()], (2, 2));
            let mine: Vec<_> = r.gone.iter().filter(|s| s.handle >> 16 == 0xdead).collect();
            assert_eq!(mine.len(), 2);
            assert!(
                mine.iter()
                    .all(|s| s.site == Some(key()) && s.attributed() == (None, None) && s.stack.is_none())
            );
        });
        // Outside a call: no site; the stack is kept until named, and this test's names no NPP
        // code.
        on_created(0xbeef_0001);
        with_registry(|r| {
            let s = &r.live[&0xbeef_0001];
            assert_eq!((s.site, s.in_call, s.tid), (None, None, tid()));
            assert!(s.stack.as_ref().is_some_and(|f| !f.is_empty()));
        });
        name_stacks();
        with_registry(|r| {
            let s = &r.live[&0xbeef_0001];
            assert_eq!((&s.stack, &s.named, s.attributed()), (&None, &None, (None, None)));
        });
    }
}
