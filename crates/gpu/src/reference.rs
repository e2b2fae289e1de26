//! A reference 8u→32f convert kernel, compiled at run time with NVRTC: what a plain CUDA kernel
//! achieves beside NPP on the same buffers.
//!
//! Two paths: where both row strides are multiples of 16 bytes, each thread reads 16 pixels in
//! one 16-byte load and writes them as four 16-byte stores; elsewhere one thread converts one
//! pixel. See [NVRTC](https://docs.nvidia.com/cuda/nvrtc/index.html).

use std::ffi::{CString, c_void};

use cudarc::driver::{result, sys};
use cudarc::nvrtc;
use nppbench_model::Geometry;

use crate::{DeviceBuffer, Gpu, GpuError, Stream};

const SOURCE: &str = r#"
extern "C" __global__ void convert_vec16(const unsigned char* __restrict__ src, int src_step,
                                         float* __restrict__ dst, int dst_step, int width, int height) {
    const int groups = width / 16;
    const int per_row = groups + width % 16;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= per_row) return;
    for (int y = blockIdx.y; y < height; y += gridDim.y) {
        const unsigned char* s = src + (size_t)y * src_step;
        float* d = (float*)((char*)dst + (size_t)y * dst_step);
        if (t < groups) {
            const uint4 v = reinterpret_cast<const uint4*>(s)[t];
            float4* o = reinterpret_cast<float4*>(d) + t * 4;
            const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                o[i] = make_float4((float)(w[i] & 0xffu), (float)((w[i] >> 8) & 0xffu),
                                   (float)((w[i] >> 16) & 0xffu), (float)(w[i] >> 24));
            }
        } else {
            const int x = groups * 16 + (t - groups);
            d[x] = (float)s[x];
        }
    }
}

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

const BLOCK: u32 = 128;
const MAX_GRID_Y: u32 = 65_535;

/// The compiled reference kernels, loaded into the device's primary context.
pub struct ReferenceConvert {
    gpu: Gpu,
    module: sys::CUmodule,
    vec16: sys::CUfunction,
    plain: sys::CUfunction,
}

impl ReferenceConvert {
    /// Compiles the kernels for this device with NVRTC and loads them. Fails, without side
    /// effects, where libnvrtc cannot be loaded.
    pub fn compile(gpu: &Gpu) -> Result<ReferenceConvert, GpuError> {
        crate::toolkit::preload("nvrtc");
        // SAFETY: only tries to open the library.
        if !unsafe { nvrtc::sys::is_culib_present() } {
            return Err(GpuError::Nvrtc("libnvrtc could not be loaded (looked in the CUDA toolkit folders and the loader path)".into()));
        }
        let (major, minor) = gpu.props().compute_capability;
        let opts = nvrtc::CompileOptions {
            options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
            ..Default::default()
        };
        let ptx = nvrtc::compile_ptx_with_opts(SOURCE, opts).map_err(|e| GpuError::Nvrtc(e.to_string()))?;
        let image = CString::new(ptx.to_src()).map_err(|e| GpuError::Nvrtc(e.to_string()))?;
        gpu.bind_to_thread()?;
        // SAFETY: `image` is a NUL-terminated PTX text that outlives the call.
        let module = unsafe { result::module::load_data(image.as_ptr().cast()) }.map_err(GpuError::driver("cuModuleLoadData"))?;
        let function = |name: &str| {
            let name = CString::new(name).expect("no NUL in kernel names");
            // SAFETY: `module` is loaded; the name is NUL-terminated.
            unsafe { result::module::get_function(module, name) }.map_err(GpuError::driver("cuModuleGetFunction"))
        };
        Ok(ReferenceConvert {
            gpu: gpu.clone(),
            module,
            vec16: function("convert_vec16")?,
            plain: function("convert_plain")?,
        })
    }

    /// Which path a geometry takes: `vec16` where both strides are multiples of 16, else `plain`.
    pub fn path(g: &Geometry) -> &'static str {
        if g.src_stride % 16 == 0 && g.dst_stride % 16 == 0 { "vec16" } else { "plain" }
    }

    /// Queues one conversion of `g`'s ROI from `src` into `dst` on `stream`.
    pub fn launch(&self, g: &Geometry, src: &DeviceBuffer, dst: &mut DeviceBuffer, stream: &Stream) -> Result<(), GpuError> {
        let bad = |message: String| GpuError::Driver {
            call: "reference convert",
            name: "bad argument".into(),
            message,
        };
        if src.len() < g.src_bytes() || dst.len() < g.dst_bytes() || g.validate(nppbench_model::Primitive::Convert8u32fC1).is_err() {
            return Err(bad(format!("geometry {} does not fit the buffers", g.label())));
        }
        let (function, threads) = match ReferenceConvert::path(g) {
            "vec16" => (self.vec16, g.width / 16 + g.width % 16),
            _ => (self.plain, g.width),
        };
        let grid = (threads.div_ceil(BLOCK), g.height.min(MAX_GRID_Y), 1);
        let (mut s, mut d) = (src.device_ptr(), dst.device_ptr());
        let (mut ss, mut ds, mut w, mut h) = (g.src_stride as i32, g.dst_stride as i32, g.width as i32, g.height as i32);
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

impl Drop for ReferenceConvert {
    fn drop(&mut self) {
        let _ = self.gpu.bind_to_thread();
        // SAFETY: loaded in `compile`, unloaded once, here.
        let _ = unsafe { result::module::unload(self.module) };
    }
}
