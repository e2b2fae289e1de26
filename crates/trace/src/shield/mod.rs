//! The shield (`nppbench shield`): what runs on the program's threads to end the leak, the race
//! and the wrong pixels. Per catalogued call, where the atlas's rules (compiled by the CLI into a
//! [`nppbench_model::ShieldPlan`], read once at start: `table.rs`) say the call's configuration
//! leaks or races, NPP is passed a copy of the caller's `NppStreamContext` whose `nStreamFlags`
//! declares `cudaStreamNonBlocking`; where they say it computes wrong pixels, NPP is also passed
//! staging copies of the images at aligned pitches (`stage.rs`); every other call gets the
//! caller's arguments, byte for byte (`decide.rs`). Each call is counted at its call site, with
//! the time the shield spent on it (`sites.rs`); the writer side (`writer/shield.rs`) turns the
//! counts into the report.
//!
//! Like `recorder/`, nothing here takes a lock or names the writer (`xtask/tests/tidy.rs`), and
//! nothing on a call allocates host memory: the table is built before `main`, a call reads it,
//! evaluates a few integer tests, adds one to an atomic count and reads the clock twice; a staged
//! call also asks the driver for device buffers and copies. Calls NPP makes of its own exported
//! functions inside a shielded call are forwarded untouched and not counted.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use nppbench_model::ShieldPlan;
use nppbench_npp_sys::NppStreamContext;

use crate::recorder::clock::now_ns;
use crate::recorder::hot::HOT;
use crate::site::{Images, Site};

pub(crate) mod decide;
pub(crate) mod sites;
pub(crate) mod stage;
pub(crate) mod table;

/// The compiled plan; unset, the shield is off and every call passes untouched.
pub(crate) static TABLE: OnceLock<table::Table> = OnceLock::new();

thread_local! {
    /// Whether the thread is inside a shielded call (no destructor: reaching it never registers
    /// one, nor allocates).
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
}

/// Compiles `plan` and turns the shield on; `false` where it was on already. The preloaded
/// library does this at start; the bench and tests call it on the rlib.
pub fn install(plan: &ShieldPlan) -> bool {
    let installed = TABLE.set(table::compile(plan)).is_ok();
    HOT.shielding.store(true, Ordering::Release);
    installed
}

/// Uses the plan's knowledge at `index` (or none) whatever NPP the process loaded: for the bench,
/// which loads no NPP.
pub fn pin_knowledge(index: Option<usize>) {
    decide::pin(index);
}

/// A shielded call in progress, from [`enter`] to [`Shielded::leave`].
#[must_use]
pub struct Shielded {
    /// The context NPP is passed.
    pub context: NppStreamContext,
    /// The images NPP is passed where the call is staged.
    staged: Option<stage::Staged>,
    /// The call's site and action, counted when it leaves with the shield's time on it (one
    /// shared line written per call: a site's slot is contended by every thread calling there),
    /// and that time by the end of [`enter`].
    key: [u64; 3],
    action: u8,
    spent_ns: u64,
}

/// Decides the call at `site`, stages it where its configuration computes wrong pixels, and
/// counts it: the context to pass NPP, or `None` where the shield is off or this is a call
/// inside a shielded call (pass the caller's).
#[inline]
pub fn enter(site: &Site<'_>) -> Option<Shielded> {
    // The line every recorded call reads first: the shield off touches nothing else.
    if !HOT.shielding.load(Ordering::Acquire) {
        return None;
    }
    let table = TABLE.get()?;
    if IN_CALL.with(|c| c.replace(true)) {
        return None;
    }
    let start = now_ns();
    let (mut action, nb) = decide::decide(table, site);
    let mut staged = None;
    if decide::action::rewritten(action) && action & decide::action::WRONG != 0 {
        staged = stage_call(table, site);
        if staged.is_none() {
            action = decide::action::not_staged(action);
        }
    }
    let key = sites::key(site, nb);
    let context = if decide::action::rewritten(action) {
        decide::declared_non_blocking(site.ctx)
    } else {
        *site.ctx
    };
    Some(Shielded {
        context,
        staged,
        key,
        action,
        spent_ns: now_ns().saturating_sub(start),
    })
}

/// The call at `site` staged, where its images can be and the driver agrees.
#[cold]
fn stage_call(table: &table::Table, site: &Site<'_>) -> Option<stage::Staged> {
    let images = site.images.as_ref().filter(|i| i.stageable)?;
    let e = decide::active(table)?
        .functions
        .get(usize::from(site.symbol))?
        .as_ref()?;
    stage::stage(
        images,
        site.roi,
        e.src_bytes_per_pixel,
        e.dst_bytes_per_pixel,
        site.ctx.h_stream as u64,
    )
}

impl Shielded {
    /// The images NPP is passed: the staging copies, or the caller's.
    #[inline]
    pub fn images(&self, caller: Option<Images>) -> Option<Images> {
        self.staged.as_ref().map(|s| s.images).or(caller)
    }

    /// NPP's call returned `status`: a staged call's destination is copied back and its buffers
    /// freed, and the call counted at its site with the shield's time on it.
    #[inline]
    pub fn leave(self, status: nppbench_npp_sys::NppStatus) {
        let mut spent = self.spent_ns;
        if let Some(s) = self.staged {
            let start = now_ns();
            stage::finish(s, status >= 0);
            spent += now_ns().saturating_sub(start);
        }
        sites::count(self.key, self.action, spent);
        IN_CALL.with(|c| c.set(false));
    }
}

/// In a forked child, from `pthread_atfork`: its counts start at zero (it keeps shielding).
pub(crate) extern "C" fn on_fork_child() {
    sites::restart_counts();
    stage::restart_counts();
}

#[cfg(test)]
mod tests;
