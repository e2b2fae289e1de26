//! The shield's GPU evidence (`reports/shield/`, written by `docs/wrong-shield-runs.sh` and
//! `docs/shield-runs.sh` on H200s) read back with today's code: every shield.json, of either
//! schema, reads and renders its page; and the wrong-pixel runs say what the issue asks of them:
//! the program's own count of wrong pixels above zero bare and with the wrong hazard off, zero
//! under the shield, and the shield's report staging exactly the calls the bare run found wrong.

use std::path::{Path, PathBuf};

use nppbench_model::{Hazard, ShieldReport};

fn evidence() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/shield")
}

fn reports(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            reports(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") && !p.ends_with("plan.json") {
            out.push(p);
        }
    }
}

fn read(p: &Path) -> ShieldReport {
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_committed_shield_report_reads_and_renders() {
    let mut all = Vec::new();
    reports(&evidence(), &mut all);
    assert!(all.len() >= 10, "{all:?}");
    let out = tempfile::tempdir().unwrap();
    let mut schemas = std::collections::BTreeSet::new();
    for p in &all {
        let r = read(p);
        schemas.insert(r.schema_version);
        let calls: u64 = r.sites.iter().map(|s| s.calls).sum::<u64>() + r.calls_at_sites_not_listed;
        assert_eq!(calls, r.totals.calls, "{}", p.display());
        nppbench_report::render_shield_to_dir(&r, out.path()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    }
    assert_eq!(
        schemas.into_iter().collect::<Vec<_>>(),
        [1, 2],
        "reports of both schemas"
    );
}

/// "wrong pixels: N in C of T calls", the program's last count.
fn wrong(log: &Path) -> (u64, u64, u64) {
    let text = std::fs::read_to_string(log).unwrap();
    let line = text.lines().rfind(|l| l.starts_with("wrong pixels: ")).unwrap();
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    (n[0], n[1], n[2])
}

#[test]
fn the_wrong_pixel_runs_are_wrong_bare_and_right_shielded() {
    let runs: Vec<PathBuf> = std::fs::read_dir(evidence())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("wrong-h200-"))
        .collect();
    assert!(!runs.is_empty());
    for d in runs {
        let (pixels, calls, total) = wrong(&d.join("wrong-bare.log"));
        assert!(
            pixels > 0 && calls > 0,
            "{}: NPP computed wrong pixels bare",
            d.display()
        );
        assert_eq!(wrong(&d.join("wrong-shield.log")), (0, 0, total), "{}", d.display());
        let shielded = read(&d.join("wrong-shield/shield.json"));
        assert_eq!(shielded.totals.calls, total);
        assert_eq!(
            shielded.totals.rewritten_wrong, calls,
            "the calls staged are the calls wrong bare"
        );
        assert_eq!(shielded.totals.wrong_not_staged, 0);
        let off = read(&d.join("wrong-leak-race-only/shield.json"));
        assert!(!off.hazards.contains(&Hazard::Wrong));
        assert_eq!(off.totals.rewritten_wrong, 0);
        assert_eq!(wrong(&d.join("wrong-leak-race-only.log")), (pixels, calls, total));
        for r in 1..=3 {
            let (p, _, _) = wrong(&d.join(format!("cost-wrong-shield-{r}.log")));
            assert_eq!(p, 0, "{}: round {r}", d.display());
            let c = read(&d.join(format!("cost-overhead-shield-{r}/shield.json")));
            let alone = c.cost.per_call_left_alone_ns(&c.totals).unwrap();
            assert!(alone < 1000.0, "{}: {alone} ns a call left alone", d.display());
        }
    }
}
