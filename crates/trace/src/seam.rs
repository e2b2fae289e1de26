//! The seam every interposed function calls (`recorder/interposed.rs`, generated): the shield
//! decides the context NPP is passed (`shield/`: the caller's, or a copy declaring non-blocking),
//! then the recorder records the call (`recorder/record.rs`) around NPP's own function. One
//! generated export per symbol carries both; either may be off (the shield without a plan, the
//! recorder where the process shields without tracing). Runs on the program's threads: no lock,
//! no writer (`xtask/tests/tidy.rs`).

use nppbench_npp_sys::{NppStatus, NppStreamContext};

use crate::recorder::{record, work};
use crate::shield;
use crate::site::Site;

/// Calls `forward` (NPP's function, with the caller's arguments and the context given) with the
/// context the shield chose, recording the call where recording is on. Returns NPP's status.
#[inline]
pub fn call(site: &Site<'_>, forward: impl FnOnce(NppStreamContext) -> NppStatus) -> NppStatus {
    let shielded = shield::enter(site);
    let passed = shielded.as_ref().map_or(*site.ctx, |s| s.context);
    let status = if work::recording() {
        record::call(site, || forward(passed))
    } else {
        forward(passed)
    };
    if let Some(s) = shielded {
        s.leave();
    }
    status
}
