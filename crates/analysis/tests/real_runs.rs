//! The analysis of the committed run.json files (real runs on an H100 and an H200): the known
//! cases classed as measured, and runs made with different concurrency judged alike.

use std::path::{Path, PathBuf};

use nppbench_analysis::{LeakClass, RunAnalysis};
use nppbench_model::{RunFile, StreamKind, Threading};

fn committed_runs() -> Vec<PathBuf> {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let runs = RunFile::find_in(&reports);
    assert!(!runs.is_empty(), "no committed run.json under {}", reports.display());
    runs
}

fn load(path: &Path) -> RunFile {
    RunFile::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fix "declare cudaStreamNonBlocking in nStreamFlags" of a run's fix list, which the run
/// must have measured.
fn declared_non_blocking(fixes: &[nppbench_analysis::verdict::Fix]) -> &nppbench_analysis::verdict::Fix {
    fixes
        .iter()
        .find(|f| f.title.starts_with("Declare cudaStreamNonBlocking"))
        .expect("the declared non-blocking fix is measured")
}

#[test]
fn known_cases_are_classed_as_measured() {
    // The public report's case: 31×31, stride 32, a new thread per call.
    for path in committed_runs() {
        let run = load(&path);
        let a = RunAnalysis::new(&run);
        let find = |stream: StreamKind, threading: Threading| {
            a.memory.iter().find(|m| {
                let s = &m.record.scenario;
                (s.geometry.width, s.geometry.height, s.geometry.src_stride) == (31, 31, 32)
                    && s.geometry.padded_from.is_none()
                    && s.stream == stream
                    && s.threading == threading
            })
        };
        let Some(leak) = find(StreamKind::Blocking, Threading::ThreadPerCall) else {
            continue;
        };
        assert_eq!(leak.class, Some(LeakClass::Leak), "{}", path.display());
        let slope = leak.per_thread.unwrap();
        assert!(slope.slope > 0.5 && slope.slope_ci.0 > 0.0, "{slope:?}");
        assert!(leak.hidden_per_thread.unwrap().slope >= 1.0);
        let verdict = nppbench_analysis::verdict::verdict(&a);
        assert!(
            verdict
                .stream_hoarders
                .iter()
                .any(|h| h.starts_with("31x31 s32/128, thread_per_call: ") && h.contains("blocking")),
            "{:?}",
            verdict.stream_hoarders
        );
        assert!(
            verdict.stream_hoarders.iter().all(|h| !h.contains("non_blocking")),
            "{:?}",
            verdict.stream_hoarders
        );
        let fixed = find(StreamKind::NonBlocking, Threading::ThreadPerCall).unwrap();
        assert_eq!(fixed.class, Some(LeakClass::Flat), "{}", path.display());
        if let Some(pool) = find(StreamKind::Blocking, Threading::Pool(4)) {
            assert_ne!(pool.class, Some(LeakClass::Leak));
        }
    }
}

/// Concurrency changes nothing (issue #10): the full preset run with `--jobs 1` and with the
/// default (8 at once) on the same H200 gives the same leak classes, and leak slopes within 2%.
#[test]
fn memory_scenarios_run_at_once_judge_as_one_at_a_time() {
    let read = |name: &str| {
        load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../reports/concurrency")
                .join(name),
        )
    };
    let (one, many) = (read("full-jobs-1.json.gz"), read("full-jobs-default.json.gz"));
    assert_eq!(one.jobs.as_ref().unwrap().jobs, 1);
    assert!(many.jobs.as_ref().unwrap().jobs > 1);
    let worst = judge_alike(&one, &many);
    eprintln!("leak slopes differ by at most {:.2}%", worst * 100.0);
}

/// Two runs' memory scenarios judge alike: the same classes and NPP streams left undestroyed,
/// leak slopes within 2%. Returns the largest slope difference.
fn judge_alike(a: &RunFile, b: &RunFile) -> f64 {
    let (a, b) = (RunAnalysis::new(a), RunAnalysis::new(b));
    assert_eq!(a.memory.len(), b.memory.len());
    let mut worst: f64 = 0.0;
    for m in &a.memory {
        let n = b
            .memory
            .iter()
            .find(|x| x.record.scenario.id == m.record.scenario.id)
            .unwrap();
        assert_eq!(m.class, n.class, "{}", m.record.scenario.id);
        assert_eq!(
            m.streams_never_destroyed, n.streams_never_destroyed,
            "{}",
            m.record.scenario.id
        );
        if m.class == Some(LeakClass::Leak) {
            let (x, y) = (m.per_thread.unwrap().slope, n.per_thread.unwrap().slope);
            worst = worst.max((y / x - 1.0).abs());
        }
    }
    assert!(worst <= 0.02, "slopes differ by up to {:.1}%", worst * 100.0);
    worst
}

/// One connection per memory probe (the default, `--probe-connections 1`) judges as the driver's
/// default does: the full preset with each, one after the other on the same H200; and the
/// timing runs made with one connection judge as the `--jobs 1` run made with the default.
#[test]
fn one_connection_per_probe_judges_as_the_drivers_default() {
    let read = |name: &str| load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports").join(name));
    let (one, inherit) = (
        read("concurrency/full-connections-1.json.gz"),
        read("concurrency/full-connections-inherit.json.gz"),
    );
    let connections = |r: &RunFile| r.jobs.as_ref().unwrap().connections.clone().unwrap();
    assert_eq!(connections(&one).value, Some(1));
    assert!(connections(&one).set_by_nppbench);
    assert_eq!(connections(&inherit).value, None);
    judge_alike(&inherit, &one);
    let jobs_1 = read("concurrency/full-jobs-1.json.gz");
    for i in 1..=3 {
        let timed = read(&format!("performance/full-npp-13.0.1-{i}.json.gz"));
        assert_eq!(connections(&timed).value, Some(1));
        judge_alike(&jobs_1, &timed);
    }
}

/// AddC_8u_C3RSfs leaks in some processes and not in others, the same scenario, with one
/// connection and with the driver's default alike, and at the same buffer alignment: its class
/// is a property of the process, not of the settings (docs/performance.md).
#[test]
fn addc_c3s_leak_comes_and_goes_between_processes_under_either_setting() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/concurrency/addc-c3");
    for setting in ["1", "inherit"] {
        let files: Vec<RunFile> = (1..=3)
            .map(|i| load(&dir.join(format!("connections-{setting}-{i}.json.gz"))))
            .collect();
        let analyses: Vec<RunAnalysis> = files.iter().map(RunAnalysis::new).collect();
        let varying = analyses[0]
            .memory
            .iter()
            .filter(|m| {
                analyses[1..].iter().any(|a| {
                    let n = a
                        .memory
                        .iter()
                        .find(|x| x.record.scenario.id == m.record.scenario.id)
                        .unwrap();
                    n.class != m.class
                })
            })
            .count();
        assert!(
            varying > 0,
            "connections {setting}: no scenario changed class between processes"
        );
        // The buffers sat at the same offsets within their 2 MiB pages in every process.
        for m in &analyses[0].memory {
            let Some(r) = m.record.result.as_ref() else { continue };
            let low =
                |r: &nppbench_model::MemoryResult| r.buffer_addresses.iter().map(|a| a % (2 << 20)).collect::<Vec<_>>();
            for a in &analyses[1..] {
                let n = a
                    .memory
                    .iter()
                    .find(|x| x.record.scenario.id == m.record.scenario.id)
                    .unwrap();
                if let Some(nr) = n.record.result.as_ref() {
                    assert_eq!(low(r), low(nr), "{}", m.record.scenario.id);
                }
            }
        }
    }
}

/// The H100 atlas of NPP 13.0.1, measured twice (two processes for the scenarios both runs
/// drew): pooled, AddC_8u_C3RSfs's scenarios that changed class are set apart and its rule is not
/// earned, Convert_8u32f_C1R's is, and pools of 16 threads, which the early stop cut short of
/// telling bounded growth from a leak, are left out unless they stayed quiet (flat).
#[test]
fn two_atlas_runs_pooled_find_the_function_that_flips_between_processes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-atlas-npp-13.0.1");
    let runs: Vec<RunFile> = ["run-1-npp-13.0.1.json.gz", "run-2-npp-13.0.1.json.gz"]
        .iter()
        .map(|f| load(&dir.join(f)))
        .collect();
    let analyses: Vec<RunAnalysis<'_>> = runs.iter().map(RunAnalysis::new).collect();
    let evidence = nppbench_analysis::evidence::pool(&analyses.iter().collect::<Vec<_>>());
    assert!(evidence.inconclusive > 100, "{}", evidence.inconclusive);
    let pools = evidence.cases.iter().filter(|c| c.threading == Threading::Pool(16));
    assert!(pools.clone().count() > 0 && pools.clone().all(|c| c.class == LeakClass::Flat));
    let rules = evidence.rules();
    let of = |name: &str| rules.iter().find(|f| f.primitive.name() == name).unwrap();
    let addc = of("AddC_8u_C3RSfs");
    assert!(!addc.flips.is_empty());
    assert!(addc.flips.iter().all(|f| f.classes.len() > 1 && f.measurements > 1));
    assert!(!addc.earned());
    let convert = of("Convert_8u32f_C1R");
    assert!(convert.earned(), "{:?}", convert.leak);
    assert!(convert.leak.held_out.total >= 12);
    // No flip is also a case: a flipped scenario is kept out of the fit.
    assert!(
        evidence
            .flips
            .iter()
            .all(|f| evidence.cases.iter().all(|c| c.id != f.id))
    );
}

/// What `predict` assumes a context declares where nothing was measured is what every probe of
/// the H100 atlas recorded, for every stream kind and context filling.
#[test]
fn the_declared_flags_assumed_for_a_query_are_the_ones_measured() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-atlas-npp-13.0.1/run-1-npp-13.0.1.json.gz");
    let run = load(&path);
    let mut seen = std::collections::BTreeSet::new();
    for m in &run.memory {
        let Some(recorded) = m.result.as_ref().and_then(|r| r.context) else {
            continue;
        };
        let s = &m.scenario;
        let assumed = nppbench_analysis::rules::declares_non_blocking(s.stream, s.context);
        assert_eq!(assumed, recorded.declared_flags & 1 == 1, "{}", s.id);
        seen.insert((s.stream, s.context));
    }
    assert_eq!(seen.len(), 4 * 5, "every stream kind with every context filling");
}

#[test]
fn a_pool_whose_threads_have_not_each_called_twice_is_undecided_never_a_leak() {
    // The committed atlas runs gave pools of 16 the matrix's 24 calls: too few for 16 threads
    // to call twice. Some of them were still growing at the end, and were classed leak.
    let mut undecided = 0;
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    for name in [
        "h100-atlas-npp-13.0.1/run-2-npp-13.0.1.json.gz",
        "h100-atlas-npp-12.2.3/run-2-npp-12.2.3.json.gz",
    ] {
        let path = reports.join(name);
        let run = load(&path);
        let a = RunAnalysis::new(&run);
        for m in &a.memory {
            let Some(n) = m.record.scenario.threading.thread_bound().filter(|n| *n > 1) else {
                continue;
            };
            let stopped = matches!(m.record.outcome, nppbench_model::Outcome::StoppedAtBudget { .. });
            if m.calls <= 2 * n && !stopped && m.class.is_some() {
                // Undecided, or flat where it stayed quiet once each thread had called.
                let streams = m.record.result.as_ref().and_then(|r| r.streams.as_ref());
                let quiet = m.calls > n
                    && nppbench_stats::settle::quiet_series(&m.growth_mib, streams.map(|s| s.created.as_slice()));
                let expected = if quiet { LeakClass::Flat } else { LeakClass::Undecided };
                assert_eq!(m.class, Some(expected), "{}: {}", path.display(), m.record.scenario.id);
                undecided += usize::from(!quiet);
            }
        }
    }
    assert!(undecided > 0, "no committed pool stopped early: the test shows nothing");
    // Today's matrices give a pool enough calls, and the settle rule waits for them.
    for n in [2, 4, 16, 64] {
        let t = Threading::Pool(n);
        assert_eq!(t.calls_to_decide(), nppbench_stats::settle::minimum_calls(0, Some(n)));
        let s = nppbench_model::MemoryScenario::new(
            nppbench_model::Primitive::all().next().unwrap(),
            nppbench_model::Geometry {
                width: 31,
                height: 31,
                src_stride: 32,
                dst_stride: 32,
                padded_from: None,
            },
            StreamKind::Blocking,
            nppbench_model::ContextFill::FromStream,
            t,
            24,
        );
        assert!(s.calls > 2 * n, "pool:{n} gets {} calls", s.calls);
    }
}

#[test]
fn fixes_are_judged_on_the_race_too_and_those_that_end_both_come_first() {
    // The committed atlas of NPP 13.0.1, its race measured in every memory scenario (#29).
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz");
    let run = load(&path);
    let a = RunAnalysis::new(&run);
    let fixes = nppbench_analysis::verdict::fixes(&a);
    assert!(fixes[0].ends_both(), "{:?}", fixes[0]);
    let declared = declared_non_blocking(&fixes);
    assert!(declared.ends_both() && declared.race_compared > 100, "{declared:?}");
    // A pool ends the leak and leaves the race.
    let pool = fixes.iter().find(|f| f.title.contains("pool of threads")).unwrap();
    assert_eq!(pool.fixed, pool.compared, "{pool:?}");
    assert!(pool.race_fixed < pool.race_compared, "{pool:?}");
    let first_not_both = fixes.iter().position(|f| !f.ends_both()).unwrap_or(fixes.len());
    assert!(fixes[first_not_both..].iter().all(|f| !f.ends_both()));
}

#[test]
fn the_race_is_shown_by_what_a_user_sees() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz");
    let run = load(&path);
    let v = nppbench_analysis::verdict::verdict(&RunAnalysis::new(&run));
    assert!(v.races > 500 && v.races_without_leak > 0, "{} races", v.races);
    assert!(
        v.race_never.iter().any(|s| s.contains("legacy_default")),
        "{:?}",
        v.race_never
    );
    // The largest image that raced: its last columns, NPP's second kernel's, are stale.
    let e = v.race_example.expect("an example");
    assert_eq!(e.columns[1] + 1, e.width, "{e:?}");
    assert!(e.columns[0] > e.width / 2 && e.wrong_rounds > 0, "{e:?}");
}

/// #29 items 2 and 4: the declared non-blocking fix with its leak, race and time per call, from
/// a run that timed it beside the context filled from the stream (`docs/atlas/fix-cost.toml`,
/// `reports/h200-fix-cost-npp-13.0.1/`, an H200 with NPP 13.0.1). The time was not counted before:
/// a fix that changes only the context was taken not to change the work NPP queues.
#[test]
fn declaring_non_blocking_is_measured_on_both_hazards_and_in_time_per_call() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h200-fix-cost-npp-13.0.1/run.json.gz");
    let run = load(&path);
    let fixes = nppbench_analysis::verdict::fixes(&RunAnalysis::new(&run));
    let declared = declared_non_blocking(&fixes);
    assert_eq!((declared.compared, declared.fixed), (10, 10), "{declared:?}");
    assert_eq!((declared.race_compared, declared.race_fixed), (10, 10), "{declared:?}");
    let (lo, hi) = declared
        .time_change_pct
        .expect("its time per call, at a megapixel and above");
    assert!(lo < hi && lo > -20.0 && hi < 20.0, "{lo} to {hi}");
}

/// A memory sample reads this process's figure (NVML) and the device's only where that one is
/// missing (schema version 3). A leaking record of a committed run (version 2: both read after
/// every call) is judged alike with its device-wide figures taken out; judged on the device's
/// with its process figures taken out (as where NVML lists none); and not judged where neither
/// figure is whole. The records are the committed run's, edited here to those shapes.
#[test]
fn a_record_is_judged_on_the_process_figure_else_the_devices_else_not_at_all() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/h100-npp-13.0.1/run.json.gz");
    let run = load(&path);
    let analysis = RunAnalysis::new(&run);
    let leak = analysis
        .memory
        .iter()
        .find(|m| m.class == Some(LeakClass::Leak) && m.probe == nppbench_analysis::Probe::Process)
        .expect("a leak judged on the process's figure");
    let record = leak.record.clone();
    let judge = |edit: &dyn Fn(&mut nppbench_model::MemorySeries)| {
        let mut r = record.clone();
        edit(&mut r.result.as_mut().unwrap().samples);
        let a = nppbench_analysis::memory::analyse_memory(&r);
        (a.probe, a.class, a.growth_mib.clone())
    };
    let (probe, class, growth) = judge(&|s| s.device_used_bytes.iter_mut().for_each(|d| *d = None));
    assert_eq!(
        (probe, class, growth),
        (nppbench_analysis::Probe::Process, leak.class, leak.growth_mib.clone())
    );
    let (probe, class, _) = judge(&|s| s.process_used_bytes.iter_mut().for_each(|p| *p = None));
    assert_eq!(
        (probe, class),
        (nppbench_analysis::Probe::Device, Some(LeakClass::Leak))
    );
    let (_, class, growth) = judge(&|s| {
        s.process_used_bytes[1] = None;
        s.device_used_bytes.iter_mut().skip(2).for_each(|d| *d = None);
    });
    assert_eq!((class, growth.len()), (None, 0), "a series with neither figure whole");
}

/// What the memory phase's rule for measuring again alone rests on (`runner/memory_phase.rs`,
/// `page_bound`): a scenario that grew without keeping a stream in its batch and stayed flat
/// there is flat alone too, so only those not flat in their batch are measured again. Read from
/// the first run that recorded the batch's class (`batch.class_in_batch`), on one H100: its 93
/// memory records measured again alone for that reason (`grown-alone.json.gz`, the run cut to
/// them as its folder's README says; the whole run left the tree, reports/ELSEWHERE.tsv).
#[test]
fn grown_without_a_stream_and_flat_in_the_batch_is_flat_alone() {
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let run = load(&reports.join("performance/h100-GPU-f5e58df3-reading-time/grown-alone.json.gz"));
    let a = RunAnalysis::new(&run);
    let (mut flat, mut not_flat, mut changed) = (0, 0, 0);
    for m in &a.memory {
        let Some(place) = &m.record.batch else { continue };
        let grew = place
            .alone_because
            .as_deref()
            .is_some_and(|why| why.starts_with("a scenario that grew without keeping a stream"));
        let Some(in_batch) = place.class_in_batch.as_deref().filter(|_| grew) else {
            continue;
        };
        let alone = m.class.expect("measured alone, classed");
        if in_batch == LeakClass::Flat.as_str() {
            flat += 1;
            assert_eq!(
                alone,
                LeakClass::Flat,
                "{}: flat in its batch, not alone",
                m.record.scenario.id
            );
        } else {
            not_flat += 1;
            changed += usize::from(alone.as_str() != in_batch);
        }
    }
    assert_eq!(
        (flat, not_flat, changed),
        (90, 3, 3),
        "flat in the batch, not flat, and of those changed alone"
    );
}
