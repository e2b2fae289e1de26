//! The shield's side off the program's threads: at start, the plan read and compiled
//! ([`start`]); the report ([`ShieldReport`]) built from the counts (`shield/sites.rs`) and
//! written atomically, every half second by a thread of its own where the process does not also
//! trace (which then also waits for the signals' final write: `recorder/signals.rs`), and once
//! more at exit, `_exit` or the signal (`writer/mod.rs`). A forked child keeps shielding and
//! writes its own report, `shield-<pid>.json` beside the parent's, counting its calls after the
//! fork; so does a process the program started.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use nppbench_model::{
    Hazard, SHIELD_SCHEMA_VERSION, ShieldAction, ShieldCost, ShieldPlan, ShieldReport, ShieldSite, ShieldTotals,
    TraceEnd, TraceStreamKind,
};

use crate::protocol::FLUSH_INTERVAL_S;
use crate::recorder::interposed::SYMBOLS;
use crate::recorder::signals;
use crate::shield::decide::{self, action};
use crate::shield::{self, sites, stage};
use crate::writer::sync::lock_until;

/// Where the report goes and for whom, fixed at start.
struct Config {
    out: PathBuf,
    /// The process that started: a forked copy writes beside it.
    pid: u32,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// Set once the final report is written: nothing more is.
static FINISHED: Mutex<bool> = Mutex::new(false);

/// Reads and compiles the plan at `plan`, the report going to `out` (or beside it, for a process
/// the program started). Says on stderr why where it cannot (the program then runs unshielded).
pub(crate) fn start(plan: &Path, out: PathBuf, descendant: bool) -> bool {
    let read = std::fs::read(plan)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<ShieldPlan>(&b).map_err(|e| e.to_string()));
    let plan = match read {
        Ok(p) if p.schema_version == SHIELD_SCHEMA_VERSION => p,
        Ok(p) => {
            eprintln!(
                "nppbench-shield: {} has plan schema {}, this interposer reads {SHIELD_SCHEMA_VERSION}: not shielding",
                plan.display(),
                p.schema_version
            );
            return false;
        }
        Err(e) => {
            eprintln!("nppbench-shield: reading {}: {e}: not shielding", plan.display());
            return false;
        }
    };
    let pid = std::process::id();
    let out = if descendant {
        out.with_file_name(ShieldReport::descendant_file_name(pid))
    } else {
        out
    };
    let _ = CONFIG.set(Config { out, pid });
    shield::install(&plan)
}

/// The stream class of a site's key as the report names it.
fn stream_kind(class: u8) -> TraceStreamKind {
    match class {
        0 => TraceStreamKind::LegacyDefault,
        1 => TraceStreamKind::LegacyHandle,
        2 => TraceStreamKind::PerThreadDefault,
        _ => TraceStreamKind::Created,
    }
}

pub(crate) fn shield_action(code: u8) -> ShieldAction {
    let (leak, race) = (code & action::LEAK != 0, code & action::RACE != 0);
    match code {
        c if c & action::NOT_STAGED != 0 => ShieldAction::NotStaged {
            leak: leak && action::rewritten(c),
            race: race && action::rewritten(c),
        },
        c if action::rewritten(c) => ShieldAction::Rewritten {
            leak,
            race,
            wrong: c & action::WRONG != 0,
        },
        action::NOT_HAZARDOUS => ShieldAction::NotHazardous,
        action::UNKNOWN_FUNCTION => ShieldAction::UnknownFunction,
        action::NO_KNOWLEDGE => ShieldAction::NoKnowledge,
        _ => ShieldAction::UnknownConfiguration,
    }
}

fn version_name(v: u64) -> Option<String> {
    (v != 0).then(|| format!("{}.{}.{}", v >> 32, (v >> 16) & 0xffff, v & 0xffff))
}

/// The report as the counts stand.
pub(crate) fn report(end: TraceEnd) -> Option<ShieldReport> {
    let cfg = CONFIG.get()?;
    let table = shield::TABLE.get()?;
    let mut merged: BTreeMap<([u64; 3], u8), (u64, u64)> = BTreeMap::new();
    sites::each(|k, a, calls, ns| {
        let m = merged.entry((k, a)).or_default();
        m.0 += calls;
        m.1 += ns;
    });
    let mut totals = ShieldTotals::default();
    let mut cost = ShieldCost::default();
    let mut out: Vec<ShieldSite> = merged
        .into_iter()
        .map(|((k, a), (calls, ns))| {
            let u = sites::unpack(k);
            let action = shield_action(a);
            totals.add(action, calls);
            cost.shield_ns += ns;
            if !action.rewrites() {
                cost.left_alone_ns += ns;
            }
            ShieldSite {
                function: SYMBOLS.get(usize::from(u.symbol)).map_or("?", |s| *s).to_owned(),
                width: u.width,
                height: u.height,
                src_step: u.src_step,
                dst_step: u.dst_step,
                stream: stream_kind(u.stream_class),
                stream_non_blocking: u.stream_nb,
                declared_flags: u.declared_flags,
                action,
                calls,
                shield_ns: ns,
            }
        })
        .collect();
    out.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.function.cmp(&b.function)));
    let mut not_listed = 0;
    for (code, n) in sites::NOT_LISTED.iter().enumerate() {
        let n = n.load(Relaxed);
        if n > 0 {
            totals.add(shield_action(code as u8), n);
            not_listed += n;
        }
    }
    // Unlisted sites' time is counted as a whole, in the shield's total only.
    cost.shield_ns += sites::NOT_LISTED_NS.load(Relaxed);
    cost.staged_bytes = stage::COPIED.load(Relaxed);
    let peak = stage::PEAK.load(Relaxed);
    cost.staging_peak_bytes = (peak > 0).then_some(peak);
    let loaded = version_name(decide::LOADED.load(Relaxed));
    let knowledge_version = decide::active_name(table).map(str::to_owned);
    let known: Vec<&str> = table.versions.iter().map(|v| v.name.as_str()).collect();
    let knowledge_missing = match (&knowledge_version, totals.no_knowledge) {
        (Some(_), _) => None,
        (None, 0) if totals.calls == 0 => Some("no catalogued NPP function was called".to_owned()),
        (None, _) => Some(format!(
            "no knowledge for the NPP version loaded ({}); the atlas runs given measured {}",
            loaded.as_deref().unwrap_or("nppGetLibVersion did not answer"),
            known.join(", ")
        )),
    };
    let pid = std::process::id();
    let mut hazards = Vec::new();
    if table.leak {
        hazards.push(Hazard::Leak);
    }
    if table.race {
        hazards.push(Hazard::Race);
    }
    if table.wrong {
        hazards.push(Hazard::Wrong);
    }
    Some(ShieldReport {
        schema_version: SHIELD_SCHEMA_VERSION,
        program: super::program(),
        pid,
        forked_from: (pid != cfg.pid).then_some(cfg.pid),
        hazards,
        npp_version: loaded,
        knowledge_version,
        knowledge_missing,
        npp_libraries: super::symbolise::npp_libraries(),
        end,
        totals,
        sites: out,
        calls_at_sites_not_listed: not_listed,
        cost,
    })
}

/// Writes the report as it stands (a forked copy beside the parent's), unless the final one is
/// written; `end` other than `Running` makes this the final one.
pub(crate) fn write(end: TraceEnd) {
    let Some(cfg) = CONFIG.get() else { return };
    let Some(mut finished) = lock_until(&FINISHED, Instant::now() + Duration::from_millis(200)) else {
        return;
    };
    let pid = std::process::id();
    // A forked child has its own copy of the flag: it writes its own report.
    if *finished && pid == cfg.pid {
        return;
    }
    let final_write = !matches!(end, TraceEnd::Running);
    let Some(report) = report(end) else { return };
    let path = if pid == cfg.pid {
        cfg.out.clone()
    } else {
        cfg.out.with_file_name(ShieldReport::descendant_file_name(pid))
    };
    let _ = write_atomic(&path, &report);
    *finished = final_write && pid == cfg.pid;
}

fn write_atomic(path: &Path, report: &ShieldReport) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let text = serde_json::to_vec_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, [text.as_slice(), b"\n"].concat())?;
    std::fs::rename(&tmp, path)
}

/// The shield's own thread where the process does not also trace: a report every
/// [`FLUSH_INTERVAL_S`], and the final one when a signal's handler asks; the CUDA driver the
/// program mapped looked up at each tick.
pub(crate) fn thread() {
    signals::block_on_this_thread();
    let flush = Duration::from_secs_f64(FLUSH_INTERVAL_S);
    loop {
        // As the writer does: a call on a created stream whose rule reads its flags then never
        // pays for looking the driver up.
        crate::recorder::driver::prepare();
        let until = Instant::now() + flush;
        while Instant::now() < until && signals::pending().is_none() {
            signals::wait(until.saturating_duration_since(Instant::now()));
        }
        if let Some(sig) = signals::pending() {
            write(TraceEnd::Signal {
                signal: sig,
                name: signals::name(sig),
            });
            signals::flushed();
            return;
        }
        write(TraceEnd::Running);
    }
}
