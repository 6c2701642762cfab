//! One training step (forward, backward, Adam) on two fixed trees, batch 512 by default:
//! W1 (SARCOS-like FC tree) and W2 (MNIST-like conv tree).
//! Run: `cargo bench --bench train_step`; on LibTorch:
//! `ANT_DEVICE=torch cargo bench --features torch --bench train_step` (or `cuda:N`).
//! `ANT_BENCH_BATCH=N` sets the batch (default 512), as the peer's `BENCH_BATCH`.

mod common;

use ant::loss::{Target, mixture_nll};
use ant::modules::Repr;
use ant::train::adam;
use ant::tree::{Topology, TreeModules, TreeView};
use burn::optim::GradientsParams;
use common::{bench_batch, bench_device, w1, w1_batch, w2, w2_batch};
use criterion::{Criterion, criterion_group, criterion_main};

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

fn train_step(c: &mut Criterion) {
    ant::malloc::keep_large_buffers();
    let base = bench_device()
        .burn()
        .expect("ANT_DEVICE is usable in this build");
    let b = bench_batch();
    let (x, y) = w1_batch(b, &base);
    bench_tree(c, &format!("W1 fc tree train step (batch {b})"), w1(), x, y);
    let (x, y) = w2_batch(b, &base);
    bench_tree(
        c,
        &format!("W2 conv tree train step (batch {b})"),
        w2(),
        x,
        y,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = train_step
}
criterion_main!(benches);
