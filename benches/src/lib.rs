//! Criterion benchmarks of nppbench, run with `cargo bench` from this folder:
//! `convert` times NPP's convert and the reference kernel with CUDA events (needs a GPU; skips,
//! saying why, without one); `render` times rendering a report of 1,000 scenarios.
