//! How `nppbench`'s arguments parse: typed values, defaults, and the messages of bad input.

use clap::CommandFactory;

use super::*;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("nppbench").chain(args.iter().copied()))
}

fn run_args(args: &[&str]) -> RunArgs {
    match parse(&[&["run", "--out", "o"], args].concat()).unwrap().command {
        Cmd::Run(a) => a,
        _ => unreachable!("a run"),
    }
}

#[test]
fn the_command_line_is_consistent() {
    Cli::command().debug_assert();
}

/// Every option and argument a person can give says what it is for in `--help`.
#[test]
fn every_visible_argument_has_a_description() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            if !arg.is_hide_set() && !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} --{}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut missing = Vec::new();
    walk(&Cli::command(), "nppbench", &mut missing);
    assert!(missing.is_empty(), "{missing:#?}");
}

/// A negative number reaches the option's own check, which says what is wrong with it,
/// instead of being read as another option (`unexpected argument '-3'`).
#[test]
fn negative_numbers_are_values_not_options() {
    let e = parse(&[
        "predict",
        "--atlas",
        "a",
        "--primitive",
        "Convert_8u32f_C1R",
        "--width",
        "31",
        "--height",
        "31",
        "--src-stride",
        "-32",
    ])
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("invalid value '-32' for '--src-stride"), "{e}");
    let Cmd::Compare(c) = parse(&["compare", "a", "b", "--out", "o", "--noise-pct", "-1"])
        .unwrap()
        .command
    else {
        unreachable!("a comparison")
    };
    assert_eq!(c.noise_pct, -1.0, "parsed, for compare's own range check");
}

#[test]
fn run_options_parse_into_typed_values() {
    // Memory probes take one connection by default; the ordering probes inherit it.
    let a = run_args(&[]);
    assert_eq!(
        (a.preset, a.devices, a.probe_connections),
        (Preset::Quick, Devices::List(vec![0]), Some(1))
    );
    assert_eq!(run_args(&["--probe-connections", "1"]).probe_connections, Some(1));
    let a = run_args(&[
        "--preset",
        "atlas",
        "--devices",
        "2, 0",
        "--probe-connections",
        "inherit",
    ]);
    assert_eq!(
        (a.preset, a.devices, a.probe_connections),
        (Preset::Atlas, Devices::List(vec![2, 0]), None)
    );
    assert_eq!(run_args(&["--devices", "all"]).devices, Devices::All);
    assert_eq!(run_args(&["--probe-connections", "32"]).probe_connections, Some(32));
    assert_eq!(
        a.memory_readings,
        MemoryReadings::Own,
        "each probe lists for itself unless asked"
    );
    assert_eq!(
        run_args(&["--memory-readings", "shared"]).memory_readings,
        MemoryReadings::Shared
    );
    let err = parse(&["run", "--out", "o", "--memory-readings", "both"])
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("give `own` or `shared`"), "{err}");
    assert_eq!(
        a.race_rounds,
        RaceRounds::WhereSplit,
        "rounds only where the call split"
    );
    assert_eq!(run_args(&["--race-rounds", "always"]).race_rounds, RaceRounds::Always);
    let err = parse(&["run", "--out", "o", "--race-rounds", "never"])
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("give `where-split` or `always`"), "{err}");
    assert_eq!(
        (a.ordering_jobs, run_args(&["--ordering-jobs", "2"]).ordering_jobs),
        (None, Some(2))
    );
    assert!(parse(&["run", "--out", "o", "--ordering-jobs", "0"]).is_err());
}

#[test]
fn bad_values_are_usage_errors_that_say_what_to_give() {
    for (args, expected) in [
        (
            vec!["--preset", "quik"],
            "preset \"quik\": unknown; use quick, full or atlas",
        ),
        (
            vec!["--devices", "0,x"],
            "give `all` or GPU ordinals separated by commas (0,2)",
        ),
        (vec!["--devices", "1,1"], "a GPU is listed twice"),
        (
            vec!["--probe-connections", "33"],
            "give a number of connections from 1 to 32",
        ),
    ] {
        let err = parse(&[&["run", "--out", "o"], &args[..]].concat()).err().unwrap();
        assert_eq!(err.exit_code(), 2, "{args:?}");
        let text = err.to_string();
        assert!(text.contains(&format!("'{}' for '{}", args[1], args[0])), "{text}");
        assert!(text.contains(expected), "{text}");
    }
}

#[test]
fn help_says_what_nppbench_measures_now_and_where_compare_writes() {
    let mut cmd = Cli::command();
    let top = cmd.render_help().to_string();
    let functions = format!("NPP's image functions ({} in the catalogue", Primitive::all().count());
    assert!(top.contains(&functions) && !top.contains("convert"), "{top}");
    let compare = cmd.find_subcommand_mut("compare").unwrap().render_help().to_string();
    assert!(
        compare.contains("The folder compare.html, summary.md and compare.json are written to"),
        "{compare}"
    );
}

#[test]
fn help_lists_the_presets() {
    let mut cmd = Cli::command();
    let run = cmd.find_subcommand_mut("run").unwrap().render_long_help().to_string();
    let preset = cmd.find_subcommand_mut("preset").unwrap().render_help().to_string();
    for p in Preset::ALL {
        let listed = run
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("- {}:", p.name())) && l.ends_with(p.summary()));
        assert!(listed, "{run}");
    }
    assert!(preset.contains("[possible values: quick, full, atlas]"), "{preset}");
    assert!(
        run.contains("nppbench preset NAME") && !run.contains("crates/model"),
        "{run}"
    );
}
