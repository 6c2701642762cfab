//! What a growth candidate trains on at a leaf: every training row run through the
//! frozen tree, cached within a memory budget and run again on each batch beyond it.
//!
//! A row's inputs are the frozen tree's output either way, equal up to float rounding:
//! the `gemm` crate picks its blocking and kernel by a product's size, so a layer wider
//! than 512 inputs can sum a row in another order in a call of 64 rows than in one of
//! 1,024. A budget that caches every row gives the results it always gave; a smaller
//! one can change a tree the way another CPU does (`tests/growth.rs`).

use std::cell::OnceCell;

use burn::prelude::*;

use super::candidate::{Candidate, LeafCache, validate_cached};
use super::device_set::{DeviceSet, Inputs};
use super::eval::MetricCtx;
use super::optimise::{Batch, EpochOnDevice, Objective};
use crate::modules::{Repr, index_tensor};
use crate::task::Task;
use crate::tree::TreeView;
use crate::tree::router::RouterReg;

/// Sets growth's cache budget in MiB, e.g. `ANT_GROWTH_CACHE_MB=0` to run the frozen
/// tree on every batch instead (the least memory, growth's slowest).
pub const CACHE_ENV: &str = crate::env::GROWTH_CACHE_MB;

/// What growth may cache at a leaf (its validation and training rows run through the
/// frozen tree): [`CACHE_ENV`] when set, else a quarter of the machine's memory (its
/// RAM or its control group's limit: fixed, so a resumed run caches what it did) or of
/// what an address-space limit (`ulimit -v`) leaves, or
/// the training inputs' `data_bytes` where that is not known. On mnist-a (54,000 rows of
/// 23 KB after the root's transformer, 6.6 times the images), caching every row rather
/// than 256 MiB took growth from 738 to 537 s and its peak from 0.79 to 1.74 GB.
pub fn growth_cache_budget(data_bytes: usize) -> crate::error::Result<usize> {
    let bad = |v: &str| {
        crate::error::AntError::param(format!("{CACHE_ENV} must be a whole number of MiB, not {v:?}"))
    };
    match crate::env::growth_cache_mb() {
        Ok(Some(v)) => {
            let digits = v.trim();
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&v));
            }
            // More MiB than memory can hold is no limit.
            let mb = digits.parse::<usize>().unwrap_or(usize::MAX);
            Ok(mb.saturating_mul(1 << 20))
        }
        Err(v) => Err(bad(&v)),
        // A quarter of the memory, and of what an address-space limit leaves: the
        // cache shrinks to fit under `ulimit -v` rather than abort there.
        Ok(None) => {
            let sizes = [crate::os::memory_size(), crate::os::address_space_left()];
            Ok(match sizes.into_iter().flatten().min() {
                Some(size) => usize::try_from(size / 4).unwrap_or(usize::MAX),
                None => data_bytes,
            })
        }
    }
}

/// Bytes a cached row of a leaf whose representation has `floats` scalars holds: the
/// representation, its log reach and the other leaves' log-likelihood and prediction.
pub fn cached_row_bytes(floats: usize, task: Task) -> usize {
    let outputs = match task {
        Task::Classification { classes } => classes,
        Task::Regression { dim } => dim,
    };
    4 * (floats + 2 + outputs)
}

/// A leaf's training inputs: rows `0..cached` run through the frozen tree once, the first
/// time a batch needs them (a resumed run replays its finished candidates without running
/// the tree), the others on each batch that draws them.
pub struct LeafInputs<'a> {
    /// The frozen tree; `None` at the root of an empty tree (the inputs are the data).
    frozen: Option<TreeView<'a>>,
    set: &'a DeviceSet,
    leaf: usize,
    task: Task,
    cached: usize,
    cache: OnceCell<LeafCache>,
}

impl<'a> LeafInputs<'a> {
    /// The inputs at `leaf` of `frozen` (the root of an empty tree: `None`), caching as
    /// many rows as `budget` bytes hold. Augmented rows change every epoch: none cached.
    pub fn new(
        frozen: Option<TreeView<'a>>,
        set: &'a DeviceSet,
        leaf: usize,
        task: Task,
        budget: usize,
    ) -> Self {
        let cached = match (frozen, &set.augment) {
            (_, Some(_)) => 0,
            // Images kept as bytes are made into values per batch: a cache of them would
            // hold the values of every row, which keeping bytes spares.
            (None, None) if matches!(set.x, Inputs::HostBytes(_)) => 0,
            // The data itself: caching it costs nothing.
            (None, None) => set.n,
            (Some(tree), None) => {
                let floats = tree.topology.shape_at(leaf).numel();
                (budget / cached_row_bytes(floats, task)).min(set.n)
            }
        };
        LeafInputs {
            frozen,
            set,
            leaf,
            task,
            cached,
            cache: OnceCell::new(),
        }
    }

    /// Training rows.
    pub fn n(&self) -> usize {
        self.set.n
    }

    /// Rows kept in the cache.
    #[cfg(any(test, feature = "internals"))]
    pub fn cached_rows(&self) -> usize {
        self.cached
    }

    /// Whether the cached rows have been run through the tree yet.
    #[cfg(any(test, feature = "internals"))]
    pub fn computed(&self) -> bool {
        self.cache.get().is_some()
    }

    fn device(&self) -> Device {
        self.set.y.device()
    }

    /// The frozen tree run over `set` (without autodiff).
    fn run(&self, set: &DeviceSet) -> LeafCache {
        match self.frozen {
            Some(tree) => LeafCache::compute(tree, set, self.leaf, self.task, super::EVAL_CHUNK),
            None => LeafCache::for_root(set),
        }
    }

    fn cache(&self) -> &LeafCache {
        self.cache.get_or_init(|| {
            let k = self.cached;
            // The first k rows, read chunk by chunk: images kept as bytes are not made
            // into values all at once.
            self.run(&DeviceSet::of_inputs(self.set.x.clone(), self.set.y.narrow(0, k), k))
        })
    }

    /// The inputs of `batch`'s rows, in its order.
    pub fn batch(&self, batch: &Batch) -> LeafCache {
        let k = self.cached;
        if batch.rows.iter().all(|&r| r < k) {
            return self.cache().select(batch.on_device.clone());
        }
        if k == 0 || batch.rows.iter().all(|&r| r >= k) {
            return self.run(&self.set.batch(batch));
        }
        // Cached rows then the others, put back in the batch's order.
        let (hit, miss): (Vec<usize>, Vec<usize>) = batch.rows.iter().partition(|&&r| r < k);
        let device = self.device();
        let cached = self.cache().select(index_tensor(&hit, &device));
        let fresh = self.run(&self.set.batch(&Batch::upload(&miss, &device)));
        let (mut next_hit, mut next_miss) = (0, hit.len());
        let order: Vec<usize> = batch
            .rows
            .iter()
            .map(|&r| {
                let slot = if r < k { &mut next_hit } else { &mut next_miss };
                *slot += 1;
                *slot - 1
            })
            .collect();
        LeafCache::cat(cached, fresh).select(index_tensor(&order, &device))
    }

    /// The first `n` rows' representations (to centre a router on).
    pub fn first(&self, n: usize) -> Repr {
        let n = n.min(self.set.n);
        if n <= self.cached {
            return self.cache().h.narrow(0, n);
        }
        let rows: Vec<usize> = (0..n).collect();
        let set = self.set.batch(&Batch::upload(&rows, &self.device()));
        self.run(&set).h
    }
}

/// Trains a candidate at a leaf: the training rows from [`LeafInputs`], the validation
/// rows from their cache.
pub struct LeafObjective<'a> {
    pub train: &'a LeafInputs<'a>,
    pub valid: &'a LeafCache,
    pub metric: &'a MetricCtx,
    pub chunk: usize,
    /// Extra terms on a split's router in the training loss.
    pub router_reg: RouterReg,
}

impl<C: Candidate> Objective<C> for LeafObjective<'_> {
    fn n_train(&self) -> usize {
        self.train.n()
    }
    fn device(&self) -> Device {
        self.train.device()
    }
    fn upload_epoch(&self, order: &[usize]) -> EpochOnDevice {
        self.train.set.upload_epoch(order)
    }
    fn batch_loss(&self, model: &C, batch: &Batch) -> Tensor<1> {
        self.train.batch(batch).loss(model, self.router_reg)
    }
    fn validate(&self, model: &C) -> (f64, f64) {
        validate_cached(model, self.valid, self.metric, self.chunk)
    }
}
