//! The seam every interposed function calls (`recorder/interposed.rs`, generated): the shield
//! decides the context NPP is passed (`shield/`: the caller's, or a copy declaring non-blocking)
//! and the images (the caller's, or staging copies at aligned pitches), then the recorder records the call (`recorder/record.rs`) around NPP's own function. One
//! generated export per symbol carries both; either may be off (the shield without a plan, the
//! recorder where the process shields without tracing). Runs on the program's threads: no lock,
//! no writer (`xtask/tests/tidy.rs`).

use nppbench_npp_sys::{NppStatus, NppStreamContext};

use crate::recorder::{record, work};
use crate::shield;
use crate::site::{Images, Site};

/// Calls `forward` (NPP's function, with the caller's arguments but the context and the images
/// given) with the context and images the shield chose, recording the call where recording is on.
/// Returns NPP's status. `forward` is given `site.images` where the shield is off or passes the
/// caller's images; a function without images ignores them.
#[inline]
pub fn call(site: &Site<'_>, forward: impl FnOnce(NppStreamContext, Option<Images>) -> NppStatus) -> NppStatus {
    let shielded = shield::enter(site);
    let passed = shielded.as_ref().map_or(*site.ctx, |s| s.context);
    let images = shielded.as_ref().map_or(site.images, |s| s.images(site.images));
    let status = if work::recording() {
        record::call(site, || forward(passed, images))
    } else {
        forward(passed, images)
    };
    if let Some(s) = shielded {
        s.leave(status);
    }
    status
}
