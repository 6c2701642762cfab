//! Adam over all of a module's parameters at once.
//!
//! burn's `ModuleOptimizer` updates one parameter tensor at a time: a dozen tensor ops
//! each, which on LibTorch (and on a GPU, as kernel launches) cost more than the
//! arithmetic for the small tensors of an ANT. This one does what PyTorch's `foreach`
//! Adam does: the gradients are laid end to end in one vector, the moments live in two
//! such vectors, and the update is one sequence of ops on them; each parameter then takes
//! its slice. The arithmetic per element is burn's, op for op, so the weights it gives
//! are bit for bit those of burn's Adam.
//!
//! One optimiser serves one module whose parameters do not change while it trains: the
//! layout (which parameters, in visiting order) is fixed by the first step. A parameter
//! of the layout that has no gradient at a later step is given a zero gradient (burn
//! would skip it; in an ANT every trained parameter reaches the loss).

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::backend::DispatchDevice;
use burn::prelude::*;

use crate::modules::to_vec;

/// Adam's settings (PyTorch's defaults; burn's epsilon default is 1e-5, not PyTorch's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    pub beta_1: f32,
    pub beta_2: f32,
    pub epsilon: f32,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-8,
        }
    }
}

/// Adam with PyTorch's settings.
pub fn adam() -> AdamConfig {
    AdamConfig::default()
}

impl AdamConfig {
    /// An optimiser before its first step.
    pub fn init(self) -> Adam {
        Adam {
            config: self,
            moments: Moments::None,
        }
    }
}

/// Adam's state between steps.
pub struct Adam {
    config: AdamConfig,
    moments: Moments,
}

/// For each float parameter in visiting order, its element count if it is trained
/// (`None`: it had no gradient at the first step, so it is left as it is).
type Layout = Vec<Option<usize>>;

/// Elements per group of parameters updated together on burn-flex (256 KiB of f32): large
/// enough that small tensors (biases, routers) share their ops, small enough that a
/// group's dozen passes stay in a core's L2 cache. A larger tensor is a group of its own.
/// On LibTorch, whose per-op cost is higher (on a GPU, a kernel launch), all parameters
/// form one group.
const GROUP_FLOATS: usize = 1 << 16;

/// The most elements per group on `device`.
fn group_limit(device: &Device) -> usize {
    match device.as_dispatch().clone().inner() {
        DispatchDevice::Flex(_) => GROUP_FLOATS,
        _ => usize::MAX,
    }
}

enum Moments {
    /// Before the first step.
    None,
    /// Read from a checkpoint (the moments end to end, in the layout's order), put on
    /// the parameters' device at the next step.
    Host {
        layout: Layout,
        time: usize,
        m: Vec<f32>,
        v: Vec<f32>,
    },
    /// On the parameters' device.
    Device(Box<Live>),
}

/// The moments of each group of trained parameters ([`groups`] of the layout).
struct Live {
    layout: Layout,
    time: usize,
    m: Vec<Tensor<1>>,
    v: Vec<Tensor<1>>,
}

/// Why saved optimiser state cannot be read back.
#[derive(Debug, thiserror::Error)]
#[error("Adam state: {0}")]
pub struct AdamStateError(String);

impl Adam {
    /// One step with learning rate `lr` on `module`'s parameters, given their gradients.
    pub fn step<M: Module>(&mut self, lr: f64, module: M, mut grads: GradientsParams) -> M {
        let mut gather = Gather {
            grads: &mut grads,
            flat: Vec::new(),
            layout: Vec::new(),
            known: self.layout().map(<[Option<usize>]>::to_vec),
        };
        module.visit(&mut gather);
        let (flat, layout) = (gather.flat, gather.layout);
        let Some(first) = flat.first() else {
            return module; // nothing to train
        };
        let device = first.device();
        let sizes = groups(&layout, group_limit(&device));
        let mut flat = flat.into_iter();
        let g: Vec<Tensor<1>> = sizes
            .iter()
            .map(|&(count, _)| {
                let mut part: Vec<Tensor<1>> = flat.by_ref().take(count).collect();
                match part.len() {
                    1 => part.pop().expect("one gradient"),
                    _ => Tensor::cat(part, 0),
                }
            })
            .collect();
        let delta = self
            .advance(g, layout.clone(), &device)
            .into_iter()
            .map(|d| d.mul_scalar(lr))
            .collect();
        module.map(&mut Apply {
            delta,
            layout: layout.into_iter(),
            places: sizes
                .into_iter()
                .flat_map(|(count, _)| 0..count)
                .collect::<Vec<_>>()
                .into_iter(),
            group: None,
            offset: 0,
        })
    }

    /// The layout, once the first step (or a checkpoint) set it.
    fn layout(&self) -> Option<&[Option<usize>]> {
        match &self.moments {
            Moments::None => None,
            Moments::Host { layout, .. } => Some(layout),
            Moments::Device(live) => Some(&live.layout),
        }
    }

    /// Update the moments with the groups' gradients `g` and return each group's step
    /// before the learning rate: burn's `AdaptiveMomentum::transform`, op for op.
    fn advance(&mut self, g: Vec<Tensor<1>>, layout: Layout, device: &Device) -> Vec<Tensor<1>> {
        let AdamConfig {
            beta_1: b1,
            beta_2: b2,
            epsilon,
        } = self.config;
        let (m, v, time): (Vec<_>, Vec<_>, _) = match std::mem::replace(&mut self.moments, Moments::None) {
            Moments::None => (
                g.iter().map(|g| g.clone().mul_scalar(1.0 - b1)).collect(),
                g.iter().map(|g| g.clone().square().mul_scalar(1.0 - b2)).collect(),
                1,
            ),
            prior => {
                let live = prior.on(device);
                assert_eq!(live.layout, layout, "Adam: the module's parameters changed");
                let m = live.m.into_iter().zip(&g);
                let v = live.v.into_iter().zip(&g);
                (
                    m.map(|(m, g)| m.mul_scalar(b1).add(g.clone().mul_scalar(1.0 - b1)))
                        .collect(),
                    v.map(|(v, g)| v.mul_scalar(b2).add(g.clone().square().mul_scalar(1.0 - b2)))
                        .collect(),
                    live.time + 1,
                )
            }
        };
        let t = time as i32;
        let bias_correction2_sqrt = (1.0 - b2.powi(t)).sqrt();
        let combined_factor = bias_correction2_sqrt / (1.0 - b1.powi(t));
        let steps = m
            .iter()
            .zip(&v)
            .map(|(m, v)| {
                m.clone()
                    .mul_scalar(combined_factor)
                    .div(v.clone().sqrt().add_scalar(epsilon * bias_correction2_sqrt))
            })
            .collect();
        self.moments = Moments::Device(Box::new(Live { layout, time, m, v }));
        steps
    }

    /// The state as bytes: a JSON header (step count and layout) with its length
    /// before it, then the two moment vectors as little-endian f32.
    pub fn into_bytes(&self) -> Vec<u8> {
        let (header, m, v) = match &self.moments {
            Moments::None => (Header::default(), vec![], vec![]),
            Moments::Host { layout, time, m, v } => (
                Header {
                    time: *time,
                    layout: layout.clone(),
                },
                m.clone(),
                v.clone(),
            ),
            Moments::Device(live) => {
                let host = |t: &[Tensor<1>]| t.iter().flat_map(|t| to_vec(t.clone())).collect();
                (
                    Header {
                        time: live.time,
                        layout: live.layout.clone(),
                    },
                    host(&live.m),
                    host(&live.v),
                )
            }
        };
        let json = serde_json::to_vec(&header).expect("numbers");
        let mut out = (json.len() as u64).to_le_bytes().to_vec();
        out.extend(json);
        out.extend(m.iter().chain(&v).flat_map(|f| f.to_le_bytes()));
        out
    }

    /// An optimiser that goes on from the state `bytes` ([`Adam::into_bytes`]).
    pub fn from_bytes(config: AdamConfig, bytes: &[u8]) -> Result<Adam, AdamStateError> {
        let short = || AdamStateError("truncated".into());
        let len = bytes.get(..8).ok_or_else(short)?;
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
        let json = bytes.get(8..8usize.saturating_add(len)).ok_or_else(short)?;
        let header: Header =
            serde_json::from_slice(json).map_err(|e| AdamStateError(e.to_string()))?;
        let body = &bytes[8 + len..];
        let n: usize = header.layout.iter().flatten().sum();
        if body.len() != 8 * n {
            return Err(AdamStateError(format!(
                "{} bytes of moments for {n} parameters",
                body.len()
            )));
        }
        let floats: Vec<f32> = body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        let (m, v) = floats.split_at(n);
        let moments = match header.time {
            0 => Moments::None,
            time => Moments::Host {
                layout: header.layout,
                time,
                m: m.to_vec(),
                v: v.to_vec(),
            },
        };
        Ok(Adam { config, moments })
    }
}

/// What [`Adam::into_bytes`] writes before the moments.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Header {
    time: usize,
    layout: Layout,
}

/// The trained parameters in groups of consecutive ones: (parameters, elements) per
/// group, at most `limit` elements unless one parameter alone has more.
fn groups(layout: &[Option<usize>], limit: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for n in layout.iter().flatten() {
        match out.last_mut() {
            Some((count, size)) if size.saturating_add(*n) <= limit => {
                *count += 1;
                *size += n;
            }
            _ => out.push((1, *n)),
        }
    }
    out
}

impl Moments {
    /// The moments on `device`, in groups.
    fn on(self, device: &Device) -> Live {
        match self {
            Moments::None => unreachable!("no moments before the first step"),
            Moments::Host { layout, time, m, v } => {
                let split = |x: Vec<f32>| {
                    let mut rest = x.as_slice();
                    groups(&layout, group_limit(device))
                        .into_iter()
                        .map(|(_, size)| {
                            let (head, tail) = rest.split_at(size);
                            rest = tail;
                            Tensor::<1>::from_data(TensorData::new(head.to_vec(), [size]), device)
                        })
                        .collect()
                };
                let (m, v) = (split(m), split(v));
                Live { layout, time, m, v }
            }
            Moments::Device(live) => *live,
        }
    }
}

/// Collects the gradients in visiting order, flattened.
struct Gather<'a> {
    grads: &'a mut GradientsParams,
    flat: Vec<Tensor<1>>,
    layout: Layout,
    /// The layout the first step fixed.
    known: Option<Layout>,
}

impl ModuleVisitor for Gather<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let grad = self.grads.remove::<D>(param.id);
        let value = param.val();
        let n = value.shape().num_elements();
        let trained = match &self.known {
            Some(known) => known.get(self.layout.len()).copied().flatten().is_some(),
            None => grad.is_some(),
        };
        if !trained {
            self.layout.push(None);
            return;
        }
        let g = match grad {
            Some(g) => g.reshape([n]),
            // A trained parameter without a gradient this step.
            None => Tensor::zeros([n], &value.device()),
        };
        self.flat.push(g);
        self.layout.push(Some(n));
    }
}

/// Subtracts each trained parameter's slice of its group's `delta`.
struct Apply {
    delta: Vec<Tensor<1>>,
    layout: std::vec::IntoIter<Option<usize>>,
    /// For each trained parameter, its place in its group (0 starts a group).
    places: std::vec::IntoIter<usize>,
    /// The group of the last trained parameter, and where in it the next one starts.
    group: Option<usize>,
    offset: usize,
}

impl ModuleMapper for Apply {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper): (ParamId, _, _) = param.consume();
        let Some(Some(n)) = self.layout.next() else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        if self.places.next() == Some(0) {
            self.group = Some(self.group.map_or(0, |g| g + 1));
            self.offset = 0;
        }
        let d = self.delta[self.group.expect("a group")]
            .clone()
            .narrow(0, self.offset, n)
            .reshape(tensor.shape());
        self.offset += n;
        let require_grad = tensor.is_require_grad();
        let checkpointing = tensor.gradient_checkpointing_strategy();
        let mut updated = Tensor::from_inner(tensor.inner() - d);
        if let Some(s) = checkpointing {
            updated = updated.with_gradient_checkpointing_strategy(s);
        }
        if require_grad {
            updated = updated.require_grad();
        }
        Param::from_mapped_value(id, updated, mapper)
    }
}

#[cfg(test)]
mod tests {
    use burn::module::Module;
    use burn::nn::conv::{Conv2d, Conv2dConfig};
    use burn::nn::{Linear, LinearConfig};
    use burn::optim::GradientsParams;
    use burn::prelude::*;

    use super::{Adam, adam};
    use crate::modules::to_vec;

    /// Three groups: the convolution; `big`'s weight (over `GROUP_FLOATS` alone); its
    /// bias with `fc`.
    #[derive(Module, Debug)]
    struct Net {
        conv: Conv2d,
        big: Linear,
        fc: Linear,
        /// Never used in the loss: it has no gradient.
        unused: Linear,
    }

    fn net(device: &Device) -> Net {
        Net {
            conv: Conv2dConfig::new([1, 3], [3, 3]).init(device),
            big: LinearConfig::new(3 * 4 * 4, 1400).init(device),
            fc: LinearConfig::new(1400, 2).init(device),
            unused: LinearConfig::new(2, 2).init(device),
        }
    }

    fn grads(net: &Net, seed: u64, device: &Device) -> GradientsParams {
        let x = Tensor::<4>::from_data(
            TensorData::new(
                (0..2 * 36).map(|i| ((i as u64 * 7 + seed) % 11) as f32 / 5.0 - 1.0).collect(),
                [2, 1, 6, 6],
            ),
            device,
        );
        let h = net.conv.forward(x).tanh().reshape([2, 48]);
        let h = net.big.forward(h).tanh();
        let loss = net.fc.forward(h).powf_scalar(2.0).mean();
        GradientsParams::from_grads(loss.backward(), net)
    }

    fn weights(net: &Net) -> Vec<Vec<f32>> {
        vec![
            to_vec(net.conv.weight.val()),
            to_vec(net.big.weight.val()),
            to_vec(net.big.bias.as_ref().unwrap().val()),
            to_vec(net.fc.weight.val()),
            to_vec(net.fc.bias.as_ref().unwrap().val()),
            to_vec(net.unused.weight.val()),
        ]
    }

    /// The flat update gives burn's Adam's weights bit for bit, step after step, and
    /// leaves a parameter without a gradient as it was.
    #[test]
    fn same_weights_as_burns_adam() {
        let device = Device::flex().autodiff();
        let start = net(&device);
        let mut burns = burn::optim::AdamConfig::new().with_epsilon(1e-8).init();
        let mut ours = adam().init();
        let (mut a, mut b) = (start.clone(), start.clone());
        for step in 0..5 {
            let lr = if step < 3 { 1e-2 } else { 1e-3 };
            a = burns.step(lr, a.clone(), grads(&a, step, &device));
            b = ours.step(lr, b.clone(), grads(&b, step, &device));
            assert_eq!(weights(&a), weights(&b), "step {step}");
        }
        assert_eq!(super::groups(ours.layout().unwrap(), super::GROUP_FLOATS).len(), 3);
        for i in 0..5 {
            assert_ne!(weights(&b)[i], weights(&start)[i], "parameter {i}");
        }
        assert_eq!(weights(&b)[5], weights(&start)[5]);
    }

    /// Saved after two steps and read back, the optimiser goes on as if never stopped.
    #[test]
    fn state_round_trips() {
        let device = Device::flex().autodiff();
        let mut ours = adam().init();
        let mut a = net(&device);
        for step in 0..2 {
            a = ours.step(1e-2, a.clone(), grads(&a, step, &device));
        }
        let mut back = Adam::from_bytes(adam(), &ours.into_bytes()).unwrap();
        let b = back.step(1e-2, a.clone(), grads(&a, 2, &device));
        let a = ours.step(1e-2, a.clone(), grads(&a, 2, &device));
        assert_eq!(weights(&a), weights(&b));
        assert!(Adam::from_bytes(adam(), &ours.into_bytes()[..20]).is_err());
        assert!(Adam::from_bytes(adam(), b"short").is_err());
    }
}
