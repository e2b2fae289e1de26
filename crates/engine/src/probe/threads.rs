//! The threading models: how the calls of a memory scenario are issued from host threads.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, mpsc};
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
/// `after_call(threads_spawned, latency)` records it and says whether to stop. Where
/// `keep_pool_threads`, a pool's threads outlive the scenario ([`kept_pool`]).
pub(crate) fn drive(
    setup: &Arc<Setup>,
    shared: &Arc<Stream>,
    threading: Threading,
    calls: u32,
    keep_pool_threads: bool,
    own_streams: &AtomicU32,
    mut after_call: impl FnMut(u32, Duration) -> Result<bool, ProbeError>,
) -> Result<(), ProbeError> {
    match threading {
        Threading::Pool(size) if keep_pool_threads => kept_pool(setup, shared, size, calls, after_call)?,
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
                pool_calls(&jobs, &done_rx, calls, &mut after_call)
            })?;
        }
    }
    Ok(())
}

/// A pool of `size` threads whose threads outlive the scenario (issue #30's experiment,
/// `--keep-pool-threads`): the calls as in [`drive`]'s pool, then each thread lets go of the
/// scenario's setup and stream and waits, parked, until the process ends. A thread that ends gives
/// back what it held while it lived (its per-thread default stream's memory), where a later
/// scenario's threads may fit; a parked one does not, so that a later pool grows as in a fresh
/// process. Returns once every thread has let go of `setup` and `shared`, so that the caller can
/// take them back.
fn kept_pool(
    setup: &Arc<Setup>,
    shared: &Arc<Stream>,
    size: u32,
    calls: u32,
    mut after_call: impl FnMut(u32, Duration) -> Result<bool, ProbeError>,
) -> Result<(), ProbeError> {
    let (done_tx, done_rx) = mpsc::channel::<Result<Duration, ProbeError>>();
    let (idle_tx, idle_rx) = mpsc::channel::<()>();
    let mut jobs = Vec::new();
    for _ in 0..size {
        let (job_tx, job_rx) = mpsc::channel::<()>();
        let (done, idle) = (done_tx.clone(), idle_tx.clone());
        let (setup, shared) = (Arc::clone(setup), Arc::clone(shared));
        let spawned = std::thread::Builder::new().spawn(move || {
            for () in job_rx {
                if done.send(setup.call(&shared).map(|(d, _)| d)).is_err() {
                    break;
                }
            }
            drop((setup, shared, done));
            let _ = idle.send(());
            drop(idle);
            loop {
                std::thread::park();
            }
        });
        if let Err(e) = spawned {
            drop(jobs);
            wait_idle(&idle_rx, idle_tx);
            return Err(spawn_error(e));
        }
        jobs.push(job_tx);
    }
    drop(done_tx);
    let result = pool_calls(&jobs, &done_rx, calls, &mut after_call);
    drop(jobs);
    wait_idle(&idle_rx, idle_tx);
    result
}

/// A pool's `calls` calls, each given in turn to the next of the threads `jobs` reach and its
/// latency taken from `done`, until `after_call` says to stop.
fn pool_calls(
    jobs: &[mpsc::Sender<()>],
    done: &mpsc::Receiver<Result<Duration, ProbeError>>,
    calls: u32,
    after_call: &mut impl FnMut(u32, Duration) -> Result<bool, ProbeError>,
) -> Result<(), ProbeError> {
    let size = jobs.len() as u32;
    for i in 0..calls {
        jobs[(i % size) as usize].send(()).map_err(|_| pool_exited())?;
        let latency = done.recv().map_err(|_| pool_exited())??;
        if after_call(1 + (i + 1).min(size), latency)? {
            break;
        }
    }
    Ok(())
}

/// Waits until every thread of a kept pool has let go of the scenario (each says so once, on
/// `idle_rx`; a thread that died says nothing, but its end drops its sender all the same).
fn wait_idle(idle_rx: &mpsc::Receiver<()>, idle_tx: mpsc::Sender<()>) {
    drop(idle_tx);
    while idle_rx.recv().is_ok() {}
}
