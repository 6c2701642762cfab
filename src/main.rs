//! `ant`: grow, refine, save and evaluate Adaptive Neural Trees from the command line.
//! This file starts the command; `cli/` maps each command to library calls and prints.

use std::process::ExitCode;

use ant::AntError;
use clap::Parser;
use clap::error::ErrorKind;

/// A line on stderr, kept one line ([`cli::log::one_line`]: a name's line break is
/// written as `\n`). Unlike `eprintln!`, a closed stderr (`ant train 2>&1 | head -1`)
/// does not panic: the message is dropped and the command goes on.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = $crate::cli::log::one_line(&format!($($arg)*));
        let _ = writeln!(std::io::stderr(), "{line}");
    }};
}

mod cli;

fn main() -> ExitCode {
    ant::keep_large_buffers();
    // A write beyond `ulimit -f` is then a failed write, reported, not a silent death.
    ant::file_size_limit_is_an_error();
    ant::out_of_memory_is_an_error();
    cli::log::init();
    let res = match cli::args::Cli::try_parse() {
        Ok(cli) => cli::run(cli.cmd),
        Err(e) => return clap_exit(&e),
    };
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

/// What clap's own answers end with: help and the version go to stdout, which is
/// checked first as every command's is (`ant --help 1<file` had printed nothing with
/// success); usage errors print as clap writes them, with exit 2.
fn clap_exit(e: &clap::Error) -> ExitCode {
    let to_stdout = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if to_stdout && let Err(err) = ant::export::check_stdout() {
        note!("error: {err}");
        return ExitCode::from(2);
    }
    if !to_stdout {
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), "{}", usage_error_text(e));
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    // A reader that has gone (`ant --help | head -1`) ends the output quietly.
    if let Err(err) = e.print()
        && err.kind() != std::io::ErrorKind::BrokenPipe
    {
        note!("error: <stdout>: {err}");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// Clap's usage error as it writes it, but for the arguments it quotes: one holding a
/// line break or other control character (`--preset $'x\nerror: ...'`) is written as
/// [`cli::log::one_line`] writes it, so that it forges no line of its own.
fn usage_error_text(e: &clap::Error) -> String {
    // Clap drops some control characters of what it quotes (ESC, DEL), so that the value
    // it names is not the one given: such arguments are named here instead
    // (`--preset $'tab\e[2Jular'` would be called "invalid value 'tabular'").
    let odd: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a.chars().any(char::is_control))
        .map(|a| format!("'{}'", cli::log::one_line(&a)))
        .collect();
    match odd.is_empty() {
        true => e.render().to_string(),
        false => format!(
            "error: {} among the arguments holding control characters: {}\n\nFor more information, try '--help'.\n",
            e.kind(),
            odd.join(", ")
        ),
    }
}
