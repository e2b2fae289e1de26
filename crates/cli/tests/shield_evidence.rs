//! The shield's GPU evidence (`reports/shield/`, written by `docs/wrong-shield-runs.sh` and
//! `docs/shield-runs.sh` on H200s) read back with today's code: every shield.json, of either
//! schema, reads and renders its page. (What those runs showed, wrong pixels bare and none under
//! the shield, is in docs/shield.md; the test that re-read the programs' logs for it could not
//! fail whatever the code did, and went with issue #46.)

use std::path::{Path, PathBuf};

use nppbench_model::ShieldReport;

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
