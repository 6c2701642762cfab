//! Whether a data set fits a model: the one check behind `predict`, `eval` and the
//! model's own `predict` / `evaluate`.

use std::path::Path;

use super::{Dataset, Targets};
use crate::error::AntError;
use crate::spec::Shape;
use crate::task::Task;

/// Why a data set does not fit a model. The caller says where the data came from:
/// `Misfit::in_file` for a file (a data error), `?` for data given in memory
/// (an invalid parameter).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Misfit {
    #[error("samples of shape {data:?}, but the model takes {model:?}")]
    Shape { data: Vec<usize>, model: Vec<usize> },
    #[error("sample {sample}: label {label} out of range: the model has {classes} classes")]
    Label {
        sample: usize,
        label: u32,
        classes: usize,
    },
    #[error(
        "the data's targets ({}) do not fit the model's task ({model:?})",
        describe(.data)
    )]
    Targets { data: Task, model: Task },
}

fn describe(task: &Task) -> String {
    match *task {
        Task::Classification { classes } => format!("{classes} classes"),
        Task::Regression { dim } => format!("{dim} regression values"),
    }
}

impl Misfit {
    /// The misfit as a data error naming the file the data was read from.
    pub(crate) fn in_file(self, path: &Path) -> AntError {
        AntError::data(path, self.to_string())
    }
}

impl From<Misfit> for AntError {
    fn from(m: Misfit) -> AntError {
        AntError::param(m.to_string())
    }
}

/// Refuses `data` when its samples do not have the model's `input` shape, or, with
/// `with_targets`, when its targets do not fit the model's `task` (a label out of
/// range, classes for regression, or another number of regression values).
pub(crate) fn check_compatible(
    data: &Dataset,
    input: Shape,
    task: Task,
    with_targets: bool,
) -> Result<(), Misfit> {
    let want = input.dims();
    if data.sample_shape != want {
        return Err(Misfit::Shape {
            data: data.sample_shape.clone(),
            model: want,
        });
    }
    if !with_targets {
        return Ok(());
    }
    match (&data.targets, task) {
        (Targets::Classes { labels, .. }, Task::Classification { classes }) => {
            match labels.iter().position(|&l| l as usize >= classes) {
                Some(sample) => Err(Misfit::Label {
                    sample,
                    label: labels[sample],
                    classes,
                }),
                None => Ok(()),
            }
        }
        (Targets::Values { dim, .. }, Task::Regression { dim: d }) if *dim == d => Ok(()),
        (targets, model) => Err(Misfit::Targets {
            data: match *targets {
                Targets::Classes { n_classes, .. } => Task::Classification { classes: n_classes },
                Targets::Values { dim, .. } => Task::Regression { dim },
            },
            model,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(labels: Vec<u32>, n_classes: usize) -> Dataset {
        let n = labels.len();
        Dataset::new(
            vec![0.0; 2 * n],
            vec![2],
            Targets::Classes { labels, n_classes },
        )
        .unwrap()
    }

    #[test]
    fn shape_labels_and_task() {
        let flat = Shape::Flat { d: 2 };
        let three = Task::Classification { classes: 3 };
        let d = classes(vec![0, 2, 1], 3);
        assert_eq!(check_compatible(&d, flat, three, true), Ok(()));
        let e = check_compatible(&d, Shape::Flat { d: 3 }, three, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "samples of shape [2], but the model takes [3]"
        );
        let two = Task::Classification { classes: 2 };
        // Labels are only checked with the targets.
        assert_eq!(check_compatible(&d, flat, two, false), Ok(()));
        let e = check_compatible(&d, flat, two, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "sample 1: label 2 out of range: the model has 2 classes"
        );
        let e = check_compatible(&d, flat, Task::Regression { dim: 1 }, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the data's targets (3 classes) do not fit the model's task (Regression { dim: 1 })"
        );
        let msg = e.clone().in_file(Path::new("/d/x.csv")).to_string();
        assert!(msg.starts_with("/d/x.csv: the data's targets"), "{msg}");
        assert!(matches!(
            AntError::from(e),
            AntError::InvalidParam { name: None, .. }
        ));
        let v = Dataset::new(
            vec![0.0; 2],
            vec![2],
            Targets::Values {
                values: vec![0.0; 2],
                dim: 2,
            },
        )
        .unwrap();
        assert!(check_compatible(&v, flat, Task::Regression { dim: 2 }, true).is_ok());
        assert!(check_compatible(&v, flat, Task::Regression { dim: 1 }, true).is_err());
    }
}
