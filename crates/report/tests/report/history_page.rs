//! The history page of the committed runs draws only the groups where a series has something to
//! say (`SeriesFindings::says_something`, tested on generated histories), and names the rest:
//! drawing every group made it 37.9 MB and 46 s to open. (Its own copy of that rule once left out
//! a latest step not judged though both sides have passes: a run of `cargo xtask report` beside
//! the committed ones failed it.)

use std::collections::BTreeSet;
use std::path::Path;

use nppbench_history::changes::{Settings, analyse};
use nppbench_history::{Db, History};

#[test]
fn the_history_page_draws_the_groups_with_something_to_say_and_names_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(&dir.path().join("history.db")).unwrap();
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    nppbench_history::ingest::add_paths(&mut db, &[reports], false).unwrap();
    let h = History::load(&db).unwrap();
    let f = analyse(&h, &Settings::default());
    let mut loud = BTreeSet::new();
    let mut all = BTreeSet::new();
    for (s, found) in h.series.iter().zip(&f.series) {
        let title = format!("{} {}", s.key.primitive, s.key.geometry);
        if found.says_something() {
            loud.insert(title.clone());
        }
        all.insert(title);
    }
    assert!(
        !loud.is_empty() && loud.len() < all.len(),
        "{} of {}",
        loud.len(),
        all.len()
    );
    let html = nppbench_report::history_view::render(&h, &f, &[]).unwrap().index_html;
    let drawn: BTreeSet<&str> = html
        .split("<h3>")
        .skip(1)
        .filter_map(|s| s.split("</h3>").next())
        .filter(|t| *t != "Nothing to say")
        .collect();
    assert_eq!(drawn.len(), loud.len(), "groups drawn");
    assert!(drawn.iter().all(|t| loud.contains(*t)));
    let quiet = html.split("id=\"quiet\"").nth(1).expect("the quiet groups named");
    for title in all.difference(&loud).take(50) {
        assert!(quiet.contains(&format!("<li>{title} (")), "{title} not named");
    }
    assert!(html.len() < 12_000_000, "{} bytes", html.len());
}
