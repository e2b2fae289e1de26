//! What recording cost, in words: per call on the caller's thread (first calls apart), the
//! driver asked for flags, the CUPTI callbacks outside NPP's calls, and what no trace can hold.

use nppbench_analysis::trace::TraceFindings;

use crate::view::format::fmt_sig;

pub(super) fn overhead(f: &TraceFindings) -> String {
    let o = &f.overhead;
    let split = match (o.first_call_ns, o.later_call_ns) {
        (Some(first), Some(later)) => format!(
            " ({} ns on each of {} first calls of a thread, which register it unless a stream it created did; {} ns \
             on later calls)",
            fmt_sig(first),
            o.first_calls,
            fmt_sig(later)
        ),
        (Some(_), None) => {
            " (every call was its thread's first, which registers it unless a stream it created did)".into()
        }
        _ => String::new(),
    };
    let calls = match o.per_call_ns {
        Some(ns) => format!(
            "Recording cost {} ns per call on the caller's thread{split}, {} ms in all over {} calls{}.",
            fmt_sig(ns),
            fmt_sig(o.total_ms),
            o.calls,
            o.pct_of_npp_time
                .map(|p| format!(" ({}% of the time spent inside NPP)", fmt_sig(p)))
                .unwrap_or_default()
        ),
        None => "No call was recorded, so recording cost nothing per call.".into(),
    };
    let flags = match o.flags_asked {
        Some(0) if o.calls > 0 => " No call asked the driver for its stream's flags: each read them from the \
                                   interposer's cache, told when the stream was created."
            .to_owned(),
        Some(asked) if o.calls > 0 => format!(
            " {asked} of them asked the driver for their stream's flags (the first with each stream no creation \
             had told); the others read them from the interposer's cache."
        ),
        _ => String::new(),
    };
    let callbacks = match o.callbacks {
        Some(c) if c.callbacks > 0 => format!(
            " Outside NPP's calls, the interposer's {} CUPTI callbacks (streams created and destroyed) took {} ns \
             each, {} ms in all.",
            c.callbacks,
            c.per_callback_ns.map(fmt_sig).unwrap_or_default(),
            fmt_sig(c.total_ms)
        ),
        _ => String::new(),
    };
    // Measured apart (crates/trace/gpu-evidence: first_calls beside a subscriber that does
    // nothing), since no figure in a trace can hold it.
    let cupti = if o.callbacks.is_some() {
        " CUPTI's own cost is in none of these figures: a process subscribed to CUPTI, as counting streams \
         requires, takes longer over each thread's first CUDA call whatever the subscriber does (docs/trace.md: \
         what recording costs)."
    } else {
        ""
    };
    format!("{calls}{flags}{callbacks}{cupti}")
}
