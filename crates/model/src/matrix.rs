//! Matrices of scenarios: the built-in presets and custom matrices read from TOML.
//!
//! A [`MatrixSpec`] is what a person writes (geometries, stream kinds, threading models,
//! settings); [`Matrix`] is its expansion into concrete scenarios, validated and recorded in
//! run.json.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::{ContextFill, Geometry, MemoryScenario, ModelError, Primitive, StreamKind, Threading, ThroughputScenario};

/// The built-in matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Every alignment case at the public report's sizes and 1080p, for CI and a first look.
    Quick,
    /// Adds 4K and 8K, more pool sizes, the padded-ROI fix, and longer probes.
    Full,
    /// Every primitive of the catalogue, swept for the leak rule of each (see `atlas.toml`).
    Atlas,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Quick, Preset::Full, Preset::Atlas];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Full => "full",
            Preset::Atlas => "atlas",
        }
    }

    /// The preset's TOML text: the same format as a custom `--matrix` file.
    pub fn toml(self) -> &'static str {
        match self {
            Preset::Quick => include_str!("../presets/quick.toml"),
            Preset::Full => include_str!("../presets/full.toml"),
            Preset::Atlas => include_str!("../presets/atlas.toml"),
        }
    }

    pub fn matrix(self) -> Result<Matrix, ModelError> {
        Matrix::from_toml(self.toml(), Path::new(&format!("<preset {}>", self.name())))
    }
}

impl std::str::FromStr for Preset {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| ModelError::invalid(format!("preset {s:?}"), "unknown; use quick, full or atlas"))
    }
}

/// How long and how hard each scenario measures, and the guards around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Calls per memory scenario, after one warm-up call: the most a scenario makes.
    pub calls: u32,
    /// Calls a memory scenario makes at least before its class may be settled early (see
    /// `nppbench_stats::settle`); `calls` or more turns early stopping off.
    #[serde(default = "default_min_calls")]
    pub min_calls: u32,
    /// Criterion warm-up per throughput scenario, in milliseconds.
    pub warm_up_ms: u64,
    /// Criterion measurement time per throughput scenario, in milliseconds.
    pub measurement_ms: u64,
    /// Criterion samples per throughput scenario (at least 10).
    pub samples: usize,
    /// Criterion bootstrap resamples.
    pub resamples: usize,
    /// Independent passes over the throughput scenarios, each in a fresh process: the variance
    /// between runs that `compare` tests on.
    #[serde(default = "one")]
    pub repeat: u32,
    /// Also time each throughput scenario with the L2 cache flushed before every call.
    #[serde(default)]
    pub cold: bool,
    /// A child probe still running after this long is killed and its scenario recorded as failed.
    pub scenario_timeout_s: u64,
    /// A memory scenario whose process grows by more than this stops, recorded as stopped at budget.
    pub memory_budget_mib: u64,
}

fn default_min_calls() -> u32 {
    u32::MAX
}

fn one() -> u32 {
    1
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            calls: 32,
            min_calls: 12,
            warm_up_ms: 50,
            measurement_ms: 200,
            samples: 20,
            resamples: 20_000,
            repeat: 1,
            cold: true,
            scenario_timeout_s: 60,
            memory_budget_mib: 4096,
        }
    }
}

/// Settings as written in TOML: every field optional, defaults from [`Settings::default`].
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsSpec {
    calls: Option<Spanned<i64>>,
    min_calls: Option<Spanned<i64>>,
    warm_up_ms: Option<Spanned<i64>>,
    measurement_ms: Option<Spanned<i64>>,
    samples: Option<Spanned<i64>>,
    resamples: Option<Spanned<i64>>,
    repeat: Option<Spanned<i64>>,
    cold: Option<bool>,
    scenario_timeout_s: Option<Spanned<i64>>,
    memory_budget_mib: Option<Spanned<i64>>,
}

/// A list that may be written as one value: `primitive = "Copy_8u_C1R"` or `primitive = [...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Names {
    One(String),
    Many(Vec<String>),
}

/// Such a list with where it was written (its items share the list's position in messages).
type OneOrMany = Spanned<Names>;

fn items(spec: &OneOrMany) -> Vec<&str> {
    match spec.get_ref() {
        Names::One(v) => vec![v.as_str()],
        Names::Many(v) => v.iter().map(String::as_str).collect(),
    }
}

/// One `[[geometry]]` table of a matrix file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GeometrySpec {
    width: Spanned<i64>,
    height: Spanned<i64>,
    /// The source row stride in bytes, as given (the destination's keeps its padding in pixels).
    src_stride: Option<Spanned<i64>>,
    dst_stride: Option<Spanned<i64>>,
    /// Instead of `src_stride`: each row's bytes rounded up to a multiple of this, for every
    /// pixel format alike, plus `stride_extra` bytes.
    stride_align: Option<Spanned<i64>>,
    stride_extra: Option<Spanned<i64>>,
    /// Also measure the padded-ROI fix of an unaligned width.
    #[serde(default)]
    pad_roi: bool,
    primitive: Option<OneOrMany>,
    streams: Option<Vec<Spanned<String>>>,
    /// The stream kinds timed for throughput, when fewer than `streams`.
    throughput_streams: Option<Vec<Spanned<String>>>,
    context: Option<Vec<Spanned<String>>>,
    threading: Option<Vec<Spanned<String>>>,
    #[serde(default = "yes")]
    memory: bool,
    #[serde(default = "yes")]
    throughput: bool,
}

fn yes() -> bool {
    true
}

/// A matrix as a person writes it in TOML (see `crates/model/presets/*.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    name: String,
    #[serde(default)]
    description: String,
    /// Row names (`Convert_8u32f_C1R`, or NVIDIA's `nppiConvert_8u32f_C1R_Ctx`), library names
    /// (`nppif`: its rows), or `all`; default `Convert_8u32f_C1R`.
    primitive: Option<OneOrMany>,
    #[serde(default)]
    settings: SettingsSpec,
    streams: Vec<Spanned<String>>,
    /// The stream kinds timed for throughput; default `streams`. A geometry's `streams` or
    /// `throughput_streams` overrides it.
    throughput_streams: Option<Vec<Spanned<String>>>,
    /// How the stream context is filled; default `from_stream`.
    context: Option<Vec<Spanned<String>>>,
    threading: Vec<Spanned<String>>,
    #[serde(rename = "geometry")]
    geometries: Vec<GeometrySpec>,
}

/// A matrix expanded into concrete, validated scenarios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    pub name: String,
    pub description: String,
    /// Every primitive the matrix measures, in catalogue order.
    pub primitives: Vec<Primitive>,
    pub settings: Settings,
    pub memory: Vec<MemoryScenario>,
    pub throughput: Vec<ThroughputScenario>,
    /// Geometries a matrix of several primitives gives that some primitive cannot take (a stride
    /// that is not whole pixels, say): not measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

/// Turns a byte span of the source into `path:line:column`.
struct Locator<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Locator<'_> {
    fn at(&self, span: Range<usize>) -> String {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{}:{line}:{column}", self.path.display())
    }

    fn int<T: TryFrom<i64>>(&self, name: &str, v: &Spanned<i64>, min: i64, max: i64) -> Result<T, ModelError> {
        let value = *v.get_ref();
        if value < min || value > max {
            return Err(ModelError::invalid(
                self.at(v.span()),
                format!("{name} {value} is out of range; it must be between {min} and {max}"),
            ));
        }
        T::try_from(value)
            .map_err(|_| ModelError::invalid(self.at(v.span()), format!("{name} {value} is out of range")))
    }

    fn parse<T: std::str::FromStr<Err = ModelError>>(&self, v: &Spanned<String>) -> Result<T, ModelError> {
        v.get_ref().parse().map_err(|e: ModelError| match e {
            ModelError::Invalid { context, message } => {
                ModelError::invalid(format!("{}: {context}", self.at(v.span())), message)
            }
            other => other,
        })
    }

    fn list<T: std::str::FromStr<Err = ModelError>>(&self, v: &[Spanned<String>]) -> Result<Vec<T>, ModelError> {
        v.iter().map(|s| self.parse(s)).collect()
    }

    /// Primitives from names: a row, a library (its rows) or `all`.
    fn primitives(&self, spec: &OneOrMany) -> Result<Vec<Primitive>, ModelError> {
        let mut out = Vec::new();
        for name in items(spec) {
            let found: Vec<Primitive> = if name == "all" {
                Primitive::all().collect()
            } else if let Some(lib) = crate::catalog::Library::ALL.iter().find(|l| l.name() == name) {
                Primitive::all().filter(|p| p.row().library == *lib).collect()
            } else {
                vec![Primitive::from_name(name).ok_or_else(|| {
                    ModelError::invalid(self.at(spec.span()), crate::catalog::unknown_primitive(name))
                })?]
            };
            for p in found {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        Ok(out)
    }
}

/// Where a geometry's strides come from.
enum Strides {
    Explicit { src: u32, dst: Option<u32> },
    Aligned { align: u32, extra: u32 },
}

impl Matrix {
    /// Reads a matrix file.
    pub fn from_file(path: &Path) -> Result<Matrix, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_owned(),
            source,
        })?;
        Matrix::from_toml(&text, path)
    }

    /// Parses and expands a matrix written in TOML; `path` names it in messages.
    pub fn from_toml(text: &str, path: &Path) -> Result<Matrix, ModelError> {
        let spec: MatrixSpec = toml::from_str(text).map_err(|e| ModelError::MatrixSyntax {
            path: PathBuf::from(path),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let loc = Locator { path, text };
        let primitives = match &spec.primitive {
            Some(p) => loc.primitives(p)?,
            None => vec![Primitive::default()],
        };
        let settings = expand_settings(&loc, &spec.settings)?;
        let streams: Vec<StreamKind> = loc.list(&spec.streams)?;
        let throughput_streams: Option<Vec<StreamKind>> =
            spec.throughput_streams.as_deref().map(|l| loc.list(l)).transpose()?;
        let contexts: Vec<ContextFill> = match &spec.context {
            Some(list) => loc.list(list)?,
            None => vec![ContextFill::FromStream],
        };
        let threading: Vec<Threading> = loc.list(&spec.threading)?;
        if spec.geometries.is_empty() {
            return Err(ModelError::invalid(
                path.display().to_string(),
                "the matrix has no [[geometry]] table; add at least one",
            ));
        }

        let mut memory = Vec::new();
        let mut throughput = Vec::new();
        let mut used: Vec<Primitive> = Vec::new();
        let mut skipped = Vec::new();
        for g in &spec.geometries {
            let max = i64::from(i32::MAX);
            let width = loc.int("width", &g.width, 1, max)?;
            let height = loc.int("height", &g.height, 1, max)?;
            let strides = match (&g.src_stride, &g.stride_align) {
                (Some(s), None) => Strides::Explicit {
                    src: loc.int("src_stride", s, 1, max)?,
                    dst: g
                        .dst_stride
                        .as_ref()
                        .map(|d| loc.int("dst_stride", d, 1, max))
                        .transpose()?,
                },
                (None, Some(a)) => Strides::Aligned {
                    align: loc.int("stride_align", a, 1, 1 << 20)?,
                    extra: g
                        .stride_extra
                        .as_ref()
                        .map_or(Ok(0), |e| loc.int("stride_extra", e, 0, 1 << 20))?,
                },
                (Some(s), Some(_)) => {
                    return Err(ModelError::invalid(
                        loc.at(s.span()),
                        "give src_stride or stride_align, not both",
                    ));
                }
                (None, None) => {
                    return Err(ModelError::invalid(
                        loc.at(g.width.span()),
                        "the geometry has no stride: give src_stride (bytes) or stride_align (and stride_extra)",
                    ));
                }
            };
            let g_primitives = match &g.primitive {
                Some(p) => loc.primitives(p)?,
                None => primitives.clone(),
            };
            let g_streams = g
                .streams
                .as_deref()
                .map_or_else(|| Ok(streams.clone()), |l| loc.list(l))?;
            let g_tp_streams: Vec<StreamKind> = match (&g.throughput_streams, &g.streams, &throughput_streams) {
                (Some(l), _, _) => loc.list(l)?,
                (None, Some(_), _) | (None, None, None) => g_streams.clone(),
                (None, None, Some(t)) => t.clone(),
            };
            let g_contexts = g
                .context
                .as_deref()
                .map_or_else(|| Ok(contexts.clone()), |l| loc.list(l))?;
            let g_threading = g
                .threading
                .as_deref()
                .map_or_else(|| Ok(threading.clone()), |l| loc.list(l))?;
            for &primitive in &g_primitives {
                let mut geometry = match strides {
                    Strides::Explicit { src, dst } => {
                        let mut geometry = Geometry::new(primitive, width, height, src);
                        if let Some(dst) = dst {
                            geometry.dst_stride = dst;
                        }
                        geometry
                    }
                    Strides::Aligned { align, extra } => Geometry::aligned(primitive, width, height, align, extra),
                };
                geometry.padded_from = None;
                if let Err(e) = geometry.validate(primitive) {
                    // With several primitives a geometry may suit some only: the others skip it,
                    // and say so.
                    if g_primitives.len() > 1 {
                        skipped.push(format!("{}: {e}", loc.at(g.width.span())));
                        continue;
                    }
                    return Err(ModelError::invalid(loc.at(g.width.span()), e.to_string()));
                }
                if !used.contains(&primitive) {
                    used.push(primitive);
                }
                let mut geometries = vec![geometry];
                if g.pad_roi {
                    geometries.extend(geometry.padded_roi(primitive));
                }
                for geometry in geometries {
                    if g.throughput {
                        for &stream in &g_tp_streams {
                            for &context in &g_contexts {
                                throughput.push(ThroughputScenario::new(primitive, geometry, stream, context));
                            }
                        }
                    }
                    if g.memory {
                        for &t in &g_threading {
                            // The own-stream model makes its own non-blocking streams.
                            let kinds = if t.owns_stream() {
                                vec![StreamKind::NonBlocking]
                            } else {
                                g_streams.clone()
                            };
                            for stream in kinds {
                                for &context in &g_contexts {
                                    memory.push(MemoryScenario::new(
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
        }
        used.sort();
        let mut matrix = Matrix {
            name: spec.name,
            description: spec.description,
            primitives: used,
            settings,
            memory,
            throughput,
            skipped,
        };
        matrix.dedup(path)?;
        Ok(matrix)
    }

    /// Geometry tables may overlap (a sweep of widths and a sweep of streams share the case at
    /// their crossing): a scenario listed twice runs once. Only a matrix that lists nothing new
    /// in a table is an error, since that is a mistake.
    fn dedup(&mut self, path: &Path) -> Result<(), ModelError> {
        let mut seen = BTreeSet::new();
        self.memory.retain(|s| seen.insert(s.id.clone()));
        self.throughput.retain(|s| seen.insert(s.id.clone()));
        if self.memory.is_empty() && self.throughput.is_empty() {
            return Err(ModelError::invalid(
                path.display().to_string(),
                "the matrix has no scenario: give at least one stream kind and threading model",
            ));
        }
        Ok(())
    }

    /// Every distinct geometry of the matrix, in first-seen order.
    pub fn geometries(&self) -> Vec<Geometry> {
        let mut out: Vec<Geometry> = Vec::new();
        let all = self
            .memory
            .iter()
            .map(|s| s.geometry)
            .chain(self.throughput.iter().map(|s| s.geometry));
        for g in all {
            if !out.contains(&g) {
                out.push(g);
            }
        }
        out
    }

    /// Every distinct (primitive, geometry) pair: what the device's free memory must hold.
    pub fn buffers(&self) -> Vec<(Primitive, Geometry)> {
        let mut out: Vec<(Primitive, Geometry)> = Vec::new();
        let all = self
            .memory
            .iter()
            .map(|s| (s.primitive, s.geometry))
            .chain(self.throughput.iter().map(|s| (s.primitive, s.geometry)));
        for pg in all {
            if !out.contains(&pg) {
                out.push(pg);
            }
        }
        out
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Matrix, ModelError> {
        Matrix::from_toml(text, Path::new("m.toml"))
    }

    const SMALL: &str = r#"
name = "t"
streams = ["blocking", "non_blocking"]
threading = ["single", "thread_per_call_own_stream"]
[[geometry]]
width = 31
height = 31
src_stride = 32
pad_roi = true
"#;

    #[test]
    fn expands_geometry_stream_and_threading() {
        let m = parse(SMALL).unwrap();
        // Two geometries (31 and its padded 32) × (single × 2 streams + own-stream × 1).
        assert_eq!(m.memory.len(), 6);
        assert_eq!(m.throughput.len(), 4);
        let own: Vec<_> = m.memory.iter().filter(|s| s.threading.owns_stream()).collect();
        assert!(own.iter().all(|s| s.stream == StreamKind::NonBlocking));
        assert_eq!(m.geometries().len(), 2);
        assert_eq!(m.memory[0].geometry.dst_stride, 128);
        assert_eq!(m.primitives, vec![Primitive::CONVERT_8U32F_C1R]);
    }

    #[test]
    fn primitives_contexts_and_aligned_strides_expand() {
        let text = r#"
name = "t"
primitive = ["Copy_8u_C3R", "nppitc"]
streams = ["blocking"]
context = ["from_stream", "zeroed"]
threading = ["thread_per_call"]
[[geometry]]
width = 255
height = 8
stride_align = 128
stride_extra = 16
"#;
        let m = parse(text).unwrap();
        let names: Vec<&str> = m.primitives.iter().map(|p| p.name()).collect();
        assert!(
            names.contains(&"Copy_8u_C3R") && names.contains(&"Threshold_8u_C1R"),
            "{names:?}"
        );
        assert_eq!(m.memory.len(), m.primitives.len() * 2);
        let copy = m.memory.iter().find(|s| s.primitive.name() == "Copy_8u_C3R").unwrap();
        assert_eq!(copy.geometry.src_stride, 768 + 16);
        assert!(m.memory.iter().any(|s| s.context == ContextFill::Zeroed));
    }

    #[test]
    fn unknown_primitive_names_its_position_and_how_to_list() {
        let text = SMALL.replace("name = \"t\"", "name = \"t\"\nprimitive = \"Convert_8u33f_C1R\"");
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.contains("m.toml:3:13") && err.contains("nppbench primitives"),
            "{err}"
        );
    }

    #[test]
    fn a_geometry_without_a_stride_says_what_to_give() {
        let text = SMALL.replace("src_stride = 32\n", "");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("give src_stride (bytes) or stride_align"), "{err}");
    }

    #[test]
    fn throughput_streams_narrow_what_is_timed() {
        let text = SMALL.replace(
            "threading = [",
            "throughput_streams = [\"non_blocking\"]\nthreading = [",
        );
        let m = parse(&text).unwrap();
        assert_eq!(
            m.throughput.len(),
            2,
            "31 and its padded 32, on the non-blocking stream only"
        );
        assert!(m.throughput.iter().all(|s| s.stream == StreamKind::NonBlocking));
        assert_eq!(m.memory.len(), 6, "memory keeps both stream kinds");
    }

    #[test]
    fn overlapping_tables_run_each_scenario_once() {
        let text = format!("{SMALL}\n[[geometry]]\nwidth = 31\nheight = 31\nsrc_stride = 32\n");
        assert_eq!(parse(&text).unwrap().memory.len(), 6);
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = parse("name = \"x\"\nstreams = [\n").unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn negative_width_names_its_position() {
        let text = SMALL.replace("width = 31", "width = -3");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("m.toml:6:9"), "{err}");
        assert!(err.contains("width -3 is out of range"), "{err}");
    }

    #[test]
    fn unknown_stream_names_its_position() {
        let text = SMALL.replace("\"blocking\",", "\"blockin\",");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("m.toml:3:12"), "{err}");
        assert!(err.contains("legacy_default"), "{err}");
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let text = SMALL.replace("pad_roi = true", "pad_roi = true\nwdith = 3");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("wdith"), "{err}");
    }

    #[test]
    fn short_stride_is_rejected() {
        let text = SMALL.replace("src_stride = 32", "src_stride = 30");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("src_stride 30 is smaller than a source row"), "{err}");
    }

    #[test]
    fn presets_parse_and_cover_every_alignment_case() {
        for preset in [Preset::Quick, Preset::Full] {
            let m = preset.matrix().unwrap();
            let gs = m.geometries();
            for width_aligned in [false, true] {
                for stride_aligned in [false, true] {
                    for small in [false, true] {
                        assert!(
                            gs.iter().any(|g| g.width_aligned(m.primitives[0]) == width_aligned
                                && g.src_stride_aligned() == stride_aligned
                                && (g.width < 100) == small
                                && g.padded_from.is_none()),
                            "{} lacks width_aligned={width_aligned} stride_aligned={stride_aligned} small={small}",
                            preset.name()
                        );
                    }
                }
            }
            assert!(gs.iter().any(|g| g.width == 1920 && g.height == 1080));
            assert!(gs.iter().any(|g| (g.width, g.src_stride) == (31, 32)));
            assert!(gs.iter().any(|g| (g.width, g.height, g.src_stride) == (32, 35, 36)));
        }
        let full = Preset::Full.matrix().unwrap();
        assert!(full.geometries().iter().any(|g| g.width >= 3840));
        assert!(full.geometries().iter().any(|g| g.padded_from.is_some()));
        let pools: BTreeSet<_> = full
            .memory
            .iter()
            .filter_map(|s| match s.threading {
                Threading::Pool(n) => Some(n),
                _ => None,
            })
            .collect();
        assert!(pools.len() >= 2, "{pools:?}");
    }

    #[test]
    fn atlas_sweeps_every_primitive_with_contrast() {
        let m = Preset::Atlas.matrix().unwrap();
        assert_eq!(m.primitives.len(), Primitive::all().count());
        for p in Primitive::all() {
            let mem: Vec<_> = m.memory.iter().filter(|s| s.primitive == p).collect();
            // Widths on both sides of every modulus from 2 to 128.
            for modulus in [2u32, 4, 8, 16, 32, 64, 128] {
                assert!(mem.iter().any(|s| s.geometry.width % modulus == 0), "{p} {modulus}");
                assert!(
                    mem.iter()
                        .any(|s| s.geometry.width % modulus != 0 && s.geometry.width % (modulus / 2) == 0),
                    "{p}: no width that is a multiple of {} but not of {modulus}",
                    modulus / 2
                );
            }
            // Strides on both sides of every modulus a stride of this format can miss (four
            // channels take whole pixels only).
            let row = p.row();
            let unit = if row.src.channels == 4 || row.dst.channels == 4 {
                row.src.bytes_per_pixel().max(row.dst.bytes_per_pixel()) as u32
            } else {
                1
            };
            for modulus in [8u32, 16, 32, 64, 128].into_iter().filter(|m| *m > unit) {
                assert!(
                    mem.iter().any(|s| s.geometry.src_stride % modulus == 0),
                    "{p} stride {modulus}"
                );
                assert!(
                    mem.iter().any(|s| s.geometry.src_stride % modulus != 0),
                    "{p} stride {modulus}"
                );
            }
            for k in StreamKind::ALL {
                assert!(mem.iter().any(|s| s.stream == k), "{p} {k}");
            }
            for c in ContextFill::ALL {
                assert!(mem.iter().any(|s| s.context == c), "{p} {c}");
            }
            assert!(mem.iter().any(|s| matches!(s.threading, Threading::Pool(_))), "{p}");
            assert!(
                mem.iter().any(|s| s.geometry.pixels() >= 1_000_000),
                "{p}: a large image"
            );
            assert!(m.throughput.iter().any(|s| s.primitive == p), "{p}: throughput");
        }
        eprintln!(
            "atlas: {} memory, {} throughput scenarios",
            m.memory.len(),
            m.throughput.len()
        );
    }
}
