//! The solver: the module at every leaf, a linear classifier or regressor on the
//! representation that reaches the leaf (paper, section 3.1). Its output is the leaf's
//! prediction p_l(y|x): a softmax over the classes, or the mean of a unit-variance
//! Gaussian per output (`loss.rs` has both likelihoods).
//!
//! A preset's solvers (Table 2): one FC layer on the flattened representation, but for
//! `cifar10-a` and `cifar10-c`, whose solvers average each channel first (global
//! average pooling). A pretrained start copies a CNN's head into a solver of its shape
//! (`train/pretrained.rs`).

use crate::preset::{DEFAULT_WIDTH, Family, Preset};
use crate::spec::{BlockSpec, LayerSpec, Shape};
use crate::task::Task;

impl Preset {
    /// The solver for a leaf whose representation has shape `input`.
    pub fn solver(self, input: Shape, task: Task) -> BlockSpec {
        let out = task.outputs();
        let gap = matches!(
            self.family(DEFAULT_WIDTH),
            Family::CifarConv {
                gap_solver: true,
                ..
            }
        );
        match input {
            Shape::Flat { d } => BlockSpec::new(vec![LayerSpec::Linear {
                d_in: d,
                d_out: out,
            }]),
            Shape::Image { c, .. } if gap => BlockSpec::new(vec![
                LayerSpec::Gap,
                LayerSpec::Linear {
                    d_in: c,
                    d_out: out,
                },
            ]),
            s @ Shape::Image { .. } => BlockSpec::new(vec![
                LayerSpec::Flatten,
                LayerSpec::Linear {
                    d_in: s.numel(),
                    d_out: out,
                },
            ]),
        }
    }
}
