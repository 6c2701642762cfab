//! Training-time augmentation of images: padding, a random crop back to the original
//! size, and for CIFAR-10 a random horizontal flip ([`Augment`]). The padding is black
//! (raw value 0, normalised), as the authors' code pads before it normalises.
//! Seeded and deterministic: the n-th batch drawn gets the n-th draw of the generator.

use std::sync::Mutex;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

pub use crate::choices::Augment;

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

    /// The images' shape `[c, h, w]`.
    pub fn shape(&self) -> [usize; 3] {
        [self.c, self.h, self.w]
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
        let per = self.c * self.h * self.w;
        let mut out = vec![0f32; idx.len() * per];
        // Images in parallel: this runs between steps, while the other cores wait.
        out.par_chunks_mut(per)
            .zip(idx.par_iter().zip(shifts))
            .for_each(|(dst, (&i, s))| self.crop(&self.x[i * per..(i + 1) * per], *s, dst));
        out
    }

    /// One image `src` `[C,H,W]` cropped as `s` says into `dst`: output pixel (y, x) is
    /// source pixel (y + dy, x' + dx), x' = x or, mirrored, w − 1 − x; the fill where that
    /// falls outside. Row by row: each row's pixels inside are one run of the source's.
    fn crop(&self, src: &[f32], s: Shift, dst: &mut [f32]) {
        let (h, w) = (self.h as isize, self.w);
        let (dy, dx) = (s.dy as isize, s.dx as isize);
        // The output columns whose source column is inside, and where their run starts.
        let (lo, hi) = match s.flip {
            false => ((-dx).max(0), (w as isize - dx).min(w as isize)),
            true => (dx.max(0), (w as isize + dx).min(w as isize)),
        };
        let (lo, hi) = (lo as usize, hi.max(lo) as usize);
        let (plane_src, plane_dst) = (src.chunks_exact(self.h * w), dst.chunks_exact_mut(self.h * w));
        for ((plane_src, plane_dst), &fill) in plane_src.zip(plane_dst).zip(&self.fill) {
            for (y, row) in plane_dst.chunks_exact_mut(w).enumerate() {
                let sy = y as isize + dy;
                if sy < 0 || sy >= h || lo == hi {
                    row.fill(fill);
                    continue;
                }
                let src_row = &plane_src[sy as usize * w..][..w];
                row[..lo].fill(fill);
                row[hi..].fill(fill);
                match s.flip {
                    // x' + dx for x in lo..hi: from lo + dx on.
                    false => row[lo..hi].copy_from_slice(&src_row[(lo as isize + dx) as usize..][..hi - lo]),
                    // w − 1 − x + dx for x in lo..hi: down from w − 1 − lo + dx.
                    true => {
                        let top = (w as isize - 1 - lo as isize + dx) as usize;
                        for (d, v) in row[lo..hi].iter_mut().zip(src_row[..=top].iter().rev()) {
                            *d = *v;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crop's definition, pixel by pixel: output (y, x) is source (y + dy, x' + dx),
    /// x' = x or w − 1 − x mirrored, else the channel's fill.
    fn crop_by_pixel(img: &[f32], [c, h, w]: [usize; 3], fill: &[f32], s: Shift) -> Vec<f32> {
        let mut out = vec![0f32; c * h * w];
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    let sy = y as i64 + s.dy;
                    let sx = if s.flip { (w - 1 - x) as i64 } else { x as i64 } + s.dx;
                    let inside = (0..h as i64).contains(&sy) && (0..w as i64).contains(&sx);
                    out[(ch * h + y) * w + x] = match inside {
                        true => img[(ch * h + sy as usize) * w + sx as usize],
                        false => fill[ch],
                    };
                }
            }
        }
        out
    }

    /// Every offset within the padding, mirrored or not, on images narrower and shorter
    /// than the padding (whole rows of fill) and not square: the pixels of the definition.
    #[test]
    fn crops_are_the_pixel_by_pixel_definition() {
        for ([c, h, w], pad) in [([2, 5, 4], 2), ([1, 3, 2], 4), ([3, 2, 6], 1)] {
            let n = c * h * w;
            let imgs: Vec<f32> = (0..2 * n).map(|v| v as f32 + 1.0).collect();
            let fill: Vec<f32> = (0..c).map(|ch| -(ch as f32) - 1.0).collect();
            let a = Augmenter::new(imgs.clone(), [c, h, w], (pad, true), fill.clone(), 0);
            let p = pad as i64;
            for (dy, dx, flip) in (-p..=p).flat_map(|dy| (-p..=p).flat_map(move |dx| [(dy, dx, false), (dy, dx, true)])) {
                let s = Shift { dy, dx, flip };
                let got = a.apply(&[1, 0], &[s, s]);
                let want = [&imgs[n..], &imgs[..n]].map(|img| crop_by_pixel(img, [c, h, w], &fill, s)).concat();
                assert_eq!(got, want, "{:?} {s:?}", [c, h, w]);
            }
        }
    }

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
