//! What an ANT predicts: the task its solvers solve and the likelihood its loss uses
//! (softmax over classes, or a unit-variance Gaussian per output).

use serde::{Deserialize, Serialize};

/// What the solvers predict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Task {
    /// Softmax over `classes` classes.
    Classification { classes: usize },
    /// `dim` outputs, unit-variance Gaussian per leaf.
    Regression { dim: usize },
}

/// Classification or regression, without the sizes: what reports name, and what a
/// table's target column holds (`--task`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    Classification,
    Regression,
}

impl Task {
    pub fn kind(&self) -> TaskKind {
        match self {
            Task::Classification { .. } => TaskKind::Classification,
            Task::Regression { .. } => TaskKind::Regression,
        }
    }

    pub fn outputs(&self) -> usize {
        match *self {
            Task::Classification { classes } => classes,
            Task::Regression { dim } => dim,
        }
    }
    pub fn is_classification(&self) -> bool {
        matches!(self, Task::Classification { .. })
    }
}

crate::named::named!(TaskKind {
    Classification => "classification",
    Regression => "regression",
});
