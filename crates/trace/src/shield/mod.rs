//! The shield (`nppbench shield`): what runs on the program's threads to end the leak and the
//! race. Per catalogued call, where the atlas's rules (compiled by the CLI into a
//! [`nppbench_model::ShieldPlan`], read once at start: `table.rs`) say the call's configuration
//! leaks or races, NPP is passed a copy of the caller's `NppStreamContext` whose `nStreamFlags`
//! declares `cudaStreamNonBlocking`; every other call gets the caller's context, byte for byte
//! (`decide.rs`). Each call is counted at its call site (`sites.rs`); the writer side
//! (`writer/shield.rs`) turns the counts into the report.
//!
//! Like `recorder/`, nothing here takes a lock or names the writer (`xtask/tests/tidy.rs`), and
//! nothing on a call allocates: the table is built before `main`, a call reads it, evaluates a
//! few integer tests and adds one to an atomic count. Calls NPP makes of its own exported
//! functions inside a shielded call are forwarded untouched and not counted.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use nppbench_model::ShieldPlan;
use nppbench_npp_sys::NppStreamContext;

use crate::recorder::hot::HOT;
use crate::site::Site;

pub(crate) mod decide;
pub(crate) mod sites;
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
}

/// Decides the call at `site` and counts it: the context to pass NPP, or `None` where the shield
/// is off or this is a call inside a shielded call (pass the caller's).
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
    let (action, nb) = decide::decide(table, site);
    sites::count(sites::key(site, nb), action);
    let context = if decide::action::rewritten(action) {
        decide::declared_non_blocking(site.ctx)
    } else {
        *site.ctx
    };
    Some(Shielded { context })
}

impl Shielded {
    /// NPP's call returned.
    #[inline]
    pub fn leave(self) {
        IN_CALL.with(|c| c.set(false));
    }
}

/// In a forked child, from `pthread_atfork`: its counts start at zero (it keeps shielding).
pub(crate) extern "C" fn on_fork_child() {
    sites::restart_counts();
}

#[cfg(test)]
mod tests;
