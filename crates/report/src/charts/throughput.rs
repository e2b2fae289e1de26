//! Throughput by geometry and stream kind: a bar per stream kind with its confidence interval,
//! the reference kernel as a black tick, the copy ceiling as a grey line.

use nppbench_model::StreamKind;
use plotters::prelude::*;

use crate::charts::{
    CAPTION_SIZE, CEILING_COLOUR, FONT, LABEL_SIZE, MIN_TEXT, REFERENCE_COLOUR, WIDTH, group_label, nice_step,
    stream_colour, stream_legend, svg, x_axis,
};

/// One bar.
pub(crate) struct Bar {
    pub(crate) stream: StreamKind,
    pub(crate) gbps: f64,
    pub(crate) ci: Option<(f64, f64)>,
    pub(crate) reference_gbps: Option<f64>,
}

const BAR: u32 = 12;
const GROUP_GAP: u32 = 10;
const LEFT: u32 = 220;

/// `groups`: a geometry label and its bars.
pub(crate) fn render(title: &str, groups: &[(String, Vec<Bar>)], ceiling_gbps: Option<f64>) -> Result<String, String> {
    let bars: u32 = groups.iter().map(|(_, b)| b.len() as u32).sum();
    let height = 60 + bars * BAR + groups.len() as u32 * GROUP_GAP + 70;
    let x_max = groups
        .iter()
        .flat_map(|(_, b)| {
            b.iter()
                .map(|b| b.ci.map_or(b.gbps, |c| c.1).max(b.reference_gbps.unwrap_or(0.0)))
        })
        .fold(ceiling_gbps.unwrap_or(1.0), f64::max)
        * 1.05;
    svg(WIDTH, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        root.draw(&Text::new(title.to_owned(), (10, 8), (FONT, CAPTION_SIZE)))
            .map_err(e)?;
        let plot_w = WIDTH - LEFT - 20;
        let x_of = |g: f64| LEFT as i32 + (g / x_max * f64::from(plot_w)) as i32;
        let mut y = 40i32;
        for (label, group) in groups {
            let mid = y + (group.len() as i32 * BAR as i32) / 2;
            group_label(root, label, LEFT as i32 - 6, mid)?;
            for bar in group {
                root.draw(&Rectangle::new(
                    [(LEFT as i32, y), (x_of(bar.gbps), y + BAR as i32 - 1)],
                    stream_colour(bar.stream).filled(),
                ))
                .map_err(e)?;
                if let Some((lo, hi)) = bar.ci {
                    let c = y + BAR as i32 / 2;
                    root.draw(&PathElement::new(
                        vec![(x_of(lo), c), (x_of(hi), c)],
                        BLACK.stroke_width(1),
                    ))
                    .map_err(e)?;
                }
                if let Some(r) = bar.reference_gbps {
                    root.draw(&PathElement::new(
                        vec![(x_of(r), y), (x_of(r), y + BAR as i32 - 1)],
                        REFERENCE_COLOUR.stroke_width(2),
                    ))
                    .map_err(e)?;
                }
                y += BAR as i32;
            }
            y += GROUP_GAP as i32;
        }
        // Axis with ticks.
        let axis_y = y + 4;
        x_axis(root, LEFT as i32, axis_y, x_max, nice_step(x_max), x_of)?;
        root.draw(&Text::new(
            "GB/s (bytes read + written)",
            (LEFT as i32 + plot_w as i32 / 2 - 80, axis_y + 22),
            (FONT, LABEL_SIZE),
        ))
        .map_err(e)?;
        if let Some(c) = ceiling_gbps {
            root.draw(&PathElement::new(
                vec![(x_of(c), 36), (x_of(c), axis_y)],
                CEILING_COLOUR.stroke_width(2),
            ))
            .map_err(e)?;
            root.draw(&Text::new(
                format!("copy ceiling {c:.0}"),
                (x_of(c) - 150, 24),
                (FONT, MIN_TEXT),
            ))
            .map_err(e)?;
        }
        // Legend.
        let ly = axis_y + 40;
        stream_legend(root, ly)?;
        root.draw(&PathElement::new(
            vec![(610, ly), (610, ly + 12)],
            REFERENCE_COLOUR.stroke_width(2),
        ))
        .map_err(e)?;
        root.draw(&Text::new("reference kernel", (616, ly), (FONT, MIN_TEXT)))
            .map_err(e)?;
        Ok(())
    })
}
