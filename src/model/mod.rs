//! The fitted model: a grown and refined tree plus everything needed to use it on new
//! data (normalisation, task, provenance), saved as `tree.json` + `model-<md5>.safetensors`
//! (the weights file is named by its checksum, and `tree.json`, written last, names it).
//!
//! By concern: `files` (saving and loading), `meta` (`tree.json`'s description),
//! `inference` (predictions), `evaluate` (scores); training is in `train/setup.rs`.

mod evaluate;
mod files;
mod inference;
mod meta;
mod rows;

use burn::prelude::*;

use crate::data::Dataset;
pub use crate::data::split::{Member, Provenance, TestSplit, ValidRows, ValidSplit};
use crate::data::tabular::TargetSpec;
use crate::error::{AntError, Result};
use crate::modules::Repr;
use crate::observe::Observer;
use crate::params::AntParams;
use crate::prune::{PruneReport, prune};
use crate::spec::Shape;
use crate::task::Task;
use crate::train::Checkpoints;
pub(crate) use crate::train::missing_classes_warning;
use crate::tree::{Topology, Tree};
pub use evaluate::Evaluation;
pub(crate) use evaluate::score;
pub(crate) use files::FORMAT;
pub(crate) use files::TREE_FILE;
pub(crate) use files::check_is_a_folder;
pub(crate) use files::{save_model, take_back_save};
pub(crate) use inference::argmax_rows;
pub use inference::{Inference, Predictions};
pub use meta::{EstimatorRecord, LabelKind, ModelMeta};

/// A fitted Adaptive Neural Tree.
#[derive(Clone, Debug)]
pub struct Ant {
    tree: Tree,
    meta: ModelMeta,
    device: Device,
    /// Whether this model (its copies, an ensemble's members) has said its inputs are on
    /// another scale: once a model, not once a process, which in a long-running Python
    /// process would silence every later model.
    scale_said: ScaleSaid,
}

/// See [`Ant`]'s `scale_said`.
pub(crate) type ScaleSaid = std::sync::Arc<std::sync::atomic::AtomicBool>;

/// The model `params.init_from` names (`--init-from`), loaded for training to start
/// from; `None` without one. Its fit to the run is checked by training.
pub(crate) fn start_model(
    params: &AntParams,
    device: &Device,
) -> Result<Option<crate::train::StartModel>> {
    let Some(dir) = params.init_from() else {
        return Ok(None);
    };
    let bad = |msg: &str| crate::error::AntError::data(dir, format!("--init-from: {msg}"));
    files::check_is_a_folder(dir).map_err(|e| match e {
        crate::error::AntError::Data { msg, .. } => bad(&msg),
        e => e,
    })?;
    if !dir.is_dir() {
        return Err(bad("no such directory"));
    }
    if dir.join(crate::store::file_names::ENSEMBLE_FILE).is_file() {
        return Err(bad(
            "is an ensemble; start from one tree: a member's directory, or a model of \
             --baseline cnn or --ablation no-router",
        ));
    }
    let cnn = Ant::load(dir, device)?;
    let p = &cnn.meta.provenance;
    let rows = p
        .train_checksum
        .clone()
        .map(|checksum| crate::train::StartRows {
            checksum,
            data: p.data.clone(),
            train_limit: p.train_limit,
        });
    Ok(Some(crate::train::StartModel {
        dir: dir.to_path_buf(),
        preset: cnn.meta.preset,
        task: cnn.meta.task,
        config: cnn.meta.config.clone(),
        tree: cnn.tree,
        rows,
    }))
}

impl Ant {
    /// Grow and refine an ANT (or, with [`AntParams::baseline`], train that fixed
    /// architecture) on `data` (a seeded `valid_fraction` of it, of each class
    /// for classification, is held out for validation: see [`ValidSplit`]). `device` is a plain device (e.g. `Device::flex()`); autodiff is added
    /// for training.
    pub fn fit(
        params: AntParams,
        data: &Dataset,
        device: &Device,
        observer: &mut dyn Observer,
    ) -> Result<Ant> {
        for (name, why) in params.without_effect() {
            tracing::warn!("parameter {name} does nothing here, and is ignored: it {why}");
        }
        let start = start_model(&params, device)?;
        let data = std::borrow::Cow::Borrowed(data);
        Self::from_training(crate::train::train(
            params, data, device, observer, None, start,
        )?)
    }

    /// [`Ant::fit`], saving its state after every epoch in `checkpoints`. Given the
    /// checkpoints of an interrupted run ([`Checkpoints::open`]) and the same parameters,
    /// data and thread count, it continues that run from its last saved epoch and ends
    /// with the tree the uninterrupted run would have grown.
    pub fn fit_checkpointed(
        params: AntParams,
        data: &Dataset,
        device: &Device,
        observer: &mut dyn Observer,
        checkpoints: &Checkpoints,
    ) -> Result<Ant> {
        let data = std::borrow::Cow::Borrowed(data);
        Ok(Self::fit_stages(params, data, device, observer, checkpoints)?.0)
    }

    /// [`Ant::fit_checkpointed`], also returning the tree as growth left it, before
    /// refinement (`None` for a baseline), as a model of its own. Data given by value is
    /// dropped as soon as training has split it (a run's data set is most of its memory).
    pub(crate) fn fit_stages(
        params: AntParams,
        data: std::borrow::Cow<'_, Dataset>,
        device: &Device,
        observer: &mut dyn Observer,
        checkpoints: &Checkpoints,
    ) -> Result<(Ant, Option<Ant>)> {
        let start = start_model(&params, device)?;
        let mut trained =
            crate::train::train(params, data, device, observer, Some(checkpoints), start)?;
        let grown = trained.grown.take();
        let model = Self::from_training(trained)?;
        let grown = grown.map(|(tree, valid_nll, valid_metric)| {
            let mut meta = model.meta.clone();
            meta.valid_nll = valid_nll;
            meta.valid_metric = valid_metric;
            Ant {
                tree,
                meta,
                device: model.device.clone(),
                scale_said: ScaleSaid::default(),
            }
        });
        Ok((model, grown))
    }

    fn from_training(t: crate::train::Trained) -> Result<Ant> {
        let meta = ModelMeta {
            format: FORMAT.into(),
            preset: t.config.preset,
            task: t.task,
            normalisation: t.normalisation,
            class_names: None,
            config: t.config,
            provenance: t.provenance,
            valid_nll: t.valid_nll,
            valid_metric: t.valid_metric,
            decisions: t.decisions,
            estimator: None,
        };
        Ok(Ant {
            tree: t.tree,
            meta,
            device: t.device,
            scale_said: ScaleSaid::default(),
        })
    }

    /// The tree's shape: its nodes, their modules' specs, the input shape.
    pub fn topology(&self) -> &Topology {
        &self.tree.topology
    }

    /// The tree: its topology and its modules (the crate's own tests, with `internals`).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The tree, to change weights in place (the crate's own tests, with `internals`).
    #[cfg(feature = "internals")]
    pub fn tree_mut(&mut self) -> &mut Tree {
        &mut self.tree
    }

    /// Everything else `tree.json` records.
    pub fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    /// The record, to complete what training could not know (class names, where the
    /// data came from); the shape of the tree is not in it.
    pub(crate) fn meta_mut(&mut self) -> &mut ModelMeta {
        &mut self.meta
    }

    /// Records where the rows of a model fitted in memory came from (a run records its
    /// own): `data` names them, `target` says how `eval` and `predict` read a table for
    /// the model, `member` is the ensemble member it was trained as.
    pub fn record_source(
        &mut self,
        data: &str,
        target: Option<TargetSpec>,
        member: Option<Member>,
    ) {
        let p = &mut self.meta.provenance;
        p.data = data.to_string();
        p.target = target;
        p.member = member;
        self.meta.complete_table_layout();
    }

    /// Reads the table files given to this model (`ant eval`, `predict`, `prune`,
    /// `plot`) as `reading` says, not as its training file was read.
    pub fn read_files_as(&mut self, reading: crate::data::tabular::FileReading) {
        if let Some(spec) = self.meta.provenance.target.as_mut() {
            spec.read_files_as(reading);
        }
    }

    /// Records what a Python estimator knew of its data (label kind, feature names,
    /// the targets' shape), saved with the model.
    pub fn set_estimator_record(&mut self, record: EstimatorRecord) -> Result<()> {
        if record.labels.is_some() && !self.task().is_classification() {
            return Err(AntError::invalid(
                "estimator",
                "a label kind for a regression model",
            ));
        }
        self.meta.estimator = Some(record);
        self.meta.complete_table_layout();
        Ok(())
    }

    /// Names the classes, in class order (a classifier's labels, saved with it): one
    /// name per class, or an error.
    pub fn set_class_names(&mut self, names: Vec<String>) -> Result<()> {
        let classes = self.task().outputs();
        if !self.task().is_classification() || names.len() != classes {
            let reason = format!("{} names for a model of {classes} outputs", names.len());
            return Err(AntError::invalid("class_names", reason));
        }
        crate::data::labels::check_class_names(&names)
            .map_err(|why| AntError::invalid("class_names", why))?;
        self.meta.class_names = Some(names);
        Ok(())
    }

    pub fn task(&self) -> Task {
        self.meta.task
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    fn input_shape(&self) -> Shape {
        self.tree.topology.input
    }

    /// Check that `data` fits the model's input (and targets, when `with_targets`).
    fn check_data(&self, data: &Dataset, with_targets: bool) -> Result<()> {
        crate::data::check_compatible(data, self.input_shape(), self.task(), with_targets)?;
        Ok(())
    }

    /// A copy without the subtrees whose mean reach over `valid` is below `min_reach`.
    pub fn pruned(&self, valid: &Dataset, min_reach: f64) -> Result<(Ant, PruneReport)> {
        if !(0.0..=1.0).contains(&min_reach) {
            let reason = format!("must be in [0, 1], got {min_reach}");
            return Err(AntError::invalid("min_reach", reason));
        }
        let reach = self.node_reach(valid)?;
        let (tree, report) = prune(&self.tree, &reach, min_reach);
        let mut meta = self.meta.clone();
        // The pruned tree's own validation scores, not the tree's it came from (`eval`
        // must not show the unpruned tree's).
        (meta.valid_nll, meta.valid_metric) = self.validation_scores(&tree, valid);
        let pruned = Ant {
            tree,
            meta,
            device: self.device.clone(),
            scale_said: ScaleSaid::default(),
        };
        Ok((pruned, report))
    }

    /// `tree`'s validation NLL and error (or MSE) on `valid`, as training scores them
    /// (`valid` has targets: [`Ant::node_reach`] checked it).
    fn validation_scores(&self, tree: &Tree, valid: &Dataset) -> (f64, f64) {
        use crate::train::{EVAL_CHUNK, MetricCtx, evaluate, to_device};
        let norm = &self.meta.normalisation;
        let metric = MetricCtx {
            task: self.task(),
            y_std: norm.y_std.clone(),
        };
        let set = to_device(valid.clone(), norm, self.input_shape(), &self.device);
        let view = crate::tree::TreeView {
            topology: &tree.topology,
            modules: &tree.modules,
        };
        evaluate(view, &set, &metric, EVAL_CHUNK)
    }

    /// Says inputs on another scale once for this model and every other given `said`.
    pub(crate) fn share_scale_warning(&mut self, said: &ScaleSaid) {
        self.scale_said = said.clone();
    }

    fn normalised_inputs(&self, data: &Dataset, input: Shape) -> Repr {
        let mut x = data.x().into_owned();
        let norm = &self.meta.normalisation;
        norm.warn_of_another_scale(&x, input, &self.scale_said);
        norm.apply_x_in_place(&mut x, input);
        Repr::from_vec(x, data.len(), input, &self.device)
    }
}
