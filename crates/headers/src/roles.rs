//! Each parameter's role in a call, read from its type and name as NPP writes them: images and
//! the steps that pair with them by name (`pSrc1` with `nSrc1Step`), the ROI, sizes, rectangles
//! and points, scalars, constant arrays, device arrays and what sizes them, scratch buffers,
//! results, enums and the stream context. What fits none is `unknown`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::extract::TypeKind;
use crate::prototype::{Param, Prototype};

/// A parameter's part in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Source,
    SourcePlanes,
    Destination,
    DestinationPlanes,
    SourceDestination,
    SourceDestinationPlanes,
    Mask,
    /// The row pitch of the image named by `with`.
    Step,
    Roi,
    Size,
    Rect,
    Point,
    ScaleFactor,
    Scalar,
    /// Values passed by value in a C array (`const Npp8u aConstants[3]`).
    ConstantArray,
    /// Device memory read by NPP, its length given by the parameter named in `with`
    /// (`channels`: one per channel).
    DeviceArray,
    /// Device memory NPP works in, sized by the function named in `with`.
    ScratchBuffer,
    /// Memory NPP writes a result to (a sum, a histogram, a buffer size).
    Result,
    Enum,
    Context,
    Unknown,
}

impl Role {
    /// An image with a step: a source, a destination or both, interleaved or in planes (a mask
    /// aside).
    pub fn is_image(self) -> bool {
        matches!(
            self,
            Role::Source
                | Role::SourcePlanes
                | Role::Destination
                | Role::DestinationPlanes
                | Role::SourceDestination
                | Role::SourceDestinationPlanes
        )
    }
}

/// A parameter with its role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assigned {
    #[serde(flatten)]
    pub param: Param,
    pub role: Role,
    /// The parameter (or function) the role refers to: a step's image, what sizes an array or a
    /// scratch buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub with: Option<String>,
}

/// The types the headers name, by kind.
pub type Types = BTreeMap<String, TypeKind>;

const C_NUMBERS: [&str; 12] = [
    "int",
    "unsigned int",
    "unsigned",
    "short",
    "unsigned short",
    "char",
    "unsigned char",
    "float",
    "double",
    "long long",
    "unsigned long long",
    "size_t",
];

/// A number, or a complex or half number, as NPP's typedefs name them.
fn is_number(base: &str, types: &Types) -> bool {
    C_NUMBERS.contains(&base)
        || types.get(base) == Some(&TypeKind::Scalar)
        || (base.starts_with("Npp") && (base.ends_with('c') || base.starts_with("Npp16f")))
}

/// What follows a step's or an image's prefix, lower-cased: `nSrc1Step` and `pSrc1` give `src1`.
fn image_key(name: &str) -> Option<String> {
    let bare = name.strip_suffix("Step").unwrap_or(name);
    let bare = match bare.chars().next()? {
        'n' | 'r' | 'a' | 'p' if bare.chars().nth(1).is_some_and(|c| c.is_ascii_uppercase()) => &bare[1..],
        _ => bare,
    };
    Some(bare.to_ascii_lowercase())
}

/// Each parameter of `prototype` with its role.
pub fn assign(prototype: &Prototype, types: &Types) -> Vec<Assigned> {
    let params = &prototype.params;
    let steps: BTreeMap<String, &Param> = params
        .iter()
        .filter(|p| p.name.ends_with("Step") && is_number(&p.base, types) && p.pointers == 0)
        .filter_map(|p| Some((image_key(&p.name)?, p)))
        .collect();
    let images: BTreeMap<String, &Param> = params
        .iter()
        .filter(|p| p.pointers >= 1 && !p.name.ends_with("Step"))
        .filter(|p| is_number(&p.base, types) || p.base == "void")
        .filter_map(|p| Some((image_key(&p.name)?, p)))
        .filter(|(key, _)| steps.contains_key(key))
        .collect();
    params
        .iter()
        .map(|p| {
            let (role, with) = role_of(p, params, &steps, &images, types);
            Assigned {
                param: p.clone(),
                role,
                with,
            }
        })
        .collect()
}

fn role_of(
    p: &Param,
    params: &[Param],
    steps: &BTreeMap<String, &Param>,
    images: &BTreeMap<String, &Param>,
    types: &Types,
) -> (Role, Option<String>) {
    let key = image_key(&p.name).unwrap_or_default();
    let number = is_number(&p.base, types);
    if p.base == "NppStreamContext" {
        return (Role::Context, None);
    }
    if p.name.ends_with("Step") && number && p.pointers == 0 {
        return match images.get(&key) {
            Some(image) => (Role::Step, Some(image.name.clone())),
            None => (Role::Unknown, None),
        };
    }
    if images.get(&key).is_some_and(|i| i.name == p.name) {
        return (image_role(p, &key), steps.get(&key).map(|s| s.name.clone()));
    }
    if p.is_value() {
        return (value_role(p, number, types), None);
    }
    if p.pointers == 0 {
        // An array passed by value: inputs, except the per-channel results (`Npp64f aSum[3]`).
        // The trilinear LUTs' `int aLevels[3]` is an input ("Host pointer to an array of 3 user
        // defined number of input/output mapping points"); as a result, in device memory, NPP
        // read it on the host and ended the child by SIGSEGV on 12.2.3.2 and 13.0.1.
        let input = p.is_const || !p.name.starts_with('a') || p.name == "aLevels";
        return match (number, input) {
            (true, true) => (Role::ConstantArray, None),
            (true, false) => (Role::Result, None),
            (false, _) => (Role::Unknown, None),
        };
    }
    if p.name.contains("Buffer") && !p.is_const && (p.base == "Npp8u" || p.base == "void") && p.name.starts_with('p') {
        return (Role::ScratchBuffer, None);
    }
    // The trilinear LUTs' table and levels are inputs, though not const (`Npp32u * pValues`,
    // `Npp8u * pLevels[3]`); as results they were zeros in device memory, and NPP, reading the
    // levels on the host, ended the child by SIGSEGV.
    if number && !p.is_const && (p.name == "pValues" || p.name == "pLevels") {
        return (Role::DeviceArray, sized_by(&p.name, params));
    }
    let point = matches!(p.base.as_str(), "NppiPoint" | "NppiPoint32f" | "NppiPoint64f");
    match (number || point, p.is_const) {
        (true, true) if number => (Role::DeviceArray, sized_by(&p.name, params)),
        (true, false) => (Role::Result, None),
        _ => (Role::Unknown, None),
    }
}

fn image_role(p: &Param, key: &str) -> Role {
    let planes = p.array.is_some() || p.pointers >= 2;
    let (one, many) = if key.starts_with("srcdst") {
        (Role::SourceDestination, Role::SourceDestinationPlanes)
    } else if key.starts_with("mask") {
        (Role::Mask, Role::Mask)
    } else if key.starts_with("dst") || !p.is_const {
        (Role::Destination, Role::DestinationPlanes)
    } else {
        (Role::Source, Role::SourcePlanes)
    };
    if planes { many } else { one }
}

fn value_role(p: &Param, number: bool, types: &Types) -> Role {
    let enum_named =
        p.base == "int" && p.name.starts_with('e') && p.name.chars().nth(1).is_some_and(|c| c.is_ascii_uppercase());
    match p.base.as_str() {
        "NppiSize" if p.name.to_ascii_lowercase().contains("roi") => Role::Roi,
        "NppiSize" => Role::Size,
        "NppiRect" => Role::Rect,
        "NppiPoint" | "NppiPoint32f" | "NppiPoint64f" => Role::Point,
        _ if p.name == "nScaleFactor" => Role::ScaleFactor,
        _ if types.get(&p.base) == Some(&TypeKind::Enum) || enum_named => Role::Enum,
        _ if number => Role::Scalar,
        _ => Role::Unknown,
    }
}

/// The parameter giving a device array's length, or `channels` for per-channel constants.
fn sized_by(name: &str, params: &[Param]) -> Option<String> {
    let candidates: &[&str] = if name.contains("Kernel") {
        &["oKernelSize", "nMaskSize", "nKernelSize", "oMaskSize", "nFilterTaps"]
    } else if name.contains("Mask") {
        &["oMaskSize"]
    } else if name.contains("Table") {
        &["nBitSize", "nLevels"]
    } else if name.contains("Level") || name.contains("Value") {
        &["nLevels", "nValues", "aLevels"]
    } else {
        &[]
    };
    if let Some(found) = candidates.iter().find(|c| params.iter().any(|p| p.name == **c)) {
        return Some((*found).to_owned());
    }
    (name.contains("Constant") || name.contains("Value") || name.contains("Threshold")).then(|| "channels".to_owned())
}

#[cfg(test)]
mod tests;
