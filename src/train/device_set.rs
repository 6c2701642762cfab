//! Samples on the training device: normalised inputs and targets, batched (and, for
//! images with augmentation, augmented) per step. On a GPU the images are augmented on
//! the device from draws uploaded once an epoch; on the CPU (`cpu`, `torch`) on the host,
//! which measured faster there. Both give the same pixels for the same draws. On the
//! CPU, images held as bytes stay bytes until a batch needs them ([`Inputs`]).

use std::sync::Arc;

use burn::prelude::*;

use super::augment::Augmenter;
pub use super::inputs::Inputs;
use super::inputs::HostImages;
use super::optimise::{Batch, EpochOnDevice};
use crate::device::is_gpu;
use crate::loss::Target;
use crate::data::{Dataset, Targets, Values};
use crate::modules::{Repr, index_tensor};
use crate::normalise::{Normalisation, standardise};
use crate::spec::Shape;

/// Samples on a device: inputs (normalised) and targets.
#[derive(Clone, Debug)]
pub struct DeviceSet {
    pub x: Inputs,
    pub y: Target,
    pub n: usize,
    /// When set, training batches are augmented copies drawn from here.
    pub augment: Option<Arc<Augmenter>>,
}

impl DeviceSet {
    pub fn new(x: Repr, y: Target, n: usize) -> Self {
        DeviceSet::of_inputs(Inputs::Device(Box::new(x)), y, n)
    }

    /// A set of the first `n` rows of `x` and `y` (`y` holds those rows).
    pub fn of_inputs(x: Inputs, y: Target, n: usize) -> Self {
        DeviceSet {
            x,
            y,
            n,
            augment: None,
        }
    }

    /// The epoch's `order` on the device, with the augmentation draws of its rows where
    /// images are augmented on the device (a GPU: LibTorch's copy from the host waits for
    /// it, so one upload an epoch rather than a batch of images a step; on `torch`, the
    /// device crop took a 5,000-image mnist-c run from 44 to 52 s).
    pub fn upload_epoch(&self, order: &[usize]) -> EpochOnDevice {
        let device = self.y.device();
        let shifts = match (&self.augment, &self.x) {
            (Some(a), Inputs::Device(r)) if is_gpu(&device) && matches!(**r, Repr::Image(_)) => {
                let v: Vec<i64> = a
                    .draw(order.len())
                    .iter()
                    .flat_map(|s| [s.dy, s.dx, i64::from(s.flip)])
                    .collect();
                Some(Tensor::from_data(TensorData::new(v, [order.len(), 3]), &device))
            }
            _ => None,
        };
        EpochOnDevice {
            order: index_tensor(order, &device),
            shifts,
        }
    }

    /// The training batch `batch` (augmented when the set says so: on the device when
    /// the batch carries its draws, else drawn and cropped on the host).
    pub fn batch(&self, batch: &Batch) -> DeviceSet {
        let (rows, i) = (batch.rows, batch.on_device.clone());
        let x = match (&self.augment, &self.x, &batch.shifts) {
            (Some(a), Inputs::Device(r), Some(s)) => match &**r {
                Repr::Image(t) => {
                    Repr::Image(crop(t.clone().select(0, i.clone()), s.clone(), a.pad(), a.fill()))
                }
                flat => flat.select(i.clone()),
            },
            (Some(a), _, None) => {
                let [c, h, w] = a.shape();
                Repr::Image(Tensor::from_data(
                    TensorData::new(a.batch(rows), [rows.len(), c, h, w]),
                    &self.y.device(),
                ))
            }
            _ => self.x.select(rows, i.clone()),
        };
        DeviceSet::new(x, self.y.select(i), rows.len())
    }
}

/// Normalise `data` and put it on `device` (its samples normalised where they are and
/// handed over: no copy on the CPU). Images held as bytes stay bytes on the host but on
/// a GPU, where a batch's upload would wait for the device at every step.
pub fn to_device(data: Dataset, norm: &Normalisation, input: Shape, device: &Device) -> DeviceSet {
    let n = data.len();
    let x = match (data.x, input) {
        (Values::Bytes(bytes), Shape::Image { c, h, w }) if !is_gpu(device) => {
            Inputs::HostBytes(Arc::new(HostImages::new(bytes, [c, h, w], norm, device)))
        }
        (values, _) => {
            let mut x = values.into_f32();
            norm.apply_x_in_place(&mut x, input);
            Inputs::Device(Box::new(Repr::from_vec(x, n, input, device)))
        }
    };
    let y = match &data.targets {
        Targets::Classes { labels, .. } => {
            let v: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
            Target::Classes(Tensor::from_data(TensorData::new(v, [n, 1]), device))
        }
        Targets::Values { values, dim } => {
            let v = standardise(values, *dim, &norm.y_mean, &norm.y_std);
            Target::Values(Tensor::from_data(TensorData::new(v, [n, *dim]), device))
        }
    };
    DeviceSet::of_inputs(x, y, n)
}

/// `x` (`[B,C,H,W]`) padded by `pad` pixels of `fill[channel]` and cropped back to
/// `H×W` at each image's offset, mirrored where its flip is set: [`Augmenter::apply`]
/// on the device, from `shifts` (`[B,3]`: dy, dx, flip). Only gathers and fills, so the
/// pixels are the host's exactly.
fn crop(x: Tensor<4>, shifts: Tensor<2, Int>, pad: usize, fill: &[f32]) -> Tensor<4> {
    let [b, c, h, w] = x.dims();
    let (hp, wp, p) = (h + 2 * pad, w + 2 * pad, pad as i64);
    let device = x.device();
    // The padded images: the fill (made on the device, no upload), the images inside.
    let channels = fill.iter().map(|&f| Tensor::<4>::full([b, 1, hp, wp], f, &device));
    let padded = Tensor::cat(channels.collect(), 1)
        .slice_assign([0..b, 0..c, pad..pad + h, pad..pad + w], x);
    // Pixel (y, x) of image i comes from padded row y + dy + p and column x' + dx + p,
    // where x' = x, or w − 1 − x when mirrored.
    let part = |k: usize| shifts.clone().narrow(1, k, 1).reshape([b, 1, 1]);
    let (dy, dx, flip) = (part(0), part(1), part(2));
    let ys = Tensor::<1, Int>::arange(0..h as i64, &device).reshape([1, h, 1]);
    let xs = Tensor::<1, Int>::arange(0..w as i64, &device).reshape([1, 1, w]);
    let mirrored = xs.clone().mul_scalar(-2).add_scalar(w as i64 - 1);
    let cols = xs + flip * mirrored + dx + p;
    let at = (ys + dy + p) * (wp as i64) + cols;
    let at = at.reshape([b, 1, h * w]).expand([b, c, h * w]);
    padded.reshape([b, c, hp * wp]).gather(2, at).reshape([b, c, h, w])
}

#[cfg(test)]
mod tests {
    use burn::prelude::*;

    use super::crop;
    use crate::modules::to_vec;
    use crate::train::augment::{Augmenter, Shift};

    /// The same draws as [`Augmenter::apply`] takes, as [`crop`] takes them.
    fn shifts_tensor(shifts: &[Shift], device: &Device) -> Tensor<2, Int> {
        let v: Vec<i64> = shifts.iter().flat_map(|s| [s.dy, s.dx, i64::from(s.flip)]).collect();
        Tensor::from_data(TensorData::new(v, [shifts.len(), 3]), device)
    }

    /// The device crop gives the host's pixels for the same draws: shifts to every edge,
    /// flips, two channels with their own fill; on burn-flex and on LibTorch (and GPU 0
    /// with `ANT_TEST_CUDA`).
    #[test]
    fn device_crops_match_the_host_crops() {
        #[allow(unused_mut)]
        let mut devices = vec![Device::flex()];
        #[cfg(feature = "torch")]
        #[allow(deprecated)]
        {
            devices.push(Device::libtorch());
            if crate::env::test_cuda() {
                devices.push(Device::libtorch_cuda(0));
            }
        }
        for device in devices {
            crops_on(&device);
        }
    }

    fn crops_on(device: &Device) {
        let (n, c, h, w) = (6, 2, 5, 4);
        let img: Vec<f32> = (0..n * c * h * w).map(|v| v as f32 + 1.0).collect();
        let aug = Augmenter::new(img.clone(), [c, h, w], (2, true), vec![-1.0, -2.0], 11);
        let x = Tensor::<4>::from_data(TensorData::new(img, [n, c, h, w]), device);
        let rows = [3usize, 0, 5, 1, 1];
        for _ in 0..20 {
            let shifts = aug.draw(rows.len());
            let host = aug.apply(&rows, &shifts);
            let idx = Tensor::<1, Int>::from_data(
                TensorData::new(rows.iter().map(|&r| r as i64).collect::<Vec<_>>(), [rows.len()]),
                device,
            );
            let picked = x.clone().select(0, idx);
            let ours = crop(picked, shifts_tensor(&shifts, device), 2, aug.fill());
            assert_eq!(to_vec(ours), host, "{shifts:?}");
        }
    }
}
