//! Fixed-architecture baselines (the paper's Table 3 "Linear", MLP and CNN rows),
//! trained by the same code as an ANT.
//!
//! A baseline is a tree that never branches: a root whose edge holds the baseline's
//! transformers and whose solver is the preset's. So it is an ordinary model
//! (`tree.json` + weights) that evaluates, predicts, plots and prunes like any ANT;
//! only training differs: no growth, every module trained together from the start,
//! with early stopping on the validation NLL (see `train::refine::train_fixed`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::pool::{PathPos, PoolRule};
use crate::preset::Preset;
use crate::spec::{BlockSpec, LayerSpec, Shape};
use crate::task::Task;
use crate::tree::Topology;

/// The deepest `mlp-K` baseline: deeper ones would only exhaust memory (the layers are
/// allocated before training; an absurd K used to abort the process).
pub(crate) const MAX_MLP_LAYERS: usize = 100;

/// A fixed architecture to train instead of growing an ANT. `mlp-K` takes K from 1 to
/// `MAX_MLP_LAYERS`, so the names are parsed ([`FromStr`]) rather than listed as a `Named` enum's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
#[non_exhaustive]
pub enum Baseline {
    /// The preset's linear solver on the normalised input (flattened, for images).
    Linear,
    /// `layers` hidden layers of `--width` tanh units, then a linear solver.
    Mlp { layers: usize },
    /// The preset's transformer repeated along one path (the k-th on the path
    /// downsampling as in a grown tree), as many as fit before the map is 1x1 (at most
    /// `max_depth`), then the preset's solver: the tree an ANT grows when it only
    /// deepens, fixed in advance.
    Cnn,
}

impl Baseline {
    /// What a user can write, for help texts and errors.
    pub const NAMES: &'static str = "linear, mlp-K (K hidden layers, 1 <= K <= 100) or cnn";

    /// Whether the baseline can take inputs of this shape (`None`), or why not.
    pub(crate) fn misfit(self, input: Shape) -> Option<String> {
        match (self, input) {
            (Baseline::Cnn, Shape::Flat { .. }) => Some(
                "baseline cnn needs images, the data has flat rows (use linear or mlp-K)".into(),
            ),
            _ => None,
        }
    }

    /// The baseline's tree for `input` and `task`: one node, the root, whose edge holds
    /// the transformers. `width` is the MLP's hidden width; `max_depth` caps the CNN's
    /// transformers, which pool by `pool`. `None` when the input does not fit (see
    /// `Baseline::misfit`).
    pub fn topology(
        self,
        (preset, pool): (Preset, PoolRule),
        input: Shape,
        task: Task,
        width: usize,
        max_depth: usize,
    ) -> Option<Topology> {
        if self.misfit(input).is_some() {
            return None;
        }
        let edge = match self {
            Baseline::Linear => vec![],
            Baseline::Mlp { layers } => mlp_edge(input, layers, width),
            Baseline::Cnn => cnn_edge((preset, pool), input, width, max_depth),
        };
        let shape = edge
            .iter()
            .try_fold(input, |s, t| t.out_shape(s))
            .expect("baseline edges are built shape by shape");
        let solver = match shape {
            // A linear baseline (or an MLP) on images reads the flattened pixels.
            Shape::Image { .. } if self != Baseline::Cnn => BlockSpec::new(vec![
                LayerSpec::Flatten,
                LayerSpec::Linear {
                    d_in: shape.numel(),
                    d_out: task.outputs(),
                },
            ]),
            _ => preset.solver(shape, task),
        };
        Some(Topology::root(input, edge, solver))
    }
}

/// `layers` x (FC(width) + tanh), the first flattening an image.
fn mlp_edge(input: Shape, layers: usize, width: usize) -> Vec<BlockSpec> {
    let mut d = input.numel();
    (0..layers)
        .map(|i| {
            let mut l = vec![];
            if i == 0 && matches!(input, Shape::Image { .. }) {
                l.push(LayerSpec::Flatten);
            }
            l.extend([
                LayerSpec::Linear {
                    d_in: d,
                    d_out: width,
                },
                LayerSpec::Tanh,
            ]);
            d = width;
            BlockSpec::new(l)
        })
        .collect()
}

/// The preset's transformers one after another while they fit, until the map is 1x1
/// (a padded convolution would go on forever) or `max_depth` of them.
fn cnn_edge(
    (preset, pool): (Preset, PoolRule),
    input: Shape,
    width: usize,
    max_depth: usize,
) -> Vec<BlockSpec> {
    let mut edge = vec![];
    let mut s = input;
    while edge.len() < max_depth {
        if let Shape::Image { h: 1, w: 1, .. } = s {
            break;
        }
        let Some(t) = preset.transformer(s, PathPos::after(&edge), pool, width) else {
            break;
        };
        s = t.out_shape(s).expect("offered transformers fit");
        edge.push(t);
    }
    edge
}

impl fmt::Display for Baseline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Baseline::Linear => f.write_str("linear"),
            Baseline::Mlp { layers } => write!(f, "mlp-{layers}"),
            Baseline::Cnn => f.write_str("cnn"),
        }
    }
}

impl FromStr for Baseline {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("unknown baseline {s:?}: use {}", Baseline::NAMES);
        match s {
            "linear" => Ok(Baseline::Linear),
            "cnn" => Ok(Baseline::Cnn),
            _ => {
                let k = s.strip_prefix("mlp-").ok_or_else(bad)?;
                // Digits only: "mlp-+2" or "mlp-02" are not names.
                if k.starts_with('0') || !k.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                match k.parse::<usize>() {
                    Ok(layers) if (1..=MAX_MLP_LAYERS).contains(&layers) => {
                        Ok(Baseline::Mlp { layers })
                    }
                    _ => Err(bad()),
                }
            }
        }
    }
}

crate::named::named_by_string!(Baseline);

#[cfg(test)]
mod tests {
    use super::*;

    const MNIST: Shape = Shape::Image { c: 1, h: 28, w: 28 };
    const TEN: Task = Task::Classification { classes: 10 };

    #[test]
    fn names_round_trip_and_bad_ones_are_refused() {
        for b in [
            Baseline::Linear,
            Baseline::Cnn,
            Baseline::Mlp { layers: 1 },
            Baseline::Mlp { layers: 12 },
        ] {
            assert_eq!(b.to_string().parse::<Baseline>(), Ok(b));
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(json, format!("\"{b}\""));
            assert_eq!(serde_json::from_str::<Baseline>(&json).unwrap(), b);
        }
        for bad in [
            "",
            "mlp",
            "mlp-",
            "mlp-0",
            "mlp-02",
            "mlp-+2",
            "mlp-x",
            "MLP-2",
            "cnn2",
            "mlp-101",
            "mlp-99999999999",
        ] {
            let e = bad.parse::<Baseline>().unwrap_err();
            assert!(e.contains("linear, mlp-K"), "{bad}: {e}");
        }
        assert!(serde_json::from_str::<Baseline>("\"mlp-0\"").is_err());
        assert_eq!("mlp-100".parse(), Ok(Baseline::Mlp { layers: 100 }));
    }

    #[test]
    fn mlp_has_k_hidden_layers_of_width_units() {
        let (d, k, w) = (13, 3, 256);
        let task = Task::Classification { classes: k };
        let t = Baseline::Mlp { layers: 2 }
            .topology(
                (Preset::Tabular, PoolRule::Every),
                Shape::Flat { d },
                task,
                w,
                10,
            )
            .unwrap();
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.transformers(), 2);
        assert_eq!(
            t.num_params(),
            (d * w + w) + (w * w + w) + (w * k + k),
            "{}",
            t.outline()
        );
        assert_eq!(t.nodes[0].edge[0].label(), "fc256+tanh");
        t.validate().unwrap();
    }

    #[test]
    fn linear_is_one_solver_on_the_flattened_input() {
        let t = Baseline::Linear
            .topology((Preset::MnistC, PoolRule::Every), MNIST, TEN, 256, 10)
            .unwrap();
        assert_eq!((t.nodes.len(), t.transformers()), (1, 0));
        assert_eq!(t.num_params(), 784 * 10 + 10);
        // Even where the preset's solver averages the map first (cifar10-a).
        let c = Shape::Image { c: 3, h: 32, w: 32 };
        let t = Baseline::Linear
            .topology((Preset::Cifar10A, PoolRule::Every), c, TEN, 256, 10)
            .unwrap();
        assert_eq!(t.num_params(), 3072 * 10 + 10);
        let r = Task::Regression { dim: 7 };
        let t = Baseline::Linear
            .topology(
                (Preset::Sarcos, PoolRule::Every),
                Shape::Flat { d: 21 },
                r,
                256,
                10,
            )
            .unwrap();
        assert_eq!(t.num_params(), 21 * 7 + 7);
    }

    #[test]
    fn cnn_repeats_the_presets_transformer_down_to_1x1() {
        // mnist-c: 28 -> 24 -> 20/pool 10 -> 6 -> 2/pool 1.
        let t = Baseline::Cnn
            .topology((Preset::MnistC, PoolRule::Every), MNIST, TEN, 256, 10)
            .unwrap();
        assert_eq!(t.transformers(), 4);
        assert_eq!(t.shape_at(0), Shape::Image { c: 5, h: 1, w: 1 });
        assert_eq!(t.routers(), 0);
        t.validate().unwrap();
        // mnist-a stops when conv5 no longer fits (4x4).
        let t = Baseline::Cnn
            .topology((Preset::MnistA, PoolRule::Every), MNIST, TEN, 256, 10)
            .unwrap();
        assert_eq!(t.transformers(), 2);
        // mnist-b: 28 -> 26 -> 24/pool 12 -> 10 -> 8/pool 4 -> 2, then conv3 no longer fits.
        let t = Baseline::Cnn
            .topology((Preset::MnistB, PoolRule::Every), MNIST, TEN, 256, 10)
            .unwrap();
        assert_eq!(t.transformers(), 5);
        assert_eq!(t.shape_at(0), Shape::Image { c: 40, h: 2, w: 2 });
        // cifar10-a's padded convs would never stop: 32 -> 1 in five pooled blocks.
        let c = Shape::Image { c: 3, h: 32, w: 32 };
        let t = Baseline::Cnn
            .topology((Preset::Cifar10A, PoolRule::Every), c, TEN, 256, 10)
            .unwrap();
        assert_eq!(t.transformers(), 5);
        assert_eq!(t.shape_at(0), Shape::Image { c: 128, h: 1, w: 1 });
        // --max-depth caps it.
        let t = Baseline::Cnn
            .topology((Preset::Cifar10A, PoolRule::Every), c, TEN, 256, 2)
            .unwrap();
        assert_eq!(t.transformers(), 2);
        // The authors' rule (interval 1): 28 -> 24/pool 12 -> 8 -> 4/pool 2, then a map
        // under 3x3 takes no transformer.
        let t = Baseline::Cnn
            .topology((Preset::MnistC, PoolRule::default()), MNIST, TEN, 256, 10)
            .unwrap();
        assert_eq!(t.transformers(), 3);
        assert_eq!(t.shape_at(0), Shape::Image { c: 5, h: 2, w: 2 });
        assert!(
            Baseline::Cnn
                .topology(
                    (Preset::Tabular, PoolRule::Every),
                    Shape::Flat { d: 4 },
                    TEN,
                    256,
                    10
                )
                .is_none()
        );
        assert!(Baseline::Cnn.misfit(Shape::Flat { d: 4 }).is_some());
    }
}
