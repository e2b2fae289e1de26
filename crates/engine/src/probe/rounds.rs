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
//! is judged here), so one process takes many. A fault that may have left the process unsound
//! ends it without a line for its scenario: the parent records that scenario's rounds as not
//! measured, with the fault, and gives the rest to a fresh process.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use nppbench_gpu::{DelayKernel, Gpu, GpuError, HostBuffer, Stream};
use nppbench_model::{MemoryScenario, OrderingRounds};

use super::Resources;
use super::setup::{ScenarioCache, Setup};
use crate::error::ProbeError;
use crate::protocol::OrderingLine;

/// What an ordering probe process is asked.
pub(crate) struct Batch<'a> {
    pub(crate) npp_dir: Option<&'a Path>,
    pub(crate) device: u32,
    pub(crate) scenarios: &'a [MemoryScenario],
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
        kept: Vec::new(),
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

/// What an ordering probe keeps for all its scenarios.
struct Rounds {
    gpu: Gpu,
    /// The kernel that holds the caller's stream back (compiled with NVRTC once), or why there
    /// is none.
    delay: Result<DelayKernel, GpuError>,
    /// Page-locked memory the rounds read the destination into.
    host: HostBuffer,
    cache: ScenarioCache,
    /// What the scenarios made (streams, buffers the cache does not keep), kept to the end:
    /// destroying a stream NPP may still hold work on is not this probe's to do.
    kept: Vec<Box<dyn std::any::Any>>,
}

impl Rounds {
    /// `scenario`'s rounds on its stream kind and context filling, from this process's thread.
    fn measure(&mut self, npp_dir: Option<&Path>, scenario: &MemoryScenario) -> Result<OrderingRounds, ProbeError> {
        let stream = Stream::new(&self.gpu, super::memory::shared_stream_kind(scenario))?;
        let setup = Setup::with_cache(
            self.gpu.clone(),
            npp_dir,
            scenario.primitive,
            &scenario.geometry,
            scenario.context,
            &stream,
            &mut self.cache,
        );
        let measured = setup.and_then(|mut setup| {
            let rounds =
                super::ordering::rounds(self.delay.as_ref(), &mut setup, &stream, &mut self.host, &mut self.kept);
            // Freed: nothing here is judged on memory, and a process takes hundreds of scenarios.
            drop(self.cache.recycle(setup));
            rounds
        });
        self.kept.push(Box::new(stream));
        measured
    }

    fn into_resources(self) -> Resources {
        Resources::new(vec![
            Box::new(self.kept),
            Box::new(self.cache),
            Box::new(self.host),
            Box::new(self.delay),
            Box::new(self.gpu),
        ])
    }
}
