//! The memory phase's queue: what each probe process takes next. Scenarios likely to be
//! measured again alone ([`head_rank`]) head batches, and those a batch cannot judge
//! ([`must_head`]) each head one: first in a fresh probe, a scenario meets
//! the process exactly as it would alone (the probe opens its GPU, then measures its scenarios in
//! order, making nothing for the later ones first: `probe/batch.rs`), so its class is the one a
//! process of its own gives, and it is not measured again. The rest of each batch is taken in
//! matrix order and shuffled by the seed.

use std::collections::VecDeque;

use nppbench_model::{MemoryScenario, StreamKind, Threading};

use super::plan::{batch_size, shuffled};

/// A scenario waiting for a process: its index in the matrix and the scenario.
pub(super) type Queued<'a> = (usize, &'a MemoryScenario);

/// How likely a scenario's growth in a batch is to depend on what earlier scenarios left in the
/// process (`page_bound`), the larger the likelier; `None` where it seldom does. Pools on the
/// per-thread default stream: each pool thread's default stream costs memory that earlier
/// scenarios' threads may have left room for. In the atlas of NPP 13.0.1 batched on an H100
/// (`reports/batches/atlas-npp-13.0.1-beside-after.json.gz`), 167 of 187 pools of 16 on that stream
/// were measured again alone, 113 of 196 pools of 4 and 60 of 228 pools of 2: 340 of the 422
/// processes of one scenario.
pub(super) fn head_rank(s: &MemoryScenario) -> Option<u32> {
    match (s.stream, s.threading) {
        (StreamKind::PerThreadDefault, Threading::Pool(n)) if n >= 2 => Some(n),
        _ => None,
    }
}

/// Pools larger than this on the per-thread default stream must head a batch (or be measured
/// again alone, `memory_phase::page_bound`): one that did not grow in a batch tells nothing,
/// since its threads' default streams (half a MiB each) may fit in what earlier scenarios'
/// threads left, where a fresh process grows by them (flat in the batch, bounded alone). In a
/// first run of the atlas of NPP 13.0.1 with heads (an H100; CHANGELOG.md, "Heads of
/// batches"), 58 of 64 pools of 16 measured inside a batch were flat, against bounded at the head
/// of one or alone; pools of 2 and 4 inside batches judged as alone.
pub(super) const MUST_HEAD_ABOVE: u32 = 4;

/// Whether `s` must be first in its process ([`MUST_HEAD_ABOVE`]).
pub(super) fn must_head(s: &MemoryScenario) -> bool {
    head_rank(s).is_some_and(|n| n > MUST_HEAD_ABOVE)
}

/// The scenarios not yet given to a process.
pub(super) struct Queue<'a> {
    /// Scenarios to head batches, likeliest first ([`head_rank`]), in matrix order within a rank.
    heads: VecDeque<Queued<'a>>,
    rest: VecDeque<Queued<'a>>,
}

impl<'a> Queue<'a> {
    pub(super) fn new(todo: Vec<Queued<'a>>) -> Queue<'a> {
        let (mut heads, rest): (Vec<_>, Vec<_>) = todo.into_iter().partition(|(_, s)| head_rank(s).is_some());
        heads.sort_by_key(|(i, s)| (std::cmp::Reverse(head_rank(s)), *i));
        Queue {
            heads: heads.into(),
            rest: rest.into(),
        }
    }

    /// The next process's scenarios: an equal share of what is left among `jobs` workers, at
    /// most `max`; a head first where one is left, then the front of the rest (matrix order, so
    /// that a process meets the same functions and geometries again and reuses their reference
    /// outputs), shuffled by `seed` plus the matrix index of its first. The heads that must head
    /// a batch share the rest among them; smaller heads left once the rest is gone are batched
    /// like any other.
    pub(super) fn take(&mut self, jobs: u32, max: u32, seed: Option<u64>) -> Vec<Queued<'a>> {
        // The heads that must head a batch come first: the rest is shared among them, so that
        // each has a batch of its own to head.
        let must = self.heads.iter().take_while(|(_, s)| must_head(s)).count();
        if self.rest.is_empty() && must == 0 {
            self.rest = std::mem::take(&mut self.heads);
        }
        let left = self.heads.len() + self.rest.len();
        let mut n = batch_size(left, jobs, max).min(left);
        if must > 0 {
            n = n.min(1 + self.rest.len().div_ceil(must));
        }
        let head = if n == 0 { None } else { self.heads.pop_front() };
        let body: Vec<Queued<'a>> = self
            .rest
            .drain(..(n - usize::from(head.is_some())).min(self.rest.len()))
            .collect();
        let body = match (seed, body.first()) {
            (Some(seed), Some(&(first, _))) => shuffled(body, seed.wrapping_add(first as u64)),
            _ => body,
        };
        head.into_iter().chain(body).collect()
    }

    /// Puts `rest` back at the front of the queue, in order.
    pub(super) fn give_back(&mut self, rest: Vec<Queued<'a>>) {
        for q in rest.into_iter().rev() {
            self.rest.push_front(q);
        }
    }
}

/// The batches a memory phase gives its probe processes for `scenarios` (the matrix's memory
/// scenarios), in the order they are taken, each in the order its process measures it: `jobs`
/// workers, at most `max` a process, shuffled by `seed`, where no probe fails (a fault gives the
/// rest of its batch back, and a scenario may then be measured again alone). Each scenario as its
/// id.
pub fn planned_batches(scenarios: &[MemoryScenario], jobs: u32, max: u32, seed: Option<u64>) -> Vec<Vec<String>> {
    let mut queue = Queue::new(scenarios.iter().enumerate().collect());
    let mut batches = Vec::new();
    loop {
        let batch = queue.take(jobs, max, seed);
        if batch.is_empty() {
            return batches;
        }
        batches.push(batch.into_iter().map(|(_, s)| s.id.clone()).collect());
    }
}
