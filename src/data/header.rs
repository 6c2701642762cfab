//! What a table's first line is: a header (names beside values, or the column numbers
//! pandas and people write: `0,1,...`, `1,2,3,4,species`), a row of values, or no table
//! at all (JSON). Every reader of tables asks here.
//!
//! | rule | why | example |
//! |------|-----|---------|
//! | A first row with text (a cell neither empty nor a number) in a column that should hold numbers is a header (`first_row_is_header`) | names are text, values are numbers | `sepal_length,sepal_width,species`; scikit-learn's `150,4,setosa,versicolor,virginica` |
//! | Only the columns that should hold numbers decide: a target of labels may hold text | a row of values holds its class name | `5.1,3.5,1.4,0.2,setosa` (target last) is a row |
//! | An empty cell is a missing value, no name; NaN and inf are numbers (`is_number`) | a gap or an infinity is no header | `,1`; `1,NaN,-inf` |
//! | pandas' index column `Unnamed: 0` makes a header like any other name | it is text; the reader by names then refuses the column without a name | `Unnamed: 0,a,b` |
//! | `0,1,...,n-1` (3 columns or more) is a header of column numbers, said in a warning (`is_column_numbers`, `header_of_column_numbers`) | pandas' header of a frame whose columns are unnamed (`to_csv(index=False)`): read as data it would be a bogus sample | `0,1,2,3` |
//! | 3 features or more numbered from 0 or 1 in order beside a label column's name is a header of column numbers | people number their features so | `1,2,3,4,species` |
//! | In a later file of a model whose own file had no header, a header of column numbers is read as a row, said with the skip that drops it | the model read its own file so | `0,1,2,3` in a file to predict |
//! | `1,2,...,n` alone (3 cells or more) is read as a row, said in a warning (`counts_its_columns`) | it is as likely a row of small integers | `1,2,3` |
//! | Two column numbers, or numbers out of order, are a row | a row of real values this regular is common | `0,1`; `0,1,3` |
//! | A first row read as a row whose text target no other row has is said, with `--target` to name the column (`a_class_of_its_own`) | likely a header whose feature names are numbers: it would be one sample of a class of its own | `2019,2020,2021,class` above rows labelled `a`, `b` |
//! | A header of names in a file of a model trained without names is read by position, said (`warn_of_names_read_by_position`) | names in another order than the training file's columns would be read silently wrong | `pw,pl,sw,sl,y` |
//! | Text that opens with `{` or `[` and then an object's first key, or whose first line or whole is one JSON value, is JSON: refused (`is_json`) | read as delimited text it would be one odd field, refused for its quotes | `[{"a": 1}]`; `{"a": 1}` per line; `{` then `"a": ...` on the next |
//! | A header whose first cell is in brackets is no JSON | a name may be written `[1]`, `{}` or `['a']` | `[1],b`; `["a"],b`; `['a'],b` |

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
        numbers.len() >= 3
            && numbers
                .iter()
                .enumerate()
                .all(|(k, c)| *c == (k + from).to_string())
    };
    if counts(&cells, 0) {
        return true;
    }
    let is_name = |j: usize| named(j) && !cells[j].is_empty() && !is_number(cells[j]);
    let numbers: Vec<&str> = (0..cells.len())
        .filter(|&j| !is_name(j))
        .map(|j| cells[j])
        .collect();
    numbers.len() + 1 == cells.len() && (counts(&numbers, 0) || counts(&numbers, 1))
}

/// Whether `label`, the target of a first row read as a row, is a class of its own: text
/// (not empty, not a number) that no other row's target (`others`, one at least) holds.
/// Such a row is likely a header whose feature names are numbers
/// (`2019,2020,2021,class`), which would make one sample of a class of its own.
pub(crate) fn a_class_of_its_own<'a>(
    label: &str,
    others: impl IntoIterator<Item = &'a str>,
) -> bool {
    let label = label.trim();
    let mut others = others.into_iter().peekable();
    let text = !label.is_empty() && !is_number(label);
    text && others.peek().is_some() && others.all(|c| c.trim() != label)
}

/// Whether `text` (a file's text, after any lines skipped) holds JSON: an object or an
/// array first, that opens with a key after its brackets (`[{"a": NaN ...`, `{\n  "a"`:
/// Python's `json.dump`, whole or cut short), or a first line of one JSON value (JSON
/// lines), or one JSON document. A header whose first cell is `[1]`, `{}` or `["a"]` is
/// no JSON.
pub(crate) fn is_json(text: &str) -> bool {
    let first = text.trim_start();
    let line = first.lines().next().unwrap_or("");
    let whole = |t: &str| serde_json::from_str::<serde_json::Value>(t).is_ok();
    let bracket = |c: char| c.is_whitespace() || c == '[' || c == '{';
    let after = first.trim_start_matches(bracket);
    // An object's first key after the brackets (`["a"],b` is a header).
    let opens = first[..first.len() - after.len()].contains('{')
        && (after.is_empty() || after.starts_with('"'));
    (first.starts_with('{') || first.starts_with('[')) && (opens || whole(line) || whole(first))
}

/// Whether a row is `1,2,...,n` (3 cells or more): a header a person may write, or a
/// row of small integers, so only said in a warning.
pub(crate) fn counts_its_columns(cells: &[&str]) -> bool {
    cells.len() >= 3
        && cells
            .iter()
            .enumerate()
            .all(|(j, c)| c.trim() == (j + 1).to_string())
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
/// training file's columns would be read silently wrong (a header `pw,pl,sw,sl,y`
/// naming reordered columns changes every prediction; Python's estimators warn of the
/// same).
pub(crate) fn warn_of_names_read_by_position(path: &Path, line: usize, names: &[impl AsRef<str>]) {
    let names: Vec<&str> = names.iter().map(|n| n.as_ref().trim()).collect();
    tracing::warn!(
        "{}: line {line} ({}) is a header, but the model was trained on a table without one, so its columns are read by position, as the training file's were: if they are in another order, the results are wrong",
        path.display(),
        names.join(",")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a first line is read as.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Read {
        Header,
        /// A row of values.
        Row,
        /// A row of values, with a warning that holds this.
        RowSaid(&'static str),
        /// No table: refused as JSON.
        Json,
    }

    /// What the first line of `text` is read as, in a file read fresh whose column
    /// `label` (if any) is the target of labels, as the readers of tables judge it.
    fn read(text: &str, label: Option<usize>) -> Read {
        if is_json(text) {
            return Read::Json;
        }
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
        let first = &rows[0];
        let is_label = |j: usize| Some(j) == label;
        if first_row_is_header(first, |j| !is_label(j)) || is_column_numbers(first, is_label) {
            return Read::Header;
        }
        let cells: Vec<&str> = first.iter().map(|c| c.trim()).collect();
        if counts_its_columns(&cells) {
            return Read::RowSaid("counts its columns");
        }
        if let Some(j) = label
            && a_class_of_its_own(first[j], rows[1..].iter().map(|r| r[j]))
        {
            return Read::RowSaid("a class no other row has");
        }
        Read::Row
    }

    #[test]
    fn a_first_line_is_read_as_the_rules_say() {
        use Read::*;
        let last = |n: usize| Some(n - 1);
        let rows: Vec<(&str, &str, Option<usize>, Read)> = vec![
            // One row per rule.
            ("a header of words", "a,b,c\n1,2,3\n", None, Header),
            (
                "words above a label",
                "x,y,species\n1,2,setosa\n",
                last(3),
                Header,
            ),
            (
                "scikit-learn's header of counts and class names",
                "150,4,setosa,versicolor,virginica\n5.1,3.5,1.4,0.2,0\n",
                None,
                Header,
            ),
            ("text in any column", "x,red\ny,blue\n", None, Header),
            (
                "pandas' index column read back",
                "Unnamed: 0,a,b\n0,1,2\n",
                None,
                Header,
            ),
            ("pandas' column numbers", "0,1,2,3\n5,6,7,8\n", None, Header),
            (
                "column numbers, blanks around",
                "0, 1, 2\n5,6,7\n",
                None,
                Header,
            ),
            (
                "features numbered from 1 beside a label's name",
                "1,2,3,4,species\n5.1,3.5,1.4,0.2,setosa\n",
                last(5),
                Header,
            ),
            (
                "features numbered from 0 beside a label's name",
                "0,1,2,species\n5.1,3.5,1.4,setosa\n",
                last(4),
                Header,
            ),
            (
                "the label's name first",
                "species,1,2,3\nsetosa,5.1,3.5,1.4\n",
                Some(0),
                Header,
            ),
            (
                "numbers as names above text labels",
                "2019,2020,2021,class\n1,2,3,a\n4,5,6,b\n",
                last(4),
                RowSaid("a class no other row has"),
            ),
            (
                "columns counted from 1",
                "1,2,3\n4,5,6\n",
                None,
                RowSaid("counts its columns"),
            ),
            (
                "a JSON array of objects",
                "[{\"a\": 1}, {\"a\": 2}]\n",
                None,
                Json,
            ),
            ("JSON lines", "{\"a\": 1}\n{\"a\": 2}\n", None, Json),
            ("JSON cut short", "{\n  \"a\": [1, 2,\n", None, Json),
            ("JSON with NaN", "[{\"a\": NaN, \"b\": 1}]\n", None, Json),
            ("a JSON array of rows", "[[1, 2], [3, 4]]\n", None, Json),
            // The false alarms they must not raise.
            ("a first data row", "5.1,3.5,1.4\n4.9,3.0,1.4\n", None, Row),
            (
                "a row with a text label",
                "5.1,3.5,setosa\n4.9,3.0,setosa\n",
                last(3),
                Row,
            ),
            (
                "a label that other rows have",
                "2019,2020,2021,a\n1,2,3,a\n4,5,6,b\n",
                last(4),
                Row,
            ),
            ("a numeric label", "1,2,3,7\n4,5,6,8\n", last(4), Row),
            ("a missing value", ",1\n2,3\n", None, Row),
            (
                "NaN and infinities",
                "1,NaN,-inf, 1e3\n2,3,4,5\n",
                None,
                Row,
            ),
            ("two column numbers", "0,1\n5,6\n", None, Row),
            ("numbers out of order", "0,1,3\n5,6,7\n", None, Row),
            (
                "a gap in the numbers (its label then said as a class of its own)",
                "1,2,4,species\n5,6,7,setosa\n",
                last(4),
                RowSaid("a class no other row has"),
            ),
            (
                "a gap in numbers above numeric labels",
                "1,2,4,9\n5,6,7,1\n",
                last(4),
                Row,
            ),
            (
                "numbers beside a missing name",
                "1,2,3,\n5,6,7,\n",
                last(4),
                Row,
            ),
            ("one row alone", "5,6,7,x\n", last(4), Row),
            ("a name in brackets", "[1],b\n2,3\n", None, Header),
            ("an empty object as a name", "{},x\n2,3\n", None, Header),
            (
                "a quoted name in brackets",
                "[\"a\"],b\n2,3\n",
                None,
                Header,
            ),
            ("a Python list as a name", "['a'],b\n2,3\n", None, Header),
        ];
        for (name, text, label, wanted) in rows {
            assert_eq!(read(text, label), wanted, "{name}: {text:?}");
        }
    }

    #[test]
    fn the_header_guess_with_a_column_exempted() {
        // The guess itself, with a column exempted.
        let row = |r: &[&str]| r.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(first_row_is_header(row(&["1", "a"]), |_| true));
        // pandas' header of unnamed columns; two columns may be a data row.
        let none = |_| false;
        assert!(is_column_numbers(&["0", "1", " 2", "3"], none));
        // `1,2,3` alone is as likely a row of small integers: said, not taken.
        assert!(!is_column_numbers(&["1", "2", "3"], none));
        assert!(counts_its_columns(&["1", "2", "3"]));
        assert!(!is_column_numbers(&["0", "1"], none));
        assert!(!is_column_numbers(&["0", "1", "3"], none));
        assert!(!is_column_numbers(&["1", "2", "3", "species"], none));
        // Three features or more numbered in order, beside a label column's name.
        let last = |j| j == 3;
        assert!(is_column_numbers(&["1", "2", "3", "species"], last));
        assert!(is_column_numbers(&["0", "1", "2", "species"], last));
        assert!(is_column_numbers(&["0", "1", "2", "3"], last));
        assert!(is_column_numbers(&["species", "1", "2", "3"], |j| j == 0));
        assert!(!is_column_numbers(&["x", "1", "2"], |j| j == 0));
        assert!(!is_column_numbers(&["1", "2", "3", "7"], last));
        assert!(!is_column_numbers(&["1", "2", "4", "species"], last));
        assert!(!is_column_numbers(&["1", "2", "3", ""], last));
        assert!(!first_row_is_header(row(&["1", "a"]), |j| j != 1));
        assert!(!first_row_is_header(
            row(&[" 1e3", "NaN", "-inf", ""]),
            |_| true
        ));
    }

    /// The warnings say which line and what to do, and a header of column numbers in a
    /// later file of a model whose own file had none is a row.
    #[test]
    fn column_numbers_are_a_header_only_in_a_file_read_fresh() {
        let path = Path::new("/t.csv");
        let row = ["0", "1", "2", "3"];
        assert!(header_of_column_numbers(path, 1, &row, |_| false, true));
        assert!(!header_of_column_numbers(path, 1, &row, |_| false, false));
        assert!(!header_of_column_numbers(
            path,
            1,
            &["1", "2", "3"],
            |_| false,
            true
        ));
    }
}
