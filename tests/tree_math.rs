//! The mixture's mathematics: gradients, probabilities, and the exactness of the cached
//! local optimisation used during growth.

mod common;

use ant::Task;
use ant::loss::{Target, mixture_nll, mixture_prediction};
use ant::modules::{Block, Repr};
use ant::observe::Stage;
use ant::spec::{BlockSpec, LayerSpec, Shape};
use ant::train::{
    Batch, DeepenCandidate, DeviceSet, LeafCache, LeafInputs, LeafObjective, MetricCtx, Objective,
    SplitCandidate,
};
use ant::tree::reach_probs;
use ant::tree::{Topology, TreeModules, TreeView};
use burn::module::{Module, Param};
use burn::prelude::*;
use common::*;

const D: usize = 3;
const H: usize = 4;

fn fc(i: usize, o: usize) -> BlockSpec {
    BlockSpec::new(vec![LayerSpec::Linear { d_in: i, d_out: o }])
}
fn fc_tanh(i: usize, o: usize) -> BlockSpec {
    BlockSpec::new(vec![
        LayerSpec::Linear { d_in: i, d_out: o },
        LayerSpec::Tanh,
    ])
}

/// Root FC+tanh, split; left child deepened and split again: leaves 3, 4 and 2.
fn tiny_topology(k: usize) -> Topology {
    let mut t = Topology::root(Shape::Flat { d: D }, vec![fc_tanh(D, H)], fc(H, k));
    let [l, _r] = t.split(0, fc(H, 1), fc(H, k), fc(H, k));
    t.deepen(l, fc_tanh(H, H), fc(H, k));
    t.split(l, fc(H, 1), fc(H, k), fc(H, k));
    t.validate().unwrap();
    t
}

fn loss_of(topo: &Topology, m: &TreeModules, x: &Repr, y: &Target) -> Tensor<1> {
    let (leaves, _) = TreeView {
        topology: topo,
        modules: m,
    }
    .forward_leaves(x.clone(), None);
    mixture_nll(&leaves, y)
}

type Pick = fn(&mut TreeModules) -> &mut Param<Tensor<2>>;

fn check_gradients(task: Task, y: Target, dev: &Device) {
    let k = task.outputs();
    let topo = tiny_topology(k);
    dev.seed(7);
    let mut m = TreeModules::init(&topo, dev);
    let x = flat(uniform(16, D, 1), 16, D, dev);
    let picks: [(&str, Pick); 4] = [
        ("root transformer", |m| {
            &mut m.nodes[0].edge_mut()[0].linears[0].weight
        }),
        ("root router", |m| {
            &mut m.nodes[0].router_mut().unwrap().linears[0].weight
        }),
        ("deep transformer", |m| {
            &mut m.nodes[1].edge_mut()[0].linears[0].weight
        }),
        ("leaf solver", |m| {
            &mut m.nodes[4].solver_mut().unwrap().linears[0].weight
        }),
    ];
    let loss = loss_of(&topo, &m, &x, &y);
    let grads = loss.backward();
    for (name, pick) in picks {
        let w = pick(&mut m).val();
        let g = to_vec(w.grad(&grads).expect("gradient exists"));
        let base = to_vec(w.clone());
        let shape = w.shape();
        for idx in [0, base.len() / 2, base.len() - 1] {
            let eps = 1e-2f32;
            let f = |delta: f32| {
                let mut v = base.clone();
                v[idx] += delta;
                let mut m2 = m.clone();
                *pick(&mut m2) =
                    Param::from_tensor(Tensor::from_data(TensorData::new(v, shape.clone()), dev));
                loss_of(&topo, &m2, &x, &y).into_scalar::<f32>() as f64
            };
            let fd = (f(eps) - f(-eps)) / (2.0 * eps as f64);
            let an = g[idx] as f64;
            assert!(
                (fd - an).abs() < 2e-3 + 2e-2 * an.abs(),
                "{name}[{idx}]: finite difference {fd} vs autodiff {an}"
            );
        }
    }
}

#[test]
fn mixture_nll_gradients_match_finite_differences() {
    let _rng = rng_lock();
    let dev = Device::flex().autodiff();
    let y = classes((0..16).map(|i| i % 3).collect(), &dev);
    check_gradients(Task::Classification { classes: 3 }, y, &dev);
    let y = values(uniform(16, 2, 9), 16, 2, &dev);
    check_gradients(Task::Regression { dim: 2 }, y, &dev);
}

#[test]
fn reach_and_class_probabilities_sum_to_one() {
    let _rng = rng_lock();
    let dev = Device::flex();
    let topo = tiny_topology(5);
    let m = TreeModules::init(&topo, &dev);
    let n = 64;
    // large inputs push routers towards 0/1: sums must still be exact
    let x: Vec<f32> = uniform(n, D, 3).iter().map(|v| v * 20.0).collect();
    let (leaves, _) = TreeView {
        topology: &topo,
        modules: &m,
    }
    .forward_leaves(flat(x, n, D, &dev), None);
    assert_eq!(
        leaves.iter().map(|l| l.node).collect::<Vec<_>>(),
        vec![2, 3, 4]
    );
    for t in [
        reach_probs(&leaves, n, &dev),
        mixture_prediction(&leaves, Task::Classification { classes: 5 }),
    ] {
        let cols = t.dims()[1];
        let v = to_vec(t);
        for row in v.chunks(cols) {
            let s: f32 = row.iter().sum();
            assert!((s - 1.0).abs() < 1e-5, "row sums to {s}");
            assert!(row.iter().all(|p| *p >= 0.0));
        }
    }
}

/// Places candidate modules at `leaf` to form the full tree they would make.
fn with_split(
    topo: &Topology,
    m: &TreeModules,
    leaf: usize,
    c: &SplitCandidate,
) -> (Topology, TreeModules) {
    let mut t = topo.clone();
    t.split(
        leaf,
        c.router.spec().clone(),
        c.left.spec().clone(),
        c.right.spec().clone(),
    );
    let mut m = m.clone();
    m.split(leaf, c.router.clone(), [c.left.clone(), c.right.clone()]);
    (t, m)
}

fn with_deepen(
    topo: &Topology,
    m: &TreeModules,
    leaf: usize,
    c: &DeepenCandidate,
) -> (Topology, TreeModules) {
    let mut t = topo.clone();
    let tr = c.transformer.clone().unwrap();
    t.deepen(leaf, tr.spec().clone(), c.solver.spec().clone());
    let mut m = m.clone();
    m.deepen(leaf, tr, c.solver.clone());
    (t, m)
}

fn assert_close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len());
    for (i, (p, q)) in a.iter().zip(b).enumerate() {
        assert!(
            (p - q).abs() <= 1e-5 + 1e-4 * q.abs(),
            "{what}[{i}]: cached {p} vs full tree {q}"
        );
    }
}

#[test]
fn cached_local_optimisation_equals_full_tree() {
    let _rng = rng_lock();
    let ad = Device::flex().autodiff();
    let base = Device::flex();
    let k = 3;
    let task = Task::Classification { classes: k };
    let topo = tiny_topology(k);
    ad.seed(11);
    let frozen = TreeModules::init(&topo, &ad).freeze();
    let n = 40;
    let xv = uniform(n, D, 5);
    let labels: Vec<i64> = (0..n as i64).map(|i| (i * 7) % 3).collect();
    let set = DeviceSet::new(
        flat(xv.clone(), n, D, &base),
        classes(labels.clone(), &base),
        n,
    );
    let metric = MetricCtx {
        task,
        y_std: vec![],
    };
    let idx: Vec<usize> = (0..n).rev().step_by(2).collect(); // a shuffled-looking batch
    let x_ad = flat(
        idx.iter()
            .flat_map(|&i| xv[i * D..(i + 1) * D].to_vec())
            .collect(),
        idx.len(),
        D,
        &ad,
    );
    let y_ad = classes(idx.iter().map(|&i| labels[i]).collect(), &ad);

    let frozen_valid = frozen.valid();
    let view = TreeView {
        topology: &topo,
        modules: &frozen_valid,
    };
    for leaf in [2usize, 3] {
        let cache = LeafCache::compute(view, &set, leaf, task, 16);
        let train = LeafInputs::new(Some(view), &set, leaf, task, usize::MAX);
        let obj = LeafObjective {
            train: &train,
            valid: &cache,
            metric: &metric,
            chunk: 16,
            router_reg: Default::default(),
        };

        let split = SplitCandidate {
            router: Block::init(&fc(H, 1), &ad),
            left: Block::init(&fc(H, k), &ad),
            right: Block::init(&fc(H, k), &ad),
        };
        let batch = Batch::upload(&idx, &ad);
        let cached = obj.batch_loss(&split, &batch);
        let (t2, m2) = with_split(&topo, &frozen, leaf, &split);
        let full = loss_of(&t2, &m2, &x_ad, &y_ad);
        assert_close(&to_vec(cached.clone()), &to_vec(full.clone()), "split loss");
        let (gc, gf) = (cached.backward(), full.backward());
        for (name, w) in [
            ("router", split.router.linears[0].weight.val()),
            ("left", split.left.linears[0].weight.val()),
        ] {
            assert_close(
                &to_vec(w.grad(&gc).unwrap()),
                &to_vec(w.grad(&gf).unwrap()),
                name,
            );
        }
        // frozen modules get no gradient in the full tree either
        assert!(
            m2.nodes[0].edge()[0].linears[0]
                .weight
                .val()
                .grad(&gf)
                .is_none()
        );

        let deepen = DeepenCandidate {
            transformer: Some(Block::init(&fc_tanh(H, H), &ad)),
            solver: Block::init(&fc(H, k), &ad),
        };
        let cached = obj.batch_loss(&deepen, &batch);
        let (t3, m3) = with_deepen(&topo, &frozen, leaf, &deepen);
        let full = loss_of(&t3, &m3, &x_ad, &y_ad);
        assert_close(
            &to_vec(cached.clone()),
            &to_vec(full.clone()),
            "deepen loss",
        );
        let (gc, gf) = (cached.backward(), full.backward());
        let w = deepen.transformer.as_ref().unwrap().linears[0].weight.val();
        assert_close(
            &to_vec(w.grad(&gc).unwrap()),
            &to_vec(w.grad(&gf).unwrap()),
            "deepen transformer",
        );

        // validation through the cache equals the full tree's too
        let (v_cached, _) = Objective::<SplitCandidate>::validate(&obj, &split.valid());
        let (t2v, m2v) = with_split(&topo, &frozen.valid(), leaf, &split.valid());
        let full_v = loss_of(&t2v, &m2v, &set.x.all(set.n), &set.y).into_scalar::<f32>() as f64;
        assert!(
            (v_cached - full_v).abs() < 1e-5 * full_v.abs().max(1.0),
            "valid {v_cached} vs {full_v}"
        );
    }
}

/// A batch's inputs give the same loss and gradient, up to float rounding, whether its
/// rows come from the cache, from the frozen tree run on the batch, or some of each, in
/// the batch's order; the cached rows run through the tree once, when a batch first
/// needs them.
#[test]
fn leaf_inputs_are_the_same_cached_or_not() {
    let _rng = rng_lock();
    let ad = Device::flex().autodiff();
    let base = Device::flex();
    let k = 3;
    let task = Task::Classification { classes: k };
    let topo = tiny_topology(k);
    let frozen = TreeModules::init(&topo, &ad).valid();
    let n = 30;
    let set = DeviceSet::new(
        flat(uniform(n, D, 8), n, D, &base),
        classes((0..n as i64).map(|i| i % 3).collect(), &base),
        n,
    );
    let metric = MetricCtx {
        task,
        y_std: vec![],
    };
    let view = TreeView {
        topology: &topo,
        modules: &frozen,
    };
    let valid = LeafCache::compute(view, &set, 3, task, 7);
    let c = SplitCandidate {
        router: Block::init(&fc(H, 1), &ad),
        left: Block::init(&fc(H, k), &ad),
        right: Block::init(&fc(H, k), &ad),
    };
    // Rows 4, 9 and 1 are below 12, rows 22 and 17 above it.
    let idx = [4usize, 22, 9, 1, 17];
    let batch = Batch::upload(&idx, &ad);
    let row = ant::train::cached_row_bytes(topo.shape_at(3).numel(), task);
    let mut results = vec![];
    for (budget, cached) in [(usize::MAX, n), (0, 0), (12 * row + row / 2, 12)] {
        let train = LeafInputs::new(Some(view), &set, 3, task, budget);
        assert_eq!(train.cached_rows(), cached);
        let obj = LeafObjective {
            train: &train,
            valid: &valid,
            metric: &metric,
            chunk: 7,
            router_reg: Default::default(),
        };
        assert_eq!(Objective::<SplitCandidate>::n_train(&obj), n);
        Objective::<SplitCandidate>::validate(&obj, &c.valid());
        assert!(
            !train.computed(),
            "validation and the row count need no training inputs"
        );
        let loss = obj.batch_loss(&c, &batch);
        assert_eq!(
            train.computed(),
            cached > 0,
            "cached rows run when a batch needs them"
        );
        let w = c.router.linears[0].weight.val();
        let grad = to_vec(w.grad(&loss.clone().backward()).unwrap());
        let rows = to_vec(train.batch(&batch).h.into_flat());
        results.push((
            to_vec(loss),
            grad,
            to_vec(train.first(20).into_flat()),
            rows,
        ));
    }
    for (got, what) in [
        (&results[1], "nothing cached"),
        (&results[2], "12 rows cached"),
    ] {
        assert_close(&got.0, &results[0].0, &format!("loss, {what}"));
        assert_close(&got.1, &results[0].1, &format!("router gradient, {what}"));
        assert_close(&got.2, &results[0].2, &format!("first rows, {what}"));
        assert_close(
            &got.3,
            &results[0].3,
            &format!("the batch's rows in its order, {what}"),
        );
    }
}

/// The optional router terms make a split's router partition its samples: each decision
/// confident, half the samples each way, even where one solver alone would do.
#[test]
fn router_penalties_make_a_split_partition_its_samples() {
    let _rng = rng_lock();
    use ant::observe::Silent;
    use ant::train::{OptimiseOptions, optimise};
    use ant::tree::router::RouterReg;
    let ad = Device::flex().autodiff();
    let n = 600;
    let xv = uniform(n, 2, 11);
    let labels: Vec<i64> = xv.chunks(2).map(|r| i64::from(r[0] + r[1] > 0.0)).collect();
    let set = DeviceSet::new(flat(xv.clone(), n, 2, &ad), classes(labels, &ad), n);
    let cache = LeafCache::for_root(&set);
    let metric = MetricCtx {
        task: Task::Classification { classes: 2 },
        y_std: vec![],
    };
    let x = flat(xv, n, 2, &ad.clone().without_autodiff());
    let trained = |reg: RouterReg| {
        ad.seed(4);
        let split = SplitCandidate {
            router: Block::init(&fc(2, 1), &ad),
            left: Block::init(&fc(2, 2), &ad),
            right: Block::init(&fc(2, 2), &ad),
        };
        let train = LeafInputs::new(None, &set, 0, Task::Classification { classes: 2 }, 0);
        let obj = LeafObjective {
            train: &train,
            valid: &cache,
            metric: &metric,
            chunk: 256,
            router_reg: reg,
        };
        let opts = OptimiseOptions {
            stage: Stage::Refine,
            start: None,
            max_epochs: 150,
            patience: None,
            lr: 1e-2,
            batch_size: 64,
            lr_step: None,
            seed: 1,
            select: Default::default(),
        };
        let f = optimise(split, &obj, &opts, &mut Silent, None).unwrap();
        let p = to_vec(burn::tensor::activation::sigmoid(
            f.model.router.valid().forward(x.clone()).into_flat(),
        ));
        let entropy = p
            .iter()
            .map(|&p| {
                let p = p.clamp(1e-7, 1.0 - 1e-7) as f64;
                -(p * p.ln() + (1.0 - p) * (1.0 - p).ln())
            })
            .sum::<f64>()
            / n as f64;
        let left = p.iter().filter(|&&p| p > 0.5).count() as f64 / n as f64;
        (entropy, left)
    };
    let (h0, left0) = trained(RouterReg::default());
    let (h1, left1) = trained(RouterReg {
        balance: 2.0,
        confidence: 2.0,
    });
    eprintln!("no terms: entropy {h0:.3}, left {left0:.2}; with: entropy {h1:.3}, left {left1:.2}");
    // A linear router keeps some unsure decisions near its boundary; the terms must
    // still lower the mean entropy clearly and bring the split closer to half-half.
    assert!(h1 < 0.18 && h1 < h0 - 0.03, "{h1} vs {h0}");
    assert!((left1 - 0.5).abs() < 0.08, "unbalanced: {left1}");
    assert!(
        (left1 - 0.5).abs() < (left0 - 0.5).abs(),
        "{left1} vs {left0}"
    );
}

/// Bytes the allocator has handed out and not had back (heap and mappings).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_in_use() -> usize {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let m = unsafe { libc::mallinfo2() };
    m.uordblks + m.hblkhd
}

/// Scoring a trained candidate row by row (the acceptance rule's paired gains) runs it
/// without autodiff: a tracked forward pass that no backward consumes would keep every
/// chunk's activations alive until the next training step.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn scoring_a_candidate_row_by_row_keeps_no_activations() {
    use ant::train::row_log_lik;
    let _rng = rng_lock();
    let ad = Device::flex().autodiff();
    let (n, d, wide) = (4096, 32, 1024);
    let set = DeviceSet::new(
        flat(uniform(n, d, 5), n, d, &Device::flex()),
        classes((0..n as i64).map(|i| i % 3).collect(), &Device::flex()),
        n,
    );
    let cache = LeafCache::for_root(&set);
    let c = DeepenCandidate {
        transformer: Some(Block::init(&fc_tanh(d, wide), &ad)),
        solver: Block::init(&fc(wide, 3), &ad),
    };
    row_log_lik(&c, &cache, 512); // warm up the allocator's free lists
    let before = heap_in_use();
    let ll = row_log_lik(&c, &cache, 512);
    let kept = heap_in_use().saturating_sub(before);
    assert_eq!(ll.len(), n);
    // Kept activations: 8 chunks of two [512, 1024] f32 tensors, 32 MiB.
    assert!(kept < 4 << 20, "{kept} bytes still held after scoring");
}
