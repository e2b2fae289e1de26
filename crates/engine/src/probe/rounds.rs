//! An ordering probe process: the ordering rounds (`ordering.rs`) of many memory scenarios, one
//! answer line each, appended as each finishes.
//!
//! The rounds run in processes of their own, apart from the memory calls, because each needs its
//! own `CUDA_DEVICE_MAX_CONNECTIONS`: a memory probe runs with one hardware connection (it halves
//! the cost of NPP's stream creation on every new thread, and does not change a leak's class),
//! and one connection queues every stream behind the others, which hides the race. An ordering
//! probe inherits the variable, as the user's program does.
//!
//! Nothing a scenario's rounds do depends on what earlier scenarios left in the process (no memory
//! is judged here), so one process takes many: the parent gives each of its workers one process
//! for its whole share. What the scenarios need is made once and kept for the next ones, within
//! bounds: one stream for each stream kind and context filling (NPP makes its own streams for a
//! stream at a first call made with that context, and each scenario still makes its first call
//! outside its rounds), the staged copies of the sources by size (`ordering::StagedCopies`), and
//! the patterns, expected outputs and buffers of [`ScenarioCache`], started afresh once its
//! reference images would pass [`REFERENCE_BYTES`]. A fault that may have left the process unsound
//! ends it without a line for its scenario: the parent records that scenario's rounds as not
//! measured, with the fault, and gives the rest to a fresh process.

use std::collections::HashSet;
use std::hash::Hash;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use nppbench_gpu::{DelayKernel, Gpu, GpuError, HostBuffer, Stream};
use nppbench_model::{ContextFill, Geometry, MemoryScenario, OrderingRounds, Primitive, RaceRounds, StreamKind};

use super::Resources;
use super::ordering::StagedCopies;
use super::setup::{ScenarioCache, Setup};
use crate::error::ProbeError;
use crate::protocol::OrderingLine;

/// What an ordering probe process is asked.
pub(crate) struct Batch<'a> {
    pub(crate) npp_dir: Option<&'a Path>,
    pub(crate) device: u32,
    pub(crate) scenarios: &'a [MemoryScenario],
    pub(crate) race_rounds: RaceRounds,
}

/// How the process ends: every scenario answered, or at a fault left to the parent.
pub(crate) enum Ended {
    Done(Resources),
    Fault(ProbeError, Resources),
}

/// The rounds of a scenario whose setup or rounds failed in a way that leaves the process sound
/// (a function this NPP lacks, a geometry it cannot take): not measured, saying why.
fn not_measured(why: &ProbeError) -> OrderingRounds {
    OrderingRounds::not_measured(
        super::ordering::DELAY_CYCLES,
        format!("{} ({})", why.message, why.kind.as_str()),
    )
}

/// Runs `batch`, appending one [`OrderingLine`] per scenario to `answer`.
pub(crate) fn run(batch: &Batch<'_>, answer: &Path) -> anyhow::Result<Ended> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(answer)
        .with_context(|| format!("opening {}", answer.display()))?;
    let mut line = |id: &str, rounds: OrderingRounds, since: Instant| -> anyhow::Result<()> {
        let mut text = serde_json::to_string(&OrderingLine {
            id: id.to_owned(),
            rounds,
            wall_ms: since.elapsed().as_secs_f64() * 1e3,
        })?;
        text.push('\n');
        // Whole in one write: the parent reads whole lines only.
        file.write_all(text.as_bytes())
            .context("writing an ordering answer line")
    };
    let mut clock = Instant::now();
    let gpu = match Gpu::open(batch.device as usize) {
        Ok(gpu) => gpu,
        Err(e) => return Ok(Ended::Fault(e.into(), Resources::new(Vec::new()))),
    };
    let delay = DelayKernel::compile(&gpu);
    let mut process = Rounds {
        gpu,
        delay,
        host: HostBuffer::default(),
        cache: ScenarioCache::default(),
        references: References::new(REFERENCE_BYTES),
        streams: Vec::new(),
        staged: StagedCopies::default(),
        race_rounds: batch.race_rounds,
    };
    for scenario in batch.scenarios {
        let rounds = match process.measure(batch.npp_dir, scenario) {
            Ok(rounds) => rounds,
            Err(e) if e.leaves_process_sound() => not_measured(&e),
            Err(e) => return Ok(Ended::Fault(e.context(&scenario.id), process.into_resources())),
        };
        line(&scenario.id, rounds, clock)?;
        clock = Instant::now();
    }
    Ok(Ended::Done(process.into_resources()))
}

/// The most bytes of source patterns and expected outputs an ordering probe's [`ScenarioCache`]
/// holds before it starts afresh: about what a probe of 256 scenarios held when each probe took
/// no more (most of the atlas's configurations are a function and geometry of their own).
const REFERENCE_BYTES: u64 = 512 << 20;

/// What an ordering probe keeps for all its scenarios.
struct Rounds {
    gpu: Gpu,
    /// The kernel that holds the caller's stream back (compiled with NVRTC once), or why there
    /// is none.
    delay: Result<DelayKernel, GpuError>,
    /// Page-locked memory the rounds read the destination into.
    host: HostBuffer,
    cache: ScenarioCache,
    /// The functions and geometries whose patterns and expected output `cache` holds.
    references: References<(Primitive, Geometry)>,
    /// One stream of each kind and context filling the scenarios ran on, kept to the end:
    /// destroying a stream NPP may still hold work on is not this probe's to do.
    streams: Vec<((StreamKind, ContextFill), Stream)>,
    staged: StagedCopies,
    /// Where to make rounds.
    race_rounds: RaceRounds,
}

impl Rounds {
    /// `scenario`'s rounds on its stream kind and context filling, from this process's thread.
    fn measure(&mut self, npp_dir: Option<&Path>, scenario: &MemoryScenario) -> Result<OrderingRounds, ProbeError> {
        let (p, g) = (scenario.primitive, scenario.geometry);
        let bytes = if g.validate(p).is_ok() { g.buffer_bytes(p) } else { 0 };
        if self.references.admit((p, g), bytes) {
            // Freed: nothing here is judged on memory, and the device is idle between scenarios.
            self.cache = ScenarioCache::default();
        }
        let key = (super::memory::shared_stream_kind(scenario), scenario.context);
        let stream = match self.streams.iter().position(|(k, _)| *k == key) {
            Some(i) => &self.streams[i].1,
            None => {
                self.streams.push((key, Stream::new(&self.gpu, key.0)?));
                &self.streams[self.streams.len() - 1].1
            }
        };
        let setup = Setup::with_cache(
            self.gpu.clone(),
            npp_dir,
            p,
            &g,
            scenario.context,
            stream,
            &mut self.cache,
        );
        setup.and_then(|mut setup| {
            let rounds = super::ordering::rounds(
                self.delay.as_ref(),
                &mut setup,
                stream,
                &mut self.host,
                &mut self.staged,
                self.race_rounds,
            );
            // What the cache does not keep is freed: nothing here is judged on memory.
            drop(self.cache.recycle(setup));
            rounds
        })
    }

    fn into_resources(self) -> Resources {
        Resources::new(vec![
            Box::new(self.staged),
            Box::new(self.streams),
            Box::new(self.cache),
            Box::new(self.host),
            Box::new(self.delay),
            Box::new(self.gpu),
        ])
    }
}

/// The keys of what a cache holds and their bytes, to start the cache afresh before it holds
/// more than `cap`.
struct References<K> {
    held: HashSet<K>,
    bytes: u64,
    cap: u64,
}

impl<K: Eq + Hash> References<K> {
    fn new(cap: u64) -> References<K> {
        References {
            held: HashSet::new(),
            bytes: 0,
            cap,
        }
    }

    /// Counts `key`, of `bytes`, as held from now on. Returns whether the cache must start
    /// afresh first: where `key` is new and would take it past `cap` (never for the first key,
    /// however large).
    fn admit(&mut self, key: K, bytes: u64) -> bool {
        if self.held.contains(&key) {
            return false;
        }
        let afresh = !self.held.is_empty() && self.bytes.saturating_add(bytes) > self.cap;
        if afresh {
            self.held.clear();
            self.bytes = 0;
        }
        self.held.insert(key);
        self.bytes = self.bytes.saturating_add(bytes);
        afresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_images_kept_start_afresh_past_their_bound() {
        let mut held = References::new(100);
        assert!(!held.admit("a", 60));
        // Held already: nothing new.
        assert!(!held.admit("a", 60));
        assert!(!held.admit("b", 40));
        // 60 + 40 + 1 > 100: the cache starts afresh with "c" alone.
        assert!(held.admit("c", 1));
        assert_eq!(held.bytes, 1);
        assert!(!held.admit("a", 60));
        assert!(held.admit("d", 50));
        // A first key larger than the bound is held alone, not refused.
        let mut held = References::new(10);
        assert!(!held.admit("huge", 1000));
        assert!(held.admit("small", 1));
        assert!(held.bytes <= 10);
    }
}
