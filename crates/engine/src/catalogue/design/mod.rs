//! `call-catalogue --design` (issue #45): a function called at every shape of its design, or of
//! a stranger's draw (`nppbench_analysis::calls::design`), each shape's three questions asked
//! and written as one line; the functions in batches, their unaligned calls alone together
//! (`batch.rs`). A sticky error ends the child after the shape's line, as elsewhere.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use nppbench_analysis::calls::design::{self, Pixels, ShapeLine};
use nppbench_gpu::{Gpu, Stream};
use nppbench_headers::roles::Role;
use nppbench_headers::synth::{CallPlan, Shape};
use nppbench_model::{ContextFill, StreamKind};
use nppbench_npp::{Npp, StreamContext};

use super::{CallError, sticky};

mod batch;
mod point;
mod shape;

pub(crate) use batch::design_from;

/// Which shapes a function is called at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shapes {
    /// Its design: fitted and held-out shapes.
    Design,
    /// A stranger's draw of this many shapes, from this seed.
    Stranger { count: usize, seed: u64 },
}

/// The streams and contexts of the shapes a child has met, made once each.
#[derive(Default)]
pub(crate) struct Contexts {
    made: BTreeMap<(StreamKind, ContextFill), (Stream, StreamContext)>,
}

impl Contexts {
    fn get(
        &mut self,
        gpu: &Gpu,
        npp: &Npp,
        kind: StreamKind,
        fill: ContextFill,
    ) -> Result<&(Stream, StreamContext), CallError> {
        match self.made.entry((kind, fill)) {
            std::collections::btree_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::btree_map::Entry::Vacant(e) => {
                let stream = Stream::new(gpu, kind).map_err(sticky)?;
                let ctx = npp.context(fill, &stream, gpu.props()).map_err(CallError::alive)?;
                Ok(e.insert((stream, ctx)))
            }
        }
    }
}

/// The ROI a function's pixel sizes are read at: square, so that a transpose's destination rows
/// are as long as its source's.
const PROBE: u32 = 64;

/// The pixel sizes of a call planned at a [`PROBE`]-pixel square: its first source's (or in-place
/// image's) and its destination's, one plane's where planar; 0 for a side without an image.
pub(crate) fn pixels(p: &CallPlan) -> Pixels {
    let side = |dst: bool| {
        p.buffers
            .iter()
            .filter(|b| b.image.is_some())
            .find(|b| matches!(b.role, Role::Destination | Role::DestinationPlanes) == dst)
            .map(|b| {
                let im = b.image.expect("filtered on an image");
                let per_pixel = im.row_bytes / u64::from(PROBE);
                (per_pixel as u32, b.elem.bytes() as u32)
            })
            .unwrap_or((0, 0))
    };
    let ((src_bytes_per_pixel, src_sample_bytes), (dst_bytes_per_pixel, dst_sample_bytes)) = (side(false), side(true));
    Pixels {
        src_bytes_per_pixel,
        src_sample_bytes,
        dst_bytes_per_pixel,
        dst_sample_bytes,
    }
}

/// The index the throughput point is told by, past every shape's: a child started past it skips
/// it.
pub(crate) const THROUGHPUT_INDEX: usize = usize::MAX - 1;

/// The shapes a child leaves out, by function and index (their lines written by an earlier
/// child, or lost with it), and the functions it leaves out whole (the rest of each lost with a
/// child that died outside its shapes), as the arguments say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub(crate) shapes: BTreeSet<(usize, usize)>,
    pub(crate) functions: BTreeSet<usize>,
    /// Shapes at unaligned steps a child before called alone and lived through: called whole in
    /// a shared turn.
    pub(crate) alive: BTreeSet<(usize, usize)>,
    /// Of a design resumed: the functions a run stopped in, by symbol, with the shapes and point
    /// their lines hold, left out.
    pub(crate) resumed: super::Resumed,
}

impl Skipped {
    pub(crate) fn given(args: &super::CatalogueCalls) -> Skipped {
        Skipped {
            shapes: args.shapes_done.iter().copied().collect(),
            functions: args.functions_lost.iter().copied().collect(),
            alive: args.shapes_alive.iter().copied().collect(),
            resumed: BTreeMap::new(),
        }
    }

    /// Whether function `i` is left out whole: the child says nothing of it.
    pub(crate) fn function(&self, i: usize) -> bool {
        self.functions.contains(&i)
    }

    /// Whether shape `k` of function `i` is left out.
    pub(crate) fn skips(&self, i: usize, k: usize) -> bool {
        self.function(i) || self.shapes.contains(&(i, k))
    }
}

fn synth_shape(width: u32, height: u32, src_step: Option<u64>, dst_step: Option<u64>) -> Shape {
    Shape {
        width,
        height,
        src_step,
        dst_step,
    }
}

/// A design shape's call shape.
fn at(shape: &design::Shape) -> Shape {
    synth_shape(
        shape.width,
        shape.height,
        shape.src_step.map(u64::from),
        shape.dst_step.map(u64::from),
    )
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// A failed step of a shape, written into its line (`error` where the call itself failed, else
/// `questions_error`); whether the context is dead.
fn failed(line: &mut ShapeLine, e: &CallError) -> bool {
    if line.status.is_none() {
        line.error = Some(e.to_string());
    } else {
        line.questions_error = Some(e.to_string());
    }
    e.is_sticky()
}

/// The steps of a plan's images, in order.
fn steps(p: &CallPlan) -> Vec<u64> {
    p.buffers.iter().filter_map(|b| b.image.map(|im| im.step)).collect()
}

/// The step of a plan's first source (or in-place) image and of its destination, where it has
/// them.
fn image_steps(p: &CallPlan) -> (Option<u32>, Option<u32>) {
    let step = |dst: bool| {
        p.buffers
            .iter()
            .filter(|b| matches!(b.role, Role::Destination | Role::DestinationPlanes) == dst)
            .find_map(|b| b.image.map(|im| im.step as u32))
    };
    (step(false), step(true))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use nppbench_headers::files::Prototypes;
    use nppbench_headers::synth::{MARGIN_BYTES, Sizers, plan};

    use super::*;

    /// The design's aligned steps are those the synthesised calls take, margins included, and the
    /// pixel sizes are read from the plan: AddC_8u_C3RSfs's 3 bytes a pixel, a transpose's
    /// destination as its source, a reduction's none.
    #[test]
    fn a_designs_steps_and_pixels_are_the_plans() {
        assert_eq!(design::MARGINS, 2 * MARGIN_BYTES);
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue/npp-13.0.1.2");
        let prototypes = Prototypes::read(&dir).unwrap();
        let sizers = Sizers::new(&prototypes);
        let rows = nppbench_headers::generate::rows(&prototypes).unwrap();
        let planned = |symbol: &str, width| {
            let row = rows.iter().find(|r| r.symbol == symbol).unwrap();
            let square = plan(
                row,
                &sizers,
                &Shape {
                    width: PROBE,
                    height: PROBE,
                    src_step: None,
                    dst_step: None,
                },
            )
            .unwrap();
            let at = plan(
                row,
                &sizers,
                &Shape {
                    width,
                    height: 7,
                    src_step: None,
                    dst_step: None,
                },
            )
            .unwrap();
            (pixels(&square), image_steps(&at))
        };
        let (px, steps) = planned("nppiAddC_8u_C3RSfs_Ctx", 1918);
        assert_eq!(
            (px.src_bytes_per_pixel, px.src_sample_bytes, px.dst_bytes_per_pixel),
            (3, 1, 3)
        );
        let (s, d) = px.aligned_steps(1918);
        assert_eq!(steps, (Some(s), Some(d)));
        let (px, _) = planned("nppiTranspose_16u_C1R_Ctx", 100);
        assert_eq!((px.src_bytes_per_pixel, px.dst_bytes_per_pixel), (2, 2));
        let (px, steps) = planned("nppiSum_8u_C1R_Ctx", 100);
        assert_eq!((px.src_bytes_per_pixel, px.dst_bytes_per_pixel), (1, 0));
        assert_eq!(steps.1, None);
    }
}
