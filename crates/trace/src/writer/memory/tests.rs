//! The memory scope chosen from generated samples with known answers (none is a measurement),
//! and the thinning of samples.

use super::*;

const MIB: u64 = 1 << 20;

/// Generated, not a measurement: a sample at `t_s` with the process's figure (where NVML listed
/// the pid) and each device's used memory.
fn raw(t_s: f64, process_mib: Option<u64>, device_mib: &[Option<u64>]) -> RawSample {
    RawSample {
        t_s,
        process_bytes: process_mib.map(|m| m * MIB),
        device_used: device_mib.iter().map(|d| d.map(|m| m * MIB)).collect(),
        live_threads: 3,
        live_streams: 1,
    }
}

fn mib(m: &Memory) -> Vec<Option<u64>> {
    m.samples.iter().map(|s| s.device_bytes.map(|b| b / MIB)).collect()
}

#[test]
fn the_processs_own_memory_is_kept_where_nvml_lists_the_pid() {
    // Generated: outside a container, the pid is listed once the process has a context.
    let samples = [
        raw(0.1, None, &[Some(500), Some(900)]),
        raw(0.6, Some(520), &[Some(1020), Some(900)]),
        raw(1.1, Some(566), &[Some(1066), Some(900)]),
    ];
    let m = resolve(&samples, &[0], None, 42);
    assert_eq!((m.device_wide.as_deref(), m.missing.as_deref()), (None, None));
    assert_eq!(mib(&m), [None, Some(520), Some(566)], "never mixed with device figures");
}

#[test]
fn in_a_container_the_used_memory_of_the_devices_called_is_summed_instead() {
    // Generated: NVML never lists the container's pid; the calls named device 1 only.
    let samples = [
        raw(0.1, None, &[Some(7000), Some(538)]),
        raw(0.6, None, &[Some(7100), Some(620)]),
        raw(1.1, None, &[None, Some(704)]),
    ];
    let m = resolve(&samples, &[1], None, 667);
    assert_eq!((m.device_wide.as_deref(), m.missing.as_deref()), (Some(&[1][..]), None));
    assert_eq!(mib(&m), [Some(538), Some(620), Some(704)], "device 0 is not summed");
    assert_eq!((m.samples[2].t_s, m.samples[2].live_threads), (1.1, 3));
}

#[test]
fn without_a_device_named_every_device_is_summed_and_a_gap_is_no_figure() {
    // Generated: no catalogued call named a device yet.
    let samples = [
        raw(0.1, None, &[Some(100), Some(200)]),
        raw(0.6, None, &[Some(150), None]),
    ];
    let m = resolve(&samples, &[], None, 667);
    assert_eq!(m.device_wide.as_deref(), Some(&[0, 1][..]));
    assert_eq!(mib(&m), [Some(300), None]);
}

#[test]
fn with_neither_figure_the_samples_carry_none_and_say_why() {
    // Generated: NVML answers neither the processes nor the used memory.
    let samples = [raw(0.1, None, &[None]), raw(0.6, None, &[None])];
    let m = resolve(&samples, &[0], None, 667);
    assert_eq!((m.device_wide.as_deref(), mib(&m)), (None, vec![None, None]));
    let why = m.missing.unwrap();
    assert!(why.contains("pid 667") && why.contains("container"), "{why}");
    let none = resolve(&[], &[0], None, 667);
    assert!(none.missing.unwrap().contains("no sample was taken"));
    let unloaded = resolve(&samples, &[0], Some("NVML could not be initialised: x"), 667);
    assert_eq!(unloaded.missing.as_deref(), Some("NVML could not be initialised: x"));
    assert_eq!(unloaded.samples.len(), 2);
}

#[test]
fn threads_are_read_from_proc_status() {
    assert_eq!(threads_in("Name:\tx\nThreads:\t17\nSigQ:\t0/1\n"), 17);
    assert!(live_threads() >= 1);
}

#[test]
fn samples_are_thinned_evenly_and_the_interval_follows() {
    let mut s = Samples::new(0.5);
    let n = MEMORY_SAMPLES_KEPT * 3;
    for i in 0..n {
        s.push(raw(i as f64 * 0.5, None, &[]));
    }
    assert!(s.list.len() <= MEMORY_SAMPLES_KEPT, "{}", s.list.len());
    assert!(s.list.len() > MEMORY_SAMPLES_KEPT / 2);
    assert_eq!(s.interval_s, 2.0);
    let gaps: Vec<f64> = s.list.windows(2).map(|w| w[1].t_s - w[0].t_s).collect();
    assert!(gaps.iter().all(|g| *g == 2.0), "{:?}", &gaps[..5]);
}

#[test]
fn without_nvml_memory_is_missing_with_a_reason() {
    let _driver = crate::writer::sync::lock(&crate::DRIVER_TESTS);
    let s = Sampler::new();
    if s.nvml.is_none() {
        assert!(s.missing.as_deref().unwrap().contains("NVML"));
        let raw = s.sample(0.1, 1, 0);
        assert_eq!((raw.process_bytes, raw.device_used.len()), (None, 0));
        assert!(s.nvml_indices(&BTreeSet::from([0])).is_empty());
    }
}
