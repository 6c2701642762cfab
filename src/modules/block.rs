//! One spec-driven burn module used for every transformer, router and solver.

use burn::module::{Module, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig, PaddingConfig2d};
use burn::prelude::*;
use burn::tensor::Distribution;

use crate::ops;
use crate::device::host_like;
use crate::spec::{BlockSpec, LayerSpec, Shape};

/// A batch of representations: images `[B,C,H,W]` or flat features `[B,D]`.
#[derive(Clone, Debug)]
pub enum Repr {
    Image(Tensor<4>),
    Flat(Tensor<2>),
}

/// Row indices as an Int tensor on `device` (for `select`).
pub fn index_tensor(idx: &[usize], device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
    Tensor::from_data(TensorData::new(v, [idx.len()]), device)
}

/// A tensor's values, row-major, on the host (as f32 whatever the backend stores).
pub fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("converted to f32")
}

impl Repr {
    /// The device the representation lives on (the benches, with `internals`).
    #[cfg(feature = "internals")]
    pub fn device(&self) -> Device {
        match self {
            Repr::Image(t) => t.device(),
            Repr::Flat(t) => t.device(),
        }
    }
    pub fn batch(&self) -> usize {
        match self {
            Repr::Image(t) => t.dims()[0],
            Repr::Flat(t) => t.dims()[0],
        }
    }
    /// Rows `idx` (gathered along the batch dimension).
    pub fn select(&self, idx: Tensor<1, Int>) -> Repr {
        match self {
            Repr::Image(t) => Repr::Image(t.clone().select(0, idx)),
            Repr::Flat(t) => Repr::Flat(t.clone().select(0, idx)),
        }
    }
    /// Rows `start..start+len`.
    pub fn narrow(&self, start: usize, len: usize) -> Repr {
        match self {
            Repr::Image(t) => Repr::Image(t.clone().narrow(0, start, len)),
            Repr::Flat(t) => Repr::Flat(t.clone().narrow(0, start, len)),
        }
    }
    /// `n` rows shaped as this part's, their values not yet written (see [`Self::with_rows`]).
    pub fn uninit_rows(&self, n: usize) -> Repr {
        match self {
            Repr::Image(t) => {
                let [_, c, h, w] = t.dims();
                Repr::Image(Tensor::empty([n, c, h, w], &t.device()))
            }
            Repr::Flat(t) => Repr::Flat(Tensor::empty([n, t.dims()[1]], &t.device())),
        }
    }
    /// These rows with `part` written from row `start`: where the tensor is not shared,
    /// in place, so that rows gathered part by part never sit in memory twice.
    pub fn with_rows(self, start: usize, part: Repr) -> Repr {
        let rows = start..start + part.batch();
        match (self, part) {
            (Repr::Image(t), Repr::Image(p)) => Repr::Image(t.slice_assign([rows], p)),
            (Repr::Flat(t), Repr::Flat(p)) => Repr::Flat(t.slice_assign([rows], p)),
            _ => unreachable!("rows of one representation"),
        }
    }
    pub fn into_flat(self) -> Tensor<2> {
        match self {
            Repr::Flat(t) => t,
            Repr::Image(t) => t.flatten(1, 3),
        }
    }
    #[cfg(test)]
    fn into_image(self) -> Tensor<4> {
        match self {
            Repr::Image(t) => t,
            Repr::Flat(_) => unreachable!("flat representation where an image was expected"),
        }
    }
    /// Build from row-major data with per-sample shape `shape`.
    pub fn from_vec(data: Vec<f32>, n: usize, shape: Shape, device: &Device) -> Repr {
        match shape {
            Shape::Image { c, h, w } => Repr::Image(Tensor::from_data(
                TensorData::new(data, [n, c, h, w]),
                device,
            )),
            Shape::Flat { d } => {
                Repr::Flat(Tensor::from_data(TensorData::new(data, [n, d]), device))
            }
        }
    }
}

/// A transformer, router or solver: the layers of its [`BlockSpec`] with their weights.
#[derive(Module, Debug)]
pub struct Block {
    /// The convolutions of the spec, in order.
    pub convs: Vec<Conv2d>,
    /// The fully connected layers of the spec, in order.
    pub linears: Vec<Linear>,
    #[module(skip)]
    spec: BlockSpec,
}

impl Block {
    /// A freshly initialised block (PyTorch-style default initialisation), drawn on the
    /// host from its seeded stream and then moved to `device` (see [`crate::device`]), so
    /// one seed gives the same weights on every device.
    pub fn init(spec: &BlockSpec, device: &Device) -> Block {
        let host = host_like(device);
        let block = Block::lazy(spec, &host).drawn();
        if host == *device {
            block
        } else {
            block.fork(device)
        }
    }

    /// A block whose weights are drawn on `device` when first used.
    fn lazy(spec: &BlockSpec, device: &Device) -> Block {
        let mut convs = Vec::new();
        let mut linears = Vec::new();
        for l in &spec.layers {
            match *l {
                LayerSpec::Conv {
                    c_in,
                    c_out,
                    k,
                    pad,
                } => convs.push(
                    Conv2dConfig::new([c_in, c_out], [k, k])
                        .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                        .init(device),
                ),
                LayerSpec::Linear { d_in, d_out } => {
                    linears.push(LinearConfig::new(d_in, d_out).init(device))
                }
                _ => {}
            }
        }
        Block {
            convs,
            linears,
            spec: spec.clone(),
        }
    }

    /// Draws every weight now, in the order the forward pass reads them.
    fn drawn(self) -> Block {
        for c in &self.convs {
            c.weight.val();
            c.bias.as_ref().map(Param::val);
        }
        for l in &self.linears {
            l.weight.val();
            l.bias.as_ref().map(Param::val);
        }
        self
    }

    /// A copy with new parameters: the same values plus Gaussian noise of standard
    /// deviation `rel` times each weight tensor's mean magnitude (biases copied as is).
    /// Used to start both children of a split from their parent's solver.
    pub fn jittered(&self, rel: f64) -> Block {
        // New leaf tensors: computed without autodiff, then re-attached if it was on.
        fn noisy<const D: usize>(w: Tensor<D>, rel: f64) -> Tensor<D> {
            let ad = w.is_autodiff();
            let w = w.without_autodiff();
            let scale = w.clone().abs().mean().into_scalar::<f32>() as f64 * rel;
            // Drawn on the host, like initial weights.
            let noise = Tensor::random(
                w.shape(),
                Distribution::Normal(0.0, scale.max(1e-8)),
                &host_like(&w.device()),
            )
            .to_device(&w.device());
            let v = w + noise;
            if ad { v.autodiff() } else { v }
        }
        fn copied<const D: usize>(b: Tensor<D>) -> Tensor<D> {
            let ad = b.is_autodiff();
            let v = b.without_autodiff().clone().add_scalar(0.0);
            if ad { v.autodiff() } else { v }
        }
        let convs = self
            .convs
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.weight = Param::from_tensor(noisy(c.weight.val(), rel));
                c.bias = c.bias.as_ref().map(|b| Param::from_tensor(copied(b.val())));
                c
            })
            .collect();
        let linears = self
            .linears
            .iter()
            .map(|l| {
                let mut l = l.clone();
                l.weight = Param::from_tensor(noisy(l.weight.val(), rel));
                l.bias = l.bias.as_ref().map(|b| Param::from_tensor(copied(b.val())));
                l
            })
            .collect();
        Block {
            convs,
            linears,
            spec: self.spec.clone(),
        }
    }

    pub fn spec(&self) -> &BlockSpec {
        &self.spec
    }

    /// The same block on `device` with parameters of its own (new ids, the same values),
    /// so that an optimiser trains it apart from the original.
    pub fn copied_to(&self, device: &Device) -> Block {
        let mut out = Block::lazy(&self.spec, device);
        for (to, from) in out.convs.iter_mut().zip(&self.convs) {
            copy_conv(to, from, device);
        }
        for (to, from) in out.linears.iter_mut().zip(&self.linears) {
            to.weight = copied_param(from.weight.val(), device);
            to.bias = from.bias.as_ref().map(|b| copied_param(b.val(), device));
        }
        out
    }

    /// A copy of `self` whose leading convolutions are `from`'s, as long as the two
    /// specs' convolutions agree (the rest, and every FC layer, stay `self`'s).
    pub fn with_convs_from(&self, from: &Block) -> Block {
        let conv_specs = |b: &BlockSpec| {
            b.layers
                .iter()
                .filter(|l| matches!(l, LayerSpec::Conv { .. }))
                .cloned()
                .collect::<Vec<_>>()
        };
        let (ours, theirs) = (conv_specs(&self.spec), conv_specs(&from.spec));
        let mut out = self.clone();
        let device = self.device();
        let agree = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
        for (to, from) in out.convs.iter_mut().zip(&from.convs).take(agree) {
            copy_conv(to, from, &device);
        }
        out
    }

    /// The device the block's parameters live on.
    fn device(&self) -> Device {
        let first = self.convs.first().map(|c| c.weight.val().device());
        first.unwrap_or_else(|| self.linears[0].weight.val().device())
    }

    pub fn forward(&self, x: Repr) -> Repr {
        use LayerSpec::{Conv, Gap, MaxPool2, Relu};
        let (mut ci, mut li) = (0, 0);
        let mut x = x;
        let mut rest = &self.spec.layers[..];
        while !rest.is_empty() {
            // Fused runs of layers first: how many layers this step takes.
            let taken;
            (x, taken) = match (rest, x) {
                // A convolution, ReLU and 2x2 max-pooling: the convolution pooled in one op,
                // then the ReLU, values and gradients alike (the maximum commutes with a
                // non-decreasing function; where it is not positive both pass no
                // gradient), on a quarter of the values.
                ([Conv { .. }, Relu, MaxPool2, ..], Repr::Image(t)) => {
                    ci += 1;
                    (Repr::Image(ops::relu(ops::conv2d_pool2x2(&self.convs[ci - 1], t))), 3)
                }
                ([Relu, MaxPool2, ..], Repr::Image(t)) => (Repr::Image(ops::relu(ops::max_pool2x2(t))), 2),
                // A router's ReLU and global average pooling: one op, one pass each way.
                ([Relu, Gap, ..], Repr::Image(t)) => (Repr::Flat(ops::relu_gap(t)), 2),
                ([Conv { .. }, ..], Repr::Image(t)) => {
                    ci += 1;
                    (Repr::Image(ops::conv2d(&self.convs[ci - 1], t)), 1)
                }
                ([LayerSpec::Linear { .. }, ..], r) => {
                    li += 1;
                    (Repr::Flat(self.linears[li - 1].forward(r.into_flat())), 1)
                }
                ([l, ..], r) => (layer(l, r), 1),
                ([], _) => unreachable!("the loop stops when no layer is left"),
            };
            rest = &rest[taken..];
        }
        x
    }
}

/// One layer without weights on `r`.
fn layer(l: &LayerSpec, r: Repr) -> Repr {
    match (l, r) {
        (LayerSpec::Relu, Repr::Image(t)) => Repr::Image(ops::relu(t)),
        (LayerSpec::Relu, Repr::Flat(t)) => Repr::Flat(ops::relu(t)),
        (LayerSpec::Tanh, Repr::Image(t)) => Repr::Image(ops::tanh(t)),
        (LayerSpec::Tanh, Repr::Flat(t)) => Repr::Flat(ops::tanh(t)),
        (LayerSpec::MaxPool2, Repr::Image(t)) => Repr::Image(ops::max_pool2x2(t)),
        (LayerSpec::Gap, Repr::Image(t)) => {
            let [b, c, _, _] = t.dims();
            Repr::Flat(t.mean_dim(3).mean_dim(2).reshape([b, c]))
        }
        (LayerSpec::Flatten, r) => Repr::Flat(r.into_flat()),
        (l, r) => unreachable!("layer {l:?} on {r:?}: specs are shape-checked at build"),
    }
}

/// `to` takes `from`'s weights (new parameters on `device`).
fn copy_conv(to: &mut Conv2d, from: &Conv2d, device: &Device) {
    to.weight = copied_param(from.weight.val(), device);
    to.bias = from.bias.as_ref().map(|b| copied_param(b.val(), device));
}

/// `t`'s values as a new parameter on `device` (with autodiff if the device has it).
fn copied_param<const D: usize>(t: Tensor<D>, device: &Device) -> Param<Tensor<D>> {
    let data = t.without_autodiff().into_data();
    let v = Tensor::from_data(data, &device.clone().without_autodiff());
    Param::from_tensor(if device.is_autodiff() { v.autodiff() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_count_matches_spec() {
        let dev = Device::flex();
        let spec = BlockSpec::new(vec![
            LayerSpec::Conv {
                c_in: 3,
                c_out: 8,
                k: 3,
                pad: 1,
            },
            LayerSpec::Relu,
            LayerSpec::Gap,
            LayerSpec::Linear { d_in: 8, d_out: 5 },
        ]);
        let b = Block::init(&spec, &dev);
        assert_eq!(b.num_params(), spec.num_params());
        let x = Repr::Image(Tensor::zeros([2, 3, 6, 6], &dev));
        match b.forward(x) {
            Repr::Flat(t) => assert_eq!(t.dims(), [2, 5]),
            _ => panic!("expected flat output"),
        }
    }

    /// A convolution, ReLU and 2x2 max-pooling, run by the block (which pools before the
    /// ReLU) and in the spec's order by hand: the same values and gradients, bit for bit,
    /// on inputs with ties and windows that are all negative.
    #[test]
    fn pooling_before_relu_changes_nothing() {
        let dev = Device::flex().autodiff();
        let spec = BlockSpec::new(vec![
            LayerSpec::Conv { c_in: 2, c_out: 3, k: 3, pad: 1 },
            LayerSpec::Relu,
            LayerSpec::MaxPool2,
        ]);
        // Seeded, alone on the draws: other tests drawing at once made its weights (and
        // once in about fifteen runs its outcome) vary.
        let b = {
            let _draws = crate::device::hold_draws();
            crate::device::seed_draws(7);
            Block::init(&spec, &dev)
        };
        // Values on a coarse grid: ties within windows, and many negative windows.
        let v: Vec<f32> = (0..4 * 2 * 8 * 8).map(|i| ((i * 37 % 11) as f32 - 6.0) / 2.0).collect();
        let x = || Tensor::<4>::from_data(TensorData::new(v.clone(), [4, 2, 8, 8]), &dev).require_grad();
        let weight = b.convs[0].weight.val();
        let run = |y: Tensor<4>, x: &Tensor<4>| {
            let w = Tensor::<4>::from_data(TensorData::new((0..y.shape().num_elements()).map(|i| (i % 5) as f32 - 2.0).collect::<Vec<_>>(), y.dims()), &dev);
            let g = (y.clone() * w).sum().backward();
            (to_vec(y), to_vec(x.grad(&g).unwrap()), to_vec(weight.grad(&g).unwrap()))
        };
        let (xa, xb) = (x(), x());
        let by_block = run(b.forward(Repr::Image(xa.clone())).into_image(), &xa);
        let conv = ops::conv2d(&b.convs[0], xb.clone());
        let by_hand = run(ops::max_pool2x2(ops::relu(conv)), &xb);
        assert!(by_hand.0.contains(&0.0) && by_hand.0.iter().any(|v| *v > 0.0));
        assert_eq!(by_block, by_hand);
    }

    #[test]
    fn cpu_tanh_matches_tanh() {
        let dev = Device::flex();
        let x = Tensor::<1>::from_floats([-3.0, -0.5, 0.0, 0.7, 4.0], &dev);
        let a = ops::tanh(x.clone())
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        let b = x.tanh().into_data().try_to_vec::<f32>().unwrap();
        for (p, q) in a.iter().zip(&b) {
            assert!((p - q).abs() < 1e-6);
        }
    }
}

