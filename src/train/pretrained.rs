//! The pretrained start (the paper's `*` rows, "parameters initialised with a
//! pre-trained CNN"): an ANT whose modules start from a trained single-path CNN, a model
//! of `--baseline cnn` or `--ablation no-router` on the same preset and data.
//!
//! Which module starts from what:
//! - the transformer growth adds at depth k of a path (the root's is depth 1) starts from
//!   the CNN's k-th transformer, when the CNN has one of the same spec (the same preset
//!   and pooling rule give the same spec at the same depth);
//! - a solver whose input has the shape of the CNN head's input starts from that head
//!   (so a one-path tree as deep as the CNN starts as the CNN itself);
//! - a router at depth k starts its convolutions from those of the CNN's next transformer
//!   (the (k+1)-th), where their specs agree, and its fully connected layers fresh: the
//!   router then looks at the features the CNN learnt to compute next, and learns only
//!   how to route on them;
//! - anything else (deeper than the CNN, or of another shape) starts fresh.
//!
//! Every copy has parameters of its own (new ids, the CNN's values): an optimiser tells
//! modules apart by their ids, and two modules started from one CNN layer stay two.

use std::path::PathBuf;

use burn::prelude::*;

use crate::error::{AntError, Result};
use crate::modules::Block;
use crate::params::TrainConfig;
use crate::pool::PathPos;
use crate::preset::Preset;
use crate::task::Task;
use crate::spec::{BlockSpec, Shape};
use crate::tree::Tree;

/// A trained model to start from, as the caller loaded it from `dir` (loading model
/// directories is the `model` module's, which training does not depend on).
pub struct StartModel {
    pub dir: PathBuf,
    pub preset: Preset,
    pub task: Task,
    pub config: TrainConfig,
    pub tree: Tree,
    /// What the model's `tree.json` records of the rows it trained on (`None`: a model
    /// of an earlier version, which did not record them).
    pub rows: Option<StartRows>,
}

/// The rows a start model was trained on, as its `tree.json` records them.
#[derive(Clone, Debug)]
pub struct StartRows {
    /// The checksum of the rows its training split into training and validation rows.
    pub checksum: String,
    /// Its data file, and its `--train-limit`.
    pub data: String,
    pub train_limit: Option<usize>,
}

/// A trained single-path CNN, its modules ready to be copied into an ANT's.
#[derive(Debug)]
pub struct Pretrained {
    /// Its transformers, root first (the k-th at index k-1).
    transformers: Vec<Block>,
    /// Its solver, and the shape of the representation the solver reads.
    head: Block,
    head_input: Shape,
}

impl Pretrained {
    /// The CNN `cnn`, checked against the run it starts: the same preset, pooling rule,
    /// image scaling, input shape and task, and a single path whose k-th transformer is
    /// the one growth would add at depth k.
    pub fn new(cnn: &StartModel, cfg: &TrainConfig, (input, task): (Shape, Task), rows: &str) -> Result<Pretrained> {
        let bad = |msg: String| AntError::data(&cnn.dir, format!("--init-from: {msg}"));
        check_settings(cnn, cfg, (input, task)).map_err(bad)?;
        check_same_rows(cnn, rows).map_err(bad)?;
        let head_input = check_path(cnn, cfg, input).map_err(bad)?;
        let modules = &cnn.tree.modules.nodes[0];
        Ok(Pretrained {
            transformers: modules.edge().to_vec(),
            head: modules.solver().expect("one node is a leaf").clone(),
            head_input,
        })
    }

    /// The CNN's transformer for depth `pos.index` when it has `spec`, copied to
    /// `device`.
    pub fn transformer(&self, pos: PathPos, spec: &BlockSpec, device: &Device) -> Option<Block> {
        let t = self.transformers.get(pos.index - 1)?;
        (t.spec() == spec).then(|| t.copied_to(device))
    }

    /// The CNN's head when a solver of `spec` reads a representation of `input`'s shape.
    pub fn solver(&self, input: Shape, spec: &BlockSpec, device: &Device) -> Option<Block> {
        (input == self.head_input && self.head.spec() == spec)
            .then(|| self.head.copied_to(device))
    }

    /// `fresh` (a router at the place of the transformer at `pos`) with its leading
    /// convolutions taken from the CNN's transformer there, as far as their specs agree.
    pub fn router(&self, pos: PathPos, fresh: Block) -> Block {
        match self.transformers.get(pos.index - 1) {
            Some(t) => fresh.with_convs_from(t),
            None => fresh,
        }
    }
}

/// Why `cnn` cannot start a run of `cfg` on inputs of `input`'s shape for `task`: another
/// preset, input, task, pooling rule, image scaling or validation rows.
fn check_settings(cnn: &StartModel, cfg: &TrainConfig, (input, task): (Shape, Task)) -> std::result::Result<(), String> {
    let topo = &cnn.tree.topology;
    let theirs = &cnn.config;
    if cnn.preset != cfg.preset {
        let msg = format!(
            "holds a model of preset {}, this run's preset is {}",
            cnn.preset, cfg.preset
        );
        return Err(msg);
    }
    if topo.input != input {
        let msg = format!(
            "its model takes inputs of shape {}, this run's data has {input}",
            topo.input
        );
        return Err(msg);
    }
    if cnn.task != task {
        let msg = format!("its model's task is {:?}, this run's is {task:?}", cnn.task);
        return Err(msg);
    }
    let same = |what: &str, a: String, b: String| {
        (a != b).then(|| format!("its model used {what} {a}, this run uses {b}"))
    };
    let pool = same("--pool-rule", theirs.pool_rule.to_string(), cfg.pool_rule.to_string());
    let norm = same("--image-norm", theirs.image_norm.to_string(), cfg.image_norm.to_string());
    if let Some(e) = pool.or(norm) {
        return Err(e);
    }
    check_rows(theirs, cfg)
}

/// Other validation rows would be rows the CNN trained on: this run's validation
/// (growth's decisions, the model kept) would see them already learnt. The message
/// names the setting that differs, spelled as its flag.
pub(crate) fn check_rows(theirs: &TrainConfig, cfg: &TrainConfig) -> std::result::Result<(), String> {
    let differs = [
        ("--seed", theirs.seed.to_string(), cfg.seed.to_string()),
        ("--valid-rows", theirs.valid_rows.to_string(), cfg.valid_rows.to_string()),
        ("--valid-fraction", theirs.valid_fraction.to_string(), cfg.valid_fraction.to_string()),
    ];
    match differs.into_iter().find(|(_, a, b)| a != b) {
        None => Ok(()),
        Some((flag, a, b)) => Err(format!(
            "its model held out other validation rows ({flag} {a}; this run's {flag} {b}), \
             so this run would validate on rows it trained on: train the CNN with this \
             run's {flag}"
        )),
    }
}

/// Other training rows (another data set, `--train-limit` or test split) would give
/// validation rows the CNN trained on, or a CNN of other data: `rows` is the checksum
/// of this run's rows, to be the CNN's. The message names what differs.
fn check_same_rows(cnn: &StartModel, rows: &str) -> std::result::Result<(), String> {
    let Some(theirs) = &cnn.rows else {
        return Ok(()); // An earlier version's model: its rows are not known.
    };
    if theirs.checksum == rows {
        return Ok(());
    }
    let limit = match theirs.train_limit {
        Some(n) => format!("--train-limit {n}"),
        None => "no --train-limit".to_string(),
    };
    let data = match theirs.data.as_str() {
        "" => "rows given through the library".to_string(),
        d => format!("--data {d}"),
    };
    Err(format!(
        "its model was trained on other rows than this run's (its {data}, {limit}): this \
         run would validate on rows it trained on, or start from another data set; train \
         the CNN on this run's data, with the same --train-limit and test split"
    ))
}

/// The shape the CNN's head reads, or why the CNN is not the single path this run's
/// growth would build (the same transformer at each depth).
fn check_path(cnn: &StartModel, cfg: &TrainConfig, input: Shape) -> std::result::Result<Shape, String> {
    let topo = &cnn.tree.topology;
    if topo.nodes.len() != 1 {
        let msg = format!(
            "its tree has {} nodes; a pretrained start is a single-path CNN (a model of \
             --baseline cnn or --ablation no-router, one node)",
            topo.nodes.len()
        );
        return Err(msg);
    }
    let root = &topo.nodes[0];
    let mut shape = input;
    for (k, t) in root.edge.iter().enumerate() {
        let pos = PathPos::after(&root.edge[..k]);
        let ours = cfg.preset.transformer(shape, pos, cfg.pool_rule, cfg.width);
        if ours.as_ref() != Some(t) {
            let msg = format!(
                "its transformer {} is {}, where this run's growth would add {}",
                k + 1,
                t.label(),
                ours.map_or("none".into(), |o| o.label())
            );
            return Err(msg);
        }
        shape = t.out_shape(shape).expect("a loaded topology is checked");
    }
    if root.edge.is_empty() {
        let msg = "its model has no transformer (a linear baseline?): nothing to start from";
        return Err(msg.into());
    }
    Ok(shape)
}
