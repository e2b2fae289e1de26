//! The decision on the program's thread: which knowledge applies (the NPP version loaded, read
//! once, at the process's first shielded call), the call's facts (ROI, steps, stream, context
//! filling), the rules' tests on them, and the action. A few loads and integer tests; no lock,
//! no allocation. The stream's real flags, where a rule needs them, are asked of the driver the
//! program mapped, on every such call on a created stream: without CUPTI's callbacks (which
//! `shield` alone does not subscribe) a handle freed and made again could carry stale flags.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use nppbench_model::{ContextFill, StreamKind};
use nppbench_npp_sys::{GetLibVersion, NppLibraryVersion, NppStreamContext};

use super::table::{Entry, Op, Rule, Table, Test, context_bit, stream_bit};
use crate::recorder::driver;
use crate::recorder::errno::keeping_errno;
use crate::site::Site;

/// What the shield did with a call, as the sites table keeps it (`sites.rs`).
pub(crate) mod action {
    pub(crate) const NOT_HAZARDOUS: u8 = 1;
    pub(crate) const UNKNOWN_FUNCTION: u8 = 2;
    pub(crate) const UNKNOWN_CONFIGURATION: u8 = 3;
    pub(crate) const NO_KNOWLEDGE: u8 = 4;
    /// Rewritten (declared non-blocking, and staged where [`WRONG`] is set): this bit, with
    /// [`LEAK`], [`RACE`] and [`WRONG`] for the hazards found.
    pub(crate) const REWRITTEN: u8 = 8;
    pub(crate) const LEAK: u8 = 1;
    pub(crate) const RACE: u8 = 2;
    pub(crate) const WRONG: u8 = 4;
    /// The configuration computes wrong pixels, and the call could not be staged: alone, or with
    /// [`REWRITTEN`] where it leaks or races too.
    pub(crate) const NOT_STAGED: u8 = 16;
    /// Codes below this; the sites' table counts unlisted calls per code.
    pub(crate) const CODES: usize = 32;

    pub(crate) fn rewritten(a: u8) -> bool {
        a & REWRITTEN != 0
    }

    /// `a`, a call found computing wrong pixels, once staging failed.
    pub(crate) fn not_staged(a: u8) -> u8 {
        let kept = a & (LEAK | RACE);
        NOT_STAGED | if kept != 0 { REWRITTEN | kept } else { 0 }
    }
}

/// The knowledge in use: 0 until the first shielded call resolves it, then the version's index
/// + 1, or [`NONE`].
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
const NONE: usize = usize::MAX;

/// The loaded NPP's version as `nppGetLibVersion` said it (major << 32 | minor << 16 | build),
/// or 0 where it did not.
pub(crate) static LOADED: AtomicU64 = AtomicU64::new(0);

/// The version's rules in use, resolving them at the first call.
#[inline]
pub(crate) fn active(table: &Table) -> Option<&super::table::Version> {
    let i = match ACTIVE.load(Ordering::Acquire) {
        0 => resolve(table),
        i => i,
    };
    (i != NONE).then(|| &table.versions[i - 1])
}

/// Which knowledge matches the NPP loaded (once per process: the loser of a race finds the same).
#[cold]
#[inline(never)]
fn resolve(table: &Table) -> usize {
    let loaded = keeping_errno(loaded_version);
    if let Some([a, b, c]) = loaded {
        LOADED.store(
            (u64::from(a) << 32) | (u64::from(b) << 16) | u64::from(c),
            Ordering::Relaxed,
        );
    }
    let i = loaded
        .and_then(|v| table.versions.iter().position(|k| k.numbers == Some(v)))
        .map_or(NONE, |i| i + 1);
    ACTIVE.store(i, Ordering::Release);
    i
}

/// Uses the knowledge at `index` whatever NPP is loaded (the bench, which loads none).
pub(crate) fn pin(index: Option<usize>) {
    ACTIVE.store(index.map_or(NONE, |i| i + 1), Ordering::Release);
}

/// The name of the knowledge in use, once resolved.
pub(crate) fn active_name(table: &Table) -> Option<&str> {
    match ACTIVE.load(Ordering::Acquire) {
        0 | NONE => None,
        i => Some(&table.versions[i - 1].name),
    }
}

/// `nppGetLibVersion` of the NPP the program loaded.
fn loaded_version() -> Option<[u32; 3]> {
    // SAFETY: looks a name up among the loaded objects.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"nppGetLibVersion".as_ptr()) };
    if f.is_null() {
        return None;
    }
    // SAFETY: libnppc's nppGetLibVersion has this signature and returns a pointer to a static
    // struct (or null).
    let v: *const NppLibraryVersion = unsafe { std::mem::transmute::<*mut libc::c_void, GetLibVersion>(f)() };
    // SAFETY: non-null, it points at NPP's static version struct.
    let v = unsafe { v.as_ref() }?;
    let n = |x: i32| u32::try_from(x).ok();
    Some([n(v.major)?, n(v.minor)?, n(v.build)?])
}

/// A call's facts as the rules read them. `stream` and `context` are `None` where the stream's
/// real flags are unknown (or were not needed, and not asked).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    pub(crate) width: i32,
    pub(crate) height: i32,
    pub(crate) src_step: Option<i32>,
    pub(crate) dst_step: Option<i32>,
    /// The source's device address, where the shield can stage the function.
    pub(crate) src_addr: Option<u64>,
    pub(crate) declared_non_blocking: bool,
    pub(crate) stream: Option<StreamKind>,
    pub(crate) context: Option<ContextFill>,
}

/// The stream a handle names where it is a default one: 0 (NULL) and 1 (`cudaStreamLegacy`)
/// the legacy stream, 2 (`cudaStreamPerThread`) the per-thread one.
#[inline]
pub(crate) fn default_stream(handle: u64) -> Option<StreamKind> {
    match handle {
        0 | 1 => Some(StreamKind::LegacyDefault),
        2 => Some(StreamKind::PerThreadDefault),
        _ => None,
    }
}

/// The stream's kind and the context's filling, as `trace`'s atlas reads a site: a created
/// stream is non-blocking where its real flags have bit 1; the filling compares the declared bit
/// with the stream's.
#[inline]
pub(crate) fn stream_and_context(declared_nb: bool, stream: StreamKind, stream_nb: bool) -> (StreamKind, ContextFill) {
    let context = match (declared_nb, stream_nb) {
        (d, s) if d == s => ContextFill::FromStream,
        (true, false) => ContextFill::DeclaredNonBlocking,
        _ => ContextFill::DeclaredBlocking,
    };
    (stream, context)
}

/// Whether `t` holds; `None` where a fact it reads is unknown.
#[inline]
fn holds(e: &Entry, f: &Facts, t: &Test) -> Option<bool> {
    let (w, h) = (f.width as u64, f.height as u64);
    let src = f.src_step.or(f.dst_step).map(|s| s as u64);
    let dst = f.dst_step.map(|s| s as u64);
    let v = match t.op {
        Op::SrcRowBytesMultiple => (w * e.src_bytes_per_pixel).is_multiple_of(t.arg),
        Op::DstRowBytesMultiple => (w * e.dst_bytes_per_pixel).is_multiple_of(t.arg),
        Op::WidthMultiple => w % t.arg == 0,
        Op::SrcStepMultiple => src? % t.arg == 0,
        Op::DstStepMultiple => dst? % t.arg == 0,
        Op::SrcRowBytesAtLeast => w * e.src_bytes_per_pixel >= t.arg,
        Op::DstRowBytesAtLeast => w * e.dst_bytes_per_pixel >= t.arg,
        Op::WidthAtLeast => w >= t.arg,
        Op::HeightAtLeast => h >= t.arg,
        Op::PixelsAtLeast => w * h >= t.arg,
        Op::DeclaresNonBlocking => f.declared_non_blocking,
        Op::StreamIn => stream_bit(f.stream?) & t.arg != 0,
        Op::ContextIn => context_bit(f.context?) & t.arg != 0,
        Op::SrcRowStartsIn => src_row_starts_in(f.src_addr?, src?, h, t.arg & 0xff, t.arg >> 8),
    };
    Some(v == t.holds)
}

/// Bytes after which where rows start past a multiple of 16 repeats.
const ROW_START_MODULUS: u64 = 16;

/// Whether some row of an image at `addr` with `step` and `height` rows starts `lo..=hi` bytes
/// past a multiple of 16 (the first 16 rows: the offsets repeat after). The atlas measured
/// images at aligned addresses, where this is the step's rows alone
/// (`nppbench_analysis::rules::Feature::SrcRowStartsIn`); here the address counts too.
#[inline]
fn src_row_starts_in(addr: u64, step: u64, height: u64, lo: u64, hi: u64) -> bool {
    (0..height.min(ROW_START_MODULUS)).any(|y| (lo..=hi).contains(&(addr.wrapping_add(y * step) % ROW_START_MODULUS)))
}

/// Whether `rule` says the call has its hazard; `None` where it cannot say.
#[inline]
fn says(e: &Entry, f: &Facts, rule: &Rule) -> Option<bool> {
    match rule {
        Rule::Never => Some(false),
        Rule::Always => Some(true),
        Rule::Unknown => None,
        Rule::When(tests) => {
            let mut all = Some(true);
            for t in tests.iter() {
                match holds(e, f, t) {
                    Some(false) => return Some(false),
                    Some(true) => {}
                    None => all = None,
                }
            }
            all
        }
    }
}

/// The action for a call with facts `f` of a function with rules `e`.
#[inline]
pub(crate) fn evaluate(e: &Entry, f: &Facts) -> u8 {
    if f.width < 0 || f.height < 0 || f.src_step.is_some_and(|s| s < 0) || f.dst_step.is_some_and(|s| s < 0) {
        return action::UNKNOWN_CONFIGURATION;
    }
    let (leak, race, wrong) = (says(e, f, &e.leak), says(e, f, &e.race), says(e, f, &e.wrong));
    let bit = |said: Option<bool>, bit: u8| if said == Some(true) { bit } else { 0 };
    let found = bit(leak, action::LEAK) | bit(race, action::RACE) | bit(wrong, action::WRONG);
    if found != 0 {
        action::REWRITTEN | found
    } else if leak.is_none() || race.is_none() || wrong.is_none() {
        action::UNKNOWN_CONFIGURATION
    } else {
        action::NOT_HAZARDOUS
    }
}

/// The facts of the call at `site` (the stream's real flags asked of the driver where
/// `needs_stream`), and whether the created stream is non-blocking (`None`: a default stream, or
/// unknown).
#[inline]
pub(crate) fn facts(needs_stream: bool, site: &Site<'_>) -> (Facts, Option<bool>) {
    let ctx = site.ctx;
    let declared_nb = ctx.n_stream_flags & 1 == 1;
    let handle = ctx.h_stream as u64;
    let (stream, stream_nb) = match default_stream(handle) {
        Some(k) => (Some(k), Some(false)),
        None if needs_stream => {
            let nb = keeping_errno(|| driver::stream_flags(handle)).map(|f| f & 1 == 1);
            (
                nb.map(|nb| {
                    if nb {
                        StreamKind::NonBlocking
                    } else {
                        StreamKind::Blocking
                    }
                }),
                nb,
            )
        }
        None => (None, None),
    };
    let context = match (stream, stream_nb) {
        (Some(s), Some(nb)) => Some(stream_and_context(declared_nb, s, nb).1),
        _ => None,
    };
    let facts = Facts {
        width: site.roi.width,
        height: site.roi.height,
        src_step: site.src_step,
        dst_step: site.dst_step,
        src_addr: site.images.map(|i| i.src),
        declared_non_blocking: declared_nb,
        stream,
        context,
    };
    let created_nb = if default_stream(handle).is_some() {
        None
    } else {
        stream_nb
    };
    (facts, created_nb)
}

/// The action for the call at `site` under `table`, and the created stream's non-blocking bit
/// where it was asked.
#[inline]
pub(crate) fn decide(table: &Table, site: &Site<'_>) -> (u8, Option<bool>) {
    let Some(version) = active(table) else {
        return (action::NO_KNOWLEDGE, None);
    };
    let Some(Some(e)) = version.functions.get(usize::from(site.symbol)) else {
        return (action::UNKNOWN_FUNCTION, None);
    };
    // A context that already declares non-blocking is what the shield would pass for the leak and
    // the race: only the wrong pixels can be left to end, and the stream's flags are asked only
    // where their rule reads them (a driver call on every call otherwise: 1 µs on an H200).
    if site.ctx.n_stream_flags & 1 == 1 {
        if matches!(e.wrong, Rule::Never) {
            return (action::NOT_HAZARDOUS, None);
        }
        let (f, nb) = facts(e.wrong.needs_stream(), site);
        let a = match says(e, &f, &e.wrong) {
            Some(true) => action::REWRITTEN | action::WRONG,
            Some(false) => action::NOT_HAZARDOUS,
            None => action::UNKNOWN_CONFIGURATION,
        };
        return (a, nb);
    }
    let (f, nb) = facts(e.needs_stream, site);
    (evaluate(e, &f), nb)
}

/// `ctx` declaring `cudaStreamNonBlocking`, every other field as the caller filled it.
#[inline]
pub(crate) fn declared_non_blocking(ctx: &NppStreamContext) -> NppStreamContext {
    NppStreamContext {
        n_stream_flags: ctx.n_stream_flags | 1,
        ..*ctx
    }
}
