//! The stream registry fed as the writer feeds it: events of one pass applied in the order of
//! their times, a destruction read before its creation (another thread's feed, a later pass)
//! still applied, streams created in a call attributed to its site once its record is read.

use super::*;
use nppbench_model::TraceStreamKind;

fn key() -> SiteKey {
    SiteKey {
        symbol: 1,
        width: 64,
        height: 32,
        src_stride: Some(64),
        dst_stride: Some(256),
        declared_flags: 1,
        stream: TraceStreamKind::Created,
        real_flags: Some(1),
        device: 0,
    }
}

fn created(handle: u64, ns: u64, in_call: Option<u16>) -> StreamEvent {
    StreamEvent::Created(StreamRec {
        handle,
        tid: 7,
        created_ns: ns,
        destroyed_ns: None,
        site: None,
        in_call,
        stack: in_call.is_none().then(|| vec![0x10_usize, 0x20].into_boxed_slice()),
        named: None,
    })
}

fn pass(events: Vec<StreamEvent>, attach: Vec<(u64, SiteKey)>) -> Pass {
    Pass { events, attach }
}

#[test]
fn a_stream_created_in_a_call_counts_at_its_site_and_its_destruction_too() {
    let mut r = Registry::default();
    // The call has not returned: the stream names its symbol, not yet its site.
    r.apply(pass(
        vec![
            created(0xa1, 10, Some(1)),
            created(0xa2, 11, Some(1)),
            StreamEvent::Destroyed { handle: 0xa2, ns: 12 },
        ],
        vec![],
    ));
    let gone = r.gone.iter().find(|s| s.handle == 0xa2).unwrap();
    assert_eq!((gone.in_call, gone.site, gone.destroyed_ns), (Some(1), None, Some(12)));
    assert_eq!(gone.attributed(), (Some(crate::SYMBOLS[1].to_owned()), None));
    // The call's record is read: both streams are its site's, one of them already destroyed.
    r.apply(pass(
        vec![StreamEvent::Destroyed { handle: 0xa1, ns: 20 }],
        vec![(0xa1, key()), (0xa2, key())],
    ));
    assert_eq!(
        r.per_site[&key()],
        (2, 2),
        "attached after the destruction of 0xa1 was applied"
    );
    r.apply(pass(vec![created(0xa3, 30, Some(1))], vec![(0xa3, key())]));
    assert_eq!(r.per_site[&key()], (3, 2));
    r.apply(pass(vec![StreamEvent::Destroyed { handle: 0xa3, ns: 31 }], vec![]));
    assert_eq!(
        r.per_site[&key()],
        (3, 3),
        "a destruction after the attribution counts at the site"
    );
    assert!(r.live.is_empty());
}

#[test]
fn a_destruction_read_before_its_creation_waits_for_it() {
    let mut r = Registry::default();
    // Thread B's feed read first: its destruction of a stream thread A created.
    r.apply(pass(vec![StreamEvent::Destroyed { handle: 0xb1, ns: 50 }], vec![]));
    assert!(r.live.is_empty() && r.gone.is_empty());
    r.apply(pass(vec![created(0xb1, 40, None)], vec![]));
    assert!(r.live.is_empty(), "the waiting destruction was applied");
    assert_eq!(
        r.gone.back().map(|s| (s.handle, s.destroyed_ns)),
        Some((0xb1, Some(50)))
    );
    // Within one pass, out of order: sorted by time.
    r.apply(pass(
        vec![StreamEvent::Destroyed { handle: 0xb2, ns: 70 }, created(0xb2, 60, None)],
        vec![],
    ));
    assert!(!r.live.contains_key(&0xb2));
}

#[test]
fn a_handle_used_again_keeps_both_streams() {
    let mut r = Registry::default();
    r.apply(pass(
        vec![
            created(0xc1, 1, None),
            StreamEvent::Destroyed { handle: 0xc1, ns: 2 },
            created(0xc1, 3, None),
        ],
        vec![],
    ));
    assert_eq!(r.live[&0xc1].created_ns, 3);
    assert_eq!(r.gone.iter().filter(|s| s.handle == 0xc1).count(), 1);
    // A destruction older than the live stream is not its: it waits (and is never applied).
    r.apply(pass(vec![StreamEvent::Destroyed { handle: 0xc1, ns: 2 }], vec![]));
    assert_eq!(r.live[&0xc1].created_ns, 3);
    assert_eq!(r.in_order().iter().map(|s| s.created_ns).collect::<Vec<_>>(), [1, 3]);
}

#[test]
fn stacks_are_named_once_and_taken_from_the_records() {
    let mut r = Registry::default();
    r.apply(pass(vec![created(0xd1, 1, None)], vec![]));
    assert!(r.live[&0xd1].stack.is_some());
    r.name_stacks();
    // This test's addresses name no NPP code.
    let s = &r.live[&0xd1];
    assert_eq!((&s.stack, &s.named, s.attributed()), (&None, &None, (None, None)));
}
