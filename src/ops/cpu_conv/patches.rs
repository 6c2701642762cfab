//! Unrolled over every tap (im2col), a chunk of samples per gemm, the output positions
//! either on the padded input's grid or exactly the output's.
//!
//! Per chunk of samples, with `G` the output gradient `[o, positions]` and `cols` the
//! unrolled input `[c·kh·kw, positions]`: `out = W · cols`, `dW += G · colsᵀ`,
//! `dcols = Wᵀ · G` folded onto the input's gradient. The two arrangements of the
//! positions ([`Positions`]) trade copying against arithmetic.

use super::{ConvShape, Mat, OutGrad, Scratch, plane_sums, gemm, sized};

/// Floats of unrolled input per chunk (1 MiB): about what a core's L2 cache holds.
const CHUNK_FLOATS: usize = 1 << 18;

/// Which positions a sample's unrolled columns stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Positions {
    /// Output (y, x) is column `y · wp + x` of a row `wp` wide, so kernel tap (i, j)
    /// reads the padded plane at that column plus `i · wp + j`: each unrolled row of a
    /// sample is one contiguous run of the padded plane (and folding it back one
    /// contiguous sum). The columns with `x ≥ wo` are padding of the layout: the output
    /// gradient is zero there and the outputs there are dropped (what they read are real
    /// pixels of the next row, so they add nothing to the weight gradient unless a pixel
    /// is not finite, and then no gradient is). The gemms do `wp / wo` times the
    /// arithmetic needed.
    Grid,
    /// Output (y, x) is column `y · wo + x`: no arithmetic wasted, each unrolled row
    /// copied in `ho` runs of `wo` floats.
    Exact,
}

impl ConvShape {
    /// Samples per gemm: on the grid, as many as keep their unrolled input under
    /// [`CHUNK_FLOATS`]; exactly, one (the gemms read and write the tensors in place).
    pub(super) fn chunk(&self, pos: Positions) -> usize {
        match pos {
            Positions::Grid => (CHUNK_FLOATS / (self.taps() * self.span(pos)).max(1)).clamp(1, self.n.max(1)),
            Positions::Exact => 1,
        }
    }

    /// Columns per sample: on the grid from (0, 0) to (ho − 1, wo − 1), else `ho · wo`.
    fn span(&self, pos: Positions) -> usize {
        let (ho, wo) = self.out_hw();
        match pos {
            Positions::Grid => (ho - 1) * self.wp() + wo,
            Positions::Exact => ho * wo,
        }
    }

    /// A sample's columns are runs of this many floats, each from a row of the padded
    /// plane: one run on the grid, an output row each exactly.
    fn run_len(&self, pos: Positions) -> usize {
        match pos {
            Positions::Grid => self.span(pos),
            Positions::Exact => self.out_hw().1,
        }
    }

    /// Unrolled rows: one per input channel and kernel tap.
    pub(super) fn taps(&self) -> usize {
        self.c * self.kh * self.kw
    }

    /// Where unrolled row `r` = (channel, i, j) starts in its channel's padded plane.
    fn offset(&self, r: usize) -> usize {
        let t = r % (self.kh * self.kw);
        (t / self.kw) * self.wp() + t % self.kw
    }

    /// The unrolled input of `nb` padded samples `xp`: `cols[r][b · span + q]` is
    /// sample b's padded plane of row r's channel at position q, shifted by `offset(r)`.
    fn unroll(&self, pos: Positions, xp: &[f32], nb: usize, cols: &mut [f32]) {
        let (span, plane, kk, runs) = (self.span(pos), self.hp() * self.wp(), self.kh * self.kw, self.run_len(pos));
        for (r, row) in cols.chunks_exact_mut(nb * span).enumerate() {
            let off = self.offset(r);
            for (b, dst) in row.chunks_exact_mut(span).enumerate() {
                let src = &xp[(b * self.c + r / kk) * plane + off..];
                for (y, dst) in dst.chunks_exact_mut(runs).enumerate() {
                    dst.copy_from_slice(&src[y * self.wp()..][..runs]);
                }
            }
        }
    }

    /// The output gradient `grad` of `nb` samples on the grid, `[o, nb · span]`, zero in
    /// the layout's padding columns.
    fn grid_grad(&self, grad: &[f32], nb: usize, g: &mut [f32]) {
        let (ho, wo) = self.out_hw();
        let (span, wp) = (self.span(Positions::Grid), self.wp());
        g.fill(0.0);
        for (oc, row) in g.chunks_exact_mut(nb * span).enumerate() {
            for (b, dst) in row.chunks_exact_mut(span).enumerate() {
                let src = &grad[(b * self.o + oc) * ho * wo..][..ho * wo];
                for (y, s) in src.chunks_exact(wo).enumerate() {
                    dst[y * wp..][..wo].copy_from_slice(s);
                }
            }
        }
    }

    /// The outputs of `nb` samples on the grid, `[o, nb · span]`, added to `out`
    /// (`[nb, o, ho, wo]`).
    fn uncolumn(&self, grid: &[f32], nb: usize, out: &mut [f32]) {
        let (ho, wo) = self.out_hw();
        let (span, wp) = (self.span(Positions::Grid), self.wp());
        for (oc, row) in grid.chunks_exact(nb * span).enumerate() {
            for (b, src) in row.chunks_exact(span).enumerate() {
                let dst = &mut out[(b * self.o + oc) * ho * wo..][..ho * wo];
                for (y, d) in dst.chunks_exact_mut(wo).enumerate() {
                    for (d, v) in d.iter_mut().zip(&src[y * wp..][..wo]) {
                        *d += v;
                    }
                }
            }
        }
    }

    /// The transpose of [`Self::unroll`]: each of the `nb` samples' unrolled rows `dcols`
    /// summed back onto its padded planes `dxp`.
    fn fold(&self, pos: Positions, dcols: &[f32], nb: usize, dxp: &mut Vec<f32>) {
        let (span, plane, kk, runs) = (self.span(pos), self.hp() * self.wp(), self.kh * self.kw, self.run_len(pos));
        dxp.clear();
        dxp.resize(nb * self.c * plane, 0.0);
        for (q, p) in dxp.chunks_exact_mut(plane).enumerate() {
            let (b, ch) = (q / self.c, q % self.c);
            for r in ch * kk..(ch + 1) * kk {
                let src = &dcols[r * nb * span + b * span..][..span];
                let dst = &mut p[self.offset(r)..];
                for (y, src) in src.chunks_exact(runs).enumerate() {
                    for (d, v) in dst[y * self.wp()..][..runs].iter_mut().zip(src) {
                        *d += v;
                    }
                }
            }
        }
    }
}

/// The convolution of the group of samples from `first` added to `out` (as many as
/// `out` holds, each holding its bias).
pub(super) fn forward(s: &ConvShape, pos: Positions, x: &[f32], weight: &[f32], first: usize, out: &mut [f32], sc: &mut Scratch) {
    let (ho, wo) = s.out_hw();
    let (span, ckk, per, w) = (s.span(pos), s.taps(), s.chunk(pos), Mat::row_major(weight, s.o, s.taps()));
    for (ci, out) in out.chunks_mut(per * s.o * ho * wo).enumerate() {
        let (start, nb) = (first + ci * per, out.len() / (s.o * ho * wo));
        let xp = s.padded(x, start, nb, &mut sc.padded);
        let cols = sized(&mut sc.cols, ckk * nb * span);
        s.unroll(pos, xp, nb, cols);
        let cols = Mat::row_major(cols, ckk, nb * span);
        match pos {
            Positions::Grid => {
                let columns = sized(&mut sc.grid, s.o * nb * span);
                gemm(columns, w, cols, false);
                s.uncolumn(columns, nb, out);
            }
            Positions::Exact => gemm(out, w, cols, true),
        }
    }
}

/// The gradients of the group of samples `first..first + group` for the output gradient
/// `grad`: their input gradient written into `dx` (that slice of it) if asked, their
/// weight gradient returned (`[o, c·kh·kw]`) if `need_w`.
pub(super) fn grads(
    s: &ConvShape,
    pos: Positions,
    (x, weight, grad): (&[f32], &[f32], OutGrad),
    (first, group): (usize, usize),
    mut dx: Option<&mut [f32]>,
    (need_w, mut sums): (bool, Option<&mut Vec<f32>>),
    sc: &mut Scratch,
) -> Option<Vec<f32>> {
    let (span, ckk, plane, per) = (s.span(pos), s.taps(), s.c * s.h * s.w, s.chunk(pos));
    let l = s.out_hw().0 * s.out_hw().1;
    let mut dw = need_w.then(|| vec![0f32; weight.len()]);
    for start in (first..(first + group).min(s.n)).step_by(per) {
        let nb = per.min(s.n - start);
        let full = grad.samples(s, start, nb, &mut sc.full);
        plane_sums(full, l, sums.as_deref_mut());
        let g = match pos {
            Positions::Grid => {
                let columns = sized(&mut sc.grid, s.o * nb * span);
                s.grid_grad(full, nb, columns);
                Mat::row_major(columns, s.o, nb * span)
            }
            Positions::Exact => Mat::row_major(full, s.o, span),
        };
        let cols = sized(&mut sc.cols, ckk * nb * span);
        if let Some(dw) = dw.as_deref_mut() {
            let xp = s.padded(x, start, nb, &mut sc.padded);
            s.unroll(pos, xp, nb, cols);
            gemm(dw, g, Mat::row_major(cols, ckk, nb * span).t(), true);
        }
        if let Some(dx) = dx.as_deref_mut() {
            gemm(cols, Mat::row_major(weight, s.o, ckk).t(), g, false);
            s.fold(pos, cols, nb, &mut sc.folded);
            s.crop(&sc.folded, &mut dx[(start - first) * plane..][..nb * plane]);
        }
    }
    dw
}
