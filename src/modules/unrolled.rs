//! The 2-D convolutions of ANTs (stride 1, symmetric zero padding) on the CPU by
//! unrolling the input (im2col) a few samples at a time: forward and all three
//! gradients as gemms.
//!
//! Positions are laid out on the padded input's grid: output (y, x) is column
//! `y · wp + x` of a row `wp` wide, so kernel tap (i, j) reads the padded plane at that
//! column plus `i · wp + j`. Each unrolled row of a sample is then one contiguous run of
//! the padded plane (and folding it back one contiguous sum), not `ho` runs of `wo`
//! floats: W2's 8-wide rows made the copies, not the arithmetic, the cost. The columns
//! with `x ≥ wo` are padding of the layout: the output gradient is zero there and the
//! outputs there are dropped (what they read are real pixels of the next row, so they
//! add nothing to the weight gradient unless a pixel is not finite, and then no gradient
//! is). Per chunk of samples, with `G` the output gradient
//! `[o, positions]` and `cols` the unrolled input `[c·kh·kw, positions]`:
//! `out = W · cols`, `dW += G · colsᵀ`, `dcols = Wᵀ · G` folded onto the input's
//! gradient. Chunks are sized to stay in a core's cache and run in parallel in a fixed
//! number of groups, each with its own partial weight gradient, summed in order: the
//! result does not depend on the number of threads. The gemms are the `gemm` crate's,
//! as burn-flex's.
//!
//! Plain slices in and out: the tensors are `kernels.rs`'s business.

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

/// Floats of unrolled input per chunk (1 MiB): about what a core's L2 cache holds.
const CHUNK_FLOATS: usize = 1 << 18;

/// Groups of chunks run in parallel, whatever the number of threads.
const GROUPS: usize = 16;

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

    /// Columns per sample on the padded grid: from (0, 0) to (ho − 1, wo − 1).
    fn span(&self) -> usize {
        let (ho, wo) = self.out_hw();
        (ho - 1) * self.wp() + wo
    }

    /// Unrolled rows: one per input channel and kernel tap.
    fn taps(&self) -> usize {
        self.c * self.kh * self.kw
    }

    /// Where unrolled row `r` = (channel, i, j) starts in its channel's padded plane.
    fn offset(&self, r: usize) -> usize {
        let t = r % (self.kh * self.kw);
        (t / self.kw) * self.wp() + t % self.kw
    }

    /// Whether the kernel fits the padded input (and is not empty).
    pub fn valid(&self) -> bool {
        self.hp() >= self.kh && self.wp() >= self.kw && self.kh * self.kw > 0
    }

    /// The batch in chunks of samples (unrolled input under [`CHUNK_FLOATS`]) and the
    /// chunks in at most [`GROUPS`] groups: samples per chunk, samples per group.
    fn split(&self) -> (usize, usize) {
        let per = (CHUNK_FLOATS / (self.taps() * self.span()).max(1)).clamp(1, self.n.max(1));
        let chunks = self.n.div_ceil(per);
        (per, chunks.div_ceil(GROUPS).max(1) * per)
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

    /// The unrolled input of `nb` padded samples `xp`: `cols[r][b · span + q]` is
    /// sample b's padded plane of row r's channel at `q + offset(r)`.
    fn unroll(&self, xp: &[f32], nb: usize, cols: &mut [f32]) {
        let (span, plane, kk) = (self.span(), self.hp() * self.wp(), self.kh * self.kw);
        for (r, row) in cols.chunks_exact_mut(nb * span).enumerate() {
            let off = self.offset(r);
            for (b, dst) in row.chunks_exact_mut(span).enumerate() {
                let src = &xp[(b * self.c + r / kk) * plane + off..][..span];
                dst.copy_from_slice(src);
            }
        }
    }

    /// The output gradient of samples `start..start + nb` on the grid, `[o, nb · span]`,
    /// zero in the layout's padding columns.
    fn grid_grad(&self, grad: &[f32], start: usize, nb: usize, g: &mut [f32]) {
        let (ho, wo) = self.out_hw();
        let (span, wp) = (self.span(), self.wp());
        g.fill(0.0);
        for (oc, row) in g.chunks_exact_mut(nb * span).enumerate() {
            for (b, dst) in row.chunks_exact_mut(span).enumerate() {
                let src = &grad[((start + b) * self.o + oc) * ho * wo..][..ho * wo];
                for (y, s) in src.chunks_exact(wo).enumerate() {
                    dst[y * wp..][..wo].copy_from_slice(s);
                }
            }
        }
    }

    /// The outputs of `nb` samples on the grid, `[o, nb · span]`, back to `[nb, o, ho, wo]`
    /// in `out`, with the bias added.
    fn ungrid(&self, grid: &[f32], nb: usize, bias: &[f32], out: &mut [f32]) {
        let (ho, wo) = self.out_hw();
        let (span, wp) = (self.span(), self.wp());
        for (oc, row) in grid.chunks_exact(nb * span).enumerate() {
            for (b, src) in row.chunks_exact(span).enumerate() {
                let dst = &mut out[(b * self.o + oc) * ho * wo..][..ho * wo];
                for (y, d) in dst.chunks_exact_mut(wo).enumerate() {
                    for (d, v) in d.iter_mut().zip(&src[y * wp..][..wo]) {
                        *d = v + bias[oc];
                    }
                }
            }
        }
    }

    /// The transpose of [`Self::unroll`]: each of the `nb` samples' unrolled rows `dcols`
    /// summed back onto its padded planes `dxp`.
    fn fold(&self, dcols: &[f32], nb: usize, dxp: &mut Vec<f32>) {
        let (span, plane, kk) = (self.span(), self.hp() * self.wp(), self.kh * self.kw);
        dxp.clear();
        dxp.resize(nb * self.c * plane, 0.0);
        for (q, p) in dxp.chunks_exact_mut(plane).enumerate() {
            let (b, ch) = (q / self.c, q % self.c);
            for r in ch * kk..(ch + 1) * kk {
                let src = &dcols[r * nb * span + b * span..][..span];
                for (d, v) in p[self.offset(r)..][..span].iter_mut().zip(src) {
                    *d += v;
                }
            }
        }
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
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(b.rows == k && dst.len() == m * n && a.fits() && b.fits());
    // SAFETY: the assert keeps every index of the three matrices inside its slice, and
    // `dst` is borrowed mutably, so it aliases neither operand.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
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

/// Scratch space of one group of chunks.
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
    let (span, ckk) = (s.span(), s.taps());
    let (per, group) = s.split();
    let mut out = vec![0f32; s.n * s.o * ho * wo];
    out.par_chunks_mut(group * s.o * ho * wo)
        .enumerate()
        .for_each(|(gi, out)| {
            with_scratch(|sc| {
                for (ci, out) in out.chunks_mut(per * s.o * ho * wo).enumerate() {
                    let (start, nb) = (gi * group + ci * per, out.len() / (s.o * ho * wo));
                    let xp = s.padded(x, start, nb, &mut sc.padded);
                    let cols = sized(&mut sc.cols, ckk * nb * span);
                    s.unroll(xp, nb, cols);
                    let grid = sized(&mut sc.grid, s.o * nb * span);
                    let cols = Mat::row_major(cols, ckk, nb * span);
                    gemm(grid, Mat::row_major(weight, s.o, ckk), cols, false);
                    s.ungrid(grid, nb, bias, out);
                }
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
    let (_, group) = s.split();
    let mut dx = need_x.then(|| vec![0f32; x.len()]);
    let mut dw = None;
    if need_x || need_w {
        // Each group's slice of the input's gradient, if asked.
        let dx_parts: Vec<Option<&mut [f32]>> = match dx.as_deref_mut() {
            Some(dx) => dx.chunks_mut(group * s.c * s.h * s.w).map(Some).collect(),
            None => (0..s.n.div_ceil(group)).map(|_| None).collect(),
        };
        let partials: Vec<Option<Vec<f32>>> = dx_parts
            .into_par_iter()
            .enumerate()
            .map(|(gi, dx)| group_grads(s, x, weight, grad, gi * group, dx, need_w))
            .collect();
        // The groups' weight gradients, summed in order.
        let sum = partials.into_iter().flatten().reduce(|mut a, b| {
            a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
            a
        });
        dw = need_w.then(|| sum.unwrap_or_else(|| vec![0f32; weight.len()]));
    }
    ConvGradients { x: dx, weight: dw, bias: need_b.then(|| bias_grad(s, grad)) }
}

/// One group's share, samples `first..first + group`: their input gradient written into
/// `dx` (that slice of it) if asked, their weight gradient returned if `need_w`.
fn group_grads(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    grad: &[f32],
    first: usize,
    mut dx: Option<&mut [f32]>,
    need_w: bool,
) -> Option<Vec<f32>> {
    let (span, ckk, plane) = (s.span(), s.taps(), s.c * s.h * s.w);
    let (per, group) = s.split();
    let mut dw = need_w.then(|| vec![0f32; weight.len()]);
    with_scratch(|sc| {
        for start in (first..(first + group).min(s.n)).step_by(per) {
            let nb = per.min(s.n - start);
            let grid = sized(&mut sc.grid, s.o * nb * span);
            s.grid_grad(grad, start, nb, grid);
            let g = Mat::row_major(grid, s.o, nb * span);
            let cols = sized(&mut sc.cols, ckk * nb * span);
            if let Some(dw) = dw.as_deref_mut() {
                let xp = s.padded(x, start, nb, &mut sc.padded);
                s.unroll(xp, nb, cols);
                gemm(dw, g, Mat::row_major(cols, ckk, nb * span).t(), start > first);
            }
            if let Some(dx) = dx.as_deref_mut() {
                gemm(cols, Mat::row_major(weight, s.o, ckk).t(), g, false);
                s.fold(cols, nb, &mut sc.folded);
                s.crop(&sc.folded, &mut dx[(start - first) * plane..][..nb * plane]);
            }
        }
    });
    dw
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
    use super::{ConvShape, conv2d, conv2d_grads};

    /// The output and the three gradients are the same bit for bit on one thread and on
    /// four: chunks and groups follow the shapes, and the groups' partial weight
    /// gradients are summed in order (a run's results do not depend on the machine).
    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let s = ConvShape { n: 131, c: 4, h: 12, w: 12, o: 6, kh: 5, kw: 5, pad: [2, 2] };
        let (ho, wo) = s.out_hw();
        let data = |n: usize, k: usize| -> Vec<f32> {
            (0..n).map(|i| ((i * k + 11) % 23) as f32 / 11.0 - 1.0).collect()
        };
        let x = data(s.n * s.c * s.h * s.w, 37);
        let w = data(s.o * s.c * s.kh * s.kw, 5);
        let g = data(s.n * s.o * ho * wo, 13);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let out = conv2d(&s, &x, &w, &[0.5; 6]);
                let grads = conv2d_grads(&s, &x, &w, &g, [true; 3]);
                (out, grads.x.unwrap(), grads.weight.unwrap(), grads.bias.unwrap())
            })
        };
        assert!(s.n.div_ceil(s.split().0) > 1, "several chunks");
        assert_eq!(run(1), run(4));
    }
}
