//! The atlas at a glance: each function's kernel throughput as a share of the device-to-device
//! copy ceiling, its bar coloured by whether it leaks.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{CAPTION_SIZE, CEILING_COLOUR, FONT, MIN_TEXT, WIDTH, class_colour, svg, x_axis};
use nppbench_analysis::LeakClass;

/// One function's bar.
pub(crate) struct Bar {
    pub(crate) name: String,
    /// Percent of the copy ceiling; `None` where throughput was not measured.
    pub(crate) pct: Option<f64>,
    /// `Leak` where any scenario leaks, else `Flat`; `None`: not measured.
    pub(crate) class: Option<LeakClass>,
}

const ROW: u32 = 22;
const LEFT: u32 = 250;

pub(crate) fn render(title: &str, bars: &[Bar]) -> Result<String, String> {
    let height = 50 + ROW * bars.len() as u32 + 60;
    let x_max = bars.iter().filter_map(|b| b.pct).fold(100.0, f64::max) * 1.05;
    svg(WIDTH, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        root.draw(&Text::new(title.to_owned(), (10, 8), (FONT, CAPTION_SIZE)))
            .map_err(e)?;
        let plot_w = WIDTH - LEFT - 30;
        let x_of = |v: f64| LEFT as i32 + (v / x_max * f64::from(plot_w)) as i32;
        let label = TextStyle::from((FONT, MIN_TEXT).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, b) in bars.iter().enumerate() {
            let y = 40 + (ROW * i as u32) as i32;
            root.draw(&Text::new(
                b.name.clone(),
                (LEFT as i32 - 6, y + ROW as i32 / 2),
                label.clone(),
            ))
            .map_err(e)?;
            match b.pct {
                Some(p) => root
                    .draw(&Rectangle::new(
                        [(LEFT as i32, y + 2), (x_of(p), y + ROW as i32 - 2)],
                        class_colour(b.class).filled(),
                    ))
                    .map_err(e)?,
                None => root
                    .draw(&Text::new("not measured", (LEFT as i32 + 4, y + 1), (FONT, MIN_TEXT)))
                    .map_err(e)?,
            }
        }
        let axis_y = 44 + (ROW * bars.len() as u32) as i32;
        // A tick every 20 percentage points.
        x_axis(root, LEFT as i32, axis_y, x_max, 20.0, x_of)?;
        root.draw(&PathElement::new(
            vec![(x_of(100.0), 36), (x_of(100.0), axis_y)],
            CEILING_COLOUR.stroke_width(1),
        ))
        .map_err(e)?;
        root.draw(&Text::new(
            "kernel GB/s of the fastest scenario, % of the copy ceiling (red: leaks per new thread; green: does not)",
            (10, axis_y + 26),
            (FONT, MIN_TEXT),
        ))
        .map_err(e)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn bars_of_unmeasured_functions_still_appear() {
        let svg = super::render(
            "t",
            &[
                super::Bar {
                    name: "Copy_8u_C1R".into(),
                    pct: Some(80.0),
                    class: Some(nppbench_analysis::LeakClass::Leak),
                },
                super::Bar {
                    name: "Foo".into(),
                    pct: None,
                    class: None,
                },
            ],
        )
        .unwrap();
        assert!(svg.contains("Copy_8u_C1R") && svg.contains("not measured"));
    }
}
