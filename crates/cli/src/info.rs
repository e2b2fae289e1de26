//! The commands that print what nppbench knows without measuring: the catalogue, a preset's
//! matrix, an NPP's version and files.

use std::path::PathBuf;

use nppbench_model::catalog::Format;
use nppbench_model::{Preset, Primitive};

use crate::exit::unavailable;
use crate::runs::check_npp_dir;

/// `nppbench primitives`: the catalogue, a table of one function a row.
pub(crate) fn primitives() {
    print!("{}", primitives_table());
}

/// The catalogue as a table: a header, then one function a row, each column as wide as its
/// widest cell (counted in characters: `8u×1` is four) and one space apart.
fn primitives_table() -> String {
    let fmt = |f: Format| format!("{}×{}", f.sample.npp_name(), f.channels);
    let mut rows = vec![["primitive", "library", "source", "destination", "operation"].map(str::to_owned)];
    rows.extend(Primitive::all().map(|p| {
        let r = p.row();
        let src = if r.sources == 0 { "—".to_owned() } else { fmt(r.src) };
        [
            r.name.to_owned(),
            r.library.to_string(),
            src,
            fmt(r.dst),
            r.operation.to_owned(),
        ]
    }));
    let mut widths = [0; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| if i == 4 { cell.clone() } else { format!("{cell:<w$}") })
            .collect();
        out.push_str(&cells.join(" "));
        out.push('\n');
    }
    out
}

/// `nppbench preset NAME`: the preset's matrix file.
pub(crate) fn preset(preset: Preset) {
    print!("{}", preset.toml());
}

/// `nppbench npp`: NPP loaded (no GPU needed), its version and files.
pub(crate) fn npp(npp: Option<PathBuf>) -> anyhow::Result<()> {
    if let Some(dir) = &npp {
        check_npp_dir(dir)?;
    }
    // No NPP found is one failure whether the folder was named or searched: it exits as `run`
    // does on a machine without one (a folder that does not exist is bad input, above).
    let lib = nppbench_engine::load_npp(npp.as_deref()).map_err(unavailable)?;
    println!("NPP {}", lib.version());
    for path in lib.library_paths() {
        println!("{}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Each column starts where its heading starts, in every row: no cell runs into the next
    /// (`destination` is wider than its cells), and no cell is padded short (the library's name
    /// was printed unpadded, one character short).
    #[test]
    fn primitives_columns_line_up_under_their_headings() {
        let table = super::primitives_table();
        let lines: Vec<Vec<char>> = table.lines().map(|l| l.chars().collect()).collect();
        let header: String = lines[0].iter().collect();
        let starts: Vec<usize> = ["library", "source", "destination", "operation"]
            .iter()
            .map(|h| header.find(h).expect("a heading"))
            .collect();
        assert_eq!(lines.len(), nppbench_model::Primitive::all().count() + 1);
        for line in &lines {
            for &s in &starts {
                let text: String = line.iter().collect();
                assert!(line[s - 1] == ' ' && line[s] != ' ', "column at {s}:\n{header}\n{text}");
            }
        }
    }
}
