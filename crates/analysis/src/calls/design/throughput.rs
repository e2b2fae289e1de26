//! A designed function's one throughput point (issue #45): after its shapes,
//! `call-catalogue --design` calls it [`TIMED_CALLS`] times back to back at [`AT`], aligned, on a
//! non-blocking stream declared so, alone on the GPU with the L2 cache warm, timed by CUDA
//! events, and writes the time per call and the bytes its images move (a line without a shape).

use serde::{Deserialize, Serialize};

/// The ROI of the point: 1080p.
pub const AT: (u32, u32) = (1920, 1080);
/// Calls timed back to back, after one untimed.
pub const TIMED_CALLS: u32 = 5;

/// The point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub width: u32,
    pub height: u32,
    pub calls: u32,
    /// GPU time per call, by CUDA events around the calls.
    pub ns_per_call: f64,
    /// The ROI's bytes of every image read plus every image written (an in-place image twice;
    /// steps' padding not counted).
    pub bytes_per_call: u64,
}

impl Throughput {
    /// GB/s (10⁹ bytes read plus written per second).
    pub fn gbps(&self) -> Option<f64> {
        crate::figure::gbps(self.bytes_per_call as f64, self.ns_per_call)
    }
}

/// How many points there are, and the median of their GB/s (`None` without any).
pub fn median_gbps<'a>(points: impl IntoIterator<Item = &'a Throughput>) -> (usize, Option<f64>) {
    let all: Vec<f64> = points.into_iter().filter_map(Throughput::gbps).collect();
    (all.len(), nppbench_stats::median(&all))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made-up points (not measurements): GB/s is bytes over nanoseconds, and the median is
    /// taken over the points that have one.
    #[test]
    fn gbps_and_the_median_of_points() {
        let point = |ns| Throughput {
            width: AT.0,
            height: AT.1,
            calls: TIMED_CALLS,
            ns_per_call: ns,
            bytes_per_call: 4_147_200,
        };
        assert_eq!(point(2_073_600.0).gbps(), Some(2.0));
        assert_eq!(point(0.0).gbps(), None);
        let points = [point(4_147_200.0), point(0.0), point(1_036_800.0), point(414_720.0)];
        assert_eq!(median_gbps(&points), (3, Some(4.0)));
        assert_eq!(median_gbps(&[]), (0, None));
    }
}
