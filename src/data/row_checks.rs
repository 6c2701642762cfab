//! Checks of the rows a run trains and tests on, said before training starts: a table
//! read as SARCOS for want of `--target`, a single class left to train on, test classes
//! no training row has, test rows that are the training rows.

use std::path::Path;

use super::source::TestSide;
use super::{Dataset, Targets};
use crate::error::{AntError, Result};
use crate::named::Named;

/// Refuses a file that would be read as SARCOS (what a file without `--target` is: 21
/// inputs, then 7 torques as regression targets) under a preset other than `sarcos`:
/// that is a table whose label column was not named (a table of 27 features and a
/// `label` column would train as SARCOS, silently, exit 0).
pub(crate) fn check_read_as_sarcos(
    preset: crate::preset::Preset,
    target: Option<&super::tabular::TargetSpec>,
    path: &Path,
) -> Result<()> {
    // A pipe (`--data <(cat t.csv)`) is a file too. A folder, a missing file and an
    // image preset's file get their own errors from the reader (this one, coming first,
    // would point at --target).
    let exists = std::fs::metadata(path).is_ok_and(|m| !m.is_dir());
    if target.is_some()
        || preset != crate::preset::Preset::Tabular
        || !exists
        || super::detect::is_numpy_file(path)
    {
        return Ok(());
    }
    if super::detect::is_a_mat_file(path) {
        let msg = "is a MAT-file, which is read as SARCOS: train it with --preset sarcos";
        return Err(AntError::data(path, msg));
    }
    let msg = format!(
        "a file without --target is read as SARCOS (21 inputs, then 7 torques to regress), which --preset sarcos trains, not --preset {}: name a table's label column with --target",
        preset.name()
    );
    Err(AntError::data(path, msg))
}

/// Refuses training rows of a single class, naming the file, the class by its name and
/// the `--train-limit` that left only it (a class index alone would name neither the
/// file nor the limit).
pub(crate) fn check_two_classes(
    train: &Dataset,
    names: Option<&[String]>,
    limit: Option<usize>,
    path: &Path,
) -> Result<()> {
    let Targets::Classes { labels, .. } = &train.targets else {
        return Ok(());
    };
    let Some(&first) = labels.first() else {
        return Ok(());
    };
    if labels.iter().any(|&l| l != first) {
        return Ok(());
    }
    let class = names
        .and_then(|n| n.get(first as usize))
        .map_or(first.to_string(), |n| crate::error::quoted(n));
    let rows = match limit {
        Some(n) => format!("the first {n} training rows (--train-limit {n})"),
        None => "the training rows".to_string(),
    };
    let msg = format!("{rows} hold a single class ({class}); classification needs at least 2");
    Err(AntError::data(path, msg))
}

/// Warns when the test set holds classes no training row has (the file's rows have
/// them, the `--train-limit` left none): those samples can only be scored wrong, and
/// are not scored without a word.
pub(crate) fn warn_of_test_classes_not_trained(
    source: &TestSide,
    train: &Dataset,
    limit: Option<usize>,
) {
    let missing = source.test.classes_missing_from(train);
    if missing.is_empty() {
        return;
    }
    let names = source.class_names.as_deref();
    let named: Vec<String> = missing
        .iter()
        .map(|&c| {
            names
                .and_then(|n| n.get(c))
                .map_or(c.to_string(), |n| crate::error::quoted(n))
        })
        .collect();
    let by = limit.map_or(String::new(), |n| {
        format!(" (of the first {n}, --train-limit {n})")
    });
    tracing::warn!(
        "the test set holds class {} that no training row{by} has: its samples can only be scored wrong",
        named.join(", ")
    );
}

/// Warns when a test file (`test_data`) holds the rows training takes (`train`, after its
/// limit), in any order, or when a fifth of its rows or more are among them: its scores
/// would be (in part) the training error's.
pub(crate) fn warn_of_test_rows_trained_on(
    source: &TestSide,
    train: &Dataset,
    test_data: Option<&Path>,
) {
    let Some(path) = test_data else { return };
    let test = &source.test;
    // The same rows in any order (reordered, they must not be scored as new data), or
    // many of them among others.
    if test.len() == train.len() && test.row_set_checksum() == train.row_set_checksum() {
        let sum = train.checksum();
        tracing::warn!("{}", super::source::trained_rows_warning(path, &sum));
        return;
    }
    let trained: std::collections::HashSet<u128> =
        super::row_sketch::row_digests(train).into_iter().collect();
    let tested = super::row_sketch::row_digests(test);
    let share =
        tested.iter().filter(|d| trained.contains(d)).count() as f64 / tested.len().max(1) as f64;
    if share >= super::source::TRAINED_SHARE {
        tracing::warn!("{}", super::source::trained_share_warning(path, share));
    }
}
