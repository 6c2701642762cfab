//! Training events go out through one observer: progress bars, `records.jsonl` and logs
//! are observers, not prints scattered through the loops.

use serde::{Deserialize, Serialize};

/// One epoch of one optimisation (a growth candidate or refinement).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpochRecord {
    /// "growth" or "refine".
    pub phase: String,
    /// The leaf being grown (growth phase).
    pub node: Option<usize>,
    /// "root", "split" or "deepen" (growth phase).
    pub candidate: Option<String>,
    pub epoch: usize,
    pub train_loss: f64,
    pub valid_loss: f64,
    /// Validation error in percent (classification) or MSE in original units.
    pub valid_metric: f64,
    pub lr: f64,
    pub seconds: f64,
}

/// What happened at one leaf during growth.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Decision {
    pub node: usize,
    pub level: usize,
    /// "split", "deepen" or "keep".
    pub action: String,
    pub valid_before: f64,
    pub valid_after: f64,
    /// Best validation NLL of each candidate tried.
    pub split: Option<f64>,
    pub deepen: Option<f64>,
    /// With inherited initialisation: the parent's solver trained on alone, the bar an
    /// inherited split must clear.
    #[serde(default)]
    pub continued: Option<f64>,
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node {}: {} (valid NLL {:.4} -> {:.4}",
            self.node, self.action, self.valid_before, self.valid_after
        )?;
        let others: Vec<String> = [
            ("split", self.split),
            ("deepen", self.deepen),
            ("continued", self.continued),
        ]
        .iter()
        .filter(|(n, _)| *n != self.action)
        .filter_map(|(n, v)| v.map(|v| format!("{n} {v:.4}")))
        .collect();
        if !others.is_empty() {
            write!(f, "; {}", others.join(", "))?;
        }
        write!(f, ")")
    }
}

/// Receives training events. Every method has a do-nothing default.
pub trait Observer {
    fn phase_start(
        &mut self,
        _phase: &str,
        _node: Option<usize>,
        _candidate: Option<&str>,
        _max_epochs: usize,
    ) {
    }
    /// The phase just started continues an interrupted run after `epochs_done` epochs.
    fn phase_resumed(&mut self, _epochs_done: usize) {}
    fn epoch(&mut self, _record: &EpochRecord) {}
    fn phase_end(&mut self) {}
    fn decision(&mut self, _decision: &Decision) {}
}

/// Ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// Collects every event in memory (tests, reports).
#[derive(Default, Debug)]
pub struct Collect {
    pub epochs: Vec<EpochRecord>,
    pub decisions: Vec<Decision>,
}
impl Observer for Collect {
    fn epoch(&mut self, r: &EpochRecord) {
        self.epochs.push(r.clone());
    }
    fn decision(&mut self, d: &Decision) {
        self.decisions.push(d.clone());
    }
}

/// Forwards every event to several observers.
pub struct Fanout<'a>(pub Vec<&'a mut dyn Observer>);
impl Observer for Fanout<'_> {
    fn phase_start(&mut self, p: &str, n: Option<usize>, c: Option<&str>, m: usize) {
        self.0.iter_mut().for_each(|o| o.phase_start(p, n, c, m));
    }
    fn phase_resumed(&mut self, done: usize) {
        self.0.iter_mut().for_each(|o| o.phase_resumed(done));
    }
    fn epoch(&mut self, r: &EpochRecord) {
        self.0.iter_mut().for_each(|o| o.epoch(r));
    }
    fn phase_end(&mut self) {
        self.0.iter_mut().for_each(|o| o.phase_end());
    }
    fn decision(&mut self, d: &Decision) {
        self.0.iter_mut().for_each(|o| o.decision(d));
    }
}
