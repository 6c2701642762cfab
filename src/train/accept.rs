//! When growth keeps a candidate: the acceptance rule.
//!
//! The paper keeps a split or deepen whenever it lowers the validation NLL at all (the
//! default). On a few thousand validation rows the NLL itself is noisy, so that rule
//! keeps splits worth far less than its noise. [`Accept::Paired`] asks the gain to stand
//! out of that noise: the per-row differences of the candidate's and the tree's
//! log-likelihood on the validation rows are paired, and the mean gain must exceed `z`
//! standard errors of it. It grows smaller trees, but on full MNIST's held-out rows it
//! also refused depth that helped, so it is an option, not the default.

pub use crate::choices::Accept;

/// A candidate's gain on the validation rows, paired row by row with the tree's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gain {
    /// Mean of `log p_candidate(y|x) - log p_tree(y|x)` (the NLL decrease).
    pub mean: f64,
    /// Its standard error.
    pub se: f64,
}

impl Gain {
    /// The gain of `candidate` over `tree` (per-row log-likelihoods, same rows).
    pub fn paired(candidate: &[f32], tree: &[f32]) -> Gain {
        let n = candidate.len().min(tree.len());
        if n == 0 {
            return Gain { mean: 0.0, se: 0.0 };
        }
        let d = || candidate.iter().zip(tree).map(|(&c, &t)| c as f64 - t as f64);
        let mean = d().sum::<f64>() / n as f64;
        let var = d().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n.max(2) - 1) as f64;
        Gain {
            mean,
            se: (var / n as f64).sqrt(),
        }
    }

    /// The gain in standard errors (infinite for a sure gain).
    pub fn z(&self) -> f64 {
        if self.se > 0.0 {
            self.mean / self.se
        } else if self.mean > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }
}

impl Accept {
    /// Whether a candidate whose validation NLL is `after` (tree: `before`), with the
    /// paired `gain` (needed only by [`Accept::Paired`]), is kept.
    pub fn keeps(self, before: f64, after: f64, gain: impl FnOnce() -> Gain) -> bool {
        // A candidate that diverged is never kept, whatever its score compares as.
        if !after.is_finite() {
            return false;
        }
        match self {
            Accept::Paper => after < before,
            Accept::Paired { z } => after < before && {
                let g = gain();
                g.mean > z * g.se
            },
        }
    }

    /// Whether [`Accept::keeps`] needs the per-row gain.
    pub fn is_paired(self) -> bool {
        matches!(self, Accept::Paired { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for a in [Accept::Paper, Accept::Paired { z: 2.0 }, Accept::Paired { z: 0.5 }] {
            assert_eq!(a.to_string().parse::<Accept>(), Ok(a));
        }
        assert_eq!("z:2".parse::<Accept>(), Ok(Accept::Paired { z: 2.0 }));
        for bad in ["", "z:", "z:-1", "z:nan", "z:inf", "z:101", "Paper", "z2"] {
            assert!(bad.parse::<Accept>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_gain_inside_its_noise_is_refused_only_by_the_paired_rule() {
        // Rows gain +0.1 or lose -0.09 in turn: mean 0.005, well inside the noise.
        let tree = vec![-1.0f32; 100];
        let noisy: Vec<f32> = (0..100).map(|i| if i % 2 == 0 { -0.9 } else { -1.09 }).collect();
        let g = Gain::paired(&noisy, &tree);
        assert!((g.mean - 0.005).abs() < 1e-6, "{g:?}");
        assert!(g.z() < 1.0);
        let (before, after) = (1.0, 1.0 - g.mean);
        assert!(Accept::Paper.keeps(before, after, || g));
        assert!(!Accept::Paired { z: 2.0 }.keeps(before, after, || g));
        // Every row gains 0.05: sure.
        let better = vec![-0.95f32; 100];
        let g = Gain::paired(&better, &tree);
        assert!(g.z().is_infinite() || g.z() > 100.0);
        assert!(Accept::Paired { z: 2.0 }.keeps(before, before - g.mean, || g));
        // No rule keeps a loss, nor a candidate that diverged.
        assert!(!Accept::Paired { z: 0.0 }.keeps(1.0, 1.1, || g));
        for diverged in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!Accept::Paper.keeps(1.0, diverged, || g), "{diverged}");
        }
    }
}
