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

use crate::{Geometry, MemoryScenario, ModelError, Primitive, StreamKind, Threading, ThroughputScenario};

/// The built-in matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Every alignment case at the public report's sizes and 1080p, for CI and a first look.
    Quick,
    /// Adds 4K and 8K, more pool sizes, the padded-ROI fix, and longer probes.
    Full,
}

impl Preset {
    pub const ALL: [Preset; 2] = [Preset::Quick, Preset::Full];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Full => "full",
        }
    }

    /// The preset's TOML text: the same format as a custom `--matrix` file.
    pub fn toml(self) -> &'static str {
        match self {
            Preset::Quick => include_str!("../presets/quick.toml"),
            Preset::Full => include_str!("../presets/full.toml"),
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
            .ok_or_else(|| ModelError::invalid(format!("preset {s:?}"), "unknown; use quick or full"))
    }
}

/// How long and how hard each scenario measures, and the guards around it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Calls per memory scenario, after one warm-up call.
    pub calls: u32,
    /// Criterion warm-up per throughput scenario, in milliseconds.
    pub warm_up_ms: u64,
    /// Criterion measurement time per throughput scenario, in milliseconds.
    pub measurement_ms: u64,
    /// Criterion samples per throughput scenario (at least 10).
    pub samples: usize,
    /// Criterion bootstrap resamples.
    pub resamples: usize,
    /// A child probe still running after this long is killed and its scenario recorded as failed.
    pub scenario_timeout_s: u64,
    /// A memory scenario whose process grows by more than this stops, recorded as stopped at budget.
    pub memory_budget_mib: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            calls: 32,
            warm_up_ms: 50,
            measurement_ms: 200,
            samples: 20,
            resamples: 20_000,
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
    warm_up_ms: Option<Spanned<i64>>,
    measurement_ms: Option<Spanned<i64>>,
    samples: Option<Spanned<i64>>,
    resamples: Option<Spanned<i64>>,
    scenario_timeout_s: Option<Spanned<i64>>,
    memory_budget_mib: Option<Spanned<i64>>,
}

/// One `[[geometry]]` table of a matrix file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GeometrySpec {
    width: Spanned<i64>,
    height: Spanned<i64>,
    src_stride: Spanned<i64>,
    dst_stride: Option<Spanned<i64>>,
    /// Also measure the padded-ROI fix of an unaligned width.
    #[serde(default)]
    pad_roi: bool,
    streams: Option<Vec<Spanned<String>>>,
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
    #[serde(default)]
    primitive: Primitive,
    #[serde(default)]
    settings: SettingsSpec,
    streams: Vec<Spanned<String>>,
    threading: Vec<Spanned<String>>,
    #[serde(rename = "geometry")]
    geometries: Vec<GeometrySpec>,
}

/// A matrix expanded into concrete, validated scenarios.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    pub name: String,
    pub description: String,
    pub primitive: Primitive,
    pub settings: Settings,
    pub memory: Vec<MemoryScenario>,
    pub throughput: Vec<ThroughputScenario>,
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
        let primitive = spec.primitive;
        let settings = expand_settings(&loc, &spec.settings)?;
        let streams: Vec<StreamKind> = spec.streams.iter().map(|s| loc.parse(s)).collect::<Result<_, _>>()?;
        let threading: Vec<Threading> = spec.threading.iter().map(|s| loc.parse(s)).collect::<Result<_, _>>()?;
        if spec.geometries.is_empty() {
            return Err(ModelError::invalid(
                path.display().to_string(),
                "the matrix has no [[geometry]] table; add at least one",
            ));
        }

        let mut memory = Vec::new();
        let mut throughput = Vec::new();
        for g in &spec.geometries {
            let max = i64::from(i32::MAX);
            let width = loc.int("width", &g.width, 1, max)?;
            let height = loc.int("height", &g.height, 1, max)?;
            let src_stride = loc.int("src_stride", &g.src_stride, 1, max)?;
            let mut geometry = Geometry::new(primitive, width, height, src_stride);
            if let Some(d) = &g.dst_stride {
                geometry.dst_stride = loc.int("dst_stride", d, 1, max)?;
            }
            geometry
                .validate(primitive)
                .map_err(|e| ModelError::invalid(loc.at(g.width.span()), e.to_string()))?;
            let g_streams = match &g.streams {
                Some(list) => list.iter().map(|s| loc.parse(s)).collect::<Result<Vec<_>, _>>()?,
                None => streams.clone(),
            };
            let g_threading = match &g.threading {
                Some(list) => list.iter().map(|s| loc.parse(s)).collect::<Result<Vec<_>, _>>()?,
                None => threading.clone(),
            };
            let mut geometries = vec![geometry];
            if g.pad_roi {
                geometries.extend(geometry.padded_roi());
            }
            for geometry in geometries {
                if g.throughput {
                    for &stream in &g_streams {
                        throughput.push(ThroughputScenario::new(primitive, geometry, stream));
                    }
                }
                if g.memory {
                    for &t in &g_threading {
                        if t.owns_stream() {
                            memory.push(MemoryScenario::new(
                                primitive,
                                geometry,
                                StreamKind::NonBlocking,
                                t,
                                settings.calls,
                            ));
                            continue;
                        }
                        for &stream in &g_streams {
                            memory.push(MemoryScenario::new(primitive, geometry, stream, t, settings.calls));
                        }
                    }
                }
            }
        }
        let matrix = Matrix {
            name: spec.name,
            description: spec.description,
            primitive,
            settings,
            memory,
            throughput,
        };
        matrix.check_unique_ids(path)?;
        Ok(matrix)
    }

    fn check_unique_ids(&self, path: &Path) -> Result<(), ModelError> {
        let mut seen = BTreeSet::new();
        let ids = self
            .memory
            .iter()
            .map(|s| &s.id)
            .chain(self.throughput.iter().map(|s| &s.id));
        for id in ids {
            if !seen.insert(id) {
                return Err(ModelError::invalid(
                    path.display().to_string(),
                    format!("scenario {id} appears twice; remove the repeated geometry, stream or threading entry"),
                ));
            }
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
}

fn expand_settings(loc: &Locator<'_>, spec: &SettingsSpec) -> Result<Settings, ModelError> {
    let mut s = Settings::default();
    let big = i64::from(u32::MAX);
    if let Some(v) = &spec.calls {
        s.calls = loc.int("calls", v, 1, 1_000_000)?;
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
        for preset in Preset::ALL {
            let m = preset.matrix().unwrap();
            let gs = m.geometries();
            for width_aligned in [false, true] {
                for stride_aligned in [false, true] {
                    for small in [false, true] {
                        assert!(
                            gs.iter().any(|g| g.width_aligned() == width_aligned
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
}
