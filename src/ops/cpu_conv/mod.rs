//! The 2-D convolutions of ANTs (stride 1, symmetric zero padding) on the CPU by
//! unrolling the input: forward and all three gradients as gemms, in one of two layouts.
//!
//! - [`patches`]: every tap unrolled (im2col), a few samples per gemm, the output
//!   positions on the padded input's grid (the gemms do `wp / wo` times the arithmetic
//!   needed, the copies are long runs) or exactly the output's (copies of `wo` floats).
//! - [`rows`]: only the kernel's columns unrolled, one sample and one kernel row per
//!   gemm, no arithmetic wasted. Faster wherever `c · kw` fills a gemm: W2's 40-channel
//!   convolutions take 0.55x the grid's time forward and 0.6-0.75x backward.
//!
//! The batch runs in parallel in a fixed number of groups, each with its own partial
//! weight gradient, summed in order: the result does not depend on the number of
//! threads. The gemms are the `gemm` crate's, as burn-flex's.
//!
//! Plain slices in and out: the tensors are `conv.rs`'s business.

mod patches;
mod pooled;
mod rows;

use patches::Positions;
pub use pooled::{conv2d_pool2x2, conv2d_pool2x2_grads};

use rayon::prelude::*;

use super::lane_sum;

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

/// The three ways of unrolling; `ANT_CONV_LAYOUT` (`grid`, `exact`, `rows`) forces one,
/// for benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Grid,
    Exact,
    Rows,
}

/// The layout `ANT_CONV_LAYOUT` forces, if any (read once: every convolution asks).
fn forced_layout() -> Option<Layout> {
    static FORCED: std::sync::OnceLock<Option<Layout>> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| match crate::env::conv_layout().as_deref() {
        Some("grid") => Some(Layout::Grid),
        Some("exact") => Some(Layout::Exact),
        Some("rows") => Some(Layout::Rows),
        _ => None,
    })
}

/// How a convolution is unrolled, with the weight as its gemms read it.
enum Unrolled<'a> {
    /// [`patches`]: the weight as given, `[o, c·kh·kw]`, and the positions unrolled.
    Patches(&'a [f32], Positions),
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

    /// Samples per group: [`GROUPS`] groups at most, each a whole number of the
    /// layout's chunks.
    fn group(&self, unrolled: &Unrolled) -> usize {
        let per = match unrolled {
            Unrolled::Patches(_, pos) => self.chunk(*pos),
            Unrolled::Rows(_) => 1,
        };
        self.n.div_ceil(per).div_ceil(GROUPS).max(1) * per
    }

    /// The layout for this shape, as measured (`ANT_PHASE_PARTS=convs cargo bench --bench
    /// step_phases` with `ANT_CONV_LAYOUT` forcing each; 2 threads, batch 512, the
    /// presets' shapes; docs/guide/benchmarks.md):
    /// - a single input channel on a plane of 32 positions or more (the data's layer):
    ///   [`patches`], exact positions, a sample per gemm (0.7-0.8x the time of the
    ///   others: its outputs, the biggest tensors of a step, are written and read once);
    /// - [`rows`] where its per-sample gemms are big enough: an output plane of 16
    ///   positions or more and `c · kw · ho · wo` of 1024 or more (mnist-a's 40 channels
    ///   on 4x4 outputs: 0.7x the grid's time);
    /// - [`patches`] on the grid otherwise (2x2 outputs of 40 channels, 4x4 of 5).
    fn layout(&self) -> Layout {
        let l = self.out_hw().0 * self.out_hw().1;
        match forced_layout() {
            Some(forced) => forced,
            None if self.c == 1 && l >= 32 => Layout::Exact,
            None if l >= 16 && self.c * self.kw * l >= 1024 => Layout::Rows,
            None => Layout::Grid,
        }
    }

    /// The weight as `layout`'s gemms read it.
    fn unrolled<'a>(&self, weight: &'a [f32], layout: Layout) -> Unrolled<'a> {
        match layout {
            Layout::Grid => Unrolled::Patches(weight, Positions::Grid),
            Layout::Exact => Unrolled::Patches(weight, Positions::Exact),
            Layout::Rows => Unrolled::Rows(self.weight_by_rows(weight)),
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
    /// A chunk's convolution or output gradient at full size, for the convolution
    /// pooled in one op ([`pooled`]).
    full: Vec<f32>,
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
    conv2d_in(s.layout(), s, x, weight, bias)
}

/// [`conv2d`] in the given layout.
fn conv2d_in(layout: Layout, s: &ConvShape, x: &[f32], weight: &[f32], bias: &[f32]) -> Vec<f32> {
    assert!(s.valid() && x.len() == s.n * s.c * s.h * s.w && weight.len() == s.o * s.taps());
    assert_eq!(bias.len(), s.o);
    let (ho, wo) = s.out_hw();
    let unrolled = s.unrolled(weight, layout);
    let (l, group) = (ho * wo, s.group(&unrolled));
    // Each group's outputs start as the bias, written once in the group's thread, where
    // its gemms then add: no zeroing pass over the whole output first.
    let len = s.n * s.o * l;
    let mut out = Vec::with_capacity(len);
    out.spare_capacity_mut()[..len].par_chunks_mut(group * s.o * l).enumerate().for_each(|(gi, out)| {
        let out = filled_with_bias(out, bias, l);
        with_scratch(|sc| match &unrolled {
            Unrolled::Patches(w, pos) => patches::forward(s, *pos, x, w, gi * group, out, sc),
            Unrolled::Rows(w) => rows::forward(s, x, w, gi * group, out, sc),
        })
    });
    // SAFETY: the groups' chunks cover the first `len` elements, and each was written by
    // `filled_with_bias`.
    unsafe { out.set_len(len) };
    out
}

/// `out`'s planes of `l` positions, written with their channel's bias in turn.
fn filled_with_bias<'a>(out: &'a mut [std::mem::MaybeUninit<f32>], bias: &[f32], l: usize) -> &'a mut [f32] {
    for (plane, &b) in out.chunks_exact_mut(l).zip(bias.iter().cycle()) {
        for v in plane {
            v.write(b);
        }
    }
    // SAFETY: every element was written just above (the planes tile `out`: its length is
    // a whole number of samples), and `MaybeUninit<f32>` has the layout of `f32`.
    unsafe { &mut *(out as *mut [std::mem::MaybeUninit<f32>] as *mut [f32]) }
}

/// The gradients of [`conv2d`] for the output gradient `grad`, each only where `need`
/// ([input, weight, bias]) asks for it.
pub fn conv2d_grads(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    grad: &[f32],
    need: [bool; 3],
) -> ConvGradients {
    conv2d_grads_in(s.layout(), s, x, weight, OutGrad::Full(grad), need)
}

/// A convolution's output gradient as its backward pass receives it.
#[derive(Clone, Copy)]
enum OutGrad<'a> {
    /// `[n, o, ho, wo]`.
    Full(&'a [f32]),
    /// The gradient of the output pooled 2×2, `[n, o, ho / 2, wo / 2]`, and the cell of
    /// each window its maximum came from ([`pooled`]).
    Pooled(&'a [f32], &'a [u8]),
}

impl<'a> OutGrad<'a> {
    /// Whether it fits the convolution `s`.
    fn fits(self, s: &ConvShape) -> bool {
        let (ho, wo) = s.out_hw();
        match self {
            OutGrad::Full(g) => g.len() == s.n * s.o * ho * wo,
            OutGrad::Pooled(g, cells) => g.len() == s.n * s.o * (ho / 2) * (wo / 2) && cells.len() == g.len(),
        }
    }

    /// The output gradient `[nb, o, ho, wo]` of samples `first..first + nb`: a slice of
    /// the full one, or made in `buf` from the pooled one.
    fn samples<'b>(self, s: &ConvShape, first: usize, nb: usize, buf: &'b mut Vec<f32>) -> &'b [f32]
    where
        'a: 'b,
    {
        let (ho, wo) = s.out_hw();
        let (l, lq) = (ho * wo, (ho / 2) * (wo / 2));
        match self {
            OutGrad::Full(g) => &g[first * s.o * l..][..nb * s.o * l],
            OutGrad::Pooled(g, cells) => {
                let full = sized(buf, nb * s.o * l);
                full.fill(0.0);
                let (g, cells) = (&g[first * s.o * lq..][..nb * s.o * lq], &cells[first * s.o * lq..]);
                for (p, plane) in full.chunks_exact_mut(l).enumerate() {
                    super::cpu_pool::unpool_plane(&g[p * lq..][..lq], &cells[p * lq..][..lq], wo, plane);
                }
                full
            }
        }
    }
}

/// Each plane's (`l` values of `full`) sum in 16 lanes added to `sums`, if given: what
/// the bias's gradient sums over the samples.
fn plane_sums(full: &[f32], l: usize, sums: Option<&mut Vec<f32>>) {
    if let Some(sums) = sums {
        sums.extend(full.chunks_exact(l).map(|p| lane_sum(p, |v| v)));
    }
}

/// The gradients for the output gradient `grad` in the given layout, each only where
/// `need` asks.
fn conv2d_grads_in(
    layout: Layout,
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    grad: OutGrad,
    [need_x, need_w, need_b]: [bool; 3],
) -> ConvGradients {
    assert!(s.valid() && x.len() == s.n * s.c * s.h * s.w && weight.len() == s.o * s.taps());
    assert!(grad.fits(s), "output gradient of another shape");
    let (ho, wo) = s.out_hw();
    let l = ho * wo;
    let mut dx = need_x.then(|| vec![0f32; x.len()]);
    let unrolled = s.unrolled(weight, layout);
    let group = s.group(&unrolled);
    // Each group's slice of the input's gradient, if asked.
    let dx_parts: Vec<Option<&mut [f32]>> = match dx.as_deref_mut() {
        Some(dx) => dx.chunks_mut(group * s.c * s.h * s.w).map(Some).collect(),
        None => (0..s.n.div_ceil(group)).map(|_| None).collect(),
    };
    // Per group: its partial weight gradient, and each of its planes' gradient summed.
    let parts: Vec<(Option<Vec<f32>>, Vec<f32>)> = dx_parts
        .into_par_iter()
        .enumerate()
        .map(|(gi, dx)| {
            let (first, nb) = (gi * group, group.min(s.n - gi * group));
            with_scratch(|sc| {
                // The layouts unpool a pooled gradient a chunk at a time (the scratch stays
                // that size whatever the batch), and sum its planes for the bias there.
                let mut sums = Vec::new();
                let want = (need_w, need_b.then_some(&mut sums));
                let dw = match &unrolled {
                    _ if !(need_x || need_w) => {
                        for b in (first..first + nb).filter(|_| need_b) {
                            plane_sums(grad.samples(s, b, 1, &mut sc.full), l, Some(&mut sums));
                        }
                        None
                    }
                    Unrolled::Patches(w, pos) => patches::grads(s, *pos, (x, w, grad), (first, group), dx, want, sc),
                    Unrolled::Rows(w) => rows::grads(s, (x, w, grad), (first, group), dx, want, sc),
                };
                (dw, sums)
            })
        })
        .collect();
    let (partials, sums): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    // The groups' weight gradients, summed in order, in the layout's arrangement.
    let sum = partials.into_iter().flatten().reduce(|mut a, b| {
        a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
        a
    });
    let weight = need_w.then(|| match (sum, &unrolled) {
        (None, _) => vec![0f32; weight.len()],
        (Some(w), Unrolled::Patches(..)) => w,
        (Some(w), Unrolled::Rows(_)) => s.weight_from_rows(&w),
    });
    // The bias's: each output channel's plane sums, over the samples in order.
    let sums = sums.concat();
    let bias = need_b.then(|| (0..s.o).map(|oc| (0..s.n).map(|b| sums[b * s.o + oc]).sum::<f32>()).collect());
    ConvGradients { x: dx, weight, bias }
}

#[cfg(test)]
mod tests {
    use super::{ConvShape, Layout, OutGrad, conv2d_grads_in, conv2d_in};

    const LAYOUTS: [Layout; 3] = [Layout::Grid, Layout::Exact, Layout::Rows];

    fn data(n: usize, k: usize) -> Vec<f32> {
        (0..n).map(|i| ((i * k + 11) % 23) as f32 / 11.0 - 1.0).collect()
    }

    /// The definition, summed in f64 (`ops::exact_conv`): the output, then the input's,
    /// weight's and bias's gradients for the output gradient `g`.
    fn reference(s: &ConvShape, x: &[f32], w: &[f32], b: &[f32], g: &[f32]) -> [Vec<f32>; 4] {
        let case = ([s.n, s.c, s.h, s.w], s.o, [s.kh, s.kw], [1, 1], [1, 1], s.pad);
        let e = crate::ops::exact_conv(case, x, w, b, g);
        [e.out, e.x, e.w, e.b].map(|(v, _)| v.into_iter().map(|v| v as f32).collect())
    }

    fn close(a: &[f32], b: &[f32], what: &str) {
        crate::ops::assert_close(a, b, 1e-5, what);
    }

    /// Each layout's output and gradients equal the definition up to f32 rounding, on a
    /// single channel and on several, square and oblong kernels, padding alike and not
    /// on both axes, outputs from 1x1 to 24x24, and batches of several chunks with a
    /// short last one.
    #[test]
    fn every_layout_computes_the_definition() {
        let shapes = [
            ConvShape { n: 3, c: 1, h: 28, w: 28, o: 4, kh: 5, kw: 5, pad: [0, 0] },
            ConvShape { n: 5, c: 3, h: 8, w: 8, o: 6, kh: 5, kw: 5, pad: [0, 0] },
            ConvShape { n: 4, c: 2, h: 7, w: 10, o: 3, kh: 3, kw: 4, pad: [1, 2] },
            ConvShape { n: 2, c: 4, h: 4, w: 4, o: 5, kh: 3, kw: 3, pad: [0, 0] },
            ConvShape { n: 3, c: 2, h: 5, w: 5, o: 2, kh: 5, kw: 5, pad: [0, 0] },
            ConvShape { n: 37, c: 12, h: 12, w: 12, o: 7, kh: 5, kw: 5, pad: [2, 2] },
        ];
        for s in shapes {
            let (ho, wo) = s.out_hw();
            let (x, w) = (data(s.n * s.c * s.h * s.w, 37), data(s.o * s.taps(), 5));
            let (b, g) = (data(s.o, 3), data(s.n * s.o * ho * wo, 13));
            let want = reference(&s, &x, &w, &b, &g);
            for layout in LAYOUTS {
                let what = format!("{layout:?} {s:?}");
                close(&conv2d_in(layout, &s, &x, &w, &b), &want[0], &format!("output {what}"));
                let got = conv2d_grads_in(layout, &s, &x, &w, OutGrad::Full(&g), [true; 3]);
                close(&got.x.unwrap(), &want[1], &format!("input gradient {what}"));
                close(&got.weight.unwrap(), &want[2], &format!("weight gradient {what}"));
                close(&got.bias.unwrap(), &want[3], &format!("bias gradient {what}"));
                // The first convolution of a tree asks for the weight's gradient alone.
                let alone = conv2d_grads_in(layout, &s, &x, &w, OutGrad::Full(&g), [false, true, false]);
                assert!(alone.x.is_none() && alone.bias.is_none(), "{what}");
                close(&alone.weight.unwrap(), &want[2], &format!("weight gradient alone {what}"));
            }
        }
    }

    /// The output and the three gradients are the same bit for bit on one thread and on
    /// four, in every layout: groups follow the shapes, and the groups' partial weight
    /// gradients are summed in order (a run's results do not depend on the machine).
    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let s = ConvShape { n: 131, c: 4, h: 12, w: 12, o: 6, kh: 5, kw: 5, pad: [2, 2] };
        let (ho, wo) = s.out_hw();
        let x = data(s.n * s.c * s.h * s.w, 37);
        let w = data(s.o * s.c * s.kh * s.kw, 5);
        let g = data(s.n * s.o * ho * wo, 13);
        for layout in LAYOUTS {
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    let out = conv2d_in(layout, &s, &x, &w, &[0.5; 6]);
                    let grads = conv2d_grads_in(layout, &s, &x, &w, OutGrad::Full(&g), [true; 3]);
                    (out, grads.x.unwrap(), grads.weight.unwrap(), grads.bias.unwrap())
                })
            };
            assert!(s.n.div_ceil(s.group(&s.unrolled(&w, layout))) > 1, "several groups");
            assert_eq!(run(1), run(4), "{layout:?}");
        }
    }

    /// The presets' convolutions get the layouts measured fastest for them
    /// (docs/guide/benchmarks.md).
    #[test]
    fn the_presets_convolutions_get_their_measured_layouts() {
        let conv = |c: usize, o: usize, k: usize, side: usize| ConvShape { n: 512, c, h: side, w: side, o, kh: k, kw: k, pad: [0, 0] };
        let cases = [
            (conv(1, 40, 5, 28), Layout::Exact),  // mnist-a, W2: the data's layer
            (conv(40, 40, 5, 12), Layout::Rows),  // mnist-a: 8x8 out
            (conv(40, 40, 5, 8), Layout::Rows),   // mnist-a: 4x4 out
            (conv(1, 40, 3, 28), Layout::Exact),  // mnist-b
            (conv(40, 40, 3, 13), Layout::Rows),  // mnist-b
            (conv(40, 40, 3, 4), Layout::Grid),   // mnist-b: 2x2 out
            (conv(1, 5, 5, 28), Layout::Exact),   // mnist-c
            (conv(5, 5, 5, 12), Layout::Rows),    // mnist-c: 8x8 out
            (conv(5, 5, 5, 8), Layout::Grid),     // mnist-c: 4x4 out
        ];
        for (s, layout) in cases {
            assert_eq!(s.layout(), layout, "{s:?}");
        }
    }
}
