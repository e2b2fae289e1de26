//! Which function sizes a scratch buffer. NPP names a sizer after the family of the functions it
//! serves, the kind of buffer and, mostly, the same formats: `nppiMeanStdDevGetBufferHostSize_8u_C1R`
//! sizes `nppiMean_StdDev_8u_C1R`'s `pDeviceBuffer`, `nppiMorphGetBufferSize_8u_C1R` sizes
//! `nppiMorphOpenBorder_8u_C1R`'s, `nppiFullNormLevelGetBufferHostSize_8u32f_C1R` sizes
//! `nppiCrossCorrFull_NormLevel_8u32f_C1R`'s, `nppiFloodFillGetBufferSize` every flood fill's.

use crate::extract::is_sizer;

/// A sizer's name in parts: `nppiMorphGetBufferSize_8u_C1R_Ctx` is family `Morph`, kind
/// `Buffer`, formats `_8u_C1R`.
#[derive(Debug, Clone)]
struct Sizer {
    symbol: String,
    family: String,
    kind: String,
    formats: String,
}

/// Every sizer the headers declare.
#[derive(Debug, Clone, Default)]
pub struct Sizers(Vec<Sizer>);

impl Sizers {
    pub fn new<'a>(symbols: impl IntoIterator<Item = &'a str>) -> Sizers {
        let mut found: Vec<Sizer> = symbols
            .into_iter()
            .filter(|s| is_sizer(s))
            .filter_map(|symbol| {
                let bare = symbol.strip_prefix("nppi")?;
                let get = bare.find("Get")?;
                let size = get + bare[get..].find("Size")?;
                Some(Sizer {
                    symbol: symbol.to_owned(),
                    family: bare[..get].replace('_', ""),
                    kind: bare[get + 3..size].to_owned(),
                    formats: bare[size + 4..].trim_end_matches("_Ctx").to_owned(),
                })
            })
            .collect();
        found.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        Sizers(found)
    }

    /// The sizer of `symbol`'s scratch buffer `buffer`: the longest family that begins the
    /// function's (less `CrossCorr` and `Abs`, which the sizers' names leave out), of the buffer's
    /// kind (`Advanced`, `Antialiasing` or plain), whose formats are the function's, the
    /// function's without its mask or channel-of-interest variant, or none.
    pub fn find(&self, symbol: &str, buffer: &str) -> Option<String> {
        let bare = symbol.strip_prefix("nppi")?.strip_suffix("_Ctx")?;
        let parts: Vec<&str> = bare.split('_').collect();
        let split = parts
            .iter()
            .position(|p| p.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or(parts.len());
        let family = parts[..split].concat();
        let formats = if split < parts.len() {
            format!("_{}", parts[split..].join("_"))
        } else {
            String::new()
        };
        let families = [
            family.clone(),
            family.replace("CrossCorr", ""),
            family.replace("Abs", ""),
        ];
        let plain = formats.replace("CMR", "R").replace("MR", "R");
        let special = ["Advanced", "Antialiasing"].into_iter().find(|k| buffer.contains(k));
        let kind_fits = |kind: &str| match special {
            Some(k) => kind.contains(k),
            None => !kind.contains("Advanced") && !kind.contains("Antialiasing"),
        };
        let formats_rank = |f: &str| {
            if f == formats {
                Some(0)
            } else if f == plain {
                Some(1)
            } else if f.is_empty() {
                Some(2)
            } else {
                None
            }
        };
        self.0
            .iter()
            .filter(|s| kind_fits(&s.kind))
            .filter(|s| families.iter().any(|f| f.starts_with(&s.family)))
            .filter_map(|s| Some((s, formats_rank(&s.formats)?)))
            // The longest family, the closest formats, then the `_Ctx` form where both exist.
            .max_by_key(|(s, rank)| (s.family.len(), std::cmp::Reverse(*rank), s.symbol.ends_with("_Ctx")))
            .map(|(s, _)| s.symbol.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZERS: [&str; 9] = [
        "nppiMeanGetBufferHostSize_8u_C1R_Ctx",
        "nppiMeanGetBufferHostSize_8u_C1R",
        "nppiMeanStdDevGetBufferHostSize_8u_C1R_Ctx",
        "nppiMorphGetBufferSize_8u_C1R",
        "nppiFullNormLevelGetBufferHostSize_8u32f_C1R_Ctx",
        "nppiCrossCorrFull_NormLevel_GetAdvancedScratchBufferSize",
        "nppiFloodFillGetBufferSize",
        "nppiDistanceTransformPBAGetBufferSize",
        "nppiDistanceTransformPBAGetAntialiasingBufferSize",
    ];

    fn find(symbol: &str, buffer: &str) -> Option<String> {
        Sizers::new(SIZERS).find(symbol, buffer)
    }

    #[test]
    fn sizers_are_found_by_family_kind_and_formats() {
        let s = |x: &str| Some(x.to_owned());
        assert_eq!(find("nppiMean_8u_C1R_Ctx", "pDeviceBuffer"), s(SIZERS[0]));
        assert_eq!(find("nppiMean_8u_C1MR_Ctx", "pDeviceBuffer"), s(SIZERS[0]));
        assert_eq!(find("nppiMean_StdDev_8u_C1R_Ctx", "pDeviceBuffer"), s(SIZERS[2]));
        assert_eq!(find("nppiMorphOpenBorder_8u_C1R_Ctx", "pBuffer"), s(SIZERS[3]));
        assert_eq!(
            find("nppiCrossCorrFull_NormLevel_8u32f_C1R_Ctx", "pDeviceBuffer"),
            s(SIZERS[4])
        );
        assert_eq!(
            find(
                "nppiCrossCorrFull_NormLevelAdvanced_8u32f_C1R_Ctx",
                "pAdvancedScratchBuffer"
            ),
            s(SIZERS[5])
        );
        assert_eq!(find("nppiFloodFillRange_8u_C1IR_Ctx", "pBuffer"), s(SIZERS[6]));
        assert_eq!(
            find("nppiDistanceTransformAbsPBA_8u16u_C1R_Ctx", "pAntialiasingDeviceBuffer"),
            s(SIZERS[8])
        );
        assert_eq!(
            find("nppiDistanceTransformPBA_8u16u_C1R_Ctx", "pDeviceBuffer"),
            s(SIZERS[7])
        );
        // Another format, or a family no sizer serves: none.
        assert_eq!(find("nppiMean_16u_C1R_Ctx", "pDeviceBuffer"), None);
        assert_eq!(find("nppiSum_8u_C1R_Ctx", "pDeviceBuffer"), None);
    }
}
