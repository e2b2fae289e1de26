//! The properties a leak rule is made of: alignments of each row and stride (source and
//! destination apart, in bytes, and the width in pixels), row lengths and heights above or below
//! a threshold, the stream kind, the context filling, the declared flags and the threading model.

use nppbench_model::{ContextFill, StreamKind};

use super::Case;

/// The moduli alignment features test, in bytes (and the width in pixels).
pub const MODULI: [u32; 9] = [2, 4, 8, 16, 32, 64, 128, 256, 512];
/// Images of at least this many pixels are "large".
pub const LARGE_PIXELS: u64 = 1_000_000;

/// A property of a scenario.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Feature {
    /// A source row's bytes (width × the source's bytes per pixel) are a multiple of N.
    SrcRowBytesMultiple(u32),
    /// A destination row's bytes are a multiple of N.
    DstRowBytesMultiple(u32),
    /// The width in pixels is a multiple of N.
    WidthPixelsMultiple(u32),
    SrcStrideMultiple(u32),
    DstStrideMultiple(u32),
    /// A source row has at least N bytes.
    SrcRowBytesAtLeast(u64),
    /// A destination row has at least N bytes.
    DstRowBytesAtLeast(u64),
    /// The width is at least N pixels.
    WidthAtLeast(u64),
    /// The height is at least N rows.
    HeightAtLeast(u64),
    /// At least [`LARGE_PIXELS`] pixels.
    LargeImage,
    /// A new host thread makes each call (the threading model bounds no threads).
    NewThreadPerCall,
    /// The context declares a non-blocking stream.
    DeclaresNonBlocking,
    /// The stream kind is one of these.
    StreamIn(Vec<StreamKind>),
    /// The context is filled one of these ways.
    ContextIn(Vec<ContextFill>),
    /// Every condition of the leak rule but its threading holds: the scenario would leak if a
    /// new thread made each call (a feature of the bounded rule, derived from the leak rule).
    LeaksWithNewThreads(Vec<Literal>),
    /// A bounded set of at least N threads makes the calls (a pool of N or more).
    ThreadsAtLeast(u32),
    /// Some source row starts between `lo` and `hi` bytes (both included) past a multiple of
    /// [`ROW_START_MODULUS`] bytes (the buffer's own start being aligned): where an unaligned
    /// stride puts a row's first byte, which an alignment of the stride alone does not tell.
    SrcRowStartsIn(u32, u32),
}

/// The alignment a source row's start is measured against, in bytes (NPP's 16-byte loads).
pub const ROW_START_MODULUS: u32 = 16;

/// The most offsets one row-start feature spans: NPP 13.0.1's and 13.2.0's wrong pixels follow
/// a source row starting 9 to 11 bytes past a 16-byte boundary (measured on two H200s,
/// `reports/wrong-pixels/`), three offsets.
const ROW_START_SPAN: u32 = 4;

/// Features of where the source rows start: every run of 1 to `ROW_START_SPAN` offsets past
/// [`ROW_START_MODULUS`] (never offset 0, an aligned row); the wrong-pixel rule tries them (a
/// wrong output may follow where a row's first byte lands, not only the stride's alignment).
pub fn row_start_features() -> Vec<Feature> {
    (1..ROW_START_MODULUS)
        .flat_map(|lo| (0..ROW_START_SPAN).map(move |k| (lo, lo + k)))
        .filter(|&(_, hi)| hi < ROW_START_MODULUS)
        .map(|(lo, hi)| Feature::SrcRowStartsIn(lo, hi))
        .collect()
}

/// The numbers a threshold feature compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quantity {
    SrcRowBytes,
    DstRowBytes,
    Width,
    Height,
}

impl Quantity {
    pub(super) const ALL: [Quantity; 4] = [
        Quantity::SrcRowBytes,
        Quantity::DstRowBytes,
        Quantity::Width,
        Quantity::Height,
    ];

    pub(super) fn of(self, c: &Case) -> u64 {
        let g = &c.geometry;
        match self {
            Quantity::SrcRowBytes => u64::from(g.width) * c.primitive.src_bytes_per_pixel(),
            Quantity::DstRowBytes => u64::from(g.width) * c.primitive.dst_bytes_per_pixel(),
            Quantity::Width => u64::from(g.width),
            Quantity::Height => u64::from(g.height),
        }
    }

    pub(super) fn at_least(self, k: u64) -> Feature {
        match self {
            Quantity::SrcRowBytes => Feature::SrcRowBytesAtLeast(k),
            Quantity::DstRowBytes => Feature::DstRowBytesAtLeast(k),
            Quantity::Width => Feature::WidthAtLeast(k),
            Quantity::Height => Feature::HeightAtLeast(k),
        }
    }
}

impl Feature {
    pub fn holds(&self, c: &Case) -> bool {
        let g = &c.geometry;
        let multiple = |value: u64, m: u32| value.is_multiple_of(u64::from(m));
        match self {
            Feature::SrcRowBytesMultiple(m) => multiple(Quantity::SrcRowBytes.of(c), *m),
            Feature::DstRowBytesMultiple(m) => multiple(Quantity::DstRowBytes.of(c), *m),
            Feature::WidthPixelsMultiple(m) => g.width.is_multiple_of(*m),
            Feature::SrcStrideMultiple(m) => g.src_stride.is_multiple_of(*m),
            Feature::DstStrideMultiple(m) => g.dst_stride.is_multiple_of(*m),
            Feature::SrcRowBytesAtLeast(k) => Quantity::SrcRowBytes.of(c) >= *k,
            Feature::DstRowBytesAtLeast(k) => Quantity::DstRowBytes.of(c) >= *k,
            Feature::WidthAtLeast(k) => Quantity::Width.of(c) >= *k,
            Feature::HeightAtLeast(k) => Quantity::Height.of(c) >= *k,
            Feature::LargeImage => g.pixels() >= LARGE_PIXELS,
            Feature::NewThreadPerCall => c.threading.thread_bound().is_none(),
            Feature::DeclaresNonBlocking => c
                .declared_non_blocking
                .unwrap_or_else(|| declares_non_blocking(c.stream, c.context)),
            Feature::StreamIn(set) => set.contains(&c.stream),
            Feature::ContextIn(set) => set.contains(&c.context),
            Feature::LeaksWithNewThreads(rule) => rule
                .iter()
                .filter(|l| !matches!(l.feature, Feature::NewThreadPerCall | Feature::ThreadsAtLeast(_)))
                .all(|l| l.holds_on(c)),
            Feature::ThreadsAtLeast(n) => c.threading.thread_bound().is_some_and(|b| b >= *n),
            Feature::SrcRowStartsIn(lo, hi) => src_row_starts(g).any(|r| (*lo..=*hi).contains(&r)),
        }
    }
}

/// Where each source row starts past a multiple of [`ROW_START_MODULUS`] bytes; the offsets
/// repeat after that many rows.
fn src_row_starts(g: &nppbench_model::Geometry) -> impl Iterator<Item = u32> {
    let rows = g.height.min(ROW_START_MODULUS);
    (0..rows).map(move |y| ((u64::from(y) * u64::from(g.src_stride)) % u64::from(ROW_START_MODULUS)) as u32)
}

/// The `nStreamFlags` a context filled `context` declares for `stream`, where no measurement
/// recorded it: the stream's own flags where the context is filled from the stream (or by NPP,
/// which asks the stream), blocking where it is zeroed or declared blocking.
pub fn declares_non_blocking(stream: StreamKind, context: ContextFill) -> bool {
    match context {
        ContextFill::FromStream | ContextFill::NppGetStreamContext => stream == StreamKind::NonBlocking,
        ContextFill::Zeroed | ContextFill::DeclaredBlocking => false,
        ContextFill::DeclaredNonBlocking => true,
    }
}

/// A feature, or its negation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Literal {
    pub feature: Feature,
    /// `false` for the negation ("the width is not a multiple of 16 bytes").
    pub holds: bool,
}

impl Literal {
    pub fn holds_on(&self, c: &Case) -> bool {
        self.feature.holds(c) == self.holds
    }
}

/// Every subset of `items` that is neither empty nor all of them, smaller subsets first.
fn proper_subsets<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    let n = items.len();
    let mut out: Vec<Vec<T>> = (1..(1u32 << n) - 1)
        .map(|mask| {
            (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| items[i].clone())
                .collect()
        })
        .collect();
    out.sort_by_key(Vec::len);
    out
}

/// The thresholds that can separate `targets` from the other cases on `q`: just below the
/// smallest target value and just above the largest, each halfway to the nearest other value
/// (where there is one), so that a threshold generalises to values the cases did not have.
fn thresholds(q: Quantity, cases: &[&Case], target: impl Fn(&Case) -> bool) -> Vec<u64> {
    let values: Vec<u64> = cases.iter().filter(|c| target(c)).map(|c| q.of(c)).collect();
    let (Some(&lo), Some(&hi)) = (values.iter().min(), values.iter().max()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(below) = cases.iter().map(|c| q.of(c)).filter(|v| *v < lo).max() {
        out.push(below + (lo - below).div_ceil(2));
    }
    if let Some(above) = cases.iter().map(|c| q.of(c)).filter(|v| *v > hi).min() {
        out.push(hi + (above - hi).div_ceil(2));
    }
    out
}

/// The candidate features for these cases, in the order rules prefer them: those derived from
/// another rule, alignments (smaller moduli first), then the threading model, the stream, the
/// flags, the context, row lengths and heights, the image size, and where source rows start.
pub(super) fn candidates(cases: &[&Case], target: impl Fn(&Case) -> bool + Copy, derived: &[Feature]) -> Vec<Feature> {
    // Where a row starts is tried last: a rule names an alignment or a length where that tells
    // the cases apart as well.
    let (last, mut out): (Vec<Feature>, Vec<Feature>) = derived
        .iter()
        .cloned()
        .partition(|f| matches!(f, Feature::SrcRowStartsIn(..)));
    let alignments: [fn(u32) -> Feature; 5] = [
        Feature::SrcRowBytesMultiple,
        Feature::DstRowBytesMultiple,
        Feature::SrcStrideMultiple,
        Feature::DstStrideMultiple,
        Feature::WidthPixelsMultiple,
    ];
    for make in alignments {
        out.extend(MODULI.iter().map(|m| make(*m)));
    }
    out.push(Feature::NewThreadPerCall);
    let mut bounds: Vec<u32> = cases.iter().filter_map(|c| c.threading.thread_bound()).collect();
    bounds.sort_unstable();
    bounds.dedup();
    out.extend(bounds.into_iter().skip(1).map(Feature::ThreadsAtLeast));
    let mut streams: Vec<StreamKind> = cases.iter().map(|c| c.stream).collect();
    streams.sort();
    streams.dedup();
    out.extend(proper_subsets(&streams).into_iter().map(Feature::StreamIn));
    out.push(Feature::DeclaresNonBlocking);
    let mut contexts: Vec<ContextFill> = cases.iter().map(|c| c.context).collect();
    contexts.sort();
    contexts.dedup();
    if contexts.len() <= 6 {
        out.extend(proper_subsets(&contexts).into_iter().map(Feature::ContextIn));
    }
    for q in Quantity::ALL {
        out.extend(thresholds(q, cases, target).into_iter().map(|k| q.at_least(k)));
    }
    out.push(Feature::LargeImage);
    out.extend(last);
    out
}
