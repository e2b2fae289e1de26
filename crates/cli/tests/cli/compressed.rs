//! `nppbench report --from` of gzip-compressed runs (as committed evidence is kept): each run
//! stays compressed beside the page, under the name the page links to, and rendering into the
//! runs' own folder writes no uncompressed copy beside them.

use std::io::Write;

use super::{nppbench, reports, stderr};

fn gzip(text: &[u8], to: &std::path::Path) {
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(to).unwrap(), flate2::Compression::fast());
    gz.write_all(text).unwrap();
    gz.finish().unwrap();
}

#[test]
fn compressed_runs_stay_compressed_beside_the_page_they_link_from() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = Vec::new();
    let committed = std::fs::File::open(reports().join("h100-quick-npp-13.0.1/run.json.gz")).unwrap();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(committed), &mut run).unwrap();
    let (from, plain) = (tmp.path().join("runs"), tmp.path().join("plain"));
    std::fs::create_dir_all(&from).unwrap();
    std::fs::create_dir_all(&plain).unwrap();
    gzip(&run, &from.join("run-1-npp-13.0.1.json.gz"));
    std::fs::write(plain.join("run.json"), &run).unwrap();

    // One compressed run and one plain, rendered elsewhere: each copied as it was.
    let out = tmp.path().join("page");
    let args = [
        "report",
        "--from",
        from.to_str().unwrap(),
        plain.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = nppbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(nppbench_model::is_gzip(&out.join("run-1-npp-13.0.1.json.gz")));
    assert!(
        html.contains("href=\"run-1-npp-13.0.1.json.gz\""),
        "the page links the compressed run"
    );
    assert!(!out.join("run-1-npp-13.0.1.json").exists());
    assert!(
        out.join("run-2-npp-13.0.1.json").is_file() && !nppbench_model::is_gzip(&out.join("run-2-npp-13.0.1.json"))
    );
    assert!(html.contains("href=\"run-2-npp-13.0.1.json\""));

    // Rendered again into that folder from the runs there (as `cargo xtask rerender` does):
    // each run is left as it was, and no uncompressed copy is written.
    let before = std::fs::read(out.join("run-1-npp-13.0.1.json.gz")).unwrap();
    let o = nppbench(&[
        "report",
        "--from",
        out.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(".json"))
        .collect();
    names.sort();
    assert_eq!(names, ["run-1-npp-13.0.1.json.gz", "run-2-npp-13.0.1.json"]);
    assert_eq!(std::fs::read(out.join("run-1-npp-13.0.1.json.gz")).unwrap(), before);
}
