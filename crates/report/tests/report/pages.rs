//! What a reader meets first on a run's page (issue #48): the verdict before the notes, a few
//! notes and the rest folded, one name per threading model in every chart, and the build that
//! measured a run said in words.

use std::path::Path;

use nppbench_model::RunFile;

fn reports() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports")
}

fn run_file(run: &str) -> RunFile {
    RunFile::read(&reports().join(run)).unwrap()
}

fn render(run: &RunFile) -> String {
    nppbench_report::render(std::slice::from_ref(run)).unwrap().index_html
}

fn page(run: &str) -> String {
    render(&run_file(run))
}

/// An atlas that measured `--memory-readings own` on GPU-09e538c5, with its batches recorded.
const OWN: &str = "performance/h100-GPU-09e538c5-quiet-stop/atlas-after.json.gz";

/// [`OWN`] as a run made before the figures that the time section's tests give it were recorded: no
/// steps after the last call, no reading times, no batch's class for those measured again.
fn own_without_newer_figures() -> RunFile {
    let mut run = run_file(OWN);
    for m in run.memory.iter_mut() {
        if let Some(b) = m.batch.as_mut() {
            b.class_in_batch = None;
        }
        if let Some(r) = m.result.as_mut() {
            r.after_calls.clear();
            r.samples.reading_us.clear();
            r.warm_up_launch_us = None;
        }
    }
    run
}

/// The atlas page that `predict` uses opened with 17 notes before "N of 61 functions leak".
#[test]
fn the_atlas_page_gives_its_verdict_before_its_notes_and_folds_all_but_three() {
    let html = page("h100-atlas-bisected-npp-13.0.1/run-1-npp-13.0.1.json.gz");
    let body = &html[html.find("<body>").unwrap()..];
    let headline = body.find("class=\"headline\"").expect("a headline");
    let first_note = body.find("class=\"warning\"").expect("notes on this page");
    assert!(headline < first_note, "a note before the verdict");
    let folded = body
        .find("<details class=\"notes\">")
        .expect("notes beyond three folded");
    assert_eq!(body[..folded].matches("class=\"warning\"").count(), 3);
    assert!(body[folded..].contains("more notes</summary>"));
}

/// The leak grid's columns said `blocking / thread_per_call` beside legends that said "new
/// thread per call, blocking stream": every chart names a threading model one way.
#[test]
fn every_chart_names_a_threading_model_one_way() {
    for run in ["h100-quick-npp-13.0.1/run.json.gz", "h100-npp-13.0.1/run.json.gz"] {
        let html = page(run);
        let texts: Vec<&str> = html
            .split("<text")
            .skip(1)
            .filter_map(|t| {
                t.split_once('>')
                    .map(|(_, rest)| rest.split("</text>").next().unwrap_or_default())
            })
            .collect();
        assert!(texts.iter().any(|t| t.contains("new thread per call")), "{run}");
        for t in &texts {
            assert!(
                !t.contains("thread_per_call") && !t.contains("pool:") && !t.contains("own_stream"),
                "{run}: a chart says {t:?}"
            );
        }
    }
}

/// Committed pages said "measured by nppbench 0.1.0 (146057c55726-dirty)".
#[test]
fn a_build_with_uncommitted_changes_is_said_in_words() {
    let mut run = run_file("h100-quick-npp-13.0.1/run.json.gz");
    run.tool.git_commit = "146057c55726-dirty".into();
    let html = render(&run);
    assert!(
        html.contains("measured by nppbench 0.1.0, built from commit 146057c55726 with uncommitted changes."),
        "{}",
        &html[html.find("measured by").unwrap()..][..160]
    );
    assert!(!html.contains("-dirty"));
}

/// Issue #45's rate on the page that measured it: the memory scenarios over the memory phase's
/// wall time, as the run recorded both (a rate over the whole run's wall time, or the ordering
/// phase's, would differ).
#[test]
fn the_time_section_gives_memory_scenarios_a_second_over_the_memory_phase() {
    let run = run_file("performance/atlas-npp-13.0.1.json.gz");
    let phase = run.phases.iter().find(|p| p.phase == "memory").expect("a memory phase");
    let rate = run.memory.len() as f64 / phase.wall_s;
    let html = render(&run);
    let said = format!("{} memory scenarios, ", run.memory.len());
    let line = &html[html.find(&said).expect("the memory timing line")..];
    assert!(
        line.contains(&format!(", {rate:.1} a second over the memory phase")),
        "{}",
        &line[..300]
    );
    // A run made before batches were recorded gives no split of the probes' time, not one of
    // nothing.
    assert!(run.memory.iter().all(|m| m.batch.is_none()));
    assert!(!html.contains("probe-seconds"));
}

/// Where a memory probe's time went, on the page: the probe-seconds split between batches and
/// scenarios measured alone, and the time between two calls' samples against the call's own,
/// per threading model, each as the run's records give it (recomputed here from them).
#[test]
fn the_time_section_splits_the_probes_time_and_the_time_between_calls() {
    let run = own_without_newer_figures();
    let phase = run.phases.iter().find(|p| p.phase == "memory").expect("a memory phase");
    let jobs = run.jobs.as_ref().expect("jobs").jobs;
    let html = render(&run);
    let said = format!(
        "memory phase times the probes at once: {:.0} probe-seconds; ",
        phase.wall_s * f64::from(jobs)
    );
    let line = &html[html.find(&said).unwrap_or_else(|| panic!("no {said:?}"))..];
    let alone: Vec<f64> = run
        .memory
        .iter()
        .filter(|m| m.batch.as_ref().is_some_and(|b| b.size == 1))
        .filter_map(|m| m.wall_ms)
        .collect();
    let text = format!(
        "{:.1} s in {} measured in a process of their own",
        alone.iter().sum::<f64>() / 1e3,
        alone.len()
    );
    assert!(line[..400].contains(&text), "{text} not in {}", &line[..400]);
    // The single-thread model's mean time between two samples and its call's.
    let (mut n, mut between, mut call) = (0usize, 0.0, 0.0);
    for m in run
        .memory
        .iter()
        .filter(|m| m.scenario.threading.to_string() == "single")
    {
        let Some(s) = m.result.as_ref().map(|r| &r.samples) else {
            continue;
        };
        for i in 1..s.elapsed_ms.len() {
            n += 1;
            between += s.elapsed_ms[i] - s.elapsed_ms[i - 1];
            call += s.latency_us[i] / 1e3;
        }
    }
    assert!(n > 100, "{n} samples");
    let text = format!(
        "single {:.2} ms, the call {:.2} ms ({n} samples)",
        between / n as f64,
        call / n as f64
    );
    assert!(html.contains(&text), "{text} not on the page");
}

/// The steps after a scenario's last call (`after_calls`), each step's median, on the page. A
/// run's results are given steps here (made up, labelled as such): 1, 2 and 3 ms of `check` over
/// three results give a median of 2; with none (as in runs made before they were recorded), the
/// page names none.
#[test]
fn the_time_section_gives_the_steps_after_the_last_call() {
    let mut run = own_without_newer_figures();
    let html = render(&run);
    assert!(
        !html.contains("after the last call"),
        "a run without the steps names none"
    );
    let step = |phase: &str, ms: f64| nppbench_model::PhaseTime {
        phase: phase.into(),
        wall_s: ms / 1e3,
    };
    let mut given = 0;
    for m in run.memory.iter_mut() {
        if let Some(r) = m.result.as_mut() {
            // Made up: only the order of the values matters to the median.
            r.after_calls = vec![step("check", f64::from(given % 3 + 1)), step("census", 0.25)];
            given += 1;
        }
    }
    run.memory.retain(|m| m.result.is_some());
    run.memory.truncate(3);
    let html = render(&run);
    assert!(
        html.contains("(after the last call, medians: check 2.0 ms, census 0.2 ms)"),
        "{}",
        &html[html.find("memory scenarios, ").unwrap()..][..600]
    );
}

/// The warm-up call's median on the page, and its launch's part where the run records it (made
/// up here, on a run without it; only the order of the values matters to the median).
#[test]
fn the_time_section_gives_the_warm_up_call_and_its_launch() {
    let mut run = own_without_newer_figures();
    run.memory.retain(|m| m.result.is_some());
    run.memory.truncate(3);
    for (i, m) in run.memory.iter_mut().enumerate() {
        let r = m.result.as_mut().unwrap();
        r.samples.latency_us[0] = 4000.0 + 1000.0 * i as f64;
    }
    let html = render(&run);
    assert!(
        html.contains("The warm-up call, each scenario&#x27;s first: a median 5.00 ms."),
        "{}",
        warm_up(&html)
    );
    for (i, m) in run.memory.iter_mut().enumerate() {
        m.result.as_mut().unwrap().warm_up_launch_us = Some(250.0 * (i + 1) as f64);
    }
    let html = render(&run);
    assert!(
        html.contains("of which NPP&#x27;s launch (its host side, until the call returned) 0.50 ms"),
        "{}",
        warm_up(&html)
    );
}

fn warm_up(html: &str) -> &str {
    html.find("The warm-up call")
        .map_or("no warm-up line", |i| &html[i..(i + 300).min(html.len())])
}

/// The scenarios measured again alone, per reason, on the page; where the class their batch gave
/// is recorded (`class_in_batch`, taken away here, then given, made up), how many got the same
/// class alone.
#[test]
fn the_time_section_says_what_measuring_again_alone_changed() {
    let mut run = own_without_newer_figures();
    let again = |m: &nppbench_model::MemoryRecord| m.batch.as_ref().is_some_and(|b| b.alone_because.is_some());
    let grew = "a pool that kept streams and grew by one 2 MiB page or less in its batch";
    let grew_again = |m: &nppbench_model::MemoryRecord| {
        m.batch
            .as_ref()
            .and_then(|b| b.alone_because.as_deref())
            .is_some_and(|why| why.starts_with(grew))
    };
    let n = run.memory.iter().filter(|m| grew_again(m)).count();
    assert!(n > 10, "{n}");
    let html = render(&run);
    assert!(html.contains(&format!("{grew}: {n};")) || html.contains(&format!("{grew}: {n}.")));
    // Made up: every scenario measured again is said to have been `flat` in its batch.
    for m in run.memory.iter_mut().filter(|m| again(m)) {
        m.batch.as_mut().unwrap().class_in_batch = Some("flat".into());
    }
    let flat = run
        .memory
        .iter()
        .filter(|m| grew_again(m))
        .filter(|m| {
            nppbench_analysis::memory::analyse_memory(m)
                .class
                .is_some_and(|c| c.as_str() == "flat")
        })
        .count();
    let html = render(&run);
    let text = format!("{grew}: {n}, the same class as in its batch in {flat} of {n}");
    assert!(html.contains(&text), "{text} not on the page");
}

/// The memory reading's share of the time between two calls' samples (`samples.reading_us`), on
/// the page beside the call's. On a run without them, the single-thread scenarios are
/// given readings here (made up, labelled as such): 1 ms each, from the second sample on.
#[test]
fn the_time_section_gives_the_memory_readings_share_between_calls() {
    let mut run = own_without_newer_figures();
    assert!(!render(&run).contains("the memory reading 1.00 ms"));
    for m in run.memory.iter_mut() {
        if m.scenario.threading.to_string() != "single" {
            continue;
        }
        if let Some(r) = m.result.as_mut() {
            // Made up: every reading took 1 ms.
            r.samples.reading_us = vec![1000.0; r.samples.len()];
        }
    }
    let html = render(&run);
    let line = &html[html.find("samples, a mean of: ").expect("the gaps' line")..];
    let line = &line[..line.find("</p>").unwrap_or(line.len())];
    let single = &line[line.find("single ").expect("the single-thread model's gap")..];
    let single = &single[..single.find(';').unwrap_or(single.len())];
    assert!(single.contains(", the memory reading 1.00 ms ("), "{single}");
    // The models given no readings say none.
    assert_eq!(line.matches(", the memory reading ").count(), 1, "{line}");
}

/// The memory scenarios' time summed part by part on the page, each sum as the run's records
/// give it (recomputed here from them): the whole from each scenario's turn to its answer, the
/// warm-up calls and a start-up step.
#[test]
fn the_time_section_sums_the_scenarios_time_part_by_part() {
    let run = run_file(OWN);
    let html = render(&run);
    let total: f64 = run.memory.iter().filter_map(|m| m.wall_ms).sum::<f64>() / 1e3;
    let results: Vec<_> = run.memory.iter().filter_map(|m| m.result.as_ref()).collect();
    let warm_up: f64 = results.iter().filter_map(|r| r.samples.latency_us.first()).sum::<f64>() / 1e6;
    let gpu: f64 = results
        .iter()
        .flat_map(|r| &r.startup)
        .filter(|s| s.phase == "gpu")
        .map(|s| s.wall_s)
        .sum();
    let said = format!(
        "Summed over the memory scenarios, each from its turn in its probe to its answer: {total:.1} s. Start-up: gpu {gpu:.1} s, "
    );
    let line = &html[html.find(&said).unwrap_or_else(|| panic!("no {said:?}"))..];
    let line = &line[..line.find("</").unwrap_or(line.len())];
    assert!(
        line.contains(&format!("; the warm-up calls {warm_up:.1} s, ")),
        "{line}"
    );
    assert!(line.contains("; after the last call: "), "{line}");
    assert!(line.contains("; outside these "), "{line}");
    let phase = run.phases.iter().find(|p| p.phase == "memory").unwrap().wall_s;
    let idle = phase * f64::from(run.jobs.as_ref().unwrap().jobs) - total;
    assert!(
        line.contains(&format!(" In no scenario, of the probe-seconds above: {idle:.1} s (")),
        "{line}"
    );
}
