//! The names `ant` gives what it writes in a model, run or ensemble directory: one list,
//! for the code that writes them and for the checks that keep outputs off them.

/// A model's description, naming its weights file.
pub(crate) const TREE_FILE: &str = "tree.json";
/// The weights file of models saved before weights files were named by their checksum
/// (such a `tree.json` names no weights file); still loaded.
pub(crate) const LEGACY_WEIGHTS_FILE: &str = "model.safetensors";
/// An ensemble's description; its members are in `member-K/`.
pub(crate) const ENSEMBLE_FILE: &str = "ensemble.json";
/// A run's checkpoints, while it trains.
pub(crate) const CHECKPOINT_DIR: &str = "checkpoint";
/// Inside the checkpoint folder: what the run was started with.
pub(crate) const RUN_FILE: &str = "run.json";
pub(crate) const RECORDS_FILE: &str = "records.jsonl";
pub(crate) const REPORT_FILE: &str = "report.json";
/// Held (an OS file lock) by the run that owns the directory.
pub(crate) const LOCK_FILE: &str = "run.lock";
/// Inside a run's directory: the model as growth left it, before refinement (an
/// ordinary model directory).
pub(crate) const GROWN_DIR: &str = "grown";
/// What `ant prune` writes beside the pruned model.
pub(crate) const PRUNE_FILE: &str = "prune.json";
/// The manifest of a directory `ant` writes: each file it put there, with its checksum
/// (see `crate::store::manifest`).
pub const MANIFEST_FILE: &str = "ant-files.json";

/// The `format` of a `tree.json` and of an `ensemble.json`: what tells them from files
/// of the same names that `ant` did not write.
pub(crate) const MODEL_FORMAT: &str = "ant-model-1";
pub(crate) const ENSEMBLE_FORMAT: &str = "ant-ensemble-1";
/// How `run.lock` starts.
pub(crate) const LOCK_TEXT: &str = "held by ant";

/// The files `ant` writes in a model, ensemble or run directory, which it replaces or
/// removes only under its manifest (besides these, its checksum-named weights).
pub const STAMPED_FILES: [&str; 6] = [
    TREE_FILE,
    LEGACY_WEIGHTS_FILE,
    ENSEMBLE_FILE,
    RECORDS_FILE,
    REPORT_FILE,
    PRUNE_FILE,
];

/// Whether `name` is a weights file as [`crate::model::Ant::save`] names one:
/// `model-` and the first 16 hexadecimal digits of its checksum.
pub(crate) fn is_checksum_weights(name: &str) -> bool {
    name.strip_prefix("model-")
        .and_then(|n| n.strip_suffix(".safetensors"))
        .is_some_and(|id| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The names a model, ensemble or run directory owns (what `ant` writes and reads there).
pub(crate) fn is_model_owned(name: &str) -> bool {
    [
        TREE_FILE,
        LEGACY_WEIGHTS_FILE,
        ENSEMBLE_FILE,
        RECORDS_FILE,
        REPORT_FILE,
        CHECKPOINT_DIR,
        LOCK_FILE,
        PRUNE_FILE,
        GROWN_DIR,
        MANIFEST_FILE,
    ]
    .contains(&name)
        || (name.starts_with("model-") && name.ends_with(".safetensors"))
        || name
            .strip_prefix("member-")
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}
