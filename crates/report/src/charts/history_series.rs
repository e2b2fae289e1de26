//! Kernel time per call over the runs of a history: one line and colour per series, change
//! points ringed, environment changes as labelled vertical marks. The x axis counts runs.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{CAPTION_SIZE as TITLE, FONT, LINE_HEIGHT, MIN_TEXT as TEXT, WIDTH, svg};

/// Series with more points than this are drawn as lines without markers (a page of long
/// histories stays light).
const MARKERS_UP_TO: usize = 60;
/// Legend rows, px.
const LEGEND_ROW: u32 = 20;
/// Environment marks labelled at most: more would overlap.
const LABELLED_MARKS: usize = 8;

/// Okabe–Ito (readable with colour-blindness) without its yellow, then hues a golden angle apart.
pub(crate) fn series_colour(i: usize) -> RGBColor {
    const FIRST: [RGBColor; 7] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(86, 180, 233),
        RGBColor(0, 0, 0),
        RGBColor(230, 159, 0),
    ];
    if let Some(c) = FIRST.get(i) {
        return *c;
    }
    let hue = ((i - FIRST.len()) as f64 * 137.508) % 360.0;
    let (r, g, b) = HSLColor(hue / 360.0, 0.65, 0.42).rgb();
    RGBColor(r, g, b)
}

/// One line of the chart.
pub(crate) struct SeriesLine {
    pub(crate) label: String,
    /// (run number, kernel time µs).
    pub(crate) points: Vec<(i32, f64)>,
    /// Run numbers where a change point starts a new level.
    pub(crate) change_points: Vec<i32>,
}

/// A vertical mark: an environment change at a run (`label`: what changed, short).
pub(crate) struct Mark {
    pub(crate) run: i32,
    pub(crate) label: String,
}

pub(crate) fn render(title: &str, lines: &[SeriesLine], marks: &[Mark]) -> Result<String, String> {
    let xs = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let (x_min, x_max) = xs.fold((i32::MAX, i32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (x_min, x_max) = if x_min > x_max { (1, 1) } else { (x_min, x_max) };
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.15;
    let height = LINE_HEIGHT + lines.len() as u32 * LEGEND_ROW + 8;
    let out = svg(WIDTH, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        let (plot, legend) = root.split_vertically(LINE_HEIGHT);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, TITLE))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d((x_min - 1)..(x_max + 1), 0f64..y_max)
            .map_err(e)?;
        let runs = (x_max - x_min + 3) as usize;
        chart
            .configure_mesh()
            .x_desc("run (in order of start time)")
            .y_desc("kernel time per call, µs")
            .x_labels(runs.min(12))
            .x_label_formatter(&|x| x.to_string())
            .label_style((FONT, TEXT))
            .light_line_style(RGBColor(242, 242, 242))
            .draw()
            .map_err(e)?;
        let grey = RGBColor(150, 150, 150);
        for (k, m) in marks.iter().enumerate() {
            chart
                .draw_series(DashedLineSeries::new(
                    [(m.run, 0.0), (m.run, y_max)],
                    4,
                    4,
                    ShapeStyle::from(&grey).stroke_width(1),
                ))
                .map_err(e)?;
            if k < LABELLED_MARKS {
                // Staggered in two rows so that neighbouring labels do not overlap; right of the
                // mark, or left of it in the right third, so that no label leaves the chart.
                let y = y_max * if k % 2 == 0 { 0.99 } else { 0.92 };
                let right_third = f64::from(m.run - x_min + 1) > f64::from(x_max - x_min + 2) * 2.0 / 3.0;
                let (h, pad) = if right_third {
                    (HPos::Right, -4)
                } else {
                    (HPos::Left, 4)
                };
                let style = TextStyle::from((FONT, TEXT).into_font()).pos(Pos::new(h, VPos::Top));
                let at = chart.backend_coord(&(m.run, y));
                plot.draw(&Text::new(m.label.clone(), (at.0 + pad, at.1), style))
                    .map_err(e)?;
            }
        }
        for (i, line) in lines.iter().enumerate() {
            let colour = series_colour(i);
            let style = ShapeStyle::from(&colour).stroke_width(2);
            chart
                .draw_series(LineSeries::new(line.points.iter().copied(), style))
                .map_err(e)?;
            if line.points.len() <= MARKERS_UP_TO {
                chart
                    .draw_series(line.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                    .map_err(e)?;
            }
            let rings = line
                .points
                .iter()
                .filter(|p| line.change_points.contains(&p.0))
                .map(|&p| Circle::new(p, 8, ShapeStyle::from(&colour).stroke_width(2)));
            chart.draw_series(rings).map_err(e)?;
        }
        for (i, line) in lines.iter().enumerate() {
            crate::charts::legend_row(
                &legend,
                4 + i as i32 * LEGEND_ROW as i32,
                series_colour(i),
                false,
                &line.label,
            )?;
        }
        Ok(())
    })?;
    // Inline SVG needs no namespace, and the page names no URL at all.
    Ok(out.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_are_distinct_past_the_palette() {
        let colours: Vec<_> = (0..20).map(series_colour).collect();
        for (i, a) in colours.iter().enumerate() {
            for b in &colours[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn generated_series_draw_with_rings_marks_and_a_legend() {
        // Generated: two series over runs 1..=6, a step at run 4 where NPP changed.
        let lines = [
            SeriesLine {
                label: "blocking · H200 @ a".into(),
                points: (1..=6).map(|x| (x, if x < 4 { 1.6 } else { 1.9 })).collect(),
                change_points: vec![4],
            },
            SeriesLine {
                label: "non_blocking · H200 @ a".into(),
                points: (1..=6).map(|x| (x, 1.7)).collect(),
                change_points: vec![],
            },
        ];
        let marks = [Mark {
            run: 4,
            label: "NPP 13.0.1".into(),
        }];
        let svg = render("Convert_8u32f_C1R 31x31", &lines, &marks).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(!svg.contains("http"));
        assert!(svg.contains("NPP 13.0.1") && svg.contains("non_blocking · H200 @ a"));
        // No text below 12 px.
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size.split('"').next().unwrap().parse().unwrap();
            assert!(px >= 12.0, "{px}");
        }
    }
}
