//! Turns on the GPU among `call-catalogue`'s children: every function's calls share the GPU, and
//! the unaligned step, which leaves hundreds of contexts dead with `CUDA_ERROR_MISALIGNED_ADDRESS`,
//! runs alone. On H100s, with twelve children calling at once and those faults among them, every
//! child stalled about 140 s in three runs of four, the GPU in a full-chip reset where the
//! kernel's log was read (`NV_ERR_GPU_IN_FULLCHIP_RESET`, then `cuInit: CUDA_ERROR_NO_DEVICE`;
//! `reports/catalogue-calls/h100-oracles/`). The cause is not established; a fault no longer
//! meets another child's work.
//!
//! Two `flock` files, a writer-first reader-writer lock between processes: a turn of either kind
//! passes through the gate, so that a child waiting to be alone is not starved by the others'
//! shared turns; the room is held shared by the children calling, exclusively by the one alone.
//! A child that dies holding a turn releases it with its files.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

use nppbench_analysis::calls::design::ShapeLine;

/// The two lock files of a run, opened by one child.
pub struct GpuTurns {
    gate: File,
    room: File,
}

/// A turn held; released on drop.
pub struct Turn<'a> {
    turns: &'a GpuTurns,
    alone: bool,
}

impl GpuTurns {
    /// The files beside `base` (`calls.jsonl.turns-gate`, `…-room`): what the parent removes.
    pub fn paths(base: &Path) -> [PathBuf; 2] {
        ["gate", "room"].map(|k| {
            let mut name = base.as_os_str().to_owned();
            name.push(format!(".turns-{k}"));
            PathBuf::from(name)
        })
    }

    /// Opens (creating) the lock files of `base`.
    pub fn open(base: &Path) -> std::io::Result<GpuTurns> {
        let open = |p: &Path| OpenOptions::new().create(true).truncate(false).write(true).open(p);
        let [gate, room] = Self::paths(base);
        Ok(GpuTurns {
            gate: open(&gate)?,
            room: open(&room)?,
        })
    }

    /// A turn beside the other children's shared ones; waits while one is alone or waits to be.
    pub fn shared(&self) -> std::io::Result<Turn<'_>> {
        self.gate.lock()?;
        let held = self.room.lock_shared();
        self.gate.unlock()?;
        held?;
        Ok(Turn {
            turns: self,
            alone: false,
        })
    }

    /// A turn with no other child's: waits for the shared turns begun to end, and lets no new
    /// one begin meanwhile.
    pub fn alone(&self) -> std::io::Result<Turn<'_>> {
        self.gate.lock()?;
        if let Err(e) = self.room.lock() {
            let _ = self.gate.unlock();
            return Err(e);
        }
        Ok(Turn {
            turns: self,
            alone: true,
        })
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let _ = self.turns.room.unlock();
        if self.alone {
            let _ = self.turns.gate.unlock();
        }
    }
}

/// A turn on the GPU, alone or shared, where the children take turns; a lock that fails is said
/// in the line, and the calls are made without.
pub(crate) fn take_or_say<'t>(
    turns: Option<&'t GpuTurns>,
    alone: bool,
    line: &mut serde_json::Value,
) -> Option<Turn<'t>> {
    let t = turns?;
    match if alone { t.alone() } else { t.shared() } {
        Ok(turn) => Some(turn),
        Err(e) => {
            line["turns_error"] = serde_json::json!(e.to_string());
            None
        }
    }
}

/// A turn on the GPU (alone, or shared) where the children take turns, and whether it is alone.
type Held<'t> = Option<Result<(Turn<'t>, bool), String>>;

/// The turn a child holds: a turn alone is kept while it calls alone; a shared one is taken
/// anew each shape.
pub(crate) struct Holding<'t> {
    turns: Option<&'t GpuTurns>,
    held: Held<'t>,
}

impl<'t> Holding<'t> {
    pub(crate) fn new(turns: Option<&'t GpuTurns>) -> Self {
        Holding { turns, held: None }
    }

    /// Takes a turn of this kind: how long it waited (ms), and why none could be had.
    pub(crate) fn take(&mut self, alone: bool) -> (f64, Option<String>) {
        let start = Instant::now();
        if !(alone && matches!(self.held, Some(Ok((_, true))))) {
            drop(self.held.take());
            self.held = self.turns.map(|t| {
                if alone { t.alone() } else { t.shared() }
                    .map(|turn| (turn, alone))
                    .map_err(|e| e.to_string())
            });
        }
        let why = match &self.held {
            Some(Err(e)) => Some(format!("no turn on the GPU: {e}")),
            _ => None,
        };
        (start.elapsed().as_secs_f64() * 1e3, why)
    }

    /// [`Self::take`], the wait added to the line's and a turn not had said in it.
    pub(crate) fn take_into(&mut self, alone: bool, line: &mut ShapeLine) {
        let (waited, why) = self.take(alone);
        line.wait_ms = Some(line.wait_ms.unwrap_or(0.0) + waited);
        if why.is_some() {
            line.questions_error = why;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Separate opens (as separate children have) share shared turns, and a turn alone waits for
    /// them and excludes them: no shared turn is ever held while one is alone.
    #[test]
    fn a_turn_alone_excludes_every_shared_turn_and_shared_turns_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("calls.jsonl");
        let a = GpuTurns::open(&base).unwrap();
        let b = GpuTurns::open(&base).unwrap();
        let (sa, sb) = (a.shared().unwrap(), b.shared().unwrap());
        drop((sa, sb));
        let inside = AtomicUsize::new(0);
        let alone_saw = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mine = GpuTurns::open(&base).unwrap();
                    for _ in 0..20 {
                        let _t = mine.shared().unwrap();
                        inside.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(1));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
            s.spawn(|| {
                let mine = GpuTurns::open(&base).unwrap();
                for _ in 0..10 {
                    let _t = mine.alone().unwrap();
                    alone_saw.fetch_max(inside.load(Ordering::SeqCst), Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    alone_saw.fetch_max(inside.load(Ordering::SeqCst), Ordering::SeqCst);
                }
            });
        });
        assert_eq!(alone_saw.load(Ordering::SeqCst), 0);
        assert_eq!(GpuTurns::paths(&base).iter().filter(|p| p.exists()).count(), 2);
    }
}
