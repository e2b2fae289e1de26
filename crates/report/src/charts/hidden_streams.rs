//! Streams NPP created, against calls, for one leaking geometry: a new thread per call on each
//! stream kind (solid), and each bounded threading model on the blocking stream (dashed).

use nppbench_model::{StreamKind, Threading};

use crate::charts::{Line, line_chart, series_colour, stream_colour, threading_on};
use nppbench_analysis::MemoryAnalysis;

pub(crate) fn render(title: &str, scenarios: &[&MemoryAnalysis<'_>]) -> Result<String, String> {
    let lines: Vec<Line> = scenarios
        .iter()
        .filter(|m| m.record.scenario.geometry.padded_from.is_none())
        .filter_map(|m| {
            let hidden = m.hidden_streams.as_ref()?;
            let s = &m.record.scenario;
            let leak_shape = s.threading == Threading::ThreadPerCall;
            // One line per series a reader compares: every stream kind for a new thread per
            // call; each other threading model once, on the blocking stream (or its own).
            if !leak_shape && s.stream != StreamKind::Blocking && !s.threading.owns_stream() {
                return None;
            }
            let label = threading_on(s.threading, s.stream);
            let colour = if leak_shape {
                stream_colour(s.stream)
            } else {
                series_colour(&s.threading.to_string())
            };
            Some(Line {
                label,
                colour,
                dashed: !leak_shape,
                points: hidden.iter().enumerate().map(|(i, h)| (i as f64, *h)).collect(),
            })
        })
        .collect();
    line_chart(
        title,
        "calls after the warm-up call",
        "streams created by NPP, cumulative",
        &lines,
        true,
    )
}
