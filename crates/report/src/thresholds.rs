//! The thresholds nppbench judges by, each defined once: pages, findings and `compare` use
//! these names, and the CLI's defaults are these values.

/// Images below this many pixels are launch-bound: their event-timed throughput moves with the
/// host, so it neither judges a fix nor, by default, fails the regression gate.
pub const LAUNCH_BOUND_PIXELS: u64 = 1_000_000;

/// NPP streams per new thread from which a scenario counts as creating streams it never
/// destroys; and the increase in streams per thread that `compare` calls 'more streams'.
pub const STREAMS_PER_THREAD: f64 = 0.5;

/// More streams left undestroyed than the base by this many is 'more streams' too.
pub const STREAMS_NEVER_DESTROYED_MARGIN: u32 = 1;

/// Throughput changes smaller than this, in percent of the base, are noise.
pub const NOISE_PCT: f64 = 5.0;

/// The significance level of the throughput test.
pub const ALPHA: f64 = 0.01;
