//! A trace whose memory was not sampled (no GPU, no NVML) and one whose growth per thread is not
//! established: the page says so, and draws nothing and prints no number it does not have.

use nppbench_model::TraceFile;

use super::{MIB, generated_trace, render};

/// `trace` without a GPU: the page drew an empty memory chart (y labels 1, 1, 1) and said
/// "Nothing grows, so nothing costs over time" beneath it.
#[test]
fn a_trace_without_memory_samples_draws_no_chart_and_claims_no_cost() {
    let mut t: TraceFile = generated_trace();
    for m in &mut t.memory {
        m.device_bytes = None;
    }
    t.capture.memory_missing = Some("the program ended before the writer thread had loaded NVML".into());
    for trace in [
        t.clone(),
        TraceFile {
            call_sites: Vec::new(),
            streams: Vec::new(),
            ..t
        },
    ] {
        let r = render(&trace, &[]);
        let html = &r.index_html;
        assert!(
            !html.contains("id=\"timeline\"") && !html.contains("Over time</h2>"),
            "an empty chart"
        );
        assert!(!html.contains("Nothing grows"), "{html}");
        assert!(!r.summary_md.contains("Nothing grows"), "{}", r.summary_md);
    }
}

/// A 95% interval of "-0.504 to 3.01 MiB per thread" was printed as it was: a negative memory,
/// where the growth is not established.
#[test]
fn a_growth_whose_interval_reaches_zero_is_not_established() {
    let mut t = generated_trace();
    // Generated, not a measurement: memory that swings ±64 MiB around 1000 MiB as threads keep
    // streams, so that the fit's interval straddles zero.
    for (i, m) in t.memory.iter_mut().enumerate() {
        let swing = if i % 2 == 0 { 64 * MIB } else { 0 };
        m.device_bytes = Some(1000 * MIB + swing);
    }
    let r = render(&t, &[]);
    let html = &r.index_html;
    assert!(
        html.contains("Growth per thread that kept NPP streams not established"),
        "{html}"
    );
    assert!(!html.contains("95% CI -") && !html.contains("95% CI −"), "{html}");
}
