//! Host latency per call (launch plus synchronise) by threading model and stream kind.

use nppbench_model::StreamKind;
use plotters::prelude::*;

use crate::charts::{CAPTION_SIZE, CHAR_PX, FONT, MIN_TEXT, WIDTH, group_label, stream_colour, stream_legend, svg};

const BAR: u32 = 16;
/// The least room left of the bars for a threading model's name; more for a longer one.
const MIN_LEFT: u32 = 210;

/// `groups`: a threading model and the median latency (µs) per stream kind.
pub(crate) fn render(title: &str, groups: &[(String, Vec<(StreamKind, f64)>)]) -> Result<String, String> {
    let bars: u32 = groups.iter().map(|(_, b)| b.len() as u32).sum();
    let height = 50 + bars * BAR + groups.len() as u32 * 10 + 50;
    let x_max = groups
        .iter()
        .flat_map(|(_, b)| b.iter().map(|b| b.1))
        .fold(1.0, f64::max)
        * 1.15;
    // Group names are drawn at LABEL_SIZE, a little wider a character than CHAR_PX.
    let longest = groups.iter().map(|(name, _)| name.chars().count()).max().unwrap_or(0) as u32;
    let left = MIN_LEFT.max(longest * (CHAR_PX + 2) + 16);
    svg(WIDTH, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        root.draw(&Text::new(title.to_owned(), (10, 8), (FONT, CAPTION_SIZE)))
            .map_err(e)?;
        let plot_w = WIDTH - left - 60;
        let x_of = |v: f64| left as i32 + (v / x_max * f64::from(plot_w)) as i32;
        let mut y = 40i32;
        for (label, group) in groups {
            let mid = y + (group.len() as i32 * BAR as i32) / 2;
            group_label(root, label, left as i32 - 6, mid)?;
            for (kind, us) in group {
                root.draw(&Rectangle::new(
                    [(left as i32, y), (x_of(*us), y + BAR as i32 - 2)],
                    stream_colour(*kind).filled(),
                ))
                .map_err(e)?;
                root.draw(&Text::new(
                    format!("{us:.0} µs"),
                    (x_of(*us) + 4, y - 1),
                    (FONT, MIN_TEXT),
                ))
                .map_err(e)?;
                y += BAR as i32;
            }
            y += 10;
        }
        let ly = y + 10;
        stream_legend(root, ly)?;
        Ok(())
    })
}
