//! The history page's groups: series grouped by primitive and geometry, each group where a series
//! has something to say with its chart of kernel time over runs, the rest by name.

use std::collections::BTreeMap;

use nppbench_history::changes::Findings;
use nppbench_history::series::History;

use super::{GroupView, QuietGroup};
use nppbench_history::rows::Kind;

use super::words::{Words, anchor, short_env};
use crate::charts::history_series::{self, Mark, SeriesLine};
use crate::error::ReportError;

/// Series grouped by primitive and geometry: the groups where a series has something to say
/// (`SeriesFindings::says_something`), each with its chart and series, and the rest by name alone (each chart
/// of a flat line costs tens of kilobytes, and a history of every function holds thousands).
pub(super) fn groups(
    history: &History,
    findings: &Findings,
    words: &Words<'_>,
) -> Result<(Vec<GroupView>, Vec<QuietGroup>), ReportError> {
    let mut grouped: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, s) in history.series.iter().enumerate() {
        grouped.entry((&s.key.primitive, &s.key.geometry)).or_default().push(i);
    }
    let (loud, quiet): (Vec<_>, Vec<_>) = grouped
        .into_iter()
        .partition(|(_, members)| members.iter().any(|&i| findings.series[i].says_something()));
    let quiet = quiet
        .into_iter()
        .map(|((primitive, geometry), members)| QuietGroup {
            title: format!("{primitive} {geometry}"),
            series: members.len(),
        })
        .collect();
    let drawn = loud
        .into_iter()
        .map(|((primitive, geometry), members)| {
            let title = format!("{primitive} {geometry}");
            let tp: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&i| history.series[i].key.kind == Kind::Throughput)
                .collect();
            let chart_svg = if tp.is_empty() {
                None
            } else {
                let lines: Vec<SeriesLine> = tp
                    .iter()
                    .map(|&i| {
                        let s = &history.series[i];
                        SeriesLine {
                            label: words.series_label(s),
                            points: s
                                .points
                                .iter()
                                .filter_map(|p| p.kernel_ns.map(|ns| (p.run as i32 + 1, ns / 1e3)))
                                .collect(),
                            change_points: findings.series[i].shifts.iter().map(|c| c.run as i32 + 1).collect(),
                        }
                    })
                    .collect();
                let mut marks: BTreeMap<i32, Vec<String>> = BTreeMap::new();
                for &i in &tp {
                    let s = &history.series[i];
                    for (point, changes) in &findings.series[i].env {
                        let words = marks.entry(s.points[*point].run as i32 + 1).or_default();
                        for c in changes {
                            let w = short_env(c);
                            if !words.contains(&w) {
                                words.push(w);
                            }
                        }
                    }
                }
                let marks: Vec<Mark> = marks
                    .into_iter()
                    .map(|(run, w)| Mark {
                        run,
                        label: match w.len() {
                            1 => w[0].clone(),
                            n => format!("{} (+{} more)", w[0], n - 1),
                        },
                    })
                    .collect();
                Some(
                    history_series::render(&format!("{title}: kernel time per call"), &lines, &marks)
                        .map_err(ReportError::Chart)?,
                )
            };
            let series = members
                .iter()
                .map(|&i| words.series_view(&history.series[i], &findings.series[i]))
                .collect();
            Ok(GroupView {
                anchor: anchor(&title),
                title,
                chart_svg,
                series,
            })
        })
        .collect::<Result<_, ReportError>>()?;
    Ok((drawn, quiet))
}
