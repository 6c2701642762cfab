//! The command line: options (`args`), progress bars, `train` and the other commands.

pub(crate) mod args;
mod commands;
pub(crate) mod log;
mod progress;
mod train;

pub(crate) use commands::run;
