//! Any delimited table as a data set: one target column (by header name or 0-based
//! index), every other column a numeric feature.
//!
//! Classification labels may be any text; they are mapped to classes in sorted order
//! (numerically when all are numbers) and the names are kept so that predictions can
//! be reported as labels. The [`TargetSpec`] is stored in the model, so `eval` and
//! `predict` read later files the same way.

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use super::csv::Separator;
use super::csv::{CsvOptions, HeaderMode, parse_bytes};
use super::f32_columns::check_magnitudes;
use super::header::{first_row_is_header, header_of_column_numbers};
use super::table::Table;
use super::target_column::{Reading, TargetColumn, warn_of_a_header_read_as_a_row};
use super::{Dataset, Targets};
use crate::error::{AntError, Result, list, quoted};
use crate::task::TaskKind;

/// How to read a table: which column is the target and what it holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetSpec {
    /// A 0-based column index, or else a header name.
    pub column: String,
    pub task: TaskKind,
    /// `None` detects it.
    #[serde(default)]
    pub delimiter: Option<Separator>,
    #[serde(default)]
    pub skip_rows: usize,
    /// The target's index and the column count in the training file (filled in by
    /// [`parse_labelled`]'s caller), so files without a header can be read later.
    #[serde(default)]
    pub(crate) index: Option<usize>,
    #[serde(default)]
    pub(crate) n_columns: Option<usize>,
    /// The training file's header, every column in order (`None`: it had none). Later
    /// files are read by these names, whatever their order.
    #[serde(default)]
    pub(crate) columns: Option<Vec<String>>,
    /// Whether files are judged as read fresh though the target's place is known: a
    /// test file given at training, or every file of a model fitted in memory (it read
    /// no file of its own whose first row a later one should be read like). Not saved.
    #[serde(skip)]
    pub(crate) fresh: bool,
    /// Whether `skip_rows` was given for the file now read (not the training file's,
    /// applied to another). Not saved.
    #[serde(skip)]
    pub(crate) skip_given: bool,
}

impl TargetSpec {
    /// What a model's `tree.json` says of its table must be possible for a model of
    /// `features` inputs: the target's index among the columns, as many columns as the
    /// features and the target, a header of that many names, each once.
    pub(crate) fn check(&self, features: usize) -> std::result::Result<(), String> {
        let n = self.n_columns.unwrap_or(features + 1);
        if n != features + 1 {
            return Err(format!(
                "provenance.target: {n} columns, but the model takes {features} features and a target"
            ));
        }
        if let Some(i) = self.index.filter(|&i| i >= n) {
            return Err(format!(
                "provenance.target: index {i} is beyond its {n} columns"
            ));
        }
        let Some(names) = &self.columns else {
            return Ok(());
        };
        if names.len() != n {
            let k = names.len();
            return Err(format!(
                "provenance.target: {k} column names for {n} columns"
            ));
        }
        let mut seen = std::collections::HashSet::with_capacity(n);
        match names
            .iter()
            .find(|c| !seen.insert(super::columns::name_key(c)))
        {
            Some(twice) => Err(format!("provenance.target names {} twice", quoted(twice))),
            None => Ok(()),
        }
    }

    /// A warning for the user's `--target N` (this spec filled in by reading the file
    /// `path`) where the header also names another column `N`: the number is an index.
    /// Said, not refused: scikit-learn's own tables head their columns with counts
    /// (`150,4,setosa,...`), where `--target 4` means the index.
    pub(crate) fn index_also_a_name(&self, path: &Path) -> Option<String> {
        let j: usize = self.column.trim().parse().ok()?;
        let names = self.columns.as_ref()?;
        let key = super::columns::name_key(&self.column);
        let k = (0..names.len()).find(|&k| k != j && super::columns::name_key(&names[k]) == key)?;
        Some(format!(
            "{}: the target {} is taken as a 0-based index, column {j} ({}), though column {k} is named {}; --target {NAME_PREFIX}{} means that one (and if line {} is no header, --skip-rows {} drops it)",
            path.display(),
            quoted(&self.column),
            quoted(names.get(j)?),
            quoted(&names[k]),
            self.column.trim(),
            self.skip_rows + 1,
            self.skip_rows + 1
        ))
    }

    /// A header-less table of `features` feature columns with the target last (as
    /// scikit-learn writes them): how a model fitted on rows in memory reads files.
    pub fn last_of(features: usize, task: TaskKind) -> TargetSpec {
        let mut spec = TargetSpec::new(features.to_string(), task);
        spec.index = Some(features);
        spec.n_columns = Some(features + 1);
        spec
    }

    pub fn new(column: impl Into<String>, task: TaskKind) -> TargetSpec {
        TargetSpec {
            column: column.into(),
            task,
            delimiter: None,
            skip_rows: 0,
            index: None,
            n_columns: None,
            columns: None,
            fresh: false,
            skip_given: false,
        }
    }

    fn options(&self) -> CsvOptions {
        CsvOptions {
            delimiter: self.delimiter,
            skip_rows: self.skip_rows,
            // Decided here, not by the CSV reader: the target column (text labels)
            // is exempt from the header guess.
            header: HeaderMode::Absent,
        }
    }
}

/// How a command reads a table file for a saved model, where it says: its field
/// separator and the lines to drop at its top (`None`: as the model's training file
/// was read, which the training file itself needs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FileReading {
    pub delimiter: Option<Separator>,
    pub skip_rows: Option<usize>,
}

impl TargetSpec {
    /// Whether a file is read as a training file is (the user's spec, or
    /// [`TargetSpec::fresh`]), not as a later file of a model that read its own.
    pub(crate) fn read_fresh(&self) -> bool {
        self.index.is_none() || self.fresh
    }

    /// Reads the next files as `reading` says, where it says.
    pub fn read_files_as(&mut self, reading: FileReading) {
        if let Some(d) = reading.delimiter {
            self.delimiter = Some(d);
        }
        if let Some(n) = reading.skip_rows {
            self.skip_rows = n;
            self.skip_given = true;
        }
    }
}

/// A labelled table read as a data set.
#[derive(Debug)]
pub struct Tabular {
    pub data: Dataset,
    /// Class names in class order (classification).
    pub class_names: Option<Vec<String>>,
    /// Where the target column was found, and how many columns the file has.
    pub index: usize,
    pub n_columns: usize,
    /// The header row, every column in order (`None`: the file has none).
    pub columns: Option<Vec<String>>,
}

/// The table a file holds: a Parquet file's rows (its column names first), or
/// delimited text. An empty one is an error.
fn table(bytes: &[u8], path: &Path, spec: &TargetSpec) -> Result<Table> {
    if super::parquet::is_parquet(bytes) {
        let skip = spec.skip_rows > 0 && (spec.index.is_none() || spec.skip_given);
        return super::parquet::read_table(bytes, path, skip);
    }
    let t = parse_bytes(bytes, path, &spec.options())?;
    warn_of_skipped_values(bytes, &t, spec, path);
    if t.n_rows() == 0 {
        let skipped = if spec.skip_rows > 0 {
            format!(" after skipping {} lines", spec.skip_rows)
        } else {
            String::new()
        };
        return Err(AntError::data(path, format!("contains no rows{skipped}")));
    }
    Ok(t)
}

/// `e` (a header the model cannot read) with the lines skipped before it named, when
/// the training file's skip, not the user, dropped them: the header may be among them.
fn skipped(e: AntError, spec: &TargetSpec) -> AntError {
    match e {
        AntError::Data { path, msg } if spec.skip_rows > 0 && !spec.skip_given => {
            let n = spec.skip_rows;
            let msg = format!(
                "{msg} (its first {n} lines were skipped, as the model's training file's: give --skip-rows 0 to read them)"
            );
            AntError::Data { path, msg }
        }
        e => e,
    }
}

/// Warns when a line that a model's `--skip-rows` (its training file's) drops from a
/// later file holds a row of values: that file may not have the training file's first
/// lines, and its first rows would be lost without a word.
fn warn_of_skipped_values(bytes: &[u8], t: &Table, spec: &TargetSpec, path: &Path) {
    // The user's own skip (training's file, or a command's flag) is theirs to judge.
    if spec.skip_rows == 0 || spec.index.is_none() || spec.skip_given {
        return;
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 20)]);
    let skipped = text.lines().take(spec.skip_rows).enumerate();
    let values = skipped
        .filter(|(_, l)| super::csv::holds_values(l, t.delimiter, t.n_cols()))
        .map(|(k, _)| k + 1)
        .next();
    if let Some(line) = values {
        tracing::warn!(
            "{}: line {line} holds values but is skipped, as the model's training file's first {} lines were (--skip-rows {}); give --skip-rows 0 to read it",
            path.display(),
            spec.skip_rows,
            spec.skip_rows
        );
    }
}

/// What `--target` says to mean a header name only (`name:1`, the column named 1),
/// as LightGBM's `label_column` does: a bare number is an index.
const NAME_PREFIX: &str = "name:";

/// Finds the target column: by name in a header row, else as a 0-based index.
/// Returns `(index, has_header)`.
fn resolve_target(t: &Table, spec: &TargetSpec, path: &Path) -> Result<(usize, bool)> {
    let first = t.row_strings(0);
    let n = t.n_cols();
    let given = spec.column.trim();
    // A column literally named `name:label` is that column still.
    let literal = first
        .iter()
        .any(|c| super::columns::name_key(c) == super::columns::name_key(given));
    let (wanted, by_name) = match given.strip_prefix(NAME_PREFIX) {
        Some(name) if !literal => (name, true),
        _ => (given, false),
    };
    // A number is an index: data rows hold numbers too, so matching it as a name
    // could pick a data cell.
    if let (false, Ok(j)) = (by_name, wanted.parse::<usize>()) {
        if j >= n {
            return Err(AntError::data(
                path,
                format!("target column index {j} out of range: the file has {n} columns (0-based)"),
            ));
        }
        let has_header = first_row_is_header(&first, |k| k != j)
            || header_of_column_numbers(path, t.line(0), &first, |k| k == j, spec.read_fresh());
        if !has_header && spec.read_fresh() {
            warn_of_a_header_read_as_a_row(t, j, path);
        }
        return Ok((j, has_header));
    }
    let key = super::columns::name_key(wanted);
    let named: Vec<usize> = (0..n)
        .filter(|&k| super::columns::name_key(&first[k]) == key)
        .collect();
    match named[..] {
        [j] => return Ok((j, true)),
        [_, _, ..] => {
            let at: Vec<String> = named.iter().map(|k| k.to_string()).collect();
            return Err(AntError::data(
                path,
                format!(
                    "the target name {} is ambiguous: columns {} have it; give a 0-based column index, or rename them",
                    quoted(wanted),
                    at.join(", ")
                ),
            ));
        }
        [] => {}
    }
    // Text above numbers, or no number, says header (`5.1,...,setosa` is a row, not names).
    let numeric_below = |k: usize| t.n_rows() < 2 || super::header::is_number(t.cell(1, k));
    let names = !first.iter().any(|c| super::header::is_number(c))
        || super::header::is_column_numbers(&first, |_| true);
    let hint = if names || first_row_is_header(&first, numeric_below) {
        let names: Vec<String> = first.iter().map(|c| quoted(c)).collect();
        format!("columns are: {}", list(&names))
    } else {
        "the file has no header row; give a 0-based column index".to_string()
    };
    Err(AntError::data(
        path,
        format!("no column named {} ({hint})", quoted(wanted)),
    ))
}

/// Names a column in messages: its 0-based index, and its header name if any.
fn column_label(header: Option<&[String]>, j: usize) -> String {
    match header.and_then(|h| h.get(j)) {
        Some(name) => format!("column {j} ({})", quoted(name)),
        None => format!("column {j}"),
    }
}

/// Parses the features of every row (all columns but `target`), refusing text,
/// NaN and infinities with the line and column.
fn features(
    t: &Table,
    rows: std::ops::Range<usize>,
    target: Option<usize>,
    header: Option<&[String]>,
    path: &Path,
    reading: Reading,
) -> Result<Vec<f32>> {
    let mut seen = super::ColumnMagnitudes::new(t.n_cols());
    let mut x = Vec::with_capacity(rows.len() * t.n_cols());
    for r in rows {
        for (j, cell) in t.row(r).enumerate() {
            if Some(j) == target {
                continue;
            }
            let v: f64 = cell.trim().parse().map_err(|_| {
                AntError::data(
                    path,
                    format!(
                        "{}, {}: {} is not a number",
                        t.place(r),
                        column_label(header, j),
                        quoted(cell)
                    ),
                )
            })?;
            // Checked after narrowing: a huge f64 becomes an f32 infinity.
            let v32 = super::to_f32(v).map_err(|why| {
                AntError::data(
                    path,
                    format!(
                        "{}, {}: {} {why}",
                        t.place(r),
                        column_label(header, j),
                        quoted(cell)
                    ),
                )
            })?;
            seen.see(j, v);
            x.push(v32);
        }
    }
    if reading == Reading::Training {
        check_magnitudes(&seen, |j| column_label(header, j), path)?;
    }
    Ok(x)
}

/// Reads a table with its target column from a file's (gunzipped) bytes; `path` only
/// names it in errors. For classification, `classes` (a trained model's class names)
/// fixes the mapping, else it is built from the file.
pub(crate) fn parse_labelled(
    bytes: &[u8],
    path: &Path,
    spec: &TargetSpec,
    classes: Option<&[String]>,
) -> Result<Tabular> {
    let mut t = table(bytes, path, spec)?;
    // A model's table is read by the names it was trained on, in its order.
    if let Some(names) = &spec.columns {
        t = super::columns::by_names(t, names, None, spec.index, path)
            .map_err(|e| skipped(e, spec))?;
    }
    let n_columns = t.n_cols();
    check_column_count(n_columns, spec, path)?;
    let (index, has_header) = match (&spec.columns, spec.index) {
        (Some(_), Some(index)) => (index, true),
        _ => resolve_target(&t, spec, path)?,
    };
    let header = has_header.then(|| t.row_strings(0));
    if let (None, Some(h)) = (&spec.columns, &header) {
        super::columns::check_unique(h, t.line(0), path)?;
        if spec.index.is_some() {
            super::header::warn_of_names_read_by_position(path, t.line(0), h);
        }
    }
    let rows = data_rows(&t, has_header, path)?;
    // Features first: a bad feature cell is reported before a bad target cell.
    // A model's spec (its index recorded) reads a later file; the user's, training's.
    let reading = match spec.index {
        None => Reading::Training,
        Some(_) => Reading::Later,
    };
    let x = features(
        &t,
        rows.clone(),
        Some(index),
        header.as_deref(),
        path,
        reading,
    )?;
    let target = TargetColumn {
        table: &t,
        rows,
        index,
        label: column_label(header.as_deref(), index),
        path,
    };
    let (targets, class_names) = match spec.task {
        TaskKind::Regression => (target.values(reading)?, None),
        TaskKind::Classification => {
            let (targets, names) = target.classes(classes)?;
            (targets, Some(names))
        }
    };
    let data = Dataset::new(x, vec![n_columns - 1], targets)?;
    Ok(Tabular {
        data,
        class_names,
        index,
        n_columns,
        columns: header,
    })
}

/// A labelled table needs a target and a feature; a later file must have the
/// training file's column count (`spec.n_columns`), else its columns would shift.
fn check_column_count(n_columns: usize, spec: &TargetSpec, path: &Path) -> Result<()> {
    if n_columns < 2 {
        return Err(AntError::data(
            path,
            format!("has {n_columns} column; need the target and at least one feature"),
        ));
    }
    if let Some(want) = spec.n_columns
        && want != n_columns
    {
        return Err(AntError::data(
            path,
            format!("has {n_columns} columns; the model was trained on {want}"),
        ));
    }
    Ok(())
}

/// The rows holding data (all but a header row); a header alone is an error.
fn data_rows(t: &Table, has_header: bool, path: &Path) -> Result<std::ops::Range<usize>> {
    let start = usize::from(has_header);
    if start == t.n_rows() {
        return Err(AntError::data(path, "has a header but no data rows"));
    }
    Ok(start..t.n_rows())
}

/// Reads rows to predict: `n_features` columns, or those plus the target column
/// (then ignored). `spec` is the model's (`None`: no target column was named in
/// training; a row may then carry `n_outputs` trailing target columns, as SARCOS).
/// The targets of the returned set are placeholders. `bytes` are the file's
/// (gunzipped); `path` only names it in errors.
pub(crate) fn parse_features(
    bytes: &[u8],
    path: &Path,
    spec: Option<&TargetSpec>,
    n_features: usize,
    n_outputs: usize,
) -> Result<Dataset> {
    let default_spec = TargetSpec::new("", TaskKind::Regression);
    let t = table(bytes, path, spec.unwrap_or(&default_spec))?;
    if let Some(s) = spec
        && let (Some(names), Some(target)) = (&s.columns, s.index)
    {
        // The features by the names the model was trained on; the target may be there.
        let kept = super::columns::by_names(t, names, Some(target), Some(target), path)
            .map_err(|e| skipped(e, s))?;
        let rows = data_rows(&kept, true, path)?;
        let count = rows.len();
        let x = features(
            &kept,
            rows,
            None,
            Some(&kept.row_strings(0)),
            path,
            Reading::Later,
        )?;
        let values = vec![0.0; count];
        return Dataset::new(x, vec![n_features], Targets::Values { values, dim: 1 });
    }
    let dropped = dropped_columns(&t, spec, n_features, n_outputs, path)?;
    let is_feature = |j: usize| !dropped.contains(&j);
    // Only the feature columns decide whether the first row is a header: the
    // target column may hold text labels.
    let first = t.row_strings(0);
    let named = first_row_is_header(&first, is_feature);
    let has_header = named
        || header_of_column_numbers(
            path,
            t.line(0),
            &first,
            |j| !is_feature(j),
            spec.is_none_or(|s| s.read_fresh()),
        );
    if named && spec.is_some() {
        super::header::warn_of_names_read_by_position(path, t.line(0), &first);
    }
    let rows = data_rows(&t, has_header, path)?;
    let kept = keep_columns(t, is_feature);
    let header = has_header.then(|| kept.row_strings(0));
    let count = rows.len();
    let x = features(&kept, rows, None, header.as_deref(), path, Reading::Later)?;
    // Placeholder targets: prediction ignores them.
    Dataset::new(
        x,
        vec![n_features],
        Targets::Values {
            values: vec![0.0; count],
            dim: 1,
        },
    )
}

/// Which columns of a file to predict are not features, told by the column count:
/// none (`n_features` columns), the model's target column (one more), or without a
/// target spec the trailing `n_outputs` target columns.
fn dropped_columns(
    t: &Table,
    spec: Option<&TargetSpec>,
    n_features: usize,
    n_outputs: usize,
    path: &Path,
) -> Result<Vec<usize>> {
    let n = t.n_cols();
    match spec {
        _ if n == n_features => Ok(vec![]),
        Some(s) if n == n_features + 1 => Ok(vec![find_target(&t.row_strings(0), s, n, path)?]),
        None if n == n_features + n_outputs => Ok((n_features..n).collect()),
        _ => {
            let with = match spec {
                Some(_) => " (or one more with the target column)".to_string(),
                None => format!(" (or {} with the targets)", n_features + n_outputs),
            };
            Err(AntError::data(
                path,
                format!("has {n} columns; the model takes {n_features}{with}"),
            ))
        }
    }
}

/// The model's target column in a file of `n` columns: by index, else by name in
/// the first row, else where it was in the training file.
fn find_target(first: &[String], s: &TargetSpec, n: usize, path: &Path) -> Result<usize> {
    let col = s.column.trim();
    let j = match col.parse::<usize>() {
        Ok(j) => Some(j),
        Err(_) => {
            let named: Vec<usize> = (0..n).filter(|&k| first[k].trim() == col).collect();
            match named[..] {
                [j] => Some(j),
                // Ambiguous: where it was in training, if that is one of them.
                [_, _, ..] => s.index.filter(|j| named.contains(j)),
                [] => s.index,
            }
        }
    }
    .filter(|&j| j < n);
    j.ok_or_else(|| {
        let msg = format!(
            "cannot find target column {} (or it is ambiguous)",
            quoted(&s.column)
        );
        AntError::data(path, msg)
    })
}

/// The table with only the columns where `keep` holds (no cell is copied).
fn keep_columns(t: Table, keep: impl Fn(usize) -> bool) -> Table {
    let cols: Vec<usize> = (0..t.n_cols()).filter(|&j| keep(j)).collect();
    t.with_columns(&cols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::read_maybe_gz;

    fn load_labelled(p: &Path, spec: &TargetSpec, names: Option<&[String]>) -> Result<Tabular> {
        parse_labelled(&read_maybe_gz(p)?, p, spec, names)
    }

    fn load_features(p: &Path, spec: Option<&TargetSpec>, n: usize, k: usize) -> Result<Dataset> {
        parse_features(&read_maybe_gz(p)?, p, spec, n, k)
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn labels(d: &Dataset) -> Vec<u32> {
        match &d.targets {
            Targets::Classes { labels, .. } => labels.clone(),
            _ => panic!("classes"),
        }
    }

    #[test]
    fn header_name_text_labels_and_delimiters() {
        let d = tempfile::tempdir().unwrap();
        let texts = [
            "a,species,b\n1,setosa,2\n3,virginica,4\n5,setosa,6\n",
            "a;species;b\n1;setosa;2\n3;virginica;4\n5;setosa;6\n",
            "a\tspecies\tb\n1\tsetosa\t2\n3\tvirginica\t4\n5\tsetosa\t6\n",
            "a   species b\n 1 setosa    2\n3 virginica 4\n5 setosa 6\n",
        ];
        for (i, text) in texts.iter().enumerate() {
            let p = write(d.path(), &format!("t{i}.csv"), text);
            for col in ["species", "1"] {
                let t = load_labelled(&p, &TargetSpec::new(col, TaskKind::Classification), None)
                    .unwrap();
                assert_eq!(t.index, 1);
                assert_eq!(t.n_columns, 3);
                assert_eq!(
                    t.class_names,
                    Some(vec!["setosa".to_string(), "virginica".into()])
                );
                assert_eq!(t.data.x(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{text:?}");
                assert_eq!(labels(&t.data), vec![0, 1, 0]);
            }
        }
    }

    #[test]
    fn quoted_labels_may_span_lines() {
        let d = tempfile::tempdir().unwrap();
        let text = "x,\"kind,\nof iris\"\n1,\"Iris\nsetosa\"\n2,virginica\nq,virginica\n";
        let p = write(d.path(), "q.csv", text);
        let spec = TargetSpec::new("kind,\nof iris", TaskKind::Classification);
        let e = load_labelled(&p, &spec, None).unwrap_err().to_string();
        assert!(
            e.contains("line 6, column 0 ('x'): 'q' is not a number"),
            "{e}"
        );
        let p = write(
            d.path(),
            "q.csv",
            text.strip_suffix("q,virginica\n").unwrap(),
        );
        let t = load_labelled(&p, &spec, None).unwrap();
        assert_eq!(t.index, 1);
        assert_eq!(
            t.class_names,
            Some(vec!["Iris\nsetosa".to_string(), "virginica".into()])
        );
        assert_eq!(t.data.x(), vec![1.0, 2.0]);
    }

    #[test]
    fn numeric_labels_sort_numerically_and_map_through_known_classes() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "n.csv", "# comment\n1,10\n2,2.0\n3,9\n4,2\n");
        let mut spec = TargetSpec::new("1", TaskKind::Classification);
        spec.skip_rows = 1;
        spec.delimiter = Some(Separator::Comma);
        let t = load_labelled(&p, &spec, None).unwrap();
        assert_eq!(
            t.class_names,
            Some(vec!["2".to_string(), "9".into(), "10".into()])
        );
        assert_eq!(labels(&t.data), vec![2, 0, 1, 0]);
        // A later file mapped through the model's classes; an unknown one is refused.
        let names = t.class_names.unwrap();
        let q = write(d.path(), "q.csv", "7,9\n8,10\n");
        let spec = TargetSpec::new("1", TaskKind::Classification);
        let u = load_labelled(&q, &spec, Some(&names)).unwrap();
        assert_eq!(labels(&u.data), vec![1, 2]);
        let q = write(d.path(), "q.csv", "7,9\n8,11\n");
        let e = load_labelled(&q, &spec, Some(&names))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("'11'"), "{e}");
    }

    #[test]
    fn regression_and_gzip() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"y x1 x2\n1.5 1 2\n-2 3 4\n").unwrap();
        let p = d.path().join("r.csv.gz");
        std::fs::write(&p, enc.finish().unwrap()).unwrap();
        let t = load_labelled(&p, &TargetSpec::new("y", TaskKind::Regression), None).unwrap();
        assert_eq!(t.data.x(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            t.data.targets,
            Targets::Values {
                values: vec![1.5, -2.0],
                dim: 1
            }
        );
        assert!(t.class_names.is_none());
    }

    #[test]
    fn bad_tables_name_line_and_column() {
        let d = tempfile::tempdir().unwrap();
        let cls = |c: &str| TargetSpec::new(c, TaskKind::Classification);
        let cases: [(&str, TargetSpec, &str); 9] = [
            (
                "a,b\n1,0\n2,nan\n",
                cls("a"),
                "line 3, column 1 ('b'): 'nan' is non-finite",
            ),
            (
                "a,b\n1,0\n2,1e300\n",
                cls("a"),
                "line 3, column 1 ('b'): '1e300' is 1e300, which overflows f32",
            ),
            (
                "a,b\n1,0\n2,x\n",
                cls("a"),
                "line 3, column 1 ('b'): 'x' is not a number",
            ),
            (
                "a,b\n1,0\n2,\n",
                cls("b"),
                "line 3, column 1 ('b'): missing label",
            ),
            ("a,b\n1,0\n2,0\n", cls("b"), "single class"),
            (
                "a,b\n1,0\n2,1\n",
                cls("c"),
                "no column named 'c' (columns are: 'a', 'b')",
            ),
            ("1,0\n2,1\n", cls("5"), "index 5 out of range"),
            (
                "a,b\n1,x\n",
                TargetSpec::new("b", TaskKind::Regression),
                "not a number",
            ),
            ("a,b\n", cls("b"), "no data rows"),
        ];
        for (i, (text, spec, needle)) in cases.into_iter().enumerate() {
            let p = write(d.path(), &format!("bad{i}.csv"), text);
            let e = load_labelled(&p, &spec, None).unwrap_err();
            assert!(matches!(e, AntError::Data { .. }));
            let msg = e.to_string();
            assert!(msg.contains(&format!("bad{i}.csv")), "{msg}");
            assert!(msg.contains(needle), "{text:?}: {msg}");
        }
        assert!("x".parse::<Separator>().is_err());
        assert_eq!(" ".parse::<Separator>(), Ok(Separator::Space));
    }

    #[test]
    fn features_with_or_without_the_target() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = TargetSpec::new("label", TaskKind::Classification);
        spec.index = Some(0);
        spec.n_columns = Some(3);
        for text in [
            "label,a,b\nx,1,2\ny,3,4\n",
            "a,b\n1,2\n3,4\n",
            "x,1,2\ny,3,4\n",
            "1 2\n3 4\n",
        ] {
            let p = write(d.path(), "f.csv", text);
            let ds = load_features(&p, Some(&spec), 2, 3).unwrap();
            assert_eq!(ds.x(), vec![1.0, 2.0, 3.0, 4.0], "{text:?}");
            assert_eq!(ds.sample_shape, vec![2]);
        }
        // Without a spec: trailing targets (SARCOS layout) are dropped.
        let p = write(d.path(), "s.csv", "1,2,9,9\n3,4,9,9\n");
        assert_eq!(
            load_features(&p, None, 2, 2).unwrap().x(),
            vec![1.0, 2.0, 3.0, 4.0]
        );
        let e = load_features(&p, Some(&spec), 5, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("has 4 columns; the model takes 5"), "{e}");
    }
}
