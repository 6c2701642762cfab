//! The 2-D convolutions of ANTs (stride 1, symmetric zero padding) on the CPU by
//! unrolling the input: forward and all three gradients as gemms, in one of two layouts.
//!
//! - [`grid`]: every tap unrolled (im2col), a few samples per gemm, output positions on
//!   the padded input's grid, so the gemms do `wp / wo` times the arithmetic needed.
//! - [`rows`]: only the kernel's columns unrolled, one sample and one kernel row per
//!   gemm, no arithmetic wasted. Faster wherever `c · kw` fills a gemm: W2's 40-channel
//!   convolutions take 0.55x the grid's time forward and 0.6-0.75x backward.
//!
//! The batch runs in parallel in a fixed number of groups, each with its own partial
//! weight gradient, summed in order: the result does not depend on the number of
//! threads. The gemms are the `gemm` crate's, as burn-flex's.
//!
//! Plain slices in and out: the tensors are `conv.rs`'s business.

mod grid;
mod rows;

use rayon::prelude::*;

/// One convolution: input `[n, c, h, w]`, weight `[o, c, kh, kw]`, stride 1, `pad`
/// zeros on both sides of each axis; output `[n, o, ho, wo]`.
#[derive(Clone, Debug)]
pub struct ConvShape {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub kh: usize,
    pub kw: usize,
    pub pad: [usize; 2],
}

/// The gradients asked for: the input's `[n, c, h, w]`, the weight's `[o, c, kh, kw]`
/// and the bias's `[o]`, each row-major.
#[derive(Debug, Default)]
pub struct ConvGradients {
    pub x: Option<Vec<f32>>,
    pub weight: Option<Vec<f32>>,
    pub bias: Option<Vec<f32>>,
}

/// Groups of samples run in parallel, whatever the number of threads.
const GROUPS: usize = 16;

/// How a convolution is unrolled, with the weight as its gemms read it.
enum Unrolled<'a> {
    /// [`grid`]: the weight as given, `[o, c·kh·kw]`.
    Grid(&'a [f32]),
    /// [`rows`]: the weight as `kh` matrices `[o, c·kw]`.
    Rows(Vec<f32>),
}

impl ConvShape {
    fn hp(&self) -> usize {
        self.h + 2 * self.pad[0]
    }

    fn wp(&self) -> usize {
        self.w + 2 * self.pad[1]
    }

    /// Output height and width.
    pub fn out_hw(&self) -> (usize, usize) {
        (self.hp() + 1 - self.kh, self.wp() + 1 - self.kw)
    }

    /// Whether the kernel fits the padded input (and is not empty).
    pub fn valid(&self) -> bool {
        self.hp() >= self.kh && self.wp() >= self.kw && self.kh * self.kw > 0
    }

    /// Samples per group: [`GROUPS`] groups at most, each a whole number of
    /// [`grid`]'s chunks.
    fn group(&self) -> usize {
        let per = self.chunk();
        self.n.div_ceil(per).div_ceil(GROUPS).max(1) * per
    }

    /// The layout for this shape, as measured (one thread, batch 512, W2's and the
    /// presets' shapes): [`rows`] where its per-sample gemms are big enough, that is an
    /// output plane of 32 positions or more and `c · kw` of 16 or more, or a single input
    /// channel (its weight gradient: 0.65x the grid's time on MNIST's first convolution);
    /// [`grid`] otherwise (at best even on 4x4 output planes; 1.5x the time for the weight
    /// gradient of a 3x3 kernel on 3 channels).
    fn unrolled<'a>(&self, weight: &'a [f32]) -> Unrolled<'a> {
        let (ho, wo) = self.out_hw();
        if (self.c == 1 || self.c * self.kw >= 16) && ho * wo >= 32 {
            Unrolled::Rows(self.weight_by_rows(weight))
        } else {
            Unrolled::Grid(weight)
        }
    }

    /// Samples `start..start + nb` with their padding: `x` itself when there is none.
    fn padded<'a>(&self, x: &'a [f32], start: usize, nb: usize, buf: &'a mut Vec<f32>) -> &'a [f32] {
        let plane = self.h * self.w;
        let planes = &x[start * self.c * plane..(start + nb) * self.c * plane];
        if self.pad == [0, 0] {
            return planes;
        }
        let (hp, wp, [ph, pw]) = (self.hp(), self.wp(), self.pad);
        buf.clear();
        buf.resize(nb * self.c * hp * wp, 0.0);
        for (dst, src) in buf.chunks_exact_mut(hp * wp).zip(planes.chunks_exact(plane)) {
            for (y, row) in src.chunks_exact(self.w).enumerate() {
                dst[(y + ph) * wp + pw..][..self.w].copy_from_slice(row);
            }
        }
        buf
    }

    /// Padded planes `dxp` cropped to the input's planes `dx`.
    fn crop(&self, dxp: &[f32], dx: &mut [f32]) {
        let wp = self.wp();
        for (d, p) in dx.chunks_exact_mut(self.h * self.w).zip(dxp.chunks_exact(self.hp() * wp)) {
            for (y, row) in d.chunks_exact_mut(self.w).enumerate() {
                row.copy_from_slice(&p[(y + self.pad[0]) * wp + self.pad[1]..][..self.w]);
            }
        }
    }
}

/// A matrix inside a slice: element (i, j) at `i · row_stride + j · col_stride`.
#[derive(Clone, Copy)]
struct Mat<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Mat<'a> {
    fn row_major(data: &'a [f32], rows: usize, cols: usize) -> Self {
        Mat { data, rows, cols, row_stride: cols, col_stride: 1 }
    }

    fn t(self) -> Self {
        Mat {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every element lies inside `data`.
    fn fits(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride < self.data.len()
    }
}

/// `dst = a · b` (row-major `[a.rows, b.cols]`), or `dst += a · b` when `accumulate`;
/// on the calling thread (the chunks are what runs in parallel).
fn gemm(dst: &mut [f32], a: Mat, b: Mat, accumulate: bool) {
    gemm_strided(dst, [b.cols, 1], a, b, accumulate)
}

/// [`gemm`] into a destination with strides `[row, column]`.
fn gemm_strided(dst: &mut [f32], [rs, cs]: [usize; 2], a: Mat, b: Mat, accumulate: bool) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let d = Mat { data: dst, rows: m, cols: n, row_stride: rs, col_stride: cs };
    assert!(b.rows == k && d.fits() && a.fits() && b.fits());
    // SAFETY: the assert keeps every index of the three matrices inside its slice, and
    // `dst` is borrowed mutably, so it aliases neither operand.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            cs as isize,
            rs as isize,
            accumulate,
            a.data.as_ptr(),
            a.col_stride as isize,
            a.row_stride as isize,
            b.data.as_ptr(),
            b.col_stride as isize,
            b.row_stride as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Scratch space of one group of samples.
#[derive(Default)]
struct Scratch {
    padded: Vec<f32>,
    cols: Vec<f32>,
    grid: Vec<f32>,
    folded: Vec<f32>,
}

thread_local! {
    /// Each thread's scratch, kept between calls: a step makes many convolutions of the
    /// same shapes, and fresh buffers cost their zeroing (16 MiB a call at batch 512).
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// `f` with this thread's scratch space.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with_borrow_mut(f)
}

/// `v` at length `len`; what it held before is left in it (every user overwrites it).
fn sized(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    v.resize(len, 0.0);
    &mut v[..len]
}

/// The convolution of `x` by `weight` plus `bias`, `[n, o, ho, wo]`.
pub fn conv2d(s: &ConvShape, x: &[f32], weight: &[f32], bias: &[f32]) -> Vec<f32> {
    assert!(s.valid() && x.len() == s.n * s.c * s.h * s.w && weight.len() == s.o * s.taps());
    assert_eq!(bias.len(), s.o);
    let (ho, wo) = s.out_hw();
    let (l, group, unrolled) = (ho * wo, s.group(), s.unrolled(weight));
    let mut out = vec![0f32; s.n * s.o * l];
    out.par_chunks_mut(group * s.o * l).enumerate().for_each(|(gi, out)| {
        with_scratch(|sc| match &unrolled {
            Unrolled::Grid(w) => grid::forward(s, x, w, bias, gi * group, out, sc),
            Unrolled::Rows(w) => rows::forward(s, x, w, bias, gi * group, out, sc),
        })
    });
    out
}

/// The gradients of [`conv2d`] for the output gradient `grad`, each only where `need`
/// ([input, weight, bias]) asks for it.
pub fn conv2d_grads(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    grad: &[f32],
    [need_x, need_w, need_b]: [bool; 3],
) -> ConvGradients {
    assert!(s.valid() && x.len() == s.n * s.c * s.h * s.w && weight.len() == s.o * s.taps());
    let (ho, wo) = s.out_hw();
    assert_eq!(grad.len(), s.n * s.o * ho * wo);
    let group = s.group();
    let mut dx = need_x.then(|| vec![0f32; x.len()]);
    let mut dw = None;
    if need_x || need_w {
        let unrolled = s.unrolled(weight);
        // Each group's slice of the input's gradient, if asked.
        let dx_parts: Vec<Option<&mut [f32]>> = match dx.as_deref_mut() {
            Some(dx) => dx.chunks_mut(group * s.c * s.h * s.w).map(Some).collect(),
            None => (0..s.n.div_ceil(group)).map(|_| None).collect(),
        };
        let partials: Vec<Option<Vec<f32>>> = dx_parts
            .into_par_iter()
            .enumerate()
            .map(|(gi, dx)| {
                let samples = (gi * group, group);
                with_scratch(|sc| match &unrolled {
                    Unrolled::Grid(w) => grid::grads(s, (x, w, grad), samples, dx, need_w, sc),
                    Unrolled::Rows(w) => rows::grads(s, (x, w, grad), samples, dx, need_w, sc),
                })
            })
            .collect();
        // The groups' weight gradients, summed in order, in the layout's arrangement.
        let sum = partials.into_iter().flatten().reduce(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
            a
        });
        dw = need_w.then(|| match (sum, &unrolled) {
            (None, _) => vec![0f32; weight.len()],
            (Some(w), Unrolled::Grid(_)) => w,
            (Some(w), Unrolled::Rows(_)) => s.weight_from_rows(&w),
        });
    }
    ConvGradients { x: dx, weight: dw, bias: need_b.then(|| bias_grad(s, grad)) }
}

/// The bias's gradient: each output channel's gradient summed over samples and positions.
fn bias_grad(s: &ConvShape, grad: &[f32]) -> Vec<f32> {
    let (ho, wo) = s.out_hw();
    let l = ho * wo;
    (0..s.o)
        .into_par_iter()
        .map(|oc| (0..s.n).map(|b| lane_sum(&grad[(b * s.o + oc) * l..][..l])).sum::<f32>())
        .collect()
}

/// A sum in 16 lanes (which vectorises), then across them.
fn lane_sum(v: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let chunks = v.chunks_exact(16);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, x) in lanes.iter_mut().zip(c) {
            *a += x;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::{ConvShape, Unrolled, conv2d, conv2d_grads};

    /// The output and the three gradients are the same bit for bit on one thread and on
    /// four, in both layouts: groups follow the shapes, and the groups' partial weight
    /// gradients are summed in order (a run's results do not depend on the machine).
    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        // 4 channels of 5x5 taps are unrolled by rows, 2 on the grid.
        for (c, by_rows) in [(4, true), (2, false)] {
            let s = ConvShape { n: 131, c, h: 12, w: 12, o: 6, kh: 5, kw: 5, pad: [2, 2] };
            let (ho, wo) = s.out_hw();
            let data = |n: usize, k: usize| -> Vec<f32> {
                (0..n).map(|i| ((i * k + 11) % 23) as f32 / 11.0 - 1.0).collect()
            };
            let x = data(s.n * s.c * s.h * s.w, 37);
            let w = data(s.o * s.c * s.kh * s.kw, 5);
            let g = data(s.n * s.o * ho * wo, 13);
            assert_eq!(matches!(s.unrolled(&w), Unrolled::Rows(_)), by_rows);
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    let out = conv2d(&s, &x, &w, &[0.5; 6]);
                    let grads = conv2d_grads(&s, &x, &w, &g, [true; 3]);
                    (out, grads.x.unwrap(), grads.weight.unwrap(), grads.bias.unwrap())
                })
            };
            assert!(s.n.div_ceil(s.group()) > 1, "several groups");
            assert_eq!(run(1), run(4), "{c} channels");
        }
    }
}
