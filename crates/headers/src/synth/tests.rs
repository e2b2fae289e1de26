//! Calls planned from the committed prototypes of every version: almost every synthesisable
//! function gets a plan, and a few checked by hand get the arguments NPP's documentation asks.

use super::*;

fn version(v: &str) -> Prototypes {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../catalogue")
        .join(v);
    Prototypes::read(&dir).unwrap()
}

const SHAPE: Shape = Shape {
    width: 64,
    height: 32,
    src_step: None,
    dst_step: None,
};

fn planned(p: &Prototypes) -> (Vec<FunctionRow>, Vec<Result<CallPlan, String>>) {
    let rows = crate::generate::rows(p).unwrap();
    let sizers = Sizers::new(p);
    let plans = rows.iter().map(|r| plan(r, &sizers, &SHAPE)).collect();
    (rows, plans)
}

#[test]
fn almost_every_synthesisable_function_of_every_version_is_planned() {
    for v in ["npp-12.2.3.2", "npp-13.0.1.2", "npp-13.2.0.58"] {
        let (rows, plans) = planned(&version(v));
        let synthesisable = rows.iter().filter(|r| r.synthesisable).count();
        let ok = plans.iter().filter(|p| p.is_ok()).count();
        let mut why: std::collections::BTreeMap<String, usize> = Default::default();
        for (r, p) in rows.iter().zip(&plans) {
            if let (true, Err(e)) = (r.synthesisable, p) {
                *why.entry(e.split(':').nth(1).unwrap_or(e).trim().to_owned())
                    .or_default() += 1;
            }
        }
        eprintln!("{v}: {ok} of {synthesisable} synthesisable functions planned; not: {why:?}");
        assert!(ok * 100 >= synthesisable * 95, "{v}: {ok} of {synthesisable}: {why:#?}");
    }
}

fn one(p: &Prototypes, symbol: &str) -> CallPlan {
    let rows = crate::generate::rows(p).unwrap();
    let row = rows.iter().find(|r| r.symbol == symbol).unwrap();
    plan(row, &Sizers::new(p), &SHAPE).unwrap()
}

#[test]
fn a_binary_function_gets_two_sources_a_destination_their_steps_and_a_scale() {
    let p = one(&version("npp-13.0.1.2"), "nppiAdd_8u_C1RSfs_Ctx");
    let abis: Vec<Abi> = p.args.iter().map(|a| a.abi).collect();
    let i32 = Abi::Value(Elem {
        scalar: Scalar::I32,
        lanes: 1,
    });
    assert_eq!(
        abis,
        [
            Abi::Pointer,
            i32,
            Abi::Pointer,
            i32,
            Abi::Pointer,
            i32,
            Abi::Pair,
            i32,
            Abi::Context
        ]
    );
    assert_eq!(p.buffers.len(), 3);
    let src = p.buffers[0].image.unwrap();
    // 64 bytes a row, 64 of margin each side, rounded up to 512.
    assert_eq!(
        (src.step, src.row_bytes, src.rows, src.offset),
        (512, 64, 32, 8 * 512 + 64)
    );
    assert_eq!(p.args[1].value, Value::Number(512.0));
    assert_eq!(p.args[6].value, Value::Pair(64, 32));
    assert_eq!(p.buffers[2].fill, Fill::Sentinel);
}

#[test]
fn a_filter_gets_a_3x3_mask_anchored_at_its_centre_and_a_reduction_its_scratch_sized() {
    let v = version("npp-13.0.1.2");
    let f = one(&v, "nppiFilterBox_8u_C1R_Ctx");
    let pairs: Vec<&Value> = f.args.iter().filter(|a| a.abi == Abi::Pair).map(|a| &a.value).collect();
    assert_eq!(pairs, [&Value::Pair(64, 32), &Value::Pair(3, 3), &Value::Pair(1, 1)]);
    let m = one(&v, "nppiMean_8u_C1R_Ctx");
    assert_eq!(m.scratch.len(), 1, "{m:#?}");
    let (buffer, sizer) = &m.scratch[0];
    assert_eq!(m.buffers[*buffer].role, Role::ScratchBuffer);
    assert!(
        sizer.symbol.starts_with("nppiMeanGetBufferHostSize_8u_C1R"),
        "{}",
        sizer.symbol
    );
    assert!(sizer.buffers.iter().any(|b| b.host));
}

#[test]
fn a_planar_function_gets_an_array_of_planes_and_of_steps() {
    let v = version("npp-13.0.1.2");
    let rows = crate::generate::rows(&v).unwrap();
    let row = rows
        .iter()
        .find(|r| r.synthesisable && r.params.iter().any(|p| p.role == Role::SourcePlanes))
        .unwrap();
    let p = plan(row, &Sizers::new(&v), &SHAPE).unwrap();
    let planes = p
        .args
        .iter()
        .find_map(|a| match &a.value {
            Value::Planes(b) => Some(b.len()),
            _ => None,
        })
        .unwrap();
    assert!(planes >= 2, "{}", row.symbol);
}

#[test]
fn a_step_too_short_for_its_margins_is_refused() {
    let v = version("npp-13.0.1.2");
    let rows = crate::generate::rows(&v).unwrap();
    let row = rows.iter().find(|r| r.symbol == "nppiCopy_8u_C1R_Ctx").unwrap();
    let short = Shape {
        src_step: Some(100),
        ..SHAPE
    };
    assert!(plan(row, &Sizers::new(&v), &short).unwrap_err().contains("no margin"));
    let unaligned = Shape {
        src_step: Some(518),
        ..SHAPE
    };
    let p = plan(row, &Sizers::new(&v), &unaligned).unwrap();
    assert_eq!(p.buffers[0].image.unwrap().step, 518);
}

/// What the first GPU run refused (`reports/catalogue-calls/`): a destination of more channels
/// than its source is sized by its own channels, a template is 3×3, and Bayer demosaicing gets
/// the one interpolation it takes.
#[test]
fn the_first_runs_refusals_are_planned_as_npp_asks() {
    let v = version("npp-13.0.1.2");
    let copy = one(&v, "nppiCopy_32f_C1C3R_Ctx");
    let rows: Vec<u64> = copy.buffers.iter().map(|b| b.image.unwrap().row_bytes).collect();
    assert_eq!(
        rows,
        [64 * 4, 64 * 4 * 3],
        "the source's channel, the destination's three"
    );
    let cc = one(&v, "nppiCrossCorrFull_NormLevel_8u_C1RSfs_Ctx");
    let pairs: Vec<&Value> = cc
        .args
        .iter()
        .filter(|a| a.abi == Abi::Pair)
        .map(|a| &a.value)
        .collect();
    assert_eq!(pairs, [&Value::Pair(64, 32), &Value::Pair(3, 3)]);
    let cfa = one(&v, "nppiCFAToRGB_8u_C1C3R_Ctx");
    let interpolation = cfa.args.iter().find(|a| a.param == "eInterpolation").unwrap();
    assert_eq!(interpolation.value, Value::Number(0.0));
}

/// A transpose's destination is the ROI turned: as many rows as the ROI is wide (the first GPU
/// run with the oracles, at a 1918×32 ROI, wrote past a destination of 32 rows and left the
/// context dead).
#[test]
fn a_transposes_destination_has_the_rois_width_as_its_rows() {
    let v = version("npp-13.0.1.2");
    let t = one(&v, "nppiTranspose_16u_C3R_Ctx");
    let layouts: Vec<(u64, u64)> = t
        .buffers
        .iter()
        .map(|b| b.image.map(|im| (im.row_bytes, im.rows)).unwrap())
        .collect();
    assert_eq!(layouts, [(64 * 6, 32), (32 * 6, 64)]);
    let dst = &t.buffers[1];
    assert!(dst.bytes >= dst.image.unwrap().step * (64 + 2 * MARGIN_ROWS));
}

/// What ended children by SIGSEGV on the H100 runs: a per-channel array of device tables is a
/// host array of device pointers (but a trilinear LUT's levels and their counts, host arrays), and a Wiener
/// filter's noise levels are host numbers.
#[test]
fn per_channel_tables_are_pointers_on_the_host_and_noise_levels_host_numbers() {
    let v = version("npp-13.0.1.2");
    let lut = one(&v, "nppiLUT_8u_C3R_Ctx");
    let values = lut.args.iter().find(|a| a.param == "pValues").unwrap();
    match &values.value {
        Value::Planes(tables) => {
            assert_eq!(tables.len(), 3);
            assert!(tables.iter().all(|i| !lut.buffers[*i].host));
        }
        other => panic!("{other:?}"),
    }
    let one_channel = one(&v, "nppiLUT_8u_C1R_Ctx");
    let values = one_channel.args.iter().find(|a| a.param == "pValues").unwrap();
    assert!(matches!(values.value, Value::Buffer(_)), "{values:?}");
    // The trilinear LUTs' levels are host arrays of host arrays, their table device memory.
    let trilinear = one(&v, "nppiLUT_Trilinear_8u_C4R_Ctx");
    match &trilinear.args.iter().find(|a| a.param == "pLevels").unwrap().value {
        Value::Planes(levels) => {
            assert_eq!(levels.len(), 3);
            assert!(levels.iter().all(|i| trilinear.buffers[*i].host));
        }
        other => panic!("{other:?}"),
    }
    let table = trilinear.args.iter().find(|a| a.param == "pValues").unwrap();
    assert!(
        matches!(table.value, Value::Buffer(i) if !trilinear.buffers[i].host),
        "{table:?}"
    );
    // Its level counts, a host array of three ("Host pointer to an array of 3"): as a result in
    // device memory they still ended the child by SIGSEGV at 1918×32 on both versions. The
    // table of aLevels[0] × [1] × [2] four-byte values fits the buffer it gets.
    let counts = trilinear.args.iter().find(|a| a.param == "aLevels").unwrap();
    match &counts.value {
        Value::Array(_, n) => {
            assert_eq!(n.len(), 3, "{counts:?}");
            let Value::Buffer(t) = table.value else { unreachable!() };
            assert!(
                n.iter().product::<f64>() * 4.0 <= trilinear.buffers[t].bytes as f64,
                "{counts:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let wiener = one(&v, "nppiFilterWienerBorder_8u_C4R_Ctx");
    let noise = wiener.args.iter().find(|a| a.param == "aNoise").unwrap();
    assert!(
        matches!(&noise.value, Value::Array(_, n) if n.len() == 4 && n.iter().all(|x| (0.0..=1.0).contains(x))),
        "{noise:?}"
    );
}

/// What NPP refused on the H100 runs for want of values that make sense together: an anchor
/// inside its mask (SumWindow: NPP_ANCHOR_ERROR), a quadrangle the ROI's corners (WarpAffineQuad:
/// NPP_QUADRANGLE_ERROR), a 3×3 transform the identity (WarpPerspective: NPP_COEFFICIENT_ERROR,
/// its counted-up matrix singular). An affine 2×3 transform, which NPP took, still counts up.
#[test]
fn anchors_quadrangles_and_perspective_transforms_get_values_npp_takes() {
    let v = version("npp-13.0.1.2");
    let value = |symbol: &str, param: &str| -> Value {
        let p = one(&v, symbol);
        p.args.into_iter().find(|a| a.param == param).unwrap().value
    };
    let numbers = |value: Value| -> Vec<f64> {
        match value {
            Value::Number(n) => vec![n],
            Value::Array(_, n) => n,
            other => panic!("{other:?}"),
        }
    };
    let window = |param| numbers(value("nppiSumWindowColumn_16s32f_C1R_Ctx", param));
    assert!(window("nAnchor")[0] < window("nMaskSize")[0]);
    let (w, h) = (f64::from(SHAPE.width) - 1.0, f64::from(SHAPE.height) - 1.0);
    assert_eq!(
        numbers(value("nppiWarpAffineQuad_8u_C1R_Ctx", "aSrcQuad")),
        [0.0, 0.0, w, 0.0, w, h, 0.0, h]
    );
    assert_eq!(
        numbers(value("nppiWarpPerspective_8u_C1R_Ctx", "aCoeffs")),
        [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    );
    let affine = numbers(value("nppiWarpAffine_8u_C1R_Ctx", "aCoeffs"));
    assert_eq!(affine.len(), 6);
    assert!(affine.windows(2).all(|p| p[1] == p[0] + 1.0), "{affine:?}");
}
