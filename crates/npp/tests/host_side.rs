//! The host side of every catalogued function, without a GPU: any matrix a person may write (random
//! widths and heights from 1, strides from the minimum up, every pixel format, stream kind,
//! context filling and threading model, `[[geometry]]` and `[[sample]]` tables) parsed by the real
//! parser, then each scenario's buffers sized, its source patterns made, its expected output
//! computed by the CPU reference and compared. Nothing the matrix accepts may panic; what it
//! refuses (or skips, or measures without) is said with the place and the field.
//!
//! The upload of the sources, NPP's scratch size and the call itself need a device: the GPU
//! smoke run of issue #51 sweeps those; here is everything before and after them.

use std::path::Path;

use nppbench_catalog::{DstShape, Library, Primitive};
use nppbench_model::{ContextFill, Geometry, Matrix, StreamKind, Threading};
use nppbench_npp::{compare, expected_output, source_buffers, wrong_pixels};
use proptest::prelude::*;
use proptest::sample::{select, subsequence};

/// The functions a matrix (or a table) names.
#[derive(Debug, Clone)]
enum Names {
    All,
    Library(Library),
    Rows(Vec<Primitive>),
}

impl Names {
    fn toml(&self) -> String {
        match self {
            Names::All => "\"all\"".into(),
            Names::Library(l) => format!("\"{l}\""),
            Names::Rows(ps) => format!(
                "[{}]",
                ps.iter().map(|p| format!("\"{p}\"")).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// The one function named, where there is one: its strides' minimum is known.
    fn one(&self) -> Option<Primitive> {
        match self {
            Names::Rows(ps) if ps.len() == 1 => Some(ps[0]),
            _ => None,
        }
    }
}

/// A table's strides: `extra` bytes over a row of the pixel format `bpp` (a table of several
/// functions has several minimums; the one row's own where the table names one). `extra` may
/// be negative: a stride short of its row must be refused, not crash.
#[derive(Debug, Clone)]
enum Strides {
    Explicit { src: (u64, i64), dst: Option<(u64, i64)> },
    Aligned { align: u32, extra: u32 },
}

#[derive(Debug, Clone)]
struct Table {
    names: Option<Names>,
    width: u32,
    height: u32,
    strides: Strides,
    pad_roi: bool,
    streams: Option<Vec<StreamKind>>,
    context: Option<Vec<ContextFill>>,
    threading: Option<Vec<Threading>>,
}

/// A `[[sample]]` table: counts, seed and ranges.
#[derive(Debug, Clone)]
struct SampleTable {
    fit: u32,
    held_out: u32,
    seed: u32,
    width: u32,
    height: u32,
    max_stride_align: u32,
}

#[derive(Debug, Clone)]
struct Spec {
    names: Names,
    streams: Vec<StreamKind>,
    context: Vec<ContextFill>,
    threading: Vec<Threading>,
    tables: Vec<Table>,
    sample: Option<SampleTable>,
}

/// Every pixel's bytes the catalogue has, sources and destinations.
fn pixel_bytes() -> Vec<u64> {
    let mut out: Vec<u64> = Primitive::all()
        .flat_map(|p| [p.src_bytes_per_pixel(), p.dst_bytes_per_pixel()])
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn list<T: ToString>(items: &[T]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|t| format!("\"{}\"", t.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn stride(width: u32, (bpp, extra): (u64, i64)) -> i64 {
    (i64::from(width) * bpp as i64 + extra).max(1)
}

impl Spec {
    fn toml(&self) -> String {
        let mut t = format!(
            "name = \"host-side\"\nprimitive = {}\nstreams = {}\ncontext = {}\nthreading = {}\n[settings]\ncalls = 2\n",
            self.names.toml(),
            list(&self.streams),
            list(&self.context),
            list(&self.threading)
        );
        for g in &self.tables {
            t += &format!("[[geometry]]\nwidth = {}\nheight = {}\n", g.width, g.height);
            let one = g.names.as_ref().unwrap_or(&self.names).one();
            match &g.strides {
                Strides::Explicit { src, dst } => {
                    // One function: the minimum is its own row; else the format drawn.
                    let src_bpp = one.map_or(src.0, Primitive::src_bytes_per_pixel);
                    t += &format!("src_stride = {}\n", stride(g.width, (src_bpp, src.1)));
                    if let Some(dst) = dst {
                        let (dst_w, bpp) = one.map_or((g.width, dst.0), |p| {
                            (p.row().dst_size(g.width, g.height).0, p.dst_bytes_per_pixel())
                        });
                        t += &format!("dst_stride = {}\n", stride(dst_w, (bpp, dst.1)));
                    }
                }
                Strides::Aligned { align, extra } => {
                    t += &format!("stride_align = {align}\nstride_extra = {extra}\n");
                }
            }
            t += &format!("pad_roi = {}\n", g.pad_roi);
            if let Some(n) = &g.names {
                t += &format!("primitive = {}\n", n.toml());
            }
            if let Some(s) = &g.streams {
                t += &format!("streams = {}\n", list(s));
            }
            if let Some(c) = &g.context {
                t += &format!("context = {}\n", list(c));
            }
            if let Some(th) = &g.threading {
                t += &format!("threading = {}\n", list(th));
            }
        }
        if let Some(s) = &self.sample {
            t += &format!(
                "[[sample]]\nfit = {}\nheld_out = {}\nseed = {}\nwidth = [1, {}]\nheight = [1, {}]\nmax_stride_align = {}\n",
                s.fit, s.held_out, s.seed, s.width, s.height, s.max_stride_align
            );
        }
        t
    }
}

fn names() -> impl Strategy<Value = Names> {
    let rows: Vec<Primitive> = Primitive::all().collect();
    prop_oneof![
        1 => Just(Names::All),
        1 => select(Library::ALL.to_vec()).prop_map(Names::Library),
        2 => subsequence(rows, 1..=4).prop_map(Names::Rows),
    ]
}

fn threading() -> impl Strategy<Value = Threading> {
    prop_oneof![
        Just(Threading::Single),
        Just(Threading::ThreadPerCall),
        Just(Threading::ThreadPerCallOwnStream),
        (1u32..=4).prop_map(Threading::Pool),
    ]
}

fn some_of<T: Clone + std::fmt::Debug + 'static>(all: &[T]) -> impl Strategy<Value = Vec<T>> + use<T> {
    subsequence(all.to_vec(), 1..=all.len())
}

/// Widths and heights from 1, mostly tiny (one pixel, one row), some a few hundred wide.
fn size(hi: u32) -> impl Strategy<Value = u32> {
    prop_oneof![3 => 1u32..=4, 2 => 1u32..=hi.min(40), 1 => 1u32..=hi]
}

fn strides() -> impl Strategy<Value = Strides> {
    let side = (
        select(pixel_bytes()),
        prop_oneof![4 => 0i64..=2, 3 => 0i64..=64, 1 => -3i64..0],
    );
    prop_oneof![
        (side.clone(), proptest::option::of(side)).prop_map(|(src, dst)| Strides::Explicit { src, dst }),
        (0u32..=9, 0u32..=32).prop_map(|(k, extra)| Strides::Aligned { align: 1 << k, extra }),
    ]
}

fn table() -> impl Strategy<Value = Table> {
    (
        proptest::option::weighted(0.3, names()),
        size(300),
        size(12),
        strides(),
        any::<bool>(),
        proptest::option::weighted(0.2, some_of(&StreamKind::ALL)),
        proptest::option::weighted(0.2, some_of(&ContextFill::ALL)),
        proptest::option::weighted(0.2, proptest::collection::vec(threading(), 1..=2)),
    )
        .prop_map(
            |(names, width, height, strides, pad_roi, streams, context, threading)| Table {
                names,
                width,
                height,
                strides,
                pad_roi,
                streams,
                context,
                threading,
            },
        )
}

fn sample_table() -> impl Strategy<Value = SampleTable> {
    (1u32..=2, 0u32..=1, any::<u32>(), 1u32..=64, 1u32..=6, 0u32..=6).prop_map(
        |(fit, held_out, seed, width, height, k)| SampleTable {
            fit,
            held_out,
            seed,
            width,
            height,
            max_stride_align: 1 << k,
        },
    )
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        names(),
        some_of(&StreamKind::ALL),
        some_of(&ContextFill::ALL),
        proptest::collection::vec(threading(), 1..=3),
        proptest::collection::vec(table(), 1..=3),
        proptest::option::weighted(0.25, sample_table()),
    )
        .prop_map(|(names, streams, context, threading, tables, sample)| Spec {
            names,
            streams,
            context,
            threading,
            tables,
            sample,
        })
}

/// A refusal, a skip or a note is clear: it says where in the file and names the field (or
/// the destination a size gives).
fn is_clear(message: &str) -> bool {
    const FIELDS: [&str; 8] = [
        "primitive",
        "width",
        "height",
        "src_stride",
        "dst_stride",
        "stride_align",
        "stride_extra",
        "destination",
    ];
    message.contains("m.toml") && FIELDS.iter().any(|f| message.contains(f))
}

/// Everything the host does for one scenario before and after the call, checked: the buffers
/// hold what the function reads and writes, the expected output is the destination's size and
/// passes its own comparison, and a changed byte is judged without a panic.
fn host_side(p: Primitive, g: &Geometry, flip: usize) -> Result<(), TestCaseError> {
    let at = format!("{p} at {}", g.label());
    prop_assert!(g.validate(p).is_ok(), "{at}: the matrix gave an invalid geometry");
    let row = p.row();
    let sources = source_buffers(p, g);
    prop_assert_eq!(sources.len(), usize::from(row.sources), "{}", at);
    prop_assert!(sources.iter().all(|s| s.len() as u64 == g.src_bytes()), "{}", at);
    let (dw, dh) = g.dst_size(p);
    let written = match row.dst_shape {
        DstShape::Scalars { count } => 8 * u64::from(count - 1) + row.dst.sample.bytes(),
        _ => u64::from(g.dst_stride) * u64::from(dh - 1) + u64::from(dw) * row.dst.bytes_per_pixel(),
    };
    prop_assert!(
        g.dst_bytes(p) >= written,
        "{at}: a destination of {} bytes, {written} written",
        g.dst_bytes(p)
    );
    let expected = expected_output(p, g, &sources);
    prop_assert_eq!(expected.len() as u64, g.dst_bytes(p), "{}", at);
    let checked = compare(p, g, &expected, &expected).map_err(|e| TestCaseError::fail(format!("{at}: {e}")))?;
    let values = if row.dst_is_image() {
        u64::from(dw) * u64::from(dh)
    } else {
        u64::from(dw)
    };
    prop_assert_eq!(checked.pixels_checked, values, "{}", at);
    prop_assert_eq!(wrong_pixels(p, g, &expected, &expected).count, 0, "{}", at);
    let mut changed = expected.clone();
    changed[flip % expected.len()] ^= 0xFF;
    // A changed output is a measurement, counted and located, never an error; a byte changed
    // anywhere in an exact function's destination (a sample, or outside its ROI) is wrong.
    let judged = compare(p, g, &expected, &changed).map_err(|e| TestCaseError::fail(format!("{at}: {e}")))?;
    if row.tolerance == nppbench_catalog::Tolerance::Exact {
        let w = judged
            .wrong
            .ok_or_else(|| TestCaseError::fail(format!("{at}: a changed byte reads right")))?;
        prop_assert!(w.pixels + w.outside_bytes > 0, "{}: {:?}", at, w);
        let words = nppbench_npp::wrong_words(p, &w);
        prop_assert!(words.contains(&p.npp_name()), "{}: {}", at, words);
    }
    let _ = wrong_pixels(p, g, &expected, &changed);
    Ok(())
}

/// Parses `text` as a matrix and runs the host side of every scenario it accepts.
fn every_scenario(text: &str, flip: usize) -> Result<(), TestCaseError> {
    let m = match Matrix::from_toml(text, Path::new("m.toml")) {
        Ok(m) => m,
        Err(e) => {
            let e = e.to_string();
            prop_assert!(is_clear(&e), "an unclear refusal: {e}\n{text}");
            return Ok(());
        }
    };
    for said in m.skipped.iter().chain(&m.notes) {
        prop_assert!(is_clear(said), "unclear: {said}\n{text}");
    }
    for (p, g) in m.buffers() {
        host_side(p, &g, flip)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_matrix_is_measured_on_the_host_or_refused_clearly(spec in spec(), flip in any::<usize>()) {
        every_scenario(&spec.toml(), flip)?;
    }
}

/// The matrix of the issue: Mean_8u_C1R at 1×100, 3×9 and 1×1 with strides 1 and 3 given to
/// both sides; the probe panicked ("range end index 8 out of range for slice of length 1").
#[test]
fn mean_1x100_at_stride_1_sizes_its_result_by_its_values() {
    let mut text =
        String::from("name = \"m\"\nprimitive = \"Mean_8u_C1R\"\nstreams = [\"blocking\"]\nthreading = [\"single\"]\n");
    for (w, h, s) in [(1, 100, 1), (3, 9, 3), (1, 1, 1), (1, 1, 3)] {
        text += &format!("[[geometry]]\nwidth = {w}\nheight = {h}\nsrc_stride = {s}\ndst_stride = {s}\n");
    }
    let m = Matrix::from_toml(&text, Path::new("m.toml")).unwrap();
    assert_eq!(m.notes.len(), 4, "{:?}", m.notes);
    for (p, g) in m.buffers() {
        assert_eq!(g.dst_bytes(p), 8);
        host_side(p, &g, 0).unwrap();
    }
}

/// Every function at one pixel, one column and a few pixels, at the least strides its rows
/// allow, given to both sides as a new user might.
#[test]
fn every_function_takes_one_pixel_and_tiny_rows_or_refuses_them_clearly() {
    for p in Primitive::all() {
        for (w, h) in [(1u32, 1u32), (1, 100), (3, 9), (2, 1)] {
            let s = u64::from(w) * p.src_bytes_per_pixel();
            let text = format!(
                "name = \"m\"\nprimitive = \"{p}\"\nstreams = [\"blocking\"]\nthreading = [\"single\"]\n[[geometry]]\nwidth = {w}\nheight = {h}\nsrc_stride = {s}\ndst_stride = {s}\n"
            );
            every_scenario(&text, 0).unwrap_or_else(|e| panic!("{p} at {w}x{h}: {e}"));
        }
    }
}
