//! 2×2, stride-2 max-pooling of one plane on the CPU, with the argmax of each window in
//! the form its caller keeps: burn's index in the plane (`max_pool2x2` beside burn's own
//! backward pass), or the cell of the window (the convolution pooled in one op, whose
//! backward pass is ant's).

/// Where a window's maximum lies.
pub(super) trait WindowArg: Copy + Send + Sync {
    /// The argmax for `cell` (0..4, the window's cells in row-major order) of the window
    /// whose first cell is at `at` in a plane `w` wide.
    fn of(at: usize, cell: usize, w: usize) -> Self;
}

/// burn's: `row · w + column` in the plane.
impl WindowArg for i64 {
    fn of(at: usize, cell: usize, w: usize) -> i64 {
        (at + cell / 2 * w + cell % 2) as i64
    }
}

/// The window's cell, 0..4 in row-major order.
impl WindowArg for u8 {
    fn of(_: usize, cell: usize, _: usize) -> u8 {
        cell as u8
    }
}

/// One plane (`w` wide) pooled into `out` (`wo = w / 2` wide; odd edges dropped), with
/// the argmax in `ix` when given. The cells of a window are taken in row-major order and
/// one replaces the best so far when it is greater or NaN: the first maximum wins, a NaN
/// wins over any number and the last NaN over earlier ones (burn-flex's ties and NaNs).
/// Written as selects on whole rows so that the loops compile to vector compares and
/// blends (branches on which cell wins, a coin toss on real activations, made a scalar
/// loop 3x slower on random data than on sorted).
pub(super) fn pool_plane<I: WindowArg>(plane: &[f32], w: usize, out: &mut [f32], mut ix: Option<&mut [I]>) {
    let wo = w / 2;
    let take = |v: f32, best: f32| (v > best) | v.is_nan();
    for (y, o) in out.chunks_exact_mut(wo.max(1)).enumerate() {
        let (r0, r1) = (&plane[2 * y * w..][..2 * wo], &plane[(2 * y + 1) * w..][..2 * wo]);
        match ix.as_deref_mut() {
            None => {
                for (x, o) in o.iter_mut().enumerate() {
                    let mut best = r0[2 * x];
                    for v in [r0[2 * x + 1], r1[2 * x], r1[2 * x + 1]] {
                        best = if take(v, best) { v } else { best };
                    }
                    *o = best;
                }
            }
            Some(ix) => {
                let ix = &mut ix[y * wo..][..wo];
                for (x, (o, ix)) in o.iter_mut().zip(ix).enumerate() {
                    let at = 2 * y * w + 2 * x;
                    let (mut best, mut arg) = (r0[2 * x], I::of(at, 0, w));
                    for (cell, v) in [(1, r0[2 * x + 1]), (2, r1[2 * x]), (3, r1[2 * x + 1])] {
                        let t = take(v, best);
                        best = if t { v } else { best };
                        arg = if t { I::of(at, cell, w) } else { arg };
                    }
                    *o = best;
                    *ix = arg;
                }
            }
        }
    }
}

/// The transpose of [`pool_plane`] with cells as argmaxes: each of `grad`'s values (a
/// pooled plane's gradient, `w / 2` wide) added onto `plane`'s cell (`w` wide) that
/// `cell` names.
pub(super) fn unpool_plane(grad: &[f32], cell: &[u8], w: usize, plane: &mut [f32]) {
    let wo = (w / 2).max(1);
    for (q, (&g, &c)) in grad.iter().zip(cell).enumerate() {
        let (y, x, c) = (q / wo, q % wo, c as usize);
        plane[(2 * y + c / 2) * w + 2 * x + c % 2] += g;
    }
}
