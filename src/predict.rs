//! `ant predict`: new samples in, one line per sample out (CSV or JSON lines).
//!
//! Inputs are read the way the model's training data was (the table spec stored in
//! the model), or as IDX / CIFAR-10 image files for image models. Checks here name
//! the file, so a mismatch between model and data reads as a data error.

use std::path::Path;

use crate::data::detect::{FileFormat, Input, detect};
use crate::data::{Dataset, Targets, cifar, idx, sarcos, tabular};
use crate::ensemble::{Ensemble, EnsemblePredictions};
use crate::error::{AntError, Result};
use crate::model::{Ant, Predictions};
use crate::spec::Shape;

/// Refuses `data` (read from `path`) when its samples do not have the model's input
/// shape, or, with `with_targets`, when its targets do not fit the model's task:
/// Reads the samples of `path` for `model`, in the format `detect` finds: table
/// rows for a flat model (target column optional), an IDX image file or a CIFAR-10
/// batch for an image model, or a SARCOS MAT-file. Targets are placeholders.
pub fn load_inputs(model: &Ant, path: &Path) -> Result<Dataset> {
    let Input::File(format, bytes, _) = detect(path)? else {
        return Err(AntError::data(
            path,
            "is a directory; give one file (CSV rows, an IDX image file or a CIFAR-10 batch)",
        ));
    };
    let input = model.tree().topology.input;
    let unlabelled = |x: Vec<f32>, sample_shape: Vec<usize>| {
        let n = x.len() / sample_shape.iter().product::<usize>().max(1);
        Dataset::new(
            x,
            sample_shape,
            Targets::Values {
                values: vec![0.0; n],
                dim: 1,
            },
        )
    };
    let data = match (format, input) {
        (FileFormat::Mat, _) => {
            let s = sarcos::parse_sarcos(&bytes, path, false)?;
            unlabelled(s.x, s.sample_shape)?
        }
        (FileFormat::Idx, _) => {
            let a = idx::parse_idx(bytes, path)?;
            let [_, h, w] = a.dims[..] else {
                return Err(AntError::data(
                    path,
                    format!(
                        "an IDX image file must have 3 dimensions (count, rows, cols), got {:?}",
                        a.dims
                    ),
                ));
            };
            let x = a.data.iter().map(|&b| f32::from(b) / 255.0).collect();
            unlabelled(x, vec![1, h, w])?
        }
        (FileFormat::CifarBatch, _) => {
            let (x, _) = cifar::parse_batch(&bytes, path)?;
            unlabelled(x, cifar::CIFAR_SHAPE.to_vec())?
        }
        (FileFormat::Text, Shape::Flat { d }) => {
            let spec = model.meta().provenance.target.as_ref();
            tabular::parse_features(&bytes, path, spec, d, model.task().outputs())?
        }
        (FileFormat::Text, Shape::Image { .. }) => return Err(not_images(bytes, path, input)),
    };
    model.check_fits_file(&data, path, false)?;
    if data.is_empty() {
        return Err(AntError::data(path, "contains no samples"));
    }
    Ok(data)
}

/// Why a file given to an image model is neither an IDX file nor a CIFAR-10 batch,
/// in the words of the reader its input shape calls for.
fn not_images(bytes: Vec<u8>, path: &Path, input: Shape) -> AntError {
    let err = if input.dims() == cifar::CIFAR_SHAPE {
        cifar::parse_batch(&bytes, path).err()
    } else if bytes.starts_with(&[0, 0]) {
        idx::parse_idx(bytes, path).err()
    } else {
        None
    };
    err.unwrap_or_else(|| {
        AntError::data(
            path,
            "not an IDX image file (its magic number must start with two zero bytes)",
        )
    })
}

/// How predictions are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonLines,
}

impl Format {
    /// The ending of the format's file names.
    pub fn ending(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::JsonLines => "jsonl",
        }
    }

    /// From a name: `csv` or `jsonl` (in any case).
    pub fn parse(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "jsonl" => Some(Format::JsonLines),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }

    /// From an output file name: `.jsonl` or `.csv` (in any case).
    pub fn of(path: &Path) -> Result<Format> {
        let ending = path.extension().map(|e| e.to_string_lossy().into_owned());
        if let Some(f) = ending.as_deref().and_then(Format::parse) {
            return Ok(f);
        }
        let reason = match crate::error::only_an_ending(path)
            .filter(|e| Format::parse(&e[1..]).is_some())
        {
            Some(ending) => format!(
                "{}: names no file, only an ending: give NAME{ending}",
                path.display()
            ),
            None => format!(
                "{}: the name must end in .csv or .jsonl, or have no ending and --format say which",
                path.display()
            ),
        };
        Err(AntError::invalid("output", reason))
    }
}

/// Class names of a model: stored labels, else the class indices.
fn class_names(model: &Ant, k: usize) -> Vec<String> {
    model
        .meta()
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
    #[serde(flatten)]
    leaf: LeafField,
    #[serde(skip_serializing_if = "Option::is_none")]
    reach: Option<&'a [f32]>,
}

#[derive(serde::Serialize)]
struct ValueLine<'a, T> {
    row: usize,
    prediction: T,
    #[serde(flatten)]
    leaf: LeafField,
    #[serde(skip_serializing_if = "Option::is_none")]
    reach: Option<&'a [f32]>,
}

/// A JSON line's leaf: `"leaf": 3` for a model, `"leaves": [3, 1]` for an ensemble.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum LeafField {
    One { leaf: usize },
    PerMember { leaves: Vec<usize> },
}

/// The leaves that greedy paths reach: one model's, or each member's of an ensemble.
enum Leaves<'a> {
    One(&'a [usize]),
    PerMember(Vec<&'a [usize]>),
}

impl Leaves<'_> {
    fn header(&self) -> Vec<String> {
        match self {
            Leaves::One(_) => vec!["leaf".into()],
            Leaves::PerMember(m) => (0..m.len()).map(|j| format!("leaf_{j}")).collect(),
        }
    }

    fn field(&self, i: usize) -> LeafField {
        match self {
            Leaves::One(l) => LeafField::One { leaf: l[i] },
            Leaves::PerMember(m) => LeafField::PerMember {
                leaves: m.iter().map(|l| l[i]).collect(),
            },
        }
    }

    fn csv(&self, i: usize) -> Vec<String> {
        match self {
            Leaves::One(l) => vec![l[i].to_string()],
            Leaves::PerMember(m) => m.iter().map(|l| l[i].to_string()).collect(),
        }
    }
}

/// Renders predictions: per sample its row number (0-based), the prediction (class
/// name, or the regression value(s)), the class probabilities, the leaf reached, and
/// with `reach` ([`Ant::node_reach_per_sample`]) every node's reach probability
/// (JSON `"reach": [...]` in node order, CSV columns `reach_0`, `reach_1`, ...).
pub fn render(model: &Ant, p: &Predictions, reach: Option<&[f32]>, format: Format) -> String {
    let reach = reach.map(|r| NodeReach {
        values: r,
        nodes: model.tree().topology.nodes.len(),
    });
    render_rows(model, &p.values, p.k, Leaves::One(&p.leaf), reach, format)
}

/// Every node's reach probability per sample, row-major.
#[derive(Clone, Copy)]
struct NodeReach<'a> {
    values: &'a [f32],
    nodes: usize,
}

impl<'a> NodeReach<'a> {
    fn row(&self, i: usize) -> &'a [f32] {
        &self.values[i * self.nodes..(i + 1) * self.nodes]
    }
}

/// Renders an ensemble's (mean) predictions as [`render`] does, with each member's
/// leaf: CSV columns `leaf_0`, `leaf_1`, ..., JSON `"leaves": [...]`.
pub fn render_ensemble(ens: &Ensemble, p: &EnsemblePredictions, format: Format) -> String {
    let leaves = p.member_leaves.iter().map(|l| l.as_slice()).collect();
    let model = &ens.members()[0];
    render_rows(
        model,
        &p.values,
        p.k,
        Leaves::PerMember(leaves),
        None,
        format,
    )
}

/// `model` gives the task and the class names.
fn render_rows(
    model: &Ant,
    values: &[f32],
    k: usize,
    leaves: Leaves,
    reach: Option<NodeReach>,
    format: Format,
) -> String {
    let classification = model.task().is_classification();
    let names = class_names(model, k);
    let classes = if classification {
        crate::model::argmax_rows(values, k)
    } else {
        vec![]
    };
    let mut out = String::new();
    if format == Format::Csv {
        let mut cols = vec!["row".to_string(), "prediction".to_string()];
        if classification {
            cols.extend(names.iter().map(|n| csv_field(&format!("p_{n}"))));
        } else if k > 1 {
            cols = vec!["row".to_string()];
            cols.extend((0..k).map(|j| format!("prediction_{j}")));
        }
        cols.extend(leaves.header());
        if let Some(r) = reach {
            cols.extend((0..r.nodes).map(|j| format!("reach_{j}")));
        }
        out.push_str(&cols.join(","));
        out.push('\n');
    }
    for (i, row) in values.chunks(k).enumerate() {
        match format {
            Format::Csv => {
                let mut f = vec![i.to_string()];
                if classification {
                    f.push(csv_field(&names[classes[i]]));
                }
                f.extend(row.iter().map(|v| v.to_string()));
                f.extend(leaves.csv(i));
                if let Some(r) = reach {
                    f.extend(r.row(i).iter().map(|v| v.to_string()));
                }
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
                        leaf: leaves.field(i),
                        reach: reach.map(|r| r.row(i)),
                    })
                } else if k == 1 {
                    serde_json::to_string(&ValueLine {
                        row: i,
                        prediction: row[0],
                        leaf: leaves.field(i),
                        reach: reach.map(|r| r.row(i)),
                    })
                } else {
                    serde_json::to_string(&ValueLine {
                        row: i,
                        prediction: row,
                        leaf: leaves.field(i),
                        reach: reach.map(|r| r.row(i)),
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
