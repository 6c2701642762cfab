//! SARCOS inverse dynamics (GPML's `sarcos_inv.mat` / `sarcos_inv_test.mat`, or
//! the same 28 columns as CSV): 21 inputs (7 joint positions, 7 velocities,
//! 7 accelerations) then 7 joint torques to regress.

use std::path::Path;

use super::csv::{CsvOptions, parse_bytes, parse_f64};
use super::mat::{MatClass, is_mat, looks_like_v4, parse_mat};
use super::{Dataset, Targets, Values, read_maybe_gz};
use crate::error::{AntError, Result};

pub const SARCOS_INPUTS: usize = 21;
pub const SARCOS_OUTPUTS: usize = 7;
const SARCOS_COLS: usize = SARCOS_INPUTS + SARCOS_OUTPUTS;

/// Whether rows of `inputs` features and `outputs` regression values are SARCOS's
/// layout, the one a file is read in without a table layout (no `--target`).
pub(crate) fn is_sarcos_layout(inputs: usize, outputs: usize) -> bool {
    (inputs, outputs) == (SARCOS_INPUTS, SARCOS_OUTPUTS)
}

/// Variable names used by the GPML distribution files.
const MAT_NAMES: [&str; 2] = ["sarcos_inv", "sarcos_inv_test"];

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the tests' way in
/// Loads SARCOS from a MAT-file (recognised by its "MATLAB 5.0" header text) or a
/// CSV file (header optional), raw or gzipped. Inputs get sample shape `[21]`;
/// targets are `Values` of dimension 7. NaN or infinite values are refused.
pub fn load_sarcos(path: &Path) -> Result<Dataset> {
    parse_sarcos(&read_maybe_gz(path)?, path, true)
}

/// [`load_sarcos`] on a file's (gunzipped) bytes; `path` only names it in errors.
/// `training`: a column f32 would flatten or blur is refused (rows scored or predicted
/// on are the model's inputs as they are).
pub fn parse_sarcos(bytes: &[u8], path: &Path, training: bool) -> Result<Dataset> {
    let rows = sarcos_rows(bytes, path, training)?;
    let mut x = Vec::with_capacity(rows.len() * SARCOS_INPUTS);
    let mut values = Vec::with_capacity(rows.len() * SARCOS_OUTPUTS);
    let mut seen = super::ColumnMagnitudes::new(SARCOS_COLS);
    for (r, row) in rows.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            seen.see(c, v);
            let v = super::to_f32(v).map_err(|why| {
                AntError::data(path, format!("row {r}, {}: the value {why}", column_name(c)))
            })?;
            match c < SARCOS_INPUTS {
                true => x.push(v),
                false => values.push(v),
            }
        }
    }
    if training && let Some((c, why)) = seen.too_small() {
        return Err(AntError::data(path, format!("{}: {why}", column_name(c))));
    }
    let targets = Targets::Values {
        values,
        dim: SARCOS_OUTPUTS,
    };
    let ds = Dataset::of_values(Values::F32(x), vec![SARCOS_INPUTS], targets)?;
    ds.check_finite(path)?;
    Ok(ds)
}

/// Column `c` of a SARCOS row as messages name it: an input column, or a target column.
fn column_name(c: usize) -> String {
    match c.checked_sub(SARCOS_INPUTS) {
        Some(t) => format!("target column {t}"),
        None => format!("column {c}"),
    }
}

/// The rows of a SARCOS file (MAT or text), each of its 28 columns; none is an error.
fn sarcos_rows(bytes: &[u8], path: &Path, training: bool) -> Result<Vec<Vec<f64>>> {
    let rows: Vec<Vec<f64>> = if is_mat(bytes) || looks_like_v4(bytes) {
        let m = pick_matrix(parse_mat(bytes, path)?, path)?;
        if m.cols != SARCOS_COLS {
            return Err(AntError::data(
                path,
                format!(
                    "variable '{}' has {} columns, expected {SARCOS_COLS}",
                    m.name, m.cols
                ),
            ));
        }
        m.data
            .chunks_exact(SARCOS_COLS)
            .map(<[f64]>::to_vec)
            .collect()
    } else {
        let table = parse_bytes(bytes, path, &CsvOptions::default())?;
        if table.n_cols() != SARCOS_COLS {
            return Err(AntError::data(
                path,
                format!(
                    "found {} columns, expected SARCOS's {SARCOS_COLS} (21 inputs, 7 torques){}",
                    table.n_cols(),
                    match training {
                        true => ": a file without --target is read as SARCOS; a table of your own needs --target",
                        false => "",
                    }
                ),
            ));
        }
        parse_f64(&table, path)?
    };
    if rows.is_empty() {
        return Err(AntError::data(path, "contains no data rows"));
    }
    Ok(rows)
}

/// `sarcos_inv` / `sarcos_inv_test` if present, else the only double matrix with
/// 28 columns; otherwise an error listing the variables found.
fn pick_matrix(mut ms: Vec<super::mat::MatMatrix>, path: &Path) -> Result<super::mat::MatMatrix> {
    if let Some(i) = ms.iter().position(|m| MAT_NAMES.contains(&m.name.as_str())) {
        return Ok(ms.swap_remove(i));
    }
    let candidates: Vec<usize> = (0..ms.len())
        .filter(|&i| ms[i].class == MatClass::Double && ms[i].cols == SARCOS_COLS)
        .collect();
    if let [i] = candidates[..] {
        return Ok(ms.swap_remove(i));
    }
    let found: Vec<String> = ms
        .iter()
        .map(|m| format!("{} ({}x{} {:?})", m.name, m.rows, m.cols, m.class))
        .collect();
    Err(AntError::data(
        path,
        format!(
            "no SARCOS variable ('sarcos_inv', 'sarcos_inv_test', or a single double \
             matrix with {SARCOS_COLS} columns); numeric variables found: [{}]",
            found.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::mat::tests::Writer;

    /// `n` rows where cell (r, c) = r * 100 + c, but (0, 0) = 0.5: a first row
    /// `0,1,...,27` reads as pandas' header of unnamed columns.
    fn rows(n: usize) -> Vec<f64> {
        (0..n * SARCOS_COLS)
            .map(|k| ((k / SARCOS_COLS) * 100 + k % SARCOS_COLS) as f64)
            .enumerate()
            .map(|(k, v)| if k == 0 { 0.5 } else { v })
            .collect()
    }

    fn check_layout(ds: &Dataset, n: usize) {
        assert_eq!(ds.len(), n);
        assert_eq!(ds.sample_shape, vec![SARCOS_INPUTS]);
        assert_eq!(ds.sample(1)[0], 100.0);
        assert_eq!(ds.sample(1)[20], 120.0);
        let Targets::Values { values, dim } = &ds.targets else {
            panic!("regression targets")
        };
        assert_eq!(*dim, 7);
        assert_eq!(
            &values[7..14],
            &[121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]
        );
    }

    #[test]
    fn mat_variable_choice() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.mat");
        let w = Writer { big_endian: false };
        let write = |vars: &[Vec<u8>]| {
            std::fs::write(&p, [w.header(), vars.concat()].concat()).unwrap();
        };
        // Named variable, compressed, next to a distractor.
        write(&[
            w.double_matrix("other", 1, 28, &[0.0; 28]),
            w.compressed(&w.double_matrix("sarcos_inv", 3, 28, &rows(3))),
        ]);
        check_layout(&load_sarcos(&p).unwrap(), 3);
        // Unnamed: the only 28-column double matrix.
        write(&[
            w.double_matrix("a", 2, 3, &[0.0; 6]),
            w.double_matrix("data", 2, 28, &rows(2)),
        ]);
        check_layout(&load_sarcos(&p).unwrap(), 2);
        // Ambiguous: error lists the variables.
        write(&[
            w.double_matrix("d1", 2, 28, &rows(2)),
            w.double_matrix("d2", 2, 28, &rows(2)),
        ]);
        let msg = load_sarcos(&p).unwrap_err().to_string();
        assert!(
            msg.contains("s.mat") && msg.contains("d1 (2x28 Double), d2 (2x28 Double)"),
            "{msg}"
        );
        // Named but wrong width.
        write(&[w.double_matrix("sarcos_inv_test", 2, 27, &[0.0; 54])]);
        let msg = load_sarcos(&p).unwrap_err().to_string();
        assert!(msg.contains("27 columns"), "{msg}");
        // NaN refused with row and column.
        let mut r = rows(3);
        r[2 * SARCOS_COLS + 25] = f64::NAN;
        write(&[w.double_matrix("sarcos_inv", 3, 28, &r)]);
        let msg = load_sarcos(&p).unwrap_err().to_string();
        assert!(msg.contains("row 2, target column 4"), "{msg}");
        // A value beyond f32's range is named as such, with its place (it was reported
        // as "non-finite input value inf").
        let mut r = rows(3);
        r[SARCOS_COLS + 3] = 1e300;
        write(&[w.double_matrix("sarcos_inv", 3, 28, &r)]);
        let msg = load_sarcos(&p).unwrap_err().to_string();
        assert!(msg.contains("s.mat: row 1, column 3"), "{msg}");
        assert!(msg.contains("1e300, which overflows f32"), "{msg}");
        // Truncated MAT-file.
        let full = std::fs::read(&p).unwrap();
        std::fs::write(&p, &full[..full.len() - 9]).unwrap();
        let e = load_sarcos(&p).unwrap_err();
        assert!(
            matches!(e, AntError::Data { .. }) && e.to_string().contains("s.mat"),
            "{e}"
        );
    }

    fn csv_text(r: &[f64], header: bool) -> String {
        let mut s = String::new();
        if header {
            let names: Vec<String> = (0..SARCOS_COLS).map(|c| format!("c{c}")).collect();
            s += &names.join(",");
            s.push('\n');
        }
        for row in r.chunks(SARCOS_COLS) {
            let cells: Vec<String> = row.iter().map(|v| v.to_string()).collect();
            s += &cells.join(",");
            s.push('\n');
        }
        s
    }

    #[test]
    fn csv_with_and_without_header() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        for header in [false, true] {
            std::fs::write(&p, csv_text(&rows(4), header)).unwrap();
            check_layout(&load_sarcos(&p).unwrap(), 4);
        }
        // Wrong column count names the file and the count.
        std::fs::write(&p, "1,2,3\n4,5,6\n").unwrap();
        let msg = load_sarcos(&p).unwrap_err().to_string();
        assert!(
            msg.contains("s.csv") && msg.contains("found 3 columns"),
            "{msg}"
        );
        // NaN / inf refused with row and column.
        let mut r = rows(3);
        r[SARCOS_COLS + 4] = f64::INFINITY;
        std::fs::write(&p, csv_text(&r, true)).unwrap();
        let e = load_sarcos(&p).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }));
        assert!(e.to_string().contains("row 1, column 4"), "{e}");
        // Header only.
        std::fs::write(&p, csv_text(&[], true)).unwrap();
        assert!(load_sarcos(&p).is_err());
    }

    /// The real GPML test file shipped in `data/`.
    #[test]
    fn real_sarcos_test_file() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sarcos_inv_test.mat");
        let ms = crate::data::mat::read_mat(&p).unwrap();
        assert_eq!(ms.len(), 1);
        assert_eq!(
            (ms[0].name.as_str(), ms[0].rows, ms[0].cols),
            ("sarcos_inv_test", 4449, 28)
        );
        let ds = load_sarcos(&p).unwrap();
        assert_eq!(ds.len(), 4449);
        assert_eq!(ds.sample_shape, vec![21]);
        assert_eq!(ds.x().len(), 4449 * 21);
        // First value of the file (column-major first element, row 0 col 0).
        assert!((f64::from(ds.x()[0]) - ms[0].data[0]).abs() < 1e-6);
        let Targets::Values { values, dim } = &ds.targets else {
            panic!("regression targets")
        };
        assert_eq!(*dim, 7);
        let expected = [13.69, -24.35, 11.36, 27.47, -0.79, -0.78, 4.16];
        for (j, e) in expected.iter().enumerate() {
            let mean = values
                .iter()
                .skip(j)
                .step_by(7)
                .map(|&v| f64::from(v))
                .sum::<f64>()
                / 4449.0;
            assert!(
                (mean - e).abs() < 0.01,
                "torque {j}: mean {mean}, expected {e}"
            );
        }
        // Variance of the first torque (README: 414.18, ddof=0) confirms the
        // row-major conversion keeps columns together.
        let t0: Vec<f64> = values.iter().step_by(7).map(|&v| f64::from(v)).collect();
        let m = t0.iter().sum::<f64>() / t0.len() as f64;
        let var = t0.iter().map(|v| (v - m).powi(2)).sum::<f64>() / t0.len() as f64;
        assert!((var - 414.18).abs() < 0.1, "variance {var}");
    }
}
