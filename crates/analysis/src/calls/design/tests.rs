//! The design's shapes and a stranger's, lines as cases, and rules fitted and scored, on
//! made-up lines (no GPU wrote them).

use super::*;
use nppbench_stats::LeakClass;

const PX: Pixels = Pixels {
    src_bytes_per_pixel: 3,
    src_sample_bytes: 1,
    dst_bytes_per_pixel: 12,
    dst_sample_bytes: 4,
};

/// A function's design: distinct shapes, the fitted ones and the held-out ones, steps never
/// below a row nor off a sample, every stream and context pair and a pool among the fitted.
#[test]
fn a_design_is_distinct_shapes_on_whole_samples() {
    let d = design("nppiFoo_8u32f_C3R_Ctx", &PX);
    let ids: std::collections::BTreeSet<String> = d.iter().map(|s| s.id(&PX)).collect();
    assert_eq!(ids.len(), d.len());
    assert_eq!(d.iter().filter(|s| s.draw == Draw::HeldOut).count(), HELD_OUT);
    assert!(d.iter().filter(|s| s.draw == Draw::Fit).count() >= 40);
    for s in &d {
        let (src, dst) = s.steps(&PX);
        assert!(
            u64::from(src) >= u64::from(s.width) * 3 && u64::from(dst) >= u64::from(s.width) * 12,
            "{s:?}"
        );
        assert!(dst.is_multiple_of(4), "{s:?}");
    }
    assert!(d.iter().any(|s| s.threading == Threading::Pool(2)));
    for (stream, context) in CONFIGURATIONS {
        assert!(
            d.iter()
                .any(|s| s.stream == stream && s.context == context && s.draw == Draw::Fit)
        );
    }
    assert_eq!(
        design("nppiFoo_8u32f_C3R_Ctx", &PX),
        d,
        "the same name draws the same design"
    );
    // The unaligned steps last (a context killed there ends the function's shapes).
    let first_unaligned = d.iter().position(|s| !s.aligned(&PX)).unwrap();
    assert!(d[first_unaligned..].iter().all(|s| !s.aligned(&PX)));
    assert!(d[..first_unaligned].iter().any(|s| s.threading == Threading::Pool(2)));
}

/// A stranger's draw: every stream, context and threading model, widths from 1 pixel, steps on
/// whole samples and never below a row; another seed, another draw.
#[test]
fn a_strangers_draw_spans_every_axis() {
    let d = stranger("nppiFoo_8u32f_C3R_Ctx", &PX, 400, 7);
    assert!(d.iter().all(|s| s.draw == Draw::Stranger));
    for stream in StreamKind::ALL {
        assert!(d.iter().any(|s| s.stream == stream));
    }
    for context in ContextFill::ALL {
        assert!(d.iter().any(|s| s.context == context));
    }
    assert!(d.iter().any(|s| s.width < 8) && d.iter().any(|s| s.width > 1024));
    for s in &d {
        let (src, dst) = s.steps(&PX);
        assert!(
            u64::from(src) >= u64::from(s.width) * 3 && dst.is_multiple_of(4),
            "{s:?}"
        );
    }
    assert_ne!(stranger("nppiFoo_8u32f_C3R_Ctx", &PX, 400, 8), d);
}

/// Made-up lines (no GPU made them): a function that keeps streams on every new thread where its
/// row is not a multiple of 16 pixels and its context declares a blocking stream, races where it
/// leaks and the stream is not the legacy one, and computes other pixels where its source step is
/// odd. Fitted on its design, its rules predict a stranger's draw of the same made-up behaviour.
#[test]
fn rules_fitted_on_a_design_predict_a_strangers_shapes() {
    let made_up = |s: Shape| {
        let (src, _) = s.steps(&PX);
        let blocking = match s.context {
            ContextFill::DeclaredBlocking | ContextFill::Zeroed => true,
            ContextFill::DeclaredNonBlocking => false,
            _ => s.stream != StreamKind::NonBlocking,
        };
        let keeps = !s.width.is_multiple_of(16) && s.width > 16 && blocking;
        let new_threads = s.threading == Threading::ThreadPerCall;
        ShapeLine {
            symbol: "nppiFoo_8u32f_C3R_Ctx".into(),
            shape: Some(s),
            pixels: Some(PX),
            status: Some(0),
            differing_bytes: Some(if src % 2 == 1 { 5 } else { 0 }),
            leak_calls: Some(LEAK_CALLS),
            threads_keeping_streams: Some(match (keeps, new_threads) {
                (false, _) => 0,
                (true, true) => LEAK_CALLS,
                (true, false) => 2,
            }),
            race_rounds: Some(RACE_ROUNDS),
            race_rounds_differing: Some(u32::from(keeps && s.stream != StreamKind::LegacyDefault)),
            ..ShapeLine::default()
        }
    };
    let fitted: Vec<ShapeLine> = design("nppiFoo_8u32f_C3R_Ctx", &PX).into_iter().map(made_up).collect();
    let scored: Vec<ShapeLine> = stranger("nppiFoo_8u32f_C3R_Ctx", &PX, 200, 1)
        .into_iter()
        .map(made_up)
        .collect();
    let (rules, s) = score(&fitted, &scored).unwrap();
    assert_eq!(rules.len(), 1);
    assert!(rules[0].primitive.is_generated());
    assert_eq!(s.leak.1, 200);
    assert_eq!(s.race.1, 200);
    assert_eq!(s.wrong.1, 200);
    for (hazard, pair) in [("leak", s.leak), ("race", s.race), ("wrong", s.wrong)] {
        assert!(Score::percent(pair).unwrap() >= 90.0, "{hazard}: {pair:?} {rules:#?}");
    }
    // Each answer in its width's octave too, the octaves narrowest first.
    let sum = |h: usize| {
        s.by_octave
            .iter()
            .fold((0, 0), |a, (_, t)| (a.0 + t[h].0, a.1 + t[h].1))
    };
    assert_eq!([sum(0), sum(1), sum(2)], [s.leak, s.race, s.wrong]);
    assert!(s.by_octave.windows(2).all(|w| w[0].0 < w[1].0) && s.by_octave.len() > 5);
    assert!(s.by_octave.iter().all(|(o, _)| o.is_power_of_two()));
    // A design that never measured the race answers none of the stranger's races.
    let no_race: Vec<ShapeLine> = fitted
        .iter()
        .map(|l| ShapeLine {
            race_rounds: None,
            race_rounds_differing: None,
            ..l.clone()
        })
        .collect();
    let (_, s) = score(&no_race, &scored).unwrap();
    assert_eq!(s.race, (0, 200));
}

/// A line's hazards: a context killed at the shape is wrong pixels; NPP's refusal judges
/// nothing; a pool's kept streams are bounded, most new threads' a leak.
#[test]
fn a_lines_hazards() {
    let shape = |threading| Shape {
        threading,
        ..prone(1918, 32)
    };
    let line = |threading, keeping| ShapeLine {
        symbol: "nppiFoo_8u32f_C3R_Ctx".into(),
        shape: Some(shape(threading)),
        pixels: Some(PX),
        status: Some(0),
        leak_calls: Some(4),
        threads_keeping_streams: Some(keeping),
        ..ShapeLine::default()
    };
    assert_eq!(line(Threading::ThreadPerCall, 2).class(), Some(LeakClass::Leak));
    assert_eq!(line(Threading::ThreadPerCall, 1).class(), Some(LeakClass::Bounded));
    assert_eq!(line(Threading::Pool(2), 2).class(), Some(LeakClass::Bounded));
    assert_eq!(line(Threading::ThreadPerCall, 0).class(), Some(LeakClass::Flat));
    let faulted = ShapeLine {
        status: None,
        error: Some("sticky: an illegal address".into()),
        ..line(Threading::ThreadPerCall, 0)
    };
    assert_eq!(faulted.wrong(), Some(true));
    let refused = ShapeLine {
        status: Some(-7),
        differing_bytes: Some(0),
        ..line(Threading::ThreadPerCall, 0)
    };
    assert_eq!(refused.wrong(), None);
    let json = serde_json::to_string(&faulted).unwrap();
    assert_eq!(serde_json::from_str::<ShapeLine>(&json).unwrap(), faulted);
}

/// A compact line keeps what its case needs (the same case), and a version's file gives the
/// lines of one function alone, gzip-compressed or not.
#[test]
fn compact_lines_give_the_same_cases_and_are_found_by_function() {
    let line = |symbol: &str, s: Shape| ShapeLine {
        symbol: symbol.into(),
        library: Some("nppial".into()),
        gpu_uuid: Some("GPU-0".into()),
        shape: Some(s),
        pixels: Some(PX),
        status: Some(0),
        error: None,
        differing_bytes: Some(3),
        leak_calls: Some(4),
        threads_keeping_streams: Some(4),
        race_rounds: Some(2),
        race_rounds_differing: Some(1),
        ms: Some(1.5),
        ..ShapeLine::default()
    };
    let shapes = design("nppiFoo_8u32f_C3R_Ctx", &PX);
    let full = line("nppiFoo_8u32f_C3R_Ctx", shapes[3]);
    let compact = full.compact().unwrap();
    assert_eq!(compact.case().unwrap().unwrap().id, full.case().unwrap().unwrap().id);
    assert_eq!(format!("{:?}", compact.case()), format!("{:?}", full.case()));
    assert!(compact.gpu_uuid.is_none() && compact.ms.is_none());
    let dead = ShapeLine {
        error: Some("sticky: an illegal address".into()),
        ..full.clone()
    };
    assert_eq!(dead.compact().unwrap().wrong(), Some(true));
    assert!(ShapeLine::default().compact().is_none());
    let text: String = [
        line("nppiFoo_8u32f_C3R_Ctx", shapes[0]),
        line("nppiFoo_8u32f_C3IR_Ctx", shapes[1]),
        compact,
    ]
    .iter()
    .map(|l| serde_json::to_string(l).unwrap() + "\n")
    .collect();
    assert_eq!(lines_of(text.as_bytes(), "nppiFoo_8u32f_C3R_Ctx").unwrap().len(), 2);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    assert_eq!(lines_of(&gz, "nppiFoo_8u32f_C3IR_Ctx").unwrap().len(), 1);
    assert!(lines_of(&gz, "nppiBar_8u_C1R_Ctx").unwrap().is_empty());
}

/// Made-up lines of two functions as members with an index: each function's lines read through
/// the index alone, the whole file read as every line, a name the index lacks none, and an entry
/// past the bytes an error.
#[test]
fn a_designs_file_reads_one_function_through_its_index() {
    let line = |symbol: &str, s: Shape| ShapeLine {
        symbol: symbol.into(),
        shape: Some(s),
        pixels: Some(PX),
        status: Some(0),
        ..ShapeLine::default()
    };
    let shapes = design("nppiFoo_8u32f_C3R_Ctx", &PX);
    let lines: Vec<ShapeLine> = shapes[..3]
        .iter()
        .map(|s| line("nppiFoo_8u32f_C3R_Ctx", *s))
        .chain(shapes[3..5].iter().map(|s| line("nppiBar_8u32f_C3R_Ctx", *s)))
        .collect();
    let (bytes, index) = members(&lines);
    assert_eq!(index.lines().count(), 2);
    assert_eq!(
        lines_indexed(&bytes, &index, "nppiFoo_8u32f_C3R_Ctx").unwrap(),
        lines[..3]
    );
    assert_eq!(
        lines_indexed(&bytes, &index, "nppiBar_8u32f_C3R_Ctx").unwrap(),
        lines[3..]
    );
    assert!(lines_indexed(&bytes, &index, "nppiBaz_8u_C1R_Ctx").unwrap().is_empty());
    let all: Vec<ShapeLine> = crate::calls::read_lines_of(&bytes).unwrap();
    assert_eq!(all, lines);
    assert_eq!(
        members(&lines),
        (bytes.clone(), index.clone()),
        "the same lines, the same bytes"
    );
    let err = lines_indexed(&bytes[..10], &index, "nppiBar_8u32f_C3R_Ctx").unwrap_err();
    assert!(err.contains("past the file"), "{err}");
}

/// A function with no source image (Set) gets no source steps, and one whose output is no image
/// (a reduction) no destination steps, in its design or a stranger's draw.
#[test]
fn a_side_without_an_image_gets_no_step() {
    let set = Pixels {
        src_bytes_per_pixel: 0,
        src_sample_bytes: 0,
        ..PX
    };
    let reduction = Pixels {
        dst_bytes_per_pixel: 0,
        dst_sample_bytes: 0,
        ..PX
    };
    for s in design("nppiSet_8u_C3R_Ctx", &set)
        .into_iter()
        .chain(stranger("nppiSet_8u_C3R_Ctx", &set, 50, 1))
    {
        assert_eq!(s.src_step, None, "{s:?}");
    }
    for s in
        design("nppiSum_8u_C3R_Ctx", &reduction)
            .into_iter()
            .chain(stranger("nppiSum_8u_C3R_Ctx", &reduction, 50, 1))
    {
        assert_eq!(s.dst_step, None, "{s:?}");
    }
}

/// Made-up lines (no GPU made them): the time of the shapes sums each line's `ms`, that of the
/// shape that left the context dead apart, and the time alone and the wait where lines record
/// them; lines of a build that recorded neither say so (`None`), not zero.
#[test]
fn the_shapes_time_is_summed_where_lines_record_it() {
    let shapes = design("nppiMadeUp_8u32f_C1R_Ctx", &PX);
    let mut lines: Vec<ShapeLine> = shapes
        .iter()
        .take(3)
        .map(|s| ShapeLine {
            ms: Some(100.0),
            ..made_up_line("nppiMadeUp_8u32f_C1R_Ctx", PX, *s, false)
        })
        .collect();
    let before = summary(&lines).unwrap().times;
    assert_eq!(
        (before.own_s, before.faulted_s, before.alone_s, before.wait_s),
        (0.3, 0.0, None, None)
    );
    lines[1].error = Some("sticky: cuCtxSynchronize: CUDA_ERROR_MISALIGNED_ADDRESS".into());
    lines[1].alone_ms = Some(100.0);
    lines[2].alone_ms = Some(20.0);
    lines[0].wait_ms = Some(500.0);
    let t = summary(&lines).unwrap().times;
    assert_eq!(t.faulted_s, 0.1);
    assert!((t.alone_s.unwrap() - 0.12).abs() < 1e-9, "{t:?}");
    assert_eq!(t.wait_s, Some(0.5));
}

/// Made-up lines (no GPU wrote them): a design with a line for every shape is whole; one stopped
/// before its last shape is not, unless the parent wrote a line for that shape (its child died in
/// it) or the function was given up (not planned, or its rest lost with its child).
#[test]
fn a_design_missing_a_shape_is_unfinished_unless_the_shape_was_lost() {
    let px = Pixels {
        src_bytes_per_pixel: 1,
        src_sample_bytes: 1,
        dst_bytes_per_pixel: 4,
        dst_sample_bytes: 4,
    };
    let symbol = "nppiConvert_8u32f_C1R_Ctx";
    let shapes = design(symbol, &px);
    let all: Vec<ShapeLine> = shapes.iter().map(|s| made_up_line(symbol, px, *s, false)).collect();
    assert!(unfinished(&all).is_empty());
    let mut cut = all[..all.len() - 1].to_vec();
    assert_eq!(unfinished(&cut).into_iter().collect::<Vec<_>>(), [symbol]);
    let written = Written {
        shapes: (0..shapes.len() - 1).collect(),
        point: false,
    };
    assert_eq!(unfinished_written(&cut).remove(symbol), Some(written));
    let parents = |shape_index| ShapeLine {
        symbol: symbol.into(),
        ended_process: Some("signal: 9 (SIGKILL)".into()),
        shape_index,
        ..ShapeLine::default()
    };
    cut.push(parents(Some(shapes.len() - 2)));
    assert_eq!(
        unfinished(&cut).len(),
        1,
        "a lost line for another shape is not this one's"
    );
    cut.push(parents(Some(shapes.len() - 1)));
    assert!(unfinished(&cut).is_empty());
    let mut given_up = all[..3].to_vec();
    given_up.push(parents(None));
    assert!(unfinished(&given_up).is_empty());
    assert_eq!(summary(&all[..5]).unwrap().unfinished, 1);
    // Children died in two shapes of one function: one function, two shapes.
    let s = summary(&cut).unwrap();
    assert_eq!((s.ended_process, s.ended_process_shapes), (1, 2));
    let s = summary(&given_up).unwrap();
    assert_eq!((s.ended_process, s.ended_process_shapes), (1, 0));
}
