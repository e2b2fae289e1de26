//! The listing server and its probes' end, with a stand-in listing (generated processes, no
//! GPU): what each answer was listed after, how many questions one listing answers, and what a
//! probe gets when NVML or the server fails.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use super::*;

/// A server whose listing `n` (from 1) gives one made-up process with pid `n`, after `delay`;
/// and the count of listings begun.
fn numbered_server(dir: &Path, delay: Duration) -> (ListingServer, PathBuf, Arc<AtomicU64>) {
    let path = socket_path(dir, "GPU-test");
    let begun = Arc::new(AtomicU64::new(0));
    let counter = begun.clone();
    let server = ListingServer::start(&path, move || {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        std::thread::sleep(delay);
        Ok(vec![DeviceProcess {
            pid: n as u32,
            used_bytes: Some(n << 20),
        }])
    })
    .unwrap();
    (server, path, begun)
}

#[test]
fn every_answer_comes_from_a_listing_begun_after_the_question() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, path, begun) = numbered_server(dir.path(), Duration::from_micros(200));
    let probes: Vec<_> = (0..6)
        .map(|_| {
            let (path, begun) = (path.clone(), begun.clone());
            std::thread::spawn(move || {
                let client = ListingClient::connect(&path).unwrap();
                for _ in 0..50 {
                    let before = begun.load(Ordering::SeqCst);
                    let listed = client.list().unwrap();
                    assert!(
                        u64::from(listed[0].pid) > before,
                        "listing {} answered a question asked after listing {before} began",
                        listed[0].pid
                    );
                }
            })
        })
        .collect();
    for p in probes {
        p.join().unwrap();
    }
}

#[test]
fn one_listing_answers_every_probe_that_asked_before_it_began() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, path, begun) = numbered_server(dir.path(), Duration::from_millis(20));
    let (probes, rounds) = (8, 5);
    let start = Arc::new(Barrier::new(probes));
    let threads: Vec<_> = (0..probes)
        .map(|_| {
            let (path, start) = (path.clone(), start.clone());
            std::thread::spawn(move || {
                let client = ListingClient::connect(&path).unwrap();
                start.wait();
                for _ in 0..rounds {
                    client.list().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let listings = begun.load(Ordering::SeqCst);
    let questions = (probes * rounds) as u64;
    assert!(listings < questions, "{listings} listings for {questions} questions");
}

#[test]
fn nvmls_error_reaches_the_probe_in_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = socket_path(dir.path(), "GPU-test");
    let _server = ListingServer::start(&path, || Err(GpuError::Nvml("Insufficient Permissions".into()))).unwrap();
    let err = ListingClient::connect(&path).unwrap().list().unwrap_err();
    assert!(err.to_string().contains("Insufficient Permissions"), "{err}");
}

#[test]
fn a_probe_whose_server_stopped_gets_an_error_that_names_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let (server, path, _) = numbered_server(dir.path(), Duration::ZERO);
    let client = ListingClient::connect(&path).unwrap();
    assert_eq!(client.list().unwrap()[0].pid, 1);
    drop(server);
    assert!(!path.exists(), "the socket outlived its server");
    let err = client.list().unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    let err = ListingClient::connect(&path).err().unwrap().to_string();
    assert!(err.contains("no listing server at"), "{err}");
}

#[test]
fn answers_keep_each_process_and_whether_it_has_a_figure() {
    let listed = vec![
        DeviceProcess {
            pid: 7,
            used_bytes: Some(u64::MAX - 1),
        },
        DeviceProcess {
            pid: u32::MAX,
            used_bytes: None,
        },
        DeviceProcess {
            pid: 0,
            used_bytes: Some(0),
        },
    ];
    for answer in [
        Ok(listed),
        Ok(Vec::new()),
        Err("NVML: Unknown Error — ünïcode".to_owned()),
    ] {
        let bytes = encode(&answer);
        assert_eq!(decode(&mut bytes.as_slice()).unwrap(), answer);
    }
    assert!(decode(&mut &b"X\0\0\0\0"[..]).is_err());
}
