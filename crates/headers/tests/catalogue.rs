//! The committed catalogues regenerate exactly: each `catalogue/npp-VERSION/`'s rows and summary
//! are what the generator writes from its committed prototypes (no network, no wheel). A change
//! to the roles that changes a row fails here until the rows are written again
//! (`cargo xtask catalogue --regenerate`).

use std::path::{Path, PathBuf};

use nppbench_headers::files::{FUNCTIONS, Prototypes, SUMMARY, catalogue_dirs, read_gz};
use nppbench_headers::generate;

fn catalogue_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../catalogue")
}

#[test]
fn committed_rows_regenerate_from_committed_prototypes_without_drift() {
    let dirs = catalogue_dirs(&catalogue_root()).unwrap();
    let names: Vec<_> = dirs
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for version in ["npp-12.2.3.2", "npp-13.0.1.2", "npp-13.2.0.58"] {
        assert!(names.iter().any(|n| n == version), "{version} missing from {names:?}");
    }
    for dir in &dirs {
        let prototypes = Prototypes::read(dir).unwrap();
        let (functions, summary) = generate::texts(&prototypes).unwrap();
        let committed = read_gz(&dir.join(FUNCTIONS)).unwrap();
        if functions != committed {
            let line = functions
                .lines()
                .zip(committed.lines())
                .position(|(a, b)| a != b)
                .map_or("the line count".to_owned(), |i| format!("line {}", i + 1));
            panic!(
                "{}: {FUNCTIONS} drifted from what its prototypes generate (first at {line}): run `cargo xtask catalogue --regenerate` and commit the result",
                dir.display()
            );
        }
        let committed_summary = std::fs::read_to_string(dir.join(SUMMARY)).unwrap();
        assert_eq!(summary, committed_summary, "{}: {SUMMARY} drifted", dir.display());
    }
}

#[test]
fn every_version_catalogues_thousands_of_image_functions() {
    for dir in catalogue_dirs(&catalogue_root()).unwrap() {
        let prototypes = Prototypes::read(&dir).unwrap();
        let rows = generate::rows(&prototypes).unwrap();
        let summary = generate::summary(&prototypes.version, &rows);
        assert!(summary.functions > 5_000, "{}: {summary}", dir.display());
        assert!(summary.synthesisable > 2_500, "{}: {summary}", dir.display());
        // Every hand-written catalogue row is a function the headers declare.
        assert_eq!(summary.overridden, nppbench_catalog::rows().len(), "{}", dir.display());
        // A function that cannot be synthesised says why; one that can says nothing.
        for row in &rows {
            assert_eq!(row.synthesisable, row.reasons.is_empty(), "{}", row.symbol);
        }
    }
}
