//! Growth, refinement and the optimisation loop they share.
mod augment;
mod candidate;
mod checkpoint;
mod eval;
mod fit;
mod growth;
mod refine;
mod seed;

pub use augment::{Augment, Augmenter};
pub use candidate::{
    CachedObjective, Candidate, DeepenCandidate, DeviceSet, LeafCache, LiveObjective, RouterReg,
    SplitCandidate,
};
pub use checkpoint::{Checkpoints, ResumedLoop, Start};
pub use eval::{MetricCtx, TreeObjective, chunks, evaluate};
pub use fit::{FitOptions, Fitted, Objective, adam, fit, index_tensor};
pub use growth::{EVAL_CHUNK, Grown, GrowthData, grow, grow_from, train_root};
pub use refine::refine;
