//! `ant predict`: new samples in, one line per sample out (CSV or JSON lines).
//!
//! Inputs are read the way the model's training data was (the table spec stored in
//! the model), or as IDX / CIFAR-10 image files for image models. Checks here name
//! the file, so a mismatch between model and data reads as a data error.

use std::path::Path;

use crate::data::{Dataset, Targets, cifar, idx, read_maybe_gz, sarcos, tabular};
use crate::error::{AntError, Result};
use crate::model::{Ant, Predictions};
use crate::spec::Shape;

/// Refuses `data` (read from `path`) when its samples do not have the model's input
/// shape, or, with `with_targets`, when its targets do not fit the model's task:
/// [`crate::data::check_fits`], as a data error naming the file.
pub fn check_fits(model: &Ant, data: &Dataset, path: &Path, with_targets: bool) -> Result<()> {
    crate::data::check_fits(data, model.tree.topology.input, model.task(), with_targets)
        .map_err(|m| m.in_file(path))
}

/// Reads the samples of `path` for `model`: table rows for a flat model (target
/// column optional), an IDX image file or a CIFAR-10 batch for an image model.
pub fn load_inputs(model: &Ant, path: &Path) -> Result<Dataset> {
    if path.is_dir() {
        return Err(AntError::data(
            path,
            "is a directory; give one file (CSV rows, an IDX image file or a CIFAR-10 batch)",
        ));
    }
    if !path.exists() {
        return Err(AntError::data(path, "no such file"));
    }
    let data = match model.tree.topology.input {
        Shape::Flat { d } => {
            let bytes = read_maybe_gz(path)?;
            if bytes.starts_with(b"MATLAB 5.0") {
                let mut s = sarcos::load_sarcos(path)?;
                s.targets = Targets::Values {
                    values: vec![0.0; s.len()],
                    dim: 1,
                };
                s
            } else {
                drop(bytes);
                let spec = model.meta.provenance.target.as_ref();
                tabular::load_features(path, spec, d, model.task().outputs())?
            }
        }
        Shape::Image { c, h, w } => {
            let bytes = read_maybe_gz(path)?;
            if bytes.starts_with(&[0, 0]) {
                let a = idx::parse_idx(bytes, path)?;
                let [n, ih, iw] = a.dims[..] else {
                    return Err(AntError::data(
                        path,
                        format!(
                            "an IDX image file must have 3 dimensions (count, rows, cols), got {:?}",
                            a.dims
                        ),
                    ));
                };
                Dataset::new(
                    a.data.iter().map(|&b| f32::from(b) / 255.0).collect(),
                    vec![1, ih, iw],
                    Targets::Values {
                        values: vec![0.0; n],
                        dim: 1,
                    },
                )?
            } else if [c, h, w] == cifar::CIFAR_SHAPE {
                let (x, labels) = cifar::parse_batch(&bytes, path)?;
                Dataset::new(
                    x,
                    cifar::CIFAR_SHAPE.to_vec(),
                    Targets::Values {
                        values: vec![0.0; labels.len()],
                        dim: 1,
                    },
                )?
            } else {
                return Err(AntError::data(
                    path,
                    "not an IDX image file (its magic number must start with two zero bytes)",
                ));
            }
        }
    };
    check_fits(model, &data, path, false)?;
    if data.is_empty() {
        return Err(AntError::data(path, "contains no samples"));
    }
    Ok(data)
}

/// How predictions are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonLines,
}

impl Format {
    /// From an output file name: `.jsonl` or `.csv`.
    pub fn of(path: &Path) -> Result<Format> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") => Ok(Format::JsonLines),
            Some("csv") => Ok(Format::Csv),
            _ => Err(AntError::param(format!(
                "--output {}: the name must end in .csv or .jsonl",
                path.display()
            ))),
        }
    }
}

/// Class names of a model: stored labels, else the class indices.
fn class_names(model: &Ant, k: usize) -> Vec<String> {
    model
        .meta
        .class_names
        .clone()
        .filter(|n| n.len() == k)
        .unwrap_or_else(|| (0..k).map(|i| i.to_string()).collect())
}

/// A CSV field, quoted when it has to be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.trim() != s {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[derive(serde::Serialize)]
struct ClassLine<'a> {
    row: usize,
    prediction: &'a str,
    class: usize,
    probabilities: &'a [f32],
    leaf: usize,
}

#[derive(serde::Serialize)]
struct ValueLine<T> {
    row: usize,
    prediction: T,
    leaf: usize,
}

/// Renders predictions: per sample its row number (0-based), the prediction (class
/// name, or the regression value(s)), the class probabilities, and the leaf reached.
pub fn render(model: &Ant, p: &Predictions, format: Format) -> String {
    let k = p.k;
    let classification = model.task().is_classification();
    let names = class_names(model, k);
    let classes = if classification { p.classes() } else { vec![] };
    let mut out = String::new();
    if format == Format::Csv {
        let mut cols = vec!["row".to_string(), "prediction".to_string()];
        if classification {
            cols.extend(names.iter().map(|n| csv_field(&format!("p_{n}"))));
        } else if k > 1 {
            cols = vec!["row".to_string()];
            cols.extend((0..k).map(|j| format!("prediction_{j}")));
        }
        cols.push("leaf".into());
        out.push_str(&cols.join(","));
        out.push('\n');
    }
    for (i, row) in p.values.chunks(k).enumerate() {
        let leaf = p.leaf[i];
        match format {
            Format::Csv => {
                let mut f = vec![i.to_string()];
                if classification {
                    f.push(csv_field(&names[classes[i]]));
                }
                f.extend(row.iter().map(|v| v.to_string()));
                f.push(leaf.to_string());
                out.push_str(&f.join(","));
            }
            Format::JsonLines => {
                // A struct, not a `json!` value: f32 fields then print in their
                // shortest form (0.675743, not 0.6757429242134094).
                let line = if classification {
                    serde_json::to_string(&ClassLine {
                        row: i,
                        prediction: &names[classes[i]],
                        class: classes[i],
                        probabilities: row,
                        leaf,
                    })
                } else if k == 1 {
                    serde_json::to_string(&ValueLine {
                        row: i,
                        prediction: row[0],
                        leaf,
                    })
                } else {
                    serde_json::to_string(&ValueLine {
                        row: i,
                        prediction: row,
                        leaf,
                    })
                };
                out.push_str(&line.expect("plain data serialises"));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_format_from_name_and_quoting() {
        assert_eq!(
            Format::of(Path::new("a/b.jsonl")).unwrap(),
            Format::JsonLines
        );
        assert_eq!(Format::of(Path::new("b.csv")).unwrap(), Format::Csv);
        assert!(Format::of(Path::new("b.txt")).is_err());
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
