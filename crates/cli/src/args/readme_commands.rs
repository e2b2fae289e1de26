//! Every `nppbench …` command line in the README's code blocks parses with `nppbench`'s own
//! arguments, and so do the `cargo xtask compare …` ones, whose arguments xtask passes on.

use clap::Parser;

use super::Cli;

/// The command lines of a Markdown text's fenced code blocks: `\` continuations joined, `#`
/// comments cut, `a && b` split in two.
pub(crate) fn code_block_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let code = line.find(" #").map_or(line, |at| &line[..at]);
        let code = if line.trim_start().starts_with('#') { "" } else { code };
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

/// The README's `nppbench` commands, each split into its words as a shell would (the README
/// quotes nothing, and this test says so where it starts to).
fn readme_nppbench_commands() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    code_block_commands(&readme)
        .into_iter()
        .filter_map(|line| {
            assert!(
                !line.contains(['"', '\'']),
                "a README command quotes a word; split it as a shell would: {line}"
            );
            let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            match words.as_slice() {
                [first, ..] if first == "nppbench" => Some(words),
                [cargo, xtask, compare, rest @ ..] if cargo == "cargo" && xtask == "xtask" && compare == "compare" => {
                    Some(
                        ["nppbench".to_owned(), "compare".to_owned()]
                            .into_iter()
                            .chain(rest.iter().cloned())
                            .collect(),
                    )
                }
                _ => None,
            }
        })
        .collect()
}

#[test]
fn comments_continuations_and_and_lists_are_read_as_a_shell_reads_them() {
    let md = "text `nppbench nope`\n```sh\nnppbench a \\\n  --b c   # a comment\n# a line of comment\nx && nppbench d\n```\n";
    assert_eq!(code_block_commands(md), ["nppbench a   --b c", "x", "nppbench d"]);
}

/// A README command that no longer parses (a renamed flag, a subcommand gone) fails here.
#[test]
fn every_readme_nppbench_command_parses() {
    let commands = readme_nppbench_commands();
    let subcommands: std::collections::BTreeSet<&str> =
        commands.iter().filter_map(|w| w.get(1).map(String::as_str)).collect();
    for name in [
        "run",
        "report",
        "compare",
        "history",
        "predict",
        "trace",
        "design",
        "primitives",
        "preset",
        "npp",
    ] {
        assert!(
            subcommands.contains(name),
            "the README gives no example of `nppbench {name}`"
        );
    }
    for words in &commands {
        if let Err(err) = Cli::try_parse_from(words) {
            panic!("README: `{}` does not parse:\n{err}", words.join(" "));
        }
    }
}

/// The check itself catches a command that does not parse.
#[test]
fn a_flag_that_does_not_exist_fails_the_check() {
    let md = "```sh\nnppbench run --preset quick --out DIR --no-such-flag\n```\n";
    let line = &code_block_commands(md)[0];
    assert!(Cli::try_parse_from(line.split_whitespace()).is_err());
}
