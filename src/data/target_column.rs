//! A table's target column: its regression values, or its labels as classes (by the
//! one key of [`super::labels`]), and what reading the table is for.

use std::path::Path;

use super::Targets;
use super::f32_columns::check_magnitudes;
use super::table::Table;
use crate::error::{AntError, Result, list, quoted};

/// What reading a table is for: training judges whole columns too (one f32 would
/// flatten is refused); later files are read row by row.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    Training,
    Later,
}

/// Warns when the first row, read as a row, holds a text target that no other row has
/// ([`super::header::a_class_of_its_own`]): likely a header whose feature names are
/// numbers (`2019,2020,2021,class`), which would make one sample of a class of its own.
pub(crate) fn warn_of_a_header_read_as_a_row(t: &Table, j: usize, path: &Path) {
    let label = t.cell(0, j).trim();
    let others = (1..t.n_rows()).map(|r| t.cell(r, j));
    if !super::header::a_class_of_its_own(label, others) {
        return;
    }
    tracing::warn!(
        "{}: line {} is read as a row, and its target {} is a class no other row has: if it is a header, name the target column (--target {})",
        path.display(),
        t.line(0),
        crate::error::quoted(label),
        shell_word(label)
    );
}

/// `text` as one word for a shell: as it is when plain, else in single quotes (a hint's
/// `--target my label` would be split in two).
fn shell_word(text: &str) -> String {
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_-.:/".contains(&b));
    match plain {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', "'\\''")),
    }
}

/// The target column of the data rows, and the column's name for messages.
pub(super) struct TargetColumn<'a> {
    pub(super) table: &'a Table,
    pub(super) rows: std::ops::Range<usize>,
    pub(super) index: usize,
    pub(super) label: String,
    pub(super) path: &'a Path,
}

impl TargetColumn<'_> {
    /// An error about the target cell of row `r`.
    fn err(&self, r: usize, msg: impl std::fmt::Display) -> AntError {
        let place = self.table.place(r);
        AntError::data(self.path, format!("{place}, {}: {msg}", self.label))
    }

    /// Each data row's target cell with the row's index in the table.
    fn cells(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        self.rows
            .clone()
            .map(|r| (r, self.table.cell(r, self.index)))
    }

    /// Regression targets: every cell a finite number.
    pub(super) fn values(&self, reading: Reading) -> Result<Targets> {
        let mut values = Vec::with_capacity(self.rows.len());
        let mut seen = super::ColumnMagnitudes::new(1);
        for (r, cell) in self.cells() {
            let v = cell.trim().parse::<f64>();
            if let Ok(v) = v {
                seen.see(0, v);
            }
            match v.map(super::to_f32) {
                Ok(Ok(v)) => values.push(v),
                Ok(Err(why)) => {
                    return Err(self.err(r, format!("target {} {why}", quoted(cell))));
                }
                Err(_) => {
                    return Err(self.err(
                        r,
                        format!(
                            "target {} is not a number \
                             (use --task classification for labels)",
                            quoted(cell)
                        ),
                    ));
                }
            }
        }
        if reading == Reading::Training {
            check_magnitudes(&seen, |_| self.label.clone(), self.path)?;
        }
        Ok(Targets::Values { values, dim: 1 })
    }

    /// Classification targets and the class names: `classes` (a trained model's)
    /// fixes the mapping, else it is built from the labels in the file.
    pub(super) fn classes(&self, classes: Option<&[String]>) -> Result<(Targets, Vec<String>)> {
        let (ids, keys) = self.label_ids()?;
        let names = match classes {
            Some(c) => c.to_vec(),
            None => self.names_from(&keys)?,
        };
        let labels = self.class_indices(&ids, &keys, &names)?;
        let n_classes = names.len();
        Ok((Targets::Classes { labels, n_classes }, names))
    }

    /// Each row's label as the index of its class key among the distinct keys (one
    /// string per distinct label, not per row), and those keys; blank cells refused.
    fn label_ids(&self) -> Result<(Vec<u32>, Vec<String>)> {
        // The distinct texts first (with the row each first appears in), keyed together:
        // whether `nan` is a missing number or a text label depends on the others.
        let mut ids = Vec::with_capacity(self.rows.len());
        let (mut texts, mut first_row): (Vec<&str>, Vec<usize>) = (Vec::new(), Vec::new());
        let mut id_of: std::collections::HashMap<&str, u32> = Default::default();
        for (r, cell) in self.cells() {
            let text = cell.trim();
            if text.is_empty() {
                return Err(self.err(r, "missing label"));
            }
            let id = *id_of.entry(text).or_insert_with(|| {
                texts.push(text);
                first_row.push(r);
                texts.len() as u32 - 1
            });
            ids.push(id);
        }
        let text_keys = super::labels::column_keys(texts.iter().copied())
            .map_err(|(i, why)| self.err(first_row[i], why))?;
        // Texts with one key (`1`, `1.0`) are one label.
        let mut keys: Vec<String> = Vec::new();
        let mut key_id: std::collections::HashMap<&str, u32> = Default::default();
        let id_of_text: Vec<u32> = text_keys
            .iter()
            .map(|k| {
                *key_id.entry(k).or_insert_with(|| {
                    keys.push(k.clone());
                    keys.len() as u32 - 1
                })
            })
            .collect();
        ids.iter_mut().for_each(|id| *id = id_of_text[*id as usize]);
        Ok((ids, keys))
    }

    /// The classes found in the file; one alone cannot be learnt.
    fn names_from(&self, keys: &[String]) -> Result<Vec<String>> {
        let names = super::labels::sorted_classes(keys);
        if names.len() < 2 {
            return Err(AntError::data(
                self.path,
                format!(
                    "{} has a single class {}; classification needs at least 2",
                    self.label,
                    quoted(&names[0])
                ),
            ));
        }
        Ok(names)
    }

    /// Each row's class index in `names` (its key is `keys[id]`); a key not among them
    /// is an error on the first row that has it.
    fn class_indices(&self, ids: &[u32], keys: &[String], names: &[String]) -> Result<Vec<u32>> {
        // A model's names are keyed as the file's labels are: a model fitted in Python
        // on the labels 0.0, 1.0 reads a file's 0 and 1.
        let index_of =
            super::labels::index_of_names(names).map_err(|why| AntError::data(self.path, why))?;
        let class_of_key: Vec<Option<u32>> =
            keys.iter().map(|k| index_of.get(k).copied()).collect();
        let mut labels = Vec::with_capacity(ids.len());
        for ((r, _), &id) in self.cells().zip(ids) {
            let Some(l) = class_of_key[id as usize] else {
                return Err(self.err(
                    r,
                    format!(
                        "label {} is not one of the model's classes [{}]",
                        quoted(&keys[id as usize]),
                        list(names)
                    ),
                ));
            };
            labels.push(l);
        }
        Ok(labels)
    }
}
