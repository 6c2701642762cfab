//! What the training benches share: the two fixed trees (W1, W2), their random inputs,
//! and the device and batch size the environment names. `mod common;` in a bench.

#![allow(dead_code)] // each bench uses its own part

use ant::ComputeDevice;
use ant::loss::Target;
use ant::modules::Repr;
use ant::spec::{BlockSpec, LayerSpec, Shape};
use ant::tree::Topology;
use burn::prelude::*;
use burn::tensor::Distribution;

/// The batch of `ANT_BENCH_BATCH` (default 512), as the peer's `torch_step_bench.py`
/// reads `BENCH_BATCH`: a small batch (16) measures per-op overhead.
pub fn bench_batch() -> usize {
    std::env::var("ANT_BENCH_BATCH").map_or(512, |s| {
        s.parse()
            .ok()
            .filter(|&b| b > 0)
            .expect("ANT_BENCH_BATCH: a positive integer")
    })
}

/// The device named by `ANT_DEVICE` (default cpu).
pub fn bench_device() -> ComputeDevice {
    std::env::var("ANT_DEVICE")
        .map_or(Ok(ComputeDevice::Cpu), |s| s.parse())
        .expect("ANT_DEVICE: cpu, torch, cuda or cuda:N")
}

pub fn fc(i: usize, o: usize, tanh: bool) -> BlockSpec {
    let mut l = vec![LayerSpec::Linear { d_in: i, d_out: o }];
    if tanh {
        l.push(LayerSpec::Tanh);
    }
    BlockSpec::new(l)
}

/// Root FC(21->256)+tanh; full depth 2; every other edge FC(256->256)+tanh.
pub fn w1() -> Topology {
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

pub fn conv(ci: usize, co: usize) -> LayerSpec {
    LayerSpec::Conv {
        c_in: ci,
        c_out: co,
        k: 5,
        pad: 0,
    }
}

/// Root conv5-40+pool, router conv5+GAP+2 FC, two conv5-40 child edges, linear solvers.
pub fn w2() -> Topology {
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

/// W1's batch: 21 standard-normal features, 7 standard-normal targets.
pub fn w1_batch(b: usize, base: &Device) -> (Repr, Target) {
    let x = Repr::Flat(Tensor::random(
        [b, 21],
        Distribution::Normal(0.0, 1.0),
        base,
    ));
    let y = Target::Values(Tensor::random([b, 7], Distribution::Normal(0.0, 1.0), base));
    (x, y)
}

/// W2's batch: standard-normal 28x28 images, labels 0..9 in turn.
pub fn w2_batch(b: usize, base: &Device) -> (Repr, Target) {
    let x = Repr::Image(Tensor::random(
        [b, 1, 28, 28],
        Distribution::Normal(0.0, 1.0),
        base,
    ));
    let labels: Vec<i64> = (0..b as i64).map(|i| i % 10).collect();
    let y = Target::Classes(Tensor::from_data(TensorData::new(labels, [b, 1]), base));
    (x, y)
}
