//! The page of every function, from made-up entries and call lines (labelled so: no GPU wrote
//! them): the verdict first, every function once with its state, the flagged first, the counts
//! adding up, functions.csv a row per function, and each designed function's GB/s at 1080p.

use nppbench_analysis::calls::CallLine;
use nppbench_analysis::calls::design::{ShapeLine, Throughput, throughput};
use nppbench_analysis::catalogue::{Entry, judge, judge_designed};

fn entries() -> Vec<Entry> {
    let none: Vec<String> = Vec::new();
    vec![
        Entry::new("nppiAbs_8u_C1R_Ctx", Some("nppial"), &none),
        Entry::new("nppiAbs_16s_C1R_Ctx", Some("nppial"), &none),
        Entry::new("nppiBee_8u_C1R_Ctx", Some("nppig"), &none),
        Entry::new(
            "nppiCee_8u_C1R_Ctx",
            None,
            &["not exported: no library of this version exports it".to_owned()],
        ),
    ]
}

fn calls() -> Vec<CallLine> {
    [
        r#"{"symbol":"nppiAbs_8u_C1R_Ctx","status":0,"unaligned_error":"CUDA_ERROR_MISALIGNED_ADDRESS"}"#,
        r#"{"symbol":"nppiAbs_16s_C1R_Ctx","status":0,"unaligned_status":0,"unaligned_differing_bytes":0}"#,
    ]
    .iter()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

#[test]
fn the_page_leads_with_what_is_flagged_and_lists_every_function_once() {
    let c = judge("13.0.1.2", &entries(), &calls(), None);
    let r = nppbench_report::render_catalogue(&c, true).unwrap();
    let html = &r.index_html;
    assert!(
        html.contains("<span class=\"badge\">LEADS</span>"),
        "a lead, no measured hazard"
    );
    let headline = html.find("class=\"headline\"").unwrap();
    assert!(headline < html.find("<table").unwrap() && headline < html.find("<svg").unwrap());
    assert!(html.contains("1 of the 4 image functions NPP 13.0.1.2&#x27;s headers declare are flagged"));
    let table = &html[html.find("id=\"catalogue-table\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    for e in entries() {
        assert_eq!(
            table.matches(&format!("<code>{}</code>", e.symbol)).count(),
            1,
            "{}",
            e.symbol
        );
    }
    // The flagged first.
    assert!(table.find("nppiAbs_8u_C1R_Ctx").unwrap() < table.find("nppiAbs_16s_C1R_Ctx").unwrap());
    assert!(table.contains("left the CUDA context dead at an unaligned source step (CUDA_ERROR_MISALIGNED_ADDRESS)"));
    assert!(table.contains("exported by no library"));
    assert!(
        html.contains("No knowledge of NPP 13.0.1.2"),
        "the notice says what is missing"
    );
    assert_eq!(r.functions_csv.lines().count(), 1 + entries().len());
    assert!(
        r.functions_csv
            .starts_with("symbol,library,family,state,flagged,detail,rules,gbps_1080p\n")
    );
}

#[test]
fn a_page_without_calls_says_so() {
    let c = judge("12.2.3.2", &entries(), &[], None);
    let html = nppbench_report::render_catalogue(&c, false).unwrap().index_html;
    assert!(html.contains("<span class=\"badge\">NOTHING FLAGGED</span>"));
    assert!(html.contains("No call lines were given (--calls)"));
    assert!(html.contains("<code>nppbench call-catalogue</code>"));
}

/// A made-up throughput point (no GPU wrote it: 4,147,200 bytes in 414,720 ns, 10 GB/s) of one
/// function: its row shows 10.0 in the GB/s column and functions.csv the same; a failed point
/// says why; the others' cells are blank.
#[test]
fn a_designed_functions_gbps_at_1080p_is_in_its_row_and_the_csv() {
    let point = ShapeLine {
        symbol: "nppiAbs_16s_C1R_Ctx".into(),
        throughput: Some(Throughput {
            width: throughput::AT.0,
            height: throughput::AT.1,
            calls: throughput::TIMED_CALLS,
            ns_per_call: 414_720.0,
            bytes_per_call: 4_147_200,
        }),
        ..ShapeLine::default()
    };
    let failed = ShapeLine {
        symbol: "nppiBee_8u_C1R_Ctx".into(),
        throughput_error: Some("NPP refused it: NPP_STEP_ERROR".into()),
        ..ShapeLine::default()
    };
    let c = judge_designed("13.0.1.2", &entries(), &calls(), None, &[point, failed]);
    let r = nppbench_report::render_catalogue(&c, true).unwrap();
    let html = &r.index_html;
    let table = &html[html.find("id=\"catalogue-table\"").unwrap()..];
    let head = &table[..table.find("</thead>").unwrap()];
    assert!(head.contains("<th data-key>GB/s at 1080p</th>"), "{head}");
    let row = |symbol: &str| {
        let at = table.find(&format!("<code>{symbol}</code>")).unwrap();
        &table[at..at + table[at..].find("</tr>").unwrap()]
    };
    assert!(row("nppiAbs_16s_C1R_Ctx").contains("<td class=\"num\">10.0</td>"));
    assert!(
        row("nppiBee_8u_C1R_Ctx").contains("<td class=\"num\">failed: NPP refused it: NPP_STEP_ERROR</td>"),
        "a failed point says why"
    );
    for other in ["nppiAbs_8u_C1R_Ctx", "nppiCee_8u_C1R_Ctx"] {
        assert!(row(other).contains("<td class=\"num\"></td>"), "{other}");
    }
    assert!(html.contains("GPU time per call by CUDA events over 5 calls back to back"));
    let csv_row = r
        .functions_csv
        .lines()
        .find(|l| l.starts_with("nppiAbs_16s_C1R_Ctx,"))
        .unwrap();
    assert!(csv_row.ends_with(",10.0"), "{csv_row}");
}
