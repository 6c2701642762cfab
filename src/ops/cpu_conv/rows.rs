//! Unrolled over the kernel's columns only; its rows are gemms on shifted views.
//!
//! Row (channel, j) of a sample's unrolled input `U` `[c·kw, hp·wo]` is its padded
//! plane's columns `j..j + wo`, row after row, so kernel row i's taps read the positions
//! of the output, `ho · wo` of them, as one contiguous run of each row of `U` from
//! `i · wo`. With `W_i` `[o, c·kw]` the weight's kernel row i and `G` `[o, ho·wo]` a
//! sample's output gradient, per sample and kernel row: `out += W_i · U_i`,
//! `dW_i += G · U_iᵀ`, `dU_i += W_iᵀ · G` (overlapping runs of `dU`, folded onto the
//! input's gradient at the end). No arithmetic is wasted (the grid layout does `wp / wo`
//! times what is needed: 1.5x on W2's 12-wide inputs) and `U` is `kh` times smaller
//! than the grid's; the gemms are smaller, one sample at a time, which pays once
//! `c · kw` is big enough to fill them.

use super::{ConvShape, Mat, OutGrad, Scratch, plane_sums, gemm_strided, sized};

impl ConvShape {
    /// Rows of the row-unrolled input: one per input channel and kernel column.
    fn row_taps(&self) -> usize {
        self.c * self.kw
    }

    /// Kernel row `i`'s view of a sample's unrolled input `u`: `[c·kw, ho·wo]`.
    fn shifted<'a>(&self, u: &'a [f32], i: usize) -> Mat<'a> {
        let ((ho, wo), hp) = (self.out_hw(), self.hp());
        Mat { data: &u[i * wo..], rows: self.row_taps(), cols: ho * wo, row_stride: hp * wo, col_stride: 1 }
    }

    /// Each kernel row of each (output, input) channel pair, a run of `kw` floats: where
    /// it starts in the weight `[o, c, kh, kw]` and in the layout by rows.
    fn row_runs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.o * self.c * self.kh).map(|q| {
            let (oc, ch, i) = (q / (self.c * self.kh), q / self.kh % self.c, q % self.kh);
            (q * self.kw, (i * self.o + oc) * self.row_taps() + ch * self.kw)
        })
    }

    /// The weight `[o, c, kh, kw]` as `kh` matrices `[o, c·kw]`, one per kernel row.
    pub(super) fn weight_by_rows(&self, weight: &[f32]) -> Vec<f32> {
        let mut w = vec![0f32; weight.len()];
        for (at, by_rows) in self.row_runs() {
            w[by_rows..][..self.kw].copy_from_slice(&weight[at..][..self.kw]);
        }
        w
    }

    /// The transpose of [`Self::weight_by_rows`].
    pub(super) fn weight_from_rows(&self, w: &[f32]) -> Vec<f32> {
        let mut weight = vec![0f32; w.len()];
        for (at, by_rows) in self.row_runs() {
            weight[at..][..self.kw].copy_from_slice(&w[by_rows..][..self.kw]);
        }
        weight
    }

    /// One padded sample `xp` `[c, hp, wp]` unrolled by rows into `u` `[c·kw, hp·wo]`:
    /// row (channel, j) is the plane's columns `j..j + wo`, row after row.
    fn unroll_rows(&self, xp: &[f32], u: &mut [f32]) {
        let (hp, wp, (_, wo)) = (self.hp(), self.wp(), self.out_hw());
        for (r, row) in u.chunks_exact_mut(hp * wo).enumerate() {
            let (ch, j) = (r / self.kw, r % self.kw);
            let plane = &xp[ch * hp * wp..][..hp * wp];
            for (dst, src) in row.chunks_exact_mut(wo).zip(plane.chunks_exact(wp)) {
                copy_short(dst, &src[j..j + wo]);
            }
        }
    }

    /// The transpose of [`Self::unroll_rows`]: `du` summed onto the padded sample `dxp`.
    fn fold_rows(&self, du: &[f32], dxp: &mut [f32]) {
        let (hp, wp, (_, wo)) = (self.hp(), self.wp(), self.out_hw());
        for (r, row) in du.chunks_exact(hp * wo).enumerate() {
            let (ch, j) = (r / self.kw, r % self.kw);
            let plane = &mut dxp[ch * hp * wp..][..hp * wp];
            for (src, dst) in row.chunks_exact(wo).zip(plane.chunks_exact_mut(wp)) {
                add_short(&mut dst[j..j + wo], src);
            }
        }
    }
}

/// `dst = src` for short runs (an output row, 4 to 24 floats in ANTs): as one or two
/// fixed-size moves, overlapping where the length is between sizes. A loop of element or
/// block copies compiles to a call of `memcpy` per run, which on 8-float runs cost more
/// than the copying (`perf`: 2% of an mnist-a epoch in `memmove` under the unrolling).
fn copy_short(dst: &mut [f32], src: &[f32]) {
    fn fixed<const N: usize>(dst: &mut [f32], src: &[f32]) {
        let n = dst.len();
        let head: &[f32; N] = src[..N].try_into().unwrap();
        let tail: &[f32; N] = src[n - N..n].try_into().unwrap();
        dst[..N].copy_from_slice(head);
        dst[n - N..].copy_from_slice(tail);
    }
    assert_eq!(dst.len(), src.len());
    match dst.len() {
        16.. => dst.copy_from_slice(src),
        8..16 => fixed::<8>(dst, src),
        4..8 => fixed::<4>(dst, src),
        2..4 => fixed::<2>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// `dst += src`, elementwise.
fn add_short(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += s;
    }
}

/// The convolution of the group of samples from `first` added to `out` (as many as
/// `out` holds, each holding its bias); `wr`: the weight in
/// [`ConvShape::weight_by_rows`]'s layout.
pub(super) fn forward(s: &ConvShape, x: &[f32], wr: &[f32], first: usize, out: &mut [f32], sc: &mut Scratch) {
    let (ho, wo) = s.out_hw();
    let (hpwo, ckw, l) = (s.hp() * wo, s.row_taps(), ho * wo);
    for (b, out) in out.chunks_exact_mut(s.o * l).enumerate() {
        let xp = s.padded(x, first + b, 1, &mut sc.padded);
        let u = sized(&mut sc.cols, ckw * hpwo);
        s.unroll_rows(xp, u);
        for i in 0..s.kh {
            // outᵀ [positions, o] += U_iᵀ [positions, c·kw] · W_iᵀ [c·kw, o]
            let w_i = Mat::row_major(&wr[i * s.o * ckw..][..s.o * ckw], s.o, ckw);
            gemm_strided(out, [1, l], s.shifted(u, i).t(), w_i.t(), true);
        }
    }
}

/// The gradients of the group of samples `first..first + group` for the output gradient
/// `grad`: their input gradient written into `dx` (that slice of it) if asked, their
/// weight gradient returned (in [`ConvShape::weight_by_rows`]'s layout) if `need_w`.
pub(super) fn grads(
    s: &ConvShape,
    (x, wr, grad): (&[f32], &[f32], OutGrad),
    (first, group): (usize, usize),
    mut dx: Option<&mut [f32]>,
    (need_w, mut sums): (bool, Option<&mut Vec<f32>>),
    sc: &mut Scratch,
) -> Option<Vec<f32>> {
    let (ho, wo) = s.out_hw();
    let (hpwo, ckw, l, plane) = (s.hp() * wo, s.row_taps(), ho * wo, s.c * s.h * s.w);
    let mut dw = need_w.then(|| vec![0f32; wr.len()]);
    for b in first..(first + group).min(s.n) {
        let full = grad.samples(s, b, 1, &mut sc.full);
        plane_sums(full, l, sums.as_deref_mut());
        let g = Mat::row_major(full, s.o, l);
        let u = sized(&mut sc.cols, ckw * hpwo);
        if let Some(dw) = dw.as_deref_mut() {
            let xp = s.padded(x, b, 1, &mut sc.padded);
            s.unroll_rows(xp, u);
            for i in 0..s.kh {
                // dW_i [o, c·kw] += G [o, positions] · U_iᵀ [positions, c·kw]: the gemm packs
                // G and reads U in place (as U_i on the left it packed all of U per row).
                gemm_strided(&mut dw[i * s.o * ckw..][..s.o * ckw], [ckw, 1], g, s.shifted(u, i).t(), true);
            }
        }
        if let Some(dx) = dx.as_deref_mut() {
            // Kernel row 0's gemm writes the first `l` columns of each row of dU; the other
            // rows add onto runs shifted by `wo`, so only the columns after those start at 0.
            for row in u.chunks_exact_mut(hpwo) {
                row[l..].fill(0.0);
            }
            for i in 0..s.kh {
                // dU_iᵀ [positions, c·kw] (+)= Gᵀ [positions, o] · W_i [o, c·kw]
                let w_i = Mat::row_major(&wr[i * s.o * ckw..][..s.o * ckw], s.o, ckw);
                gemm_strided(&mut u[i * wo..], [1, hpwo], g.t(), w_i, i > 0);
            }
            let dx = &mut dx[(b - first) * plane..][..plane];
            if s.pad == [0, 0] {
                s.fold_rows(u, dx);
            } else {
                let dxp = sized(&mut sc.folded, s.c * s.hp() * s.wp());
                dxp.fill(0.0);
                s.fold_rows(u, dxp);
                s.crop(dxp, dx);
            }
        }
    }
    dw
}
