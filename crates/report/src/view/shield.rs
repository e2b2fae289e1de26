//! The view of a shield.json (`nppbench shield --report`): the verdict in words first (what was
//! rewritten, for which hazard), what was left alone and why, what the shield cost, then every
//! call site.

use nppbench_model::{ShieldAction, ShieldReport, TraceEnd, TraceStreamKind};
use serde::Serialize;

/// The page's model: every number formatted.
#[derive(Debug, Serialize)]
pub struct ShieldPage {
    pub title: String,
    pub generated_by: String,
    /// SHIELDED, NOTHING TO SHIELD or NOT SHIELDED.
    pub status: &'static str,
    pub status_class: &'static str,
    pub verdict: String,
    pub notices: Vec<String>,
    pub totals: Vec<TotalRow>,
    /// The shield's time and staging memory, figures in words.
    pub cost: Vec<TotalRow>,
    pub sites: Vec<SiteRow>,
    pub shield_json: &'static str,
}

#[derive(Debug, Serialize)]
pub struct TotalRow {
    pub what: &'static str,
    pub calls: String,
}

#[derive(Debug, Serialize)]
pub struct SiteRow {
    pub function: String,
    pub geometry: String,
    pub stream: String,
    pub declared_flags: u32,
    pub action: String,
    pub rewritten: bool,
    pub calls: String,
    /// The shield's time per call at the site.
    pub per_call: String,
}

/// "leaks, races and computes wrong pixels", of the hazards set.
fn hazard_words(leak: bool, race: bool, wrong: bool) -> String {
    let words: Vec<&str> = [(leak, "leaks"), (race, "races"), (wrong, "computes wrong pixels")]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn action_words(a: ShieldAction) -> String {
    match a {
        ShieldAction::Rewritten { leak, race, wrong } => {
            let fix = if wrong { "staged" } else { "rewritten" };
            format!("{fix}: {}", hazard_words(leak, race, wrong))
        }
        ShieldAction::NotStaged { leak, race } if leak || race => {
            format!(
                "rewritten: {}; not staged: computes wrong pixels",
                hazard_words(leak, race, false)
            )
        }
        ShieldAction::NotStaged { .. } => "left alone: computes wrong pixels, could not be staged".into(),
        ShieldAction::NotHazardous => "left alone: not hazardous".into(),
        ShieldAction::UnknownFunction => "left alone: function not in the atlas".into(),
        ShieldAction::UnknownConfiguration => "left alone: configuration the atlas cannot judge".into(),
        ShieldAction::NoKnowledge => "left alone: no knowledge of this NPP".into(),
    }
}

fn ns_per_call(ns: u64, calls: u64) -> String {
    if calls == 0 {
        return "—".into();
    }
    let per = ns as f64 / calls as f64;
    if per >= 10_000.0 {
        format!("{:.1} µs", per / 1000.0)
    } else {
        format!("{per:.0} ns")
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

fn stream_words(kind: TraceStreamKind, non_blocking: Option<bool>) -> String {
    match (kind, non_blocking) {
        (TraceStreamKind::LegacyDefault, _) => "legacy default (NULL)".into(),
        (TraceStreamKind::LegacyHandle, _) => "cudaStreamLegacy".into(),
        (TraceStreamKind::PerThreadDefault, _) => "cudaStreamPerThread".into(),
        (TraceStreamKind::Created, Some(true)) => "created, non-blocking".into(),
        (TraceStreamKind::Created, Some(false)) => "created, blocking".into(),
        (TraceStreamKind::Created, None) => "created (flags not asked)".into(),
    }
}

fn step(s: Option<i32>) -> String {
    s.map_or_else(|| "—".into(), |s| s.to_string())
}

/// The page's model for `r`.
pub fn shield_page(r: &ShieldReport) -> ShieldPage {
    let t = &r.totals;
    let (status, status_class) = if t.rewritten > 0 {
        ("SHIELDED", "pass")
    } else if t.no_knowledge > 0 || t.calls == 0 {
        ("NOT SHIELDED", "fail")
    } else {
        ("NOTHING TO SHIELD", "pass")
    };
    let mut verdict = format!(
        "{} of {} NPP calls were passed a context declaring a non-blocking stream ({} whose configuration leaks, {} whose configuration races, {} whose configuration computes wrong pixels, run on staging copies at aligned pitches); {} were left alone.",
        t.rewritten,
        t.calls,
        t.rewritten_leak,
        t.rewritten_race,
        t.rewritten_wrong,
        t.left_alone()
    );
    if t.wrong_not_staged > 0 {
        verdict += &format!(
            " {} calls whose configuration computes wrong pixels could not be staged.",
            t.wrong_not_staged
        );
    }
    let notices = notices(r);
    let totals = totals(&r.totals);
    let cost = cost(r);
    let mut sites: Vec<&nppbench_model::ShieldSite> = r.sites.iter().collect();
    // Rewritten sites first, then the busiest.
    sites.sort_by_key(|s| {
        (
            !matches!(s.action, ShieldAction::Rewritten { .. }),
            std::cmp::Reverse(s.calls),
        )
    });
    ShieldPage {
        title: format!("Shield of {}", r.program.join(" ")),
        generated_by: super::format::rendered_by(),
        status,
        status_class,
        verdict,
        notices,
        totals,
        cost,
        sites: sites
            .into_iter()
            .map(|s| SiteRow {
                function: s.function.clone(),
                geometry: format!(
                    "{}×{}, steps {} / {}",
                    s.width,
                    s.height,
                    step(s.src_step),
                    step(s.dst_step)
                ),
                stream: stream_words(s.stream, s.stream_non_blocking),
                declared_flags: s.declared_flags,
                action: action_words(s.action),
                rewritten: matches!(s.action, ShieldAction::Rewritten { .. }),
                calls: s.calls.to_string(),
                per_call: ns_per_call(s.shield_ns, s.calls),
            })
            .collect(),
        shield_json: "shield.json",
    }
}

/// What the reader must know before the numbers: no knowledge, how the program ended, sites
/// past the table's room.
fn notices(r: &ShieldReport) -> Vec<String> {
    let mut notices = Vec::new();
    if let Some(why) = &r.knowledge_missing {
        notices.push(why.clone());
    }
    match &r.end {
        TraceEnd::Signal { name, .. } => notices.push(format!("The program was ended by {name}.")),
        TraceEnd::Running => {
            notices.push("The program ended without its exit path: the counts are those of the last write.".into())
        }
        TraceEnd::Exited { .. } => {}
    }
    if r.calls_at_sites_not_listed > 0 {
        notices.push(format!(
            "{} calls at sites past the table's room are counted in the totals only.",
            r.calls_at_sites_not_listed
        ));
    }
    notices
}

/// What the shield cost: its time on the program's threads, and the staging's copies and
/// memory.
fn cost(r: &ShieldReport) -> Vec<TotalRow> {
    let c = &r.cost;
    let t = &r.totals;
    let mut rows = vec![
        TotalRow {
            what: "time in the shield, every call",
            calls: format!("{:.3} ms", c.shield_ns as f64 / 1e6),
        },
        TotalRow {
            what: "time in the shield a call",
            calls: ns_per_call(c.shield_ns, t.calls),
        },
        TotalRow {
            what: "time in the shield a call left alone",
            calls: ns_per_call(c.left_alone_ns, t.left_alone()),
        },
    ];
    if let Some(peak) = c.staging_peak_bytes {
        rows.push(TotalRow {
            what: "bytes the staged calls copied",
            calls: mib(c.staged_bytes),
        });
        rows.push(TotalRow {
            what: "staging memory held at most (kept by the pool)",
            calls: mib(peak),
        });
    }
    rows
}

/// The calls by what the shield did.
fn totals(t: &nppbench_model::ShieldTotals) -> Vec<TotalRow> {
    vec![
        TotalRow {
            what: "calls seen",
            calls: t.calls.to_string(),
        },
        TotalRow {
            what: "rewritten",
            calls: t.rewritten.to_string(),
        },
        TotalRow {
            what: "rewritten: the configuration leaks",
            calls: t.rewritten_leak.to_string(),
        },
        TotalRow {
            what: "rewritten: the configuration races",
            calls: t.rewritten_race.to_string(),
        },
        TotalRow {
            what: "rewritten: the configuration computes wrong pixels (staged)",
            calls: t.rewritten_wrong.to_string(),
        },
        TotalRow {
            what: "computes wrong pixels, could not be staged",
            calls: t.wrong_not_staged.to_string(),
        },
        TotalRow {
            what: "left alone: not hazardous",
            calls: t.not_hazardous.to_string(),
        },
        TotalRow {
            what: "left alone: function not in the atlas",
            calls: t.unknown_function.to_string(),
        },
        TotalRow {
            what: "left alone: configuration the atlas cannot judge",
            calls: t.unknown_configuration.to_string(),
        },
        TotalRow {
            what: "left alone: no knowledge of the NPP loaded",
            calls: t.no_knowledge.to_string(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use nppbench_model::{Hazard, SHIELD_SCHEMA_VERSION, ShieldSite, ShieldTotals};

    use super::*;

    fn report(actions: &[(ShieldAction, u64)]) -> ShieldReport {
        let mut totals = ShieldTotals::default();
        let sites = actions
            .iter()
            .map(|&(action, calls)| {
                totals.add(action, calls);
                ShieldSite {
                    function: "nppiCopy_8u_C1R_Ctx".into(),
                    width: 31,
                    height: 8,
                    src_step: Some(64),
                    dst_step: None,
                    stream: TraceStreamKind::Created,
                    stream_non_blocking: Some(false),
                    declared_flags: 0,
                    action,
                    calls,
                    shield_ns: 300 * calls,
                }
            })
            .collect();
        ShieldReport {
            schema_version: SHIELD_SCHEMA_VERSION,
            program: vec!["svc".into()],
            pid: 1,
            forked_from: None,
            hazards: vec![Hazard::Leak, Hazard::Race],
            npp_version: Some("13.0.1".into()),
            knowledge_version: Some("13.0.1.2".into()),
            knowledge_missing: None,
            npp_libraries: vec![],
            end: TraceEnd::Exited { code: Some(0) },
            totals,
            sites,
            calls_at_sites_not_listed: 0,
            cost: nppbench_model::ShieldCost::default(),
        }
    }

    #[test]
    fn the_page_leads_with_what_was_rewritten_and_lists_rewritten_sites_first() {
        let p = shield_page(&report(&[
            (ShieldAction::UnknownFunction, 9),
            (
                ShieldAction::Rewritten {
                    leak: true,
                    race: true,
                    wrong: false,
                },
                2,
            ),
        ]));
        assert_eq!(p.status, "SHIELDED");
        assert!(p.verdict.starts_with("2 of 11 NPP calls were passed a context declaring a non-blocking stream (2 whose configuration leaks, 2 whose configuration races, 0 whose configuration computes wrong pixels"), "{}", p.verdict);
        assert_eq!(p.sites[0].action, "rewritten: leaks and races");
        assert_eq!(p.sites[0].per_call, "300 ns");
        assert_eq!(p.sites[0].stream, "created, blocking");
        assert_eq!(p.sites[1].action, "left alone: function not in the atlas");
    }

    #[test]
    fn staged_calls_and_calls_not_staged_are_said_and_the_staging_costed() {
        let mut r = report(&[
            (
                ShieldAction::Rewritten {
                    leak: false,
                    race: true,
                    wrong: true,
                },
                3,
            ),
            (
                ShieldAction::NotStaged {
                    leak: true,
                    race: false,
                },
                1,
            ),
            (
                ShieldAction::NotStaged {
                    leak: false,
                    race: false,
                },
                1,
            ),
        ]);
        r.cost = nppbench_model::ShieldCost {
            shield_ns: 5 * 30_000,
            left_alone_ns: 0,
            staged_bytes: 6 << 20,
            staging_peak_bytes: Some(2 << 20),
        };
        let p = shield_page(&r);
        assert!(
            p.verdict.contains("3 whose configuration computes wrong pixels"),
            "{}",
            p.verdict
        );
        assert!(
            p.verdict
                .ends_with(" 2 calls whose configuration computes wrong pixels could not be staged.")
        );
        let actions: Vec<&str> = p.sites.iter().map(|s| s.action.as_str()).collect();
        assert_eq!(
            actions,
            [
                "staged: races and computes wrong pixels",
                "rewritten: leaks; not staged: computes wrong pixels",
                "left alone: computes wrong pixels, could not be staged"
            ]
        );
        let cost: Vec<(&str, &str)> = p.cost.iter().map(|c| (c.what, c.calls.as_str())).collect();
        assert!(cost.contains(&("time in the shield a call", "30.0 µs")), "{cost:?}");
        assert!(
            cost.contains(&("staging memory held at most (kept by the pool)", "2.0 MiB")),
            "{cost:?}"
        );
    }

    #[test]
    fn a_run_without_knowledge_is_not_shielded() {
        let mut r = report(&[(ShieldAction::NoKnowledge, 3)]);
        r.knowledge_missing = Some("no knowledge for the NPP version loaded (11.4.0)".into());
        let p = shield_page(&r);
        assert_eq!((p.status, p.status_class), ("NOT SHIELDED", "fail"));
        assert_eq!(p.notices, ["no knowledge for the NPP version loaded (11.4.0)"]);
    }
}
