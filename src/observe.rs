//! Training events go out through one observer: progress bars, `records.jsonl` and logs
//! are observers, not prints scattered through the loops.

use serde::{Deserialize, Serialize};

use crate::digits::decimals;

/// The two phases of training.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Growth,
    Refine,
}

/// What a growth optimisation trains at a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateKind {
    /// The first transformer and solver of the tree.
    Root,
    /// A router and two new leaves.
    Split,
    /// A transformer and a new solver.
    Deepen,
    /// The parent's solver trained on alone: the bar an inherited split must clear.
    Continue,
}

/// The decision taken at a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Split,
    Deepen,
    Keep,
}

/// One optimisation of a run: a candidate at a leaf during growth, or refinement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Growth {
        node: usize,
        candidate: CandidateKind,
    },
    Refine,
}

impl Phase {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::Growth => "growth",
            Phase::Refine => "refine",
        }
    }
}

impl CandidateKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CandidateKind::Root => "root",
            CandidateKind::Split => "split",
            CandidateKind::Deepen => "deepen",
            CandidateKind::Continue => "continue",
        }
    }
}

impl Action {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Action::Split => "split",
            Action::Deepen => "deepen",
            Action::Keep => "keep",
        }
    }
}

macro_rules! display_as_str {
    ($($t:ty),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
display_as_str!(Phase, CandidateKind, Action);

impl Stage {
    pub fn phase(self) -> Phase {
        match self {
            Stage::Growth { .. } => Phase::Growth,
            Stage::Refine => Phase::Refine,
        }
    }

    /// The leaf being grown.
    pub fn node(self) -> Option<usize> {
        match self {
            Stage::Growth { node, .. } => Some(node),
            Stage::Refine => None,
        }
    }

    pub fn candidate(self) -> Option<CandidateKind> {
        match self {
            Stage::Growth { candidate, .. } => Some(candidate),
            Stage::Refine => None,
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stage::Growth { node, candidate } => write!(f, "node {node} {}", candidate.as_str()),
            Stage::Refine => f.write_str("refine"),
        }
    }
}

/// One epoch of one optimisation (a growth candidate or refinement).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpochRecord {
    pub phase: Phase,
    /// The leaf being grown (growth phase).
    pub node: Option<usize>,
    /// What is trained at that leaf (growth phase).
    pub candidate: Option<CandidateKind>,
    pub epoch: usize,
    /// Losses and the metric are written as `null` when not finite (JSON has no NaN or
    /// infinity), and read back as NaN.
    #[serde(deserialize_with = "nan_if_null")]
    pub train_loss: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub valid_loss: f64,
    /// Validation error in percent (classification) or MSE in original units.
    #[serde(deserialize_with = "nan_if_null")]
    pub valid_metric: f64,
    pub lr: f64,
    pub seconds: f64,
}

impl EpochRecord {
    /// The line of `records.jsonl` that holds this record, with its newline.
    pub(crate) fn line(&self) -> String {
        serde_json::to_string(self).expect("records serialise") + "\n"
    }
}

/// A number, or NaN for the `null` that serde_json writes for a non-finite one.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// What happened at one leaf during growth.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Decision {
    pub node: usize,
    pub level: usize,
    pub action: Action,
    pub valid_before: f64,
    pub valid_after: f64,
    /// Best validation NLL of each candidate tried.
    pub split: Option<f64>,
    pub deepen: Option<f64>,
    /// With inherited initialisation: the parent's solver trained on alone, the bar an
    /// inherited split must clear.
    #[serde(default)]
    pub continued: Option<f64>,
    /// Each candidate's validation gain over the tree in standard errors of the paired
    /// per-row differences (what `--accept z:Z` compares with Z).
    #[serde(default)]
    pub split_z: Option<f64>,
    #[serde(default)]
    pub deepen_z: Option<f64>,
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "node {}: {} (valid NLL {} -> {}",
            self.node,
            self.action.as_str(),
            decimals(self.valid_before, 4),
            decimals(self.valid_after, 4)
        )?;
        let others: Vec<String> = [
            ("split", self.split),
            ("deepen", self.deepen),
            ("continued", self.continued),
        ]
        .iter()
        .filter(|(n, _)| *n != self.action.as_str())
        .filter_map(|(n, v)| {
            v.map(|v| match v.is_finite() {
                true => format!("{n} {}", decimals(v, 4)),
                // Refused whatever the rule: its training went beyond f32.
                false => format!("{n} diverged, refused (validation NLL {v})"),
            })
        })
        .collect();
        if !others.is_empty() {
            write!(f, "; {}", others.join(", "))?;
        }
        let z = match self.action {
            Action::Split => self.split_z,
            Action::Deepen => self.deepen_z,
            Action::Keep => None,
        };
        if let Some(z) = z {
            write!(f, "; gain {} SE", decimals(z, 1))?;
        }
        write!(f, ")")
    }
}

/// Receives training events. Every method has a do-nothing default.
pub trait Observer {
    fn phase_start(&mut self, _stage: Stage, _max_epochs: usize) {}
    /// The phase just started continues an interrupted run after `epochs_done` epochs.
    fn phase_resumed(&mut self, _epochs_done: usize) {}
    fn epoch(&mut self, _record: &EpochRecord) {}
    fn phase_end(&mut self) {}
    fn decision(&mut self, _decision: &Decision) {}
    /// Something the user should know about the data or the run (e.g. a validation set
    /// without some of the classes).
    fn warning(&mut self, _message: &str) {}
    /// Asked between mini-batches: `true` stops training with [`AntError::Interrupted`]
    /// (e.g. a front end's Ctrl-C). Called often: keep it cheap.
    ///
    /// [`AntError::Interrupted`]: crate::error::AntError::Interrupted
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// Ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// Collects every event in memory (tests, reports).
#[derive(Default, Debug)]
pub struct Collect {
    pub epochs: Vec<EpochRecord>,
    pub decisions: Vec<Decision>,
    pub warnings: Vec<String>,
}
impl Observer for Collect {
    fn epoch(&mut self, r: &EpochRecord) {
        self.epochs.push(r.clone());
    }
    fn decision(&mut self, d: &Decision) {
        self.decisions.push(d.clone());
    }
    fn warning(&mut self, m: &str) {
        self.warnings.push(m.to_string());
    }
}

/// Forwards every event to several observers.
pub struct Fanout<'a>(pub Vec<&'a mut dyn Observer>);
impl Observer for Fanout<'_> {
    fn phase_start(&mut self, stage: Stage, max_epochs: usize) {
        self.0
            .iter_mut()
            .for_each(|o| o.phase_start(stage, max_epochs));
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
    fn warning(&mut self, m: &str) {
        self.0.iter_mut().for_each(|o| o.warning(m));
    }
    fn should_stop(&mut self) -> bool {
        // Every observer is asked (none is skipped by an earlier one's answer).
        self.0
            .iter_mut()
            .fold(false, |stop, o| o.should_stop() | stop)
    }
}
