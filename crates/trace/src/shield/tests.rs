//! The decision on known facts: each test kind, unknown facts, the compiled plan.

use nppbench_model::{ContextFill, StreamKind};

use super::decide::{Facts, action, evaluate, stream_and_context};
use super::table::{Entry, Op, Rule, Test, context_bit, numbers, stream_bit};

fn entry(leak: Rule, race: Rule) -> Entry {
    Entry {
        src_bytes_per_pixel: 1,
        dst_bytes_per_pixel: 4,
        needs_stream: leak.needs_stream() || race.needs_stream(),
        leak,
        race,
        wrong: Rule::Never,
    }
}

fn when(op: Op, arg: u64, holds: bool) -> Rule {
    Rule::When(vec![Test { op, arg, holds }].into_boxed_slice())
}

fn facts(width: i32, stream: Option<StreamKind>) -> Facts {
    Facts {
        width,
        height: 32,
        src_step: Some(256),
        dst_step: None,
        src_addr: None,
        declared_non_blocking: false,
        stream,
        context: stream.map(|_| ContextFill::FromStream),
    }
}

#[test]
fn each_rule_kind_gives_its_action() {
    let f = facts(100, Some(StreamKind::Blocking));
    let e = |leak, race| evaluate(&entry(leak, race), &f);
    assert_eq!(e(Rule::Never, Rule::Never), action::NOT_HAZARDOUS);
    assert_eq!(e(Rule::Always, Rule::Never), action::REWRITTEN | action::LEAK);
    assert_eq!(
        e(Rule::Always, Rule::Always),
        action::REWRITTEN | action::LEAK | action::RACE
    );
    assert_eq!(e(Rule::Unknown, Rule::Never), action::UNKNOWN_CONFIGURATION);
    // A hazard found is rewritten even where the other cannot be judged.
    assert_eq!(e(Rule::Unknown, Rule::Always), action::REWRITTEN | action::RACE);
}

#[test]
fn alignment_threshold_and_stream_tests_read_the_call() {
    let e = |rule| evaluate(&entry(rule, Rule::Never), &facts(100, Some(StreamKind::Blocking)));
    let leak = action::REWRITTEN | action::LEAK;
    // 100 bytes of source row: a multiple of 4, not of 8; the destination's 400, of 16.
    assert_eq!(e(when(Op::SrcRowBytesMultiple, 4, true)), leak);
    assert_eq!(e(when(Op::SrcRowBytesMultiple, 8, true)), action::NOT_HAZARDOUS);
    assert_eq!(e(when(Op::DstRowBytesMultiple, 16, true)), leak);
    assert_eq!(e(when(Op::SrcStepMultiple, 256, true)), leak);
    assert_eq!(e(when(Op::WidthAtLeast, 101, false)), leak);
    assert_eq!(e(when(Op::PixelsAtLeast, 3200, true)), leak);
    assert_eq!(e(when(Op::StreamIn, stream_bit(StreamKind::Blocking), true)), leak);
    assert_eq!(
        e(when(Op::StreamIn, stream_bit(StreamKind::NonBlocking), true)),
        action::NOT_HAZARDOUS
    );
    assert_eq!(e(when(Op::ContextIn, context_bit(ContextFill::FromStream), true)), leak);
    // No destination step: a test of it cannot be judged.
    assert_eq!(e(when(Op::DstStepMultiple, 4, true)), action::UNKNOWN_CONFIGURATION);
}

#[test]
fn a_stream_whose_flags_are_unknown_cannot_be_judged_unless_another_test_fails() {
    let f = facts(100, None);
    let rule = Rule::When(
        vec![
            Test {
                op: Op::StreamIn,
                arg: stream_bit(StreamKind::Blocking),
                holds: true,
            },
            Test {
                op: Op::WidthAtLeast,
                arg: 1000,
                holds: true,
            },
        ]
        .into_boxed_slice(),
    );
    assert_eq!(evaluate(&entry(rule, Rule::Never), &f), action::NOT_HAZARDOUS);
    let rule = when(Op::StreamIn, stream_bit(StreamKind::Blocking), true);
    assert!(rule.needs_stream());
    assert_eq!(evaluate(&entry(rule, Rule::Never), &f), action::UNKNOWN_CONFIGURATION);
}

/// The wrong-pixel rule's row starts: where the source's rows start past 16 bytes, from its
/// address and step, over the first 16 rows.
#[test]
fn where_source_rows_start_is_read_from_the_address_and_the_step() {
    let wrong = |addr: Option<u64>, step: i32, height: i32, lo: u64, hi: u64| {
        let e = Entry {
            wrong: when(Op::SrcRowStartsIn, lo | (hi << 8), true),
            ..entry(Rule::Never, Rule::Never)
        };
        let f = Facts {
            src_addr: addr,
            src_step: Some(step),
            height,
            ..facts(200, None)
        };
        evaluate(&e, &f)
    };
    let staged = action::REWRITTEN | action::WRONG;
    // A 518-byte step from an aligned address: rows start 0, 6, 12, 2, 8, 14, 4, 10 …: the 8th
    // row is the first 9 to 11 bytes past 16.
    assert_eq!(wrong(Some(0x7000_0000), 518, 8, 9, 11), staged);
    assert_eq!(wrong(Some(0x7000_0000), 518, 7, 9, 11), action::NOT_HAZARDOUS);
    // An aligned step: every row starts where the address does.
    assert_eq!(wrong(Some(0x7000_0000), 512, 32, 9, 11), action::NOT_HAZARDOUS);
    assert_eq!(wrong(Some(0x7000_000a), 512, 1, 9, 11), staged);
    // Past 16 rows the offsets repeat: a tall image is tested on 16.
    assert_eq!(wrong(Some(0x7000_0001), 16, 100_000, 1, 1), staged);
    // No address: cannot be judged.
    assert_eq!(wrong(None, 518, 8, 9, 11), action::UNKNOWN_CONFIGURATION);
}

#[test]
fn a_call_staged_keeps_what_it_was_rewritten_for_and_one_not_staged_says_so() {
    let leak_wrong = action::REWRITTEN | action::LEAK | action::WRONG;
    assert_eq!(
        action::not_staged(leak_wrong),
        action::NOT_STAGED | action::REWRITTEN | action::LEAK
    );
    assert_eq!(
        action::not_staged(action::REWRITTEN | action::WRONG),
        action::NOT_STAGED
    );
    assert!(!action::rewritten(action::not_staged(
        action::REWRITTEN | action::WRONG
    )));
}

#[test]
fn a_negative_size_is_an_unknown_configuration() {
    assert_eq!(
        evaluate(&entry(Rule::Always, Rule::Always), &facts(-1, None)),
        action::UNKNOWN_CONFIGURATION
    );
}

#[test]
fn the_context_filling_is_read_as_trace_reads_it() {
    let fill = |d, s| stream_and_context(d, StreamKind::Blocking, s).1;
    assert_eq!(fill(false, false), ContextFill::FromStream);
    assert_eq!(fill(true, true), ContextFill::FromStream);
    assert_eq!(fill(true, false), ContextFill::DeclaredNonBlocking);
    assert_eq!(fill(false, true), ContextFill::DeclaredBlocking);
}

#[test]
fn versions_compare_by_their_first_three_numbers() {
    assert_eq!(numbers("13.0.1.2"), Some([13, 0, 1]));
    assert_eq!(numbers("12.2.3"), Some([12, 2, 3]));
    assert_eq!(numbers("12.2"), None);
}
