//! The built-in matrices (`quick`, `full`, `atlas`): their names and TOML text.

use std::path::Path;

use crate::{Matrix, ModelError};

/// The built-in matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Every alignment case at the public report's sizes and 1080p, for CI and a first look.
    Quick,
    /// Adds 4K and 8K, more pool sizes, the padded-ROI fix, and longer probes.
    Full,
    /// Every primitive of the catalogue, swept for the leak rule of each (see `atlas.toml`).
    Atlas,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Quick, Preset::Full, Preset::Atlas];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Full => "full",
            Preset::Atlas => "atlas",
        }
    }

    /// What the preset measures, in a line (`nppbench run --help` lists it).
    pub fn summary(self) -> &'static str {
        match self {
            Preset::Quick => "every alignment case at the public report's sizes and 1080p: CI, a first look",
            Preset::Full => "adds 4K and 8K, more pool sizes, the padded-ROI fix and longer probes",
            Preset::Atlas => "every function of the catalogue, swept for the leak rule of each",
        }
    }

    /// The preset's TOML text: the same format as a custom `--matrix` file.
    pub fn toml(self) -> &'static str {
        match self {
            Preset::Quick => include_str!("../presets/quick.toml"),
            Preset::Full => include_str!("../presets/full.toml"),
            Preset::Atlas => include_str!("../presets/atlas.toml"),
        }
    }

    pub fn matrix(self) -> Result<Matrix, ModelError> {
        Matrix::from_toml(self.toml(), Path::new(&format!("<preset {}>", self.name())))
    }
}

impl std::str::FromStr for Preset {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| ModelError::invalid(format!("preset {s:?}"), "unknown; use quick, full or atlas"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::{ContextFill, Primitive, StreamKind, Threading};

    #[test]
    fn presets_parse_and_cover_every_alignment_case() {
        for preset in [Preset::Quick, Preset::Full] {
            let m = preset.matrix().unwrap();
            let gs = m.geometries();
            for width_aligned in [false, true] {
                for stride_aligned in [false, true] {
                    for small in [false, true] {
                        assert!(
                            gs.iter().any(|g| g.width_aligned(m.primitives[0]) == width_aligned
                                && g.src_stride_aligned() == stride_aligned
                                && (g.width < 100) == small
                                && g.padded_from.is_none()),
                            "{} lacks width_aligned={width_aligned} stride_aligned={stride_aligned} small={small}",
                            preset.name()
                        );
                    }
                }
            }
            assert!(gs.iter().any(|g| g.width == 1920 && g.height == 1080));
            assert!(gs.iter().any(|g| (g.width, g.src_stride) == (31, 32)));
            assert!(gs.iter().any(|g| (g.width, g.height, g.src_stride) == (32, 35, 36)));
        }
        let full = Preset::Full.matrix().unwrap();
        assert!(full.geometries().iter().any(|g| g.width >= 3840));
        assert!(full.geometries().iter().any(|g| g.padded_from.is_some()));
        let pools: BTreeSet<_> = full
            .memory
            .iter()
            .filter_map(|s| match s.threading {
                Threading::Pool(n) => Some(n),
                _ => None,
            })
            .collect();
        assert!(pools.len() >= 2, "{pools:?}");
    }

    #[test]
    fn atlas_sweeps_every_primitive_with_contrast() {
        let m = Preset::Atlas.matrix().unwrap();
        assert_eq!(m.primitives.len(), Primitive::all().count());
        for p in Primitive::all() {
            let mem: Vec<_> = m.memory.iter().filter(|s| s.primitive == p).collect();
            let held_out = mem.iter().filter(|s| s.held_out).count();
            eprintln!("atlas: {p}: {} memory scenarios, {held_out} held out", mem.len());
            assert!(mem.len() <= 175, "{p}: {} memory scenarios", mem.len());
            // 40 held out of the leak sample, 20 of the wrong-pixel sample.
            assert_eq!(held_out, 60, "{p}");
            let unaligned = mem.iter().filter(|s| s.geometry.src_stride % 4 != 0).count();
            // Where NPP takes a stride of any byte (one-byte samples, fewer than four channels).
            let src = p.row().src;
            if p.row().sources > 0 && src.sample.bytes() == 1 && src.channels != 4 {
                assert!(unaligned >= 15, "{p}: {unaligned} source strides not a multiple of 4");
            }
            // Narrow rows and short images in the fit, as often as an octave's share (#28).
            let fit: Vec<_> = mem.iter().filter(|s| !s.held_out).collect();
            let narrow = fit.iter().filter(|s| s.geometry.width < 64).count();
            assert!(narrow >= 8, "{p}: {narrow} fitted widths under 64 px");
            assert!(
                fit.iter().any(|s| s.geometry.height <= 2),
                "{p}: no image of 1 or 2 rows"
            );
            // Widths of every parity and of both sides of 4 (the sample draws the rest).
            for modulus in [2u32, 4] {
                assert!(mem.iter().any(|s| s.geometry.width % modulus == 0), "{p} {modulus}");
                assert!(
                    mem.iter()
                        .any(|s| s.geometry.width % modulus != 0 && s.geometry.width % (modulus / 2) == 0),
                    "{p}: no width that is a multiple of {} but not of {modulus}",
                    modulus / 2
                );
            }
            // Each stride on both sides of every modulus a stride of its format can miss.
            let row = p.row();
            let sides = [
                (
                    row.sources > 0,
                    row.src,
                    mem.iter().map(|s| s.geometry.src_stride).collect::<Vec<_>>(),
                ),
                (
                    row.dst_is_image(),
                    row.dst,
                    mem.iter().map(|s| s.geometry.dst_stride).collect(),
                ),
            ];
            for (_, format, strides) in sides.iter().filter(|(image, ..)| *image) {
                let unit = if format.channels == 4 {
                    format.bytes_per_pixel()
                } else {
                    format.sample.bytes()
                };
                for modulus in [8u32, 16, 32, 64, 128].into_iter().filter(|m| u64::from(*m) > unit) {
                    assert!(strides.iter().any(|s| s % modulus == 0), "{p} stride {modulus}");
                    assert!(strides.iter().any(|s| s % modulus != 0), "{p} stride {modulus}");
                }
            }
            // Source and destination strides apart, where a primitive has both.
            if sides.iter().all(|(image, ..)| *image) {
                let g: Vec<_> = mem.iter().map(|s| s.geometry).collect();
                assert!(
                    g.iter().any(|g| g.src_stride % 64 == 0 && g.dst_stride % 64 != 0),
                    "{p}"
                );
                assert!(
                    g.iter().any(|g| g.src_stride % 64 != 0 && g.dst_stride % 64 == 0),
                    "{p}"
                );
            }
            for k in StreamKind::ALL {
                assert!(mem.iter().any(|s| s.stream == k), "{p} {k}");
            }
            for c in ContextFill::ALL {
                assert!(mem.iter().any(|s| s.context == c), "{p} {c}");
            }
            assert!(mem.iter().any(|s| matches!(s.threading, Threading::Pool(_))), "{p}");
            assert!(
                mem.iter().any(|s| s.geometry.pixels() >= 1_000_000),
                "{p}: a large image"
            );
            assert!(m.throughput.iter().any(|s| s.primitive == p), "{p}: throughput");
            // #29: the fix that ends the leak and the race is timed in the atlas itself, beside the
            // context it replaces, on an unaligned and an aligned large image.
            for width in [1918, 1920] {
                for c in [ContextFill::FromStream, ContextFill::DeclaredNonBlocking] {
                    assert!(
                        m.throughput
                            .iter()
                            .any(|s| s.primitive == p && s.geometry.width == width && s.context == c),
                        "{p}: throughput at {width} px, {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn atlas_draws_both_sides_of_every_modulus_and_narrow_rows_for_every_primitive() {
        let m = Preset::Atlas.matrix().unwrap();
        // Over the atlas: widths on both sides of every modulus up to 128, and under 192 px.
        for modulus in [8u32, 16, 32, 64, 128] {
            assert!(
                m.memory
                    .iter()
                    .any(|s| s.geometry.width % modulus != 0 && s.geometry.width % (modulus / 2) == 0),
                "{modulus}"
            );
        }
        let narrow = m.primitives.iter().filter(|p| {
            m.memory
                .iter()
                .any(|s| s.primitive == **p && !s.held_out && s.geometry.width < 192)
        });
        assert_eq!(
            narrow.count(),
            m.primitives.len(),
            "every primitive fits on a width under 192 px"
        );
        eprintln!(
            "atlas: {} memory ({} held out), {} throughput scenarios",
            m.memory.len(),
            m.memory.iter().filter(|s| s.held_out).count(),
            m.throughput.len()
        );
    }
}
