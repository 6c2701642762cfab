//! Inference at batch 1,000 on a deterministic 8-leaf conv tree (MNIST-B modules):
//! multi-path (every module) vs single-path with conditional computation.
//! Run: `cargo bench --bench inference`.

use ant::ComputeDevice;
use ant::Task;
use ant::loss::mixture_prediction;
use ant::modules::Repr;
use ant::spec::Shape;
use ant::tree::{Routing, Topology, TreeModules, TreeView};
use ant::{PathPos, PoolRule, Preset};
use burn::module::Param;
use burn::prelude::*;
use burn::tensor::{Distribution, activation};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: usize = 1000;
const TASK: Task = Task::Classification { classes: 10 };

/// A tree grown the way growth grows them: at each of 3 levels every leaf is deepened
/// (when the preset offers a transformer) and split: 8 leaves (MNIST-B modules).
fn tree() -> Topology {
    let p = Preset::MnistB;
    let input = Shape::Image { c: 1, h: 28, w: 28 };
    let every = PoolRule::Every; // the bench's tree as first measured
    let t0 = p
        .transformer(input, PathPos::FIRST, every, 0)
        .expect("root transformer");
    let s0 = t0.out_shape(input).expect("shape");
    let mut t = Topology::root(input, vec![t0], p.solver(s0, TASK));
    let mut frontier = vec![0];
    for _ in 0..3 {
        let mut next = vec![];
        for n in frontier {
            if n != 0 {
                let s = t.shape_at(n);
                if let Some(tr) = p.transformer(s, t.next_pos(n), every, 0) {
                    let out = tr.out_shape(s).expect("shape");
                    t.deepen(n, tr, p.solver(out, TASK));
                }
            }
            let s = t.shape_at(n);
            next.extend(t.split(
                n,
                p.router(s).expect("router"),
                p.solver(s, TASK),
                p.solver(s, TASK),
            ));
        }
        frontier = next;
    }
    t
}

/// Centre every router on the samples that reach it, so paths are balanced.
fn balance(topo: &Topology, m: &mut TreeModules, i: usize, x: Repr, dev: &Device) {
    let Some([l, r]) = topo.nodes[i].children() else {
        return;
    };
    let view = TreeView {
        topology: topo,
        modules: m,
    };
    let h = view.edge_forward(i, x);
    let z: Vec<f32> = m.nodes[i]
        .router()
        .expect("router")
        .forward(h.clone())
        .into_flat()
        .into_data()
        .convert::<f32>()
        .try_to_vec()
        .expect("f32");
    let mut sorted = z.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = sorted[sorted.len() / 2];
    let lin = m.nodes[i]
        .router_mut()
        .expect("router")
        .linears
        .last_mut()
        .expect("fc");
    let bias = lin.bias.as_ref().expect("bias").val();
    lin.bias = Some(Param::from_tensor(bias.sub_scalar(median)));
    let rows = |left: bool| -> Vec<i64> {
        z.iter()
            .enumerate()
            .filter(|(_, v)| (**v >= median) == left)
            .map(|(j, _)| j as i64)
            .collect()
    };
    for (child, left) in [(l, true), (r, false)] {
        let idx = rows(left);
        let n = idx.len();
        let sub = h.select(Tensor::from_data(TensorData::new(idx, [n]), dev));
        balance(topo, m, child, sub, dev);
    }
}

fn inference(c: &mut Criterion) {
    ant::malloc::keep_large_buffers();
    // `ANT_DEVICE=torch cargo bench --features torch --bench inference` (or cuda:N).
    let choice: ComputeDevice = std::env::var("ANT_DEVICE")
        .map_or(Ok(ComputeDevice::Cpu), |s| s.parse())
        .expect("ANT_DEVICE: cpu, torch, cuda or cuda:N");
    let dev = choice.burn().expect("ANT_DEVICE is usable in this build");
    Device::flex().seed(1); // initial weights are drawn on the host
    dev.seed(1);
    let topo = tree();
    let mut m = TreeModules::init(&topo, &dev);
    let x = Repr::Image(Tensor::random(
        [N, 1, 28, 28],
        Distribution::Normal(0.0, 1.0),
        &dev,
    ));
    balance(&topo, &mut m, 0, x.clone(), &dev);
    let view = TreeView {
        topology: &topo,
        modules: &m,
    };
    let cost = topo.total_cost().flops as f64;
    let leaves = view.single_path(x.clone(), Routing::Greedy, |t| t).leaf;
    let path: f64 = leaves
        .iter()
        .map(|&l| topo.path_cost(l).flops as f64)
        .sum::<f64>()
        / N as f64;
    eprintln!(
        "FLOPs per sample: multi-path {cost:.0}, single-path {path:.0} (ratio {:.2})",
        cost / path
    );
    let mut g = c.benchmark_group(format!(
        "inference batch 1000 (8-leaf mnist-b tree) [{choice}]"
    ));
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    g.bench_function("multi-path", |b| {
        b.iter(|| {
            let (l, _) = view.forward_leaves(x.clone(), None);
            mixture_prediction(&l, TASK).into_data()
        })
    });
    g.bench_function("single-path (conditional)", |b| {
        b.iter(|| view.single_path(x.clone(), Routing::Greedy, |t| activation::softmax(t, 1)))
    });
    g.finish();
}

criterion_group!(benches, inference);
criterion_main!(benches);
