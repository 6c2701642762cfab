//! An optimisation between two epochs ([`LoopState`]) and at its end ([`Fitted`]):
//! what [`fit`](super::fit) advances and what checkpoints save and restore.

use burn::module::Module;

use super::adam::{Adam, adam};
pub use crate::choices::Select;

/// Everything an optimisation carries from one epoch to the next.
pub struct LoopState<M> {
    pub model: M,
    pub optim: Adam,
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

    /// Count an epoch that scored (`nll`, `metric`) on validation; `select` says which
    /// score decides whether it is the best so far.
    pub fn scored(&mut self, nll: f64, metric: f64, select: Select) {
        self.epoch += 1;
        if is_better((self.best_nll, self.best_metric), (nll, metric), select) {
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

/// Whether validation scores `now` (NLL, metric) beat `best` under `select`.
fn is_better(best: (f64, f64), now: (f64, f64), select: Select) -> bool {
    let ((best_nll, best_metric), (nll, metric)) = (best, now);
    match select {
        Select::Nll => nll < best_nll,
        // Errors move in steps of one sample: ties go to the lower NLL. A start
        // without a metric (NaN) is beaten by any finite epoch.
        Select::Metric => {
            metric < best_metric
                || (metric == best_metric && nll < best_nll)
                || (best_metric.is_nan() && nll.is_finite())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The epochs' (NLL, error) on validation; the best under each rule.
    fn best_epoch(scores: &[(f64, f64)], select: Select, start: Option<(f64, f64)>) -> usize {
        let (mut best, mut best_at) = (start.unwrap_or((f64::INFINITY, f64::NAN)), 0);
        for (e, &(nll, metric)) in scores.iter().enumerate() {
            if is_better(best, (nll, metric), select) {
                best = (nll, metric);
                best_at = e + 1;
            }
        }
        best_at
    }

    #[test]
    fn nll_and_error_pick_different_epochs() {
        // Epoch 2 has the lowest NLL, epoch 3 the lowest error, epoch 4 ties epoch 3's
        // error with a lower NLL.
        let scores = [(0.30, 0.05), (0.20, 0.04), (0.25, 0.03), (0.22, 0.03), (0.21, 0.06)];
        assert_eq!(best_epoch(&scores, Select::Nll, None), 2);
        assert_eq!(best_epoch(&scores, Select::Metric, None), 4);
        // A start that no epoch beats keeps the start (0 = none).
        assert_eq!(best_epoch(&scores, Select::Nll, Some((0.1, 0.5))), 0);
        assert_eq!(best_epoch(&scores, Select::Metric, Some((0.9, 0.01))), 0);
        // A start beaten on error but not on NLL: only `Metric` moves.
        assert_eq!(best_epoch(&scores, Select::Nll, Some((0.15, 0.035))), 0);
        assert_eq!(best_epoch(&scores, Select::Metric, Some((0.15, 0.035))), 4);
    }
}
