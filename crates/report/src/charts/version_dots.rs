//! Versions against each other: one row per scenario, one mark per version (its colour the same
//! in every chart of the page), with the interval as a whisker. The shape of both charts of the
//! upgrade page: kernel throughput, and the leak slope.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{CAPTION_SIZE, CHAR_PX, FONT, MIN_TEXT, WIDTH, nice_step, series_colour, svg, x_axis};

/// One version's mark in a row: the value and its interval; `None`: not measured in that version.
pub(crate) type Mark = Option<(f64, Option<(f64, f64)>)>;

/// One row: its label and one mark per version (in the order of the versions).
pub(crate) struct Row {
    pub(crate) label: String,
    pub(crate) marks: Vec<Mark>,
}

const ROW: u32 = 24;
const TOP: u32 = 40;

/// `versions` name the series (their colours come from [`series_colour`]); `x_desc` says what the
/// axis measures.
pub(crate) fn render(title: &str, x_desc: &str, versions: &[String], rows: &[Row]) -> Result<String, String> {
    let legend_rows = versions.len().div_ceil(2) as u32;
    let height = TOP + legend_rows * 22 + ROW * rows.len() as u32 + 60;
    let x_max = rows
        .iter()
        .flat_map(|r| r.marks.iter().flatten().map(|(v, ci)| ci.map_or(*v, |c| c.1.max(*v))))
        .fold(0.0, f64::max)
        .max(1e-9)
        * 1.05;
    // Room for the longest label at MIN_TEXT (about 0.6 em a character), within bounds.
    let longest = rows.iter().map(|r| r.label.chars().count()).max().unwrap_or(0) as u32;
    let left = (longest * CHAR_PX + 16).clamp(120, 440);
    svg(WIDTH, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        root.draw(&Text::new(title.to_owned(), (10, 8), (FONT, CAPTION_SIZE)))
            .map_err(e)?;
        // The legend: one dot per version, two to a line.
        for (i, v) in versions.iter().enumerate() {
            let (x, y) = (10 + (i as i32 % 2) * 370, TOP as i32 - 6 + (i as i32 / 2) * 22);
            root.draw(&Circle::new((x + 6, y + 7), 5, series_colour(v).filled()))
                .map_err(e)?;
            root.draw(&Text::new(v.clone(), (x + 16, y), (FONT, MIN_TEXT)))
                .map_err(e)?;
        }
        let top = (TOP + legend_rows * 22) as i32;
        let plot_w = WIDTH - left - 24;
        let x_of = |v: f64| left as i32 + (v / x_max * f64::from(plot_w)) as i32;
        let label = TextStyle::from((FONT, MIN_TEXT).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
        let n = versions.len().max(1) as i32;
        for (i, row) in rows.iter().enumerate() {
            let y = top + (ROW * i as u32) as i32;
            if i % 2 == 0 {
                root.draw(&Rectangle::new(
                    [(left as i32, y), (x_of(x_max), y + ROW as i32)],
                    RGBColor(246, 247, 249).filled(),
                ))
                .map_err(e)?;
            }
            root.draw(&Text::new(
                row.label.clone(),
                (left as i32 - 6, y + ROW as i32 / 2),
                label.clone(),
            ))
            .map_err(e)?;
            for (k, (mark, version)) in row.marks.iter().zip(versions).enumerate() {
                let Some((v, ci)) = mark else { continue };
                // Each version a little lower than the one before, so that equal values stay apart.
                let cy = y + 3 + ((ROW as i32 - 6) * (2 * k as i32 + 1)) / (2 * n);
                let colour = series_colour(version);
                if let Some((lo, hi)) = ci {
                    root.draw(&PathElement::new(
                        vec![(x_of(*lo), cy), (x_of(*hi), cy)],
                        colour.stroke_width(2),
                    ))
                    .map_err(e)?;
                }
                root.draw(&Circle::new((x_of(*v), cy), 4, colour.filled())).map_err(e)?;
            }
        }
        let axis_y = top + (ROW * rows.len() as u32) as i32 + 2;
        x_axis(root, left as i32, axis_y, x_max, nice_step(x_max), x_of)?;
        root.draw(&Text::new(
            x_desc.to_owned(),
            (left as i32, axis_y + 26),
            (FONT, MIN_TEXT),
        ))
        .map_err(e)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_has_a_legend_entry_and_missing_marks_are_skipped() {
        let versions = vec!["NPP 12.2.3.2".to_owned(), "NPP 13.0.1.2".to_owned()];
        let svg = render(
            "t",
            "GB/s",
            &versions,
            &[Row {
                label: "1920x1080".into(),
                marks: vec![Some((100.0, Some((95.0, 105.0)))), None],
            }],
        )
        .unwrap();
        assert!(svg.contains("NPP 12.2.3.2") && svg.contains("NPP 13.0.1.2") && svg.contains("1920x1080"));
        assert_eq!(svg.matches("<circle").count(), 2 + 1, "two legend dots and one mark");
    }
}
