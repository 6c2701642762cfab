//! The module presets of the paper's Table 2, plus ablation switches.
//!
//! Choices the paper leaves open follow the authors' code:
//! - MNIST convolutions have no padding (`conv5` maps 28x28 to 24x24); CIFAR-10's 3x3
//!   convolutions are padded by 1 (size kept). No batch normalisation anywhere.
//! - MNIST routers are conv + ReLU + GAP + FC(c -> c/2+1) + ReLU + FC(-> 1); CIFAR-10
//!   routers are 2 x (conv3 + ReLU) + GAP + FC(-> 1). The sigmoid is applied in the loss
//!   (log-sigmoid), so a router block outputs one logit.
//! - A router kernel larger than its input is shrunk to the input size (as the authors).
//! - Downsampling (a 2x2 max pool ending a transformer) follows a [`PoolRule`]: by
//!   default the authors' (`authors-1`: the root's transformer pools, then one in two on
//!   every path), or `every` (the k-th transformer on a path pools when k is a multiple
//!   of the preset's frequency; the rule of models made before the option existed).
//! - A transformer is not offered when the spatial size would fall below its kernel, nor
//!   (authors' rule) on a map under 3x3, where the authors' code uses the identity.

use serde::{Deserialize, Serialize};

use crate::named::named;


/// A named set of module families (paper, Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Preset {
    /// SARCOS: FC(width) + tanh transformers, FC routers, linear regressors.
    Sarcos,
    /// Generic tabular data: the SARCOS modules, for classification or regression.
    Tabular,
    MnistA,
    MnistB,
    MnistC,
    Cifar10A,
    Cifar10B,
    Cifar10C,
}

/// Which growth options exist (paper, section 4 ablations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Ablation {
    /// The full ANT: split and deepen.
    #[default]
    None,
    /// No routers: only deepen (a grown CNN / MLP).
    NoRouter,
    /// No transformers: only split, every edge identity, the root's too (an HME).
    NoTransformer,
}

/// Width of FC transformers unless `--width` says otherwise (SARCOS: 256).
pub(crate) const DEFAULT_WIDTH: usize = 256;

/// The module families of Table 2: what a preset's transformers, routers and solvers
/// are made of (`tree/transformer.rs`, `tree/router.rs`, `tree/solver.rs` build them).
pub(crate) enum Family {
    /// FC(width) + tanh transformers, FC(1) routers, linear solvers.
    Fc { width: usize },
    /// conv(k)-n + ReLU transformers (no padding), conv + GAP + 2 FC routers.
    MnistConv {
        k: usize,
        trans: usize,
        router: usize,
        freq: usize,
    },
    /// 2 x conv3-n + ReLU (padding 1) transformers and routers.
    CifarConv {
        trans: usize,
        router: usize,
        freq: usize,
        gap_solver: bool,
    },
}

impl Preset {
    pub(crate) fn family(self, width: usize) -> Family {
        match self {
            Preset::Sarcos | Preset::Tabular => Family::Fc { width },
            Preset::MnistA => Family::MnistConv {
                k: 5,
                trans: 40,
                router: 40,
                freq: 1,
            },
            Preset::MnistB => Family::MnistConv {
                k: 3,
                trans: 40,
                router: 40,
                freq: 2,
            },
            Preset::MnistC => Family::MnistConv {
                k: 5,
                trans: 5,
                router: 5,
                freq: 2,
            },
            Preset::Cifar10A => Family::CifarConv {
                trans: 128,
                router: 128,
                freq: 1,
                gap_solver: true,
            },
            Preset::Cifar10B => Family::CifarConv {
                trans: 96,
                router: 96,
                freq: 1,
                gap_solver: false,
            },
            Preset::Cifar10C => Family::CifarConv {
                trans: 96,
                router: 48,
                freq: 1,
                gap_solver: true,
            },
        }
    }

    /// The paper's refinement epochs for this preset.
    pub(crate) fn paper_refine_epochs(self) -> usize {
        match self {
            Preset::Sarcos | Preset::Tabular => 300,
            Preset::MnistA | Preset::MnistB | Preset::MnistC => 100,
            _ => 200,
        }
    }

    /// Whether the preset expects images (else flat features).
    pub(crate) fn wants_images(self) -> bool {
        !matches!(self.family(DEFAULT_WIDTH), Family::Fc { .. })
    }
}

named!(Preset {
    Sarcos => "sarcos",
    Tabular => "tabular",
    MnistA => "mnist-a",
    MnistB => "mnist-b",
    MnistC => "mnist-c",
    Cifar10A => "cifar10-a",
    Cifar10B => "cifar10-b",
    Cifar10C => "cifar10-c",
});

named!(Ablation {
    None => "none",
    NoRouter => "no-router",
    NoTransformer => "no-transformer",
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Shape;
    use crate::pool::{PathPos, PoolRule};
    use crate::task::Task;

    const MNIST: Shape = Shape::Image { c: 1, h: 28, w: 28 };

    #[test]
    fn mnist_a_modules_match_table_2() {
        let t = Preset::MnistA
            .transformer(MNIST, PathPos::FIRST, PoolRule::default(), 256)
            .unwrap();
        assert_eq!(t.label(), "conv5-40+relu+pool");
        let s = t.out_shape(MNIST).unwrap();
        assert_eq!(
            s,
            Shape::Image {
                c: 40,
                h: 12,
                w: 12
            }
        );
        let r = Preset::MnistA.router(s).unwrap();
        // conv5 1000+... : 40*40*25+40, fc 40->21, fc 21->1
        assert_eq!(r.num_params(), 40 * 40 * 25 + 40 + 40 * 21 + 21 + 21 + 1);
        let sol = Preset::MnistA.solver(s, Task::Classification { classes: 10 });
        assert_eq!(sol.num_params(), 40 * 12 * 12 * 10 + 10);
    }

    #[test]
    fn downsample_frequency_two_alternates() {
        let every = PoolRule::Every;
        let t1 = Preset::MnistC
            .transformer(MNIST, PathPos::FIRST, every, 256)
            .unwrap();
        assert!(!t1.downsamples());
        let s1 = t1.out_shape(MNIST).unwrap();
        let t2 = Preset::MnistC
            .transformer(s1, PathPos::after([&t1]), every, 256)
            .unwrap();
        assert!(t2.downsamples());
        assert_eq!(t2.out_shape(s1), Some(Shape::Image { c: 5, h: 10, w: 10 }));
    }

    #[test]
    fn authors_rule_pools_the_root_then_every_other_transformer() {
        let rule = PoolRule::default();
        let t1 = Preset::MnistC
            .transformer(MNIST, PathPos::FIRST, rule, 256)
            .unwrap();
        assert_eq!(t1.label(), "conv5-5+relu+pool");
        let s1 = t1.out_shape(MNIST).unwrap();
        assert_eq!(s1, Shape::Image { c: 5, h: 12, w: 12 });
        let t2 = Preset::MnistC
            .transformer(s1, PathPos::after([&t1]), rule, 256)
            .unwrap();
        assert!(!t2.downsamples());
        let s2 = t2.out_shape(s1).unwrap();
        let t3 = Preset::MnistC
            .transformer(s2, PathPos::after([&t1, &t2]), rule, 256)
            .unwrap();
        assert!(t3.downsamples());
        let s3 = t3.out_shape(s2).unwrap();
        assert_eq!(s3, Shape::Image { c: 5, h: 2, w: 2 });
        // A map under 3x3 takes no transformer (the authors' identity).
        let pos = PathPos::after([&t1, &t2, &t3]);
        let tiny = Shape::Image { c: 5, h: 2, w: 2 };
        assert!(Preset::MnistB.transformer(tiny, pos, rule, 256).is_none());
        // Interval 0: every transformer pools.
        let zero = PoolRule::Authors { interval: 0 };
        assert!(
            Preset::MnistC
                .transformer(s1, PathPos::after([&t1]), zero, 256)
                .unwrap()
                .downsamples()
        );
        // The second transformer of mnist-a pools under `every`, not under the authors'.
        let a1 = Preset::MnistA
            .transformer(MNIST, PathPos::FIRST, rule, 256)
            .unwrap();
        let sa = a1.out_shape(MNIST).unwrap();
        let pos = PathPos::after([&a1]);
        assert!(
            !Preset::MnistA
                .transformer(sa, pos, rule, 256)
                .unwrap()
                .downsamples()
        );
        assert!(
            Preset::MnistA
                .transformer(sa, pos, PoolRule::Every, 256)
                .unwrap()
                .downsamples()
        );
    }

    #[test]
    fn transformer_not_offered_below_kernel() {
        let tiny = Shape::Image { c: 40, h: 4, w: 4 };
        assert!(
            Preset::MnistA
                .transformer(
                    tiny,
                    PathPos {
                        index: 3,
                        since_pool: 1
                    },
                    PoolRule::default(),
                    256
                )
                .is_none()
        );
        // the router shrinks its kernel instead
        assert!(Preset::MnistA.router(tiny).is_some());
    }

    #[test]
    fn cifar_and_sarcos_params() {
        let c = Shape::Image { c: 3, h: 32, w: 32 };
        let t = Preset::Cifar10A
            .transformer(c, PathPos::FIRST, PoolRule::default(), 256)
            .unwrap();
        assert_eq!(t.num_params(), (3 * 128 * 9 + 128) + (128 * 128 * 9 + 128));
        assert_eq!(
            t.out_shape(c),
            Some(Shape::Image {
                c: 128,
                h: 16,
                w: 16
            })
        );
        let sol = Preset::Cifar10A.solver(
            Shape::Image {
                c: 128,
                h: 16,
                w: 16,
            },
            Task::Classification { classes: 10 },
        );
        assert_eq!(sol.num_params(), 128 * 10 + 10);
        let x = Shape::Flat { d: 21 };
        let t = Preset::Sarcos
            .transformer(x, PathPos::FIRST, PoolRule::default(), 256)
            .unwrap();
        assert_eq!(t.num_params(), 21 * 256 + 256);
        assert_eq!(
            Preset::Sarcos
                .router(Shape::Flat { d: 256 })
                .unwrap()
                .num_params(),
            257
        );
    }
}
