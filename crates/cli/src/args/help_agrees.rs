//! `--help` agrees with itself and with the README: every option a subcommand's help names is one
//! it takes (or is named with the command that takes it), the gates an option's own words list
//! are all it takes, and a figure the README gives is the one the help gives.

use clap::CommandFactory;

use super::Cli;

/// Every `--option` in `text`, with the word before it (`run` in "`run --matrix`").
fn options_named(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("--") {
        let before = &rest[..at];
        let after = &rest[at + 2..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        let glued = before
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-');
        if !glued && name.starts_with(|c: char| c.is_ascii_lowercase()) {
            let word = before
                .trim_end()
                .rsplit(|c: char| c.is_whitespace() || c == '`' || c == '(')
                .next()
                .unwrap_or_default()
                .to_owned();
            out.push((word, name.clone()));
        }
        rest = &after[name.len()..];
    }
    out
}

/// Each visible subcommand, by its path (`history report`), with its long help.
fn helps() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let p = format!("{path} {}", sub.get_name()).trim().to_owned();
            out.push((p.clone(), sub.clone()));
            walk(sub, &p, out);
        }
    }
    let mut root = Cli::command();
    root.build();
    // `nppbench --help` is an index of the commands (its exit statuses name their options), and
    // `help` is clap's own.
    let mut out = Vec::new();
    walk(&root, "", &mut out);
    out.retain(|(p, _)| p != "help" && !p.starts_with("help "));
    out
}

/// `history report --help` named `--alpha`, `--latency-noise-pct` and `--gate-min-pixels`
/// (compare's gate words), options it does not have.
#[test]
fn every_option_a_subcommands_help_names_is_one_it_takes() {
    let commands: Vec<String> = helps()
        .iter()
        .flat_map(|(p, _)| p.split(' ').map(str::to_owned).collect::<Vec<_>>())
        .chain(["nppbench".to_owned()])
        .collect();
    let mut wrong = Vec::new();
    for (path, mut cmd) in helps() {
        let help = cmd.render_long_help().to_string();
        for (before, name) in options_named(&help) {
            let takes = name == "help" || name == "version" || cmd.get_arguments().any(|a| a.get_long() == Some(&name));
            // `run --matrix` in design's help names run's option.
            let elsewhere = commands.contains(&before) && before != cmd.get_name();
            if !takes && !elsewhere {
                wrong.push(format!("nppbench {path}: --{name}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "options a help names that its command does not take: {wrong:#?}"
    );
}

/// `compare --fail-on`'s own words listed five gates of the six it takes (not `race`): they list
/// every gate the option takes, or none and leave them to the list clap prints.
#[test]
fn fail_on_names_every_gate_it_takes_or_none() {
    for (path, cmd) in helps() {
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some("fail-on")) else {
            continue;
        };
        let words = arg
            .get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        let gates: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_owned())
            .collect();
        let named: Vec<&String> = gates.iter().filter(|g| words.contains(&format!("`{g}`"))).collect();
        assert!(
            named.is_empty() || named.len() == gates.len(),
            "nppbench {path} --fail-on names {named:?} of {gates:?}: {words}"
        );
    }
}

/// `run --batch` said "about 40 times slower" where docs/run.md (and docs/performance.md's
/// runs: 312.2 s against 45.3 s) say about seven.
#[test]
fn batch_help_gives_the_readme_slowdown() {
    fn slowdown(text: &str) -> Option<String> {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let at = flat.find(" times slower")?;
        flat[..at].rsplit(' ').next().map(str::to_owned)
    }
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/run.md")).unwrap();
    let line = doc
        .split("\n- ")
        .find(|item| item.starts_with("`--batch N`"))
        .expect("docs/run.md describes --batch");
    let mut cmd = Cli::command();
    let run = cmd.find_subcommand_mut("run").unwrap();
    let help = run
        .get_arguments()
        .find(|a| a.get_long() == Some("batch"))
        .and_then(|a| a.get_long_help().or(a.get_help()))
        .map(ToString::to_string)
        .unwrap_or_default();
    assert_eq!(slowdown(&help), slowdown(line), "help: {help}\ndocs/run.md: {line}");
    assert!(slowdown(line).is_some(), "{line}");
}
