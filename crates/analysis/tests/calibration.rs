//! The calibration of 2026-11-26, judged again at the default settings: on each of two H100
//! machines (`reports/calibration/h100-a`, `h100-b`), seven quick runs and two full runs one
//! after another, and two of each with the delay hook (`NPPBENCH_DELAY_CYCLES=100`), every run
//! with the presets' `--repeat auto`; on a third (`h100-c`), two full runs and two with the hook
//! scaled to the image (`NPPBENCH_DELAY_CYCLES_PER_MPIXEL=100`). What docs/calibration.md
//! reports from them.

use std::path::Path;

use nppbench_analysis::calibration::every_pair;
use nppbench_analysis::compare::{Change, Comparison, Gate, Thresholds, compare};
use nppbench_model::RunFile;

const CARDS: [&str; 2] = ["h100-a", "h100-b"];
const ALL: [Gate; 3] = [Gate::Regression, Gate::Leak, Gate::Streams];

fn read(card: &str, name: &str) -> RunFile {
    let dir = if name.contains("quick") { "quick" } else { "full" };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/calibration")
        .join(card)
        .join(dir)
        .join(format!("{name}.json.gz"));
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks that no gate trips and no scenario is called slower or faster in same-against-same
/// `comparisons`; returns how many scenarios were judged and how many were unsettled.
fn same_against_same(card: &str, comparisons: &[Comparison]) -> (usize, usize) {
    let (mut judged, mut unsettled) = (0, 0);
    for c in comparisons {
        assert!(c.tripped(&ALL).is_empty(), "{card}: a gate tripped");
        for t in &c.throughput {
            assert!(
                matches!(t.verdict, Change::Same | Change::Unsettled),
                "{card}: {} called {:?}: {:?}",
                t.id,
                t.verdict,
                t.kernel
            );
            judged += 1;
            unsettled += usize::from(t.verdict == Change::Unsettled);
        }
    }
    (judged, unsettled)
}

#[test]
fn same_against_same_flags_nothing_and_settles_on_both_machines() {
    for card in CARDS {
        let quick: Vec<RunFile> = (1..=7).map(|i| read(card, &format!("quick-{i}"))).collect();
        let full: Vec<RunFile> = (1..=2).map(|i| read(card, &format!("full-{i}"))).collect();
        let (quick, full) = (
            every_pair(&quick, Thresholds::default()),
            every_pair(&full, Thresholds::default()),
        );
        assert_eq!(quick.len(), 21, "{card}: twenty-one quick pairs");
        let all: Vec<Comparison> = quick.into_iter().chain(full).collect();
        let (judged, unsettled) = same_against_same(card, &all);
        assert_eq!(judged, 21 * 20 + 44, "{card}: every scenario judged");
        // At most 10% unsettled (the bar); measured: 0 and 1 of 464.
        assert!(unsettled * 100 <= judged, "{card}: {unsettled} of {judged} unsettled");
    }
}

#[test]
fn the_delay_hook_is_found_slower_and_never_faster() {
    for card in CARDS {
        let (mut found, mut large, mut found_to_4k, mut to_4k) = (0, 0, 0, 0);
        for (preset, plain) in [("quick", 7), ("full", 2)] {
            for p in 1..=plain {
                let base = read(card, &format!("{preset}-{p}"));
                for d in 1..=2 {
                    let c = compare(
                        &base,
                        &read(card, &format!("delay-{preset}-{d}")),
                        Thresholds::default(),
                    );
                    for t in &c.throughput {
                        assert_ne!(t.verdict, Change::Faster, "{card}: {} called faster", t.id);
                        if t.pixels < 1_000_000 {
                            assert_eq!(t.verdict, Change::Slower, "{card}: {} (launch-bound)", t.id);
                            continue;
                        }
                        large += 1;
                        found += usize::from(t.verdict == Change::Slower);
                        if t.pixels < 30_000_000 {
                            to_4k += 1;
                            found_to_4k += usize::from(t.verdict == Change::Slower);
                        } else {
                            // At 8K the hook adds under 1.2%: inside the noise band.
                            assert_ne!(t.verdict, Change::Slower, "{card}: {} under the noise band", t.id);
                        }
                    }
                }
            }
        }
        // From 1 MP to 4K, where the hook adds 3% (4K) to 13% (1080p): at the 2% band 252 of 252
        // on h100-a and 245 of 252 on h100-b; at the 2.5% band the leave-one-out calibration fits
        // (docs/calibration.md), 244 of 252 on h100-b (the misses: 3838x2160 on NPP's two
        // streams, where the hook's kernel adds 1.4–2.5% to the busy time).
        assert_eq!(to_4k, 252, "{card}");
        assert!(
            found_to_4k * 100 >= to_4k * 96,
            "{card}: {found_to_4k} of {to_4k} found from 1 MP to 4K"
        );
        assert_eq!(large, 252 + 16, "{card}");
        assert!(found >= found_to_4k, "{card}: {found} of {large}");
    }
}

/// The fixed hook adds under 1.2% at 8K, inside the noise band: a hook of 100 cycles per million
/// pixels adds about 3% there (2.0 to 3.0% measured; 4 to 6% at 4K, 13 to 18% at 1080p). Misses
/// are allowed only where the hook added less than the band (measured: 7678x4320 on NPP's two
/// streams, +1.7%, where its kernel overlaps NPP's last-columns kernel).
#[test]
fn a_delay_scaled_to_the_image_is_found_from_1_mp_to_8k_and_never_faster() {
    let card = "h100-c";
    let same = compare(&read(card, "full-1"), &read(card, "full-2"), Thresholds::default());
    let (judged, unsettled) = same_against_same(card, &[same]);
    assert_eq!(judged, 44, "{card}: every scenario judged");
    assert!(unsettled <= 4, "{card}: {unsettled} of {judged} unsettled");
    let noise = Thresholds::default().noise_pct;
    let (mut found, mut large, mut found_8k, mut at_8k) = (0, 0, 0, 0);
    for p in 1..=2 {
        let base = read(card, &format!("full-{p}"));
        for d in 1..=2 {
            let c = compare(&base, &read(card, &format!("scaled-full-{d}")), Thresholds::default());
            for t in &c.throughput {
                assert_ne!(t.verdict, Change::Faster, "{card}: {} called faster", t.id);
                if t.pixels < 1_000_000 {
                    assert_eq!(t.verdict, Change::Slower, "{card}: {} (launch-bound)", t.id);
                    continue;
                }
                let slower = t.verdict == Change::Slower;
                assert!(
                    slower || t.kernel.change_pct < noise,
                    "{card}: {} missed at {:+.2}%",
                    t.id,
                    t.kernel.change_pct
                );
                large += 1;
                found += usize::from(slower);
                if t.pixels > 30_000_000 {
                    at_8k += 1;
                    found_8k += usize::from(slower);
                }
            }
        }
    }
    // Measured: 126 of 128 from 1 MP to 8K and 14 of 16 at 8K at the 2% band; 124 of 128 and 12
    // of 16 at the 2.5% band (the misses: 7678x4320 on a blocking or per-thread stream, where the
    // hook's kernel overlaps NPP's last-columns kernel and adds 1.7 to 2.4%).
    assert_eq!((large, at_8k), (128, 16), "{card}");
    assert!(
        found * 100 >= large * 95,
        "{card}: {found} of {large} found from 1 MP up"
    );
    assert!(
        found_8k * 100 >= at_8k * 75,
        "{card}: {found_8k} of {at_8k} found at 8K"
    );
}

/// The calibration judged the way a stranger would (issue #31): every machine folder under
/// reports/calibration (a machine is a GPU UUID: the four measured with per-layout figures on
/// 2026-11-27, GPU-*, and h100-a, -b, -c of 2026-11-26), each held out in turn and judged with the
/// noise band fitted on the others. Every held-out machine: no gate trip, no scenario slower or
/// faster, none unsettled; the delay scaled to the image found slower in at least 95% of the
/// comparisons from 1 MP up, and never faster. The shipped band is the one fitted on all.
#[test]
fn every_machine_left_out_is_quiet_at_the_band_fitted_on_the_others_and_finds_the_known_change() {
    use nppbench_analysis::calibration::{Machine, fit_noise_pct, leave_one_out};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/calibration");
    let machines = Machine::read_all(&dir).unwrap();
    let new: Vec<&Machine> = machines.iter().filter(|m| m.name.starts_with("GPU-")).collect();
    assert!(new.len() >= 4, "four machines or more: {}", new.len());
    for m in &new {
        assert_eq!(
            (m.quick.len(), m.full.len(), m.scaled_quick.len(), m.scaled_full.len()),
            (7, 2, 2, 2),
            "{}",
            m.name
        );
        assert!(
            m.gpu_uuid.starts_with(&m.name),
            "{}: named after its GPU ({})",
            m.name,
            m.gpu_uuid
        );
    }
    let mut uuids: Vec<&str> = machines.iter().map(|m| m.gpu_uuid.as_str()).collect();
    uuids.sort();
    uuids.dedup();
    assert_eq!(uuids.len(), machines.len(), "each folder a machine of its own");
    for h in leave_one_out(&machines, Thresholds::default()) {
        for (preset, f) in [("quick", h.quick), ("full", h.full)] {
            assert_eq!(
                (f.pairs_tripped, f.slower_or_faster, f.unsettled, f.unjudged),
                (0, 0, 0, 0),
                "{} left out, {preset} at {}%: {f:?}",
                h.machine,
                h.fitted_noise_pct
            );
        }
        let k = h.known_change;
        assert_eq!(k.called_faster, 0, "{}", h.machine);
        if k.large > 0 {
            assert!(k.large_found_pct() >= 95.0, "{}: {k:?}", h.machine);
            assert_eq!(
                k.small_found, k.small,
                "{}: under 1 MP the hook adds 20% or more",
                h.machine
            );
        }
    }
    let all: Vec<&Machine> = machines.iter().collect();
    assert_eq!(
        fit_noise_pct(&all, Thresholds::default()),
        Thresholds::default().noise_pct
    );
}

/// The fit must not be judged on the machines it was fitted on: the smallest band merely quiet on
/// the others (no near misses counted) flags the machine left out. A test that the procedure can
/// fail: with near misses ignored, GPU-4b201cc6 left out is judged at 1% and flags.
#[test]
fn a_band_fitted_without_near_misses_flags_a_machine_left_out() {
    use nppbench_analysis::calibration::{FalseAlarms, Machine};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/calibration");
    let machines = Machine::read_all(&dir).unwrap();
    let (out, others): (Vec<&Machine>, Vec<&Machine>) = machines.iter().partition(|m| m.name == "GPU-4b201cc6");
    let at = |m: &Machine, noise_pct: f64| {
        FalseAlarms::of(&m.same_against_same(Thresholds {
            noise_pct,
            ..Thresholds::default()
        }))
    };
    assert!(
        others.iter().all(|m| at(m, 1.0).none()),
        "the others flag nothing at 1%"
    );
    assert!(!at(out[0], 1.0).none(), "the one left out does");
}

/// A full run of the earlier H200 calibration (`reports/calibration/full/`).
fn read_h200(name: &str) -> RunFile {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/calibration/full")
        .join(name);
    RunFile::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The same delay on the full preset, where the 4K images it was sized for are: 2.2 to 3.4% there
/// (H200, three passes a side). Sized for the 2% band of the time, it is at the edge of today's
/// 2.5% (docs/calibration.md): a 4K scenario is found slower exactly where its change is beyond
/// the band, and called the same where it is not; under 1% at 8K, never called slower there; the
/// two plain runs flag nothing against each other.
#[test]
fn a_three_percent_change_at_4k_is_found() {
    let plain: Vec<RunFile> = (1..=2)
        .map(|i| read_h200(&format!("full-npp-13.0.1-{i}.json.gz")))
        .collect();
    let same = compare(&plain[0], &plain[1], Thresholds::default());
    assert!(
        same.throughput
            .iter()
            .all(|t| matches!(t.verdict, Change::Same | Change::Unsettled)),
        "same against same"
    );
    let (mut at_4k, mut found) = (0, 0);
    let band = Thresholds::default().noise_pct;
    for d in 1..=2 {
        let delayed = read_h200(&format!("delay-100-cycles-full-npp-13.0.1-{d}.json.gz"));
        for p in &plain {
            for t in compare(p, &delayed, Thresholds::default()).throughput {
                if (8_000_000..30_000_000).contains(&t.pixels) {
                    // + is slower: (candidate − base) / base.
                    assert!((1.5..5.0).contains(&t.kernel.change_pct), "{}: {:?}", t.id, t.kernel);
                    let beyond = t.kernel.change_pct > band;
                    let expected = if beyond { Change::Slower } else { Change::Same };
                    assert_eq!(t.verdict, expected, "{}: {:?}", t.id, t.kernel);
                    found += usize::from(beyond);
                    at_4k += 1;
                }
                if t.pixels >= 30_000_000 {
                    assert_ne!(t.verdict, Change::Slower, "{}: under 1% is noise", t.id);
                }
            }
        }
    }
    assert_eq!(at_4k, 4 * 14, "fourteen 4K scenarios, four comparisons");
    assert!(found * 2 >= at_4k, "{found} of {at_4k} found slower");
}
