//! Seeds: one reproducible stream per optimisation and per draw of initial weights, so
//! a resumed run draws exactly what the uninterrupted one drew.

use crate::observe::CandidateKind;
pub(crate) use crate::seed::sub_seed;

/// `sub_seed` streams of the seeds for initial weights.
pub(crate) const INIT_ROOT: u64 = 16;
pub(crate) const INIT_SPLIT: u64 = 17;
pub(crate) const INIT_DEEPEN: u64 = 18;
/// `sub_seed` stream of refinement's shuffles.
pub(crate) const REFINE_SHUFFLE: u64 = 3;
/// `sub_seed` stream of a candidate's shuffles (fixed: runs and checkpoints depend on it).
pub(crate) fn shuffle_stream(kind: CandidateKind) -> u64 {
    match kind {
        CandidateKind::Root => 0,
        CandidateKind::Split => 1,
        CandidateKind::Deepen => 2,
        CandidateKind::Continue => 3,
    }
}

