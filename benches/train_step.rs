//! One training step (forward, backward, Adam) at batch 512 on two fixed trees:
//! W1 (SARCOS-like FC tree) and W2 (MNIST-like conv tree).
//! Run: `cargo bench --bench train_step`; on LibTorch:
//! `ANT_DEVICE=torch cargo bench --features torch --bench train_step` (or `cuda:N`).

use ant::ComputeDevice;
use ant::loss::{Target, mixture_nll};
use ant::modules::Repr;
use ant::spec::{BlockSpec, LayerSpec, Shape};
use ant::train::adam;
use ant::tree::{Topology, TreeModules, TreeView};
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::Distribution;
use criterion::{Criterion, criterion_group, criterion_main};

const B: usize = 512;

fn fc(i: usize, o: usize, tanh: bool) -> BlockSpec {
    let mut l = vec![LayerSpec::Linear { d_in: i, d_out: o }];
    if tanh {
        l.push(LayerSpec::Tanh);
    }
    BlockSpec::new(l)
}

/// Root FC(21->256)+tanh; full depth 2; every other edge FC(256->256)+tanh.
fn w1() -> Topology {
    let mut t = Topology::root(
        Shape::Flat { d: 21 },
        vec![fc(21, 256, true)],
        fc(256, 7, false),
    );
    let [a, b] = t.split(0, fc(256, 1, false), fc(256, 7, false), fc(256, 7, false));
    for n in [a, b] {
        t.deepen(n, fc(256, 256, true), fc(256, 7, false));
        let [c, d] = t.split(n, fc(256, 1, false), fc(256, 7, false), fc(256, 7, false));
        for m in [c, d] {
            t.deepen(m, fc(256, 256, true), fc(256, 7, false));
        }
    }
    t
}

fn conv(ci: usize, co: usize) -> LayerSpec {
    LayerSpec::Conv {
        c_in: ci,
        c_out: co,
        k: 5,
        pad: 0,
    }
}

/// Root conv5-40+pool, router conv5+GAP+2 FC, two conv5-40 child edges, linear solvers.
fn w2() -> Topology {
    let root = BlockSpec::new(vec![conv(1, 40), LayerSpec::Relu, LayerSpec::MaxPool2]);
    let solver = BlockSpec::new(vec![
        LayerSpec::Flatten,
        LayerSpec::Linear {
            d_in: 2560,
            d_out: 10,
        },
    ]);
    let mut t = Topology::root(
        Shape::Image { c: 1, h: 28, w: 28 },
        vec![root],
        solver.clone(),
    );
    let router = BlockSpec::new(vec![
        conv(40, 40),
        LayerSpec::Relu,
        LayerSpec::Gap,
        LayerSpec::Linear {
            d_in: 40,
            d_out: 40,
        },
        LayerSpec::Relu,
        LayerSpec::Linear { d_in: 40, d_out: 1 },
    ]);
    let [a, b] = t.split(0, router, solver.clone(), solver.clone());
    for n in [a, b] {
        t.deepen(
            n,
            BlockSpec::new(vec![conv(40, 40), LayerSpec::Relu]),
            solver.clone(),
        );
    }
    t.validate().expect("valid W2");
    t
}

fn bench_tree(c: &mut Criterion, name: &str, topo: Topology, x: Repr, y: Target) {
    let dev = x.device().autodiff();
    let mut model = Some(TreeModules::init(&topo, &dev));
    let mut optim = adam().init();
    // Forward and backward: the gradients of the mixture NLL.
    let grads_of = |m: &TreeModules| {
        let (leaves, _) = TreeView {
            topology: &topo,
            modules: m,
        }
        .forward_leaves(x.clone(), None);
        GradientsParams::from_grads(mixture_nll(&leaves, &y).backward(), m)
    };
    c.bench_function(&format!("{name} [{}]", bench_device()), |bench| {
        bench.iter(|| {
            let m = model.take().expect("model");
            let grads = grads_of(&m);
            model = Some(optim.step(1e-3, m, grads));
            // LibTorch on a GPU runs asynchronously: time the work, not the queueing.
            dev.sync().expect("device sync");
        })
    });
    // The same step without Adam: the difference is the optimiser's share (burn's Adam
    // updates each parameter tensor with its own handful of ops).
    let m = model.expect("model");
    c.bench_function(
        &format!("{name}, no optimiser [{}]", bench_device()),
        |bench| {
            bench.iter(|| {
                std::hint::black_box(grads_of(&m));
                dev.sync().expect("device sync");
            })
        },
    );
}

/// The device named by `ANT_DEVICE` (default cpu).
fn bench_device() -> ComputeDevice {
    std::env::var("ANT_DEVICE")
        .map_or(Ok(ComputeDevice::Cpu), |s| s.parse())
        .expect("ANT_DEVICE: cpu, torch, cuda or cuda:N")
}

fn train_step(c: &mut Criterion) {
    ant::malloc::keep_large_buffers();
    let base = bench_device()
        .burn()
        .expect("ANT_DEVICE is usable in this build");
    let x = Repr::Flat(Tensor::random(
        [B, 21],
        Distribution::Normal(0.0, 1.0),
        &base,
    ));
    let y = Target::Values(Tensor::random(
        [B, 7],
        Distribution::Normal(0.0, 1.0),
        &base,
    ));
    bench_tree(c, "W1 fc tree train step (batch 512)", w1(), x, y);
    let x = Repr::Image(Tensor::random(
        [B, 1, 28, 28],
        Distribution::Normal(0.0, 1.0),
        &base,
    ));
    let labels: Vec<i64> = (0..B as i64).map(|i| i % 10).collect();
    let y = Target::Classes(Tensor::from_data(TensorData::new(labels, [B, 1]), &base));
    bench_tree(c, "W2 conv tree train step (batch 512)", w2(), x, y);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = train_step
}
criterion_main!(benches);
