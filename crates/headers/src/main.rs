//! `nppbench-headers`: writes a catalogue folder from NPP's headers and libraries (`extract`), or
//! the generated rows again from a folder's committed prototypes (`generate`). `cargo xtask
//! catalogue VERSION` fetches the wheel and runs `extract`.

#![forbid(unsafe_code)]

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use nppbench_headers::files::Prototypes;
use nppbench_headers::{exports, extract, generate};

#[derive(Parser)]
#[command(name = "nppbench-headers", about = "NPP's image functions from NPP's headers")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Read the headers and libraries of one NPP version and write OUT/prototypes.tsv.gz and the
    /// rows generated from it.
    Extract {
        /// The NPP version (`12.2.3.2`).
        #[arg(long)]
        version: String,
        /// The folder holding NPP's headers (`nppi_*.h`, `nppdefs.h`).
        #[arg(long, value_name = "DIR")]
        headers: PathBuf,
        /// The folder holding NPP's libraries (`libnpp*.so.*`).
        #[arg(long, value_name = "DIR")]
        libs: PathBuf,
        /// The catalogue folder to write (`catalogue/npp-VERSION`).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Write each folder's rows again from its prototypes.tsv.gz.
    Generate {
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Cmd::Extract {
            version,
            headers,
            libs,
            out,
        } => {
            let prototypes = read_headers(&version, &headers, &libs)?;
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            nppbench_headers::files::write_gz(&out.join(nppbench_headers::files::PROTOTYPES), &prototypes.to_text())?;
            let summary = generate::write(&out, &prototypes)?;
            println!("{}: {summary}", out.display());
        }
        Cmd::Generate { dirs } => {
            for dir in dirs {
                let prototypes = Prototypes::read(&dir)?;
                let summary = generate::write(&dir, &prototypes)?;
                println!("{}: {summary}", dir.display());
            }
        }
    }
    Ok(())
}

fn read_headers(version: &str, headers: &std::path::Path, libs: &std::path::Path) -> anyhow::Result<Prototypes> {
    let mut files: Vec<_> = std::fs::read_dir(headers)
        .with_context(|| format!("reading {}", headers.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "h"))
        .collect();
    files.sort();
    anyhow::ensure!(
        files.iter().any(|f| f.ends_with("nppdefs.h")),
        "no nppdefs.h in {}: point --headers at NPP's include folder",
        headers.display()
    );
    let exported = exports::exports(libs)?;
    let mut types = Vec::new();
    let mut statuses = Vec::new();
    let mut functions = std::collections::BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let found = extract::declarations(&file.display().to_string(), &text)?;
        types.extend(found.types);
        statuses.extend(found.statuses);
        for (symbol, line) in found.prototypes {
            let library = exported.get(&symbol).cloned();
            functions.entry(symbol.clone()).or_insert((symbol, library, line));
        }
    }
    types.sort();
    types.dedup();
    statuses.sort();
    statuses.dedup();
    Ok(Prototypes {
        version: version.to_owned(),
        types,
        statuses,
        functions: functions.into_values().collect(),
    })
}
