//! Where a training step goes: W1's and W2's step (the trees of `train_step`) timed in
//! phases, forward, backward and the optimiser step, with the device synchronised
//! between them; and each op kind W2 (and W1) is made of timed alone as `ant` runs it
//! (burn's ops; on LibTorch the fused ones of `ant::ops`),
//! forward and backward, at the shapes W2 uses. Prints markdown tables, ms per call
//! (medians). `scripts/torch_op_bench.py` times the same in PyTorch and, given this
//! output (`--compare FILE`), prints both side by side.
//!
//!     cargo bench --bench step_phases                       # cpu (burn-flex)
//!     ANT_DEVICE=cuda cargo bench --features torch --bench step_phases
//!
//! Settings (environment): `ANT_DEVICE` (cpu, torch, cuda, cuda:N); `ANT_PHASE_BATCHES`
//! (default `16,512`); `ANT_PHASE_PARTS` (`phases,ops`; `convs`: the presets'
//! convolutions and the GFLOP/s they achieve, `ANT_PHASE_LAYER=mnist-a:1:28` (tree, input
//! channels, input side) picking one, `ANT_CONV_LAYOUT` (`grid`, `exact`, `rows`) forcing
//! the layout); `ANT_PHASE_TREES` (`W1,W2`); `ANT_PHASE_SECONDS` (time spent measuring each row, default 2; at least 3 calls);
//! `ANT_PHASE_REPS` (exactly this many calls per row after one warm-up call, e.g. to
//! count kernels per step under `nsys`); `ANT_PHASE_CLOCK` (`wall`, default, or `cpu`:
//! the process's CPU time, for one-thread runs on a loaded machine).

mod common;

use std::time::Instant;

use ant::loss::{Target, logsumexp_rows, mixture_nll};
use ant::modules::{Block, Repr};
use ant::ops as fused;
use ant::spec::{BlockSpec, LayerSpec};
use ant::train::adam;
use ant::tree::{Topology, TreeModules, TreeView};
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::Distribution;
use common::{bench_device, conv, w1, w1_batch, w2, w2_batch};

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// How many calls a row gets, and the medians of each part of the call in ms.
struct Timer {
    seconds: f64,
    reps: Option<usize>,
}

impl Timer {
    fn from_env() -> Timer {
        let num = |n: &str| std::env::var(n).ok().map(|s| s.parse::<f64>().expect(n));
        Timer {
            seconds: num("ANT_PHASE_SECONDS").unwrap_or(2.0),
            reps: num("ANT_PHASE_REPS").map(|r| r as usize),
        }
    }

    /// Calls `f` once to warm up, then `reps` times or until the time is spent (3 to 1000
    /// calls); `f` returns the milliseconds of each of its `N` parts. Returns their
    /// medians and the number of timed calls.
    fn run<const N: usize>(&self, mut f: impl FnMut() -> [f64; N]) -> ([f64; N], usize) {
        f();
        let start = Instant::now();
        let mut all: Vec<[f64; N]> = Vec::new();
        loop {
            all.push(f());
            let done = match self.reps {
                Some(r) => all.len() >= r,
                None => {
                    all.len() >= 1000
                        || (all.len() >= 3 && start.elapsed().as_secs_f64() >= self.seconds)
                }
            };
            if done {
                break;
            }
        }
        let med = std::array::from_fn(|k| {
            let mut v: Vec<f64> = all.iter().map(|a| a[k]).collect();
            v.sort_by(f64::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        });
        (med, all.len())
    }
}

/// Milliseconds on the clock `ANT_PHASE_CLOCK` names: `wall` (default) or `cpu`, the CPU
/// time of the whole process (every thread), which a loaded machine does not inflate:
/// meaningful with one thread (`RAYON_NUM_THREADS=1`), where waiting threads spin little.
fn now() -> f64 {
    static CPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let cpu = *CPU.get_or_init(|| match std::env::var("ANT_PHASE_CLOCK").as_deref() {
        Ok("cpu") => true,
        Ok("wall") | Err(_) => false,
        Ok(other) => panic!("ANT_PHASE_CLOCK: wall or cpu, not {other}"),
    });
    if cpu {
        process_cpu_ms()
    } else {
        START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn process_cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn process_cpu_ms() -> f64 {
    panic!("ANT_PHASE_CLOCK=cpu: only on Linux (glibc)")
}

fn ms(t: f64) -> f64 {
    now() - t
}

fn sync(dev: &Device) {
    dev.sync().expect("device sync");
}

/// Forward (to the loss), backward (to the parameter gradients), Adam, each ended by a
/// device sync; then the whole step with one sync at its end.
fn phases(timer: &Timer, name: &str, b: usize, topo: Topology, x: Repr, y: Target) {
    let dev = x.device().autodiff();
    let mut model = Some(TreeModules::init(&topo, &dev));
    let mut optim = adam().init();
    let forward = |m: &TreeModules| {
        let (leaves, _) = TreeView {
            topology: &topo,
            modules: m,
        }
        .forward_leaves(x.clone(), None);
        mixture_nll(&leaves, &y)
    };
    let ([f, bw, o], n) = timer.run(|| {
        let m = model.take().expect("model");
        let t = now();
        let loss = forward(&m);
        sync(&dev);
        let tf = ms(t);
        let t = now();
        let grads = GradientsParams::from_grads(loss.backward(), &m);
        sync(&dev);
        let tb = ms(t);
        let t = now();
        model = Some(optim.step(1e-3, m, grads));
        sync(&dev);
        [tf, tb, ms(t)]
    });
    let ([whole], _) = timer.run(|| {
        let m = model.take().expect("model");
        let t = now();
        let loss = forward(&m);
        let grads = GradientsParams::from_grads(loss.backward(), &m);
        model = Some(optim.step(1e-3, m, grads));
        sync(&dev);
        [ms(t)]
    });
    println!(
        "| {name} | {b} | {f:.3} | {bw:.3} | {o:.3} | {:.3} | {whole:.3} | {n} |",
        f + bw + o
    );
}

/// One op: `fwd` builds its output's sum (the scalar backward starts from) from fresh
/// clones of its inputs; backward computes every gradient the op has.
fn op(timer: &Timer, dev: &Device, name: &str, b: usize, shape: &str, fwd: impl Fn() -> Tensor<1>) {
    let ([f, bw], n) = timer.run(|| {
        let t = now();
        let s = fwd();
        sync(dev);
        let tf = ms(t);
        let t = now();
        let g = s.backward();
        sync(dev);
        let tb = ms(t);
        drop(g);
        [tf, tb]
    });
    println!("| {name} | {b} | {shape} | {f:.3} | {bw:.3} | {n} |");
}

fn block(layers: Vec<LayerSpec>, dev: &Device) -> Block {
    Block::init(&BlockSpec::new(layers), dev)
}

/// `[b, ...]` standard-normal input on the autodiff device; `grad`: a leaf that wants
/// its gradient (an intermediate activation inside the tree), else data.
fn input<const D: usize>(dims: [usize; D], grad: bool, dev: &Device) -> Tensor<D> {
    let t = Tensor::random(dims, Distribution::Normal(0.0, 1.0), dev);
    if grad { t.require_grad() } else { t }
}

fn image(t: &Tensor<4>) -> Repr {
    Repr::Image(t.clone())
}

fn flat(t: &Tensor<2>) -> Repr {
    Repr::Flat(t.clone())
}

/// The op kinds of W2 (and W1's FC layers), at the shapes W2 (W1) gives them.
fn ops(timer: &Timer, base: &Device, b: usize) {
    let dev = &base.clone().autodiff();
    let sum_img = |r: Repr| r.into_flat().sum();

    let c1 = block(vec![conv(1, 40)], dev);
    let x = input([b, 1, 28, 28], false, dev);
    op(
        timer,
        dev,
        "conv 1->40 k5 (input: data)",
        b,
        "[B,1,28,28]",
        || sum_img(c1.forward(image(&x))),
    );
    let c40 = block(vec![conv(40, 40)], dev);
    let x = input([b, 40, 12, 12], true, dev);
    op(timer, dev, "conv 40->40 k5", b, "[B,40,12,12]", || {
        sum_img(c40.forward(image(&x)))
    });
    let relu = block(vec![LayerSpec::Relu], dev);
    let x = input([b, 40, 24, 24], true, dev);
    op(timer, dev, "relu", b, "[B,40,24,24]", || {
        sum_img(relu.forward(image(&x)))
    });
    let pool = block(vec![LayerSpec::MaxPool2], dev);
    op(timer, dev, "max-pool 2x2", b, "[B,40,24,24]", || {
        sum_img(pool.forward(image(&x)))
    });
    let gap = block(vec![LayerSpec::Gap], dev);
    let x = input([b, 40, 8, 8], true, dev);
    op(timer, dev, "global average pool", b, "[B,40,8,8]", || {
        sum_img(gap.forward(image(&x)))
    });
    let lin = |i: usize, o: usize| block(vec![LayerSpec::Linear { d_in: i, d_out: o }], dev);
    for (i, o) in [(2560, 10), (40, 40), (256, 256)] {
        let l = lin(i, o);
        let x = input([b, i], true, dev);
        let name = format!("linear {i}->{o}");
        op(timer, dev, &name, b, &format!("[B,{i}]"), || {
            sum_img(l.forward(flat(&x)))
        });
    }
    let tanh = block(vec![LayerSpec::Tanh], dev);
    let x = input([b, 256], true, dev);
    op(timer, dev, "tanh (W1)", b, "[B,256]", || {
        sum_img(tanh.forward(flat(&x)))
    });
    let x = input([b, 10], true, dev);
    let labels: Vec<i64> = (0..b as i64).map(|i| i % 10).collect();
    let y: Tensor<2, Int> = Tensor::from_data(TensorData::new(labels, [b, 1]), dev);
    op(timer, dev, "log-softmax + gather", b, "[B,10]", || {
        fused::log_softmax(x.clone(), 1).gather(1, y.clone()).sum()
    });
    let x = input([b, 1], true, dev);
    op(timer, dev, "log-sigmoid", b, "[B,1]", || {
        fused::log_sigmoid(x.clone()).sum()
    });
    let x = input([b, 2], true, dev);
    op(timer, dev, "log-sum-exp over rows", b, "[B,2]", || {
        logsumexp_rows(x.clone()).sum()
    });
}

/// The convolutions of the presets' one-path trees (`--baseline cnn`) at their shapes,
/// forward and backward, with the rate each achieves (useful arithmetic: 2 FLOPs per
/// multiply-add at each output position; backward twice the forward, once for the first
/// layer, whose input needs no gradient).
fn convs(timer: &Timer, base: &Device, b: usize) {
    let dev = &base.clone().autodiff();
    // (tree, c_in, c_out, kernel, input side)
    let layers = [
        ("mnist-a", 1, 40, 5, 28),
        ("mnist-a", 40, 40, 5, 12),
        ("mnist-a", 40, 40, 5, 8),
        ("mnist-b", 1, 40, 3, 28),
        ("mnist-b", 40, 40, 3, 13),
        ("mnist-b", 40, 40, 3, 11),
        ("mnist-b", 40, 40, 3, 4),
        ("mnist-c", 1, 5, 5, 28),
        ("mnist-c", 5, 5, 5, 12),
        ("mnist-c", 5, 5, 5, 8),
    ];
    let only = std::env::var("ANT_PHASE_LAYER").ok();
    for (tree, ci, co, k, side) in layers {
        if only
            .as_ref()
            .is_some_and(|o| *o != format!("{tree}:{ci}:{side}"))
        {
            continue;
        }
        let spec = LayerSpec::Conv {
            c_in: ci,
            c_out: co,
            k,
            pad: 0,
        };
        let c = block(vec![spec], dev);
        let x = input([b, ci, side, side], ci > 1, dev);
        let out = side + 1 - k;
        let flops = 2.0 * (b * co * ci * k * k * out * out) as f64;
        let ([f, bw], n) = forward_backward(timer, dev, &|| c.forward(image(&x)).into_flat().sum());
        let back = if ci > 1 { 2.0 } else { 1.0 };
        let rate = |ms: f64, f: f64| f / ms / 1e6;
        println!(
            "| {tree} | conv{k} {ci}->{co} on {side}x{side} | {b} | {f:.2} | {bw:.2} | {:.1} | {:.1} | {:.1} | {n} |",
            rate(f, flops),
            rate(bw, back * flops),
            rate(f + bw, (1.0 + back) * flops),
        );
        if ci == 1 {
            pooled_data_layer(timer, dev, (tree, co, k, side), &x, flops);
        }
    }
}

/// `f`'s forward pass and the backward pass from its result, timed apart (ms), and
/// the calls made.
fn forward_backward(timer: &Timer, dev: &Device, f: &dyn Fn() -> Tensor<1>) -> ([f64; 2], usize) {
    timer.run(|| {
        let t = now();
        let s = f();
        sync(dev);
        let tf = ms(t);
        let t = now();
        drop(s.backward());
        sync(dev);
        [tf, ms(t)]
    })
}

/// A data layer with its ReLU and 2x2 max-pooling (the presets' first transformer), as
/// `ant` runs it (the convolution pooled in one op, then the ReLU) and as two ops (the
/// convolution, then the pooling and the ReLU), in turns (three rounds, to spread the
/// shared machine's drift over both).
fn pooled_data_layer(
    timer: &Timer,
    dev: &Device,
    (tree, co, k, side): (&str, usize, usize, usize),
    x: &Tensor<4>,
    flops: f64,
) {
    let conv = LayerSpec::Conv {
        c_in: 1,
        c_out: co,
        k,
        pad: 0,
    };
    let one = block(
        vec![conv.clone(), LayerSpec::Relu, LayerSpec::MaxPool2],
        dev,
    );
    let mut two = (
        block(vec![conv], dev),
        block(vec![LayerSpec::Relu, LayerSpec::MaxPool2], dev),
    );
    two.0.convs = one.convs.clone();
    for _ in 0..3 {
        let ops: [(&str, &dyn Fn() -> Tensor<1>); 2] = [
            ("one op", &|| one.forward(image(x)).into_flat().sum()),
            ("two ops", &|| {
                two.1.forward(two.0.forward(image(x))).into_flat().sum()
            }),
        ];
        for (how, f) in ops {
            let ([f, bw], n) = forward_backward(timer, dev, f);
            println!(
                "| {tree} | conv{k} 1->{co} on {side}x{side} + relu + pool, {how} | {} | {f:.2} | {bw:.2} | {:.1} | {:.1} | {:.1} | {n} |",
                x.dims()[0],
                flops / f / 1e6,
                flops / bw / 1e6,
                2.0 * flops / (f + bw) / 1e6,
            );
        }
    }
}

fn main() {
    // As criterion passes `--bench`: nothing to parse.
    ant::malloc::keep_large_buffers();
    let device = bench_device();
    let base = device.burn().expect("ANT_DEVICE is usable in this build");
    let timer = Timer::from_env();
    let batches: Vec<usize> = env_list("ANT_PHASE_BATCHES", "16,512")
        .iter()
        .map(|s| s.parse().expect("ANT_PHASE_BATCHES: comma-separated sizes"))
        .collect();
    let parts = env_list("ANT_PHASE_PARTS", "phases,ops");
    let trees = env_list("ANT_PHASE_TREES", "W1,W2");
    println!(
        "# step_phases: ant on {device}, ms per call (medians), {} clock",
        std::env::var("ANT_PHASE_CLOCK").unwrap_or_else(|_| "wall".into())
    );
    if parts.iter().any(|p| p == "phases") {
        println!();
        println!("## step phases, ant on {device} (device synced after each phase)");
        println!();
        println!(
            "| tree | batch | forward | backward | optimiser | sum | step, one sync | calls |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for &b in &batches {
            for t in &trees {
                match t.as_str() {
                    "W1" => {
                        let (x, y) = w1_batch(b, &base);
                        phases(&timer, "W1", b, w1(), x, y);
                    }
                    "W2" => {
                        let (x, y) = w2_batch(b, &base);
                        phases(&timer, "W2", b, w2(), x, y);
                    }
                    other => panic!("ANT_PHASE_TREES: W1 or W2, not {other}"),
                }
            }
        }
    }
    if parts.iter().any(|p| p == "convs") {
        println!();
        println!("## the presets' convolutions, ant on {device} (GFLOP/s of useful arithmetic)");
        println!();
        println!(
            "| tree | layer | batch | forward ms | backward ms | forward GFLOP/s | backward GFLOP/s | both GFLOP/s | calls |"
        );
        println!("|---|---|---|---|---|---|---|---|---|");
        for &b in &batches {
            convs(&timer, &base, b);
        }
    }
    if parts.iter().any(|p| p == "ops") {
        println!();
        println!(
            "## single ops through burn, ant on {device} (forward includes the sum that seeds backward)"
        );
        println!();
        println!("| op | batch | input | forward | backward | calls |");
        println!("|---|---|---|---|---|---|");
        for &b in &batches {
            ops(&timer, &base, b);
        }
    }
}
