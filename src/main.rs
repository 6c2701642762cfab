//! `ant`: grow, refine, save and evaluate Adaptive Neural Trees from the command line.
//! This file starts the command; `cli/` maps each command to library calls and prints.

use std::process::ExitCode;

use ant::AntError;
use clap::Parser;

/// A line on stderr. Unlike `eprintln!`, a closed stderr (`ant train 2>&1 | head -1`)
/// does not panic: the message is dropped and the command goes on.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

fn main() -> ExitCode {
    ant::keep_large_buffers();
    // A write beyond `ulimit -f` is then a failed write, reported, not a silent death.
    ant::file_size_limit_is_an_error();
    cli::log::init();
    let cli = cli::args::Cli::parse();
    let res = cli::run(cli.cmd);
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(AntError::InvalidParam {
            name: Some(name),
            reason,
        }) => {
            // The library names its parameters; here they are flags.
            note!(
                "error: invalid parameter: --{} {reason}",
                name.replace('_', "-")
            );
            ExitCode::from(2)
        }
        Err(e) => {
            note!("error: {e}");
            ExitCode::from(2)
        }
    }
}
