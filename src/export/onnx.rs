//! `ant export --format onnx`: a saved tree as an ONNX model (opset 17, any batch size)
//! that computes from raw inputs (the model's normalisation is in the graph):
//!
//! - `prediction` `[N,K]`: the multi-path prediction (class probabilities, or the
//!   regression mean in original units);
//! - `label` `[N]` (classification): the most probable class of `prediction`;
//! - `single_path_prediction` `[N,K]` and `single_path_leaf` `[N]`: the greedy path's
//!   leaf (left when P(left) >= 0.5, as `ant predict --single-path`) and its prediction;
//! - `p_left` `[N,R]` (trees with routers): every router's P(left), routers in node order;
//! - `reach` `[N,L]`: every leaf's reach probability, leaves in node order.
//!
//! The model's metadata names the nodes behind those columns (`ant.routers`,
//! `ant.leaves`) and the task, so a viewer can draw the routing.

use onnx_protobuf::tensor_proto::DataType;
use onnx_protobuf::{Message, ModelProto, OperatorSetIdProto, StringStringEntryProto};

use super::graph::{Attr, Dim, Elem, Graph};
use crate::error::{AntError, Result};
use crate::model::Ant;
use crate::modules::Block;
use crate::normalise::Normalisation;
use crate::spec::{LayerSpec, Shape};
use crate::task::Task;
use crate::tree::NodeModules;
use burn::prelude::*;

/// The ONNX operator set the graph uses.
pub(crate) const OPSET: i64 = 17;
/// The ONNX IR version of opset 17 (onnx 1.12).
const IR_VERSION: i64 = 8;

/// The model as the bytes of an ONNX file.
pub fn to_onnx(model: &Ant) -> Result<Vec<u8>> {
    let mut g = Graph::default();
    let shape = model.tree().topology.input;
    let mut dims = vec![Dim::Batch];
    dims.extend(shape.dims().into_iter().map(Dim::Fixed));
    g.input("input", Elem::F32, &dims);
    let x = normalise(&mut g, &model.meta().normalisation, shape, "input");
    let mut walk = Walk::default();
    visit(&mut g, model, 0, x, Path::default(), &mut walk);
    walk.leaves.sort_by_key(|l| l.node);
    walk.routers.sort_by_key(|r| r.0);
    let metadata = metadata(model, &walk);
    outputs(&mut g, model, &walk);
    let proto = ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: OPSET,
            ..Default::default()
        }],
        producer_name: "ant".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        doc_string: "An Adaptive Neural Tree (Tanno et al., ICML 2019) exported by ant".into(),
        graph: Some(g.finish("ant")).into(),
        metadata_props: metadata,
        ..Default::default()
    };
    proto
        .write_to_bytes()
        .map_err(|e| AntError::model(format!("encoding the ONNX model: {e}")))
}

/// The probability of reaching a node, and whether the greedy path reaches it (1 or
/// 0), as `[N,1]` values; `None` is 1 (the root).
#[derive(Clone, Default)]
struct Path {
    reach: Option<String>,
    greedy: Option<String>,
}

impl Path {
    /// The path one step further, through a branch taken with probability `p` and
    /// greedily (1) or not (0) as `taken`.
    fn then(&self, g: &mut Graph, p: &str, taken: &str) -> Path {
        let mut times = |a: &Option<String>, b: &str| match a {
            Some(a) => g.op("Mul", &[a, b], vec![]),
            None => b.to_string(),
        };
        Path {
            reach: Some(times(&self.reach, p)),
            greedy: Some(times(&self.greedy, taken)),
        }
    }
}

/// A leaf's path and prediction (`[N,K]`, standardised units for regression).
struct LeafValues {
    node: usize,
    path: Path,
    prediction: String,
}

/// What a walk over the tree collects: leaves, and routers with their P(left).
#[derive(Default)]
struct Walk {
    leaves: Vec<LeafValues>,
    routers: Vec<(usize, String)>,
}

/// Node `i` on its input `x`, reached along `path`: its edge, then its router and both
/// subtrees, or its solver.
fn visit(g: &mut Graph, model: &Ant, i: usize, x: String, path: Path, walk: &mut Walk) {
    let node = &model.tree().modules.nodes[i];
    let h = node.edge().iter().fold(x, |h, b| block(g, b, h));
    match node {
        NodeModules::Internal(n) => {
            let z = block(g, &n.router, h.clone());
            let p = g.op("Sigmoid", &[&z], vec![]);
            let one = g.floats("one", &[], vec![1.0]);
            let zero = g.floats("zero", &[], vec![0.0]);
            let q = g.op("Sub", &[&one, &p], vec![]);
            let left = g.op("GreaterOrEqual", &[&z, &zero], vec![]);
            let left = g.op(
                "Cast",
                &[&left],
                vec![Attr::Int("to", DataType::FLOAT as i64)],
            );
            let right = g.op("Sub", &[&one, &left], vec![]);
            walk.routers.push((i, p.clone()));
            let [l, r] = n.children;
            let (to_l, to_r) = (path.then(g, &p, &left), path.then(g, &q, &right));
            visit(g, model, l, h.clone(), to_l, walk);
            visit(g, model, r, h, to_r, walk);
        }
        NodeModules::Leaf(n) => {
            let out = block(g, &n.solver, h);
            let prediction = match model.task() {
                Task::Classification { .. } => g.op("Softmax", &[&out], vec![Attr::Int("axis", 1)]),
                Task::Regression { .. } => out,
            };
            walk.leaves.push(LeafValues {
                node: i,
                path,
                prediction,
            });
        }
    }
}

/// The inputs standardised per channel (images) or per feature (tables).
fn normalise(g: &mut Graph, n: &Normalisation, shape: Shape, x: &str) -> String {
    let dims = match shape {
        Shape::Image { c, .. } => vec![c, 1, 1],
        Shape::Flat { d } => vec![d],
    };
    let mean = g.floats("x_mean", &dims, n.x_mean.clone());
    let std = g.floats("x_std", &dims, n.x_std.clone());
    let centred = g.op("Sub", &[x, &mean], vec![]);
    g.op("Div", &[&centred, &std], vec![])
}

/// A block's layers on `x`.
fn block(g: &mut Graph, b: &Block, x: String) -> String {
    let (mut convs, mut linears) = (b.convs.iter(), b.linears.iter());
    b.spec().layers.iter().fold(x, |x, l| match *l {
        LayerSpec::Conv { k, pad, .. } => {
            let c = convs.next().expect("a conv per conv layer");
            let w = tensor(g, "conv_w", c.weight.val());
            let mut inputs = vec![x, w];
            inputs.extend(c.bias.as_ref().map(|b| tensor(g, "conv_b", b.val())));
            let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
            let (k, pad) = (k as i64, pad as i64);
            let attrs = vec![
                Attr::Ints("kernel_shape", vec![k, k]),
                Attr::Ints("pads", vec![pad; 4]),
                Attr::Ints("strides", vec![1, 1]),
            ];
            g.op("Conv", &inputs, attrs)
        }
        LayerSpec::Linear { .. } => {
            let f = linears.next().expect("a linear per linear layer");
            // burn's weight is [d_in, d_out]: y = x W + b.
            let w = tensor(g, "fc_w", f.weight.val());
            let y = g.op("MatMul", &[&x, &w], vec![]);
            match f.bias.as_ref() {
                Some(b) => {
                    let b = tensor(g, "fc_b", b.val());
                    g.op("Add", &[&y, &b], vec![])
                }
                None => y,
            }
        }
        LayerSpec::Relu => g.op("Relu", &[&x], vec![]),
        LayerSpec::Tanh => g.op("Tanh", &[&x], vec![]),
        LayerSpec::MaxPool2 => {
            let attrs = vec![
                Attr::Ints("kernel_shape", vec![2, 2]),
                Attr::Ints("strides", vec![2, 2]),
            ];
            g.op("MaxPool", &[&x], attrs)
        }
        LayerSpec::Gap => {
            let p = g.op("GlobalAveragePool", &[&x], vec![]);
            g.op("Flatten", &[&p], vec![Attr::Int("axis", 1)])
        }
        LayerSpec::Flatten => g.op("Flatten", &[&x], vec![Attr::Int("axis", 1)]),
    })
}

/// A weight as a constant of the graph.
fn tensor<const D: usize>(g: &mut Graph, hint: &str, t: Tensor<D>) -> String {
    let dims = t.dims();
    g.floats(hint, &dims, super::weights(t))
}

/// The graph's outputs from the leaves and routers the walk collected.
fn outputs(g: &mut Graph, model: &Ant, walk: &Walk) {
    let task = model.task();
    let k = task.outputs();
    let (batch, fixed) = (Dim::Batch, Dim::Fixed);
    let multi = weighted_sum(g, walk, |p| p.reach.clone());
    let single = weighted_sum(g, walk, |p| p.greedy.clone());
    let (multi, single) = match task {
        Task::Regression { .. } => {
            let n = &model.meta().normalisation;
            (restore(g, n, &multi), restore(g, n, &single))
        }
        Task::Classification { .. } => {
            let label = g.op(
                "ArgMax",
                &[&multi],
                vec![Attr::Int("axis", 1), Attr::Int("keepdims", 0)],
            );
            g.op_named("Identity", &[&label], vec![], "label");
            g.output("label", Elem::I64, &[batch]);
            (multi, single)
        }
    };
    for (value, name) in [(multi, "prediction"), (single, "single_path_prediction")] {
        g.op_named("Identity", &[&value], vec![], name);
        g.output(name, Elem::F32, &[batch, fixed(k)]);
    }
    single_path_leaf(g, walk);
    let reach: Vec<String> = match walk.leaves.as_slice() {
        [only] if only.path.reach.is_none() => vec![ones_column(g)],
        leaves => leaves.iter().filter_map(|l| l.path.reach.clone()).collect(),
    };
    columns(g, &reach, "reach");
    if !walk.routers.is_empty() {
        let p: Vec<String> = walk.routers.iter().map(|r| r.1.clone()).collect();
        columns(g, &p, "p_left");
    }
}

/// `sum_l w_l * prediction_l` with each leaf's weight from `weight` (`None`: 1).
fn weighted_sum(g: &mut Graph, walk: &Walk, weight: impl Fn(&Path) -> Option<String>) -> String {
    let terms: Vec<String> = walk
        .leaves
        .iter()
        .map(|l| match weight(&l.path) {
            Some(w) => g.op("Mul", &[&w, &l.prediction], vec![]),
            None => l.prediction.clone(),
        })
        .collect();
    terms
        .into_iter()
        .reduce(|a, b| g.op("Add", &[&a, &b], vec![]))
        .expect("a tree has a leaf")
}

/// Regression means back in the targets' units.
fn restore(g: &mut Graph, n: &Normalisation, v: &str) -> String {
    let std = g.floats("y_std", &[n.y_std.len()], n.y_std.clone());
    let mean = g.floats("y_mean", &[n.y_mean.len()], n.y_mean.clone());
    let scaled = g.op("Mul", &[v, &std], vec![]);
    g.op("Add", &[&scaled, &mean], vec![])
}

/// `single_path_leaf` `[N]`: the node index of the greedy path's leaf (the greedy
/// indicators are exactly 0 or 1, so their weighted sum is that index).
fn single_path_leaf(g: &mut Graph, walk: &Walk) {
    let terms: Vec<String> = walk
        .leaves
        .iter()
        .map(|l| {
            let node = g.floats("node", &[], vec![l.node as f32]);
            let w = match &l.path.greedy {
                Some(w) => w.clone(),
                None => ones_column(g),
            };
            g.op("Mul", &[&w, &node], vec![])
        })
        .collect();
    let sum = terms
        .into_iter()
        .reduce(|a, b| g.op("Add", &[&a, &b], vec![]))
        .expect("a tree has a leaf");
    let idx = g.op(
        "Cast",
        &[&sum],
        vec![Attr::Int("to", DataType::INT64 as i64)],
    );
    let flat = g.ints("flat", vec![-1]);
    g.op_named("Reshape", &[&idx, &flat], vec![], "single_path_leaf");
    g.output("single_path_leaf", Elem::I64, &[Dim::Batch]);
}

/// Ones, `[N,1]` (the root's reach).
fn ones_column(g: &mut Graph) -> String {
    let shape = g.op("Shape", &["input"], vec![]);
    let (start, end) = (g.ints("start", vec![0]), g.ints("end", vec![1]));
    let n = g.op("Slice", &[&shape, &start, &end], vec![]);
    let one = g.ints("one", vec![1]);
    let dims = g.op("Concat", &[&n, &one], vec![Attr::Int("axis", 0)]);
    let c = g.op("ConstantOfShape", &[&dims], vec![]);
    // ConstantOfShape gives float zeros by default.
    let ones = g.floats("one", &[], vec![1.0]);
    g.op("Add", &[&c, &ones], vec![])
}

/// `[N,1]` columns side by side as the graph output `name`.
fn columns(g: &mut Graph, cols: &[String], name: &str) {
    let inputs: Vec<&str> = cols.iter().map(String::as_str).collect();
    g.op_named("Concat", &inputs, vec![Attr::Int("axis", 1)], name);
    g.output(name, Elem::F32, &[Dim::Batch, Dim::Fixed(cols.len())]);
}

/// The nodes behind the `p_left` and `reach` columns, the task and class names.
fn metadata(model: &Ant, walk: &Walk) -> Vec<StringStringEntryProto> {
    let routers: Vec<usize> = walk.routers.iter().map(|r| r.0).collect();
    let leaves: Vec<usize> = walk.leaves.iter().map(|l| l.node).collect();
    let mut entries = vec![
        ("ant.task", serde_json::to_string(&model.task())),
        ("ant.routers", serde_json::to_string(&routers)),
        ("ant.leaves", serde_json::to_string(&leaves)),
        (
            "ant.input_shape",
            serde_json::to_string(&model.tree().topology.input.dims()),
        ),
    ];
    if let Some(names) = &model.meta().class_names {
        entries.push(("ant.class_names", serde_json::to_string(names)));
    }
    entries
        .into_iter()
        .map(|(key, value)| StringStringEntryProto {
            key: key.into(),
            value: value.expect("plain data serialises"),
            ..Default::default()
        })
        .collect()
}
