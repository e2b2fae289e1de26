//! The race program over 1 µs a call on four more H100s (`reports/trace/cold-calls/`, as the
//! tool wrote it; the diagnosis libraries and the two changes tried are not committed):
//! - `hot-ab.log` (GPU-9a26e241): this recorder (`base`) against one with the process-wide state
//!   a call reads in one cache line (`hot`), interleaved, six rounds;
//! - `tls-ab.log` (GPU-2f8bd6c3): against one with the thread's state in the initial-exec TLS
//!   model (`tls`), likewise;
//! - `plain-ab.log` (GPU-342a87cc): against one whose question budget takes no locked add
//!   (`plain`), likewise;
//! - `segments.log` (GPU-4103850d: this recorder, `recording cost`, beside the timing library's
//!   `DIAG` line and cost), `registration.log` (GPU-5a5b35ef): a library timing each part of a
//!   call's recording, and a thread's registration;
//! - `confirm.log` (GPU-4ba8fd07, one socket with 300 MiB of L3): the committed recorder (the
//!   budget without locked adds), four rounds; `confirm-2.log` (GPU-6311e476, likewise, a
//!   virtual machine with transparent huge pages on request and no `perf`), three rounds.

use std::path::{Path, PathBuf};

use super::seam::{costs, mean};

fn cold() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/trace/cold-calls")
}

/// This recorder: the race program over 1 µs a call on average on both machines, the others
/// under 0.7; and neither change tried lowered the race program's cost.
#[test]
fn the_race_program_stays_over_a_microsecond_and_neither_change_tried_lowers_it() {
    for (log, tried) in [("hot-ab.log", "hot"), ("tls-ab.log", "tls")] {
        let c = costs(&cold().join(log));
        for program in ["race_program", "lifecycle_program", "own_program", "seed_repro"] {
            let (base, new) = (&c[&format!("base {program}")], &c[&format!("{tried} {program}")]);
            assert_eq!((base.len(), new.len()), (6, 6), "{log} {program}");
            if program == "race_program" {
                assert!(mean(base) > 1000.0, "{log}: {base:?}");
                assert!(mean(new) > mean(base), "{log}: {new:?} against {base:?}");
            } else {
                assert!(
                    mean(base) < 700.0 && mean(new) < 700.0,
                    "{log} {program}: {base:?} {new:?}"
                );
            }
        }
    }
}

/// Where the race program's time goes: entering the call costs it three times what it costs
/// the lifecycle program's threads, and 20 of its 100 calls register their thread (the legacy
/// stream's phase makes no stream first), each for about 0.8 µs.
#[test]
fn the_race_programs_parts_each_cost_more_than_elsewhere() {
    let text = std::fs::read_to_string(cold().join("segments.log")).unwrap();
    let part = |line: &str, name: &str| -> f64 {
        let at = line.find(&format!(" {name}=")).unwrap() + name.len() + 2;
        line[at..].split(' ').next().unwrap().parse().unwrap()
    };
    // This recorder's cost on the race program, in the runs beside the timing library's.
    let lines: Vec<&str> = text.lines().collect();
    let base_race: Vec<f64> = lines
        .windows(2)
        .filter(|w| w[0].starts_with("== base race_program"))
        .map(|w| {
            w[1].trim_start_matches("recording cost ")
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(base_race.len(), 3);
    assert!(base_race.iter().all(|&ns| ns > 1300.0), "{base_race:?}");
    let diag: Vec<&str> = text.lines().filter(|l| l.starts_with("DIAG n=")).collect();
    let race: Vec<&&str> = diag.iter().filter(|l| l.starts_with("DIAG n=100 ")).collect();
    let lifecycle: Vec<&&str> = diag.iter().filter(|l| l.starts_with("DIAG n=300 ")).collect();
    assert_eq!((race.len(), lifecycle.len()), (3, 3));
    for (r, l) in race.iter().zip(&lifecycle) {
        assert!(part(r, "enter") > 3.0 * part(l, "enter"), "{r}\n{l}");
        assert!(part(r, "flags") > part(l, "flags"), "{r}\n{l}");
    }
    let registration = std::fs::read_to_string(cold().join("registration.log")).unwrap();
    let on_a_call: Vec<&str> = registration.lines().filter(|l| l.starts_with("DIAG n=100 ")).collect();
    assert_eq!(on_a_call.len(), 3);
    for l in on_a_call {
        assert!(l.contains("registered on a call: 20 ("), "{l}");
    }
}

/// The question's budget counted with plain loads and stores instead of locked adds
/// (`recorder/pending.rs`; `plain-ab.log`, GPU-342a87cc, one socket with 300 MiB of L3): this
/// recorder (`base`) against it (`plain`), interleaved, six rounds each. On this H100 the race
/// program is under 1 µs a call with either (a mean 844 ns, and 778 with the change, lower in
/// four rounds of six: a gain six rounds cannot tell from noise), and our own program stays at
/// the question's budget, 0.6 µs.
#[test]
fn the_budget_without_locked_adds_is_no_dearer_and_the_race_program_is_under_a_microsecond_here() {
    let c = costs(&cold().join("plain-ab.log"));
    let (base, plain) = (&c["base race_program"], &c["plain race_program"]);
    assert_eq!((base.len(), plain.len()), (6, 6));
    assert!(mean(base) < 1000.0 && mean(plain) < 1000.0, "{base:?} {plain:?}");
    assert!(mean(plain) < mean(base), "{plain:?} against {base:?}");
    let lower = base.iter().zip(plain).filter(|(b, p)| p < b).count();
    assert_eq!(lower, 4, "{base:?} {plain:?}");
    for v in ["base", "plain"] {
        let own = &c[&format!("{v} own_program")];
        assert!(own.iter().all(|&ns| ns < 900.0) && mean(own) < 700.0, "{v}: {own:?}");
    }
}

/// The committed recorder on two more H100s (`confirm.log`, GPU-4ba8fd07, and `confirm-2.log`,
/// GPU-6311e476; each one socket with 300 MiB of L3): the race program under 1 µs a call on
/// average (930, 755, 765 and 782 ns; 795, 693 and 679 ns), our own program at the question's
/// budget. With GPU-342a87cc above and GPU-8fe838a0 before (README), four H100s record the race
/// program under 1 µs a call, and three over it (`hot-ab.log`, `tls-ab.log`, `segments.log`).
#[test]
fn on_two_more_h100s_the_race_program_is_under_a_microsecond() {
    let c = costs(&cold().join("confirm.log"));
    let (race, own) = (&c["race_program"], &c["own_program"]);
    assert_eq!((race.len(), own.len()), (4, 4));
    assert!(mean(race) < 1000.0, "{race:?}");
    assert!(race.iter().any(|&ns| ns > 900.0), "one round near the target: {race:?}");
    assert!(own.iter().all(|&ns| ns < 700.0), "{own:?}");
    let second = &costs(&cold().join("confirm-2.log"))["race_program"];
    assert_eq!(second.len(), 3);
    assert!(second.iter().all(|&ns| ns < 1000.0), "{second:?}");
}
