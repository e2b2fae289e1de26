//! What one measurement does: an image geometry, a stream kind and a threading model.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{ModelError, Primitive};

/// The alignment NPP's fast paths care about, in bytes (and pixels, for 8-bit images).
pub(crate) const ALIGNMENT: u32 = 16;

/// The CUDA stream an NPP call is issued on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum StreamKind {
    /// The legacy default stream (the NULL handle), which synchronises with every blocking stream.
    LegacyDefault,
    /// The per-thread default stream (`cudaStreamPerThread`).
    PerThreadDefault,
    /// A stream created with `CU_STREAM_DEFAULT`: blocking with respect to the legacy stream.
    Blocking,
    /// A stream created with `CU_STREAM_NON_BLOCKING`.
    NonBlocking,
}

impl StreamKind {
    pub const ALL: [StreamKind; 4] = [
        StreamKind::LegacyDefault,
        StreamKind::PerThreadDefault,
        StreamKind::Blocking,
        StreamKind::NonBlocking,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StreamKind::LegacyDefault => "legacy_default",
            StreamKind::PerThreadDefault => "per_thread_default",
            StreamKind::Blocking => "blocking",
            StreamKind::NonBlocking => "non_blocking",
        }
    }
}

impl fmt::Display for StreamKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StreamKind {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StreamKind::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| {
            ModelError::invalid(
                format!("stream kind {s:?}"),
                "unknown; use one of legacy_default, per_thread_default, blocking, non_blocking",
            )
        })
    }
}

/// How host threads issue the calls of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(try_from = "String", into = "String")]
pub enum Threading {
    /// Every call from the thread that set the scenario up.
    Single,
    /// Every call from a new host thread, which exits after its call.
    ThreadPerCall,
    /// Calls handed round-robin to a fixed pool of this many threads.
    Pool(u32),
    /// A new thread per call, each creating (and destroying) its own non-blocking stream.
    ThreadPerCallOwnStream,
}

impl Threading {
    /// Whether the scenario's stream kind is fixed by the threading model itself.
    pub fn owns_stream(self) -> bool {
        matches!(self, Threading::ThreadPerCallOwnStream)
    }

    /// The most distinct threads this model ever calls from, or `None` when unbounded.
    pub fn thread_bound(self) -> Option<u32> {
        match self {
            Threading::Single => Some(1),
            Threading::Pool(n) => Some(n),
            Threading::ThreadPerCall | Threading::ThreadPerCallOwnStream => None,
        }
    }

    /// The family the report groups by: pool sizes share one.
    pub fn family(self) -> &'static str {
        match self {
            Threading::Single => "single",
            Threading::ThreadPerCall => "thread_per_call",
            Threading::Pool(_) => "pool",
            Threading::ThreadPerCallOwnStream => "thread_per_call_own_stream",
        }
    }
}

impl fmt::Display for Threading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Threading::Pool(n) => write!(f, "pool:{n}"),
            other => f.write_str(other.family()),
        }
    }
}

impl FromStr for Threading {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || {
            ModelError::invalid(
                format!("threading model {s:?}"),
                "unknown; use one of single, thread_per_call, pool:N (N ≥ 1), thread_per_call_own_stream",
            )
        };
        match s {
            "single" => Ok(Threading::Single),
            "thread_per_call" => Ok(Threading::ThreadPerCall),
            "thread_per_call_own_stream" => Ok(Threading::ThreadPerCallOwnStream),
            _ => {
                let n = s.strip_prefix("pool:").ok_or_else(unknown)?;
                match n.parse::<u32>() {
                    Ok(n) if n >= 1 => Ok(Threading::Pool(n)),
                    _ => Err(unknown()),
                }
            }
        }
    }
}

impl TryFrom<String> for Threading {
    type Error = ModelError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Threading> for String {
    fn from(t: Threading) -> String {
        t.to_string()
    }
}

/// The image a call converts: its region of interest and the row strides of both buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Geometry {
    /// Region-of-interest width, in pixels.
    pub width: u32,
    /// Region-of-interest height, in rows.
    pub height: u32,
    /// Source row stride, in bytes.
    pub src_stride: u32,
    /// Destination row stride, in bytes.
    pub dst_stride: u32,
    /// Set when this is the padded-ROI fix of an unaligned width: the width it was rounded up from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padded_from: Option<u32>,
}

impl Geometry {
    /// A geometry whose destination stride mirrors the source's (`dst_bytes_per_pixel × src_stride`).
    pub fn new(primitive: Primitive, width: u32, height: u32, src_stride: u32) -> Self {
        let dst_stride = u32::try_from(u64::from(src_stride) * primitive.dst_bytes_per_pixel()).unwrap_or(u32::MAX);
        Geometry {
            width,
            height,
            src_stride,
            dst_stride,
            padded_from: None,
        }
    }

    pub fn width_aligned(&self) -> bool {
        self.width % ALIGNMENT == 0
    }

    pub fn src_stride_aligned(&self) -> bool {
        self.src_stride % ALIGNMENT == 0
    }

    /// The padded-ROI fix: the width rounded up to a multiple of 16 inside the same stride, if
    /// the width is unaligned and the stride has room for it.
    pub fn padded_roi(&self) -> Option<Geometry> {
        if self.width_aligned() {
            return None;
        }
        let padded = self.width.div_ceil(ALIGNMENT) * ALIGNMENT;
        let fits_dst = u64::from(self.dst_stride) >= u64::from(padded) * 4;
        (padded <= self.src_stride && fits_dst).then_some(Geometry {
            width: padded,
            padded_from: Some(self.width),
            ..*self
        })
    }

    /// A short stable label, `31x31 s32/128` (`+pad` for the padded-ROI fix).
    pub fn label(&self) -> String {
        let pad = if self.padded_from.is_some() { " pad" } else { "" };
        format!(
            "{}x{} s{}/{}{pad}",
            self.width, self.height, self.src_stride, self.dst_stride
        )
    }

    /// The id fragment used in scenario ids: no spaces or slashes.
    pub fn key(&self) -> String {
        let pad = match self.padded_from {
            Some(w) => format!("-pad{w}"),
            None => String::new(),
        };
        format!(
            "{}x{}-s{}-d{}{pad}",
            self.width, self.height, self.src_stride, self.dst_stride
        )
    }

    /// Source buffer size in bytes.
    pub fn src_bytes(&self) -> u64 {
        u64::from(self.src_stride) * u64::from(self.height)
    }

    /// Destination buffer size in bytes.
    pub fn dst_bytes(&self) -> u64 {
        u64::from(self.dst_stride) * u64::from(self.height)
    }

    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// Checks what NPP needs of a geometry before any GPU work: sizes at least 1, strides that
    /// hold a row, everything within NPP's `int` arguments.
    pub fn validate(&self, primitive: Primitive) -> Result<(), ModelError> {
        let ctx = || format!("geometry {}", self.label());
        for (name, v) in [
            ("width", self.width),
            ("height", self.height),
            ("src_stride", self.src_stride),
            ("dst_stride", self.dst_stride),
        ] {
            if v == 0 {
                return Err(ModelError::invalid(
                    ctx(),
                    format!("{name} is 0; it must be at least 1"),
                ));
            }
            if v > i32::MAX as u32 {
                return Err(ModelError::invalid(
                    ctx(),
                    format!("{name} {v} exceeds NPP's limit of {}", i32::MAX),
                ));
            }
        }
        let src_row = u64::from(self.width) * primitive.src_bytes_per_pixel();
        if u64::from(self.src_stride) < src_row {
            return Err(ModelError::invalid(
                ctx(),
                format!(
                    "src_stride {} is smaller than a source row ({src_row} bytes = width {} × {})",
                    self.src_stride,
                    self.width,
                    primitive.src_bytes_per_pixel()
                ),
            ));
        }
        let dst_row = u64::from(self.width) * primitive.dst_bytes_per_pixel();
        if u64::from(self.dst_stride) < dst_row {
            return Err(ModelError::invalid(
                ctx(),
                format!(
                    "dst_stride {} is smaller than a destination row ({dst_row} bytes = width {} × {})",
                    self.dst_stride,
                    self.width,
                    primitive.dst_bytes_per_pixel()
                ),
            ));
        }
        Ok(())
    }
}

/// One leak probe: calls from a threading model on a stream kind, memory sampled after each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryScenario {
    pub id: String,
    #[serde(default)]
    pub primitive: Primitive,
    pub geometry: Geometry,
    pub stream: StreamKind,
    pub threading: Threading,
    /// Calls after the warm-up call.
    pub calls: u32,
}

impl MemoryScenario {
    pub fn new(primitive: Primitive, geometry: Geometry, stream: StreamKind, threading: Threading, calls: u32) -> Self {
        let id = format!("mem/{}/{stream}/{threading}", geometry.key());
        MemoryScenario {
            id,
            primitive,
            geometry,
            stream,
            threading,
            calls,
        }
    }
}

/// One throughput measurement: a geometry on a stream kind, timed with CUDA events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThroughputScenario {
    pub id: String,
    #[serde(default)]
    pub primitive: Primitive,
    pub geometry: Geometry,
    pub stream: StreamKind,
}

impl ThroughputScenario {
    pub fn new(primitive: Primitive, geometry: Geometry, stream: StreamKind) -> Self {
        ThroughputScenario {
            id: format!("tp/{}/{stream}", geometry.key()),
            primitive,
            geometry,
            stream,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threading_round_trips_through_its_name() {
        for t in [
            Threading::Single,
            Threading::ThreadPerCall,
            Threading::Pool(8),
            Threading::ThreadPerCallOwnStream,
        ] {
            assert_eq!(t.to_string().parse::<Threading>().unwrap(), t);
        }
    }

    #[test]
    fn unknown_names_are_rejected_with_the_choices() {
        let err = "pool:0".parse::<Threading>().unwrap_err().to_string();
        assert!(err.contains("pool:N"), "{err}");
        let err = "blockin".parse::<StreamKind>().unwrap_err().to_string();
        assert!(err.contains("non_blocking"), "{err}");
    }

    #[test]
    fn stride_smaller_than_row_is_rejected() {
        let p = Primitive::Convert8u32fC1;
        let g = Geometry::new(p, 31, 31, 30);
        let err = g.validate(p).unwrap_err().to_string();
        assert!(
            err.contains("src_stride 30 is smaller than a source row (31 bytes"),
            "{err}"
        );
        let g = Geometry {
            dst_stride: 120,
            ..Geometry::new(p, 31, 31, 32)
        };
        let err = g.validate(p).unwrap_err().to_string();
        assert!(err.contains("dst_stride 120"), "{err}");
    }

    #[test]
    fn zero_size_is_rejected() {
        let p = Primitive::Convert8u32fC1;
        let err = Geometry::new(p, 0, 4, 16).validate(p).unwrap_err().to_string();
        assert!(err.contains("width is 0"), "{err}");
    }

    #[test]
    fn padded_roi_rounds_width_up_inside_the_stride() {
        let p = Primitive::Convert8u32fC1;
        let g = Geometry::new(p, 31, 31, 32);
        let padded = g.padded_roi().unwrap();
        assert_eq!(
            (padded.width, padded.src_stride, padded.padded_from),
            (32, 32, Some(31))
        );
        assert!(Geometry::new(p, 32, 32, 32).padded_roi().is_none());
        // No room in the stride: 1919 rounds to 1920 > 1919.
        assert!(Geometry::new(p, 1919, 4, 1919).padded_roi().is_none());
    }
}
