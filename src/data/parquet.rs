//! Parquet tables (pandas' `to_parquet`, polars' `write_parquet`, the files data set
//! hubs serve), read by arrow-rs's `parquet` crate into the table of text cells a CSV
//! becomes: the same `--target` rules, header and label handling then apply.
//!
//! Each value becomes the text that reads back as it: integers and floats as Rust
//! prints them (the shortest text that parses to the same value), booleans as `0` and
//! `1`, strings as they are, dates and times as ISO text (labels, not features).
//! A null is refused naming its row and column, as a CSV's empty cell is. The index
//! pandas stores beside the columns (`__index_level_0__`, or a named index, as the
//! file's `pandas` metadata lists it) is not a column, as `pd.read_parquet` reads it.

use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use super::table::Table;
use crate::error::{AntError, Result, quoted};

/// Whether `bytes` start as a Parquet file does (`PAR1`; a file cut short is named by
/// its reader, not read as text).
pub(crate) fn is_parquet(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PAR1")
}

/// Reads a Parquet file's (gunzipped) bytes as a table whose first row is the column
/// names; `path` names the file in errors. `skip`: the user asked to skip lines, which
/// a Parquet file has none of.
pub(crate) fn read_table(bytes: &[u8], path: &Path, skip: bool) -> Result<Table> {
    if skip {
        let msg = "is a Parquet file, which has no lines for --skip-rows to drop";
        return Err(AntError::data(path, msg));
    }
    let bad = |e: parquet::errors::ParquetError| {
        AntError::data(path, format!("is not a Parquet file that can be read ({e})"))
    };
    let reader = SerializedFileReader::new(bytes::Bytes::copy_from_slice(bytes)).map_err(bad)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let fields = schema.root_schema().get_fields();
    let names: Vec<String> = fields.iter().map(|f| f.name().to_string()).collect();
    let index = pandas_index_columns(reader.metadata().file_metadata().key_value_metadata());
    let kept: Vec<usize> = (0..names.len())
        .filter(|&j| !is_pandas_index(&names[j]) && !index.contains(&names[j]))
        .collect();
    if kept.is_empty() {
        return Err(AntError::data(path, "has no columns"));
    }
    check_fits(&reader, bytes.len(), kept.len(), path)?;
    let kept_names: Vec<String> = kept.iter().map(|&j| names[j].clone()).collect();
    let mut table = Table::of_rows(&kept_names, path)?;
    let mut cells = vec![String::new(); kept.len()];
    for (r, row) in reader.get_row_iter(None).map_err(bad)?.enumerate() {
        let row = row.map_err(bad)?;
        let values: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        for (cell, &j) in cells.iter_mut().zip(&kept) {
            *cell = cell_text(values[j]).map_err(|why| {
                AntError::data(path, format!("row {r}, column {j} ({}): {why}", quoted(&names[j])))
            })?;
        }
        table.push_row(&cells, r, path)?;
    }
    if table.n_rows() == 1 {
        return Err(AntError::data(path, "contains no rows"));
    }
    Ok(table)
}

/// The columns pandas' metadata names as the DataFrame's index (a `RangeIndex` is
/// stored as a description, not a column).
fn pandas_index_columns(kv: Option<&Vec<parquet::file::metadata::KeyValue>>) -> Vec<String> {
    let Some(json) = kv
        .into_iter()
        .flatten()
        .find(|k| k.key == "pandas")
        .and_then(|k| k.value.as_deref())
    else {
        return vec![];
    };
    let meta: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let columns = meta["index_columns"].as_array().cloned().unwrap_or_default();
    columns
        .iter()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// The column pandas writes for a DataFrame's index (not a `RangeIndex`).
fn is_pandas_index(name: &str) -> bool {
    name.strip_prefix("__index_level_")
        .and_then(|n| n.strip_suffix("__"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Refuses a file whose table of text would not fit in memory, before reading it: its
/// bytes, and the text of its cells (counted as up to 24 bytes a cell) and their ends.
fn check_fits(
    reader: &SerializedFileReader<bytes::Bytes>,
    file_bytes: usize,
    columns: usize,
    path: &Path,
) -> Result<()> {
    let rows = usize::try_from(reader.metadata().file_metadata().num_rows()).unwrap_or(0);
    let cells = rows.saturating_mul(columns);
    let text = file_bytes.saturating_add(cells.saturating_mul(24));
    super::csv::check_fits(text, cells, rows, path)
}

/// A value as the text a CSV cell holding it would have.
fn cell_text(f: &Field) -> std::result::Result<String, String> {
    Ok(match f {
        Field::Null => return Err("is null (a missing value): fill or drop it".into()),
        Field::Bool(b) => u8::from(*b).to_string(),
        Field::Byte(v) => v.to_string(),
        Field::Short(v) => v.to_string(),
        Field::Int(v) => v.to_string(),
        Field::Long(v) => v.to_string(),
        Field::UByte(v) => v.to_string(),
        Field::UShort(v) => v.to_string(),
        Field::UInt(v) => v.to_string(),
        Field::ULong(v) => v.to_string(),
        Field::Float16(v) => f32::from(*v).to_string(),
        Field::Float(v) => v.to_string(),
        Field::Double(v) => v.to_string(),
        Field::Str(s) => s.clone(),
        Field::Bytes(b) => match std::str::from_utf8(b.data()) {
            Ok(s) => s.to_string(),
            Err(_) => return Err("holds bytes that are not UTF-8 text".into()),
        },
        Field::Group(_) | Field::ListInternal(_) | Field::MapInternal(_) => {
            return Err("is a nested value (struct, list or map): flatten the column".into());
        }
        // Decimals, dates and times, as the crate prints them.
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pandas_index_columns_are_known_by_name() {
        assert!(is_pandas_index("__index_level_0__"));
        assert!(is_pandas_index("__index_level_12__"));
        for name in ["__index_level__", "index", "__index_level_x__", "__index_level_0"] {
            assert!(!is_pandas_index(name), "{name}");
        }
    }

    #[test]
    fn values_become_the_text_that_reads_back_as_them() {
        assert_eq!(cell_text(&Field::Double(0.1)).unwrap(), "0.1");
        assert_eq!(cell_text(&Field::Float(1.7e9)).unwrap().parse::<f32>().unwrap(), 1.7e9);
        assert_eq!(cell_text(&Field::Double(-3.0)).unwrap(), "-3");
        assert_eq!(cell_text(&Field::Bool(true)).unwrap(), "1");
        assert_eq!(cell_text(&Field::Long(i64::MIN)).unwrap(), i64::MIN.to_string());
        assert_eq!(cell_text(&Field::Str("setosa".into())).unwrap(), "setosa");
        assert!(cell_text(&Field::Null).unwrap_err().contains("null"));
    }
}
