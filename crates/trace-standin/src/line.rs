//! One logged call: `fn=<symbol> tid=<thread>` then `name=value` for every argument in order,
//! each value written exactly (pointers and float bits in hex, every context field).

use std::ffi::c_int;
use std::fmt::Write;

use nppbench_npp_sys::{NppStreamContext, NppiPoint, NppiRect, NppiSize, Ptr};

/// A call's line, built argument by argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line(String);

impl Line {
    /// A line for `symbol`, called on this thread.
    pub fn new(symbol: &str) -> Line {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        Line(format!("fn={symbol} tid={tid}"))
    }

    fn push(&mut self, name: &str, value: std::fmt::Arguments<'_>) {
        let _ = write!(self.0, " {name}={value}");
    }

    pub fn ptr(&mut self, name: &str, v: Ptr) {
        self.push(name, format_args!("{:#x}", v as usize));
    }

    pub fn int(&mut self, name: &str, v: c_int) {
        self.push(name, format_args!("{v}"));
    }

    pub fn f32(&mut self, name: &str, v: f32) {
        self.push(name, format_args!("f32:{:#010x}", v.to_bits()));
    }

    pub fn size(&mut self, name: &str, v: NppiSize) {
        self.push(name, format_args!("{}x{}", v.width, v.height));
    }

    pub fn point(&mut self, name: &str, v: NppiPoint) {
        self.push(name, format_args!("({},{})", v.x, v.y));
    }

    pub fn rect(&mut self, name: &str, v: NppiRect) {
        self.push(name, format_args!("({},{},{}x{})", v.x, v.y, v.width, v.height));
    }

    pub fn ctx(&mut self, name: &str, v: &NppStreamContext) {
        self.push(
            name,
            format_args!(
                "{{stream:{:#x},device:{},sms:{},threads_per_sm:{},threads_per_block:{},smem:{},cc:{}.{},flags:{},reserved:{}}}",
                v.h_stream as usize,
                v.n_cuda_device_id,
                v.n_multi_processor_count,
                v.n_max_threads_per_multi_processor,
                v.n_max_threads_per_block,
                v.n_shared_mem_per_block,
                v.n_cuda_dev_attr_compute_capability_major,
                v.n_cuda_dev_attr_compute_capability_minor,
                v.n_stream_flags,
                v.n_reserved0
            ),
        );
    }

    pub fn text(self) -> String {
        self.0
    }
}
