//! Single-path inference with conditional computation equals the dense reference.

mod common;

use ant::modules::Repr;
use ant::spec::{BlockSpec, LayerSpec, Shape};
use ant::tree::{Routing, Topology, TreeModules, TreeView};
use burn::prelude::*;
use common::*;

fn fc(i: usize, o: usize, tanh: bool) -> BlockSpec {
    let mut l = vec![LayerSpec::Linear { d_in: i, d_out: o }];
    if tanh {
        l.push(LayerSpec::Tanh);
    }
    BlockSpec::new(l)
}

/// Trees of several shapes on 3 inputs, width 6, 4 outputs.
fn shapes() -> Vec<Topology> {
    let mut out = vec![];
    let root = || Topology::root(Shape::Flat { d: 3 }, vec![fc(3, 6, true)], fc(6, 4, false));
    out.push(root());
    // a left-leaning chain with deepened nodes
    let mut t = root();
    let [l, _] = t.split(0, fc(6, 1, false), fc(6, 4, false), fc(6, 4, false));
    t.deepen(l, fc(6, 6, true), fc(6, 4, false));
    let [ll, _] = t.split(l, fc(6, 1, false), fc(6, 4, false), fc(6, 4, false));
    t.split(ll, fc(6, 1, false), fc(6, 4, false), fc(6, 4, false));
    out.push(t);
    // a full tree of depth 3
    let mut t = root();
    let mut frontier = vec![0];
    for _ in 0..3 {
        frontier = frontier
            .into_iter()
            .flat_map(|n| t.split(n, fc(6, 1, false), fc(6, 4, false), fc(6, 4, false)))
            .collect();
    }
    out.push(t);
    out
}

fn dense(view: TreeView<'_>, x: Repr) -> (Vec<usize>, Vec<f32>) {
    let greedy = view.greedy_leaves(x.clone());
    let (leaves, _) = view.forward_leaves(x, None);
    let outs: Vec<Vec<f32>> = leaves.iter().map(|l| to_vec(l.out.clone())).collect();
    let k = 4;
    let mut v = vec![];
    for (b, &g) in greedy.iter().enumerate() {
        let j = leaves.iter().position(|l| l.node == g).unwrap();
        v.extend_from_slice(&outs[j][b * k..(b + 1) * k]);
    }
    (greedy, v)
}

#[test]
fn conditional_single_path_equals_dense_greedy() {
    let _rng = rng_lock();
    let dev = Device::flex();
    for (s, topo) in shapes().into_iter().enumerate() {
        dev.seed(s as u64);
        let m = TreeModules::init(&topo, &dev);
        let view = TreeView {
            topology: &topo,
            modules: &m,
        };
        let n = 300;
        let x = flat(
            uniform(n, 3, 40 + s as u64)
                .iter()
                .map(|v| v * 3.0)
                .collect(),
            n,
            3,
            &dev,
        );
        let (dl, dv) = dense(view, x.clone());
        let p = view.single_path(x, Routing::Greedy, |t| t);
        assert_eq!(p.leaf, dl, "tree {s}: leaves differ");
        for (a, b) in p.out.iter().zip(&dv) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "tree {s}: {a} vs {b}"
            );
        }
        if topo.leaves().len() > 2 {
            let used: std::collections::BTreeSet<_> = p.leaf.iter().collect();
            assert!(
                used.len() > 1,
                "tree {s}: test needs samples on several paths"
            );
        }
    }
}

#[test]
fn stochastic_routing_is_seeded_and_follows_router_probabilities() {
    let _rng = rng_lock();
    let dev = Device::flex();
    let mut topo = Topology::root(Shape::Flat { d: 3 }, vec![], fc(3, 4, false));
    topo.split(0, fc(3, 1, false), fc(3, 4, false), fc(3, 4, false));
    let m = TreeModules::init(&topo, &dev);
    let view = TreeView {
        topology: &topo,
        modules: &m,
    };
    let n = 4000;
    let x = flat(uniform(n, 3, 5), n, 3, &dev);
    let a = view.single_path(x.clone(), Routing::Stochastic(1), |t| t);
    assert_eq!(
        a,
        view.single_path(x.clone(), Routing::Stochastic(1), |t| t)
    );
    assert_ne!(
        a.leaf,
        view.single_path(x.clone(), Routing::Stochastic(2), |t| t)
            .leaf
    );
    // the share routed left matches the mean router probability
    let z = to_vec(m.nodes[0].router().unwrap().forward(x).into_flat());
    let p_left: f64 = z
        .iter()
        .map(|&z| 1.0 / (1.0 + (-z as f64).exp()))
        .sum::<f64>()
        / n as f64;
    let left = a.leaf.iter().filter(|&&l| l == 1).count() as f64 / n as f64;
    assert!(
        (left - p_left).abs() < 0.03,
        "left share {left} vs mean p_left {p_left}"
    );
}

#[test]
fn pruning_removes_a_starved_branch_without_changing_predictions() {
    let _rng = rng_lock();
    use ant::observe::Silent;
    use ant::{Ant, AntParams, Inference, Preset};
    use burn::module::Param;
    // two regions, so growth splits the root
    let data = regression(uniform(900, 2, 31), 2, |r| {
        if r[0] > 0.0 { 2.0 * r[1] } else { -2.0 * r[1] }
    });
    // an HME (only splits) on two regions: the root splits
    let params = AntParams::new(Preset::Tabular)
        .with_ablation(ant::Ablation::NoTransformer)
        .with_epochs_node(30)
        .with_batch_size(32)
        .with_refine_epochs(Some(0))
        .with_max_depth(1);
    let mut model = Ant::fit(params, &data, &Device::flex(), &mut Silent).unwrap();
    assert_eq!(
        model.topology().nodes.len(),
        3,
        "{:?}",
        model.meta().decisions
    );
    // starve the right branch: the root router now sends everything left
    let router = model.tree_mut().modules.nodes[0].router_mut().unwrap();
    let lin = &mut router.linears[0];
    let b = lin.bias.as_ref().unwrap().val();
    lin.bias = Some(Param::from_tensor(b.add_scalar(60.0)));
    let reach = model.node_reach(&data).unwrap();
    assert!(
        reach[2] < 1e-6 && (reach[1] - 1.0).abs() < 1e-6,
        "{reach:?}"
    );
    let (pruned, report) = model.pruned(&data, 0.01).unwrap();
    assert_eq!(report.removed.len(), 1);
    assert_eq!(report.removed[0].0, 2);
    assert_eq!(pruned.topology().nodes.len(), 1);
    assert_eq!(
        report.params_removed,
        model.topology().num_params() - pruned.topology().num_params()
    );
    let (a, b) = (
        model.predict(&data, Inference::MultiPath).unwrap(),
        pruned.predict(&data, Inference::MultiPath).unwrap(),
    );
    for (x, y) in a.values.iter().zip(&b.values) {
        assert!((x - y).abs() < 1e-4, "{x} vs {y}");
    }
    // a pruned model saves, loads and predicts like any other
    let dir = tempfile::tempdir().unwrap();
    pruned.save(dir.path()).unwrap();
    let back = Ant::load(dir.path(), &Device::flex()).unwrap();
    assert_eq!(
        back.predict(&data, Inference::SinglePath).unwrap(),
        pruned.predict(&data, Inference::SinglePath).unwrap()
    );
}
