//! A matrix as a person writes it in TOML: every table and key a matrix file may hold, with
//! where each value was written (for messages).

use serde::Deserialize;
use toml::Spanned;

/// Settings as written in TOML: every field optional, defaults from [`Settings::default`](crate::Settings::default).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SettingsSpec {
    pub(super) calls: Option<Spanned<i64>>,
    pub(super) min_calls: Option<Spanned<i64>>,
    pub(super) warm_up_ms: Option<Spanned<i64>>,
    pub(super) measurement_ms: Option<Spanned<i64>>,
    pub(super) samples: Option<Spanned<i64>>,
    pub(super) resamples: Option<Spanned<i64>>,
    pub(super) repeat: Option<Spanned<i64>>,
    pub(super) repeat_auto: Option<RepeatAutoSpec>,
    pub(super) cold: Option<bool>,
    pub(super) scenario_timeout_s: Option<Spanned<i64>>,
    pub(super) memory_budget_mib: Option<Spanned<i64>>,
}

/// `repeat_auto = { max_passes = 20, budget_s = 120 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RepeatAutoSpec {
    pub(super) max_passes: Spanned<i64>,
    pub(super) budget_s: Spanned<i64>,
}

/// A list that may be written as one value: `primitive = "Copy_8u_C1R"` or `primitive = [...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Names {
    One(String),
    Many(Vec<String>),
}

/// Such a list with where it was written (its items share the list's position in messages).
pub(super) type OneOrMany = Spanned<Names>;

pub(super) fn items(spec: &OneOrMany) -> Vec<&str> {
    match spec.get_ref() {
        Names::One(v) => vec![v.as_str()],
        Names::Many(v) => v.iter().map(String::as_str).collect(),
    }
}

/// One `[[geometry]]` table of a matrix file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GeometrySpec {
    pub(super) width: Spanned<i64>,
    pub(super) height: Spanned<i64>,
    /// The source row stride in bytes, as given (the destination's keeps its padding in pixels).
    pub(super) src_stride: Option<Spanned<i64>>,
    /// The destination row stride in bytes. A reduction has no destination rows (its values lie
    /// 8 bytes apart): there it is ignored, and the matrix's notes say so; Set has no source:
    /// there it is the one stride, and `src_stride` is ignored.
    pub(super) dst_stride: Option<Spanned<i64>>,
    /// Instead of `src_stride`: each row's bytes rounded up to a multiple of this, for every
    /// pixel format alike, plus `stride_extra` bytes.
    pub(super) stride_align: Option<Spanned<i64>>,
    pub(super) stride_extra: Option<Spanned<i64>>,
    /// Also measure the padded-ROI fix of an unaligned width.
    #[serde(default)]
    pub(super) pad_roi: bool,
    pub(super) primitive: Option<OneOrMany>,
    pub(super) streams: Option<Vec<Spanned<String>>>,
    /// The stream kinds timed for throughput, when fewer than `streams`.
    pub(super) throughput_streams: Option<Vec<Spanned<String>>>,
    pub(super) context: Option<Vec<Spanned<String>>>,
    pub(super) threading: Option<Vec<Spanned<String>>>,
    #[serde(default = "yes")]
    pub(super) memory: bool,
    #[serde(default = "yes")]
    pub(super) throughput: bool,
}

/// One `[[sample]]` table: memory scenarios drawn at random, per primitive, from a seed (see
/// `sample/mod.rs` for the draw).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SampleSpec {
    /// Scenarios per primitive that the leak rules are fitted on.
    pub(super) fit: Option<Spanned<i64>>,
    /// Scenarios per primitive measured in the same run but never fitted on: the rules' test.
    pub(super) held_out: Option<Spanned<i64>>,
    /// The same seed (and file) draws the same scenarios on every machine.
    pub(super) seed: Spanned<i64>,
    /// Widths in pixels, `[lo, hi]` inclusive; default `[1, 4096]`.
    pub(super) width: Option<Spanned<Vec<Spanned<i64>>>>,
    /// Heights in rows, `[lo, hi]` inclusive; default `[1, 256]`.
    pub(super) height: Option<Spanned<Vec<Spanned<i64>>>>,
    /// The largest alignment a stride is rounded up to, in bytes (a power of two); default 512.
    pub(super) max_stride_align: Option<Spanned<i64>>,
    pub(super) primitive: Option<OneOrMany>,
    /// Each list's first item is the leak-prone configuration; default the matrix's lists.
    pub(super) streams: Option<Vec<Spanned<String>>>,
    pub(super) context: Option<Vec<Spanned<String>>>,
    pub(super) threading: Option<Vec<Spanned<String>>>,
    /// The share of draws on the first item of every list; default 0.5.
    pub(super) leak_prone_share: Option<Spanned<f64>>,
    /// How the fitted scenarios' widths and heights are drawn: `uniform_and_aligned` (the
    /// default, as files written before it draw) or `octaves` (see `sample/mod.rs`).
    pub(super) fit_draw: Option<Spanned<String>>,
    /// How the held-out scenarios are drawn: `like_fit` (the default) or `log_uniform`, a
    /// distribution the fit never draws from (see `sample/mod.rs`).
    pub(super) held_out_draw: Option<Spanned<String>>,
}

fn yes() -> bool {
    true
}

/// A matrix as a person writes it in TOML (`nppbench preset NAME` prints one).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    /// Row names (`Convert_8u32f_C1R`, or NVIDIA's `nppiConvert_8u32f_C1R_Ctx`), library names
    /// (`nppif`: its rows), or `all`; default `Convert_8u32f_C1R`. Also read as `primitives`,
    /// the key run.json's matrix lists them under, so that a matrix copied from a run reads back.
    #[serde(alias = "primitives")]
    pub(super) primitive: Option<OneOrMany>,
    #[serde(default)]
    pub(super) settings: SettingsSpec,
    pub(super) streams: Vec<Spanned<String>>,
    /// The stream kinds timed for throughput; default `streams`. A geometry's `streams` or
    /// `throughput_streams` overrides it.
    pub(super) throughput_streams: Option<Vec<Spanned<String>>>,
    /// How the stream context is filled; default `from_stream`.
    pub(super) context: Option<Vec<Spanned<String>>>,
    pub(super) threading: Vec<Spanned<String>>,
    #[serde(rename = "geometry", default)]
    pub(super) geometries: Vec<GeometrySpec>,
    /// Random samples of geometries and axes, drawn after the `[[geometry]]` tables.
    #[serde(rename = "sample", default)]
    pub(super) samples: Vec<Spanned<SampleSpec>>,
}
