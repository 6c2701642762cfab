//! Seed derivation: one reproducible stream per purpose (each optimisation, each draw
//! of initial weights, each ensemble member), so a resumed run draws exactly what the
//! uninterrupted one drew. The streams themselves are named in `train/seed.rs`.

/// `sub_seed` stream of ensemble members' seeds (the "node" is the member's index).
const ENSEMBLE_MEMBER: u64 = 19;

/// The seed of ensemble member `k` of a run seeded with `run_seed`: the one place it is
/// derived. The member trains with it (initial weights, shuffles, its order of the
/// training rows and so its validation rows); the test split stays the run's.
pub(crate) fn member_seed(run_seed: u64, k: usize) -> u64 {
    sub_seed(run_seed, k, ENSEMBLE_MEMBER)
}

/// A distinct, reproducible seed for each optimisation.
pub(crate) fn sub_seed(seed: u64, node: usize, kind: u64) -> u64 {
    let mut z = seed ^ ((node as u64) << 8 | kind).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 31)
}
