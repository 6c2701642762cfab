//! Plain-data descriptions of modules (serialisable to `tree.json`).
//!
//! Every transformer, router and solver is a [`BlockSpec`]: a list of layers applied in
//! order. Burn modules are built from specs (the crate's `Block`), so a saved
//! topology is enough to rebuild the exact module skeleton before loading weights.

use serde::{Deserialize, Serialize};

/// The shape of one sample's representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Shape {
    /// Channels, height, width.
    Image { c: usize, h: usize, w: usize },
    /// A flat feature vector.
    Flat { d: usize },
}

/// The largest size (a dimension, a layer's width or parameter count, a sample's
/// scalars) a topology may state: it keeps shape arithmetic far from overflow, and real
/// models are far below it. A `tree.json` beyond it is refused when loaded.
pub(crate) const MAX_SIZE: usize = 1 << 28;

impl Shape {
    /// Whether every dimension, and the scalars per sample, are at most [`MAX_SIZE`].
    pub(crate) fn in_range(&self) -> bool {
        let dims = self.dims();
        dims.iter().all(|&d| d <= MAX_SIZE)
            && dims
                .iter()
                .try_fold(1usize, |n, &d| n.checked_mul(d))
                .is_some_and(|n| n <= MAX_SIZE)
    }
    /// Number of scalars per sample.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn numel(&self) -> usize {
        match *self {
            Shape::Image { c, h, w } => c * h * w,
            Shape::Flat { d } => d,
        }
    }
    /// Shape of one sample as a list (C,H,W or D).
    pub fn dims(&self) -> Vec<usize> {
        match *self {
            Shape::Image { c, h, w } => vec![c, h, w],
            Shape::Flat { d } => vec![d],
        }
    }
    /// From a per-sample shape list (`[C, H, W]` or `[D]`).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn from_dims(dims: &[usize]) -> Option<Shape> {
        match dims {
            [c, h, w] => Some(Shape::Image {
                c: *c,
                h: *h,
                w: *w,
            }),
            [d] => Some(Shape::Flat { d: *d }),
            _ => None,
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Image { c, h, w } => write!(f, "{c}x{h}x{w}"),
            Shape::Flat { d } => write!(f, "{d}"),
        }
    }
}

/// One layer of a block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum LayerSpec {
    /// 2-D convolution, stride 1, symmetric zero padding `pad`.
    Conv {
        c_in: usize,
        c_out: usize,
        k: usize,
        pad: usize,
    },
    /// Fully connected layer (on flat input).
    Linear {
        d_in: usize,
        d_out: usize,
    },
    Relu,
    Tanh,
    /// 2x2 max pooling, stride 2 (floor).
    MaxPool2,
    /// Global average pooling: image -> flat (channels).
    Gap,
    /// Image -> flat (C*H*W), row-major as PyTorch's `view`.
    Flatten,
}

impl LayerSpec {
    /// Whether every size the layer states, and its parameter count, are at most
    /// [`MAX_SIZE`].
    pub(crate) fn in_range(&self) -> bool {
        let sizes = match *self {
            LayerSpec::Conv {
                c_in,
                c_out,
                k,
                pad,
            } => vec![c_in, c_out, k, pad],
            LayerSpec::Linear { d_in, d_out } => vec![d_in, d_out],
            _ => vec![],
        };
        let params = sizes.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        sizes.iter().all(|&d| d <= MAX_SIZE) && params.is_some_and(|n| n <= MAX_SIZE)
    }

    /// Output shape, or `None` if the layer cannot take this input (or the output is
    /// beyond `MAX_SIZE`).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn out_shape(&self, s: Shape) -> Option<Shape> {
        self.out_shape_unbounded(s).filter(Shape::in_range)
    }

    /// Sizes in range (the topology checks them first) cannot overflow here.
    fn out_shape_unbounded(&self, s: Shape) -> Option<Shape> {
        match (self, s) {
            (
                LayerSpec::Conv {
                    c_in,
                    c_out,
                    k,
                    pad,
                },
                Shape::Image { c, h, w },
            ) => {
                let (hp, wp) = (h + 2 * pad, w + 2 * pad);
                (c == *c_in && hp >= *k && wp >= *k).then(|| Shape::Image {
                    c: *c_out,
                    h: hp - k + 1,
                    w: wp - k + 1,
                })
            }
            (LayerSpec::Linear { d_in, d_out }, Shape::Flat { d }) => {
                (d == *d_in).then_some(Shape::Flat { d: *d_out })
            }
            (LayerSpec::Relu | LayerSpec::Tanh, s) => Some(s),
            (LayerSpec::MaxPool2, Shape::Image { c, h, w }) => {
                (h >= 2 && w >= 2).then_some(Shape::Image {
                    c,
                    h: h / 2,
                    w: w / 2,
                })
            }
            (LayerSpec::Gap, Shape::Image { c, .. }) => Some(Shape::Flat { d: c }),
            (LayerSpec::Flatten, s @ Shape::Image { .. }) => Some(Shape::Flat { d: s.numel() }),
            _ => None,
        }
    }

    /// Trainable parameters (weights + biases).
    pub fn num_params(&self) -> usize {
        match *self {
            LayerSpec::Conv { c_in, c_out, k, .. } => c_out * c_in * k * k + c_out,
            LayerSpec::Linear { d_in, d_out } => d_in * d_out + d_out,
            _ => 0,
        }
    }

    /// FLOPs for one sample on input shape `s` (2 per multiply-add; 1 per element for
    /// activations, pooling comparisons and averaging).
    pub fn flops(&self, s: Shape) -> u64 {
        let out = match self.out_shape(s) {
            Some(o) => o,
            None => return 0,
        };
        match *self {
            LayerSpec::Conv { c_in, k, .. } => 2 * (out.numel() * c_in * k * k) as u64,
            LayerSpec::Linear { d_in, d_out } => 2 * (d_in * d_out) as u64,
            LayerSpec::Relu | LayerSpec::Tanh => s.numel() as u64,
            LayerSpec::MaxPool2 => 4 * out.numel() as u64,
            LayerSpec::Gap => s.numel() as u64,
            LayerSpec::Flatten => 0,
        }
    }
}

/// A module: layers applied in order. An empty block is the identity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSpec {
    pub layers: Vec<LayerSpec>,
}

impl BlockSpec {
    #[cfg(feature = "internals")]
    pub fn identity() -> Self {
        Self { layers: vec![] }
    }
    pub fn new(layers: Vec<LayerSpec>) -> Self {
        Self { layers }
    }
    pub(crate) fn is_identity(&self) -> bool {
        self.layers.is_empty()
    }
    /// Output shape for `input`, or `None` if some layer cannot apply.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn out_shape(&self, input: Shape) -> Option<Shape> {
        self.layers.iter().try_fold(input, |s, l| l.out_shape(s))
    }
    pub fn num_params(&self) -> usize {
        self.layers.iter().map(LayerSpec::num_params).sum()
    }
    /// FLOPs per sample on `input` (see [`LayerSpec::flops`]).
    pub fn flops(&self, input: Shape) -> u64 {
        let mut s = input;
        let mut total = 0;
        for l in &self.layers {
            total += l.flops(s);
            match l.out_shape(s) {
                Some(o) => s = o,
                None => return total,
            }
        }
        total
    }
    /// Whether the block ends in a 2x2 max pool (a downsampling transformer).
    pub(crate) fn downsamples(&self) -> bool {
        self.layers.iter().any(|l| matches!(l, LayerSpec::MaxPool2))
    }
    /// A short human label, e.g. `conv5-40+relu+pool`.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn label(&self) -> String {
        if self.layers.is_empty() {
            return "identity".into();
        }
        self.layers
            .iter()
            .map(|l| match l {
                LayerSpec::Conv { c_out, k, .. } => format!("conv{k}-{c_out}"),
                LayerSpec::Linear { d_out, .. } => format!("fc{d_out}"),
                LayerSpec::Relu => "relu".into(),
                LayerSpec::Tanh => "tanh".into(),
                LayerSpec::MaxPool2 => "pool".into(),
                LayerSpec::Gap => "gap".into(),
                LayerSpec::Flatten => "flat".into(),
            })
            .collect::<Vec<_>>()
            .join("+")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_shapes_and_params() {
        let s = Shape::Image { c: 1, h: 28, w: 28 };
        let b = BlockSpec::new(vec![
            LayerSpec::Conv {
                c_in: 1,
                c_out: 40,
                k: 5,
                pad: 0,
            },
            LayerSpec::Relu,
            LayerSpec::MaxPool2,
        ]);
        assert_eq!(
            b.out_shape(s),
            Some(Shape::Image {
                c: 40,
                h: 12,
                w: 12
            })
        );
        assert_eq!(b.num_params(), 40 * 25 + 40);
        // kernel larger than the input: not applicable
        let small = Shape::Image { c: 1, h: 4, w: 4 };
        assert_eq!(b.out_shape(small), None);
    }

    #[test]
    fn spec_json_round_trip() {
        let b = BlockSpec::new(vec![
            LayerSpec::Linear {
                d_in: 21,
                d_out: 256,
            },
            LayerSpec::Tanh,
        ]);
        let j = serde_json::to_string(&b).unwrap();
        let back: BlockSpec = serde_json::from_str(&j).unwrap();
        assert_eq!(b, back);
    }
}
