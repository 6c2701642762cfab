//! The file store: everything that owns files on disk.
//!
//! | file | what it owns |
//! |---|---|
//! | [`atomic`] | atomic writes (temporary file, sync, rename), removals, stale temporary files, injected faults |
//! | [`checksum`] | MD5 checksums of files and bytes |
//! | [`file_names`] | the names of the files `ant` writes |
//! | [`manifest`] | what `ant` can prove it wrote in a directory (`ant-files.json`) |
//! | [`outputs`] | the output door: where a command may write, and what it may replace |
//! | [`output_names`] | the rules for an output's name and ending |
//! | [`lock`] | a directory's lock (`run.lock`) |
//!
//! Nothing here knows a model: whoever saves one ([`crate::model::Ant::save`]) calls in here,
//! never the other way round.

pub mod atomic;
pub mod checksum;
pub mod file_names;
pub mod lock;
pub mod manifest;
pub mod output_names;
pub mod outputs;
