//! `nppbench`: measure which ways of calling NPP's image functions grow GPU memory and what each
//! costs (`run`), and render the measurements as reports (`report`), comparisons (`compare`) and
//! a fleet's history (`history`).

#![forbid(unsafe_code)]

mod args;
mod catalogue;
mod catalogue_call;
mod compare;
mod design;
mod exit;
mod history;
mod info;
mod knowledge;
mod predict;
mod progress;
mod report;
mod run;
mod runs;
mod shield;
mod trace;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Cmd};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::exit_code(&e)
        }
    }
}

fn dispatch(cmd: Cmd) -> anyhow::Result<()> {
    // A command that only prints ends quietly when what reads it stops (`| head`), as C tools do,
    // rather than panicking at the next line; one that measures keeps Rust's default and sees
    // the error, so that its results are written whatever became of its terminal.
    let only_prints = match &cmd {
        Cmd::Primitives | Cmd::Preset { .. } | Cmd::Npp { .. } | Cmd::Predict(_) => true,
        Cmd::CallCatalogue(args) => args.only_prints(),
        _ => false,
    };
    if only_prints {
        sigpipe::reset();
    }
    match cmd {
        Cmd::Run(args) => run::run(args),
        Cmd::Primitives => {
            info::primitives();
            Ok(())
        }
        Cmd::Report {
            from,
            out,
            force,
            atlas,
            catalogue,
            calls,
            designs,
            no_designs,
        } => match catalogue {
            Some(catalogue) => {
                let designs = match (designs, no_designs) {
                    (_, true) => catalogue::Designs::None,
                    (Some(file), false) => catalogue::Designs::File(file),
                    (None, false) => catalogue::Designs::BuiltIn,
                };
                report::catalogue_page(&catalogue, &calls, &atlas, designs, &out)
            }
            // clap leaves `requires` unchecked once --from is given.
            None if !calls.is_empty() => Err(exit::bad_input(
                "--calls goes with --catalogue: name the catalogue the call lines are of (a folder, or a version built in)",
            )),
            None => report::report(&from, &out, force, &atlas),
        },
        Cmd::Compare(args) => compare::compare(args),
        Cmd::History(args) => history::run(args),
        Cmd::Predict(args) => predict::predict(args),
        Cmd::Design(args) => design::design(args),
        Cmd::Trace(args) => trace::trace(args),
        Cmd::Shield(args) => shield::shield(args),
        Cmd::Preset { name } => {
            info::preset(name);
            Ok(())
        }
        Cmd::Npp { npp } => info::npp(npp),
        Cmd::CallCatalogue(args) => catalogue_call::call_catalogue(args),
        Cmd::Probe { request, answer } => {
            let resources = nppbench_engine::run_probe(&request, &answer)?;
            // The answer is on disk: leave without tearing the CUDA context down.
            nppbench_engine::end_probe(resources)
        }
    }
}
