//! A table read by the names of its columns: a model trained on a table with a header
//! reads later tables by those names, in any order, and refuses one that lacks a name
//! or has one it does not know (reading by position would silently use the wrong
//! columns).

use std::path::Path;

use super::header::first_row_is_header;
use super::table::Table;
use crate::error::{AntError, Result, list, quoted};

/// What a column's name is compared by: trimmed, in Unicode's NFC (the same name typed
/// on another system may come composed or decomposed).
pub(crate) fn name_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    name.trim().nfc().collect()
}

/// A training file's header (on line `line`) must name each column once: a model reads
/// later tables by these names.
pub(crate) fn check_unique(header: &[String], line: usize, path: &Path) -> Result<()> {
    // A map, not a scan per name: tables may have millions of columns.
    let mut first_at = std::collections::HashMap::with_capacity(header.len());
    let twice = header
        .iter()
        .enumerate()
        .find_map(|(j, n)| first_at.insert(name_key(n), j).map(|i| (i, j)));
    // pandas' `to_csv()` writes its index under an empty name, which would train as a
    // feature (the row number) without a word.
    // pandas names such a column `Unnamed: 0` when it reads the file back.
    let unnamed = |n: &str| {
        let n = n.trim();
        n.is_empty()
            || n.strip_prefix("Unnamed: ")
                .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
    };
    if let Some(j) = header.iter().position(|n| unnamed(n)) {
        let why = match j + 1 == header.len() && header[j].trim().is_empty() {
            true => "a delimiter at the end of each line?",
            false => "an index, as pandas' `to_csv()` writes without `index=False`?",
        };
        let msg = format!(
            "line {line}: column {j} (from 0) has no name in the header ({}, {why}): a model reads later tables by their names, so each column needs one; name it, or remove the column",
            quoted(&header[j])
        );
        return Err(AntError::data(path, msg));
    }
    let Some((i, j)) = twice else {
        return Ok(());
    };
    let msg = format!(
        "line {line}: the header names {} twice (columns {i} and {j}, from 0): a model reads \
         later tables by these names, so each column needs a name of its own",
        quoted(&header[j])
    );
    Err(AntError::data(path, msg))
}

/// Warns when a header of names that are all numbers (`0,1,2,3`, pandas' for unnamed
/// columns) comes in another order than the model's: a row of values that are those
/// numbers reads the same, so a file without its header would be read silently wrong.
fn warn_of_numbers_reordered(
    first: &[&str],
    order: &[usize],
    names: &[String],
    path: &Path,
    line: usize,
) {
    let numbers = names.iter().all(|n| n.trim().parse::<f64>().is_ok());
    if numbers && order.windows(2).any(|w| w[0] > w[1]) {
        tracing::warn!(
            "{}: line {line} ({}) is read as the model's column names, which are numbers, in another order than its ({}); if it is a row of values, the file lacks its header",
            path.display(),
            first.join(","),
            names.join(",")
        );
    }
}

/// The column that stands for the model's target when the header does not name it:
/// the one column of a header that names every feature and one column more (a target
/// renamed, or a model fitted on a DataFrame, whose target had no name).
fn target_stand_in(
    names: &[String],
    target: Option<usize>,
    unknown: &[usize],
    find: &dyn Fn(&str) -> Option<usize>,
    n_cols: usize,
) -> Option<usize> {
    let i = target?;
    match unknown {
        [j] if find(&names[i]).is_none() && n_cols == names.len() => Some(*j),
        _ => None,
    }
}

/// The table's columns by the header names a model was trained on (`names`, every
/// column of its training file in order), in that order, the header row first. With
/// `optional` (the target's index in `names`, for rows to predict) that column may be
/// absent, and is left out either way; `target` is its index in `names`, when there is
/// one. A header that lacks a name, or has one the model does not know, is an error
/// that lists both; a file without a header is told so.
pub(crate) fn by_names(
    t: Table,
    names: &[String],
    optional: Option<usize>,
    target: Option<usize>,
    path: &Path,
) -> Result<Table> {
    let first: Vec<String> = t.row(0).map(name_key).collect();
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    // Maps, not a scan per name: tables may have millions of columns.
    let mut at = std::collections::HashMap::with_capacity(first.len());
    for (j, c) in first.iter().enumerate().rev() {
        at.insert(*c, j);
    }
    let find = |name: &str| at.get(name_key(name).as_str()).copied();
    let wanted: Vec<(usize, &String)> = names
        .iter()
        .enumerate()
        .filter(|&(j, _)| Some(j) != optional)
        .collect();
    let name_keys: std::collections::HashSet<String> = names.iter().map(|n| name_key(n)).collect();
    let known = |c: &str| name_keys.contains(c);
    let unknown: Vec<usize> = (0..first.len()).filter(|&j| !known(first[j])).collect();
    let mut seen = first.clone();
    seen.sort_unstable();
    let twice = seen.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]);
    // Only where the target is read: rows to predict name every column they hold.
    let stand_in = match optional {
        None => target_stand_in(names, target, &unknown, &find, t.n_cols()),
        Some(_) => None,
    };
    let column = |j: usize, n: &str| find(n).or_else(|| (Some(j) == target).then_some(stand_in?));
    let missing: Vec<String> = wanted
        .iter()
        .filter(|&&(j, n)| column(j, n).is_none())
        .map(|(_, n)| quoted(n))
        .collect();
    let extra: Vec<String> = unknown
        .iter()
        .filter(|&&j| Some(j) != stand_in)
        .map(|&j| quoted(first[j]))
        .collect();
    if missing.is_empty() && extra.is_empty() && twice.is_none() {
        if let (Some(j), Some(i)) = (stand_in, target) {
            warn_of_stand_in(path, &names[i], j, first[j]);
        }
        let order: Vec<usize> = wanted.iter().filter_map(|&(j, n)| column(j, n)).collect();
        warn_of_numbers_reordered(&first, &order, names, path, t.line(0));
        return Ok(t.with_columns(&order));
    }
    let all: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    // A row of values holds the target's value too, which may be text (a class name):
    // where the target's column is in place, it says nothing of a header.
    let in_place = t.n_cols() == names.len();
    let guess = |k: usize| !(in_place && Some(k) == target);
    // A row of values, though a value may equal a name (a label `2`, a column `2`).
    if !first.iter().all(|c| known(c)) && !first_row_is_header(t.row(0), guess) {
        let msg = format!(
            "has no header row (line {} holds values): the model reads its columns by the \
             names it was trained on, in any order; add a header naming them: {}",
            t.line(0),
            list(&all)
        );
        return Err(AntError::data(path, msg));
    }
    let msg = format!(
        "line {}: the header does not name the columns the model was trained on ({}); the \
         model reads its columns by these names, in any order: {}",
        t.line(0),
        mismatch(&missing, &extra, twice),
        list(&all)
    );
    Err(AntError::data(path, msg))
}

/// What a header lacks (`missing`), has beyond the model's names (`extra`) or names
/// twice, in words.
fn mismatch(missing: &[String], extra: &[String], twice: Option<&str>) -> String {
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!("missing {}", list(missing)));
    }
    if !extra.is_empty() {
        why.push(format!("not the model's: {}", list(extra)));
    }
    if let Some(name) = twice {
        why.push(format!("{} named twice", quoted(name)));
    }
    why.join("; ")
}

/// Says that column `j` (named `found`) is read as the model's target, named `target`.
fn warn_of_stand_in(path: &Path, target: &str, j: usize, found: &str) {
    tracing::warn!(
        "{}: no column is named {} (the model's target): column {j} ({}), the one column that is not one of its features, is read as its target",
        path.display(),
        quoted(target),
        quoted(found)
    );
}
