//! A convolution then 2×2, stride-2 max-pooling, as one op (ANTs' `conv + ReLU + pool`
//! edges: the ReLU commutes with the pooling and runs after it). Each chunk of samples is
//! convolved into scratch and pooled from there, so the full-size output, the biggest
//! tensor of a step (the data's layer: 40 × 24 × 24 floats a sample in mnist-a, four
//! times what comes out), is neither written to memory nor kept for the backward pass.
//! That pass makes each group's output gradient from the pooled one and the cell each
//! maximum came from ([`OutGrad::Pooled`]). The chunks, groups, gemms and sums are those
//! of the convolution and the pooling one after the other: the same bits.

use rayon::prelude::*;

use super::{ConvGradients, ConvShape, Layout, OutGrad, Unrolled, conv2d_grads_in, patches, rows, sized, with_scratch};
use crate::ops::cpu_pool::pool_plane;

/// The convolution of `x` by `weight` plus `bias` (an output of 2 × 2 or more), pooled:
/// `[n, o, ho / 2, wo / 2]`, and if `with_cells` the cell (0..4, row-major) of each
/// window its maximum came from (else an empty vector).
pub fn conv2d_pool2x2(s: &ConvShape, x: &[f32], weight: &[f32], bias: &[f32], with_cells: bool) -> (Vec<f32>, Vec<u8>) {
    conv2d_pool2x2_in(s.layout(), s, (x, weight, bias), with_cells)
}

/// [`conv2d_pool2x2`] in the given layout.
fn conv2d_pool2x2_in(layout: Layout, s: &ConvShape, (x, weight, bias): (&[f32], &[f32], &[f32]), with_cells: bool) -> (Vec<f32>, Vec<u8>) {
    assert!(s.valid() && x.len() == s.n * s.c * s.h * s.w && weight.len() == s.o * s.taps());
    let (ho, wo) = s.out_hw();
    assert!(bias.len() == s.o && ho >= 2 && wo >= 2);
    // Floats of a sample's full-size and pooled outputs.
    let (l, lq) = (ho * wo, (ho / 2) * (wo / 2));
    let sample = s.o * lq;
    let unrolled = s.unrolled(weight, layout);
    let group = s.group(&unrolled);
    // Samples per call of the layout's forward pass: what the unpooled op convolves at once.
    let per = match &unrolled {
        Unrolled::Patches(_, pos) => s.chunk(*pos),
        Unrolled::Rows(_) => 1,
    };
    let mut out = vec![0f32; s.n * sample];
    let mut cells = vec![0u8; if with_cells { out.len() } else { 0 }];
    let cell_groups: Vec<Option<&mut [u8]>> = match with_cells {
        true => cells.chunks_mut(group * sample).map(Some).collect(),
        false => out.chunks(group * sample).map(|_| None).collect(),
    };
    let groups = out.par_chunks_mut(group * sample).zip(cell_groups);
    groups.enumerate().for_each(|(gi, (out, mut cells))| {
        with_scratch(|sc| {
            let mut full = std::mem::take(&mut sc.full);
            for (k, out) in out.chunks_mut(per * sample).enumerate() {
                let conv = sized(&mut full, out.len() / lq * l);
                for (plane, &b) in conv.chunks_exact_mut(l).zip(bias.iter().cycle()) {
                    plane.fill(b);
                }
                let first = gi * group + k * per;
                match &unrolled {
                    Unrolled::Patches(w, pos) => patches::forward(s, *pos, x, w, first, conv, sc),
                    Unrolled::Rows(w) => rows::forward(s, x, w, first, conv, sc),
                }
                for (p, (plane, out)) in conv.chunks_exact(l).zip(out.chunks_exact_mut(lq)).enumerate() {
                    let cells = cells.as_deref_mut().map(|c| &mut c[k * per * sample + p * lq..][..lq]);
                    pool_plane(plane, wo, out, cells);
                }
            }
            sc.full = full;
        })
    });
    (out, cells)
}

/// The gradients of [`conv2d_pool2x2`] for the pooled output's gradient `grad` and the
/// cells it returned, each only where `need` ([input, weight, bias]) asks for it.
pub fn conv2d_pool2x2_grads(
    s: &ConvShape,
    x: &[f32],
    weight: &[f32],
    (grad, cells): (&[f32], &[u8]),
    need: [bool; 3],
) -> ConvGradients {
    conv2d_grads_in(s.layout(), s, x, weight, OutGrad::Pooled(grad, cells), need)
}

#[cfg(test)]
mod tests {
    use super::super::{ConvShape, Layout, OutGrad, conv2d_grads_in, conv2d_in};
    use super::conv2d_pool2x2_in;
    use crate::ops::cpu_pool::pool_plane;

    fn data(n: usize, k: usize) -> Vec<f32> {
        (0..n).map(|i| ((i * k + 11) % 23) as f32 / 11.0 - 1.0).collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|v| v.to_bits()).collect()
    }

    /// In every layout, the pooled op's output and gradients are bit for bit the
    /// convolution's pooled by burn's rule and its gradients for the pooled gradient
    /// scattered back to each window's maximum: odd outputs (an edge dropped), padding,
    /// one channel and several, batches of several groups with a short last one, ties
    /// (the inputs take 23 values), and every subset of gradients.
    #[test]
    fn pooled_convolution_is_the_convolution_then_the_pooling() {
        let shapes = [
            ConvShape { n: 37, c: 1, h: 28, w: 28, o: 4, kh: 5, kw: 5, pad: [0, 0] },
            ConvShape { n: 5, c: 3, h: 9, w: 8, o: 6, kh: 3, kw: 3, pad: [1, 1] },
            ConvShape { n: 21, c: 8, h: 12, w: 11, o: 5, kh: 5, kw: 4, pad: [2, 1] },
            ConvShape { n: 3, c: 2, h: 3, w: 4, o: 2, kh: 2, kw: 2, pad: [0, 0] },
        ];
        for s in shapes {
            let (ho, wo) = s.out_hw();
            let (l, lq) = (ho * wo, (ho / 2) * (wo / 2));
            let (x, w, b) = (data(s.n * s.c * s.h * s.w, 37), data(s.o * s.taps(), 5), data(s.o, 3));
            let g = data(s.n * s.o * lq, 13);
            for layout in [Layout::Grid, Layout::Exact, Layout::Rows] {
                let what = format!("{layout:?} {s:?}");
                let conv = conv2d_in(layout, &s, &x, &w, &b);
                let (mut pooled, mut at) = (vec![0f32; g.len()], vec![0i64; g.len()]);
                for (p, plane) in conv.chunks_exact(l).enumerate() {
                    pool_plane(plane, wo, &mut pooled[p * lq..][..lq], Some(&mut at[p * lq..][..lq]));
                }
                let (out, cells) = conv2d_pool2x2_in(layout, &s, (&x, &w, &b), true);
                let (alone, none) = conv2d_pool2x2_in(layout, &s, (&x, &w, &b), false);
                assert!(bits(&alone) == bits(&out) && none.is_empty(), "without cells {what}");
                assert_eq!(bits(&out), bits(&pooled), "output {what}");
                // The unpooled gradient: burn's scatter of `g` to the windows' maxima.
                let mut full = vec![0f32; conv.len()];
                for (p, (&g, &at)) in g.iter().zip(&at).enumerate() {
                    full[p / lq * l + at as usize] += g;
                }
                for need in [[true; 3], [false, true, false], [true, false, false], [false, false, true]] {
                    let want = conv2d_grads_in(layout, &s, &x, &w, OutGrad::Full(&full), need);
                    let got = conv2d_grads_in(layout, &s, &x, &w, OutGrad::Pooled(&g, &cells), need);
                    for (k, (a, b)) in [(got.x, want.x), (got.weight, want.weight), (got.bias, want.bias)].into_iter().enumerate() {
                        assert_eq!(a.as_deref().map(bits), b.as_deref().map(bits), "gradient {k} {need:?} {what}");
                    }
                }
            }
        }
    }
}
