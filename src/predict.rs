//! `ant predict`: new samples in, one line per sample out (CSV or JSON lines).
//!
//! Inputs are read the way the model's training data was (the table spec stored in
//! the model), or as IDX / CIFAR-10 image files for image models. Checks here name
//! the file, so a mismatch between model and data reads as a data error.

use std::path::{Path, PathBuf};

use crate::data::Dataset;
use crate::data::source::load_unlabelled;
use crate::digits::number32;
use crate::ensemble::{Ensemble, EnsemblePredictions};
use crate::error::{AntError, Result};
use crate::model::{Ant, Predictions};

/// The samples `predict` reads, and the image files they came from (one per sample,
/// in order) when they were image files.
pub struct Inputs {
    pub data: Dataset,
    pub files: Option<Vec<PathBuf>>,
}

/// Reads the samples of `path` for `model` through the data door
/// ([`crate::data::source::load_unlabelled`]), then refuses samples that do not fit the
/// model, naming the file. Targets are placeholders.
pub fn load_inputs(model: &Ant, paths: &[PathBuf]) -> Result<Inputs> {
    let input = model.tree().topology.input;
    let p = &model.meta().provenance;
    let resize = p.image_size.is_some();
    let (data, files) = load_unlabelled(
        paths,
        input,
        p.target.as_ref(),
        model.task().outputs(),
        resize,
    )?;
    let path = &paths[0];
    model.check_fits_file(&data, path, false)?;
    if data.is_empty() {
        return Err(AntError::data(path, "contains no samples"));
    }
    Ok(Inputs { data, files })
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
        let reason = match crate::store::output_names::only_an_ending(path)
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
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
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
pub fn render(
    model: &Ant,
    p: &Predictions,
    reach: Option<&[f32]>,
    files: Option<&[PathBuf]>,
    format: Format,
) -> String {
    let reach = reach.map(|r| NodeReach {
        values: r,
        nodes: model.tree().topology.nodes.len(),
    });
    render_rows(
        model,
        &p.values,
        p.k,
        Rows {
            leaves: Leaves::One(&p.leaf),
            reach,
            files,
        },
        format,
    )
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
pub fn render_ensemble(
    ens: &Ensemble,
    p: &EnsemblePredictions,
    files: Option<&[PathBuf]>,
    format: Format,
) -> String {
    let leaves = p.member_leaves.iter().map(|l| l.as_slice()).collect();
    let model = &ens.members()[0];
    let rows = Rows {
        leaves: Leaves::PerMember(leaves),
        reach: None,
        files,
    };
    render_rows(model, &p.values, p.k, rows, format)
}

/// What a row says beside its prediction: the leaf (or each member's), every node's
/// reach probability (when asked), and the file the sample came from (image files).
struct Rows<'a> {
    leaves: Leaves<'a>,
    reach: Option<NodeReach<'a>>,
    files: Option<&'a [PathBuf]>,
}

/// `model` gives the task and the class names.
fn render_rows(model: &Ant, values: &[f32], k: usize, rows: Rows, format: Format) -> String {
    let classification = model.task().is_classification();
    let table = Table {
        names: class_names(model, k),
        classes: match classification {
            true => crate::model::argmax_rows(values, k),
            false => vec![],
        },
        classification,
        k,
        rows,
    };
    let mut out = String::new();
    if format == Format::Csv {
        out.push_str(&table.csv_header());
        out.push('\n');
    }
    for (i, row) in values.chunks(k).enumerate() {
        match format {
            Format::Csv => out.push_str(&table.csv_row(i, row)),
            Format::JsonLines => out.push_str(&table.json_row(i, row)),
        }
        out.push('\n');
    }
    out
}

/// What the rows of a prediction file are made of: class names, each row's class
/// (classification), the number of values a row, and what rows say beside them.
struct Table<'a> {
    names: Vec<String>,
    classes: Vec<usize>,
    classification: bool,
    k: usize,
    rows: Rows<'a>,
}

impl Table<'_> {
    /// The file a sample came from, when it came from an image file.
    fn file(&self, i: usize) -> Option<String> {
        self.rows.files.map(|f| f[i].display().to_string())
    }

    fn csv_header(&self) -> String {
        let mut cols = vec!["row".to_string(), "prediction".to_string()];
        if self.classification {
            cols.extend(self.names.iter().map(|n| csv_field(&format!("p_{n}"))));
        } else if self.k > 1 {
            cols = vec!["row".to_string()];
            cols.extend((0..self.k).map(|j| format!("prediction_{j}")));
        }
        if self.rows.files.is_some() {
            cols.insert(1, "file".to_string());
        }
        cols.extend(self.rows.leaves.header());
        if let Some(r) = self.rows.reach {
            cols.extend((0..r.nodes).map(|j| format!("reach_{j}")));
        }
        cols.join(",")
    }

    fn csv_row(&self, i: usize, row: &[f32]) -> String {
        let mut f = vec![i.to_string()];
        f.extend(self.file(i).map(|p| csv_field(&p)));
        if self.classification {
            f.push(csv_field(&self.names[self.classes[i]]));
        }
        f.extend(row.iter().map(|&v| number32(v)));
        f.extend(self.rows.leaves.csv(i));
        if let Some(r) = self.rows.reach {
            f.extend(r.row(i).iter().map(|&v| number32(v)));
        }
        f.join(",")
    }

    /// A struct, not a `json!` value: f32 fields then print in their shortest form
    /// (0.675743, not 0.6757429242134094).
    fn json_row(&self, i: usize, row: &[f32]) -> String {
        let (leaf, reach, file) = (
            self.rows.leaves.field(i),
            self.rows.reach.map(|r| r.row(i)),
            self.file(i),
        );
        let line = if self.classification {
            let class = self.classes[i];
            serde_json::to_string(&ClassLine {
                row: i,
                file,
                prediction: &self.names[class],
                class,
                probabilities: row,
                leaf,
                reach,
            })
        } else if self.k == 1 {
            serde_json::to_string(&ValueLine {
                row: i,
                file,
                prediction: row[0],
                leaf,
                reach,
            })
        } else {
            serde_json::to_string(&ValueLine {
                row: i,
                file,
                prediction: row,
                leaf,
                reach,
            })
        };
        line.expect("plain data serialises")
    }
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
