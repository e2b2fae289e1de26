//! Every CUDA stream created or destroyed in the process, as the writer keeps them: the events
//! come through the threads' feeds (`recorder/cupti.rs` appends them on the thread that created
//! or destroyed the stream), and only the writer (or the exit path, with a deadline) holds this
//! registry. Each stream is attributed to the catalogued call it was created in or, outside one,
//! to the NPP function its creating stack names ([`Registry::name_stacks`], before each write).
//!
//! The feeds are read one after another, so a stream's destruction on one thread can be read
//! before its creation on another: each pass's events are applied in the order of their times,
//! and a destruction whose stream has not been seen yet waits for it ([`Registry::orphans`]).

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::protocol::DESTROYED_STREAMS_LISTED;
use crate::writer::site::SiteKey;
use crate::writer::symbolise::{Names, NppStack};

/// One stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamRec {
    pub(crate) handle: u64,
    pub(crate) tid: i64,
    pub(crate) created_ns: u64,
    pub(crate) destroyed_ns: Option<u64>,
    /// The catalogued call it was created in, once that call's record was read.
    pub(crate) site: Option<SiteKey>,
    /// The catalogued call it was created in, until that call's record is read: the symbol's
    /// index.
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

/// A stream event read from a thread's feed in one pass.
#[derive(Debug)]
pub(crate) enum StreamEvent {
    Created(StreamRec),
    Destroyed { handle: u64, ns: u64 },
}

impl StreamEvent {
    fn ns(&self) -> u64 {
        match self {
            StreamEvent::Created(rec) => rec.created_ns,
            StreamEvent::Destroyed { ns, .. } => *ns,
        }
    }
}

/// What one pass over the feeds read of streams.
#[derive(Debug, Default)]
pub(crate) struct Pass {
    pub(crate) events: Vec<StreamEvent>,
    /// Streams created during a call whose record this pass read, with the call's site.
    pub(crate) attach: Vec<(u64, SiteKey)>,
}

/// Handles whose destruction waits for their stream's creation, at most (a stream created before
/// the interposer subscribed is never seen created).
const ORPHANS_KEPT: usize = 4_096;

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
    /// Destructions read before their stream's creation: their times by handle.
    orphans: HashMap<u64, Vec<u64>>,
    /// Every address named.
    names: Names,
}

impl Registry {
    /// Takes in what a pass over the feeds read: its events in the order of their times, then
    /// the streams its calls' records attribute to their sites.
    pub(crate) fn apply(&mut self, pass: Pass) {
        let Pass { mut events, attach } = pass;
        // A creation before a destruction of the same time: a handle is destroyed after it is made.
        events.sort_by_key(|e| (e.ns(), matches!(e, StreamEvent::Destroyed { .. })));
        for e in events {
            match e {
                StreamEvent::Created(rec) => self.created(rec),
                StreamEvent::Destroyed { handle, ns } => self.destroyed(handle, ns),
            }
        }
        self.attach(attach);
    }

    fn created(&mut self, rec: StreamRec) {
        let (handle, created_ns) = (rec.handle, rec.created_ns);
        if let Some(old) = self.live.insert(handle, rec) {
            // A handle created again without a destruction seen: keep the old one listed.
            self.push_gone(old);
        }
        // Its destruction, read earlier from another thread's feed: the first after its creation.
        let Some(times) = self.orphans.get_mut(&handle) else {
            return;
        };
        let first = (0..times.len())
            .filter(|i| times[*i] >= created_ns)
            .min_by_key(|i| times[*i]);
        if let Some(i) = first {
            let ns = times.swap_remove(i);
            if times.is_empty() {
                self.orphans.remove(&handle);
            }
            self.destroyed(handle, ns);
        }
    }

    fn destroyed(&mut self, handle: u64, ns: u64) {
        let Some(mut rec) = self.live.remove_entry(&handle).and_then(|(h, rec)| {
            if rec.created_ns <= ns {
                Some(rec)
            } else {
                self.live.insert(h, rec);
                None
            }
        }) else {
            if self.orphans.len() >= ORPHANS_KEPT && !self.orphans.contains_key(&handle) {
                // Streams never seen created: one handle's wait is given up.
                if let Some(h) = self.orphans.keys().next().copied() {
                    self.orphans.remove(&h);
                }
            }
            self.orphans.entry(handle).or_default().push(ns);
            return;
        };
        rec.destroyed_ns = Some(ns);
        if let Some(key) = rec.site {
            self.per_site.entry(key).or_default().1 += 1;
        }
        self.push_gone(rec);
    }

    fn push_gone(&mut self, rec: StreamRec) {
        self.gone.push_back(rec);
        if self.gone.len() > DESTROYED_STREAMS_LISTED {
            self.gone.pop_front();
            self.not_listed += 1;
        }
    }

    /// Attributes streams created during catalogued calls to their sites. A stream already
    /// destroyed is found among the destroyed ones still listed.
    fn attach(&mut self, created: Vec<(u64, SiteKey)>) {
        for (handle, key) in created {
            let rec = match self.live.get_mut(&handle) {
                Some(rec) => Some(rec),
                None => self.gone.iter_mut().rev().find(|s| s.handle == handle),
            };
            let Some(rec) = rec else { continue };
            rec.site = Some(key);
            rec.in_call = None;
            let destroyed = rec.destroyed_ns.is_some();
            let counts = self.per_site.entry(key).or_default();
            counts.0 += 1;
            counts.1 += u64::from(destroyed);
        }
    }

    /// Names the stacks of the streams created outside catalogued calls since the last time
    /// (before each write).
    pub(crate) fn name_stacks(&mut self) {
        let Registry {
            live,
            gone,
            npp_stacks,
            names,
            ..
        } = self;
        for rec in live.values_mut().chain(gone.iter_mut()) {
            let Some(stack) = rec.stack.take() else { continue };
            if let Some(n) = NppStack::of(&stack, names) {
                *npp_stacks.entry(n.text.clone()).or_insert(0) += 1;
                rec.named = Some(n);
            }
        }
    }

    /// Every stream, destroyed or live, in the order they were created.
    pub(crate) fn in_order(&self) -> Vec<&StreamRec> {
        let mut recs: Vec<&StreamRec> = self.gone.iter().chain(self.live.values()).collect();
        recs.sort_by_key(|s| (s.created_ns, s.handle));
        recs
    }
}

#[cfg(test)]
mod tests;
