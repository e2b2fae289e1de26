//! The feeds, read as the writer reads them: order across chunks, publication, and no call lost
//! while many threads append and a reader reads beside them; streams created (in a call, or
//! outside one with their stack) and destroyed travel with the calls.

use super::*;
use std::sync::{Mutex, MutexGuard, PoisonError};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stack stand-in for a stream created outside a call.
fn stack_of(n: usize) -> Box<[usize]> {
    (0..n).map(|i| 0x1000 + i).collect()
}

/// Writes [`stack_of`]`(n)` as a creating stack is written.
fn write_stack(n: usize) -> impl FnOnce(&mut [usize]) -> usize {
    move |frames| {
        frames[..n].copy_from_slice(&stack_of(n));
        n
    }
}

/// A call event told apart by `n`.
fn event(n: u64) -> CallEvent {
    CallEvent {
        start_ns: n,
        in_npp_ns: 2 * n,
        width: n as i32,
        symbol: (n % 7) as u16,
        bits: CallEvent::SRC_STEP,
        ..CallEvent::default()
    }
}

/// Runs `f` on a new thread, which returns its feed after `f`.
fn on_a_new_thread(f: impl FnOnce() + Send + 'static) -> &'static Feed {
    std::thread::spawn(move || {
        f();
        local::own_feed().expect("the thread registered")
    })
    .join()
    .unwrap()
}

fn read_all(cursor: &mut Cursor) -> Vec<Event> {
    let mut events = Vec::new();
    cursor.read(|e| events.push(e));
    events
}

#[test]
fn calls_and_the_streams_they_created_are_read_in_order_across_chunks() {
    refill();
    let n = 3 * RECORDS as u64 + 5;
    let feed = on_a_new_thread(move || {
        for i in 0..n {
            let call = enter((i % 7) as u16).expect("not inside a call");
            assert!(enter(1).is_none(), "a call inside a call is NPP's, not the program's");
            if i % 10 == 0 {
                let stack = |_: &mut [usize]| panic!("no stack is taken inside a call");
                assert_eq!(stream_created(0x5000 + i, i, stack), Some((i % 7) as u16));
            }
            call.leave();
            call.append(event(i), || 40);
        }
        assert_eq!(stream_created(0x6000, n, write_stack(3)), None, "outside a call");
        // Deeper than a record holds: over several, read back as one.
        assert_eq!(stream_created(0x6001, n, write_stack(20)), None);
        stream_destroyed(0x6000, n + 1);
    });
    assert_ne!(feed.tid(), 0);
    let mut cursor = feed.cursor();
    let events = read_all(&mut cursor);
    let mut expected = Vec::new();
    for i in 0..n {
        if i % 10 == 0 {
            expected.push(Event::Created {
                handle: 0x5000 + i,
                ns: i,
                symbol: Some((i % 7) as u16),
                stack: None,
            });
        }
        expected.push(Event::Call(CallEvent {
            overhead_ns: 40,
            ..event(i)
        }));
    }
    expected.push(Event::Created {
        handle: 0x6000,
        ns: n,
        symbol: None,
        stack: Some(stack_of(3)),
    });
    expected.push(Event::Created {
        handle: 0x6001,
        ns: n,
        symbol: None,
        stack: Some(stack_of(20)),
    });
    expected.push(Event::Destroyed {
        handle: 0x6000,
        ns: n + 1,
    });
    assert_eq!(events, expected);
    assert_eq!(read_all(&mut cursor), [], "each event is read once");
    cursor.retire();
    assert!(cursor.chunk.is_null());
    assert_eq!(read_all(&mut cursor), []);
}

#[test]
fn a_record_is_read_only_once_published_and_overhead_saturates() {
    refill();
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let (told, hear) = std::sync::mpsc::channel::<&'static Feed>();
    let t = std::thread::spawn(move || {
        let call = enter(3).unwrap();
        assert_eq!(stream_created(0xabc, 77, write_stack(1)), Some(3));
        told.send(local::own_feed().unwrap()).unwrap();
        wait.recv().unwrap();
        call.leave();
        call.append(event(9), || u64::MAX);
    });
    let feed = hear.recv().unwrap();
    let mut cursor = feed.cursor();
    assert_eq!(
        read_all(&mut cursor),
        [Event::Created {
            handle: 0xabc,
            ns: 77,
            symbol: Some(3),
            stack: None,
        }]
    );
    go.send(()).unwrap();
    t.join().unwrap();
    assert_eq!(
        read_all(&mut cursor),
        [Event::Call(CallEvent {
            overhead_ns: u32::MAX,
            ..event(9)
        })]
    );
}

#[test]
fn many_threads_lose_no_call_while_the_reader_reads_and_recycles() {
    const THREADS: u64 = 8;
    const CALLS: u64 = 20 * RECORDS as u64 + 3;
    refill();
    let done = std::sync::atomic::AtomicBool::new(false);
    let feeds = Mutex::new(Vec::new());
    let mut seen: Vec<Vec<u64>> = Vec::new();
    std::thread::scope(|s| {
        let producers: Vec<_> = (0..THREADS)
            .map(|t| {
                let feeds = &feeds;
                s.spawn(move || {
                    // A stream created first registers the thread, as CUPTI's callback does.
                    stream_created(0x9000 + t, 0, write_stack(0));
                    lock(feeds).push(local::own_feed().unwrap());
                    for i in 0..CALLS {
                        let call = enter(0).unwrap();
                        call.leave();
                        call.append(event(t * CALLS + i), || 1);
                    }
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let mut cursors: Vec<(&'static Feed, Cursor)> = Vec::new();
            let mut starts: Vec<Vec<u64>> = Vec::new();
            loop {
                let finished = done.load(Ordering::Acquire);
                for f in lock(&feeds).iter().skip(cursors.len()) {
                    cursors.push((f, f.cursor()));
                    starts.push(Vec::new());
                }
                for ((_, c), seen) in cursors.iter_mut().zip(&mut starts) {
                    c.read(|e| match e {
                        Event::Call(c) => seen.push(c.start_ns),
                        Event::Created { stack, .. } => assert_eq!(stack, Some(stack_of(0))),
                        Event::Destroyed { .. } => panic!("no stream was destroyed"),
                    });
                }
                if finished {
                    return starts;
                }
                std::thread::yield_now();
            }
        });
        producers.into_iter().for_each(|p| p.join().unwrap());
        done.store(true, Ordering::Release);
        seen = reader.join().unwrap();
    });
    assert_eq!(seen.len(), THREADS as usize);
    for starts in &seen {
        let first = starts[0];
        assert_eq!(first % CALLS, 0);
        let expected: Vec<u64> = (first..first + CALLS).collect();
        assert_eq!(starts, &expected, "every call of one thread, once, in order");
    }
}

/// Every thread gets a feed of its own: from the ring of spares while it has some, made on its
/// call once the ring is empty (more threads than spares before the writer refills it), and
/// again from the ring once refilled; threads registering at once never share one.
#[test]
fn threads_take_spares_then_make_their_own_and_never_share_a_feed() {
    refill();
    let mut feeds: Vec<*const Feed> = (0..SPARE + 8)
        .map(|_| on_a_new_thread(|| assert!(enter(0).is_some())) as *const Feed)
        .collect();
    refill();
    let at_once: Vec<*const Feed> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| {
                    assert!(enter(0).is_some());
                    local::own_feed().unwrap() as *const Feed as usize
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap() as *const Feed).collect()
    });
    feeds.extend(at_once);
    let n = feeds.len();
    feeds.sort();
    feeds.dedup();
    assert_eq!(feeds.len(), n, "two threads shared a feed");
}
