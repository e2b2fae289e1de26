//! Streams NPP created, against calls, for one leaking geometry: the leak and its fixes.

use nppbench_model::Threading;

use crate::analysis::MemoryAnalysis;
use crate::charts::{FIX_COLOURS, Line, line_chart, stream_colour};

pub(crate) fn render(title: &str, scenarios: &[&MemoryAnalysis<'_>]) -> Result<String, String> {
    let mut fix = 0;
    let lines: Vec<Line> = scenarios
        .iter()
        .filter(|m| m.record.scenario.geometry.padded_from.is_none())
        .filter_map(|m| {
            let hidden = m.hidden_streams.as_ref()?;
            let s = &m.record.scenario;
            let leak_shape = s.threading == Threading::ThreadPerCall;
            let colour = if leak_shape {
                stream_colour(s.stream)
            } else {
                fix += 1;
                FIX_COLOURS[(fix - 1) % FIX_COLOURS.len()]
            };
            Some(Line {
                label: format!("{} stream, {}", s.stream, s.threading),
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
    )
}
