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

/// Kernel-time changes smaller than this, in percent of the base, are noise: the band
/// `calibration::fit_noise_pct` fits on every committed calibration machine, and on the others
/// with any one of them left out, which then flags nothing on the one left out
/// (docs/calibration.md: eight H100 machines). 2.5%.
pub const NOISE_PCT: f64 = 2.5;

/// The smallest change in kernel time per call that can be told from the GPU's clock, ns: CUPTI
/// stamps kernels on a clock that ticks every 32 ns on these GPUs (every per-call median in the
/// committed runs is a multiple of 32 ns, or half-way between two), so the median of a pass moves
/// by a tick or two between processes with nothing changed (a 31×31 convert: 2144, 2176 or 2208 ns
/// in one run). Two ticks. Below 2.56 µs a call, this is wider than [`NOISE_PCT`], and
/// the noise band of the kernel time is this instead.
pub const KERNEL_TIME_RESOLUTION_NS: f64 = 64.0;

/// A pass has a figure for the calls whose kernels ran in turn where at least this share of its
/// recorded calls did: 20 of 200 calls, so that the median is not one or two calls'. 10%. Kernels
/// in turn do not share the GPU, so their busy time is steady whatever the share (6.80 to 6.88 µs
/// for the 1918×1080 convert on GPU-a9b49c52, in passes with 0 to 147 of 200 calls at once).
pub const IN_TURN_MIN_SHARE: f64 = 0.1;

/// A pass has a figure for the calls whose kernels ran at once where at least this share of its
/// recorded calls did: most of them. Where only a few calls of a pass overlap, the last-columns
/// kernel was launched late and overlaps only in part, so their busy time slides between the two
/// layouts' (6.56 to 6.90 µs on GPU-a9b49c52 in passes with 1 to 20 of 200 calls at once, 6.24
/// to 6.27 µs in passes with 107 to 147). 50%.
pub const AT_ONCE_MIN_SHARE: f64 = 0.5;

/// Where a run made by an older nppbench timed no layout of a call's kernels apart (runs made
/// before 2026-11-27), compare judges the busy time over all calls; it does not where the two
/// runs' processes drew the layouts this far apart: their mean shares of calls with kernels at
/// once differ by this much or more. The busy time over all calls falls in two modes with the
/// share (the 1918×1080 convert: 6.27 µs with most calls at once, 6.85 µs with few), so two runs
/// that drew different shares differ by up to 9% with nothing changed: the calibration runs of
/// five H100s (reports/calibration/GPU-*), each layout's busy time removed as an older build
/// would have written them, tripped the regression gate in 5 of their 105 quick pairs (8 of 210
/// with the base's figures removed alone), every trip between runs whose shares differ by 41 to
/// 82 points (crates/analysis/tests/older_runs.rs). 25 points.
pub const OLDER_SHARES_APART: f64 = 0.25;

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
