//! The rendered page in a real browser (Debian's headless Chromium) and an HTML checker (tidy):
//! it loads with no console error, every chart has a size on a desktop and a phone, nothing
//! overflows the phone's width, and a screenshot is kept in target/browser-check/.
//!
//! Skips, saying why, where chromium or tidy is missing, unless NPPBENCH_REQUIRE_BROWSER=1
//! (set by .ci/run, which installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

use nppbench_model::RunFile;

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
];

/// Measures every chart and the page width after load, into the DOM for --dump-dom to read.
const PROBE: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const charts = [...document.querySelectorAll('figure svg')].map(s => { const b = s.getBoundingClientRect(); return [b.width, b.height]; });
  const out = { charts, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, errors: window.__errors };
  const pre = document.createElement('pre'); pre.id = 'nppbench-check'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>"#;

fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.exists()));
    if found.is_none() {
        let why = format!("{name} is not installed (apt-get install chromium tidy)");
        if std::env::var_os("NPPBENCH_REQUIRE_BROWSER").is_some_and(|v| v == "1") {
            panic!("NPPBENCH_REQUIRE_BROWSER=1 but {why}");
        }
        eprintln!("skipped: {why}");
    }
    found
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-check");
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// Renders the first committed run into `target/browser-check/NAME` (each test its own file:
/// tests run in parallel).
fn rendered(name: &str) -> (PathBuf, String) {
    let runs = RunFile::find_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports"));
    let run = RunFile::read(&runs[0]).unwrap();
    let html = nppbench_report::render(&[run]).unwrap().index_html;
    let page = out_dir().join(name);
    std::fs::write(&page, &html).unwrap();
    (page, html)
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
fn probe(chrome: &Path, html: &str, width: u32) -> serde_json::Value {
    let copy = out_dir().join(format!("probe-{width}.html"));
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
        .unwrap_or_else(|| panic!("the probe did not run: {}", String::from_utf8_lossy(&o.stderr)));
    let rest = &dom[start + "<pre id=\"nppbench-check\">".len()..];
    let json = rest[..rest.find("</pre>").unwrap()].replace("&quot;", "\"");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn page_loads_without_console_errors_and_every_chart_has_a_size() {
    let Some(chrome) = tool("chromium") else { return };
    let (page, html) = rendered("index.html");
    // The page itself, with console messages logged to stderr.
    let shot = out_dir().join("report.png");
    let o = chromium(
        &chrome,
        &[
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,3000",
            &format!("--screenshot={}", shot.display()),
            &format!("file://{}", page.display()),
        ],
    );
    let log = String::from_utf8_lossy(&o.stderr);
    for line in log.lines() {
        assert!(
            !line.contains(":CONSOLE(") && !line.contains("Failed to load resource") && !line.contains("Uncaught"),
            "console: {line}"
        );
    }
    let png = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(png > 10_000, "screenshot {} is {png} bytes", shot.display());
    eprintln!("screenshot kept at {}", shot.display());

    let figures = html.matches("<figure").count();
    for width in [1280, 390] {
        let r = probe(&chrome, &html, width);
        assert_eq!(r["errors"].as_array().unwrap().len(), 0, "{r}");
        let charts = r["charts"].as_array().unwrap();
        assert_eq!(charts.len(), figures, "{r}");
        for c in charts {
            assert!(
                c[0].as_f64().unwrap() > 50.0 && c[1].as_f64().unwrap() > 50.0,
                "a chart without size at {width}px: {r}"
            );
        }
        // Wide tables scroll inside their own box; the page itself never scrolls sideways.
        assert!(
            r["scrollWidth"].as_f64().unwrap() <= r["innerWidth"].as_f64().unwrap() + 1.0,
            "overflows at {width}px: {r}"
        );
    }
}

#[test]
fn page_is_valid_html() {
    let Some(tidy) = tool("tidy") else { return };
    let (page, _) = rendered("tidy.html");
    let o = Command::new(tidy)
        .args(["-errors", "-quiet", "--show-warnings", "no"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "tidy found errors:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).trim().is_empty(),
        "tidy:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
