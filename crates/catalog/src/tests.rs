//! The catalogue's own checks: names, coverage, and each reference on small images whose answer
//! is known by hand (generated inputs, labelled as such: the GPU check compares NPP itself).

use std::collections::BTreeSet;

use super::*;

fn p(name: &str) -> Primitive {
    Primitive::from_name(name).unwrap_or_else(|| panic!("no row {name}"))
}

/// Runs a row's reference on `sources` (one-channel images given as rows of values).
fn run(name: &str, sources: &[Image], dst_w: usize, dst_h: usize) -> Image {
    let row = p(name).row();
    let mut dst = Image::new(dst_w, dst_h, usize::from(row.dst.channels));
    (row.reference)(row, sources, &mut dst);
    dst
}

fn image(rows: &[&[f64]]) -> Image {
    let mut img = Image::new(rows[0].len(), rows.len(), 1);
    img.fill(|x, y, _| rows[y][x]);
    img
}

#[test]
fn names_are_unique_and_round_trip() {
    let mut seen = BTreeSet::new();
    for prim in Primitive::all() {
        assert!(seen.insert(prim.name()), "{} twice", prim.name());
        assert_eq!(Primitive::from_name(prim.name()), Some(prim));
        assert_eq!(Primitive::from_name(&prim.npp_name()), Some(prim));
        assert!(prim.npp_name().starts_with("nppi") && prim.npp_name().ends_with("_Ctx"));
    }
    assert_eq!(Primitive::CONVERT_8U32F_C1R.name(), "Convert_8u32f_C1R");
    assert_eq!(
        Primitive::from_name("convert8u32f_c1"),
        Some(Primitive::CONVERT_8U32F_C1R)
    );
    assert_eq!(Primitive::from_name("Convert_8u32f_C2R"), None);
    assert!(unknown_primitive("x").contains("nppbench primitives"));
}

#[test]
fn coverage_is_what_the_atlas_promises() {
    let rows = rows();
    assert!(rows.len() >= 40, "{} rows", rows.len());
    let libraries: BTreeSet<_> = rows.iter().map(|r| r.library).collect();
    assert!(libraries.len() >= 6, "{libraries:?}");
    for sample in [Sample::U8, Sample::U16, Sample::F32] {
        assert!(rows.iter().any(|r| r.src.sample == sample), "{sample:?}");
    }
    for channels in [1, 3, 4] {
        assert!(rows.iter().any(|r| r.src.channels == channels), "{channels} channels");
    }
    for op in [
        "Convert_8u32f_C1R",
        "Copy_8u_C1R",
        "Set_8u_C1R",
        "Transpose_8u_C1R",
        "SwapChannels_8u_C3R",
        "AddC_8u_C1RSfs",
        "MulC_32f_C1R",
        "Add_8u_C1RSfs",
        "Sub_8u_C1RSfs",
        "Mul_32f_C1R",
        "AbsDiff_8u_C1R",
        "Threshold_8u_C1R",
        "Compare_8u_C1R",
        "FilterBoxBorder_8u_C1R",
        "FilterGaussBorder_8u_C1R",
        "FilterSobelHorizBorder_8u16s_C1R",
        "Resize_8u_C1R",
        "Mirror_8u_C1R",
        "RGBToGray_8u_C3C1R",
        "RGBToYUV_8u_C3R",
        "Sum_8u_C1R",
        "Mean_8u_C1R",
        "MinMax_8u_C1R",
    ] {
        p(op);
    }
    assert!(rows.iter().filter(|r| r.name.starts_with("Convert_")).count() >= 3);
}

#[test]
fn argument_lists_fit_their_rows() {
    for r in rows() {
        match r.args {
            Args::Set(_) => assert_eq!(r.sources, 0, "{}", r.name),
            Args::Binary { .. } | Args::Compare(_) => assert_eq!(r.sources, 2, "{}", r.name),
            _ => assert_eq!(r.sources, 1, "{}", r.name),
        }
        if let Args::MapConst { constant, .. } | Args::Set(constant) = r.args {
            let per_channel = matches!(constant, Constant::PerChannel(_));
            assert_eq!(per_channel, r.src.channels > 1, "{}: a constant per channel", r.name);
        }
        if let Args::MapOrder(order) = r.args {
            assert_eq!(order.len(), usize::from(r.src.channels), "{}", r.name);
        }
        let reduction = matches!(r.args, Args::Reduce { .. } | Args::Reduce2 { .. });
        assert_eq!(reduction, !r.dst_is_image(), "{}", r.name);
        // The name says the sample types: `_8u32f_`, `_32f_`, …
        let types = r.name.split('_').nth(1).unwrap_or_default();
        assert!(types.starts_with(r.src.sample.npp_name()), "{}: source type", r.name);
    }
}

#[test]
fn bytes_moved_count_every_source_and_the_destination() {
    // 8u→32f: 1 byte read, 4 written a pixel.
    assert_eq!(p("Convert_8u32f_C1R").row().bytes_moved(10, 10), 500);
    // Two 8u sources and an 8u destination.
    assert_eq!(p("Add_8u_C1RSfs").row().bytes_moved(10, 10), 300);
    // Set reads nothing; a reduction writes no image.
    assert_eq!(p("Set_8u_C1R").row().bytes_moved(10, 10), 100);
    assert_eq!(p("Sum_8u_C1R").row().bytes_moved(10, 10), 100);
    // Half-size resize: a quarter of the pixels written.
    assert_eq!(p("Resize_32f_C1R").row().bytes_moved(10, 10), 400 + 100);
    assert_eq!(p("Transpose_8u_C1R").row().dst_size(7, 3), (3, 7));
}

#[test]
fn references_on_hand_checked_images() {
    // Generated inputs: a 3×2 image and a second source.
    let a = image(&[&[0.0, 100.0, 250.0], &[7.0, 8.0, 9.0]]);
    let b = image(&[&[10.0, 50.0, 20.0], &[7.0, 200.0, 1.0]]);
    assert_eq!(
        run("AddC_8u_C1RSfs", std::slice::from_ref(&a), 3, 2).data,
        vec![37.0, 137.0, 255.0, 44.0, 45.0, 46.0]
    );
    assert_eq!(
        run("Sub_8u_C1RSfs", &[a.clone(), b.clone()], 3, 2).data,
        vec![10.0, 0.0, 0.0, 0.0, 192.0, 0.0]
    );
    assert_eq!(
        run("AbsDiff_8u_C1R", &[a.clone(), b.clone()], 3, 2).data,
        vec![10.0, 50.0, 230.0, 0.0, 192.0, 8.0]
    );
    assert_eq!(
        run("Compare_8u_C1R", &[a.clone(), b.clone()], 3, 2).data,
        vec![0.0, 255.0, 255.0, 0.0, 0.0, 255.0]
    );
    assert_eq!(
        run("Threshold_8u_C1R", std::slice::from_ref(&a), 3, 2).data,
        vec![0.0, 100.0, 128.0, 7.0, 8.0, 9.0]
    );
    assert_eq!(
        run("Transpose_8u_C1R", std::slice::from_ref(&a), 2, 3).data,
        vec![0.0, 7.0, 100.0, 8.0, 250.0, 9.0]
    );
    assert_eq!(
        run("Mirror_8u_C1R", std::slice::from_ref(&a), 3, 2).data,
        vec![250.0, 100.0, 0.0, 9.0, 8.0, 7.0]
    );
    assert_eq!(run("Sum_8u_C1R", std::slice::from_ref(&a), 1, 1).data, vec![374.0]);
    assert_eq!(
        run("MinMax_8u_C1R", std::slice::from_ref(&a), 2, 1).data,
        vec![0.0, 250.0]
    );
    assert_eq!(
        run("Mul_8u_C1RSfs", &[a.clone(), b.clone()], 3, 2).data[2],
        (250.0f64 * 20.0 / 256.0).round()
    );
    // Filters on a constant image return the constant; Sobel on a vertical ramp its slope × 8.
    let row: &[f64] = &[9.0; 4];
    let flat = image(&[row, row, row, row]);
    assert!(
        run("FilterGaussBorder_8u_C1R", std::slice::from_ref(&flat), 4, 4)
            .data
            .iter()
            .all(|v| *v == 9.0)
    );
    assert!(
        run("FilterBoxBorder_8u_C1R", std::slice::from_ref(&flat), 4, 4)
            .data
            .iter()
            .all(|v| *v == 9.0)
    );
    let ramp = image(&[&[0.0; 3], &[10.0; 3], &[20.0; 3], &[30.0; 3]]);
    let sobel = run("FilterSobelHorizBorder_8u16s_C1R", &[ramp], 3, 4);
    assert_eq!(sobel.at(1, 1, 0), 80.0, "interior rows: (row below − row above) × 4");
    // Gauss: NPP's sigma of 1.0 for a 3×3 mask; on a ramp across rows the middle row keeps its
    // value (the kernel is symmetric).
    let ramp = image(&[&[0.0; 3], &[10.0; 3], &[20.0; 3]]);
    assert!((run("FilterGaussBorder_32f_C1R", &[ramp], 3, 3).at(1, 1, 0) - 10.0).abs() < 1e-5);
    // Super-sampling to half size: the mean of each 2×2 block.
    let quad = image(&[
        &[0.0, 4.0, 8.0, 8.0],
        &[0.0, 4.0, 8.0, 8.0],
        &[1.0, 1.0, 2.0, 2.0],
        &[1.0, 1.0, 2.0, 2.0],
    ]);
    assert_eq!(run("Resize_8u_C1R", &[quad], 2, 2).data, vec![2.0, 8.0, 1.0, 2.0]);
    // Round to nearest, ties to even, saturating.
    let floats = image(&[&[-3.0, 2.5, 3.5, 300.25]]);
    assert_eq!(
        run("Convert_32f8u_C1R", &[floats], 4, 1).data,
        vec![0.0, 2.0, 4.0, 255.0]
    );
}

#[test]
fn the_gauss_kernel_is_npps() {
    // Generated check of the coefficients: sigma 1 sampled at -1, 0, 1 and normalised.
    let k = super::rows::gauss_kernel_for_tests(3);
    let e = (-0.5f64).exp();
    let one = [e / (1.0 + 2.0 * e), 1.0 / (1.0 + 2.0 * e), e / (1.0 + 2.0 * e)];
    assert!((k[4] - one[1] * one[1]).abs() < 1e-12 && (k[0] - one[0] * one[0]).abs() < 1e-12);
    assert!((k.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn colour_references_on_primaries() {
    let mut rgb = Image::new(2, 1, 3);
    // Pixel 0 white, pixel 1 pure red.
    rgb.fill(|x, _, c| if x == 0 || c == 0 { 255.0 } else { 0.0 });
    let gray = run("RGBToGray_8u_C3C1R", &[rgb.clone()], 2, 1);
    assert_eq!(gray.data, vec![255.0, (0.299f64 * 255.0).round()]);
    let yuv = run("RGBToYUV_8u_C3R", &[rgb.clone()], 2, 1);
    // White: full luma, neutral chroma (rounding of the documented coefficients).
    assert_eq!(yuv.at(0, 0, 0), 255.0);
    assert!((yuv.at(0, 0, 1) - 128.0).abs() <= 1.0 && (yuv.at(0, 0, 2) - 128.0).abs() <= 1.0);
    let swapped = run("SwapChannels_8u_C3R", &[rgb], 2, 1);
    assert_eq!(&swapped.data[3..6], &[0.0, 0.0, 255.0]);
}

#[test]
fn source_patterns_are_not_trivial() {
    let bytes = image::source_pattern(Sample::U8, 256, 0);
    assert_eq!(bytes.iter().collect::<BTreeSet<_>>().len(), 256);
    assert_eq!(bytes[0], 17, "the pattern of runs before the primitive axis");
    let floats = image::source_pattern(Sample::F32, 4 * 256, 0);
    let values: Vec<f64> = floats.chunks(4).map(|b| image::decode(Sample::F32, b)).collect();
    assert!(values.iter().any(|v| *v < 0.0) && values.iter().any(|v| v.fract() == 0.5));
    assert_ne!(
        image::source_pattern(Sample::U8, 64, 0),
        image::source_pattern(Sample::U8, 64, 1)
    );
}

/// #32 item 6: the reference kernel is a column of the catalogue, not a test of one name in the
/// throughput probe. One row has it today: the kernel converts 8-bit to 32-bit float, one channel.
#[test]
fn the_reference_kernel_is_a_column_of_its_row() {
    let with: Vec<&str> = rows()
        .iter()
        .filter(|r| r.gpu_reference.is_some())
        .map(|r| r.name)
        .collect();
    assert_eq!(with, ["Convert_8u32f_C1R"]);
    assert_eq!(
        Primitive::CONVERT_8U32F_C1R.row().gpu_reference,
        Some(GpuReference::ConvertU8ToF32)
    );
}

/// A function known from the headers alone gets a primitive of its own, the same each time,
/// with its name and pixel sizes and no row; a row's name gives the row; other sizes for a name
/// registered are refused.
#[test]
fn a_generated_function_is_a_primitive_without_a_row() {
    let g = Primitive::generated("nppiResize_8u_C3R_Ctx", 3, 3).unwrap();
    assert!(g.is_generated());
    assert_eq!(g.name(), "Resize_8u_C3R");
    assert_eq!(g.npp_name(), "nppiResize_8u_C3R_Ctx");
    assert_eq!((g.src_bytes_per_pixel(), g.dst_bytes_per_pixel()), (3, 3));
    assert_eq!(Primitive::generated("Resize_8u_C3R", 3, 3).unwrap(), g);
    assert_eq!(Primitive::from_name("nppiResize_8u_C3R_Ctx"), Some(g));
    let err = Primitive::generated("Resize_8u_C3R", 1, 3).unwrap_err();
    assert!(err.contains("3/3") && err.contains("1/3"), "{err}");
    let row = Primitive::generated("Convert_8u32f_C1R", 9, 9).unwrap();
    assert_eq!(row, Primitive::CONVERT_8U32F_C1R);
    assert!(!row.is_generated());
    assert!(Primitive::all().all(|p| !p.is_generated()));
    let json = serde_json::to_string(&g).unwrap();
    assert_eq!(serde_json::from_str::<Primitive>(&json).unwrap(), g);
    let panic = std::panic::catch_unwind(|| g.row()).unwrap_err();
    let said = panic.downcast_ref::<String>().unwrap();
    assert!(said.contains("no catalogue row"), "{said}");
}
