//! Every function of a version's headers at a glance: a bar per NPP library, its functions
//! stacked by state (measured, lead, called, not run, not called, not synthesisable).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{CAPTION_SIZE, CHAR_PX, FONT, MIN_TEXT, WIDTH, nice_step, state_colour, svg, x_axis};
use nppbench_analysis::catalogue::StateKind;

/// One library's bar: its functions in each state, in [`StateKind::ALL`]'s order.
pub(crate) struct Bar {
    pub(crate) library: String,
    pub(crate) counts: Vec<(StateKind, usize)>,
}

const ROW: u32 = 26;
const LEFT: u32 = 90;

pub(crate) fn render(title: &str, bars: &[Bar]) -> Result<String, String> {
    let legend_rows = 2;
    let height = 44 + ROW * bars.len() as u32 + 40 + 22 * legend_rows;
    let most = bars
        .iter()
        .map(|b| b.counts.iter().map(|(_, n)| *n).sum::<usize>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let step = nice_step(most);
    let x_max = (most / step).ceil() * step;
    svg(WIDTH, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        root.draw(&Text::new(title.to_owned(), (10, 8), (FONT, CAPTION_SIZE)))
            .map_err(e)?;
        let plot_w = WIDTH - LEFT - 40;
        let x_of = |v: f64| LEFT as i32 + (v / x_max * f64::from(plot_w)) as i32;
        let label = TextStyle::from((FONT, MIN_TEXT).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        for (i, b) in bars.iter().enumerate() {
            let y = 40 + (ROW * i as u32) as i32;
            root.draw(&Text::new(
                b.library.clone(),
                (LEFT as i32 - 6, y + ROW as i32 / 2),
                label.clone(),
            ))
            .map_err(e)?;
            let mut start = 0usize;
            for (kind, n) in &b.counts {
                if *n == 0 {
                    continue;
                }
                root.draw(&Rectangle::new(
                    [
                        (x_of(start as f64), y + 3),
                        (x_of((start + n) as f64), y + ROW as i32 - 3),
                    ],
                    state_colour(*kind).filled(),
                ))
                .map_err(e)?;
                start += n;
            }
        }
        let axis_y = 44 + (ROW * bars.len() as u32) as i32;
        x_axis(root, LEFT as i32, axis_y, x_max, step, x_of)?;
        // The legend: each state's colour and name, three a row.
        for (i, kind) in StateKind::ALL.into_iter().enumerate() {
            let x = 10 + (i % 3) as i32 * 240;
            let y = axis_y + 30 + (i / 3) as i32 * 22;
            root.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], state_colour(kind).filled()))
                .map_err(e)?;
            let name = kind.as_str();
            debug_assert!(name.len() as u32 * CHAR_PX < 220, "{name} fits its column");
            root.draw(&Text::new(name, (x + 16, y), (FONT, MIN_TEXT))).map_err(e)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made-up counts: every library is labelled, every state is in the legend, and a state
    /// with no function draws no bar.
    #[test]
    fn each_library_has_its_bar_and_each_state_its_colour() {
        let bars = [
            Bar {
                library: "nppial".into(),
                counts: vec![
                    (StateKind::Measured, 10),
                    (StateKind::Lead, 0),
                    (StateKind::Called, 300),
                ],
            },
            Bar {
                library: "nppig".into(),
                counts: vec![(StateKind::NotSynthesisable, 40)],
            },
        ];
        let svg = render("t", &bars).unwrap();
        for name in ["nppial", "nppig"]
            .into_iter()
            .chain(StateKind::ALL.map(StateKind::as_str))
        {
            assert!(svg.contains(name), "{name}");
        }
        // Three bars' rectangles, the six legend swatches and the background.
        assert_eq!(svg.matches("<rect").count(), 3 + 6 + 1, "{svg}");
    }
}
