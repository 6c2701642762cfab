//! A table of text cells, as a delimited text file or a Parquet file is read: the one
//! form every table's rules (`--target`, headers, labels) read.

use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{AntError, Result};

/// Field separator, as given on the command line and stored in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Separator {
    Comma,
    Semicolon,
    Tab,
    /// Runs of spaces and/or tabs; leading and trailing blanks are ignored.
    Space,
}

impl Separator {
    /// The separating byte; `None` for runs of blanks.
    pub(crate) fn byte(self) -> Option<u8> {
        match self {
            Separator::Comma => Some(b','),
            Separator::Semicolon => Some(b';'),
            Separator::Tab => Some(b'\t'),
            Separator::Space => None,
        }
    }
}

impl FromStr for Separator {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s {
            "," | "comma" => Separator::Comma,
            ";" | "semicolon" => Separator::Semicolon,
            "\t" | "\\t" | "tab" => Separator::Tab,
            " " | "space" | "whitespace" => Separator::Space,
            _ => {
                return Err(format!(
                    "unknown delimiter {s:?}: use ',' ';' tab or space (comma, semicolon, tab, space)"
                ));
            }
        })
    }
}


/// A table of text cells. All rows (and the header) have the same field count. The
/// cells are kept in one buffer (no string per cell or row): a table costs its text
/// and 8 bytes per cell and row.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub header: Option<Vec<String>>,
    pub(super) cells: Cells,
    /// The columns of `cells` this table shows, in its order.
    pub(super) cols: Vec<usize>,
    /// 1-based line number in the file where each row starts, for error messages.
    pub(super) line_numbers: Vec<u32>,
    /// The delimiter used (given or detected).
    pub delimiter: Separator,
    /// What a row's number counts, for messages.
    pub(super) numbered_by: RowNumbers,
}

/// What the numbers of a table's rows count: a text file's lines (1-based), or the
/// rows of a file without lines (Parquet's, from 0 as pandas' `iloc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum RowNumbers {
    Lines,
    Rows,
}

/// The rows' cells, one after another in one text buffer.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Cells {
    pub(super) text: String,
    /// Where each cell ends in `text`.
    pub(super) ends: Vec<u32>,
    /// Cells per row.
    pub(super) width: usize,
}

impl Cells {
    pub(super) fn push_row(&mut self, fields: &[String], path: &Path) -> Result<()> {
        for f in fields {
            self.text.push_str(f);
            let end = u32::try_from(self.text.len()).map_err(|_| {
                AntError::data(path, "holds more than 4 GiB of cell text: split the file")
            })?;
            self.ends.push(end);
        }
        Ok(())
    }

    fn get(&self, r: usize, c: usize) -> &str {
        let i = r * self.width + c;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

impl Table {
    /// Number of fields per row (0 for an empty table).
    pub(crate) fn n_cols(&self) -> usize {
        match &self.header {
            Some(h) => h.len(),
            None if self.n_rows() == 0 => 0,
            None => self.cols.len(),
        }
    }

    /// Number of rows (the header not counted).
    pub fn n_rows(&self) -> usize {
        self.line_numbers.len()
    }

    /// Row `r`'s cell in column `j`.
    pub fn cell(&self, r: usize, j: usize) -> &str {
        self.cells.get(r, self.cols[j])
    }

    /// Row `r`'s cells in order.
    pub fn row(&self, r: usize) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        self.cols.iter().map(move |&c| self.cells.get(r, c))
    }

    /// Row `r`'s cells, copied.
    pub(crate) fn row_strings(&self, r: usize) -> Vec<String> {
        self.row(r).map(str::to_string).collect()
    }

    /// The 1-based line of the file where row `r` starts.
    pub(crate) fn line(&self, r: usize) -> usize {
        self.line_numbers[r] as usize
    }

    /// Where row `r` is in its file, as a message says it: `line 7` of a text file,
    /// `row 5` of a Parquet file.
    pub(crate) fn place(&self, r: usize) -> String {
        match self.numbered_by {
            RowNumbers::Lines => format!("line {}", self.line_numbers[r]),
            RowNumbers::Rows => format!("row {}", self.line_numbers[r]),
        }
    }

    /// A table of another format's rows, its first row the column names (read as a
    /// text file's header is); rows are added with [`Table::push_row`].
    pub(crate) fn of_rows(names: &[String], path: &Path) -> Result<Table> {
        let mut cells = Cells {
            width: names.len(),
            ..Cells::default()
        };
        cells.push_row(names, path)?;
        Ok(Table {
            header: None,
            cols: (0..names.len()).collect(),
            cells,
            line_numbers: vec![0],
            delimiter: Separator::Comma,
            numbered_by: RowNumbers::Rows,
        })
    }

    /// Adds a row of [`Table::of_rows`]'s width, numbered `number` in its file.
    pub(crate) fn push_row(&mut self, fields: &[String], number: usize, path: &Path) -> Result<()> {
        assert_eq!(fields.len(), self.cells.width, "a row of the table's width");
        self.cells.push_row(fields, path)?;
        self.line_numbers.push(u32::try_from(number).unwrap_or(u32::MAX));
        Ok(())
    }

    /// The table with only the columns `cols` (indices of this table's columns), in that
    /// order, and no header: the cells are not copied.
    pub(crate) fn with_columns(self, cols: &[usize]) -> Table {
        let picked = cols.iter().map(|&j| self.cols[j]).collect();
        Table {
            header: None,
            cols: picked,
            ..self
        }
    }

    /// Every row's cells, copied (for tests).
    #[cfg(test)]
    pub(crate) fn rows(&self) -> Vec<Vec<String>> {
        (0..self.n_rows()).map(|r| self.row_strings(r)).collect()
    }
}

