//! Charts as inline SVG, one file per chart kind; sizes and colours live here alone.

pub(crate) mod atlas_overview;
pub(crate) mod catalogue_libraries;
pub(crate) mod hidden_streams;
pub(crate) mod history_series;
pub(crate) mod latency;
pub(crate) mod leak_grid;
pub(crate) mod memory_timeline;
pub(crate) mod throughput;
pub(crate) mod trace_timeline;
pub(crate) mod version_dots;

use nppbench_model::StreamKind;
use plotters::prelude::*;

use nppbench_analysis::LeakClass;

/// Chart width in SVG pixels; pages scale it down to the screen.
pub(crate) const WIDTH: u32 = 760;
/// Height of the line charts.
pub(crate) const LINE_HEIGHT: u32 = 340;
pub(crate) const FONT: &str = "sans-serif";
/// Text sizes as plotters takes them: its SVG backend writes `size / 1.24` px, so 15 is 12.1 px.
pub(crate) const CAPTION_SIZE: u32 = 20;
pub(crate) const LABEL_SIZE: u32 = 16;
/// The smallest text any chart draws (12.1 px in the SVG): at a page width of 800 px a chart is
/// drawn at its own size, so this is the size a reader sees.
pub(crate) const MIN_TEXT: u32 = 15;
/// About how wide a character of [`MIN_TEXT`] is drawn, px: room for labels.
pub(crate) const CHAR_PX: u32 = 7;

/// One colour per stream kind (Okabe–Ito, readable with colour-blindness and in grey print).
pub(crate) fn stream_colour(kind: StreamKind) -> RGBColor {
    match kind {
        StreamKind::LegacyDefault => RGBColor(230, 159, 0),
        StreamKind::PerThreadDefault => RGBColor(86, 180, 233),
        StreamKind::Blocking => RGBColor(213, 94, 0),
        StreamKind::NonBlocking => RGBColor(0, 114, 178),
    }
}

/// The colour of a leak class; `None` is a failed scenario.
pub(crate) fn class_colour(class: Option<LeakClass>) -> RGBColor {
    match class {
        Some(LeakClass::Leak) => RGBColor(204, 51, 51),
        Some(LeakClass::Bounded) => RGBColor(240, 180, 60),
        Some(LeakClass::Flat) => RGBColor(90, 170, 110),
        Some(LeakClass::Undecided) => RGBColor(200, 200, 225),
        None => RGBColor(170, 170, 170),
    }
}

/// The colour of a function's state on the page of every function: hazards and leads warm, the
/// rest cool to grey.
pub(crate) fn state_colour(kind: nppbench_analysis::catalogue::StateKind) -> RGBColor {
    use nppbench_analysis::catalogue::StateKind;
    match kind {
        StateKind::Measured => RGBColor(0, 114, 178),
        StateKind::Lead => RGBColor(213, 94, 0),
        StateKind::Called => RGBColor(0, 158, 115),
        StateKind::NotRun => RGBColor(230, 159, 0),
        StateKind::NotCalled => RGBColor(190, 190, 190),
        StateKind::NotSynthesisable => RGBColor(120, 120, 120),
    }
}

/// Colours of the series that are not stream kinds (threading models, fixes, versions), distinct
/// from the stream colours and from each other; a page gives each series key one of these, the
/// same in every chart ([`series_colour`]).
pub(crate) const SERIES_COLOURS: [RGBColor; 10] = [
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(120, 94, 240),
    RGBColor(90, 90, 90),
    RGBColor(160, 120, 40),
    RGBColor(40, 160, 160),
    RGBColor(200, 40, 120),
    RGBColor(100, 150, 40),
    RGBColor(60, 60, 200),
    RGBColor(230, 100, 40),
];

/// A threading model as every chart names it, in legends, columns and axes alike (the grid's
/// columns said `thread_per_call` where the legends beside them said "new thread per call").
pub(crate) fn threading_name(t: nppbench_model::Threading) -> String {
    use nppbench_model::Threading;
    match t {
        Threading::ThreadPerCall => "new thread per call".to_owned(),
        Threading::ThreadPerCallOwnStream => "new thread per call, its own stream".to_owned(),
        Threading::Pool(1) => "pool of 1 thread".to_owned(),
        Threading::Pool(n) => format!("pool of {n} threads"),
        Threading::Single => "one thread".to_owned(),
    }
}

/// A threading model and the stream its calls are made on: `new thread per call, blocking
/// stream`; a thread with a stream of its own names no other.
pub(crate) fn threading_on(t: nppbench_model::Threading, stream: nppbench_model::StreamKind) -> String {
    if t.owns_stream() {
        threading_name(t)
    } else {
        format!("{}, {stream} stream", threading_name(t))
    }
}

/// The colour of a series that is not a stream kind: the same key has the same colour in every
/// chart of every page (`single`, `pool:4`, `own stream`, `padded ROI`, an NPP version, …).
pub(crate) fn series_colour(key: &str) -> RGBColor {
    const KNOWN: [&str; 8] = [
        "single",
        "pool:2",
        "pool:4",
        "pool:16",
        "thread_per_call_own_stream",
        "padded ROI",
        "pool:3",
        "pool:8",
    ];
    let index = KNOWN.iter().position(|k| *k == key).unwrap_or_else(|| {
        // Any other key: a stable hash of its text, past the known ones.
        let h = key
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        KNOWN.len() + (h as usize % (SERIES_COLOURS.len() - KNOWN.len()))
    });
    SERIES_COLOURS[index % SERIES_COLOURS.len()]
}

/// A reference line (the copy ceiling) and the reference kernel's markers.
pub(crate) const CEILING_COLOUR: RGBColor = RGBColor(80, 80, 80);
pub(crate) const REFERENCE_COLOUR: RGBColor = RGBColor(0, 0, 0);

/// Draws into an SVG string of `width × height`.
pub(crate) fn svg(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, plotters::coord::Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn drawing_error<E: std::error::Error + Send + Sync>(e: plotters::drawing::DrawingAreaErrorKind<E>) -> String {
    e.to_string()
}

/// A group's label, right-aligned against the bars at `right`, centred on `mid`.
pub(crate) fn group_label(root: &Area<'_>, label: &str, right: i32, mid: i32) -> Result<(), String> {
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Right,
        plotters::style::text_anchor::VPos::Center,
    ));
    root.draw(&Text::new(label.to_owned(), (right, mid), style))
        .map_err(drawing_error)
}

/// The stream kinds' colours, in a row at height `y`.
pub(crate) fn stream_legend(root: &Area<'_>, y: i32) -> Result<(), String> {
    for (i, k) in StreamKind::ALL.into_iter().enumerate() {
        let x = 10 + i as i32 * 150;
        root.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], stream_colour(k).filled()))
            .map_err(drawing_error)?;
        root.draw(&Text::new(k.as_str(), (x + 16, y), (FONT, MIN_TEXT)))
            .map_err(drawing_error)?;
    }
    Ok(())
}

/// A tick step of 1, 2 or 5 × 10ⁿ giving about five ticks up to `max`.
pub(crate) fn nice_step(max: f64) -> f64 {
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// A horizontal value axis at height `y` from `left` to `x_of(x_max)`: the line, a tick every
/// `step` from 0, each labelled below it, centred (as many decimals as the step needs).
pub(crate) fn x_axis(
    root: &Area<'_>,
    left: i32,
    y: i32,
    x_max: f64,
    step: f64,
    x_of: impl Fn(f64) -> i32,
) -> Result<(), String> {
    root.draw(&PathElement::new(
        vec![(left, y), (x_of(x_max), y)],
        BLACK.stroke_width(1),
    ))
    .map_err(drawing_error)?;
    let label = TextStyle::from((FONT, MIN_TEXT).into_font()).pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Top,
    ));
    let mut t = 0.0;
    while t <= x_max {
        root.draw(&PathElement::new(
            vec![(x_of(t), y), (x_of(t), y + 4)],
            BLACK.stroke_width(1),
        ))
        .map_err(drawing_error)?;
        let text = if step >= 1.0 {
            format!("{t:.0}")
        } else if step >= 0.1 {
            format!("{t:.1}")
        } else {
            format!("{t:.2}")
        };
        root.draw(&Text::new(text, (x_of(t), y + 6), label.clone()))
            .map_err(drawing_error)?;
        t += step;
    }
    Ok(())
}

/// `5`, not `5.0`: axis labels of counts.
pub(crate) fn integer_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// A labelled line of a line chart.
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) colour: RGBColor,
    /// Dashed lines tell a fix from the configuration it fixes.
    pub(crate) dashed: bool,
    pub(crate) points: Vec<(f64, f64)>,
}

/// A line chart with a legend: the shape of the memory and hidden-stream charts. The x axis
/// counts calls (integer labels); `integer_y` labels the y axis in integers too (counts).
pub(crate) fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    integer_y: bool,
) -> Result<String, String> {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(1.0, f64::max)
        * 1.1;
    let legend_rows = lines.len() as u32;
    svg(WIDTH, LINE_HEIGHT + legend_rows * 20 + 4, |root| {
        let (plot, legend) = root.split_vertically(LINE_HEIGHT);
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, CAPTION_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(e)?;
        let y_format = |v: &f64| if integer_y { integer_label(v) } else { format!("{v:.1}") };
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&integer_label)
            .y_label_formatter(&y_format)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .light_line_style(RGBColor(242, 242, 242))
            .draw()
            .map_err(e)?;
        for line in lines {
            let style = ShapeStyle::from(&line.colour).stroke_width(2);
            if line.dashed {
                chart
                    .draw_series(DashedLineSeries::new(line.points.iter().copied(), 6, 4, style))
                    .map_err(e)?;
            } else {
                chart
                    .draw_series(LineSeries::new(line.points.iter().copied(), style))
                    .map_err(e)?;
            }
        }
        for (i, line) in lines.iter().enumerate() {
            legend_row(&legend, 4 + i as i32 * 20, line.colour, line.dashed, &line.label)?;
        }
        Ok(())
    })
}

/// One row of a line chart's legend at height `y`: a swatch drawn as the line is (dashed for a
/// dashed series), then the label.
pub(crate) fn legend_row(area: &Area<'_>, y: i32, colour: RGBColor, dashed: bool, label: &str) -> Result<(), String> {
    let style = ShapeStyle::from(&colour).stroke_width(3);
    if dashed {
        for x in [70, 82, 94] {
            area.draw(&PathElement::new(vec![(x, y + 6), (x + 6, y + 6)], style))
                .map_err(drawing_error)?;
        }
    } else {
        area.draw(&PathElement::new(vec![(70, y + 6), (100, y + 6)], style))
            .map_err(drawing_error)?;
    }
    area.draw(&Text::new(label.to_owned(), (108, y), (FONT, LABEL_SIZE)))
        .map_err(drawing_error)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ticks_are_round() {
        // About five ticks up to the maximum.
        assert_eq!(super::nice_step(3100.0), 1000.0);
        assert_eq!(super::nice_step(9.0), 2.0);
        assert_eq!(super::nice_step(3.5), 1.0);
        assert_eq!(super::nice_step(650.0), 200.0);
        assert_eq!(super::nice_step(15.0), 5.0);
    }
}
