//! What the memory and ordering phases share: worker threads, each running probes one after
//! another, sending what they finish to this thread, which keeps it (journal, progress) in the
//! order it comes; the first error stops every worker.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::RunError;

/// What a worker hands back.
pub(super) enum Done<T> {
    /// A finished item: a memory record, a scenario's rounds.
    Item(T),
    Interrupted,
    Error(RunError),
}

/// Runs `work(w, tx)` for each worker `w` in `0..workers` on a thread of its own, and `keep` on
/// each item they send, on this thread, until every worker has returned. An error (a worker's, or
/// `keep`'s) sets `stop` and is returned once the workers are done. Returns whether the run was
/// interrupted.
pub(super) fn supervise<T: Send>(
    workers: usize,
    stop: &AtomicBool,
    work: impl Fn(usize, &mpsc::Sender<Done<T>>) + Sync,
    mut keep: impl FnMut(T) -> Result<(), RunError>,
) -> Result<bool, RunError> {
    let (tx, rx) = mpsc::channel::<Done<T>>();
    let mut interrupted = false;
    let mut first_error = None;
    std::thread::scope(|scope| {
        for w in 0..workers {
            let (tx, work) = (tx.clone(), &work);
            scope.spawn(move || work(w, &tx));
        }
        drop(tx);
        for done in rx {
            match done {
                Done::Item(item) => {
                    if let Err(e) = keep(item) {
                        first_error.get_or_insert(e);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                Done::Interrupted => interrupted = true,
                Done::Error(e) => {
                    first_error.get_or_insert(e);
                    stop.store(true, Ordering::SeqCst);
                }
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(interrupted || stop.load(Ordering::SeqCst))
}
