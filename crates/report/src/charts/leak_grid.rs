//! A grid of leak slope: geometry (rows) × stream kind and threading model (columns), each cell
//! coloured by its leak class and labelled with its MiB per new thread.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::{CHAR_PX, FONT, LABEL_SIZE, MIN_TEXT, WIDTH, class_colour, svg};
use nppbench_analysis::LeakClass;

/// One cell: its class (`None`: failed) and the text shown in it.
pub(crate) struct Cell {
    pub(crate) class: Option<LeakClass>,
    pub(crate) text: String,
}

const ROW_HEIGHT: u32 = 28;
const ROW_LABEL: u32 = 200;
/// The widest a cell is drawn: a grid of one or two columns (a second part of a split grid)
/// stretched one cell to 770 px.
const MAX_CELL: u32 = 120;

/// The most columns one grid holds at the page's width with legible text: the caller splits a
/// wider grid into several.
pub(crate) const MAX_COLUMNS: usize = 12;

/// `cells[row][column]`; `None` where that combination was not measured. At most
/// [`MAX_COLUMNS`] columns: the grid keeps the page's width, so its text keeps its size.
pub(crate) fn render(rows: &[String], columns: &[String], cells: &[Vec<Option<Cell>>]) -> Result<String, String> {
    debug_assert!(columns.len() <= MAX_COLUMNS);
    // Room above the grid for the longest column name, drawn upwards.
    let longest = columns.iter().map(|c| c.chars().count()).max().unwrap_or(0) as u32;
    let header = (longest * CHAR_PX + 20).max(80);
    let height = header + ROW_HEIGHT * rows.len() as u32 + 44;
    let width = WIDTH;
    let col_width = ((width - ROW_LABEL - 10) / columns.len().max(1) as u32).min(MAX_CELL);
    svg(width, height, |root| {
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        let small = (FONT, MIN_TEXT).into_font();
        for (c, name) in columns.iter().enumerate() {
            let x = (ROW_LABEL + col_width * c as u32 + col_width / 2) as i32;
            let style = TextStyle::from(small.clone())
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(name.clone(), (x, header as i32 - 6), style))
                .map_err(e)?;
        }
        for (r, name) in rows.iter().enumerate() {
            let y = (header + ROW_HEIGHT * r as u32) as i32;
            let style = TextStyle::from((FONT, MIN_TEXT).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(
                name.clone(),
                (ROW_LABEL as i32 - 8, y + ROW_HEIGHT as i32 / 2),
                style,
            ))
            .map_err(e)?;
            for (c, cell) in cells[r].iter().enumerate() {
                let x = (ROW_LABEL + col_width * c as u32) as i32;
                let Some(cell) = cell else { continue };
                let rect = [(x + 1, y + 1), (x + col_width as i32 - 1, y + ROW_HEIGHT as i32 - 1)];
                root.draw(&Rectangle::new(rect, class_colour(cell.class).filled()))
                    .map_err(e)?;
                let style = TextStyle::from(small.clone()).pos(Pos::new(HPos::Center, VPos::Center));
                root.draw(&Text::new(
                    cell.text.clone(),
                    (x + col_width as i32 / 2, y + ROW_HEIGHT as i32 / 2),
                    style,
                ))
                .map_err(e)?;
            }
        }
        let legend_y = (header + ROW_HEIGHT * rows.len() as u32 + 12) as i32;
        for (i, (class, name)) in [
            (Some(LeakClass::Leak), "leak (MiB per new thread)"),
            (Some(LeakClass::Bounded), "bounded"),
            (Some(LeakClass::Flat), "flat"),
            (None, "failed"),
        ]
        .into_iter()
        .enumerate()
        {
            let x = 10 + i as i32 * 230;
            root.draw(&Rectangle::new(
                [(x, legend_y), (x + 14, legend_y + 14)],
                class_colour(class).filled(),
            ))
            .map_err(e)?;
            root.draw(&Text::new(name, (x + 20, legend_y), (FONT, LABEL_SIZE)))
                .map_err(e)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The widths of the cells drawn (the filled rectangles narrower than the chart).
    fn cell_widths(svg: &str) -> Vec<f64> {
        svg.split("<rect")
            .skip(1)
            .filter_map(|r| r.split("width=\"").nth(1)?.split('"').next()?.parse().ok())
            .filter(|w| *w < f64::from(WIDTH) && *w > 14.0)
            .collect()
    }

    #[test]
    fn a_grid_of_one_column_keeps_its_cell_narrow() {
        let cell = || {
            Some(Cell {
                class: Some(LeakClass::Leak),
                text: "1.8".into(),
            })
        };
        let svg = render(&["1918x1080".into()], &["blocking stream".into()], &[vec![cell()]]).unwrap();
        let widths = cell_widths(&svg);
        assert!(!widths.is_empty(), "{svg}");
        assert!(widths.iter().all(|w| *w <= f64::from(MAX_CELL)), "{widths:?}");
    }
}
