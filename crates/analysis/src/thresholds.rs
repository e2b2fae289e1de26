//! The thresholds nppbench judges by, each defined once: pages, findings and `compare` use
//! these names, and the CLI's defaults are these values.

/// Images below this many pixels are launch-bound: their event-timed throughput moves with the
/// host, so it does not judge a fix, and `compare` judges them on host latency beside the kernel
/// time.
pub const LAUNCH_BOUND_PIXELS: u64 = 1_000_000;

/// NPP streams per new thread from which a scenario counts as creating streams it never
/// destroys; and the increase in streams per thread that `compare` calls 'more streams'.
pub const STREAMS_PER_THREAD: f64 = 0.5;

/// More streams left undestroyed than the base by this many is 'more streams' too.
pub const STREAMS_NEVER_DESTROYED_MARGIN: u32 = 1;

/// Kernel-time changes smaller than this, in percent of the base, are noise. Calibrated on the
/// H200 (docs/calibration.md): six same-against-same pairs differ by under 1% where the test
/// finds a difference at all.
pub const NOISE_PCT: f64 = 2.0;

/// Host-latency changes smaller than this, in percent, are noise: one call's launch and
/// synchronisation take 14.5 µs in one process and 18 µs in the next on the same H200 (the
/// host's scheduling), so same-against-same pairs move by up to 23.8% (docs/calibration.md), with
/// p < 0.01 where a process's three passes agree. 30%.
pub const LATENCY_NOISE_PCT: f64 = 30.0;

/// The significance level of the tests on passes.
pub const ALPHA: f64 = 0.01;

/// A candidate compares with its base when at least this share of the base's scenarios has a
/// counterpart in it (and the functions and matrix names agree); below, the page says so first
/// and `compare` exits 4 unless `--allow-partial`. 90%.
pub const MIN_COVERAGE: f64 = 0.9;

/// A trace that saw NPP for less than this, in seconds (from the first NPP call to the last
/// flush), saw a burst, not a rate: threads a program starts in its first tenth of a second say
/// nothing of how many it starts an hour, so no growth per hour, per day or time until the device
/// is full is projected from it; its threads are counted as seen, and the device's headroom is
/// given in such threads. Ten seconds: long enough that a program's start-up (its pool filled, its
/// first requests) is not the whole of what was seen; the committed traces (reports/trace/) lasted
/// 0.2 to 0.5 s each.
pub const MIN_TRACE_S_FOR_A_RATE: f64 = 10.0;
