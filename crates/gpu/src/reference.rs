//! A reference 8u→32f convert kernel, compiled at run time with NVRTC: what a plain CUDA kernel
//! achieves beside NPP on the same buffers.
//!
//! Two paths: where the source stride is a multiple of 4 bytes and the destination stride of 16
//! (and the width at least 4), each thread reads four pixels in one 4-byte load and writes them
//! in one 16-byte store; elsewhere one thread converts one pixel. See [NVRTC](https://docs.nvidia.com/cuda/nvrtc/index.html).

use std::ffi::{CString, c_void};

use cudarc::driver::{result, sys};
use cudarc::nvrtc;
use nppbench_model::Geometry;

use crate::{DeviceBuffer, Gpu, GpuError, Stream};

const SOURCE: &str = r#"
// One thread converts four pixels of a row: a 4-byte load and a 16-byte store. A warp moves
// 128 contiguous bytes in and 512 out, each in one coalesced access. The last thread of a row
// also converts the width % 4 pixels left over.
extern "C" __global__ void convert_vector(const unsigned char* __restrict__ src, int src_step,
                                          float* __restrict__ dst, int dst_step, int width, int height) {
    const int quads = width / 4;
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= quads) return;
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        const unsigned char* s = src + (size_t)y * src_step;
        float* d = (float*)((char*)dst + (size_t)y * dst_step);
        const uchar4 v = reinterpret_cast<const uchar4*>(s)[q];
        reinterpret_cast<float4*>(d)[q] = make_float4((float)v.x, (float)v.y, (float)v.z, (float)v.w);
        if (q == quads - 1) {
            for (int x = quads * 4; x < width; ++x) d[x] = (float)s[x];
        }
    }
}

// One thread converts one pixel: any stride.
extern "C" __global__ void convert_plain(const unsigned char* __restrict__ src, int src_step,
                                         float* __restrict__ dst, int dst_step, int width, int height) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= width) return;
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        float* d = (float*)((char*)dst + (size_t)y * dst_step);
        d[x] = (float)src[(size_t)y * src_step + x];
    }
}
"#;

const BLOCK: u32 = 256;

/// The primitive whose geometry the kernel's buffers are sized and checked by: the catalogue's
/// row whose `gpu_reference` is this kernel's.
const CONVERT: nppbench_model::Primitive = nppbench_model::Primitive::CONVERT_8U32F_C1R;
const MAX_GRID_Y: u32 = 65_535;

/// The compiled reference kernels, loaded into the device's primary context.
pub struct ReferenceConvert {
    gpu: Gpu,
    module: sys::CUmodule,
    vector: sys::CUfunction,
    plain: sys::CUfunction,
}

impl ReferenceConvert {
    /// Compiles the kernels for this device with NVRTC and loads them. Fails, without side
    /// effects, where libnvrtc cannot be loaded.
    pub fn compile(gpu: &Gpu) -> Result<ReferenceConvert, GpuError> {
        let module = load_module(gpu, SOURCE)?;
        Ok(ReferenceConvert {
            gpu: gpu.clone(),
            module,
            vector: function(module, "convert_vector")?,
            plain: function(module, "convert_plain")?,
        })
    }

    /// Which path a geometry takes: `vector` where the source stride is a multiple of 4, the
    /// destination stride of 16 and the width at least 4; else `plain`.
    pub fn path(g: &Geometry) -> &'static str {
        if g.src_stride.is_multiple_of(4) && g.dst_stride.is_multiple_of(16) && g.width >= 4 {
            "vector"
        } else {
            "plain"
        }
    }

    /// Queues one conversion of `g`'s ROI from `src` into `dst` on `stream`.
    pub fn launch(
        &self,
        g: &Geometry,
        src: &DeviceBuffer,
        dst: &mut DeviceBuffer,
        stream: &Stream,
    ) -> Result<(), GpuError> {
        let bad = |message: String| GpuError::Driver {
            call: "reference convert",
            name: "bad argument".into(),
            message,
        };
        if src.len() < g.src_bytes() || dst.len() < g.dst_bytes(CONVERT) || g.validate(CONVERT).is_err() {
            return Err(bad(format!("geometry {} does not fit the buffers", g.label())));
        }
        let (function, threads) = match ReferenceConvert::path(g) {
            "vector" => (self.vector, g.width / 4),
            _ => (self.plain, g.width),
        };
        let grid = (threads.div_ceil(BLOCK), g.height.min(MAX_GRID_Y), 1);
        let (mut s, mut d) = (src.device_ptr(), dst.device_ptr());
        let (mut ss, mut ds, mut w, mut h) = (
            g.src_stride as i32,
            g.dst_stride as i32,
            g.width as i32,
            g.height as i32,
        );
        let mut params: [*mut c_void; 6] = [
            (&mut s as *mut u64).cast(),
            (&mut ss as *mut i32).cast(),
            (&mut d as *mut u64).cast(),
            (&mut ds as *mut i32).cast(),
            (&mut w as *mut i32).cast(),
            (&mut h as *mut i32).cast(),
        ];
        self.gpu.bind_to_thread()?;
        // SAFETY: the parameters match the kernel's signature and live until the call returns
        // (the driver copies them at launch); the buffers were checked to hold the geometry.
        unsafe { result::launch_kernel(function, grid, (BLOCK, 1, 1), 0, stream.raw(), &mut params) }
            .map_err(GpuError::driver("cuLaunchKernel"))
    }
}

const DELAY_SOURCE: &str = r#"
// One thread spins for a fixed number of SM clock cycles: a known amount of GPU work.
extern "C" __global__ void delay(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) { }
}
"#;

const TRAP_SOURCE: &str = r#"
// A kernel that stops with a trap: the fault tests' poisoned context.
extern "C" __global__ void trap() { __trap(); }
"#;

/// For the fault tests (`NPPBENCH_FAULT=trap@…`): runs a kernel that traps on `gpu` and waits for
/// it, which poisons the context as a faulty kernel of NPP's would. Returns the error the driver
/// gave (sticky: every later call on the context returns it too); `Ok` only where the kernel
/// somehow ran to its end.
pub fn run_trap_kernel(gpu: &Gpu) -> Result<(), GpuError> {
    let function = function(load_module(gpu, TRAP_SOURCE)?, "trap")?;
    let mut params: [*mut c_void; 0] = [];
    // SAFETY: the kernel takes no parameters; the legacy default stream (NULL) always exists.
    unsafe { result::launch_kernel(function, (1, 1, 1), (1, 1, 1), 0, std::ptr::null_mut(), &mut params) }
        .map_err(GpuError::driver("cuLaunchKernel"))?;
    gpu.synchronize()
}

/// The kernel `name` of a loaded `module`.
fn function(module: sys::CUmodule, name: &str) -> Result<sys::CUfunction, GpuError> {
    let name = CString::new(name).expect("no NUL in kernel names");
    // SAFETY: `module` is loaded; the name is NUL-terminated.
    unsafe { result::module::get_function(module, name) }.map_err(GpuError::driver("cuModuleGetFunction"))
}

/// Compiles `source` for `gpu` with NVRTC and loads it into the device's primary context.
fn load_module(gpu: &Gpu, source: &str) -> Result<sys::CUmodule, GpuError> {
    crate::toolkit::preload("nvrtc");
    // SAFETY: only tries to open the library.
    if !unsafe { nvrtc::sys::is_culib_present() } {
        return Err(GpuError::Nvrtc(
            "libnvrtc could not be loaded (looked in the CUDA toolkit folders and the loader path)".into(),
        ));
    }
    let (major, minor) = gpu.props().compute_capability;
    let opts = nvrtc::CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
        ..Default::default()
    };
    let ptx = nvrtc::compile_ptx_with_opts(source, opts).map_err(|e| GpuError::Nvrtc(e.to_string()))?;
    let image = CString::new(ptx.to_src()).map_err(|e| GpuError::Nvrtc(e.to_string()))?;
    gpu.bind_to_thread()?;
    // SAFETY: `image` is a NUL-terminated PTX text that outlives the call.
    unsafe { result::module::load_data(image.as_ptr().cast()) }.map_err(GpuError::driver("cuModuleLoadData"))
}

/// The test hook's delay kernel: a fixed number of clock cycles of GPU work, queued after each
/// call so that a known slowdown can be shown to be found (`NPPBENCH_DELAY_CYCLES`).
pub struct DelayKernel {
    gpu: Gpu,
    module: sys::CUmodule,
    function: sys::CUfunction,
}

impl DelayKernel {
    /// The kernel's name, as CUPTI's records give it.
    pub const NAME: &'static str = "delay";

    pub fn compile(gpu: &Gpu) -> Result<DelayKernel, GpuError> {
        let module = load_module(gpu, DELAY_SOURCE)?;
        let function = function(module, DelayKernel::NAME)?;
        Ok(DelayKernel {
            gpu: gpu.clone(),
            module,
            function,
        })
    }

    /// Queues `cycles` SM clock cycles of spinning on `stream`.
    pub fn launch(&self, cycles: u64, stream: &Stream) -> Result<(), GpuError> {
        let mut cycles = cycles as i64;
        let mut params: [*mut c_void; 1] = [(&mut cycles as *mut i64).cast()];
        self.gpu.bind_to_thread()?;
        // SAFETY: the parameter matches the kernel's signature and lives until the call returns.
        unsafe { result::launch_kernel(self.function, (1, 1, 1), (1, 1, 1), 0, stream.raw(), &mut params) }
            .map_err(GpuError::driver("cuLaunchKernel"))
    }
}

impl Drop for DelayKernel {
    fn drop(&mut self) {
        let _ = self.gpu.bind_to_thread();
        // SAFETY: loaded in `compile`, unloaded once, here.
        let _ = unsafe { result::module::unload(self.module) };
    }
}

impl Drop for ReferenceConvert {
    fn drop(&mut self) {
        let _ = self.gpu.bind_to_thread();
        // SAFETY: loaded in `compile`, unloaded once, here.
        let _ = unsafe { result::module::unload(self.module) };
    }
}
