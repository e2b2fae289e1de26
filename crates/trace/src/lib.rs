//! The interposer `nppbench trace` and `nppbench shield` preload into a program
//! (`libnppbench_trace.so`): it defines every catalogued `nppi…_Ctx` symbol, hands each call to
//! one seam (`seam.rs`) where the shield (`shield/`, on where a plan is given: docs/shield.md)
//! may pass NPP a context declaring a non-blocking stream, and records each call (function, ROI, steps, declared and real
//! stream flags, device, thread, time, status) and hands it, unchanged, to NPP's own function.
//! Beside the calls it counts the CUDA streams created and destroyed (CUPTI; outside a
//! catalogued call, named by the NPP frames on the creating stack), samples device memory (NVML:
//! the process's own, or, where NVML does not list the process, as in a container, its devices'
//! as a whole; `writer/memory.rs` says how the scope is chosen), and writes trace.json
//! ([`nppbench_model::TraceFile`]) every half second and at exit (`atexit`, and `_exit`, which it
//! interposes too).
//!
//! The shape is bytehound's `preload`, behind one seam: what runs on the program's threads is in
//! `recorder/` (the exports, the record path, the feeds, packing, flags, clock, thread id, the
//! real-symbol lookup, the CUPTI callback, the signal handler), and takes no lock and names no
//! writer module (`xtask/tests/tidy.rs` checks it); the caller's thread appends one record, one
//! cache line, to chunks of its own, and the streams it creates and destroys go the same way.
//! Everything else is in `writer/`: a writer thread reads the feeds, groups the records into sites
//! per thread and keeps the stream registry (`thread.rs`, `streams.rs`), samples memory, names
//! stacks and writes the file (`mod.rs`, `snapshot.rs`, `memory.rs`). A thread's first call costs
//! the most (it takes a feed the writer registered ahead, unless a stream it created did); what is
//! done once per process is never done per thread (NPP's functions are looked up once, the CUDA
//! driver once, by the writer where it can: `recorder/driver.rs`; a stream's flags once, or never
//! where its creation told them: `recorder/flags.rs`), and the trace gives the first calls' cost
//! apart, and the CUPTI callbacks'. The exported functions are generated from the catalogue's rows
//! by `build.rs` (`recorder/interposed.rs`); the one recording function they call is
//! [`recorder::record::call`]. Linked as an rlib (the overhead bench) it starts no writer: only the
//! shared object does, and the bench reads the records itself ([`drain`]). The names the CLI shares
//! with it are [`nppbench_model::TraceFile`]'s, so the CLI never links it.

pub mod protocol;
pub mod recorder;
pub mod seam;
pub mod shield;
mod writer;

pub use recorder::interposed::SYMBOLS;
pub use recorder::{real, record, site};

/// Held by the unit tests that need the CUDA driver unmapped while they run, and by the one that
/// starts NVML, which maps it (on the GPU machine a flags test, finding the driver mapped midway,
/// asked the real driver about a made-up stream and the test process crashed).
#[cfg(test)]
pub(crate) static DRIVER_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Keeps feeds registered ahead for threads to come and chunks in the pool, as the writer does at
/// each tick in the preloaded library (the overhead bench calls it, so that a new thread's first
/// call is timed as it runs there).
pub fn refill_spares() {
    recorder::tid::prepare();
    recorder::feed::refill();
}

/// Readies the record path as the preloaded library's initialiser does (the overhead bench calls
/// it once): the clock's calibration, and each thread's state reached from its thread pointer
/// once two threads agreed where it is (this one and a new one).
pub fn start_recorder() {
    recorder::clock::start();
    recorder::feed::note_offset();
    let _ = std::thread::spawn(recorder::feed::confirm_offset).join();
}

/// Reads every thread's records as the writer does at each tick in the preloaded library, giving
/// back the chunks read (the overhead bench calls it from a thread of its own, as the writer
/// runs beside the program's threads there).
pub fn drain() {
    writer::thread::each_thread(std::time::Instant::now() + std::time::Duration::from_secs(1), |_| {});
}
