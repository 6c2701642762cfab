//! Whether the first row of a table is a header: names beside values, or the column
//! numbers pandas and people write (`0,1,...`, `1,2,3,4,species`).

use std::path::Path;

/// Whether a cell holds a number (blanks around it allowed; NaN and inf count).
pub fn is_number(cell: &str) -> bool {
    cell.trim().parse::<f64>().is_ok()
}

/// The header guess: the first row is a header when it has text (a non-empty cell
/// that is not a number) in a column that should hold numbers. An empty cell is a
/// missing value, not evidence of a header.
pub(crate) fn first_row_is_header(
    row: impl IntoIterator<Item = impl AsRef<str>>,
    numeric: impl Fn(usize) -> bool,
) -> bool {
    row.into_iter().enumerate().any(|(j, c)| {
        let c = c.as_ref();
        numeric(j) && !c.trim().is_empty() && !is_number(c)
    })
}

/// Whether a first row is a header of column numbers: `0,1,...,n-1` (3 columns or
/// more), pandas' header of a frame whose columns are unnamed (`df.to_csv(index=False)`);
/// or 3 features or more numbered `0,1,...` or `1,2,...` in order beside the name of a
/// column that may hold text (`named(j)`: a target of labels), as `1,2,3,4,species`.
/// Read as data it would be a bogus sample, where a row of real values this regular is
/// far rarer; every reader that takes it for a header says so
/// ([`header_of_column_numbers`]).
pub(crate) fn is_column_numbers(row: &[impl AsRef<str>], named: impl Fn(usize) -> bool) -> bool {
    let cells: Vec<&str> = row.iter().map(|c| c.as_ref().trim()).collect();
    let counts = |numbers: &[&str], from: usize| {
        numbers.len() >= 3 && numbers.iter().enumerate().all(|(k, c)| *c == (k + from).to_string())
    };
    if counts(&cells, 0) {
        return true;
    }
    let is_name = |j: usize| named(j) && !cells[j].is_empty() && !is_number(cells[j]);
    let numbers: Vec<&str> = (0..cells.len()).filter(|&j| !is_name(j)).map(|j| cells[j]).collect();
    numbers.len() + 1 == cells.len() && (counts(&numbers, 0) || counts(&numbers, 1))
}

/// Whether a row is `1,2,...,n` (3 cells or more): a header a person may write, or a
/// row of small integers, so only said in a warning.
pub(crate) fn counts_its_columns(cells: &[&str]) -> bool {
    cells.len() >= 3 && cells.iter().enumerate().all(|(j, c)| c.trim() == (j + 1).to_string())
}

/// Whether a first row (on `line`) that is otherwise a row of values is a header of
/// column numbers ([`is_column_numbers`]), said in a warning whenever it may be one: in
/// a file read fresh it is a header; in a later file of a model whose own file had no
/// header it is a row, as the model read its own, and the warning says how to skip it.
pub(crate) fn header_of_column_numbers(
    path: &Path,
    line: usize,
    row: &[impl AsRef<str>],
    named: impl Fn(usize) -> bool,
    fresh: bool,
) -> bool {
    let cells: Vec<&str> = row.iter().map(|c| c.as_ref().trim()).collect();
    if !is_column_numbers(row, named) {
        if counts_its_columns(&cells) {
            tracing::warn!(
                "{}: line {line} ({}) counts its columns but is read as a row of values; if it is a header, give --skip-rows {line}",
                path.display(),
                cells.join(",")
            );
        }
        return false;
    }
    let (path, cells) = (path.display(), cells.join(","));
    match fresh {
        true => tracing::warn!(
            "{path}: line {line} ({cells}) is read as a header of column numbers, as pandas writes one, not as a row of values"
        ),
        false => tracing::warn!(
            "{path}: line {line} ({cells}) is read as a row of values, as the model read its own file, which had no header; if it is pandas' header of column numbers, give --skip-rows {line}"
        ),
    }
    fresh
}

/// Warns that a header of names (on `line`) in a file of a model trained without names
/// is skipped and its columns read by position: names in another order than the
/// training file's columns would be read silently wrong (session 28's hostile pass: a
/// header `pw,pl,sw,sl,y` naming reordered columns changed every prediction; Python's
/// estimators warn of the same).
pub(crate) fn warn_of_names_read_by_position(path: &Path, line: usize, names: &[impl AsRef<str>]) {
    let names: Vec<&str> = names.iter().map(|n| n.as_ref().trim()).collect();
    tracing::warn!(
        "{}: line {line} ({}) is a header, but the model was trained on a table without one, so its columns are read by position, as the training file's were: if they are in another order, the results are wrong",
        path.display(),
        names.join(",")
    );
}
