//! The growth phase: the root first, then leaves breadth-first, level by level.

use burn::module::Module;
use burn::prelude::*;

use super::candidate::{
    CachedObjective, Candidate, DeepenCandidate, DeviceSet, LeafCache, LiveObjective, RouterReg,
    SplitCandidate,
};
use super::checkpoint::Checkpoints;
use super::eval::{MetricCtx, TreeObjective};
use super::fit::{FitOptions, Fitted, Objective, fit};
use crate::modules::Block;
use crate::observe::{Decision, Observer};
use crate::params::{Init, RouterInit, TrainConfig};
use crate::preset::{Ablation, Task};
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

/// `sub_seed` kinds of the seeds for initial weights.
const INIT_ROOT: u64 = 16;
const INIT_SPLIT: u64 = 17;
const INIT_DEEPEN: u64 = 18;

/// A distinct, reproducible seed for each optimisation.
fn sub_seed(seed: u64, node: usize, kind: u64) -> u64 {
    let mut z = seed ^ ((node as u64) << 8 | kind).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 31)
}

struct Ctx<'a> {
    cfg: &'a TrainConfig,
    metric: &'a MetricCtx,
    checkpoints: Option<&'a Checkpoints>,
}

impl Ctx<'_> {
    fn node_opts(&self, node: usize, kind: u64) -> FitOptions {
        FitOptions {
            max_epochs: self.cfg.epochs_node,
            patience: Some(self.cfg.patience),
            lr: self.cfg.lr,
            batch_size: self.cfg.batch_size,
            lr_step: None,
            seed: sub_seed(self.cfg.seed, node, kind),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn train_candidate<C: Candidate>(
        &self,
        c: C,
        train: &TrainData<'_>,
        valid: &LeafCache,
        node: usize,
        name: &str,
        kind: u64,
        obs: &mut dyn Observer,
    ) -> Fitted<C> {
        let opts = self.node_opts(node, kind);
        let (metric, chunk) = (self.metric, EVAL_CHUNK);
        let router_reg = RouterReg {
            balance: self.cfg.router_balance,
            confidence: self.cfg.router_confidence,
        };
        let (cached, live);
        let obj: &dyn Objective<C> = match *train {
            TrainData::Cached(train) => {
                cached = CachedObjective {
                    train,
                    valid,
                    metric,
                    chunk,
                    router_reg,
                };
                &cached
            }
            TrainData::Live { frozen, set } => {
                live = LiveObjective {
                    frozen,
                    leaf: node,
                    train: set,
                    valid,
                    metric,
                    chunk,
                    router_reg,
                };
                &live
            }
        };
        let (phase, node, name) = ("growth", Some(node), Some(name));
        fit(
            c,
            obj,
            &opts,
            None,
            phase,
            node,
            name,
            obs,
            self.checkpoints,
        )
    }
}

/// What a candidate trains on: inputs cached once per growth step, or, when training
/// images are augmented (new inputs every epoch), the frozen tree run on each batch.
enum TrainData<'a> {
    Cached(&'a LeafCache),
    Live {
        frozen: Option<TreeView<'a>>,
        set: &'a DeviceSet,
    },
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
}

/// Grow a tree on `data.train`, choosing by validation NLL on `data.valid`: the root
/// first, then [`grow_from`] it.
pub fn grow(
    cfg: &TrainConfig,
    data: GrowthData<'_>,
    input: Shape,
    obs: &mut dyn Observer,
) -> Grown {
    let root = train_root(cfg, data, input, obs);
    grow_from(cfg, data, root, obs)
}

/// Train the root alone: one transformer (identity without transformers) and a solver.
pub fn train_root(
    cfg: &TrainConfig,
    data: GrowthData<'_>,
    input: Shape,
    obs: &mut dyn Observer,
) -> Grown {
    let GrowthData {
        task,
        train,
        valid,
        metric,
        device,
        checkpoints,
    } = data;
    let ctx = Ctx {
        cfg,
        metric,
        checkpoints,
    };
    let preset = cfg.preset;

    // The root: one transformer (identity without transformers) and one solver.
    let root_t = match cfg.ablation {
        Ablation::NoTransformer => None,
        _ => preset.transformer(input, 1, cfg.width),
    };
    let root_shape = root_t
        .as_ref()
        .map_or(input, |t| t.out_shape(input).expect("checked"));
    let root_solver = preset.solver(root_shape, task);
    // Initial weights are drawn when first used (or never, when a resumed run loads
    // them): seeding before each candidate keeps every draw independent of that.
    device.seed(sub_seed(cfg.seed, 0, INIT_ROOT));
    let cand = DeepenCandidate {
        transformer: root_t.as_ref().map(|t| Block::init(t, device)),
        solver: Block::init(&root_solver, device),
    };
    let vc = LeafCache::for_root(valid);
    let tc = train.augment.is_none().then(|| LeafCache::for_root(train));
    let td = tc.as_ref().map_or(
        TrainData::Live {
            frozen: None,
            set: train,
        },
        TrainData::Cached,
    );
    let fitted = ctx.train_candidate(cand, &td, &vc, 0, "root", 0, obs);
    drop((tc, vc));
    let topo = Topology::root(input, root_t.into_iter().collect(), root_solver);
    let modules = TreeModules {
        nodes: vec![NodeModules {
            edge: fitted.model.transformer.into_iter().collect(),
            router: None,
            solver: Some(fitted.model.solver),
        }],
    };
    Grown {
        tree: Tree::new(topo, modules),
        valid_nll: fitted.valid_nll,
        valid_metric: fitted.valid_metric,
        decisions: vec![],
    }
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
) -> Grown {
    let GrowthData {
        task,
        train,
        valid,
        metric,
        device,
        checkpoints,
    } = data;
    let ctx = Ctx {
        cfg,
        metric,
        checkpoints,
    };
    let preset = cfg.preset;
    let Tree {
        topology: mut topo,
        mut modules,
    } = start.tree;
    let (mut cur_nll, mut cur_metric) = (start.valid_nll, start.valid_metric);
    let mut decisions = start.decisions;

    let mut frontier = topo.leaves();
    for level in 0..cfg.max_depth {
        let mut next = vec![];
        let mut changed = false;
        for &leaf in &frontier {
            let frozen = modules.valid();
            let view = TreeView {
                topology: &topo,
                modules: &frozen,
            };
            let vc = LeafCache::compute(view, valid, leaf, task, EVAL_CHUNK);
            // Without augmentation the training inputs never change: cache them once.
            let tc = train
                .augment
                .is_none()
                .then(|| LeafCache::compute(view, train, leaf, task, EVAL_CHUNK));
            let td = tc.as_ref().map_or(
                TrainData::Live {
                    frozen: Some(view),
                    set: train,
                },
                TrainData::Cached,
            );
            let shape = topo.shape_at(leaf);

            // One seed per candidate and leaf visit (see `train_root`).
            let visit = decisions.len();
            device.seed(sub_seed(cfg.seed, visit, INIT_SPLIT));
            // An inherited split also just continues training the parent's solver; to
            // win it must beat that too, so its gain comes from routing.
            let baseline = match (cfg.init, cfg.ablation, preset.router(shape)) {
                (Init::Inherit, a, Some(_)) if a != Ablation::NoRouter => {
                    let parent = modules.nodes[leaf].solver.as_ref().expect("leaf");
                    let c = DeepenCandidate {
                        transformer: None,
                        solver: parent.jittered(0.0),
                    };
                    Some(
                        ctx.train_candidate(c, &td, &vc, leaf, "continue", 3, obs)
                            .valid_nll,
                    )
                }
                _ => None,
            };
            let split = match (cfg.ablation, preset.router(shape)) {
                (Ablation::NoRouter, _) | (_, None) => None,
                (_, Some(r)) => {
                    let solver = preset.solver(shape, task);
                    let (left, right) = match cfg.init {
                        Init::Inherit => {
                            let parent = modules.nodes[leaf].solver.as_ref().expect("leaf");
                            (
                                parent.jittered(INHERIT_JITTER),
                                parent.jittered(INHERIT_JITTER),
                            )
                        }
                        Init::Fresh => (Block::init(&solver, device), Block::init(&solver, device)),
                    };
                    let mut router = Block::init(&r, device);
                    if cfg.router_init == RouterInit::Centred {
                        let n = train.n.min(2048);
                        let h = match &tc {
                            Some(c) => c.h.narrow(0, n),
                            None => {
                                let b = train.batch(&(0..n).collect::<Vec<_>>());
                                LeafCache::compute(view, &b, leaf, task, EVAL_CHUNK).h
                            }
                        };
                        router = router.centred_on(h, ROUTER_SPREAD);
                    }
                    let c = SplitCandidate {
                        router,
                        left,
                        right,
                    };
                    Some(ctx.train_candidate(c, &td, &vc, leaf, "split", 1, obs))
                }
            };
            let k = topo.transformers_on_path(leaf) + 1;
            device.seed(sub_seed(cfg.seed, visit, INIT_DEEPEN));
            let deepen = match (cfg.ablation, preset.transformer(shape, k, cfg.width)) {
                (Ablation::NoTransformer, _) | (_, None) => None,
                (_, Some(t)) => {
                    let out = t.out_shape(shape).expect("checked");
                    let c = DeepenCandidate {
                        transformer: Some(Block::init(&t, device)),
                        solver: Block::init(&preset.solver(out, task), device),
                    };
                    Some(ctx.train_candidate(c, &td, &vc, leaf, "deepen", 2, obs))
                }
            };
            drop((tc, vc));

            let (s_nll, d_nll) = (
                split.as_ref().map(|f| f.valid_nll),
                deepen.as_ref().map(|f| f.valid_nll),
            );
            let best_split = s_nll.is_some_and(|s| d_nll.is_none_or(|d| s <= d));
            let before = cur_nll;
            let split_bar = baseline.map_or(cur_nll, |b| b.min(cur_nll));
            let action = if best_split && s_nll.is_some_and(|s| s < split_bar) {
                let f = split.expect("split trained");
                let m = f.model;
                let [l, r] = topo.split(
                    leaf,
                    m.router.spec().clone(),
                    m.left.spec().clone(),
                    m.right.spec().clone(),
                );
                let n = &mut modules.nodes[leaf];
                n.router = Some(m.router);
                n.solver = None;
                for s in [m.left, m.right] {
                    modules.nodes.push(NodeModules {
                        edge: vec![],
                        router: None,
                        solver: Some(s),
                    });
                }
                (cur_nll, cur_metric) = (f.valid_nll, f.valid_metric);
                next.extend([l, r]);
                "split"
            } else if d_nll.is_some_and(|d| d < cur_nll) {
                let f = deepen.expect("deepen trained");
                let m = f.model;
                let t = m.transformer.expect("deepen has a transformer");
                topo.deepen(leaf, t.spec().clone(), m.solver.spec().clone());
                let n = &mut modules.nodes[leaf];
                n.edge.push(t);
                n.solver = Some(m.solver);
                (cur_nll, cur_metric) = (f.valid_nll, f.valid_metric);
                next.push(leaf);
                "deepen"
            } else {
                "keep"
            };
            changed |= action != "keep";
            let d = Decision {
                node: leaf,
                level,
                action: action.to_string(),
                valid_before: before,
                valid_after: cur_nll,
                split: s_nll,
                deepen: d_nll,
                continued: baseline,
            };
            obs.decision(&d);
            decisions.push(d);
        }
        if !changed {
            break;
        }
        frontier = next;
    }
    Grown {
        tree: Tree::new(topo, modules),
        valid_nll: cur_nll,
        valid_metric: cur_metric,
        decisions,
    }
}

/// Refinement: all parameters together for `cfg.refine_epochs` epochs, the learning
/// rate divided by 10 at every multiple of 50. Returns the better of the grown tree and
/// the best refined epoch (by validation NLL), with its scores.
pub fn refine(
    cfg: &TrainConfig,
    grown: Grown,
    data: GrowthData<'_>,
    obs: &mut dyn Observer,
) -> (Tree, f64, f64) {
    let GrowthData {
        train,
        valid,
        metric,
        checkpoints,
        ..
    } = data;
    if cfg.refine_epochs == 0 {
        return (grown.tree, grown.valid_nll, grown.valid_metric);
    }
    let Tree { topology, modules } = grown.tree;
    let obj = TreeObjective {
        topology: &topology,
        train,
        valid,
        metric,
        chunk: EVAL_CHUNK,
    };
    let opts = FitOptions {
        max_epochs: cfg.refine_epochs,
        patience: None,
        lr: cfg.lr,
        batch_size: cfg.batch_size,
        lr_step: Some(50),
        seed: sub_seed(cfg.seed, usize::MAX >> 8, 3),
    };
    let start = (grown.valid_nll, grown.valid_metric);
    let f = fit(
        modules.clone(),
        &obj,
        &opts,
        Some(start),
        "refine",
        None,
        None,
        obs,
        checkpoints,
    );
    if f.improved {
        (Tree::new(topology, f.model), f.valid_nll, f.valid_metric)
    } else {
        (Tree::new(topology, modules), start.0, start.1)
    }
}
