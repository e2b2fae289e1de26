//! The threading models: how the calls of a memory scenario are issued from host threads.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use nppbench_gpu::Stream;
use nppbench_model::{FailureKind, StreamKind, Threading};

use super::setup::Setup;
use crate::error::ProbeError;

pub(crate) fn spawn_error(e: std::io::Error) -> ProbeError {
    ProbeError::new(FailureKind::Thread, format!("cannot spawn a host thread: {e}"))
}

pub(crate) fn joined<T>(r: std::thread::Result<Result<T, ProbeError>>) -> Result<T, ProbeError> {
    r.map_err(|_| ProbeError::new(FailureKind::Thread, "a calling thread panicked"))?
}

fn pool_exited() -> ProbeError {
    ProbeError::new(FailureKind::Thread, "a pool thread exited early")
}

/// Issues `calls` calls of `setup` under `threading`, on `shared` (or, for the own-stream model,
/// on a non-blocking stream each new thread makes and counts in `own_streams`). After each call,
/// `after_call(threads_spawned, latency)` records it and says whether to stop.
pub(crate) fn drive(
    setup: &Setup,
    shared: &Stream,
    threading: Threading,
    calls: u32,
    own_streams: &AtomicU32,
    mut after_call: impl FnMut(u32, Duration) -> Result<bool, ProbeError>,
) -> Result<(), ProbeError> {
    match threading {
        Threading::Single => {
            for _ in 0..calls {
                let (latency, _) = setup.call(shared)?;
                if after_call(1, latency)? {
                    break;
                }
            }
        }
        Threading::ThreadPerCall | Threading::ThreadPerCallOwnStream => {
            let own = threading.owns_stream();
            for i in 0..calls {
                let latency = std::thread::scope(|scope| {
                    let worker = std::thread::Builder::new()
                        .spawn_scoped(scope, || {
                            if own {
                                own_streams.fetch_add(1, Ordering::SeqCst);
                                let stream = Stream::new(&setup.gpu, StreamKind::NonBlocking)?;
                                setup.call(&stream).map(|(d, _)| d)
                            } else {
                                setup.call(shared).map(|(d, _)| d)
                            }
                        })
                        .map_err(spawn_error)?;
                    joined(worker.join())
                })?;
                if after_call(i + 2, latency)? {
                    break;
                }
            }
        }
        Threading::Pool(size) => {
            std::thread::scope(|scope| -> Result<(), ProbeError> {
                let (done_tx, done_rx) = mpsc::channel::<Result<Duration, ProbeError>>();
                let mut jobs = Vec::new();
                for _ in 0..size {
                    let (job_tx, job_rx) = mpsc::channel::<()>();
                    let done_tx = done_tx.clone();
                    std::thread::Builder::new()
                        .spawn_scoped(scope, move || {
                            for () in job_rx {
                                if done_tx.send(setup.call(shared).map(|(d, _)| d)).is_err() {
                                    break;
                                }
                            }
                        })
                        .map_err(spawn_error)?;
                    jobs.push(job_tx);
                }
                for i in 0..calls {
                    let worker = (i % size) as usize;
                    jobs[worker].send(()).map_err(|_| pool_exited())?;
                    let latency = done_rx.recv().map_err(|_| pool_exited())??;
                    if after_call(1 + (i + 1).min(size), latency)? {
                        break;
                    }
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}
