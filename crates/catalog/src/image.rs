//! Images as the CPU references see them (every sample an `f64`), and the bytes on the device:
//! source patterns, and samples encoded and decoded in the device's byte order.

use crate::{Format, Sample};

/// A packed image of `channels`-sample pixels, row-major, samples as `f64` (every NPP sample type
/// is exact in it).
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub data: Vec<f64>,
}

impl Image {
    pub fn new(width: usize, height: usize, channels: usize) -> Image {
        Image {
            width,
            height,
            channels,
            data: vec![0.0; width * height * channels],
        }
    }

    pub fn at(&self, x: usize, y: usize, c: usize) -> f64 {
        self.data[(y * self.width + x) * self.channels + c]
    }

    /// The sample at `(x, y)` with coordinates outside the image clamped to its edge (NPP's
    /// replicate border).
    pub fn clamped(&self, x: i64, y: i64, c: usize) -> f64 {
        let x = x.clamp(0, self.width as i64 - 1) as usize;
        let y = y.clamp(0, self.height as i64 - 1) as usize;
        self.at(x, y, c)
    }

    pub fn set(&mut self, x: usize, y: usize, c: usize, v: f64) {
        self.data[(y * self.width + x) * self.channels + c] = v;
    }

    /// Sets every sample from `f(x, y, c)`, rows shared out among the machine's cores (an 8K
    /// frame's reference takes seconds on one).
    pub fn fill(&mut self, f: impl Fn(usize, usize, usize) -> f64 + Sync) {
        let (width, channels) = (self.width, self.channels);
        let row_len = width * channels;
        par_rows(&mut self.data, row_len, |y, row| {
            for x in 0..width {
                for c in 0..channels {
                    row[x * channels + c] = f(x, y, c);
                }
            }
        });
    }

    /// Reads the `width × height` pixels at the start of a buffer whose rows are `stride` bytes.
    pub fn from_bytes(bytes: &[u8], format: Format, width: usize, height: usize, stride: usize) -> Image {
        let channels = usize::from(format.channels);
        let size = format.sample.bytes() as usize;
        let mut img = Image::new(width, height, channels);
        par_rows(&mut img.data, width * channels, |y, row| {
            let line = &bytes[y * stride..];
            for (i, v) in row.iter_mut().enumerate() {
                *v = decode(format.sample, &line[i * size..(i + 1) * size]);
            }
        });
        img
    }
}

/// Calls `f(row index, row)` for every `row_len`-long row of `data`, the rows shared out among
/// the machine's cores in contiguous bands.
pub fn par_rows<T: Send>(data: &mut [T], row_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    par_rows_weighted(data, row_len, row_len * std::mem::size_of::<T>(), f);
}

/// As [`par_rows`], where each row stands for `row_work` bytes of work (a row of per-row results
/// may stand for a whole image row): work under 64 KiB in all stays on the calling thread.
pub fn par_rows_weighted<T: Send>(data: &mut [T], row_len: usize, row_work: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    if row_len == 0 || data.is_empty() {
        return;
    }
    let rows = data.len() / row_len;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(rows)
        .max(1);
    if threads == 1 || rows.saturating_mul(row_work) < 1 << 16 {
        for (y, row) in data.chunks_mut(row_len).enumerate() {
            f(y, row);
        }
        return;
    }
    let band = rows.div_ceil(threads);
    std::thread::scope(|scope| {
        for (b, chunk) in data.chunks_mut(band * row_len).enumerate() {
            let f = &f;
            scope.spawn(move || {
                for (i, row) in chunk.chunks_mut(row_len).enumerate() {
                    f(b * band + i, row);
                }
            });
        }
    });
}

/// One sample's bytes (the device's byte order: little-endian, as the host's).
pub fn encode(sample: Sample, v: f64, out: &mut [u8]) {
    match sample {
        Sample::U8 => out[0] = v as u8,
        Sample::U16 => out[..2].copy_from_slice(&(v as u16).to_le_bytes()),
        Sample::S16 => out[..2].copy_from_slice(&(v as i16).to_le_bytes()),
        Sample::F32 => out[..4].copy_from_slice(&(v as f32).to_le_bytes()),
        Sample::F64 => out[..8].copy_from_slice(&v.to_le_bytes()),
    }
}

/// The value of one sample's bytes.
pub fn decode(sample: Sample, b: &[u8]) -> f64 {
    match sample {
        Sample::U8 => f64::from(b[0]),
        Sample::U16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
        Sample::S16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
        Sample::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Sample::F64 => f64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
    }
}

/// The `i`th value of source `seed`'s pattern: every 8-bit value occurs in any 256 consecutive
/// samples and neighbours differ; 16-bit samples spread over their whole range; floats are
/// quarter steps in [-32, 32), so ties of rounding and negative values both occur.
fn pattern_value(sample: Sample, seed: usize, i: usize) -> f64 {
    // Odd multipliers: every residue occurs.
    let m = [151usize, 97, 211][seed % 3];
    match sample {
        Sample::U8 => ((i * m + 17) % 256) as f64,
        Sample::U16 => ((i * m * 257 + 17) % 65536) as f64,
        Sample::S16 => ((i * m * 257 + 17) % 65536) as f64 - 32768.0,
        Sample::F32 | Sample::F64 => ((i * m + 17) % 256) as f64 / 4.0 - 32.0,
    }
}

/// A source buffer of `bytes` bytes filled with source `seed`'s pattern, sample by sample:
/// the padding between rows holds pattern too, so a padded ROI reads defined data.
pub fn source_pattern(sample: Sample, bytes: usize, seed: usize) -> Vec<u8> {
    let size = sample.bytes() as usize;
    let mut out = vec![0u8; bytes];
    // Bands of whole samples, filled in parallel (a 4K image's sources are tens of megabytes).
    let band = (64 << 10) / size * size;
    par_rows(&mut out, band, |b, part| {
        let first = b * band / size;
        for (i, chunk) in part.chunks_exact_mut(size).enumerate() {
            encode(sample, pattern_value(sample, seed, first + i), chunk);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel fill is the serial definition, sample for sample, across band edges and a
    /// ragged end.
    #[test]
    fn a_source_pattern_filled_in_bands_is_the_serial_pattern() {
        for sample in [Sample::U8, Sample::U16, Sample::F32] {
            let size = sample.bytes() as usize;
            let bytes = 3 * (64 << 10) + 7 * size + 3;
            let got = source_pattern(sample, bytes, 1);
            let mut want = vec![0u8; bytes];
            for (i, chunk) in want.chunks_exact_mut(size).enumerate() {
                encode(sample, pattern_value(sample, 1, i), chunk);
            }
            assert!(got == want, "{sample:?}");
        }
    }

    /// Rows of per-row results that stand for long image rows are shared out like the image's.
    #[test]
    fn weighted_rows_each_run_once() {
        let mut slots = vec![0u32; 2160];
        par_rows_weighted(&mut slots, 1, 15360, |y, s| s[0] = y as u32 + 1);
        assert!(slots.iter().enumerate().all(|(y, v)| *v == y as u32 + 1));
    }
}
