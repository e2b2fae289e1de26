//! What the caller calls and with which arguments: the plan (threads, calls, symbols and the site
//! facts: ROI, steps, the context's stream, device and flags), and values generated from a seed
//! for the rest, distinct per call and per parameter, so that any argument changed on the way
//! shows in the stand-in's log.

use std::ffi::{c_int, c_void};
use std::path::PathBuf;
use std::time::Duration;

use nppbench_npp_sys::{NppStreamContext, NppiPoint, NppiRect, NppiSize, Ptr};

/// What to call, from how many threads, with which site facts.
#[derive(Debug, Clone)]
pub struct Plan {
    pub threads: usize,
    pub calls_per_thread: usize,
    /// Symbols called in turn; empty: every catalogued one.
    pub symbols: Vec<String>,
    /// The ROI of thread `t`'s calls is `rois[t % rois.len()]`.
    pub rois: Vec<NppiSize>,
    pub src_step: c_int,
    pub dst_step: c_int,
    /// The context's `hStream`, `nCudaDeviceId` and `nStreamFlags`.
    pub stream: u64,
    pub device: c_int,
    pub flags: u32,
    /// Start each thread only once the one before has ended (a new thread per frame, as the
    /// programs that keep NPP's streams do); else all threads at once.
    pub one_thread_at_a_time: bool,
    /// A copy of the stand-in named `libcuda.so.1` ([`crate::driver::install`]) that the caller
    /// loads before calling, so that the process has a CUDA driver to ask a stream's flags.
    pub driver: Option<PathBuf>,
    /// How long the caller waits between loading the stand-in (and driver) and its first call:
    /// a program's own setup, during which the interposer's writer finds the driver.
    pub setup: Duration,
    /// Called by each thread before its first call with a handle of its own and 1, as a thread
    /// that creates its stream first tells CUPTI's callback (the interposer's test hook of
    /// stream events); `None`: no stream is created.
    pub stream_created: Option<extern "C" fn(u64, c_int)>,
}

/// The stream handle thread `t` creates where the plan has it create one.
pub fn stream_of_thread(t: usize) -> u64 {
    0x7d00_0000_0000 + ((t as u64) << 4)
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            threads: 1,
            calls_per_thread: 1,
            symbols: Vec::new(),
            rois: vec![NppiSize { width: 64, height: 32 }],
            src_step: 256,
            dst_step: 512,
            stream: 0,
            device: 0,
            flags: 0,
            one_thread_at_a_time: false,
            driver: None,
            setup: Duration::ZERO,
            stream_created: None,
        }
    }
}

/// The arguments of one call: the plan's site facts, and values generated from a seed for the
/// rest (distinct per call and per parameter).
pub struct Values<'a> {
    plan: &'a Plan,
    roi: NppiSize,
    seed: u64,
}

impl Values<'_> {
    pub(crate) fn new(plan: &Plan, roi: NppiSize, seed: u64) -> Values<'_> {
        Values { plan, roi, seed }
    }

    fn small(&self, modulus: u64) -> c_int {
        (self.seed % modulus) as c_int
    }

    pub fn ptr(&self, i: usize) -> Ptr {
        (0x1000_0000 + self.seed as usize * 0x40 + i) as Ptr
    }

    pub fn int(&self, i: usize) -> c_int {
        self.small(1_000_003) * 8 + i as c_int
    }

    pub fn f32(&self, i: usize) -> f32 {
        self.small(4099) as f32 * 0.5 + i as f32
    }

    pub fn size(&self, i: usize) -> NppiSize {
        NppiSize {
            width: self.small(997) + i as c_int,
            height: i as c_int + 3,
        }
    }

    pub fn point(&self, i: usize) -> NppiPoint {
        NppiPoint {
            x: self.small(13) + i as c_int,
            y: i as c_int,
        }
    }

    pub fn rect(&self, i: usize) -> NppiRect {
        NppiRect {
            x: i as c_int,
            y: self.small(7),
            width: self.small(101) + i as c_int,
            height: 2 + i as c_int,
        }
    }

    pub fn src_step(&self) -> c_int {
        self.plan.src_step
    }

    pub fn dst_step(&self) -> c_int {
        self.plan.dst_step
    }

    pub fn roi(&self) -> NppiSize {
        self.roi
    }

    pub fn ctx(&self) -> NppStreamContext {
        NppStreamContext {
            h_stream: self.plan.stream as *mut c_void,
            n_cuda_device_id: self.plan.device,
            n_multi_processor_count: self.small(211),
            n_max_threads_per_multi_processor: 2048,
            n_max_threads_per_block: 1024,
            n_shared_mem_per_block: 49_152 + self.seed as usize,
            n_cuda_dev_attr_compute_capability_major: 9,
            n_cuda_dev_attr_compute_capability_minor: self.small(10),
            n_stream_flags: self.plan.flags,
            n_reserved0: self.small(i32::MAX as u64),
        }
    }
}
