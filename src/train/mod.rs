//! Growth, refinement and the optimisation loop they share.
mod augment;
mod candidate;
mod checkpoint;
mod eval;
mod fit;
mod growth;
mod refine;
mod seed;
mod state;

pub use augment::{Augment, Augmenter};
pub use candidate::{
    CachedObjective, Candidate, DeepenCandidate, DeviceSet, LeafCache, LiveObjective, RouterReg,
    SplitCandidate,
};
pub use checkpoint::{Checkpoints, Start};
pub use eval::{MetricCtx, TreeObjective, chunks, evaluate};
pub use fit::{FitOptions, Objective, fit};
pub use growth::{EVAL_CHUNK, Grown, GrowthData, grow, grow_from, train_root};
pub use refine::refine;
pub use state::{Fitted, LoopState, adam};
