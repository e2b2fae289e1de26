//! `restart.rs`'s tests: what a child said, read; where the next child starts, one function at a
//! time and in batches; and a made-up child, stopped at every line it says, until every shape of
//! its share has exactly one line.

use super::*;

mod simulated;

fn said(lines: &[&str]) -> Progress {
    let mut p = Progress::default();
    lines.iter().for_each(|l| p.read(l));
    p
}

/// A child started at function `from`, leaving out `done`.
fn start(from: usize, done: impl IntoIterator<Item = (usize, usize)>) -> Start {
    Start {
        from,
        done: done.into_iter().collect(),
        lost: BTreeSet::new(),
        alive: BTreeSet::new(),
    }
}

/// Shapes `ks` of function `i`.
fn of(i: usize, ks: impl IntoIterator<Item = usize>) -> Vec<(usize, usize)> {
    ks.into_iter().map(|k| (i, k)).collect()
}

/// The index the throughput point is said by (the engine's `THROUGHPUT_INDEX`).
const POINT: usize = usize::MAX - 1;

#[test]
fn a_function_done_is_followed_by_the_next() {
    let p = said(&["begin 4", "at 4 0", "wrote 4 0", "done 4"]);
    let next_one = Next::Restart {
        start: Start::at(5),
        lost: None,
    };
    assert_eq!(next(&p, Ended::ContextDead, &Start::at(4), true), next_one);
    assert_eq!(next(&p, Ended::Success, &Start::at(4), true), Next::Finished);
    assert_eq!(
        next(&Progress::default(), Ended::Died, &Start::at(4), true),
        Next::NotStarted
    );
}

/// A context dead at shape 2 of function 9 (its line written): the next child starts in function
/// 9 leaving out shapes 0 to 2, and no line is written for it.
#[test]
fn a_dead_context_costs_one_shape() {
    let p = said(&[
        "begin 8",
        "done 8",
        "begin 9",
        "at 9 0",
        "wrote 9 0",
        "at 9 1",
        "wrote 9 1",
        "at 9 2",
        "wrote 9 2",
    ]);
    assert_eq!(
        next(&p, Ended::ContextDead, &Start::at(8), true),
        Next::Restart {
            start: start(9, of(9, 0..3)),
            lost: None
        }
    );
}

/// A child started past shapes 0 to 3; unaligned shapes 5 to 8, each called (said `at`), the
/// call of 7 leaving the context dead: 7's line is written before 5's and 6's, which the next
/// child calls again, and so on until every shape is done.
#[test]
fn shapes_written_out_of_order_are_left_out_and_the_others_called_again() {
    let p = said(&[
        "begin 3",
        "at 3 4",
        "wrote 3 4",
        "at 3 5",
        "at 3 6",
        "at 3 7",
        "wrote 3 7",
    ]);
    let s = start(3, of(3, (0..5).chain([7])));
    assert_eq!(
        next(&p, Ended::ContextDead, &start(3, of(3, 0..4)), true),
        Next::Restart {
            start: s.clone(),
            lost: None
        }
    );
    // The next child calls 5, 6 and 8, then asks their questions; it dies in 6's.
    let p = said(&["begin 3", "at 3 5", "at 3 6", "at 3 8", "at 3 5", "wrote 3 5", "at 3 6"]);
    assert_eq!(
        next(&p, Ended::Died, &s, true),
        Next::Restart {
            start: start(3, of(3, 0..8)),
            lost: Some((3, Some(6)))
        }
    );
}

/// A child killed in shape 3 (after writing shapes 1 and 2): that shape gets a line, the next
/// leaves out shapes 0 to 3; one that dies in no shape (before any, or between them) loses the
/// rest of the function, so that a child that cannot reach its shapes is not started again and
/// again.
#[test]
fn a_dead_child_costs_the_shape_it_was_in() {
    let p = said(&["begin 2", "at 2 1", "wrote 2 1", "at 2 2", "wrote 2 2", "at 2 3"]);
    assert_eq!(
        next(&p, Ended::Died, &start(2, of(2, [0])), true),
        Next::Restart {
            start: start(2, of(2, 0..4)),
            lost: Some((2, Some(3)))
        }
    );
    let p = said(&["begin 2"]);
    for ended in [Ended::Died, Ended::ContextDead] {
        assert_eq!(
            next(&p, ended, &start(2, of(2, 0..5)), true),
            Next::Restart {
                start: Start::at(3),
                lost: Some((2, None))
            }
        );
    }
}

/// A child that dies in a step it said it was at (the throughput point, told by an index past
/// the shapes') loses that step, and the next leaves it out.
#[test]
fn a_step_said_before_it_is_lost_with_its_child() {
    let p = said(&["begin 3", "at 3 49", "wrote 3 49", &format!("at 3 {POINT}")]);
    assert_eq!(
        next(&p, Ended::Died, &start(3, of(3, 0..49)), true),
        Next::Restart {
            start: start(3, of(3, (0..50).chain([POINT]))),
            lost: Some((3, Some(POINT)))
        }
    );
    let p = said(&["begin 3", &format!("at 3 {POINT}"), &format!("wrote 3 {POINT}")]);
    assert_eq!(
        next(&p, Ended::ContextDead, &start(3, of(3, 0..50)), true),
        Next::Restart {
            start: start(3, of(3, (0..50).chain([POINT]))),
            lost: None
        }
    );
}

/// Without shapes, a function is called once: a child that dies in it, or whose context dies,
/// is followed by one at the next function.
#[test]
fn without_shapes_the_next_function() {
    let p = said(&["begin 2", "wrote 7 1"]);
    assert!(p.written.is_empty(), "a line of a function not begun is not counted");
    assert_eq!(
        next(&p, Ended::Died, &Start::at(2), false),
        Next::Restart {
            start: Start::at(3),
            lost: Some((2, None))
        }
    );
}

/// Phase A of a batch of functions 4 to 6 (4's aligned shapes 0 and 1, 5's and 6's shape 0),
/// then its phase B: 4's unaligned shapes 2 and 3 called and kept for their questions, 4's
/// throughput point, 5's shape 1 refused by NPP (written at once), 5's shape 2 leaving the context
/// dead.
const BATCH_TO_PHASE_B: [&str; 18] = [
    "begin 4",
    "at 4 0",
    "wrote 4 0",
    "at 4 1",
    "wrote 4 1",
    "begin 5",
    "at 5 0",
    "wrote 5 0",
    "begin 6",
    "at 6 0",
    "wrote 6 0",
    "at 4 2",
    "at 4 3",
    "at 4 18446744073709551614",
    "wrote 4 18446744073709551614",
    "at 5 1",
    "wrote 5 1",
    "at 5 2",
];

/// A context dead at function 5's call while function 4's calls 2 and 3 are kept unasked: the
/// next child starts at function 4 and calls them again, leaving out every line written in any
/// function of the batch; it finishes the batch and moves on, and what it leaves out is trimmed
/// to the functions from the next start on.
#[test]
fn a_context_dead_in_a_batch_calls_again_the_shapes_kept_unasked_and_no_line_written() {
    let mut lines = BATCH_TO_PHASE_B.to_vec();
    lines.push("wrote 5 2");
    let s = start(4, [(4, 0), (4, 1), (4, POINT), (5, 0), (5, 1), (5, 2), (6, 0)]);
    assert_eq!(
        next(&said(&lines), Ended::ContextDead, &Start::at(4), true),
        Next::Restart {
            start: s.clone(),
            lost: None
        }
    );
    assert_eq!(POINT.to_string(), "18446744073709551614");
    // It calls 4's shapes 2 and 3 again, 5's point, 6's shape 1, then asks them.
    let p = said(&[
        "begin 4",
        "begin 5",
        "begin 6",
        "at 4 2",
        "at 4 3",
        "at 5 18446744073709551614",
        "wrote 5 18446744073709551614",
        "at 6 1",
        "at 4 2",
        "wrote 4 2",
        "at 4 3",
        "wrote 4 3",
        "at 6 1",
        "wrote 6 1",
        "done 4",
        "done 5",
        "done 6",
        "begin 7",
        "at 7 0",
        "wrote 7 0",
    ]);
    assert_eq!(
        next(&p, Ended::ContextDead, &s, true),
        Next::Restart {
            start: start(7, [(7, 0)]),
            lost: None
        }
    );
}

/// The calls that lived through phase B are said (`alive i k`): after a context dead at function
/// 5's call, the next child calls function 4's shapes 2 and 3 in shared turns, not alone; one
/// written, or lost with a child killed in it, is no longer said alive.
#[test]
fn calls_that_lived_alone_are_made_again_in_shared_turns() {
    let mut lines: Vec<&str> = Vec::new();
    for l in BATCH_TO_PHASE_B {
        lines.push(l);
        match l {
            "at 4 2" => lines.push("alive 4 2"),
            "at 4 3" => lines.push("alive 4 3"),
            _ => {}
        }
    }
    lines.push("wrote 5 2");
    let s = Start {
        alive: [(4, 2), (4, 3)].into(),
        ..start(4, [(4, 0), (4, 1), (4, POINT), (5, 0), (5, 1), (5, 2), (6, 0)])
    };
    assert_eq!(
        next(&said(&lines), Ended::ContextDead, &Start::at(4), true),
        Next::Restart {
            start: s.clone(),
            lost: None
        }
    );
    // Whole in phase A: 4's shape 2 written, the child killed in shape 3.
    let p = said(&["begin 4", "at 4 2", "wrote 4 2", "at 4 3"]);
    let mut after = s.clone();
    after.done.extend([(4, 2), (4, 3)]);
    after.alive.clear();
    assert_eq!(
        next(&p, Ended::Died, &s, true),
        Next::Restart {
            start: after,
            lost: Some((4, Some(3)))
        }
    );
}

/// A child killed asking the questions of function 4's shape 3 (phase C) loses that shape alone:
/// function 5's kept call is called again. Killed between two functions' questions, it loses the
/// rest of the function whose line it wrote last (none), not the next one's.
#[test]
fn a_child_killed_in_phase_c_costs_the_shape_asked_and_no_other() {
    let mut lines = BATCH_TO_PHASE_B.to_vec();
    lines.extend(["at 6 1", "at 4 2", "wrote 4 2", "at 4 3"]);
    let done = [(4, 0), (4, 1), (4, 2), (4, 3), (4, POINT), (5, 0), (5, 1), (6, 0)];
    assert_eq!(
        next(&said(&lines), Ended::Died, &Start::at(4), true),
        Next::Restart {
            start: start(4, done),
            lost: Some((4, Some(3)))
        }
    );
    lines.extend(["wrote 4 3", "at 5 2", "wrote 5 2"]);
    let s = Start {
        lost: [5].into(),
        ..start(4, done.into_iter().chain([(5, 2)]))
    };
    assert_eq!(
        next(&said(&lines), Ended::Died, &Start::at(4), true),
        Next::Restart {
            start: s,
            lost: Some((5, None))
        }
    );
}

/// A child killed in phase A of the batch's second function: in its shape 0, that shape is lost;
/// before its first shape, the rest of that function is lost and the first function's are not:
/// the next child starts at the first, leaving the second out whole.
#[test]
fn a_child_killed_in_phase_a_of_the_second_function_costs_that_function_at_most() {
    let mut lines = BATCH_TO_PHASE_B[..7].to_vec();
    assert_eq!(lines.last(), Some(&"at 5 0"));
    assert_eq!(
        next(&said(&lines), Ended::Died, &Start::at(4), true),
        Next::Restart {
            start: start(4, [(4, 0), (4, 1), (5, 0)]),
            lost: Some((5, Some(0)))
        }
    );
    lines.pop();
    let s = Start {
        lost: [5].into(),
        ..start(4, [(4, 0), (4, 1)])
    };
    assert_eq!(
        next(&said(&lines), Ended::Died, &Start::at(4), true),
        Next::Restart {
            start: s.clone(),
            lost: Some((5, None))
        }
    );
    // The next child leaves 5 out without a word; killed in 6's phase A, it keeps 5 out.
    let p = said(&["begin 4", "begin 6", "at 6 0"]);
    let mut after = s.clone();
    after.done.insert((6, 0));
    assert_eq!(
        next(&p, Ended::Died, &s, true),
        Next::Restart {
            start: after,
            lost: Some((6, Some(0)))
        }
    );
}

/// The arguments a start gives a child are what the child reads back.
#[test]
fn a_starts_arguments_read_back_as_that_start() {
    let s = Start {
        lost: [6, 9].into(),
        alive: [(4, 2), (7, 1)].into(),
        ..start(4, [(4, 0), (4, POINT), (5, 17)])
    };
    let args = s.args();
    use clap::Parser;
    let cli = crate::args::Cli::try_parse_from(
        ["nppbench", "call-catalogue", "--catalogue", "c", "--out", "o"]
            .into_iter()
            .map(str::to_owned)
            .chain(args),
    )
    .unwrap();
    let crate::args::Cmd::CallCatalogue(a) = cli.command else {
        unreachable!("call-catalogue")
    };
    let read = Start {
        from: a.from.unwrap(),
        done: a.shapes_done.into_iter().collect(),
        lost: a.functions_lost.into_iter().collect(),
        alive: a.shapes_alive.into_iter().collect(),
    };
    assert_eq!(read, s);
    assert_eq!(Start::at(3).args(), ["--from", "3"]);
    assert!(function_shape("4").is_err() && function_shape("4:x").is_err());
}
