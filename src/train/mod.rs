//! Growth, refinement and the optimisation loop they share.
// Without the `internals` feature most of these re-exports serve only the crate.
#![cfg_attr(not(feature = "internals"), allow(unused_imports))]
mod accept;
mod adam;
mod augment;
mod candidate;
mod checkpoint;
mod device_set;
mod eval;
mod optimise;
mod growth;
mod inputs;
mod leaf_inputs;
mod pretrained;
mod refine;
mod seed;
mod setup;
mod state;

pub use accept::{Accept, Gain};
pub use augment::{Augment, Augmenter};
pub use candidate::{Candidate, DeepenCandidate, LeafCache, SplitCandidate, row_log_lik};
pub use leaf_inputs::{CACHE_ENV, LeafInputs, LeafObjective, cached_row_bytes, growth_cache_budget};
pub use checkpoint::{Checkpoints, FailedWrite, Start};
pub use device_set::{DeviceSet, to_device};
pub use eval::{MetricCtx, TreeObjective, chunks, evaluate};
pub use optimise::{Batch, Objective, OptimiseOptions, optimise};
pub use growth::{EVAL_CHUNK, Grown, GrowthData, grow, grow_from, train_root};
pub use pretrained::{Pretrained, StartModel, StartRows};
pub(crate) use pretrained::check_rows as check_start_rows;
pub use refine::{refine, train_fixed};
pub use adam::{Adam, AdamConfig, AdamStateError, adam};
pub use state::{Fitted, LoopState, Select};
pub(crate) use setup::{Trained, check_start, check_training_data, train};
pub use setup::missing_classes_warning;
