//! `ant export --format web`: a static site that runs the tree in the browser and
//! redraws it as a sample flows through: edges as thick as the sample's reach
//! probability, each router's P(left), each leaf's prediction, the multi-path and
//! single-path answers. Image models get a canvas to draw a digit on (scaled and
//! centred as MNIST's digits are); tables a form of feature values. The model travels
//! as `model.js` (weights as numbers), so the page also works opened as a file.
//!
//! The evaluator (`viewer.js`) is exact: the same layers as `ant predict` in float64,
//! checked against it in `tests/web`.

use std::path::Path;

use serde::Serialize;

use super::weights;
use crate::data::Dataset;
use crate::error::{AntError, Result};
use crate::model::Ant;
use crate::modules::Block;
use crate::normalise::Normalisation;
use crate::spec::LayerSpec;
use crate::store::atomic::replace_dir_atomic;
use crate::task::Task;
use crate::tree::NodeModules;
use crate::viz::placement::{BoxRows, layout};

const INDEX_HTML: &str = include_str!("web/index.html");
const VIEWER_JS: &str = include_str!("web/viewer.js");
const STYLE_CSS: &str = include_str!("web/style.css");
/// How many samples of `--data`'s test set the page offers to pick.
pub(crate) const EXAMPLES: usize = 10;

/// Marks a directory as made by `ant export --format web` (holds the format's name).
pub(crate) const MARKER: &str = ".ant-web-export";
const MARKER_TEXT: &str = "ant-web-1\n";
/// What an export writes, besides [`MARKER`].
pub(crate) const SITE_FILES: [&str; 4] = ["index.html", "viewer.js", "style.css", "model.js"];
const MODEL_JS_HEAD: &str = "// Written by `ant export --format web`.\n";

/// Writes the site into `dir` as one step (built beside it, then swapped in): an
/// interrupted export leaves the earlier site or the new one. A directory holding an
/// earlier export, and nothing else, is replaced; an empty one is used; any other
/// existing path is refused: an export never deletes what it did not write.
pub fn write_site(model: &Ant, examples: Option<&Dataset>, dir: &Path) -> Result<()> {
    let dir = &crate::store::outputs::check(dir, crate::store::outputs::Kind::Dir, &[])?;
    check_replaceable(dir)?;
    let model_js = format!(
        "{MODEL_JS_HEAD}window.ANT_MODEL = {};\n",
        serde_json::to_string(&WebModel::of(model, examples))
            .map_err(|e| AntError::model(e.to_string()))?
    );
    let mut files: Vec<(&str, &[u8])> = vec![
        ("index.html", INDEX_HTML.as_bytes()),
        ("viewer.js", VIEWER_JS.as_bytes()),
        ("style.css", STYLE_CSS.as_bytes()),
        ("model.js", model_js.as_bytes()),
        (MARKER, MARKER_TEXT.as_bytes()),
    ];
    // The manifest proves every file of the site ant's: a later export replaces it
    // only while each is as ant wrote it.
    let manifest = crate::store::manifest::of_files(&files)?;
    files.push((crate::store::file_names::MANIFEST_FILE, &manifest));
    replace_dir_atomic(dir, &files)
}

/// Refuses an existing `dir` that is not an export (its marker, or for exports made
/// before the marker, a `model.js` an export wrote) or holds anything an export does
/// not write.
fn check_replaceable(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(()); // Not there: nothing to replace.
    };
    if let Some(foreign) = crate::store::manifest::unproven_entries(dir)? {
        if foreign.is_empty() {
            return Ok(());
        }
        let msg = format!(
            "holds {}, which this export did not write as it is now (a file changed or added since): an export replaces only a directory it made; move them, or choose another --out",
            foreign.join(", ")
        );
        return Err(AntError::data(dir, msg));
    }
    let mut foreign = Vec::new();
    let mut any = false;
    for e in entries {
        let e = e.map_err(|e| AntError::io(dir, e))?;
        any = true;
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name == MARKER || SITE_FILES.contains(&name.as_str());
        if !ours || !e.file_type().is_ok_and(|t| t.is_file()) {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        let shown: Vec<&str> = foreign.iter().take(5).map(String::as_str).collect();
        let more = match foreign.len() {
            n if n > 5 => format!(" and {} more", n - 5),
            _ => String::new(),
        };
        let msg = format!(
            "is not an earlier web export alone: it holds what an export did not write ({}{more}), and an export replaces only a directory it made; move them, or choose another --out",
            shown.join(", ")
        );
        return Err(AntError::data(dir, msg));
    }
    let marked = std::fs::read(dir.join(MARKER)).is_ok_and(|m| m == MARKER_TEXT.as_bytes());
    if any && !marked && !earlier_export(dir) {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| AntError::io(dir, e))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let msg = format!(
            "exists and is not an earlier web export (no .ant-web-export marker): it holds {}, which an export did not write; choose another --out",
            names.join(", ")
        );
        return Err(AntError::data(dir, msg));
    }
    Ok(())
}

/// A directory an export made before exports were marked: its `model.js` says so.
fn earlier_export(dir: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; MODEL_JS_HEAD.len()];
    std::fs::File::open(dir.join("model.js"))
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == MODEL_JS_HEAD.as_bytes())
        && SITE_FILES.iter().all(|f| dir.join(f).is_file())
}

/// Everything the page needs: the tree's modules with their weights, the task, the
/// normalisation, where `ant plot` puts each node, and example inputs.
#[derive(Serialize)]
struct WebModel<'a> {
    task: Task,
    class_names: Vec<String>,
    input_shape: Vec<usize>,
    normalisation: &'a Normalisation,
    nodes: Vec<WebNode>,
    layout: WebLayout,
    examples: Vec<Example>,
}

#[derive(Serialize)]
struct WebNode {
    edge: Vec<WebBlock>,
    router: Option<WebBlock>,
    solver: Option<WebBlock>,
    children: Option<[usize; 2]>,
}

#[derive(Serialize)]
struct WebBlock {
    label: String,
    layers: Vec<WebLayer>,
}

/// A layer with its weights, row-major as burn holds them (conv `[out, in, k, k]`,
/// linear `[in, out]`).
#[derive(Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum WebLayer {
    Conv {
        c_in: usize,
        c_out: usize,
        k: usize,
        pad: usize,
        w: Vec<f32>,
        b: Vec<f32>,
    },
    Linear {
        d_in: usize,
        d_out: usize,
        w: Vec<f32>,
        b: Vec<f32>,
    },
    Relu,
    Tanh,
    MaxPool2,
    Gap,
    Flatten,
}

#[derive(Serialize)]
struct WebLayout {
    width: f64,
    height: f64,
    font: f64,
    /// Per node: centre x, top y, width, height.
    boxes: Vec<[f64; 4]>,
    input: (f64, f64),
}

#[derive(Serialize)]
struct Example {
    x: Vec<f32>,
    /// The true class's name, or the target values.
    target: String,
}

impl WebModel<'_> {
    fn of<'a>(model: &'a Ant, examples: Option<&Dataset>) -> WebModel<'a> {
        let t = &model.tree().topology;
        let nodes = model
            .tree()
            .modules
            .nodes
            .iter()
            .map(|n| WebNode {
                edge: n.edge().iter().map(web_block).collect(),
                router: n.router().map(web_block),
                solver: n.solver().map(web_block),
                children: match n {
                    NodeModules::Internal(i) => Some(i.children),
                    NodeModules::Leaf(_) => None,
                },
            })
            .collect();
        let l = layout(
            t,
            900.0,
            BoxRows {
                box_h: 4.2,
                header: 0.0,
            },
        );
        let class_names = class_names(model);
        WebModel {
            task: model.task(),
            examples: examples
                .map(|d| examples_of(d, &class_names))
                .unwrap_or_default(),
            class_names,
            input_shape: t.input.dims(),
            normalisation: &model.meta().normalisation,
            nodes,
            layout: WebLayout {
                width: l.width,
                height: l.height,
                font: l.font,
                boxes: l.boxes.iter().map(|b| [b.x, b.y, b.w, b.h]).collect(),
                input: l.input,
            },
        }
    }
}

fn class_names(model: &Ant) -> Vec<String> {
    match model.task() {
        Task::Classification { classes } => model
            .meta()
            .class_names
            .clone()
            .filter(|n| n.len() == classes)
            .unwrap_or_else(|| (0..classes).map(|c| c.to_string()).collect()),
        Task::Regression { .. } => vec![],
    }
}

/// The first [`EXAMPLES`] samples of `data`.
fn examples_of(data: &Dataset, class_names: &[String]) -> Vec<Example> {
    let n = data.len().min(EXAMPLES);
    (0..n)
        .map(|i| Example {
            x: data.sample(i).to_vec(),
            target: match &data.targets {
                crate::data::Targets::Classes { labels, .. } => class_names
                    .get(labels[i] as usize)
                    .cloned()
                    .unwrap_or_else(|| labels[i].to_string()),
                crate::data::Targets::Values { values, dim } => {
                    format!("{:?}", &values[i * dim..(i + 1) * dim])
                }
            },
        })
        .collect()
}

fn web_block(b: &Block) -> WebBlock {
    let (mut convs, mut linears) = (b.convs.iter(), b.linears.iter());
    let layers = b
        .spec()
        .layers
        .iter()
        .map(|l| match *l {
            LayerSpec::Conv {
                c_in,
                c_out,
                k,
                pad,
            } => {
                let c = convs.next().expect("a conv per conv layer");
                WebLayer::Conv {
                    c_in,
                    c_out,
                    k,
                    pad,
                    w: weights(c.weight.val()),
                    b: c.bias
                        .as_ref()
                        .map(|b| weights(b.val()))
                        .unwrap_or_default(),
                }
            }
            LayerSpec::Linear { d_in, d_out } => {
                let f = linears.next().expect("a linear per linear layer");
                WebLayer::Linear {
                    d_in,
                    d_out,
                    w: weights(f.weight.val()),
                    b: f.bias
                        .as_ref()
                        .map(|b| weights(b.val()))
                        .unwrap_or_default(),
                }
            }
            LayerSpec::Relu => WebLayer::Relu,
            LayerSpec::Tanh => WebLayer::Tanh,
            LayerSpec::MaxPool2 => WebLayer::MaxPool2,
            LayerSpec::Gap => WebLayer::Gap,
            LayerSpec::Flatten => WebLayer::Flatten,
        })
        .collect();
    WebBlock {
        label: b.spec().label(),
        layers,
    }
}
