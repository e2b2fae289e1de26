//! A planned call made again with the same buffers, for the oracles that need a call several times
//! (issue #45): the leak's (the call from new host threads) and the race's (the inputs written
//! late on the caller's stream, the outputs copied right after the call, as a program that
//! uploads with `cudaMemcpyAsync` and reads back does).

use nppbench_gpu::{DeviceBuffer, Gpu, GpuError, Stream};
use nppbench_headers::roles::Role;
use nppbench_headers::synth::Fill;
use nppbench_npp_sys::NppStatus;

use super::{Made, Outputs, written};
use crate::{DST_FILL, Npp, NppError, StreamContext};

/// Whether NPP reads a buffer of this role (an in-place image is read, then written).
fn read(role: Role) -> bool {
    matches!(
        role,
        Role::Source | Role::SourcePlanes | Role::SourceDestination | Role::SourceDestinationPlanes | Role::Mask
    )
}

/// The byte a buffer planned as `fill` is set to when allocated (a pattern is uploaded instead),
/// and a written buffer set back to before a call made again: the same byte, so that the bytes the call leaves alone (a result buffer larger than the value NPP
/// writes, zeroed) are the same as when the outputs it is compared with were made. Set to the
/// sentinel instead, every round of a reduction differed in the bytes after its value (the
/// first GPU run of the oracles: 593 functions with no kept streams, Max, Mean, Norm …).
pub(super) fn refill(fill: Fill) -> u8 {
    match fill {
        Fill::Zero => 0,
        Fill::Sentinel | Fill::Pattern => DST_FILL,
    }
}

/// Copies of the device buffers a call writes, made on a stream right after it: read once the
/// device is synchronised ([`Made::outputs_of`]).
pub struct Snapshot {
    copies: Vec<(usize, DeviceBuffer)>,
}

impl Made<'_> {
    /// The same call again with the same buffers, queued on `ctx`'s stream; NPP's status.
    pub fn again(&mut self, npp: &Npp, ctx: &StreamContext) -> Result<NppStatus, NppError> {
        let status = npp.invoke(self.plan, ctx, &self.device, &mut self.host)?;
        self.status = status;
        Ok(status)
    }

    /// The indices of the device buffers NPP reads or writes.
    fn device_buffers(&self, of: impl Fn(Role) -> bool) -> Vec<usize> {
        self.plan
            .buffers
            .iter()
            .enumerate()
            .filter(|(i, b)| of(b.role) && self.device[*i].is_some())
            .map(|(i, _)| i)
            .collect()
    }

    /// A copy of each device buffer the call reads, as it holds now, made on `stream` (queued).
    pub fn stage_inputs(&self, gpu: &Gpu, stream: &Stream) -> Result<Vec<DeviceBuffer>, GpuError> {
        self.device_buffers(read)
            .into_iter()
            .map(|i| {
                let source = self.device[i].as_ref().expect("a device buffer");
                let mut copy = DeviceBuffer::alloc(gpu, source.len())?;
                copy.copy_from_async(source, stream)?;
                Ok(copy)
            })
            .collect()
    }

    /// Every device buffer the call reads set to `byte`, and every one it writes to what it was
    /// allocated with ([`refill`]), at once (the device synchronised by the caller before anything
    /// is queued).
    pub fn clobber(&mut self, byte: u8) -> Result<(), GpuError> {
        for i in self.device_buffers(read) {
            self.device[i].as_mut().expect("a device buffer").fill(byte)?;
        }
        for i in self.device_buffers(written) {
            let value = refill(self.plan.buffers[i].fill);
            self.device[i].as_mut().expect("a device buffer").fill(value)?;
        }
        Ok(())
    }

    /// Each device buffer the call reads written from its copy in `staged` on `stream`, queued
    /// (the late write).
    pub fn restore_inputs_async(&mut self, staged: &[DeviceBuffer], stream: &Stream) -> Result<(), GpuError> {
        for (i, copy) in self.device_buffers(read).into_iter().zip(staged) {
            self.device[i]
                .as_mut()
                .expect("a device buffer")
                .copy_from_async(copy, stream)?;
        }
        Ok(())
    }

    /// A copy of each device buffer the call writes, made on `stream` (queued right after the
    /// call, as a read-back is).
    pub fn snapshot_async(&self, gpu: &Gpu, stream: &Stream) -> Result<Snapshot, GpuError> {
        let copies = self
            .device_buffers(written)
            .into_iter()
            .map(|i| {
                let d = self.device[i].as_ref().expect("a device buffer");
                let mut copy = DeviceBuffer::alloc(gpu, d.len())?;
                copy.copy_from_async(d, stream)?;
                Ok((i, copy))
            })
            .collect::<Result<_, GpuError>>()?;
        Ok(Snapshot { copies })
    }

    /// The outputs as `snapshot` holds them (host results as they are now), read once the
    /// device is synchronised.
    pub fn outputs_of(&self, snapshot: &Snapshot) -> Result<Outputs, GpuError> {
        self.outputs_from(|i| match snapshot.copies.iter().find(|(j, _)| *j == i) {
            Some((_, copy)) => copy.download(),
            None => Ok(self.host[i].clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zeroed result goes back to zero, an image's destination to the sentinel.
    #[test]
    fn a_written_buffer_is_set_back_to_what_it_was_allocated_with() {
        assert_eq!(refill(Fill::Zero), 0);
        assert_eq!(refill(Fill::Sentinel), DST_FILL);
        assert_ne!(DST_FILL, 0);
    }
}
