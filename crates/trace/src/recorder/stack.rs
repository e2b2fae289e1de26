//! The creating stack of a stream made outside a catalogued call: its return addresses only
//! (`backtrace`, into the caller's buffer: nothing is allocated on the program's thread), taken
//! in CUPTI's callback; the writer names them (`writer/symbolise.rs`).

/// Frames looked at when a stream is created outside a catalogued call.
pub(crate) const DEPTH: usize = 64;

/// Writes the return addresses on the calling thread's stack, innermost first, into `frames`
/// (at most [`DEPTH`]); returns how many.
pub(crate) fn stack(frames: &mut [usize]) -> usize {
    let mut raw = [std::ptr::null_mut(); DEPTH];
    let depth = frames.len().min(DEPTH);
    // SAFETY: the buffer holds `depth` entries or more, the size passed.
    let n = unsafe { libc::backtrace(raw.as_mut_ptr(), depth as libc::c_int) }.max(0) as usize;
    for (f, p) in frames.iter_mut().zip(&raw[..n]) {
        *f = *p as usize;
    }
    n
}

/// Walks a stack once, so that the unwinder's own libraries are loaded before a callback needs
/// them.
pub(crate) fn prime() {
    let _ = stack(&mut [0; DEPTH]);
}

/// The calling thread's stack as a list (the tests').
#[cfg(test)]
pub(crate) fn taken() -> Box<[usize]> {
    let mut frames = [0; DEPTH];
    let n = stack(&mut frames);
    frames[..n].into()
}
