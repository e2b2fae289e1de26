//! A matrix file's tables expanded into concrete scenarios: the matrix's axes, each
//! `[[geometry]]` table's own, every combination validated; then each `[[sample]]` table's draw.

use std::collections::BTreeSet;

use super::locate::Locator;
use super::sample;
use super::spec::{GeometrySpec, MatrixSpec, SettingsSpec};
use crate::{
    ContextFill, Geometry, Matrix, MemoryScenario, ModelError, Primitive, Settings, StreamKind, Threading,
    ThroughputScenario,
};

/// The axes a geometry table combines: the matrix's, or the table's own where it gives them.
pub(super) struct Axes {
    pub(super) primitives: Vec<Primitive>,
    pub(super) streams: Vec<StreamKind>,
    /// The stream kinds timed for throughput; `None` at the matrix level: the same as `streams`.
    throughput_streams: Option<Vec<StreamKind>>,
    pub(super) contexts: Vec<ContextFill>,
    pub(super) threading: Vec<Threading>,
}

/// Where a geometry's strides come from.
enum Strides {
    Explicit { src: u32, dst: Option<u32> },
    Aligned { align: u32, extra: u32 },
}

/// What the tables expanded into so far.
#[derive(Default)]
struct Scenarios {
    memory: Vec<MemoryScenario>,
    throughput: Vec<ThroughputScenario>,
    /// Primitives with at least one valid geometry.
    used: Vec<Primitive>,
    skipped: Vec<String>,
    notes: Vec<String>,
}

/// Expands a parsed matrix file; the matrix still holds scenarios that tables list twice.
pub(super) fn expand(spec: MatrixSpec, loc: &Locator<'_>) -> Result<Matrix, ModelError> {
    let primitives = match &spec.primitive {
        Some(p) => loc.primitives(p)?,
        None => vec![Primitive::default()],
    };
    let settings = expand_settings(loc, &spec.settings)?;
    let axes = Axes {
        primitives,
        streams: loc.list(&spec.streams)?,
        throughput_streams: spec.throughput_streams.as_deref().map(|l| loc.list(l)).transpose()?,
        contexts: match &spec.context {
            Some(list) => loc.list(list)?,
            None => vec![ContextFill::FromStream],
        },
        threading: loc.list(&spec.threading)?,
    };
    if spec.geometries.is_empty() && spec.samples.is_empty() {
        return Err(ModelError::invalid(
            loc.path.display().to_string(),
            "the matrix has no [[geometry]] or [[sample]] table; add at least one",
        ));
    }
    let mut out = Scenarios::default();
    for g in &spec.geometries {
        out.add_table(g, &axes, &settings, loc)?;
    }
    // Drawn after the grid, so that no drawn scenario is one the grid (or an earlier draw) has.
    let mut taken: BTreeSet<String> = out.memory.iter().map(|s| s.id.clone()).collect();
    for table in &spec.samples {
        let lists = sample::MatrixLists {
            primitives: &axes.primitives,
            streams: &axes.streams,
            contexts: &axes.contexts,
            threading: &axes.threading,
        };
        for s in sample::draw(table, &lists, settings.calls, loc, &mut taken)? {
            if !out.used.contains(&s.primitive) {
                out.used.push(s.primitive);
            }
            out.memory.push(s);
        }
    }
    out.used.sort();
    Ok(Matrix {
        name: spec.name,
        description: spec.description,
        primitives: out.used,
        settings,
        memory: out.memory,
        throughput: out.throughput,
        skipped: out.skipped,
        notes: out.notes,
        shard: None,
    })
}

impl Scenarios {
    /// Every scenario of one `[[geometry]]` table, for each primitive it suits.
    fn add_table(
        &mut self,
        g: &GeometrySpec,
        matrix: &Axes,
        settings: &Settings,
        loc: &Locator<'_>,
    ) -> Result<(), ModelError> {
        let max = i64::from(i32::MAX);
        let width = loc.int("width", &g.width, 1, max)?;
        let height = loc.int("height", &g.height, 1, max)?;
        let strides = strides(g, loc)?;
        let axes = table_axes(g, matrix, loc)?;
        let mut ignored = Ignored::default();
        for &primitive in &axes.primitives {
            let mut geometry = match strides {
                Strides::Explicit { src, dst } => {
                    let mut geometry = Geometry::new(primitive, width, height, src);
                    match dst {
                        Some(_) if Geometry::values_bytes(primitive).is_some() => {
                            ignored.dst_stride.push(primitive);
                        }
                        // Set has no source: the destination's stride given is its one stride.
                        Some(dst) if primitive.row().sources == 0 => {
                            if src != dst {
                                ignored.src_stride.push(primitive);
                            }
                            (geometry.src_stride, geometry.dst_stride) = (dst, dst);
                        }
                        Some(dst) => geometry.dst_stride = dst,
                        None => {}
                    }
                    geometry
                }
                Strides::Aligned { align, extra } => Geometry::aligned(primitive, width, height, align, extra),
            };
            geometry.padded_from = None;
            if let Err(e) = geometry.validate(primitive) {
                // With several primitives a geometry may suit some only: the others skip it,
                // and say so.
                if axes.primitives.len() > 1 {
                    self.skipped.push(format!("{}: {e}", loc.at(g.width.span())));
                    continue;
                }
                return Err(ModelError::invalid(loc.at(g.width.span()), e.to_string()));
            }
            if !self.used.contains(&primitive) {
                self.used.push(primitive);
            }
            let mut geometries = vec![geometry];
            if g.pad_roi {
                geometries.extend(geometry.padded_roi(primitive));
            }
            for geometry in geometries {
                self.push(g, &axes, settings, primitive, geometry);
            }
        }
        self.notes.extend(ignored.notes(g, loc));
        Ok(())
    }

    /// The scenarios of one primitive on one geometry: throughput over stream kinds and contexts,
    /// memory over threading models too.
    fn push(&mut self, g: &GeometrySpec, axes: &Axes, settings: &Settings, primitive: Primitive, geometry: Geometry) {
        if g.throughput {
            for &stream in axes.throughput_streams.as_deref().unwrap_or(&axes.streams) {
                for &context in &axes.contexts {
                    self.throughput
                        .push(ThroughputScenario::new(primitive, geometry, stream, context));
                }
            }
        }
        if g.memory {
            for &t in &axes.threading {
                // The own-stream model makes its own non-blocking streams.
                let kinds = if t.owns_stream() {
                    vec![StreamKind::NonBlocking]
                } else {
                    axes.streams.clone()
                };
                for stream in kinds {
                    for &context in &axes.contexts {
                        self.memory.push(MemoryScenario::new(
                            primitive,
                            geometry,
                            stream,
                            context,
                            t,
                            settings.calls,
                        ));
                    }
                }
            }
        }
    }
}

/// The strides a table gives that some of its functions do not have, by function.
#[derive(Default)]
struct Ignored {
    /// Reductions: their destination is their values, 8 bytes apart.
    dst_stride: Vec<Primitive>,
    /// Set: no source; the `dst_stride` given is its one stride.
    src_stride: Vec<Primitive>,
}

impl Ignored {
    /// One note per stride ignored, where the table wrote it.
    fn notes(&self, g: &GeometrySpec, loc: &Locator<'_>) -> Vec<String> {
        let names = |ps: &[Primitive]| ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ");
        let mut out = Vec::new();
        if let (Some(d), false) = (&g.dst_stride, self.dst_stride.is_empty()) {
            out.push(format!(
                "{}: dst_stride {} is ignored for {}: a reduction's destination is its values, 8 bytes apart, not rows",
                loc.at(d.span()),
                d.get_ref(),
                names(&self.dst_stride)
            ));
        }
        if let (Some(s), false) = (&g.src_stride, self.src_stride.is_empty()) {
            out.push(format!(
                "{}: src_stride {} is ignored for {}: it has no source, and its one stride is the dst_stride given",
                loc.at(s.span()),
                s.get_ref(),
                names(&self.src_stride)
            ));
        }
        out
    }
}

/// A table's strides: `src_stride` (and `dst_stride`), or `stride_align` (and `stride_extra`).
fn strides(g: &GeometrySpec, loc: &Locator<'_>) -> Result<Strides, ModelError> {
    let max = i64::from(i32::MAX);
    match (&g.src_stride, &g.stride_align) {
        (Some(s), None) => Ok(Strides::Explicit {
            src: loc.int("src_stride", s, 1, max)?,
            dst: g
                .dst_stride
                .as_ref()
                .map(|d| loc.int("dst_stride", d, 1, max))
                .transpose()?,
        }),
        (None, Some(a)) => Ok(Strides::Aligned {
            align: loc.int("stride_align", a, 1, 1 << 20)?,
            extra: g
                .stride_extra
                .as_ref()
                .map_or(Ok(0), |e| loc.int("stride_extra", e, 0, 1 << 20))?,
        }),
        (Some(s), Some(_)) => Err(ModelError::invalid(
            loc.at(s.span()),
            "give src_stride or stride_align, not both",
        )),
        (None, None) => Err(ModelError::invalid(
            loc.at(g.width.span()),
            "the geometry has no stride: give src_stride (bytes) or stride_align (and stride_extra)",
        )),
    }
}

/// A table's axes: its own where it gives them, else the matrix's. A table that names its
/// `streams` times those for throughput too, unless it also names `throughput_streams`.
fn table_axes(g: &GeometrySpec, matrix: &Axes, loc: &Locator<'_>) -> Result<Axes, ModelError> {
    let primitives = match &g.primitive {
        Some(p) => loc.primitives(p)?,
        None => matrix.primitives.clone(),
    };
    let streams = g
        .streams
        .as_deref()
        .map_or_else(|| Ok(matrix.streams.clone()), |l| loc.list(l))?;
    let throughput_streams = match (&g.throughput_streams, &g.streams, &matrix.throughput_streams) {
        (Some(l), _, _) => loc.list(l)?,
        (None, Some(_), _) | (None, None, None) => streams.clone(),
        (None, None, Some(t)) => t.clone(),
    };
    Ok(Axes {
        primitives,
        streams,
        throughput_streams: Some(throughput_streams),
        contexts: g
            .context
            .as_deref()
            .map_or_else(|| Ok(matrix.contexts.clone()), |l| loc.list(l))?,
        threading: g
            .threading
            .as_deref()
            .map_or_else(|| Ok(matrix.threading.clone()), |l| loc.list(l))?,
    })
}

/// The `[settings]` table over [`Settings::default`], each number checked against its range.
fn expand_settings(loc: &Locator<'_>, spec: &SettingsSpec) -> Result<Settings, ModelError> {
    let mut s = Settings::default();
    let big = i64::from(u32::MAX);
    if let Some(v) = &spec.calls {
        s.calls = loc.int("calls", v, 1, 1_000_000)?;
    }
    if let Some(v) = &spec.min_calls {
        s.min_calls = loc.int("min_calls", v, 1, 1_000_000)?;
    }
    if let Some(v) = &spec.repeat {
        s.repeat = loc.int("repeat", v, 1, 1000)?;
    }
    if let Some(auto) = &spec.repeat_auto {
        s.repeat_auto = Some(crate::RepeatAuto {
            max_passes: loc.int("repeat_auto.max_passes", &auto.max_passes, i64::from(s.repeat), 1000)?,
            budget_s: loc.int("repeat_auto.budget_s", &auto.budget_s, 1, 86_400)?,
        });
    }
    if let Some(v) = spec.cold {
        s.cold = v;
    }
    if let Some(v) = &spec.warm_up_ms {
        s.warm_up_ms = loc.int("warm_up_ms", v, 1, 600_000)?;
    }
    if let Some(v) = &spec.measurement_ms {
        s.measurement_ms = loc.int("measurement_ms", v, 1, 600_000)?;
    }
    if let Some(v) = &spec.samples {
        s.samples = loc.int("samples", v, 10, 100_000)?;
    }
    if let Some(v) = &spec.resamples {
        s.resamples = loc.int("resamples", v, 100, 10_000_000)?;
    }
    if let Some(v) = &spec.scenario_timeout_s {
        s.scenario_timeout_s = loc.int("scenario_timeout_s", v, 1, 86_400)?;
    }
    if let Some(v) = &spec.memory_budget_mib {
        s.memory_budget_mib = loc.int("memory_budget_mib", v, 1, big)?;
    }
    Ok(s)
}
