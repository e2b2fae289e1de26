//! The history of the committed real runs (H100 and H200, NPP 12.2.3, 13.0.1 and 13.2.0), built
//! as `nppbench history add reports` builds it, and checked for what a reader would check: the
//! runs (copies counted once), the NPP versions, the series of the known 31×31 convert
//! scenarios, and a page that renders with its sections and needs nothing from outside itself;
//! and, on committed pairs of runs, the history's verdicts between two runs equal to compare's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nppbench_analysis::LeakClass;
use nppbench_analysis::compare::{Change, PassTest, Thresholds, compare};
use nppbench_history::changes::{EnvField, LatestChanges, Settings, analyse};
use nppbench_history::ingest::add_paths;
use nppbench_history::rows::Kind;
use nppbench_history::{Added, Db, History};
use nppbench_model::RunFile;

fn reports() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports")
}

/// The run files a folder search of reports/ finds (as `nppbench history add reports` does), of
/// those git tracks: the committed evidence, never what `cargo xtask report` wrote beside it
/// (reports/latest/, ignored), so that the README's two commands pass in either order.
fn committed_runs() -> Vec<PathBuf> {
    let tracked = tracked_under_reports();
    nppbench_model::find_run_files(&reports())
        .unwrap()
        .into_iter()
        .filter(|f| tracked.contains(f))
        .collect()
}

/// Every file under reports/ that git tracks, by `git ls-files` (a test run from a checkout).
fn tracked_under_reports() -> Vec<PathBuf> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z", "--", "."])
        .current_dir(reports())
        .output()
        .expect("git runs: these tests read the committed runs of a checkout");
    assert!(
        out.status.success(),
        "git ls-files: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| reports().join(String::from_utf8_lossy(p).as_ref()))
        .collect()
}

/// Every run.json and run-*.json committed under reports/ (the calibration runs with test hooks
/// are named otherwise, so a folder search leaves them out).
fn history() -> (tempfile::TempDir, Db, Vec<nppbench_history::ingest::AddReport>) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(&dir.path().join("history.db")).unwrap();
    let added = add_paths(&mut db, &committed_runs(), false).unwrap();
    (dir, db, added)
}

#[test]
fn committed_runs_make_one_history_with_copies_counted_once() {
    let (dir, mut db, added) = history();
    // Counted from what the folder search finds, never written here: a new committed run must
    // not break this test (issue #46).
    assert_eq!(
        added.len(),
        committed_runs().len(),
        "every run file under reports/ is added"
    );
    let new = added.iter().filter(|a| matches!(a.added, Added::New { .. })).count();
    assert!(new > 30, "{new} new of {}", added.len());
    assert!(added.iter().all(|a| !a.path.to_string_lossy().contains("delay-")));
    let counts = db.counts().unwrap();
    assert_eq!(counts.0, new as u64);
    // A copy of a run under another name is the run already present, counted once.
    let copy = dir.path().join("run-2-npp-13.0.1.json");
    std::fs::copy(reports().join("h100-npp-13.0.1/run.json.gz"), &copy).unwrap();
    let again = add_paths(&mut db, &[copy], false).unwrap();
    assert_eq!(again[0].added, Added::AlreadyPresent);
    assert_eq!(db.counts().unwrap(), counts);
    // Adding them all again changes nothing.
    add_paths(&mut db, &committed_runs(), false).unwrap();
    assert_eq!(db.counts().unwrap(), counts);
    let mut csv = Vec::new();
    assert_eq!(nppbench_history::export::write_csv(&db, &mut csv).unwrap(), counts.1);
}

#[test]
fn the_history_holds_both_gpus_and_npp_versions_and_the_31x31_series() {
    let (_dir, db, _) = history();
    let h = History::load(&db).unwrap();
    let mut npp: Vec<&str> = h.runs.iter().map(|r| r.run.npp_version.as_str()).collect();
    npp.sort();
    npp.dedup();
    assert_eq!(npp, ["12.2.3", "13.0.1", "13.2.0"]);
    let models: std::collections::BTreeSet<&str> = h.runs.iter().map(|r| r.run.gpu_model.as_str()).collect();
    assert_eq!(models.len(), 2, "{models:?}");
    // Runs in order of start time.
    assert!(h.runs.windows(2).all(|w| w[0].run.started_at <= w[1].run.started_at));

    let series = |kind: Kind, id: &str, model: &str| {
        h.series
            .iter()
            .find(|s| s.key.kind == kind && s.key.scenario_id == id && s.key.gpu_model.contains(model))
            .unwrap_or_else(|| panic!("no series {id} on {model}"))
    };
    // Throughput of 31×31 (stride 32) on a blocking stream: every full H100 run, NPP by NPP.
    let tp = series(
        Kind::Throughput,
        "tp/Convert_8u32f_C1R/31x31-s32-d128/blocking/from_stream",
        "H100",
    );
    assert!(tp.points.len() >= 3, "{} points", tp.points.len());
    let tp_npp: Vec<&str> = tp.points.iter().map(|p| h.run_of(p).run.npp_version.as_str()).collect();
    assert!(tp_npp.contains(&"12.2.3") && tp_npp.contains(&"13.2.0"), "{tp_npp:?}");
    for p in &tp.points {
        let ns = p.kernel_ns.unwrap();
        // A 31×31 convert is launch-bound: a few microseconds per call, not more.
        assert!((500.0..50_000.0).contains(&ns), "{ns} ns");
    }
    // The public report's case: a new thread per call on a blocking stream leaks, on both GPUs.
    for model in ["H100", "H200"] {
        let mem = series(
            Kind::Memory,
            "mem/Convert_8u32f_C1R/31x31-s32-d128/blocking/from_stream/thread_per_call",
            model,
        );
        assert!(!mem.points.is_empty());
        assert!(
            mem.points.iter().all(|p| p.class == Some(LeakClass::Leak)),
            "{model}: {:?}",
            mem.points.iter().map(|p| p.class).collect::<Vec<_>>()
        );
    }
    // The H100 series carries its NPP changes as environment changes.
    let f = analyse(&h, &Settings::default());
    let i = h.series.iter().position(|s| std::ptr::eq(s, tp)).unwrap();
    let npp_changes: Vec<_> = f.series[i]
        .env
        .iter()
        .flat_map(|(_, c)| c)
        .filter(|c| c.field == EnvField::Npp)
        .collect();
    assert!(!npp_changes.is_empty(), "{:?}", f.series[i].env);
}

#[test]
fn the_page_renders_with_its_sections_and_needs_nothing_from_outside() {
    let (_dir, db, _) = history();
    let h = History::load(&db).unwrap();
    let f = analyse(&h, &Settings::default());
    let r = nppbench_report::history_view::render(&h, &f, &[]).unwrap();
    let html = &r.index_html;
    for section in [
        "New in the latest runs",
        "Fleet",
        "Leak classes that changed",
        "Every change point",
        "Scenarios over time",
        "Runners",
        "Runs",
        "Convert_8u32f_C1R 31x31-s32-d128",
    ] {
        assert!(html.contains(section), "no {section}");
    }
    assert!(html.contains(&format!("{} runs from", h.runs.len())), "title");
    assert!(html.contains("NPP 12.2.3 → 13.0.1") || html.contains("NPP 13.0.1 → 12.2.3"));
    // Runs of one pass are not judged against each other, as compare says of them.
    assert!(html.contains("not judged (fewer than 3 passes a side)"));
    // Verdict first: the headline before any chart or table.
    let headline = html.find("class=\"headline\"").unwrap();
    assert!(headline < html.find("<svg").unwrap() && headline < html.find("<table").unwrap());
    assert!(html.matches("<svg").count() >= 10);
    for needle in [
        "<script",
        "<link",
        "@import",
        "url(",
        "http://",
        "https://",
        "src=\"//",
        "href=\"//",
    ] {
        assert!(!html.contains(needle), "the page contains {needle}");
    }
    // No chart text below 12 px.
    for size in html.split("font-size=\"").skip(1) {
        let px: f64 = size.split('"').next().unwrap().parse().unwrap();
        assert!(px >= 12.0, "{px} px");
    }
    let md = &r.summary_md;
    assert!(
        md.contains("## New since the previous run") && md.contains("## Fleet"),
        "{md}"
    );
    assert!(r.tripped.is_empty());
    // The headline's parts add up to its total (it once left out the leaks gone).
    let (head, rest) = html
        .split_once(" new in the latest runs: ")
        .expect("a headline that counts the latest changes");
    let total: usize = head
        .rsplit('>')
        .next()
        .and_then(|words| words.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("the headline's total");
    let line = rest.split(['<', ';']).next().unwrap_or_default();
    let parts: usize = line
        .split(", ")
        .map(|part| part.split(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(parts, total, "{line}");
}

// ---- the one comparison rule: the history's verdicts are compare's ----

/// compare's verdict (and kernel test) of each throughput scenario of `base` against `cand`.
fn compare_verdicts(base: &Path, cand: &Path) -> BTreeMap<String, (Change, PassTest)> {
    let (b, c) = (RunFile::read(base).unwrap(), RunFile::read(cand).unwrap());
    compare(&b, &c, Thresholds::default())
        .throughput
        .iter()
        .map(|t| (t.id.clone(), (t.verdict, t.kernel)))
        .collect()
}

/// The history's verdict of each series' latest run against the one before, in a fresh history
/// of `runs`; with what it counts as new.
fn history_verdicts(runs: &[PathBuf]) -> (BTreeMap<String, (Change, PassTest)>, LatestChanges) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(&dir.path().join("history.db")).unwrap();
    add_paths(&mut db, runs, true).unwrap();
    let h = History::load(&db).unwrap();
    let f = analyse(&h, &Settings::default());
    let verdicts = f
        .new_steps()
        .map(|(series, step)| {
            let j = step.judged.clone().expect("both runs were added with their passes");
            (h.series[series].key.scenario_id.clone(), (step.verdict(), j.kernel))
        })
        .collect();
    (verdicts, f.latest_changes())
}

fn calibration(name: &str) -> PathBuf {
    reports().join("calibration/h100-a/quick").join(name)
}

fn slower(verdicts: &BTreeMap<String, (Change, PassTest)>) -> Vec<&str> {
    verdicts
        .iter()
        .filter(|(_, (v, _))| *v == Change::Slower)
        .map(|(id, _)| id.as_str())
        .collect()
}

#[test]
fn history_and_compare_agree_on_two_runs_of_the_same_thing() {
    let (base, cand) = (calibration("quick-1.json.gz"), calibration("quick-2.json.gz"));
    let compared = compare_verdicts(&base, &cand);
    let (history, latest) = history_verdicts(&[base, cand]);
    assert!(compared.len() >= 20, "{} scenarios", compared.len());
    assert_eq!(history, compared);
    assert_eq!(latest.slower, 0, "same against same: nothing slower");
    assert!(compared.values().all(|(v, _)| *v != Change::NotEnoughPasses));
}

#[test]
fn history_and_compare_call_the_same_scenarios_slower_under_the_delay_kernel() {
    let (base, cand) = (calibration("quick-1.json.gz"), calibration("delay-quick-1.json.gz"));
    let compared = compare_verdicts(&base, &cand);
    let (history, latest) = history_verdicts(&[base, cand]);
    assert_eq!(history, compared);
    let slow = slower(&compared);
    assert!(!slow.is_empty(), "the delay kernel makes some scenario slower");
    assert_eq!(slower(&history), slow);
    assert_eq!(latest.slower, slow.len());
}

/// The case: the upgrade page said "not judged" of one-pass runs where the history said
/// slower and faster.
#[test]
fn history_and_compare_judge_nothing_between_one_pass_runs() {
    let (base, cand) = (
        reports().join("h100-npp-12.2.3.2/run.json.gz"),
        reports().join("h100-npp-13.2.0.93/run.json.gz"),
    );
    let compared = compare_verdicts(&base, &cand);
    let (history, latest) = history_verdicts(&[base, cand]);
    assert!(!compared.is_empty());
    assert!(compared.values().all(|(v, _)| *v == Change::NotEnoughPasses));
    assert_eq!(history, compared);
    assert_eq!((latest.slower, latest.faster), (0, 0));
    assert_eq!(latest.unjudged, compared.len());
}

/// #49: a base made by an older nppbench (today's quick run 3 of GPU-159df63b with each layout's
/// busy time removed, as a build before 2026-11-27 wrote it; written to a temporary file, never
/// committed) against today's run 5, which drew the 1918×1080 convert's layouts 72 points of its
/// calls apart: the history keeps each pass's share of calls at once, so it leaves that scenario
/// unjudged as compare does instead of calling it 8.6% slower.
#[test]
fn history_and_compare_agree_on_an_older_base() {
    let dir = tempfile::tempdir().unwrap();
    let today = |n: usize| reports().join(format!("calibration/GPU-159df63b/quick/quick-{n}.json.gz"));
    let mut older = RunFile::read(&today(3)).unwrap();
    for t in &mut older.throughput {
        if let Some(l) = t
            .result
            .as_mut()
            .and_then(|r| r.per_call.as_mut())
            .and_then(|c| c.layout.as_mut())
        {
            l.busy_at_once_median_ns = None;
            l.busy_in_turn_median_ns = None;
        }
    }
    let base = dir.path().join("older-quick-3.json");
    std::fs::write(&base, serde_json::to_string(&older).unwrap()).unwrap();
    let cand = today(5);
    let compared = compare_verdicts(&base, &cand);
    let (history, latest) = history_verdicts(&[base, cand]);
    assert_eq!(history, compared);
    assert_eq!((latest.slower, latest.faster), (0, 0));
    assert!(latest.unsettled >= 1);
}
