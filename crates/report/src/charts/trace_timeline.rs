//! A trace over time: the process's device memory above, its live threads and the threads that
//! had kept NPP streams below, on one time axis (seconds, minutes or hours, as the span needs);
//! the memory axis spans the samples, not zero, so growth shows against the context's baseline.

use nppbench_analysis::trace::TimelinePoint;
use plotters::prelude::*;

use nppbench_analysis::LeakClass;

use crate::charts::{
    CAPTION_SIZE, FONT, LABEL_SIZE, LINE_HEIGHT, SERIES_COLOURS, WIDTH, class_colour, integer_label, legend_row, svg,
};

/// Height of the threads panel.
const THREADS_HEIGHT: u32 = LINE_HEIGHT * 3 / 4;
const LEGEND_ROWS: u32 = 3;

/// The time unit a span reads best in, and its divisor from seconds.
fn unit(max_s: f64) -> (&'static str, f64) {
    if max_s <= 300.0 {
        ("seconds", 1.0)
    } else if max_s <= 3.0 * 3600.0 {
        ("minutes", 60.0)
    } else {
        ("hours", 3600.0)
    }
}

/// The memory axis: the samples' range with a margin, so that growth shows against the
/// baseline the CUDA context sets.
fn mib_range(memory: &[(f64, f64)]) -> (f64, f64) {
    let lo = memory.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = memory.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = (hi - lo) * 0.1 + 1.0;
    ((lo - pad).max(0.0), hi + pad)
}

/// Time labels without a fraction where the ticks are whole.
fn x_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub(crate) fn render(title: &str, points: &[TimelinePoint]) -> Result<String, String> {
    let max_s = points.iter().map(|p| p.t_s).fold(1.0, f64::max);
    let (unit_name, per) = unit(max_s);
    let x_max = max_s / per;
    let memory: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|p| p.device_mib.map(|m| (p.t_s / per, m)))
        .collect();
    let live: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.t_s / per, f64::from(p.live_threads)))
        .collect();
    let keeping: Vec<(f64, f64)> = points.iter().map(|p| (p.t_s / per, p.keeping_threads as f64)).collect();
    // Memory in the leak colour; live threads grey; threads that kept streams in a colour of
    // their own.
    let memory_colour = class_colour(Some(LeakClass::Leak));
    let (live_colour, keep_colour) = (SERIES_COLOURS[3], SERIES_COLOURS[2]);
    let x_desc = format!("{unit_name} since the interposer started");
    svg(WIDTH, LINE_HEIGHT + THREADS_HEIGHT + LEGEND_ROWS * 20 + 4, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        let (top, rest) = root.split_vertically(LINE_HEIGHT);
        let (bottom, legend) = rest.split_vertically(THREADS_HEIGHT);
        let (lo, hi) = mib_range(&memory);
        let mut chart = ChartBuilder::on(&top)
            .caption(title, (FONT, CAPTION_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, lo..hi)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(x_desc.as_str())
            .x_label_formatter(&x_label)
            .y_desc("device memory, MiB")
            .y_label_formatter(&|v: &f64| format!("{v:.0}"))
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(RGBColor(242, 242, 242))
            .draw()
            .map_err(e)?;
        chart
            .draw_series(LineSeries::new(memory.iter().copied(), memory_colour.stroke_width(2)))
            .map_err(e)?;
        let threads_max = live.iter().chain(&keeping).map(|p| p.1).fold(1.0, f64::max) * 1.1;
        let mut chart = ChartBuilder::on(&bottom)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..threads_max)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(x_desc.as_str())
            .x_label_formatter(&x_label)
            .y_desc("threads")
            .y_label_formatter(&integer_label)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(RGBColor(242, 242, 242))
            .draw()
            .map_err(e)?;
        chart
            .draw_series(LineSeries::new(live.iter().copied(), live_colour.stroke_width(2)))
            .map_err(e)?;
        chart
            .draw_series(DashedLineSeries::new(
                keeping.iter().copied(),
                6,
                4,
                keep_colour.stroke_width(2),
            ))
            .map_err(e)?;
        legend_row(&legend, 4, memory_colour, false, "the process's device memory (NVML)")?;
        legend_row(&legend, 24, live_colour, false, "the process's live threads")?;
        legend_row(&legend, 44, keep_colour, true, "threads that had kept NPP streams")
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_reads_in_the_unit_its_span_needs() {
        assert_eq!(super::unit(120.0).0, "seconds");
        assert_eq!(super::unit(3600.0).0, "minutes");
        assert_eq!(super::unit(86_400.0).0, "hours");
    }
}
