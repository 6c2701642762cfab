//! Seeds: one reproducible stream per optimisation and per draw of initial weights, so
//! a resumed run draws exactly what the uninterrupted one drew.

use crate::observe::CandidateKind;

/// `sub_seed` streams of the seeds for initial weights.
pub(crate) const INIT_ROOT: u64 = 16;
pub(crate) const INIT_SPLIT: u64 = 17;
pub(crate) const INIT_DEEPEN: u64 = 18;
/// `sub_seed` stream of refinement's shuffles.
pub(crate) const REFINE_SHUFFLE: u64 = 3;
/// `sub_seed` stream of ensemble members' seeds (the "node" is the member's index).
const ENSEMBLE_MEMBER: u64 = 19;

/// The seed of ensemble member `k` of a run seeded with `run_seed`: the one place it is
/// derived. The member trains with it (initial weights, shuffles, its order of the
/// training rows and so its validation rows); the test split stays the run's.
pub(crate) fn member_seed(run_seed: u64, k: usize) -> u64 {
    sub_seed(run_seed, k, ENSEMBLE_MEMBER)
}

/// `sub_seed` stream of a candidate's shuffles (fixed: runs and checkpoints depend on it).
pub(crate) fn shuffle_stream(kind: CandidateKind) -> u64 {
    match kind {
        CandidateKind::Root => 0,
        CandidateKind::Split => 1,
        CandidateKind::Deepen => 2,
        CandidateKind::Continue => 3,
    }
}

/// A distinct, reproducible seed for each optimisation.
pub(crate) fn sub_seed(seed: u64, node: usize, kind: u64) -> u64 {
    let mut z = seed ^ ((node as u64) << 8 | kind).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 31)
}
