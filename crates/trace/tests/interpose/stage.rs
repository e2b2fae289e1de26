//! The shield's staging in front of the stand-in NPP and its stand-in driver, no GPU: a call
//! whose configuration the plan says computes wrong pixels must reach NPP with staging buffers at
//! 512-byte pitches in place of its images (and non-blocking declared), between the driver calls
//! that allocate them, copy the sources in and the destination back and free them, every one on
//! the caller's stream and in that order; every other call reaches NPP byte for byte. A call that
//! cannot be staged (the driver refuses a buffer, no driver is loaded, a function whose images
//! cannot be staged) reaches NPP as sent and is counted apart.

use nppbench_model::{
    Condition, Hazard, HazardRule, SHIELD_SCHEMA_VERSION, ShieldAction, ShieldFunction, ShieldKnowledge, ShieldPlan,
    ShieldTest,
};
use nppbench_trace_standin::driver::staging::{ALLOC_FAILS, BUFFERS, NO_CONTEXT, POOL};

use super::shield::{Shielded, declared_non_blocking, run_shielded_with, sorted};

const COPY: &str = "nppiCopy_8u_C1R_Ctx";
const ADD: &str = "nppiAdd_8u_C1RSfs_Ctx";
const FILTER: &str = "nppiFilterBoxBorder_8u_C1R_Ctx";

/// NPP 13.0.1's wrong-pixel rule as the atlas fitted it for these functions: a destination step
/// that is a multiple of 128, and a source row starting 9 to 11 bytes past 16.
fn wrong_rule() -> HazardRule {
    HazardRule::When(vec![
        ShieldTest {
            condition: Condition::DstStepMultiple(128),
            holds: true,
        },
        ShieldTest {
            condition: Condition::SrcRowStartsIn(9, 11),
            holds: true,
        },
    ])
}

fn plan(hazards: Vec<Hazard>) -> ShieldPlan {
    let function = |symbol: &str| ShieldFunction {
        symbol: symbol.into(),
        src_bytes_per_pixel: 1,
        dst_bytes_per_pixel: 1,
        leak: HazardRule::Never,
        race: HazardRule::Never,
        wrong: wrong_rule(),
    };
    ShieldPlan {
        schema_version: SHIELD_SCHEMA_VERSION,
        hazards,
        knowledge: vec![ShieldKnowledge {
            npp_version: "13.0.1.2".into(),
            gpu: "stand-in".into(),
            runs: 1,
            functions: vec![function(COPY), function(ADD), function(FILTER)],
        }],
    }
}

fn all() -> Vec<Hazard> {
    vec![Hazard::Leak, Hazard::Race, Hazard::Wrong]
}

/// The value of `name=` in a logged line.
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    let key = format!(" {name}=");
    let at = line.find(&key).unwrap_or_else(|| panic!("no {name} in {line}")) + key.len();
    line[at..].split(' ').next().unwrap()
}

/// `line` with the value of each `name=` replaced.
fn with(line: &str, values: &[(&str, String)]) -> String {
    let mut out = line.to_owned();
    for (name, v) in values {
        let old = format!(" {name}={} ", field(line, name));
        out = out.replacen(&old, &format!(" {name}={v} "), 1);
    }
    out
}

fn shielded(symbol: &str, src_step: i32, env: &[(&str, &str)], hazards: Vec<Hazard>) -> Shielded {
    let spec = format!(
        "threads=1;calls=2;symbols={symbol};widths=64;stream=2;flags=0;src_step={src_step};dst_step=896;driver=1"
    );
    let run = run_shielded_with(&spec, &plan(hazards), "13.0.1", env);
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    assert_eq!(run.sent.len(), 2);
    run
}

/// The driver's lines and NPP's, in order, for `sent` staged with buffers from `first` on.
fn staged_lines(sent: &str, first: u64, two_sources: bool) -> Vec<String> {
    let buf = |i: u64| format!("{:#x}", BUFFERS + (first + i) * 0x10_0000);
    let (src_step, dst_step) = (field(sent, "src_step"), field(sent, "dst_step"));
    let rows = "rows=32 stream=0x2";
    let mut lines = vec![format!("cu=alloc bytes=16384 pool={POOL:#x} stream=0x2 ptr={}", buf(0))];
    let dst = if two_sources { 2 } else { 1 };
    if two_sources {
        lines.push(format!("cu=alloc bytes=16384 pool={POOL:#x} stream=0x2 ptr={}", buf(1)));
    }
    lines.push(format!(
        "cu=alloc bytes=16384 pool={POOL:#x} stream=0x2 ptr={}",
        buf(dst)
    ));
    let copy_in = |from: &str, step: &str, to: String| {
        format!("cu=copy from={from} from_pitch={step} to={to} to_pitch=512 row_bytes=64 {rows}")
    };
    lines.push(copy_in(field(sent, "src"), src_step, buf(0)));
    let mut npp = vec![
        ("src", buf(0)),
        ("src_step", "512".to_owned()),
        ("dst", buf(dst)),
        ("dst_step", "512".to_owned()),
    ];
    if two_sources {
        lines.push(copy_in(field(sent, "src2"), field(sent, "src2_step"), buf(1)));
        npp.extend([("src2", buf(1)), ("src2_step", "512".to_owned())]);
    }
    lines.push(declared_non_blocking(&with(sent, &npp)));
    lines.push(format!(
        "cu=copy from={} from_pitch=512 to={} to_pitch={dst_step} row_bytes=64 {rows}",
        buf(dst),
        field(sent, "dst")
    ));
    lines.push(format!("cu=free ptr={} stream=0x2", buf(0)));
    if two_sources {
        lines.push(format!("cu=free ptr={} stream=0x2", buf(1)));
    }
    lines.push(format!("cu=free ptr={} stream=0x2", buf(dst)));
    lines
}

#[test]
fn a_wrong_configuration_runs_on_staging_copies_in_the_callers_stream_order() {
    // 518-byte steps from an aligned address: row 7 starts 10 bytes past 16.
    for (symbol, two) in [(COPY, false), (ADD, true)] {
        let run = shielded(symbol, 518, &[], all());
        let mut expected = vec!["cu=pool_create".to_owned()];
        let per_call = if two { 3 } else { 2 };
        for (i, (_, _, sent)) in run.sent.iter().enumerate() {
            expected.extend(staged_lines(sent, i as u64 * per_call, two));
        }
        assert_eq!(run.seen, expected, "{symbol}: what the driver and NPP saw, in order");
        let r = run.report.unwrap();
        assert_eq!(r.hazards, all());
        let t = r.totals;
        assert_eq!(
            (t.calls, t.rewritten, t.rewritten_wrong, t.wrong_not_staged),
            (2, 2, 2, 0)
        );
        assert_eq!(
            r.sites[0].action,
            ShieldAction::Rewritten {
                leak: false,
                race: false,
                wrong: true
            }
        );
        let images = if two { 3 } else { 2 };
        assert_eq!(
            r.cost.staged_bytes,
            2 * images * 64 * 32,
            "{symbol}: bytes copied in and back"
        );
        assert_eq!(
            r.cost.staging_peak_bytes,
            Some(images * 16384),
            "{symbol}: one call's buffers at once"
        );
        assert!(r.cost.shield_ns > 0 && r.sites[0].shield_ns == r.cost.shield_ns);
    }
}

#[test]
fn a_configuration_computed_right_or_the_wrong_hazard_off_passes_byte_for_byte() {
    for (src_step, hazards) in [(512, all()), (518, vec![Hazard::Leak, Hazard::Race])] {
        let run = shielded(COPY, src_step, &[], hazards);
        assert_eq!(
            run.seen,
            run.sent.iter().map(|s| s.2.clone()).collect::<Vec<_>>(),
            "step {src_step}"
        );
        let r = run.report.unwrap();
        assert_eq!((r.totals.rewritten, r.totals.not_hazardous), (0, 2), "step {src_step}");
        assert_eq!((r.cost.staged_bytes, r.cost.staging_peak_bytes), (0, None));
    }
}

#[test]
fn a_thread_without_a_current_context_is_given_the_images_context() {
    let run = shielded(COPY, 518, &[(NO_CONTEXT, "1")], all());
    assert_eq!(
        run.seen
            .iter()
            .filter(|l| l.starts_with("cu=ctx_set ctx=0xc7c7"))
            .count(),
        2
    );
    assert_eq!(run.report.unwrap().totals.rewritten_wrong, 2);
}

#[test]
fn a_call_that_cannot_be_staged_reaches_npp_as_sent_and_is_counted() {
    // The driver refuses the buffer: nothing but the refusal is asked of it.
    let run = shielded(COPY, 518, &[(ALLOC_FAILS, "1")], all());
    let npp: Vec<String> = run.seen.iter().filter(|l| l.starts_with("fn=")).cloned().collect();
    assert_eq!(npp, run.sent.iter().map(|s| s.2.clone()).collect::<Vec<_>>());
    assert!(run.seen.iter().all(|l| !l.starts_with("cu=copy")), "{:?}", run.seen);
    let r = run.report.unwrap();
    assert_eq!(
        (r.totals.wrong_not_staged, r.totals.rewritten, r.totals.left_alone()),
        (2, 0, 2)
    );
    assert_eq!(
        r.sites[0].action,
        ShieldAction::NotStaged {
            leak: false,
            race: false
        }
    );
    assert_eq!(r.cost.staged_bytes, 0);

    // A filter reads around its ROI: its images are never staged, and no driver is asked.
    let run = shielded(FILTER, 518, &[], all());
    assert_eq!(
        sorted(run.seen.clone()),
        sorted(run.sent.iter().map(|s| s.2.clone()).collect())
    );
    assert_eq!(run.report.unwrap().totals.wrong_not_staged, 2);
}
