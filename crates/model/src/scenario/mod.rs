//! What one measurement does: its axes — the primitive, the image geometry, the stream kind, how
//! the stream context is filled, and (for memory) the threading model — and the two kinds of
//! scenario built from them.

mod context;
mod geometry;
mod stream;
mod threading;

use serde::{Deserialize, Serialize};

pub use context::ContextFill;
pub use geometry::Geometry;
pub use stream::StreamKind;
pub use threading::Threading;

use crate::Primitive;

/// The axes of a scenario, by name, in the order ids, CSV columns and pages use. A new axis is
/// added here (and to the scenario types) and everything keyed by axes follows.
pub const AXES: [&str; 5] = ["primitive", "geometry", "stream", "context", "threading"];

/// One leak probe: calls from a threading model on a stream kind, memory sampled after each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryScenario {
    pub id: String,
    #[serde(default)]
    pub primitive: Primitive,
    pub geometry: Geometry,
    pub stream: StreamKind,
    #[serde(default)]
    pub context: ContextFill,
    pub threading: Threading,
    /// Calls after the warm-up call, at most (a scenario whose class is settled stops sooner).
    pub calls: u32,
    /// Drawn by a matrix's `[[sample]]` to test the leak rules on: measured like any other,
    /// never fitted on. Not an axis (the id does not carry it); absent from run.json when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held_out: bool,
}

impl MemoryScenario {
    pub fn new(
        primitive: Primitive,
        geometry: Geometry,
        stream: StreamKind,
        context: ContextFill,
        threading: Threading,
        calls: u32,
    ) -> Self {
        let mut s = MemoryScenario {
            id: String::new(),
            primitive,
            geometry,
            stream,
            context,
            threading,
            // A pool makes enough calls to tell its class (see `Threading::calls_to_decide`).
            calls: calls.max(threading.calls_to_decide()),
            held_out: false,
        };
        s.id = s.derived_id();
        s
    }

    /// The scenario's axis values, named as [`AXES`] names them.
    pub fn axes(&self) -> [(&'static str, String); 5] {
        [
            (AXES[0], self.primitive.to_string()),
            (AXES[1], self.geometry.key()),
            (AXES[2], self.stream.to_string()),
            (AXES[3], self.context.to_string()),
            (AXES[4], self.threading.to_string()),
        ]
    }

    /// `mem/PRIMITIVE/GEOMETRY/STREAM/CONTEXT/THREADING`: derived from the axes.
    pub fn derived_id(&self) -> String {
        id_of("mem", &self.axes())
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
    #[serde(default)]
    pub context: ContextFill,
}

impl ThroughputScenario {
    pub fn new(primitive: Primitive, geometry: Geometry, stream: StreamKind, context: ContextFill) -> Self {
        let mut s = ThroughputScenario {
            id: String::new(),
            primitive,
            geometry,
            stream,
            context,
        };
        s.id = s.derived_id();
        s
    }

    /// The scenario's axis values, named as [`AXES`] names them (no threading axis).
    pub fn axes(&self) -> [(&'static str, String); 4] {
        [
            (AXES[0], self.primitive.to_string()),
            (AXES[1], self.geometry.key()),
            (AXES[2], self.stream.to_string()),
            (AXES[3], self.context.to_string()),
        ]
    }

    /// `tp/PRIMITIVE/GEOMETRY/STREAM/CONTEXT`: derived from the axes.
    pub fn derived_id(&self) -> String {
        id_of("tp", &self.axes())
    }
}

fn id_of(kind: &str, axes: &[(&'static str, String)]) -> String {
    let mut id = kind.to_owned();
    for (_, v) in axes {
        id.push('/');
        id.push_str(v);
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Primitive = Primitive::CONVERT_8U32F_C1R;

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
        for c in ContextFill::ALL {
            assert_eq!(c.as_str().parse::<ContextFill>().unwrap(), c);
        }
    }

    #[test]
    fn unknown_names_are_rejected_with_the_choices() {
        let err = "pool:0".parse::<Threading>().unwrap_err().to_string();
        assert!(err.contains("pool:N"), "{err}");
        let err = "blockin".parse::<StreamKind>().unwrap_err().to_string();
        assert!(err.contains("non_blocking"), "{err}");
        let err = "zero".parse::<ContextFill>().unwrap_err().to_string();
        assert!(err.contains("npp_get_stream_context"), "{err}");
    }

    #[test]
    fn ids_come_from_every_axis() {
        let g = Geometry::new(P, 31, 31, 32);
        let m = MemoryScenario::new(
            P,
            g,
            StreamKind::Blocking,
            ContextFill::Zeroed,
            Threading::ThreadPerCall,
            8,
        );
        assert_eq!(
            m.id,
            "mem/Convert_8u32f_C1R/31x31-s32-d128/blocking/zeroed/thread_per_call"
        );
        let t = ThroughputScenario::new(P, g, StreamKind::NonBlocking, ContextFill::FromStream);
        assert_eq!(t.id, "tp/Convert_8u32f_C1R/31x31-s32-d128/non_blocking/from_stream");
        assert_eq!(m.axes().map(|(n, _)| n), AXES);
    }
}
