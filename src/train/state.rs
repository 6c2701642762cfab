//! An optimisation between two epochs ([`LoopState`]) and at its end ([`Fitted`]):
//! what [`fit`](super::fit) advances and what checkpoints save and restore.

use burn::module::Module;
use burn::optim::{AdamConfig, ModuleOptimizer};

/// Adam with PyTorch's epsilon (burn's default is 1e-5).
pub fn adam() -> AdamConfig {
    AdamConfig::new().with_epsilon(1e-8)
}

/// Everything an optimisation carries from one epoch to the next.
pub struct LoopState<M> {
    pub model: M,
    pub optim: ModuleOptimizer,
    /// The weights of the best validation epoch so far (`None`: none beat the start).
    pub best: Option<M>,
    pub best_nll: f64,
    pub best_metric: f64,
    /// Epochs since the best one.
    pub since_best: usize,
    /// Epochs completed.
    pub epoch: usize,
}

/// The outcome: the best-validation model and its scores.
pub struct Fitted<M> {
    pub model: M,
    pub valid_nll: f64,
    pub valid_metric: f64,
    pub epochs: usize,
    /// Whether any epoch beat the starting point given to [`fit`](super::fit).
    pub improved: bool,
}

impl<M: Module> LoopState<M> {
    /// Before the first epoch; `start` is the (validation NLL, metric) to beat.
    pub fn fresh(model: M, start: Option<(f64, f64)>) -> Self {
        let (best_nll, best_metric) = start.unwrap_or((f64::INFINITY, f64::NAN));
        LoopState {
            model,
            optim: adam().init(),
            best: None,
            best_nll,
            best_metric,
            since_best: 0,
            epoch: 0,
        }
    }

    /// Count an epoch that scored (`nll`, `metric`) on validation.
    pub fn scored(&mut self, nll: f64, metric: f64) {
        self.epoch += 1;
        if nll < self.best_nll {
            self.best_nll = nll;
            self.best_metric = metric;
            self.best = Some(self.model.clone());
            self.since_best = 0;
        } else {
            self.since_best += 1;
        }
    }

    /// The best weights (or the last, when no epoch beat the start) and their scores.
    pub fn into_fitted(self) -> Fitted<M> {
        Fitted {
            improved: self.best.is_some(),
            model: self.best.unwrap_or(self.model),
            valid_nll: self.best_nll,
            valid_metric: self.best_metric,
            epochs: self.epoch,
        }
    }
}
