//! `cargo xtask knowledge`: the knowledge files nppbench embeds (`knowledge/*.json.gz`: one per
//! NPP version and GPU architecture, `nppbench_analysis::knowledge`). `--from RUN…` makes one
//! from atlas runs wherever they are (each file names the runs it was made from); `--check`, what
//! CI runs, fits every committed file's rules again on the cases it holds and fails where they
//! differ from its own (a change to how rules are fitted), so that no run need stay in the tree
//! for the check; `--refit` writes the rules and scores fitted again back into the files.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use nppbench_analysis::knowledge::{Knowledge, KnownCalls};
use nppbench_model::{RunFile, find_run_files};

use crate::{BadInput, root};

/// What `cargo xtask knowledge` was asked to do.
pub(crate) enum Job {
    Check,
    Refit,
    From(Vec<PathBuf>),
    Calls { calls: PathBuf, to: String },
    Designs { designs: Vec<PathBuf>, to: String },
}

/// Who made a file: the crate's version alone, so that the same runs make the same file.
fn made_by() -> String {
    format!("nppbench {}", env!("CARGO_PKG_VERSION"))
}

pub(crate) fn knowledge(job: Job) -> anyhow::Result<()> {
    let dir = root().join("knowledge");
    match job {
        Job::Check => check(&dir),
        Job::Refit => refit(&dir),
        Job::Calls { calls, to } => {
            let (path, n) = add_calls(&calls, &dir.join(format!("{to}.json.gz")))?;
            println!("{}: the lines of {n} functions called", path.display());
            Ok(())
        }
        Job::Designs { designs, to } => {
            let (path, functions, shapes) =
                write_designs(&designs, &dir.join("designs").join(format!("{to}.jsonl.gz")))?;
            println!("{}: {shapes} shapes of {functions} functions", path.display());
            Ok(())
        }
        Job::From(runs) => {
            let (path, k) = make(&runs, &dir)?;
            println!(
                "{}: NPP {} on {} from {} run(s), {} cases, {} functions' rules",
                path.display(),
                k.npp_version,
                k.gpu_arch,
                k.sources.len(),
                k.evidence.cases.len(),
                k.rules.len()
            );
            Ok(())
        }
    }
}

/// The knowledge of `runs` (files, or folders of them), written into `dir` under its own name.
pub(crate) fn make(runs: &[PathBuf], dir: &Path) -> anyhow::Result<(PathBuf, Knowledge)> {
    let root = root();
    let mut read = Vec::new();
    for given in runs {
        if !given.exists() {
            return Err(BadInput(format!("--from {}: no such file or folder", given.display())).into());
        }
        for path in find_run_files(given).with_context(|| format!("looking for runs in {}", given.display()))? {
            let run = RunFile::read(&path).map_err(|e| BadInput(format!("--from: {e}")))?;
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            let shown = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            read.push((shown, run));
        }
    }
    let named: Vec<(String, &RunFile)> = read.iter().map(|(n, r)| (n.clone(), r)).collect();
    let mut k = Knowledge::from_runs(&named, &made_by()).map_err(|e| BadInput(format!("--from: {e}")))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(format!("{}.json.gz", k.name()));
    // The calls a file made before holds are kept: they come from no run (`--calls` adds them).
    // One that does not load (another schema, whose message says to remake it so) keeps none.
    k.calls = std::fs::read(&path)
        .ok()
        .and_then(|bytes| Knowledge::from_bytes(&bytes, &path.display().to_string()).ok())
        .and_then(|old| old.calls);
    std::fs::write(&path, k.to_gz()).with_context(|| format!("writing {}", path.display()))?;
    Ok((path, k))
}

/// Puts the lines of `calls` (a `call-catalogue --out` file) into the knowledge file `into`,
/// replacing any it held; returns it and how many lines it keeps (those of functions planned).
pub(crate) fn add_calls(calls: &Path, into: &Path) -> anyhow::Result<(PathBuf, usize)> {
    let bytes = std::fs::read(into).map_err(|e| {
        BadInput(format!(
            "--to: {}: {e}: name a knowledge file of knowledge/ (`npp-13.0.1-sm90`)",
            into.display()
        ))
    })?;
    let mut k = Knowledge::from_bytes(&bytes, &into.display().to_string())?;
    let text = std::fs::read(calls).map_err(|e| BadInput(format!("--calls {}: {e}", calls.display())))?;
    let lines = nppbench_analysis::calls::read_lines(&text)
        .map_err(|e| BadInput(format!("--calls {}: {e}", calls.display())))?;
    let calls = std::fs::canonicalize(calls).unwrap_or_else(|_| calls.to_owned());
    let root = root();
    let shown = calls.strip_prefix(&root).unwrap_or(&calls).display().to_string();
    let known = KnownCalls::of(&shown, lines);
    let n = known.lines.len();
    k.calls = Some(known);
    std::fs::write(into, k.to_gz()).with_context(|| format!("writing {}", into.display()))?;
    Ok((into.to_owned(), n))
}

/// The lines of the `call-catalogue --design` files `designs`, compacted (what predicting needs,
/// `ShapeLine::compact`), in the files' order, into `into`: a gzip member to every 16 functions (`design::members`), with no time
/// in its header (the same lines, the same bytes), and beside it the index of the members
/// (`NAME.index.tsv`, `design::members`); returns it, and how many functions and shapes. A
/// function is whole or not over all the files together: a resumed run's lines, kept in a file of
/// their own, finish the designs the file before left unfinished.
pub(crate) fn write_designs(designs: &[PathBuf], into: &Path) -> anyhow::Result<(PathBuf, usize, usize)> {
    use nppbench_analysis::calls::design::ShapeLine;
    let mut all: Vec<ShapeLine> = Vec::new();
    for file in designs {
        let bytes = std::fs::read(file).map_err(|e| BadInput(format!("--designs {}: {e}", file.display())))?;
        let lines: Vec<ShapeLine> = nppbench_analysis::calls::read_lines_of(&bytes)
            .map_err(|e| BadInput(format!("--designs {}: {e}", file.display())))?;
        if lines.iter().all(|l| l.shape.is_none()) {
            return Err(BadInput(format!(
                "--designs {}: no line has a shape: give a file `nppbench call-catalogue --design` wrote",
                file.display()
            ))
            .into());
        }
        all.extend(lines);
    }
    // A function a run stopped in (a time limit) is left to a later run whole: its lines
    // lack shapes, the unaligned ones last of all.
    let unfinished = nppbench_analysis::calls::design::unfinished(&all);
    if !unfinished.is_empty() {
        println!(
            "{} functions left out, their designs not finished in {} file(s)",
            unfinished.len(),
            designs.len()
        );
    }
    let kept: Vec<ShapeLine> = all
        .iter()
        .filter(|l| !unfinished.contains(&l.symbol))
        .filter_map(ShapeLine::compact)
        .collect();
    // A function's lines together, in first-seen order, so that each is one member.
    let mut order: Vec<&str> = Vec::new();
    for l in &kept {
        if !order.contains(&l.symbol.as_str()) {
            order.push(&l.symbol);
        }
    }
    let grouped: Vec<ShapeLine> = order
        .iter()
        .flat_map(|s| kept.iter().filter(move |l| l.symbol == *s).cloned())
        .collect();
    // Lines with a shape: a function's throughput point is a line without one.
    let (functions, shapes) = (order.len(), grouped.iter().filter(|l| l.shape.is_some()).count());
    let (bytes, index) = nppbench_analysis::calls::design::members(&grouped);
    if let Some(dir) = into.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(into, bytes).with_context(|| format!("writing {}", into.display()))?;
    let index_path = index_of(into);
    std::fs::write(&index_path, index).with_context(|| format!("writing {}", index_path.display()))?;
    Ok((into.to_owned(), functions, shapes))
}

/// The index beside a designs file: `NAME.index.tsv` of `NAME.jsonl.gz`.
fn index_of(designs: &Path) -> PathBuf {
    let name = designs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    designs.with_file_name(format!("{}.index.tsv", name.trim_end_matches(".jsonl.gz")))
}

/// Every knowledge file in `dir`, in name order, read.
fn committed(dir: &Path) -> anyhow::Result<Vec<(PathBuf, Knowledge)>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            let k = Knowledge::from_bytes(&bytes, &p.display().to_string())?;
            Ok((p, k))
        })
        .collect()
}

/// Fails, naming each file, where a committed file's rules or scores are not what its own cases
/// give today.
pub(crate) fn check(dir: &Path) -> anyhow::Result<()> {
    let files = committed(dir)?;
    if files.is_empty() {
        bail!(
            "no knowledge files in {}: make them with `cargo xtask knowledge --from RUN…`",
            dir.display()
        );
    }
    let drifted: Vec<String> = files
        .iter()
        .filter(|(_, k)| k.drifted())
        .map(|(p, _)| p.display().to_string())
        .collect();
    if !drifted.is_empty() {
        bail!(
            "{}: fitted again on their own cases, the rules or their scores differ: run `cargo xtask knowledge --refit` and commit them",
            drifted.join(", ")
        );
    }
    Ok(())
}

/// Writes every committed file back with its rules and scores fitted again on its own cases.
pub(crate) fn refit(dir: &Path) -> anyhow::Result<()> {
    for (path, k) in committed(dir)? {
        let again = k.refitted();
        std::fs::write(&path, again.to_gz()).with_context(|| format!("writing {}", path.display()))?;
        println!(
            "{}: {} functions' rules{}",
            path.display(),
            again.rules.len(),
            if k.drifted() { ", fitted again" } else { ", unchanged" }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed knowledge files are what their own cases give with today's code: a change
    /// to how rules are fitted fails here until the files are fitted again.
    #[test]
    fn the_committed_knowledge_fits_its_own_cases_again() {
        check(&root().join("knowledge")).unwrap();
    }

    /// Made-up design lines (no GPU made them): their compact form, a line a shape, the lines
    /// without a shape dropped; the same lines give the same bytes; a file of other lines is
    /// refused.
    #[test]
    fn design_lines_are_compacted_into_a_designs_file() {
        use nppbench_analysis::calls::design::{self, Pixels, ShapeLine};
        let px = Pixels {
            src_bytes_per_pixel: 1,
            src_sample_bytes: 1,
            dst_bytes_per_pixel: 1,
            dst_sample_bytes: 1,
        };
        let shapes = design::design("nppiNot_8u_C1R_Ctx", &px);
        let mut lines: Vec<ShapeLine> = shapes
            .iter()
            .map(|s| ShapeLine {
                symbol: "nppiNot_8u_C1R_Ctx".into(),
                gpu_uuid: Some("GPU-0".into()),
                shape: Some(*s),
                pixels: Some(px),
                status: Some(0),
                ms: Some(2.0),
                ..ShapeLine::default()
            })
            .collect();
        lines.push(ShapeLine {
            symbol: "nppiAbs_8s_C1R_Ctx".into(),
            ended_process: Some("signal: 8 (SIGFPE)".into()),
            ..ShapeLine::default()
        });
        let dir = tempfile::tempdir().unwrap();
        // Lines into a file of `dir`, one JSON object a line, as `call-catalogue` writes them.
        let write = |name: &str, part: &[ShapeLine]| {
            let path = dir.path().join(name);
            let text: String = part.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
            std::fs::write(&path, text).unwrap();
            path
        };
        let input = write("design.jsonl", &lines);
        let out = dir.path().join("designs/npp-9.9.9-sm90.jsonl.gz");
        let (_, functions, n) = write_designs(std::slice::from_ref(&input), &out).unwrap();
        assert_eq!((functions, n), (1, shapes.len()));
        let bytes = std::fs::read(&out).unwrap();
        let back: Vec<ShapeLine> = nppbench_analysis::calls::read_lines_of(&bytes).unwrap();
        assert_eq!(
            back,
            lines[..shapes.len()]
                .iter()
                .filter_map(ShapeLine::compact)
                .collect::<Vec<_>>()
        );
        assert!(back.iter().all(|l| l.gpu_uuid.is_none() && l.ms.is_none()));
        let index = std::fs::read_to_string(dir.path().join("designs/npp-9.9.9-sm90.index.tsv")).unwrap();
        assert_eq!(
            nppbench_analysis::calls::design::lines_indexed(&bytes, &index, "nppiNot_8u_C1R_Ctx").unwrap(),
            back
        );
        write_designs(std::slice::from_ref(&input), &out).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), bytes, "the same lines, the same bytes");
        // A run stopped after the first shapes, and resumed into a file of its own: each file
        // alone leaves the design unfinished, the two together give it whole.
        let (first, rest) = lines[..shapes.len()].split_at(5);
        let (first, rest) = (write("stopped.jsonl", first), write("resumed.jsonl", rest));
        let alone = dir.path().join("designs/alone.jsonl.gz");
        assert_eq!(write_designs(std::slice::from_ref(&first), &alone).unwrap().1, 0);
        write_designs(&[first, rest], &out).unwrap();
        assert_eq!(
            std::fs::read(&out).unwrap(),
            bytes,
            "the two files give the same design"
        );
        std::fs::write(&input, "{\"symbol\":\"nppiNot_8u_C1R_Ctx\",\"status\":0}\n").unwrap();
        let err = write_designs(std::slice::from_ref(&input), &out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no line has a shape"), "{err}");
    }

    /// A file made from a run, with one function's rules dropped, fails the check, naming the
    /// file and what to run; `--refit` mends it.
    #[test]
    fn a_file_whose_rules_drifted_fails_the_check_until_it_is_refitted() {
        let dir = tempfile::tempdir().unwrap();
        let run = root().join("reports/wrong-pixels/h200-GPU-fd1537c9/judge-wrong-npp-13.0.1.json.gz");
        let (path, k) = make(&[run], dir.path()).unwrap();
        assert_eq!(path, dir.path().join("npp-13.0.1-sm90.json.gz"));
        assert_eq!(
            k.sources[0].name,
            "reports/wrong-pixels/h200-GPU-fd1537c9/judge-wrong-npp-13.0.1.json.gz"
        );
        check(dir.path()).unwrap();
        let mut cut = k.clone();
        cut.rules.remove(0);
        std::fs::write(&path, cut.to_gz()).unwrap();
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("cargo xtask knowledge --refit"),
            "{err}"
        );
        refit(dir.path()).unwrap();
        check(dir.path()).unwrap();
    }

    /// Lines of a call-catalogue run (made up for the test) go into a file made from a run, the
    /// functions not planned left out; the file still checks, and making it again from its runs
    /// keeps them.
    #[test]
    fn calls_go_into_a_knowledge_file_and_stay_when_it_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let run = root().join("reports/wrong-pixels/h200-GPU-fd1537c9/judge-wrong-npp-13.0.1.json.gz");
        let (path, _) = make(std::slice::from_ref(&run), dir.path()).unwrap();
        let calls = dir.path().join("calls.jsonl");
        std::fs::write(
            &calls,
            "{\"symbol\":\"nppiA_8u_C1R_Ctx\",\"status\":0,\"unaligned_dst_error\":\"sticky\"}\n\
             {\"symbol\":\"nppiB_8u_C1R_Ctx\",\"not_planned\":\"no image\"}\n",
        )
        .unwrap();
        assert_eq!(add_calls(&calls, &path).unwrap().1, 1);
        let read = || Knowledge::from_bytes(&std::fs::read(&path).unwrap(), "test").unwrap();
        let held = read().calls.unwrap();
        assert!(held.line("nppiA_8u_C1R_Ctx").is_some() && held.line("nppiB_8u_C1R_Ctx").is_none());
        check(dir.path()).unwrap();
        make(&[run], dir.path()).unwrap();
        assert_eq!(read().calls.unwrap(), held);
        let err = add_calls(&calls, &dir.path().join("npp-9.9.9-sm90.json.gz")).unwrap_err();
        assert!(err.is::<BadInput>() && err.to_string().contains("--to"), "{err}");
        std::fs::write(&calls, "not json\n").unwrap();
        let err = add_calls(&calls, &path).unwrap_err();
        assert!(err.to_string().contains("line 1: not a call-catalogue line"), "{err}");
    }

    #[test]
    fn runs_that_do_not_exist_or_an_empty_folder_are_refused_saying_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = make(&[dir.path().join("nothing")], dir.path()).unwrap_err();
        assert!(
            err.is::<BadInput>() && err.to_string().contains("no such file"),
            "{err}"
        );
        let err = check(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cargo xtask knowledge --from"), "{err}");
    }
}
