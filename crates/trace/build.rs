//! Generates `$OUT_DIR/interposed.rs`: for every distinct catalogued symbol one exported
//! `extern "C"` function with the row's C signature (`nppbench_catalog::signature`) that hands
//! its site facts and a closure forwarding every argument to the seam, `seam::call` (which
//! shields and records): every argument unchanged but the context, which the seam passes, and,
//! for a function whose images the shield can stage, the image pointers and steps.

use std::fmt::Write as _;
use std::path::PathBuf;

use nppbench_catalog::signature::{Role, Signature, signatures};
use nppbench_catalog::{Args, DstShape, rows};

/// Names the generated body uses beside the parameters.
const LOCALS: [&str; 7] = ["real_fn", "site", "Real", "REAL", "passed", "images", "caller_images"];

/// Whether the shield can stage the function's images: sources and destination of the ROI's
/// size (or the destination transposed), with no border read around the ROI and no scratch.
fn stageable(symbol: &str) -> Option<bool> {
    let row = rows().iter().find(|r| r.symbol() == symbol)?;
    let shape = matches!(row.dst_shape, DstShape::Same | DstShape::Transposed);
    let args = matches!(
        row.args,
        Args::Map
            | Args::MapInt(_)
            | Args::MapOrder(_)
            | Args::MapConst { .. }
            | Args::Binary { .. }
            | Args::Compare(_)
            | Args::Threshold { .. }
    );
    Some(shape && args && row.sources >= 1)
}

/// The caller's `Images` (an expression) of a function with a source and a destination image,
/// and, where the shield can stage them, what the forwarding closure passes for each image
/// parameter; `None` and nothing for the others.
fn images(s: &Signature) -> (Option<String>, Vec<(usize, String)>) {
    let (Some(src), Some(src_step), Some(dst), Some(dst_step)) = (
        s.position(Role::Src),
        s.position(Role::SrcStep),
        s.position(Role::Dst),
        s.position(Role::DstStep),
    ) else {
        return (None, Vec::new());
    };
    let stageable = stageable(&s.symbol) == Some(true);
    let name = |i: usize| s.params[i].name;
    let src2 = s.position(Role::Src2).zip(s.position(Role::Src2Step));
    let transposed = rows()
        .iter()
        .find(|r| r.symbol() == s.symbol)
        .is_some_and(|r| r.dst_shape == DstShape::Transposed);
    // `field: value`, or the shorthand where the parameter has the field's name.
    let field = |f: &str, i: usize| {
        if name(i) == f {
            f.to_owned()
        } else {
            format!("{f}: {}", name(i))
        }
    };
    let site = format!(
        "Images {{ src: {} as u64, {}, src2: {}, dst: {} as u64, {}, transposed: {transposed}, stageable: {stageable} }}",
        name(src),
        field("src_step", src_step),
        src2.map_or("None".into(), |(p, st)| format!(
            "Some(({} as u64, {}))",
            name(p),
            name(st)
        )),
        name(dst),
        field("dst_step", dst_step),
    );
    let mut passed = vec![
        (src, "images.src as _".to_owned()),
        (src_step, "images.src_step".to_owned()),
        (dst, "images.dst as _".to_owned()),
        (dst_step, "images.dst_step".to_owned()),
    ];
    if let Some((p, st)) = src2 {
        passed.push((p, "images.src2.map_or(0, |i| i.0) as _".to_owned()));
        passed.push((st, "images.src2.map_or(0, |i| i.1)".to_owned()));
    }
    if !stageable {
        passed.clear();
    }
    (Some(site), passed)
}

fn function(index: usize, s: &Signature, docs: &str) -> String {
    for p in &s.params {
        assert!(
            !LOCALS.contains(&p.name),
            "{}: parameter {} shadows a local",
            s.symbol,
            p.name
        );
    }
    let params: Vec<String> = s
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty.rust()))
        .collect();
    let types: Vec<&str> = s.params.iter().map(|p| p.ty.rust()).collect();
    let name = |role| s.position(role).map(|i| s.params[i].name);
    let ctx = name(Role::Ctx).expect("every signature has a context");
    // NPP gets the context the seam passes (the caller's, or the shield's copy of it), and the
    // images it passes (the caller's, or the shield's staging copies).
    let (site_images, passed_images) = images(s);
    let args: Vec<String> = s
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.name == ctx {
                "passed".to_owned()
            } else if let Some((_, v)) = passed_images.iter().find(|(j, _)| *j == i) {
                v.clone()
            } else {
                p.name.to_owned()
            }
        })
        .collect();
    // A stageable function's closure passes the images it is given, its caller's by default.
    let (caller_images, site_images) = match site_images {
        Some(caller) => (format!("\n    let caller_images = {caller};"), "Some(caller_images)"),
        None => (String::new(), "None"),
    };
    let (closure_images, unpack) = if passed_images.is_empty() {
        ("_images", "")
    } else {
        ("images", "\n        let images = images.unwrap_or(caller_images);")
    };
    let step = |role| match name(role) {
        Some(n) => format!("Some({n})"),
        None => "None".into(),
    };
    let roi = match name(Role::Roi).expect("every signature has a ROI") {
        "roi" => "roi".to_owned(),
        other => format!("roi: {other}"),
    };
    let symbol = &s.symbol;
    format!(
        r#"
/// Interposes NPP's `{symbol}` ([NVIDIA's documentation]({docs})): hands the call to the seam
/// (shield, then recorder), which calls NPP's own function with the same arguments (the context
/// declaring non-blocking where the shield rewrites it, the images staged where it stages them)
/// and returns its status.
///
/// # Safety
///
/// NPP's contract: the arguments must be valid for `{symbol}`, which receives them unchanged (a
/// context copy that declares non-blocking is valid wherever the caller's is, and staging copies
/// of the images hold the same pixels, valid for the ROI, on the same device).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn {symbol}({params}) -> NppStatus {{
    type Real = unsafe extern "C" fn({types}) -> NppStatus;
    static REAL: RealFn = RealFn::new(c"{symbol}");
    let Some(real_fn) = REAL.get() else {{
        return REAL.missing();
    }};{caller_images}
    let site = Site {{
        symbol: {index},
        {roi},
        src_step: {src_step},
        dst_step: {dst_step},
        ctx: &{ctx},
        images: {site_images},
    }};
    seam::call(&site, |passed: NppStreamContext, {closure_images}: Option<Images>| {{{unpack}
        // SAFETY: `real_fn` is NPP's own `{symbol}` (`dlsym(RTLD_NEXT)`), whose C signature is
        // this function's, both derived from the catalogue's row; the caller's arguments pass
        // unchanged but the context (the caller's or a copy declaring non-blocking) and the
        // images (the caller's, or the shield's staging copies of them at the ROI's size), under
        // the caller's contract (# Safety).
        unsafe {{ std::mem::transmute::<RawFn, Real>(real_fn)({args}) }}
    }})
}}
"#,
        params = params.join(", "),
        types = types.join(", "),
        args = args.join(", "),
        src_step = step(Role::SrcStep),
        dst_step = step(Role::DstStep),
    )
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let all = signatures().unwrap_or_else(|e| panic!("the catalogue's signatures: {e}"));
    assert!(all.len() < usize::from(u16::MAX), "symbol indices are u16");
    let mut out = String::from("// Generated by crates/trace/build.rs from the catalogue: do not edit.\n");
    let names: Vec<String> = all.iter().map(|s| format!("{:?}", s.symbol)).collect();
    writeln!(
        out,
        "\n/// Every interposed symbol, by the index a [`Site`] carries.\npub static SYMBOLS: [&str; {}] = [{}];",
        all.len(),
        names.join(", ")
    )
    .unwrap();
    for (i, s) in all.iter().enumerate() {
        let docs = rows().iter().find(|r| r.symbol() == s.symbol).map_or("", |r| r.docs);
        out.push_str(&function(i, s, docs));
    }
    let path = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("interposed.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}
