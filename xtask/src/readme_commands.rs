//! Every `cargo xtask …` command line in the README's code blocks parses with xtask's own
//! arguments (nppbench's test checks its own commands, and the arguments `compare` passes on).

use clap::Parser;

use crate::{Cli, root};

/// The command lines of a Markdown text's fenced code blocks: `\` continuations joined, `#`
/// comments cut, `a && b` split in two (as nppbench's own README test reads them).
fn code_block_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block || line.trim_start().starts_with('#') {
            continue;
        }
        let code = line.find(" #").map_or(line, |at| &line[..at]);
        match code.trim_end().strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(code);
                commands.extend(
                    pending
                        .split("&&")
                        .map(|c| c.trim().to_owned())
                        .filter(|c| !c.is_empty()),
                );
                pending.clear();
            }
        }
    }
    commands
}

/// The README's `cargo xtask` commands, as the words xtask's parser is given.
fn readme_xtask_commands(markdown: &str) -> Vec<Vec<String>> {
    code_block_commands(markdown)
        .into_iter()
        .filter_map(|line| {
            assert!(
                !line.contains(['"', '\'']),
                "a README command quotes a word; split it as a shell would: {line}"
            );
            let rest = line.strip_prefix("cargo xtask ")?;
            Some(
                std::iter::once("cargo xtask".to_owned())
                    .chain(rest.split_whitespace().map(str::to_owned))
                    .collect(),
            )
        })
        .collect()
}

/// A README command that no longer parses (a renamed flag, a job gone) fails here.
#[test]
fn every_readme_xtask_command_parses() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let commands = readme_xtask_commands(&readme);
    for job in ["report", "install", "compare", "history", "npp"] {
        assert!(
            commands.iter().any(|w| w[1] == job),
            "the README gives no example of `cargo xtask {job}`"
        );
    }
    for words in &commands {
        if let Err(err) = Cli::try_parse_from(words) {
            panic!("README: `{}` does not parse:\n{err}", words.join(" "));
        }
    }
}

/// The check itself catches a command that does not parse, and reads a continued line whole.
#[test]
fn a_job_that_does_not_exist_fails_the_check() {
    let md = "```sh\ncargo xtask report \\\n  --preset full   # a comment\ncargo xtask no-such-job\n```\n";
    let commands = readme_xtask_commands(md);
    assert_eq!(commands.len(), 2);
    assert!(Cli::try_parse_from(&commands[0]).is_ok());
    assert!(Cli::try_parse_from(&commands[1]).is_err());
}
