//! Training-time augmentation of images: padding, a random crop back to the original
//! size, and for CIFAR-10 a random horizontal flip ([`Augment`]). The padding is black
//! (raw value 0, normalised), as the authors' code pads before it normalises.
//! Seeded and deterministic: the n-th batch drawn gets the n-th draw of the generator.

use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use crate::options::Augment;

/// One image's draw: the crop's offset from the original position, in pixels (each within
/// the padding), and whether the crop is mirrored left to right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shift {
    pub dy: i64,
    pub dx: i64,
    pub flip: bool,
}

/// Host copy of the (normalised) training images plus the generator for augmentation.
#[derive(Debug)]
pub struct Augmenter {
    x: Vec<f32>,
    c: usize,
    h: usize,
    w: usize,
    pad: usize,
    flip: bool,
    /// Per channel, the value padding takes.
    fill: Vec<f32>,
    rng: Mutex<ChaCha8Rng>,
}

impl Augmenter {
    /// `x`: row-major `[N,C,H,W]` images, already normalised; `[c, h, w]` their shape;
    /// `pad` pixels of padding filled with `fill[channel]`; `flip`: random left-right
    /// flips too.
    pub fn new(
        x: Vec<f32>,
        [c, h, w]: [usize; 3],
        (pad, flip): (usize, bool),
        fill: Vec<f32>,
        seed: u64,
    ) -> Self {
        assert_eq!(fill.len(), c, "one padding value per channel");
        Augmenter {
            x,
            c,
            h,
            w,
            pad,
            flip,
            fill,
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

    /// Pixels of padding on each side.
    pub fn pad(&self) -> usize {
        self.pad
    }

    /// Per channel, the value padding takes.
    pub fn fill(&self) -> &[f32] {
        &self.fill
    }

    /// The next `n` draws of the stream, one per image.
    pub fn draw(&self, n: usize) -> Vec<Shift> {
        let p = self.pad as i64;
        let mut rng = self.rng.lock().expect("augmenter lock");
        (0..n)
            .map(|_| {
                let dy = rng.random_range(0..=2 * p) - p;
                let dx = rng.random_range(0..=2 * p) - p;
                let flip = self.flip && rng.random::<bool>();
                Shift { dy, dx, flip }
            })
            .collect()
    }

    /// Augmented copies of samples `idx`, row-major `[idx.len(),C,H,W]` (the next
    /// `idx.len()` draws).
    pub fn batch(&self, idx: &[usize]) -> Vec<f32> {
        self.apply(idx, &self.draw(idx.len()))
    }

    /// Samples `idx` cropped (and mirrored) as `shifts` say, row-major `[idx.len(),C,H,W]`.
    pub fn apply(&self, idx: &[usize], shifts: &[Shift]) -> Vec<f32> {
        let (c, h, w) = (self.c, self.h, self.w);
        let per = c * h * w;
        let mut out = vec![0f32; idx.len() * per];
        for (b, (&i, s)) in idx.iter().zip(shifts).enumerate() {
            let (dy, dx, flip) = (s.dy as isize, s.dx as isize, s.flip);
            let src = &self.x[i * per..(i + 1) * per];
            let dst = &mut out[b * per..(b + 1) * per];
            for ch in 0..c {
                dst[ch * h * w..(ch + 1) * h * w].fill(self.fill[ch]);
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
        let a = Augmenter::new(img.clone(), [1, 4, 4], (1, true), vec![0.0], 7);
        let b = Augmenter::new(img.clone(), [1, 4, 4], (1, true), vec![0.0], 7);
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
        let c = Augmenter::new(img.clone(), [1, 4, 4], (0, true), vec![0.0], 1);
        for _ in 0..10 {
            let x = c.batch(&[0]);
            let flipped: Vec<f32> = img
                .chunks(4)
                .flat_map(|r| r.iter().rev().copied().collect::<Vec<_>>())
                .collect();
            assert!(x == img || x == flipped);
        }
    }

    #[test]
    fn a_shift_translates_without_flipping_and_pads_with_the_fill() {
        // 2 channels of 5x5 with distinct values; fill -1 and -2
        let img: Vec<f32> = (1..=50).map(|v| v as f32).collect();
        let a = Augmenter::new(img.clone(), [2, 5, 5], (2, false), vec![-1.0, -2.0], 3);
        let at = |x: &[f32], ch: usize, y: isize, xo: isize| -> f32 {
            if (0..5).contains(&y) && (0..5).contains(&xo) {
                x[ch * 25 + (y * 5 + xo) as usize]
            } else {
                [-1.0, -2.0][ch]
            }
        };
        let mut shifts = std::collections::BTreeSet::new();
        for _ in 0..60 {
            let x = a.batch(&[0]);
            // some (dy, dx) within 2 pixels maps the image onto x exactly, both channels
            let found = (-2..=2).flat_map(|dy| (-2..=2).map(move |dx| (dy, dx))).find(|&(dy, dx)| {
                (0..2).all(|ch| {
                    (0..5).all(|y| (0..5).all(|xo| x[ch * 25 + (y * 5 + xo) as usize] == at(&img, ch, y + dy, xo + dx)))
                })
            });
            shifts.insert(found.expect("every batch is a translation of the image"));
        }
        assert!(shifts.len() > 10, "the shifts vary: {shifts:?}");
    }
}
