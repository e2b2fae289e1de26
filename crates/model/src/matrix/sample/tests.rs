//! `[[sample]]` tables: the draw is fixed by the file, strides vary apart, held-out scenarios are
//! counted exactly and never repeat another, mistakes are located; old run.json files read.

use std::collections::BTreeSet;
use std::path::Path;

use crate::{ContextFill, Matrix, MemoryScenario, ModelError, Primitive, RunFile, StreamKind, Threading};

fn parse(text: &str) -> Result<Matrix, ModelError> {
    Matrix::from_toml(text, Path::new("m.toml"))
}

/// A matrix with one sample table; `extra` is added to the table.
fn sample(extra: &str) -> String {
    format!(
        "name = \"t\"\nprimitive = \"Copy_8u_C1R\"\nstreams = [\"blocking\", \"non_blocking\"]\nthreading = [\"thread_per_call\", \"single\"]\n[[sample]]\nfit = 40\nheld_out = 12\nseed = 7\n{extra}"
    )
}

fn drawn(m: &Matrix) -> Vec<&MemoryScenario> {
    m.memory.iter().collect()
}

#[test]
fn the_same_file_draws_the_same_scenarios() {
    let a = parse(&sample("")).unwrap();
    let b = parse(&sample("")).unwrap();
    assert_eq!(a, b);
    // Pinned, so that a change of the generator (or of its seeding) on any machine fails here.
    assert_eq!(a.memory[0].id, PINNED_FIRST_ID);
}

const PINNED_FIRST_ID: &str = "mem/Copy_8u_C1R/3397x88-s3400-d3408/blocking/from_stream/thread_per_call";

#[test]
fn a_different_seed_draws_other_scenarios() {
    let a = parse(&sample("")).unwrap();
    let b = parse(&sample("").replace("seed = 7", "seed = 8")).unwrap();
    let ids = |m: &Matrix| m.memory.iter().map(|s| s.id.clone()).collect::<BTreeSet<_>>();
    assert!(ids(&a).intersection(&ids(&b)).count() < 5);
}

#[test]
fn adding_a_primitive_leaves_the_others_draws_alone() {
    let one = parse(&sample("")).unwrap();
    let two = parse(&sample("").replace("\"Copy_8u_C1R\"", "[\"Convert_8u32f_C1R\", \"Copy_8u_C1R\"]")).unwrap();
    let copy: Vec<_> = two
        .memory
        .iter()
        .filter(|s| s.primitive.name() == "Copy_8u_C1R")
        .collect();
    assert_eq!(copy, drawn(&one));
    assert_eq!(two.memory.len(), 2 * one.memory.len());
}

#[test]
fn source_and_destination_strides_are_drawn_apart() {
    // Copy's source and destination rows have the same bytes: a grid's strides are always equal.
    let m = parse(&sample("")).unwrap();
    let g: Vec<_> = m.memory.iter().map(|s| s.geometry).collect();
    assert!(g.iter().any(|g| g.src_stride % 64 == 0 && g.dst_stride % 64 != 0));
    assert!(g.iter().any(|g| g.src_stride % 64 != 0 && g.dst_stride % 64 == 0));
    assert!(g.iter().any(|g| g.src_stride != g.dst_stride));
    // Strides on both sides of every alignment up to the largest.
    for align in [2, 4, 8, 16, 32, 64, 128, 256, 512] {
        assert!(g.iter().any(|g| g.src_stride % align == 0), "{align}");
        assert!(g.iter().any(|g| g.src_stride % align != 0), "{align}");
    }
    assert!(
        g.iter()
            .all(|g| g.src_stride >= g.width && g.src_stride <= g.width.next_multiple_of(512) + 3 * 512)
    );
}

#[test]
fn widths_and_heights_stay_in_their_ranges_and_go_below_192() {
    let m = parse(&sample("")).unwrap();
    let g: Vec<_> = m.memory.iter().map(|s| s.geometry).collect();
    assert!(g.iter().any(|g| g.width < 192));
    assert!(g.iter().any(|g| g.width > 2048));
    assert!(
        g.iter()
            .all(|g| (1..=4096).contains(&g.width) && (1..=256).contains(&g.height))
    );
    let m = parse(&sample("width = [8, 9]\nheight = [3, 3]")).unwrap();
    assert!(
        m.memory
            .iter()
            .all(|s| (8..=9).contains(&s.geometry.width) && s.geometry.height == 3)
    );
}

#[test]
fn held_out_and_leak_prone_counts_are_exact_per_primitive() {
    let m = parse(&sample("").replace("\"Copy_8u_C1R\"", "[\"Copy_8u_C1R\", \"Transpose_8u_C1R\"]")).unwrap();
    for p in &m.primitives {
        let mine: Vec<_> = m.memory.iter().filter(|s| s.primitive == *p).collect();
        assert_eq!(mine.len(), 52, "{p}");
        assert_eq!(mine.iter().filter(|s| s.held_out).count(), 12, "{p}");
        let prone = |s: &&&MemoryScenario| {
            (s.stream, s.context, s.threading)
                == (StreamKind::Blocking, ContextFill::FromStream, Threading::ThreadPerCall)
        };
        // Half of each group, at least (a random pick may land on the first items too).
        assert!(mine.iter().filter(|s| s.held_out).filter(prone).count() >= 6, "{p}");
        assert!(mine.iter().filter(|s| !s.held_out).filter(prone).count() >= 20, "{p}");
        assert!(
            mine.iter().any(|s| s.held_out && s.threading == Threading::Single),
            "{p}"
        );
        assert!(mine.iter().any(|s| s.stream == StreamKind::NonBlocking), "{p}");
    }
    let all_prone = parse(&sample("leak_prone_share = 1.0")).unwrap();
    assert!(
        all_prone
            .memory
            .iter()
            .all(|s| s.stream == StreamKind::Blocking && s.threading == Threading::ThreadPerCall)
    );
}

/// A space of 4 widths × 2 heights × 4 source × 4 destination strides = 128 geometries, one of
/// them in a grid table too: many draws collide with the grid or with each other.
const CROWDED: &str = "name = \"t\"\nprimitive = \"Copy_8u_C1R\"\nstreams = [\"blocking\"]\nthreading = [\"thread_per_call\"]\n[[geometry]]\nwidth = 2\nheight = 1\nsrc_stride = 2\n[[sample]]\nfit = 30\nheld_out = 30\nseed = 3\nwidth = [1, 4]\nheight = [1, 2]\nmax_stride_align = 1\n";

#[test]
fn no_drawn_scenario_repeats_the_grid_or_another_draw() {
    let m = parse(CROWDED).unwrap();
    assert_eq!(m.memory.len(), 1 + 60, "the dedup dropped a drawn scenario");
    let ids: BTreeSet<_> = m.memory.iter().map(|s| &s.id).collect();
    assert_eq!(ids.len(), m.memory.len());
    let fit: BTreeSet<_> = m.memory.iter().filter(|s| !s.held_out).map(|s| &s.id).collect();
    assert!(m.memory.iter().filter(|s| s.held_out).all(|s| !fit.contains(&s.id)));
    assert_eq!(m.memory.iter().filter(|s| s.held_out).count(), 30);
    // More than the space holds: an error naming the primitive, not a loop or a short sample.
    let err = parse(&CROWDED.replace("fit = 30", "fit = 120"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("m.toml:9:1") && err.contains("no new scenario of Copy_8u_C1R"),
        "{err}"
    );
}

#[test]
fn every_drawn_geometry_suits_its_primitive() {
    // Four-channel formats take whole pixels only, Resize needs a width of 2: redrawn until they fit.
    let text = sample("width = [1, 64]\nmax_stride_align = 4").replace("\"Copy_8u_C1R\"", "\"all\"");
    let m = parse(&text).unwrap();
    assert_eq!(m.primitives.len(), Primitive::all().count());
    for s in &m.memory {
        assert!(s.geometry.validate(s.primitive).is_ok(), "{}", s.id);
    }
    assert!(m.memory.iter().any(|s| s.primitive.row().src.channels == 4));
    let err = parse(&sample("width = [1, 1]").replace("Copy_8u_C1R", "Resize_8u_C1R"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("no new scenario of Resize_8u_C1R in 1000 draws"), "{err}");
}

#[test]
fn the_own_stream_model_draws_non_blocking_streams() {
    let m = parse(&sample("threading = [\"thread_per_call_own_stream\"]")).unwrap();
    assert!(m.memory.iter().all(|s| s.stream == StreamKind::NonBlocking));
}

#[test]
fn mistakes_in_a_sample_are_located() {
    for (extra, at, says) in [
        ("width = [0, 10]", "m.toml:9:10", "width 0 is out of range"),
        ("width = [10, 5]", "m.toml:9:9", "width [10, 5] is empty"),
        (
            "height = [1, 2, 3]",
            "m.toml:9:10",
            "height takes two numbers, [lo, hi], not 3",
        ),
        ("max_stride_align = 48", "m.toml:9:20", "not a power of two"),
        (
            "leak_prone_share = 1.5",
            "m.toml:9:20",
            "leak_prone_share 1.5 is out of range",
        ),
        ("streams = []", "m.toml:5:1", "streams list is empty"),
        ("context = [\"zero\"]", "m.toml:9:12", "unknown; use one of from_stream"),
        ("wdith = [1, 2]", "line 9", "wdith"),
    ] {
        let err = parse(&sample(extra)).unwrap_err().to_string();
        assert!(err.contains(at) && err.contains(says), "{extra}: {err}");
    }
    let err = parse(&sample("").replace("fit = 40", "fit = -1"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("m.toml:6:7") && err.contains("fit -1 is out of range"),
        "{err}"
    );
    let err = parse(&sample("").replace("fit = 40\nheld_out = 12", "held_out = 0"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("m.toml:5:1") && err.contains("draws nothing"), "{err}");
    let err = parse(&sample("").replace("seed = 7\n", "")).unwrap_err().to_string();
    assert!(err.contains("seed"), "{err}");
}

#[test]
fn an_old_run_json_reads_and_a_run_without_samples_writes_no_held_out() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h200-atlas-npp-13.0.1/run.json.gz");
    let run = RunFile::read(&path).unwrap();
    let raw: serde_json::Value = serde_json::from_str(&crate::read_text(&path).unwrap()).unwrap();
    assert!(!run.matrix.memory.is_empty());
    for (s, raw) in run
        .matrix
        .memory
        .iter()
        .zip(raw["matrix"]["memory"].as_array().unwrap())
    {
        assert!(!s.held_out);
        assert_eq!(&serde_json::to_value(s).unwrap(), raw, "written back unchanged");
    }
    let text = serde_json::to_string(&run).unwrap();
    assert!(!text.contains("held_out"));
    // A drawn, held-out scenario says so, and reads back.
    let m = parse(&sample("")).unwrap();
    let held = m.memory.iter().find(|s| s.held_out).unwrap();
    let json = serde_json::to_string(held).unwrap();
    assert!(json.contains("\"held_out\":true"), "{json}");
    assert_eq!(&serde_json::from_str::<MemoryScenario>(&json).unwrap(), held);
}

#[test]
fn the_octave_draw_sees_narrow_rows_short_images_and_rows_around_every_power_of_two() {
    let m =
        parse(&sample("fit_draw = \"octaves\"").replace("fit = 40\nheld_out = 12", "fit = 400\nheld_out = 0")).unwrap();
    let g: Vec<_> = m.memory.iter().map(|s| s.geometry).collect();
    // Twelve width octaves (1, 2–3, … 2048–4095) and nine height octaves: each about equally
    // often among a third of the widths and all the heights.
    for k in 0..12u32 {
        let n = g.iter().filter(|g| g.width.ilog2() == k).count();
        assert!(n >= 12, "width octave {k}: {n}");
    }
    for h in [1, 2] {
        assert!(g.iter().filter(|g| g.height == h).count() >= 20, "height {h}");
    }
    for k in 2..12u32 {
        let p = 1u32 << k;
        assert!(g.iter().any(|g| g.width == p - 1 || g.width == p - 2), "just below {p}");
        assert!(g.iter().any(|g| g.width == p + 1 || g.width == p + 2), "just above {p}");
    }
    let narrow = g.iter().filter(|g| g.width < 64).count();
    assert!(narrow * 4 >= g.len(), "{narrow} of {} below 64 px", g.len());
    // The old draw, kept for the files written before fit_draw, rarely goes there.
    let old = parse(&sample("").replace("fit = 40\nheld_out = 12", "fit = 400\nheld_out = 0")).unwrap();
    let old_narrow = old.memory.iter().filter(|s| s.geometry.width < 64).count();
    assert!(old_narrow * 10 < narrow, "{old_narrow} against {narrow}");
}

#[test]
fn a_log_uniform_held_out_set_is_drawn_apart_from_the_fit() {
    let text = sample("held_out_draw = \"log_uniform\"").replace("fit = 40\nheld_out = 12", "fit = 0\nheld_out = 600");
    let m = parse(&text).unwrap();
    let g: Vec<_> = m.memory.iter().map(|s| s.geometry).collect();
    // log-uniform over 1..=4096: each of the twelve octaves about 1/12 of the draws.
    for k in 0..12u32 {
        let n = g.iter().filter(|g| g.width.ilog2() == k).count();
        assert!((20..=90).contains(&n), "width octave {k}: {n}");
    }
    // Heights uniform: about half are above 128.
    let tall = g.iter().filter(|g| g.height > 128).count();
    assert!((240..=360).contains(&tall), "{tall}");
    // Strides: the row plus up to 512 bytes, or rounded up to a power of two; never below the
    // row, and strides off every alignment as well as on it.
    assert!(
        g.iter()
            .all(|g| g.src_stride >= g.width && g.src_stride <= (g.width + 512).max(g.width.next_multiple_of(512)))
    );
    assert!(g.iter().any(|g| g.src_stride % 2 == 1));
    assert!(g.iter().any(|g| g.src_stride % 128 == 0 && g.width % 128 != 0));
    assert!(g.iter().any(|g| g.src_stride != g.dst_stride));
    // No leak-prone share: the configurations are spread over every list.
    let prone = m
        .memory
        .iter()
        .filter(|s| (s.stream, s.threading) == (StreamKind::Blocking, Threading::ThreadPerCall))
        .count();
    assert!((100..=200).contains(&prone), "{prone} of 600 leak-prone");
    assert!(m.memory.iter().all(|s| s.held_out));
}

#[test]
fn an_unknown_draw_is_named_with_the_ones_there_are() {
    let err = parse(&sample("fit_draw = \"log_uniform\"")).unwrap_err().to_string();
    assert!(
        err.contains("m.toml:9:12") && err.contains("\"uniform_and_aligned\", \"octaves\""),
        "{err}"
    );
    let err = parse(&sample("held_out_draw = \"octaves\"")).unwrap_err().to_string();
    assert!(err.contains("\"like_fit\", \"log_uniform\""), "{err}");
}

/// The wrong-pixel hazard's draw: strides that are not multiples of 2, of 4 and of 8 on purpose,
/// on both sides, every remainder past 8 alike, aligned ones as well, and short images beside
/// tall ones, at every width octave.
#[test]
fn the_unaligned_draw_puts_strides_off_every_small_alignment_and_images_short_and_tall() {
    let m = parse(&sample("fit_draw = \"unaligned\"").replace("fit = 40\nheld_out = 12", "fit = 600\nheld_out = 0"))
        .unwrap();
    let g: Vec<_> = m.memory.iter().map(|s| s.geometry).collect();
    for side in [|g: &crate::Geometry| g.src_stride, |g: &crate::Geometry| g.dst_stride] {
        for r in 1..8u32 {
            let n = g.iter().filter(|g| side(g) % 8 == r).count();
            assert!(n >= 20, "stride remainder {r} past 8: {n}");
        }
        let aligned = g.iter().filter(|g| side(g) % 128 == 0).count();
        assert!(aligned >= 30, "strides a multiple of 128: {aligned}");
    }
    assert!(g.iter().all(|g| g.src_stride >= g.width), "every stride holds its row");
    let short = g.iter().filter(|g| g.height <= 16).count();
    let tall = g.iter().filter(|g| g.height >= 64).count();
    assert!(
        short * 2 >= g.len() && tall >= 60,
        "{short} short, {tall} tall of {}",
        g.len()
    );
    for k in 0..12u32 {
        assert!(g.iter().any(|g| g.width.ilog2() == k), "width octave {k}");
    }
}
