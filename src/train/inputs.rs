//! A training set's inputs: normalised values on the device, or images kept as their
//! bytes on the host and made into normalised values a batch (or chunk) at a time, a
//! quarter of the memory (MNIST's 54,000 training images: 42 MB, not 169 MB).
//!
//! The values are the ones a whole-set normalisation gives, bit for bit: each byte
//! becomes `byte / 255`, then `(v - mean[c]) / std[c]`, as
//! [`Normalisation::apply_x_in_place`] computes them.

use std::sync::Arc;

use burn::prelude::*;

use crate::data::dataset::byte_value;
use crate::modules::Repr;
use crate::normalise::Normalisation;
use crate::spec::Shape;

/// Where a set's inputs are.
#[derive(Clone, Debug)]
pub enum Inputs {
    /// Normalised, on the device (boxed: a tensor's handle is large beside an `Arc`).
    Device(Box<Repr>),
    /// Bytes on the host, normalised when rows are asked for.
    HostBytes(Arc<HostImages>),
}

/// Images as bytes (`[N, C, H, W]`, row-major) with the normalisation they get.
#[derive(Debug)]
pub struct HostImages {
    bytes: Vec<u8>,
    shape: [usize; 3],
    mean: Vec<f32>,
    std: Vec<f32>,
    device: Device,
}

impl HostImages {
    pub fn new(bytes: Vec<u8>, shape: [usize; 3], norm: &Normalisation, device: &Device) -> Self {
        HostImages {
            bytes,
            shape,
            mean: norm.x_mean.clone(),
            std: norm.x_std.clone(),
            device: device.clone(),
        }
    }

    /// Rows `rows` of the images, normalised, on the device.
    fn rows(&self, rows: impl ExactSizeIterator<Item = usize>) -> Repr {
        let [c, h, w] = self.shape;
        let (hw, per) = (h * w, c * h * w);
        let n = rows.len();
        let mut x = Vec::with_capacity(n * per);
        for r in rows {
            let image = &self.bytes[r * per..(r + 1) * per];
            for (ch, plane) in image.chunks(hw).enumerate() {
                let (m, s) = (self.mean[ch], self.std[ch]);
                x.extend(plane.iter().map(|&b| (byte_value(b) - m) / s));
            }
        }
        Repr::from_vec(x, n, Shape::Image { c, h, w }, &self.device)
    }
}

impl Inputs {
    /// Rows `start..start + len`.
    pub fn narrow(&self, start: usize, len: usize) -> Repr {
        match self {
            Inputs::Device(r) => r.narrow(start, len),
            Inputs::HostBytes(h) => h.rows(start..start + len),
        }
    }

    /// Rows `rows` (host indices), or the same rows as `on_device` indexes them.
    pub fn select(&self, rows: &[usize], on_device: Tensor<1, Int>) -> Repr {
        match self {
            Inputs::Device(r) => r.select(on_device),
            Inputs::HostBytes(h) => h.rows(rows.iter().copied()),
        }
    }

    /// Every row (of `n`).
    pub fn all(&self, n: usize) -> Repr {
        match self {
            Inputs::Device(r) => (**r).clone(),
            Inputs::HostBytes(h) => h.rows(0..n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::to_vec;

    /// Rows made from bytes are the rows of the whole set normalised at once.
    #[test]
    fn rows_from_bytes_are_the_whole_sets_rows() {
        let (n, c, h, w) = (5, 2, 3, 4);
        let bytes: Vec<u8> = (0..n * c * h * w).map(|v| (v * 37 % 256) as u8).collect();
        let norm = Normalisation {
            x_mean: vec![0.13, 0.5],
            x_std: vec![0.3, 1.0],
            y_mean: vec![],
            y_std: vec![],
            x_spread: vec![],
            x_range: vec![],
        };
        let shape = Shape::Image { c, h, w };
        let mut all: Vec<f32> = bytes.iter().map(|&b| byte_value(b)).collect();
        norm.apply_x_in_place(&mut all, shape);
        let device = Device::flex();
        let host = Inputs::HostBytes(Arc::new(HostImages::new(bytes, [c, h, w], &norm, &device)));
        let whole = Inputs::Device(Box::new(Repr::from_vec(all, n, shape, &device)));
        let flat = |r: Repr| match r {
            Repr::Image(t) => to_vec(t),
            Repr::Flat(t) => to_vec(t),
        };
        assert_eq!(flat(host.narrow(1, 3)), flat(whole.narrow(1, 3)));
        assert_eq!(flat(host.all(n)), flat(whole.all(n)));
        let rows = [4, 0, 4, 2];
        let idx = crate::modules::index_tensor(&rows, &device);
        assert_eq!(flat(host.select(&rows, idx.clone())), flat(whole.select(&rows, idx)));
    }
}
