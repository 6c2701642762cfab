//! Training-time augmentation of images (the paper's CIFAR-10 preprocessing): zero
//! padding, a random crop back to the original size, and a random horizontal flip.
//! Seeded and deterministic: the n-th batch drawn gets the n-th draw of the generator.

use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use crate::options::Augment;

/// Host copy of the (normalised) training images plus the generator for augmentation.
#[derive(Debug)]
pub struct Augmenter {
    x: Vec<f32>,
    c: usize,
    h: usize,
    w: usize,
    pad: usize,
    rng: Mutex<ChaCha8Rng>,
}

impl Augmenter {
    /// `x`: row-major `[N,C,H,W]` images (already normalised; padding adds zeros, i.e.
    /// the mean after mean subtraction).
    pub fn new(x: Vec<f32>, c: usize, h: usize, w: usize, pad: usize, seed: u64) -> Self {
        Augmenter {
            x,
            c,
            h,
            w,
            pad,
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(seed)),
        }
    }

    /// Position in the random stream (saved by checkpoints).
    pub fn stream_pos(&self) -> u128 {
        self.rng.lock().expect("augmenter lock").get_word_pos()
    }

    /// Continue the random stream from `pos` (a value of [`Augmenter::stream_pos`]).
    pub fn set_stream_pos(&self, pos: u128) {
        self.rng.lock().expect("augmenter lock").set_word_pos(pos);
    }

    /// Augmented copies of samples `idx`, row-major `[idx.len(),C,H,W]`.
    pub fn batch(&self, idx: &[usize]) -> Vec<f32> {
        let (c, h, w, p) = (self.c, self.h, self.w, self.pad as isize);
        let per = c * h * w;
        let mut out = vec![0f32; idx.len() * per];
        let mut rng = self.rng.lock().expect("augmenter lock");
        for (b, &i) in idx.iter().enumerate() {
            // offset of the crop in padded coordinates, relative to the original image
            let dy = rng.random_range(0..=2 * p as i64) as isize - p;
            let dx = rng.random_range(0..=2 * p as i64) as isize - p;
            let flip = rng.random::<bool>();
            let src = &self.x[i * per..(i + 1) * per];
            let dst = &mut out[b * per..(b + 1) * per];
            for ch in 0..c {
                for y in 0..h {
                    let sy = y as isize + dy;
                    if sy < 0 || sy >= h as isize {
                        continue; // zero padding
                    }
                    for xo in 0..w {
                        let xs = if flip { w - 1 - xo } else { xo } as isize + dx;
                        if xs < 0 || xs >= w as isize {
                            continue;
                        }
                        dst[(ch * h + y) * w + xo] = src[(ch * h + sy as usize) * w + xs as usize];
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crops_and_flips_preserve_content_and_are_seeded() {
        // one 1x4x4 image with distinct values
        let img: Vec<f32> = (1..=16).map(|v| v as f32).collect();
        let a = Augmenter::new(img.clone(), 1, 4, 4, 1, 7);
        let b = Augmenter::new(img.clone(), 1, 4, 4, 1, 7);
        let mut differs = false;
        for _ in 0..20 {
            let (x, y) = (a.batch(&[0]), b.batch(&[0]));
            assert_eq!(x, y, "same seed, same draws");
            // every value is zero padding or a pixel of the image; at most one row and one
            // column are padding
            assert!(x.iter().all(|v| *v == 0.0 || img.contains(v)));
            assert!(x.iter().filter(|v| **v != 0.0).count() >= 9);
            differs |= x != img;
        }
        assert!(differs, "augmentation changes some batches");
        // without padding, a flip is the only change possible
        let c = Augmenter::new(img.clone(), 1, 4, 4, 0, 1);
        for _ in 0..10 {
            let x = c.batch(&[0]);
            let flipped: Vec<f32> = img
                .chunks(4)
                .flat_map(|r| r.iter().rev().copied().collect::<Vec<_>>())
                .collect();
            assert!(x == img || x == flipped);
        }
    }
}
