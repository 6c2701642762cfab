//! The growth phase: the root first, then leaves breadth-first, level by level; at each
//! leaf a split and a deepen candidate are trained on cached inputs (only the new
//! modules), and the better one is kept if it lowers the tree's validation NLL.
//! Refinement, which follows, is in `refine.rs`.

use burn::module::Module;
use burn::prelude::*;

use super::accept::{Accept, Gain};
use super::candidate::{Candidate, DeepenCandidate, LeafCache, SplitCandidate, row_log_lik};
use super::leaf_inputs::{LeafInputs, LeafObjective, cached_row_bytes};
use super::checkpoint::Checkpoints;
use super::device_set::DeviceSet;
use super::pretrained::Pretrained;
use super::eval::MetricCtx;
use super::optimise::{OptimiseOptions, optimise};
use crate::device::{hold_draws, seed_draws};
use super::seed::{INIT_DEEPEN, INIT_ROOT, INIT_SPLIT, shuffle_stream, sub_seed};
use super::state::{Fitted, Select};
use crate::error::Result;
use crate::modules::Block;
use crate::tree::router::{RouterReg, centred};
use crate::observe::{Action, CandidateKind, Decision, Observer, Stage};
use crate::choices::{Init, RouterInit};
use crate::params::TrainConfig;
use crate::pool::PathPos;
use crate::preset::Ablation;
use crate::task::Task;
use crate::spec::Shape;
use crate::tree::{NodeModules, Topology, Tree, TreeModules, TreeView};

/// Samples per chunk when running the frozen tree or scoring.
pub const EVAL_CHUNK: usize = 1024;

/// Standard deviation of a centred router's initial logits (|z| ~ 2: p ~ 0.12 / 0.88).
const ROUTER_SPREAD: f32 = 2.0;

/// Relative size of the noise that makes inherited split children differ.
const INHERIT_JITTER: f64 = 0.05;

/// A tree after growth, with its validation scores and the decisions that made it.
pub struct Grown {
    pub tree: Tree,
    pub valid_nll: f64,
    pub valid_metric: f64,
    pub decisions: Vec<Decision>,
}

/// What every optimisation of a growth needs.
struct Ctx<'a> {
    cfg: &'a TrainConfig,
    data: GrowthData<'a>,
}

impl Ctx<'_> {
    fn node_opts(&self, node: usize, kind: CandidateKind) -> OptimiseOptions {
        OptimiseOptions {
            stage: Stage::Growth {
                node,
                candidate: kind,
            },
            start: None,
            max_epochs: self.cfg.epochs_node,
            patience: Some(self.cfg.patience()),
            lr: self.cfg.lr,
            batch_size: self.cfg.batch_size,
            lr_step: None,
            seed: sub_seed(self.cfg.seed, node, shuffle_stream(kind)),
            // Growth decides on the loss it trains (the paper's "validation loss").
            select: Select::Nll,
        }
    }

    /// Train candidate `c` of `kind` at leaf `at.node`.
    fn train_candidate<C: Candidate>(
        &self,
        c: C,
        kind: CandidateKind,
        at: &LeafData<'_>,
        obs: &mut dyn Observer,
    ) -> Result<Fitted<C>> {
        let opts = self.node_opts(at.node, kind);
        let (metric, chunk) = (self.data.metric, EVAL_CHUNK);
        let router_reg = RouterReg {
            balance: self.cfg.router_balance,
            confidence: self.cfg.router_confidence,
        };
        let obj = LeafObjective {
            train: &at.train,
            valid: at.valid,
            metric,
            chunk,
            router_reg,
        };
        optimise(c, &obj, &opts, obs, self.data.checkpoints)
    }
}

/// A leaf and what its candidates train and are scored on.
struct LeafData<'a> {
    node: usize,
    /// The representation's shape there.
    shape: Shape,
    train: LeafInputs<'a>,
    valid: &'a LeafCache,
}

/// What growth trains on: the data, how it is scored, and the (autodiff) device that
/// new modules live on.
#[derive(Clone, Copy)]
pub struct GrowthData<'a> {
    pub task: Task,
    pub train: &'a DeviceSet,
    pub valid: &'a DeviceSet,
    pub metric: &'a MetricCtx,
    pub device: &'a Device,
    /// Where to checkpoint every epoch (and replay from, when resuming).
    pub checkpoints: Option<&'a Checkpoints>,
    /// The trained CNN new modules start from (`--init-from`), if any.
    pub pretrained: Option<&'a Pretrained>,
    /// Bytes growth may cache at a leaf (its validation and training rows run through
    /// the frozen tree); rows beyond it run through the tree on each batch.
    pub cache_budget: usize,
}

impl GrowthData<'_> {
    /// A new transformer at `pos` of a path: the pretrained CNN's there, else fresh.
    fn new_transformer(&self, pos: PathPos, spec: &crate::spec::BlockSpec) -> Block {
        let start = self.pretrained.and_then(|p| p.transformer(pos, spec, self.device));
        start.unwrap_or_else(|| Block::init(spec, self.device))
    }

    /// A new solver on a representation of shape `input`: the pretrained CNN's head
    /// where it reads that shape, else fresh.
    fn new_solver(&self, input: Shape, spec: &crate::spec::BlockSpec) -> Block {
        let start = self.pretrained.and_then(|p| p.solver(input, spec, self.device));
        start.unwrap_or_else(|| Block::init(spec, self.device))
    }
}

/// Grow a tree on `data.train`, choosing by validation NLL on `data.valid`: the root
/// first, then [`grow_from`] it.
pub fn grow(
    cfg: &TrainConfig,
    data: GrowthData<'_>,
    input: Shape,
    obs: &mut dyn Observer,
) -> Result<Grown> {
    let root = train_root(cfg, data, input, obs)?;
    grow_from(cfg, data, root, obs)
}

/// Train the root alone: one transformer (identity without transformers) and a solver.
pub fn train_root(
    cfg: &TrainConfig,
    data: GrowthData<'_>,
    input: Shape,
    obs: &mut dyn Observer,
) -> Result<Grown> {
    let _draws = hold_draws();
    let GrowthData {
        task,
        train,
        valid,
        ..
    } = data;
    let preset = cfg.preset;
    let root_t = match cfg.ablation {
        Ablation::NoTransformer => None,
        _ => preset.transformer(input, PathPos::FIRST, cfg.pool_rule, cfg.width),
    };
    let root_shape = root_t
        .as_ref()
        .map_or(input, |t| t.out_shape(input).expect("checked"));
    let root_solver = preset.solver(root_shape, task);
    // Initial weights are drawn (on the host) when a candidate is made; seeding before
    // each candidate keeps every draw independent of what ran before.
    seed_draws(sub_seed(cfg.seed, 0, INIT_ROOT));
    let cand = DeepenCandidate {
        transformer: root_t
            .as_ref()
            .map(|t| data.new_transformer(PathPos::FIRST, t)),
        solver: data.new_solver(root_shape, &root_solver),
    };
    let vc = LeafCache::for_root(valid);
    let at = LeafData {
        node: 0,
        shape: input,
        train: LeafInputs::new(None, train, 0, task, data.cache_budget),
        valid: &vc,
    };
    let fitted = Ctx { cfg, data }.train_candidate(cand, CandidateKind::Root, &at, obs)?;
    let topo = Topology::root(input, root_t.into_iter().collect(), root_solver);
    let modules = TreeModules {
        nodes: vec![NodeModules::leaf(
            fitted.model.transformer.into_iter().collect(),
            fitted.model.solver,
        )],
    };
    Ok(Grown {
        tree: Tree::new(topo, modules),
        valid_nll: fitted.valid_nll,
        valid_metric: fitted.valid_metric,
        decisions: vec![],
    })
}

/// Grow `start` breadth-first, level by level, from its current leaves: at each leaf
/// train a split and a deepen candidate on cached inputs and keep the better one if it
/// beats the tree's validation NLL. Stops at `cfg.max_depth` levels or when a level
/// changes nothing. Modules already in `start` are never modified.
pub fn grow_from(
    cfg: &TrainConfig,
    data: GrowthData<'_>,
    start: Grown,
    obs: &mut dyn Observer,
) -> Result<Grown> {
    let _draws = hold_draws();
    let ctx = Ctx { cfg, data };
    let mut grown = start;
    let mut frontier = grown.tree.topology.leaves();
    for level in 0..cfg.max_depth {
        let mut next = vec![];
        for &leaf in &frontier {
            let trained = ctx.train_at_leaf(&grown, leaf, obs)?;
            let d = grown.apply(leaf, level, trained, cfg.accept);
            obs.decision(&d);
            match d.action {
                Action::Split => next.extend(
                    grown.tree.topology.nodes[leaf]
                        .children()
                        .into_iter()
                        .flatten(),
                ),
                Action::Deepen => next.push(leaf),
                Action::Keep => {}
            }
            grown.decisions.push(d);
        }
        // A level that changed nothing leaves nothing new to grow.
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    Ok(grown)
}

/// What was trained at one leaf: the candidates that fit there, and with inherited
/// splits the parent's solver trained on alone.
struct Trained {
    continued: Option<f64>,
    split: Option<Fitted<SplitCandidate>>,
    deepen: Option<Fitted<DeepenCandidate>>,
    /// Each candidate's validation gain over the tree, row by row.
    split_gain: Option<Gain>,
    deepen_gain: Option<Gain>,
}

impl Ctx<'_> {
    /// Train every candidate at `leaf` on its cached inputs (the tree is frozen).
    fn train_at_leaf(&self, grown: &Grown, leaf: usize, obs: &mut dyn Observer) -> Result<Trained> {
        let GrowthData {
            task, train, valid, ..
        } = self.data;
        let (topo, modules) = (&grown.tree.topology, &grown.tree.modules);
        let frozen = modules.valid();
        let view = TreeView {
            topology: topo,
            modules: &frozen,
        };
        let vc = LeafCache::compute(view, valid, leaf, task, EVAL_CHUNK);
        // The validation rows are cached whole (scored every epoch); the training rows
        // get what is left of the budget.
        let shape = topo.shape_at(leaf);
        let budget = self.data.cache_budget.saturating_sub(valid.n * cached_row_bytes(shape.numel(), task));
        let at = LeafData {
            node: leaf,
            shape,
            train: LeafInputs::new(Some(view), train, leaf, task, budget),
            valid: &vc,
        };
        let parent = modules.nodes[leaf].solver().expect("growth visits leaves");
        // One seed per candidate and leaf visit (see `train_root`).
        let visit = grown.decisions.len();
        seed_draws(sub_seed(self.cfg.seed, visit, INIT_SPLIT));
        let continued = self.train_continued(parent, &at, obs)?;
        let split = self.train_split(parent, view, &at, obs)?;
        seed_draws(sub_seed(self.cfg.seed, visit, INIT_DEEPEN));
        let deepen = self.train_deepen(topo, &at, obs)?;
        // The tree as it is: the leaf's own solver where the candidate would go.
        let tree_now = DeepenCandidate {
            transformer: None,
            solver: frozen.nodes[leaf].solver().expect("a leaf").clone(),
        };
        let tree_ll = row_log_lik(&tree_now, &vc, EVAL_CHUNK);
        let gain = |ll: Vec<f32>| Gain::paired(&ll, &tree_ll);
        Ok(Trained {
            continued,
            split_gain: split.as_ref().map(|f| gain(row_log_lik(&f.model, &vc, EVAL_CHUNK))),
            deepen_gain: deepen.as_ref().map(|f| gain(row_log_lik(&f.model, &vc, EVAL_CHUNK))),
            split,
            deepen,
        })
    }

    /// The router of a split at a leaf of this shape, when a split can be tried there.
    fn split_spec(&self, shape: Shape) -> Option<crate::spec::BlockSpec> {
        match self.cfg.ablation {
            Ablation::NoRouter => None,
            _ => self.cfg.preset.router(shape),
        }
    }

    /// An inherited split also just continues training the parent's solver; to win it
    /// must beat that too, so its gain comes from routing.
    fn train_continued(
        &self,
        parent: &Block,
        at: &LeafData<'_>,
        obs: &mut dyn Observer,
    ) -> Result<Option<f64>> {
        let shape = at.shape;
        if self.cfg.init != Init::Inherit || self.split_spec(shape).is_none() {
            return Ok(None);
        }
        let c = DeepenCandidate {
            transformer: None,
            solver: parent.jittered(0.0),
        };
        let f = self.train_candidate(c, CandidateKind::Continue, at, obs)?;
        Ok(Some(f.valid_nll))
    }

    fn train_split(
        &self,
        parent: &Block,
        view: TreeView<'_>,
        at: &LeafData<'_>,
        obs: &mut dyn Observer,
    ) -> Result<Option<Fitted<SplitCandidate>>> {
        let shape = at.shape;
        let Some(r) = self.split_spec(shape) else {
            return Ok(None);
        };
        let device = self.data.device;
        let solver = self.cfg.preset.solver(shape, self.data.task);
        let (left, right) = match self.cfg.init {
            Init::Inherit => (
                parent.jittered(INHERIT_JITTER),
                parent.jittered(INHERIT_JITTER),
            ),
            Init::Fresh => (
                self.data.new_solver(shape, &solver),
                self.data.new_solver(shape, &solver),
            ),
        };
        let mut router = Block::init(&r, device);
        if let Some(p) = self.data.pretrained {
            router = p.router(view.topology.next_pos(at.node), router);
        }
        if self.cfg.router_init == RouterInit::Centred {
            router = centred(&router, self.leaf_sample(at), ROUTER_SPREAD);
        }
        let c = SplitCandidate {
            router,
            left,
            right,
        };
        self.train_candidate(c, CandidateKind::Split, at, obs).map(Some)
    }

    /// Up to 2,048 training representations at the leaf (to centre a router on).
    fn leaf_sample(&self, at: &LeafData<'_>) -> crate::modules::Repr {
        at.train.first(2048)
    }

    fn train_deepen(
        &self,
        topo: &Topology,
        at: &LeafData<'_>,
        obs: &mut dyn Observer,
    ) -> Result<Option<Fitted<DeepenCandidate>>> {
        let shape = at.shape;
        let pos = topo.next_pos(at.node);
        let cfg = self.cfg;
        let t = match (
            cfg.ablation,
            cfg.preset.transformer(shape, pos, cfg.pool_rule, cfg.width),
        ) {
            (Ablation::NoTransformer, _) | (_, None) => return Ok(None),
            (_, Some(t)) => t,
        };
        let out = t.out_shape(shape).expect("checked");
        let solver = self.cfg.preset.solver(out, self.data.task);
        let c = DeepenCandidate {
            transformer: Some(self.data.new_transformer(pos, &t)),
            solver: self.data.new_solver(out, &solver),
        };
        self.train_candidate(c, CandidateKind::Deepen, at, obs).map(Some)
    }
}

/// A candidate's gain in standard errors of its paired per-row gain, on the numbers its
/// rule decides by: the NLL below `bar` under the paper's rule (the rows' mean gain can
/// differ from it by rounding, and a kept split showed "gain -0.4 SE"), the rows' mean
/// gain under the paired rule. Capped: JSON has no infinity (a gain on every row has no
/// spread).
fn shown_z(accept: Accept, bar: f64, nll: Option<f64>, gain: Option<Gain>) -> Option<f64> {
    let g = gain?;
    let g = match accept {
        Accept::Paper => Gain { mean: bar - nll?, se: g.se },
        Accept::Paired { .. } => g,
    };
    Some(g.z().min(1e6))
}

impl Grown {
    /// Keep the better candidate at `leaf` if `accept` says it beats the tree's
    /// validation NLL (an inherited split must also beat the continued parent), and say
    /// what was done.
    fn apply(&mut self, leaf: usize, level: usize, t: Trained, accept: Accept) -> Decision {
        let (s_nll, d_nll) = (
            t.split.as_ref().map(|f| f.valid_nll),
            t.deepen.as_ref().map(|f| f.valid_nll),
        );
        let before = self.valid_nll;
        // A candidate that diverged (NaN or infinite NLL) loses to any other.
        let split_wins = s_nll.is_some_and(|s| s.is_finite() && d_nll.is_none_or(|d| d.is_nan() || s <= d));
        let split_bar = t.continued.map_or(before, |b| b.min(before));
        let (topo, modules) = (&mut self.tree.topology, &mut self.tree.modules);
        let keeps = |bar: f64, nll: f64, g: Option<Gain>| {
            accept.keeps(bar, nll, || g.expect("every trained candidate's gain is measured"))
        };
        let (split_gain, deepen_gain) = (t.split_gain, t.deepen_gain);
        let action = match (t.split, t.deepen) {
            (Some(f), _) if split_wins && keeps(split_bar, f.valid_nll, split_gain) => {
                let m = f.model;
                let specs = [m.router.spec(), m.left.spec(), m.right.spec()].map(Clone::clone);
                let [router, left, right] = specs;
                topo.split(leaf, router, left, right);
                modules.split(leaf, m.router, [m.left, m.right]);
                (self.valid_nll, self.valid_metric) = (f.valid_nll, f.valid_metric);
                Action::Split
            }
            (_, Some(f)) if keeps(before, f.valid_nll, deepen_gain) => {
                let m = f.model;
                let t = m.transformer.expect("deepen has a transformer");
                topo.deepen(leaf, t.spec().clone(), m.solver.spec().clone());
                modules.deepen(leaf, t, m.solver);
                (self.valid_nll, self.valid_metric) = (f.valid_nll, f.valid_metric);
                Action::Deepen
            }
            _ => Action::Keep,
        };
        Decision {
            node: leaf,
            level,
            action,
            valid_before: before,
            valid_after: self.valid_nll,
            split: s_nll,
            deepen: d_nll,
            continued: t.continued,
            split_z: shown_z(accept, split_bar, s_nll, split_gain),
            deepen_z: shown_z(accept, before, d_nll, deepen_gain),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gain_shown_is_the_one_the_rule_decides_by() {
        // Rows that lose a hair on average while the fitted NLL won one (rounding):
        // the paper's rule kept it, and says a gain; the paired rule says the rows'.
        let rows = Gain { mean: -4e-9, se: 1e-8 };
        let paper = shown_z(Accept::Paper, 0.1958, Some(0.1958 - 3e-9), Some(rows)).unwrap();
        assert!(paper > 0.0, "{paper}");
        let paired = shown_z(Accept::Paired { z: 1.0 }, 0.1958, Some(0.1958 - 3e-9), Some(rows));
        assert_eq!(paired, Some(-0.4));
        assert_eq!(shown_z(Accept::Paper, 0.2, None, Some(rows)), None);
    }
}
