//! Memory against calls for one leaking geometry: a new thread per call on every stream kind,
//! and beside it each fix measured for that geometry.

use nppbench_model::{StreamKind, Threading};
use plotters::style::RGBColor;

use crate::charts::{Line, line_chart, series_colour, stream_colour, threading_on};
use nppbench_analysis::MemoryAnalysis;

/// `scenarios`: those of one leaking geometry and of its padded-ROI variant
/// ([`nppbench_analysis::selection::timeline`]).
pub(crate) fn render(title: &str, scenarios: &[&MemoryAnalysis<'_>]) -> Result<String, String> {
    let mut lines = Vec::new();
    let line = |m: &MemoryAnalysis<'_>, label: String, colour: RGBColor, dashed: bool| Line {
        label,
        colour,
        dashed,
        // Calls after the warm-up call, at the calls memory was read after.
        points: m
            .growth_calls
            .iter()
            .zip(&m.growth_mib)
            .map(|(c, y)| (f64::from(c.saturating_sub(1)), *y))
            .collect(),
    };
    // A new thread per call, on each stream kind: the leak and the non-blocking fix.
    for m in scenarios.iter().filter(|m| {
        m.record.scenario.threading == Threading::ThreadPerCall && m.record.scenario.geometry.padded_from.is_none()
    }) {
        let s = &m.record.scenario;
        lines.push(line(
            m,
            threading_on(s.threading, s.stream),
            stream_colour(s.stream),
            false,
        ));
    }
    // The other fixes, on the blocking stream where measured (else any stream).
    let fix_stream = |m: &&&MemoryAnalysis<'_>| {
        m.record.scenario.stream == StreamKind::Blocking || m.record.scenario.threading.owns_stream()
    };
    let fixes = scenarios.iter().filter(fix_stream).filter(|m| {
        let s = &m.record.scenario;
        match s.geometry.padded_from {
            None => matches!(
                s.threading,
                Threading::Pool(_) | Threading::ThreadPerCallOwnStream | Threading::Single
            ),
            Some(_) => s.threading == Threading::ThreadPerCall,
        }
    });
    for m in fixes {
        let s = &m.record.scenario;
        let key = if s.geometry.padded_from.is_some() {
            "padded ROI".to_owned()
        } else {
            s.threading.to_string()
        };
        let label = match s.geometry.padded_from {
            Some(w) => format!(
                "padded ROI ({w} → {}), {}",
                s.geometry.width,
                threading_on(s.threading, s.stream)
            ),
            None => threading_on(s.threading, s.stream),
        };
        lines.push(line(m, label, series_colour(&key), true));
    }
    line_chart(
        title,
        "calls after the warm-up call (each from a new thread, for a new thread per call)",
        "process GPU memory growth, MiB",
        &lines,
        false,
    )
}
