//! What runs on the traced program's threads, and nothing else: the exported `nppi…_Ctx`
//! functions (`interposed.rs`, generated) and the one record path they share (`record.rs`:
//! `site.rs` packs a call's facts into one record), the real symbols they forward to
//! (`real.rs`), the per-thread feeds the records are appended to (`feed.rs`), the stream flags
//! cache (`flags.rs`), the clock and thread id (`clock.rs`, `tid.rs`), the process-wide state
//! every call reads, in one line (`hot.rs`), the caller's `errno` kept across slow paths
//! (`errno.rs`), the driver the program mapped (`driver.rs`) and when a call asks it whether its
//! stream has work queued (`pending.rs`), CUPTI's stream callback (`cupti.rs`, with the creating
//! stack: `stack.rs`), what the first CUDA work sets off and the flags each call reads
//! (`work.rs`), and the handler of the signals that end a service (`signals.rs`).
//!
//! A call is usually cold (between two calls the program and CUDA swept the caches; in a
//! thread-per-call service every call is a thread's first), and a cold call pays for each line
//! of code and data it touches: the record path's shared code is in one section
//! (`nppbench_hot`, `record.rs`), and what it reads is in as few lines as it can be.
//!
//! Nothing here takes a lock or names the writer (`xtask/tests/tidy.rs` checks both): a program
//! thread never waits for the writer, and a signal that interrupts one here can never leave the
//! exit path waiting on it. The writer (`writer/`) reads what is published here through atomics
//! and lock-free queues.

pub(crate) mod clock;
pub(crate) mod cupti;
pub(crate) mod driver;
pub(crate) mod errno;
pub(crate) mod feed;
pub(crate) mod flags;
pub(crate) mod hot;
pub mod interposed;
pub(crate) mod pending;
pub(crate) mod prefetch;
pub mod real;
pub mod record;
pub(crate) mod signals;
pub mod site;
pub(crate) mod stack;
pub(crate) mod tid;
pub(crate) mod work;
