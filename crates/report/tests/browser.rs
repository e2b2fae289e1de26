//! Every kind of page nppbench writes, rendered from committed real runs, in a real browser
//! (Debian's headless Chromium) at 1280 and 800 pixels wide, and through an HTML checker (tidy):
//! no console error; every chart has a size and lies inside the viewport; every key column
//! (`th[data-key]`) of a table in view is visible without scrolling sideways; no text, in HTML or
//! in a chart, is drawn smaller than the minimum; the page itself never scrolls sideways.
//! Screenshots of each page's first screen are kept in target/browser-check/, and written to
//! docs/screenshots/ with NPPBENCH_UPDATE_SCREENSHOTS=1.
//!
//! Skips, saying why, where chromium or tidy is missing, unless NPPBENCH_REQUIRE_BROWSER=1
//! (set by .ci/run, which installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

use nppbench_model::RunFile;
use nppbench_report::compare::{Gate, Thresholds};

const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
];

/// The smallest text a reader is given, CSS pixels, in HTML and (scaled as drawn) in charts.
const MIN_HTML_PX: f64 = 12.0;
const MIN_CHART_PX: f64 = 11.0;

/// Measures the page after load, into the DOM for --dump-dom to read.
const PROBE: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const W = window.innerWidth;
  const shown = el => el.getClientRects().length > 0 && !el.closest('details:not([open])');
  const charts = [...document.querySelectorAll('figure svg')].filter(shown).map(s => {
    const b = s.getBoundingClientRect();
    const vb = s.viewBox && s.viewBox.baseVal && s.viewBox.baseVal.width ? s.viewBox.baseVal.width : (parseFloat(s.getAttribute('width')) || b.width);
    const scale = b.width / vb;
    let smallest = 1e9;
    for (const t of s.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < smallest) smallest = px;
    }
    return { id: s.closest('figure').id, left: b.left, right: b.right, width: b.width, height: b.height, smallest };
  });
  const columns = [...document.querySelectorAll('th[data-key]')].filter(shown).map(th => {
    const b = th.getBoundingClientRect();
    const wrap = th.closest('.table-wrap');
    const w = wrap ? wrap.getBoundingClientRect() : { left: 0, right: W };
    return { text: th.textContent.trim(), left: b.left, right: b.right, visibleRight: Math.min(W, w.right), visibleLeft: Math.max(0, w.left) };
  });
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const n = walker.currentNode;
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest('svg') || el.closest('script') || el.closest('style') || el.id === 'nppbench-check' || !shown(el)) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < 12) small.push([n.textContent.trim().slice(0, 40), px]);
  }
  const out = { charts, columns, small, scrollWidth: document.documentElement.scrollWidth, innerWidth: W, errors: window.__errors };
  const pre = document.createElement('pre'); pre.id = 'nppbench-check'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>"#;

/// The tool `name`, or `None` where it is not installed: the test `test` then skips, saying why.
fn tool(name: &str, test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.exists()));
    if found.is_none() {
        let why = format!("{name} is not installed (apt-get install chromium tidy)");
        if std::env::var_os("NPPBENCH_REQUIRE_BROWSER").is_some_and(|v| v == "1") {
            panic!("NPPBENCH_REQUIRE_BROWSER=1 but {why}");
        }
        nppbench_model::say_skipped(test, &why);
    }
    found
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn out_dir() -> PathBuf {
    let dir = root().join("target/browser-check");
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn run(path: &str) -> RunFile {
    RunFile::read(&root().join("reports").join(path)).unwrap()
}

/// Every kind of page, rendered from committed real runs: (name, HTML).
fn pages() -> Vec<(&'static str, String)> {
    let full = run("h200-full-npp-13.0.1/run.json.gz");
    let atlas_12 = run("h200-atlas-npp-12.2.3/run.json.gz");
    let atlas_13 = run("h200-atlas-npp-13.0.1/run.json.gz");
    let single = nppbench_report::render(std::slice::from_ref(&full)).unwrap().index_html;
    let atlas = nppbench_report::render(std::slice::from_ref(&atlas_13))
        .unwrap()
        .index_html;
    let versions = nppbench_report::render(&[atlas_12, atlas_13]).unwrap();
    let compare = nppbench_report::render_compare(
        &[
            run("calibration/quick-npp-13.0.1-1.json.gz"),
            run("calibration/delay-100-cycles-npp-13.0.1-1.json.gz"),
        ],
        Thresholds::default(),
        &[Gate::Regression, Gate::Leak, Gate::Streams],
    )
    .unwrap()
    .compare_html;
    let mut pages = vec![
        ("run", single),
        ("atlas", atlas),
        ("versions", versions.index_html),
        ("versions-run", versions.run_pages[0].1.clone()),
        ("compare", compare),
    ];
    pages.push(("history", history_page()));
    pages.push(("catalogue", catalogue_page()));
    pages
}

/// The page of every function NPP 13.0.1's headers declare, with the committed first run of its
/// calls and the knowledge of that version, as `nppbench report --catalogue` renders it.
fn catalogue_page() -> String {
    use nppbench_analysis::catalogue::{Entry, judge};
    use std::io::Read;
    let prototypes = nppbench_headers::files::Prototypes::read(&root().join("catalogue/npp-13.0.1.2")).unwrap();
    let entries: Vec<Entry> = nppbench_headers::generate::rows(&prototypes)
        .unwrap()
        .iter()
        .map(|r| Entry::new(&r.symbol, r.library.as_deref(), &r.reasons))
        .collect();
    let gz = std::fs::read(root().join("reports/catalogue-calls/h200-GPU-cce5198b/calls-13.0.1.jsonl.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_string(&mut text)
        .unwrap();
    let calls: Vec<nppbench_analysis::calls::CallLine> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let k = nppbench_analysis::knowledge::Knowledge::from_bytes(
        &std::fs::read(root().join("knowledge/npp-13.0.1-sm90.json.gz")).unwrap(),
        "npp-13.0.1-sm90",
    )
    .unwrap();
    let c = judge(&prototypes.version, &entries, &calls, Some(&k));
    nppbench_report::render_catalogue(&c, true).unwrap().index_html
}

/// The history page of five H200 runs (both versions' atlases, quick and full runs: leak classes
/// that changed, faster steps, charts), built in a temporary database as `nppbench history add`
/// builds one.
fn history_page() -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut db = nppbench_history::Db::open(&dir.path().join("history.db")).unwrap();
    let runs: Vec<PathBuf> = [
        "h200-atlas-npp-12.2.3/run.json.gz",
        "h200-atlas-npp-13.0.1/run.json.gz",
        "h200-quick-npp-12.2.3/run.json.gz",
        "h200-quick-npp-12.2.3-2/run.json.gz",
        "h200-full-npp-13.0.1/run.json.gz",
    ]
    .iter()
    .map(|p| root().join("reports").join(p))
    .collect();
    nppbench_history::ingest::add_paths(&mut db, &runs, false).unwrap();
    let h = nppbench_history::History::load(&db).unwrap();
    let f = nppbench_history::changes::analyse(&h, &nppbench_history::changes::Settings::default());
    nppbench_report::history_view::render(&h, &f, &[]).unwrap().index_html
}

fn chromium(chrome: &Path, args: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new(chrome)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .unwrap()
}

/// Loads a copy of the page with the probe, at `width`, and returns what the probe wrote.
fn probe(chrome: &Path, name: &str, html: &str, width: u32) -> serde_json::Value {
    let copy = out_dir().join(format!("probe-{name}-{width}.html"));
    std::fs::write(&copy, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let o = chromium(
        chrome,
        &[
            &format!("--window-size={width},900"),
            "--virtual-time-budget=5000",
            "--dump-dom",
            &format!("file://{}", copy.display()),
        ],
    );
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"nppbench-check\">")
        .unwrap_or_else(|| panic!("{name}: the probe did not run: {}", String::from_utf8_lossy(&o.stderr)));
    let rest = &dom[start + "<pre id=\"nppbench-check\">".len()..];
    let json = rest[..rest.find("</pre>").unwrap()]
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    serde_json::from_str(&json).unwrap()
}

/// What is wrong with the page at this width, in words (empty: nothing).
fn problems(r: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    let width = f(&r["innerWidth"]);
    for e in r["errors"].as_array().unwrap() {
        out.push(format!("script error: {e}"));
    }
    if f(&r["scrollWidth"]) > width + 1.0 {
        out.push(format!("the page scrolls sideways ({} > {width})", r["scrollWidth"]));
    }
    for c in r["charts"].as_array().unwrap() {
        if f(&c["width"]) < 50.0 || f(&c["height"]) < 50.0 {
            out.push(format!("chart {} has no size", c["id"]));
        }
        if f(&c["left"]) < -1.0 || f(&c["right"]) > width + 1.0 {
            out.push(format!(
                "chart {} lies outside the viewport ({} … {})",
                c["id"], c["left"], c["right"]
            ));
        }
        if f(&c["smallest"]) < MIN_CHART_PX {
            out.push(format!("chart {} draws text at {:.1} px", c["id"], f(&c["smallest"])));
        }
    }
    for c in r["columns"].as_array().unwrap() {
        if f(&c["right"]) > f(&c["visibleRight"]) + 1.0 || f(&c["left"]) < f(&c["visibleLeft"]) - 1.0 {
            out.push(format!(
                "key column {} is out of sight ({:.0} … {:.0}, visible up to {:.0})",
                c["text"],
                f(&c["left"]),
                f(&c["right"]),
                f(&c["visibleRight"])
            ));
        }
    }
    for s in r["small"].as_array().unwrap().iter().take(5) {
        if f(&s[1]) < MIN_HTML_PX {
            out.push(format!("text {} at {} px", s[0], s[1]));
        }
    }
    out
}

#[test]
fn every_page_reads_at_1280_and_800_pixels() {
    let Some(chrome) = tool("chromium", "every_page_reads_at_1280_and_800_pixels") else {
        return;
    };
    let update = std::env::var_os("NPPBENCH_UPDATE_SCREENSHOTS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for (name, html) in pages() {
        let page = out_dir().join(format!("{name}.html"));
        std::fs::write(&page, &html).unwrap();
        for width in [1280u32, 800] {
            // The first screen, with console messages logged to stderr.
            let shot = out_dir().join(format!("{name}-{width}.png"));
            let o = chromium(
                &chrome,
                &[
                    "--enable-logging=stderr",
                    "--v=0",
                    &format!("--window-size={width},900"),
                    &format!("--screenshot={}", shot.display()),
                    &format!("file://{}", page.display()),
                ],
            );
            for line in String::from_utf8_lossy(&o.stderr).lines() {
                if line.contains(":CONSOLE(") || line.contains("Failed to load resource") || line.contains("Uncaught") {
                    failures.push(format!("{name} at {width}px: console: {line}"));
                }
            }
            let png = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
            assert!(png > 5_000, "screenshot {} is {png} bytes", shot.display());
            if update {
                let docs = root().join("docs/screenshots");
                std::fs::create_dir_all(&docs).unwrap();
                std::fs::copy(&shot, docs.join(format!("{name}-{width}.png"))).unwrap();
            }
            let r = probe(&chrome, name, &html, width);
            assert!(
                !r["charts"].as_array().unwrap().is_empty() || name == "compare" || name == "versions-run",
                "{name}: no chart measured"
            );
            assert!(
                !r["columns"].as_array().unwrap().is_empty(),
                "{name}: no key column measured"
            );
            failures.extend(problems(&r).into_iter().map(|p| format!("{name} at {width}px: {p}")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checks themselves fail where they should: a page that breaks each rule is caught.
#[test]
fn the_checks_catch_a_hidden_column_a_wide_chart_and_small_text() {
    let Some(chrome) = tool(
        "chromium",
        "the_checks_catch_a_hidden_column_a_wide_chart_and_small_text",
    ) else {
        return;
    };
    // A made-up page, labelled as such: one table wider than the screen, one chart drawn at a
    // fixed 2000 px, tiny text.
    let cells: String = (0..30).map(|i| format!("<th>column number {i}</th>")).collect();
    let html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>t</title></head><body>\
         <div class=\"table-wrap\" style=\"overflow:auto\"><table><tr>{cells}<th data-key>key</th></tr></table></div>\
         <figure id=\"wide\"><svg width=\"2000\" height=\"100\" viewBox=\"0 0 2000 100\"><text x=\"1\" y=\"50\" font-size=\"6\">tiny</text></svg></figure>\
         <p style=\"font-size:8px\">small words</p></body></html>"
    );
    let r = probe(&chrome, "broken", &html, 800);
    let p = problems(&r).join("\n");
    assert!(p.contains("key column \"key\" is out of sight"), "{p}");
    assert!(p.contains("chart \"wide\" lies outside the viewport"), "{p}");
    assert!(p.contains("draws text at"), "{p}");
    assert!(p.contains("text \"small words\" at 8 px"), "{p}");
    assert!(p.contains("scrolls sideways"), "{p}");
}

#[test]
fn every_page_is_valid_html() {
    let Some(tidy) = tool("tidy", "every_page_is_valid_html") else {
        return;
    };
    for (name, html) in pages() {
        let page = out_dir().join(format!("tidy-{name}.html"));
        std::fs::write(&page, html).unwrap();
        let o = Command::new(&tidy)
            .args(["-errors", "-quiet", "--show-warnings", "no"])
            .arg(&page)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            (o.status.success() || o.status.code() == Some(1)) && stderr.trim().is_empty(),
            "tidy found errors in {name}:\n{stderr}"
        );
    }
}
