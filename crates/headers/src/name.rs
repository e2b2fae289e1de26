//! What a function's name says: `nppi{Operation}_{samples}_{layout}{variants}_Ctx`, as
//! `nppiAdd_8u_C1RSfs_Ctx`: sample types (8u, 16s, 32f, 8u32f), the channel layout (C1, C3, AC4,
//! P3, P2C3) and the variants (I in place, M masked, C one channel of interest, R ROI, Sfs scaled).

use serde::Serialize;

/// The formats a name gives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Formats {
    /// Each sample type, in the name's order (`8u32f` gives `8u`, `32f`).
    pub samples: Vec<String>,
    /// The channel layout, sources' then destination's (`C1`, `AC4`, `P2C3`); empty if none.
    pub layout: String,
    /// The variants after the layout, in order (`I`, `M`, `C`, `R`, `Sfs`, `s`).
    pub variants: Vec<String>,
}

impl Formats {
    pub fn has(&self, variant: &str) -> bool {
        self.variants.iter().any(|v| v == variant)
    }
}

/// `Add` of `nppiAdd_8u_C1RSfs_Ctx`: the name's first part after `nppi`.
pub fn operation(symbol: &str) -> &str {
    let bare = symbol.strip_prefix("nppi").unwrap_or(symbol);
    bare.split('_').next().unwrap_or(bare)
}

/// A function's name as nppbench writes it: `Add_8u_C1RSfs` of `nppiAdd_8u_C1RSfs_Ctx` (a name
/// without the prefix or the suffix is left as it is).
pub fn bare(symbol: &str) -> &str {
    let bare = symbol.strip_prefix("nppi").unwrap_or(symbol);
    bare.strip_suffix("_Ctx").unwrap_or(bare)
}

/// The formats of `symbol`.
pub fn formats(symbol: &str) -> Formats {
    let bare = bare(symbol);
    let mut found = Formats::default();
    for part in bare.split('_').skip(1) {
        if let Some(samples) = sample_types(part) {
            found.samples.extend(samples);
        } else if let Some((layout, variants)) = layout(part) {
            found.layout = layout;
            found.variants = variants;
        }
    }
    found
}

/// `8u32f` → [`8u`, `32f`]; `None` unless the whole part is sample types.
fn sample_types(part: &str) -> Option<Vec<String>> {
    let mut samples = Vec::new();
    let mut rest = part;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let kind = ["sc", "fc", "uc", "fC", "u", "s", "f"]
            .into_iter()
            .find(|k| rest[digits..].starts_with(k))?;
        samples.push(rest[..digits + kind.len()].to_owned());
        rest = &rest[digits + kind.len()..];
    }
    (!samples.is_empty()).then_some(samples)
}

/// `IP3R` → (`P3`, [`I`, `R`]); `C3P3R` → (`C3P3`, [`R`]); `None` unless the part is a layout.
fn layout(part: &str) -> Option<(String, Vec<String>)> {
    let mut variants = Vec::new();
    let mut rest = part;
    if let Some(r) = rest.strip_prefix('I')
        && starts_channel_group(r)
    {
        variants.push("I".to_owned());
        rest = r;
    }
    let mut layout = String::new();
    while let Some(len) = channel_group(rest) {
        layout.push_str(&rest[..len]);
        rest = &rest[len..];
    }
    if layout.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let token = ["Sfs", "I", "M", "C", "R", "s"]
            .into_iter()
            .find(|t| rest.starts_with(t))?;
        variants.push(token.to_owned());
        rest = &rest[token.len()..];
    }
    Some((layout, variants))
}

fn starts_channel_group(s: &str) -> bool {
    channel_group(s).is_some()
}

/// The length of the channel group `s` starts with (`C1`, `AC4`, `A0C4`, `AP4`, `P3`).
fn channel_group(s: &str) -> Option<usize> {
    let prefix = ["A0C", "AC", "AP", "C", "P"].into_iter().find(|p| s.starts_with(p))?;
    let digit = s[prefix.len()..].chars().next()?;
    digit.is_ascii_digit().then_some(prefix.len() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(samples: &[&str], layout: &str, variants: &[&str]) -> Formats {
        Formats {
            samples: samples.iter().map(|s| s.to_string()).collect(),
            layout: layout.to_owned(),
            variants: variants.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn names_give_samples_layout_and_variants() {
        assert_eq!(formats("nppiAdd_8u_C1IRSfs_Ctx"), f(&["8u"], "C1", &["I", "R", "Sfs"]));
        assert_eq!(formats("nppiConvert_8u32f_C1R_Ctx"), f(&["8u", "32f"], "C1", &["R"]));
        assert_eq!(formats("nppiNV12ToRGB_8u_P2C3R_Ctx"), f(&["8u"], "P2C3", &["R"]));
        assert_eq!(formats("nppiMean_8u_C3CMR_Ctx"), f(&["8u"], "C3", &["C", "M", "R"]));
        assert_eq!(formats("nppiAlphaComp_8u_AC4R_Ctx"), f(&["8u"], "AC4", &["R"]));
        assert_eq!(formats("nppiGammaFwd_8u_IP3R_Ctx"), f(&["8u"], "P3", &["I", "R"]));
        assert_eq!(formats("nppiLUT_Linear_8u_C1R_Ctx"), f(&["8u"], "C1", &["R"]));
        assert_eq!(
            formats("nppiI444_8u_ToUYVP_10u_P3C3R_Ctx"),
            f(&["8u", "10u"], "P3C3", &["R"])
        );
        assert_eq!(formats("nppiWarpAffineBatchInit_Ctx"), f(&[], "", &[]));
        assert_eq!(operation("nppiMean_StdDev_8u_C1R_Ctx"), "Mean");
    }
}
