//! Each row's C parameter list as data: the one derivation of a function's signature that code
//! generators (the `nppbench-trace` interposer, its stand-in NPP) read, so that a new row adds a
//! function to them with no code by hand.
//!
//! The lists are those `nppbench-npp`'s `launch.rs` passes for each [`Args`] variant, checked
//! against NPP's headers: one-channel constants by value (a float one as `f32`, an integer one
//! in an `int` register), several-channel ones through a pointer, the context last and by value.

use std::collections::BTreeMap;

use crate::{Args, Constant, Row, rows};

/// A parameter's C type, as the x86-64 System V ABI passes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CType {
    /// A pointer (device image, host constant array, scratch buffer, output).
    Ptr,
    /// `int`, and any integer sample or enum passed in an integer register.
    Int,
    /// `Npp32f` by value.
    F32,
    /// `NppiSize` by value.
    Size,
    /// `NppiPoint` by value.
    Point,
    /// `NppiRect` by value.
    Rect,
    /// `NppStreamContext` by value.
    Context,
}

impl CType {
    /// The Rust type a generated `extern "C"` function spells it with (names of
    /// `nppbench-npp`'s `sys` module: `Ptr`, `c_int`, `NppiSize`, …).
    pub fn rust(self) -> &'static str {
        match self {
            CType::Ptr => "Ptr",
            CType::Int => "c_int",
            CType::F32 => "f32",
            CType::Size => "NppiSize",
            CType::Point => "NppiPoint",
            CType::Rect => "NppiRect",
            CType::Context => "NppStreamContext",
        }
    }
}

/// What a parameter is to a tracer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Src,
    SrcStep,
    Src2,
    Src2Step,
    /// The destination image, or a reduction's (first) output.
    Dst,
    DstStep,
    /// The ROI (a resize's source size).
    Roi,
    Ctx,
    Other,
}

/// One parameter: its name (as NPP's headers call it, in snake case), type and role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: &'static str,
    pub ty: CType,
    pub role: Role,
}

/// A function's symbol and its parameters in order; every one returns `NppStatus` (`int`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub symbol: String,
    pub params: Vec<Param>,
}

impl Signature {
    /// The position of the parameter with `role`, if the function has one.
    pub fn position(&self, role: Role) -> Option<usize> {
        self.params.iter().position(|p| p.role == role)
    }
}

const fn p(name: &'static str, ty: CType, role: Role) -> Param {
    Param { name, ty, role }
}

const SRC: [Param; 2] = [
    p("src", CType::Ptr, Role::Src),
    p("src_step", CType::Int, Role::SrcStep),
];
const SRC2: [Param; 2] = [
    p("src2", CType::Ptr, Role::Src2),
    p("src2_step", CType::Int, Role::Src2Step),
];
const DST: [Param; 2] = [
    p("dst", CType::Ptr, Role::Dst),
    p("dst_step", CType::Int, Role::DstStep),
];
const ROI: Param = p("roi", CType::Size, Role::Roi);
const CTX: Param = p("ctx", CType::Context, Role::Ctx);

/// `name` as an `Other` parameter of type `ty`.
const fn other(name: &'static str, ty: CType) -> Param {
    p(name, ty, Role::Other)
}

/// A one-channel constant by value, else a pointer to one per channel (as `launch.rs` passes it).
fn constant(row: &Row, name: &'static str, c: Constant) -> Param {
    match c {
        Constant::One(_) if row.src.sample.is_float() => other(name, CType::F32),
        Constant::One(_) => other(name, CType::Int),
        Constant::PerChannel(_) => other(name, CType::Ptr),
    }
}

/// The parameters between the source and the context, by argument shape.
fn params(row: &Row) -> Vec<Param> {
    let map = |extra: &[Param]| [&SRC[..], &DST[..], &[ROI], extra].concat();
    let scale = |s: Option<i32>| s.map(|_| other("scale_factor", CType::Int));
    let float = row.src.sample.is_float();
    let mut out = match row.args {
        Args::Map => map(&[]),
        Args::MapInt(_) => map(&[other("mode", CType::Int)]),
        Args::MapOrder(_) => map(&[other("dst_order", CType::Ptr)]),
        Args::MapConst { constant: c, scale: s } => {
            let mut v = [&SRC[..], &[constant(row, "constant", c)], &DST[..], &[ROI]].concat();
            v.extend(scale(s));
            v
        }
        Args::Binary { scale: s } => {
            let mut v = [&SRC[..], &SRC2[..], &DST[..], &[ROI]].concat();
            v.extend(scale(s));
            v
        }
        Args::Compare(_) => [&SRC[..], &SRC2[..], &DST[..], &[ROI, other("cmp_op", CType::Int)]].concat(),
        Args::Set(c) => [&[constant(row, "value", c)], &DST[..], &[ROI]].concat(),
        Args::Threshold { .. } => map(&[
            other("threshold", if float { CType::F32 } else { CType::Int }),
            other("cmp_op", CType::Int),
        ]),
        Args::FilterBox { .. } => [
            &SRC[..],
            &[other("src_size", CType::Size), other("src_offset", CType::Point)],
            &DST[..],
            &[
                ROI,
                other("mask_size", CType::Size),
                other("anchor", CType::Point),
                other("border", CType::Int),
            ],
        ]
        .concat(),
        Args::FilterMask { .. } => [
            &SRC[..],
            &[other("src_size", CType::Size), other("src_offset", CType::Point)],
            &DST[..],
            &[ROI, other("mask_size", CType::Int), other("border", CType::Int)],
        ]
        .concat(),
        Args::Resize { .. } => [
            &SRC[..],
            &[p("src_size", CType::Size, Role::Roi), other("src_rect", CType::Rect)],
            &DST[..],
            &[
                other("dst_size", CType::Size),
                other("dst_rect", CType::Rect),
                other("interpolation", CType::Int),
            ],
        ]
        .concat(),
        Args::Reduce { .. } => [
            &SRC[..],
            &[ROI, other("buffer", CType::Ptr), p("out", CType::Ptr, Role::Dst)],
        ]
        .concat(),
        Args::Reduce2 { .. } => [
            &SRC[..],
            &[
                ROI,
                p("out_min", CType::Ptr, Role::Dst),
                other("out_max", CType::Ptr),
                other("buffer", CType::Ptr),
            ],
        ]
        .concat(),
    };
    out.push(CTX);
    out
}

/// `row`'s function's signature.
pub fn signature(row: &Row) -> Signature {
    Signature {
        symbol: row.symbol(),
        params: params(row),
    }
}

/// Two rows name one symbol but imply different parameter lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureConflict {
    pub symbol: String,
}

impl std::fmt::Display for SignatureConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rows of {} imply different C signatures", self.symbol)
    }
}

impl std::error::Error for SignatureConflict {}

/// The signature of every distinct catalogued symbol, in catalogue order (rows that share a
/// symbol give one, after checking that they agree).
pub fn signatures() -> Result<Vec<Signature>, SignatureConflict> {
    distinct(rows().iter().copied())
}

fn distinct<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Result<Vec<Signature>, SignatureConflict> {
    let mut out: Vec<Signature> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for row in rows {
        let s = signature(row);
        match seen.get(&s.symbol) {
            Some(&i) if out[i] != s => return Err(SignatureConflict { symbol: s.symbol }),
            Some(_) => {}
            None => {
                seen.insert(s.symbol.clone(), out.len());
                out.push(s);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CmpOp, Format, Sample};

    /// The parameter count of each argument shape, as `nppbench-npp`'s `sys` function types
    /// declare it (`MapFn` 6, `FilterBoxFn` 11, …).
    fn count_in_sys(args: &Args, scale: bool) -> usize {
        match args {
            Args::Map => 6,
            Args::MapInt(_) | Args::MapOrder(_) => 7,
            Args::MapConst { .. } => 7 + usize::from(scale),
            Args::Binary { .. } => 8 + usize::from(scale),
            Args::Compare(_) => 9,
            Args::Set(_) => 5,
            Args::Threshold { .. } => 8,
            Args::FilterBox { .. } => 11,
            Args::FilterMask { .. } | Args::Resize { .. } => 10,
            Args::Reduce { .. } => 6,
            Args::Reduce2 { .. } => 7,
        }
    }

    #[test]
    fn every_row_has_its_shapes_parameter_count_with_the_context_last() {
        for row in rows() {
            let s = signature(row);
            let scale = matches!(
                row.args,
                Args::MapConst { scale: Some(_), .. } | Args::Binary { scale: Some(_) }
            );
            assert_eq!(s.params.len(), count_in_sys(&row.args, scale), "{}", s.symbol);
            let last = s.params.last().unwrap();
            assert_eq!((last.ty, last.role), (CType::Context, Role::Ctx), "{}", s.symbol);
            let one = |role| s.params.iter().filter(|p| p.role == role).count();
            assert_eq!(one(Role::Ctx), 1, "{}", s.symbol);
            assert_eq!(one(Role::Roi), 1, "{}", s.symbol);
            assert_eq!(s.params[s.position(Role::Roi).unwrap()].ty, CType::Size);
            assert_eq!(one(Role::Dst), 1, "{}", s.symbol);
            assert_eq!(one(Role::Src), usize::from(row.sources.min(1)), "{}", s.symbol);
            assert_eq!(one(Role::Src2), usize::from(row.sources == 2), "{}", s.symbol);
            // A step follows its image.
            for (image, step) in [
                (Role::Src, Role::SrcStep),
                (Role::Src2, Role::Src2Step),
                (Role::Dst, Role::DstStep),
            ] {
                if let Some(i) = s.position(step) {
                    assert_eq!(s.position(image), Some(i - 1), "{}", s.symbol);
                }
            }
            let names: std::collections::BTreeSet<_> = s.params.iter().map(|p| p.name).collect();
            assert_eq!(names.len(), s.params.len(), "{}: parameter names repeat", s.symbol);
        }
    }

    #[test]
    fn constants_follow_the_sample_type_and_channel_count() {
        let by_name = |n: &str| signature(crate::Primitive::from_name(n).unwrap().row());
        let ty = |s: &Signature, name: &str| s.params.iter().find(|p| p.name == name).unwrap().ty;
        assert_eq!(ty(&by_name("AddC_8u_C1RSfs"), "constant"), CType::Int);
        assert_eq!(ty(&by_name("AddC_32f_C1R"), "constant"), CType::F32);
        assert_eq!(ty(&by_name("AddC_8u_C3RSfs"), "constant"), CType::Ptr);
        assert_eq!(ty(&by_name("Set_8u_C1R"), "value"), CType::Int);
        assert_eq!(ty(&by_name("Set_32f_C3R"), "value"), CType::Ptr);
        let convert = by_name("Convert_8u32f_C1R");
        let shape: Vec<_> = convert.params.iter().map(|p| (p.name, p.ty)).collect();
        assert_eq!(
            shape,
            [
                ("src", CType::Ptr),
                ("src_step", CType::Int),
                ("dst", CType::Ptr),
                ("dst_step", CType::Int),
                ("roi", CType::Size),
                ("ctx", CType::Context),
            ]
        );
    }

    #[test]
    fn rows_sharing_a_symbol_give_one_signature_and_a_disagreement_is_an_error() {
        let all = signatures().unwrap();
        let symbols: std::collections::BTreeSet<_> = rows().iter().map(|r| r.symbol()).collect();
        assert_eq!(all.len(), symbols.len());
        // Two rows of one name, one taking a rounding mode: a conflict.
        let a = *rows()[0];
        let b = Row {
            args: Args::Threshold {
                threshold: 1.0,
                op: CmpOp::Less,
            },
            src: Format::new(Sample::U8, 1),
            ..a
        };
        let same = Row { operation: "same", ..a };
        assert_eq!(distinct([&a, &same]).unwrap().len(), 1);
        assert_eq!(
            distinct([&a, &b]),
            Err(SignatureConflict {
                symbol: "nppiConvert_8u32f_C1R_Ctx".into()
            })
        );
    }
}
