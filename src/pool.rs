//! Where transformers downsample: the pooling rule of a tree's image transformers.
//!
//! The paper says only that conv transformers downsample "at a frequency"; the authors'
//! code (`define_node`) decides it per path: the root's transformer always pools, and a
//! later one pools once `interval` non-pooling transformers have followed the last
//! pooling one on its path. With interval 1 the parameter totals of the paper's MNIST-A
//! and MNIST-B trees (Table 3) are reachable, and under no other rule tried
//! (`tests/table3.rs`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::spec::{BlockSpec, LayerSpec, Shape};

/// The largest interval [`PoolRule::Authors`] takes (a path never gets that deep).
pub(crate) const MAX_POOL_INTERVAL: usize = 64;

/// Which transformers of an image preset end in a 2x2 max pool.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum PoolRule {
    /// The k-th transformer of a path (root's = 1) pools when k is a multiple of the
    /// preset's downsample frequency and its map is at least 2x2 (`ant`'s first rule).
    Every,
    /// The authors' code: the root's transformer pools; a later one pools after
    /// `interval` non-pooling transformers on its path; none is offered on a map under
    /// 3x3 (the authors' code makes it the identity).
    Authors { interval: usize },
}

impl Default for PoolRule {
    fn default() -> Self {
        PoolRule::Authors { interval: 1 }
    }
}

/// Where a new transformer would sit on its root path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct PathPos {
    /// 1 for the first transformer of the path (the root's), 2 for the next, ...
    pub index: usize,
    /// Non-pooling transformers after the last pooling one above it.
    pub(crate) since_pool: usize,
}

impl PathPos {
    /// The first transformer of a path.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) const FIRST: PathPos = PathPos {
        index: 1,
        since_pool: 0,
    };

    /// The position after the transformers `above` (root first; identities skipped).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn after<'a>(above: impl IntoIterator<Item = &'a BlockSpec>) -> PathPos {
        above.into_iter().fold(PathPos::FIRST, PathPos::then)
    }

    /// The position after `t`, placed here.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn then(self, t: &BlockSpec) -> PathPos {
        if t.is_identity() {
            return self;
        }
        PathPos {
            index: self.index + 1,
            since_pool: if t.downsamples() {
                0
            } else {
                self.since_pool + 1
            },
        }
    }
}

impl PoolRule {
    /// Ends the conv `layers` (applied to `input`) with a pool if this rule says so at
    /// `pos` (`freq`: the preset's downsample frequency). `None` when the rule offers no
    /// transformer there.
    pub(crate) fn push_pool(
        self,
        layers: &mut Vec<LayerSpec>,
        input: Shape,
        pos: PathPos,
        freq: usize,
    ) -> Option<()> {
        let conv_out = BlockSpec::new(layers.clone()).out_shape(input)?;
        let at_least =
            |s: Shape, n: usize| matches!(s, Shape::Image { h, w, .. } if h >= n && w >= n);
        let pools = match self {
            PoolRule::Every => pos.index.is_multiple_of(freq.max(1)) && at_least(conv_out, 2),
            PoolRule::Authors { interval } => {
                if !at_least(input, 3) {
                    return None;
                }
                let pools = pos.index == 1 || pos.since_pool == interval;
                if pools && !at_least(conv_out, 2) {
                    return None;
                }
                pools
            }
        };
        if pools {
            layers.push(LayerSpec::MaxPool2);
        }
        Some(())
    }
}

impl fmt::Display for PoolRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolRule::Every => f.write_str("every"),
            PoolRule::Authors { interval } => write!(f, "authors-{interval}"),
        }
    }
}

impl FromStr for PoolRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown pooling rule {s:?}: use every, authors (= authors-1) or authors-N (N from 0 to {MAX_POOL_INTERVAL})"
            )
        };
        match s {
            "every" => Ok(PoolRule::Every),
            "authors" => Ok(PoolRule::default()),
            _ => {
                let n = s.strip_prefix("authors-").ok_or_else(bad)?;
                if n.is_empty()
                    || (n.len() > 1 && n.starts_with('0'))
                    || !n.bytes().all(|b| b.is_ascii_digit())
                {
                    return Err(bad());
                }
                match n.parse::<usize>() {
                    Ok(interval) if interval <= MAX_POOL_INTERVAL => {
                        Ok(PoolRule::Authors { interval })
                    }
                    _ => Err(bad()),
                }
            }
        }
    }
}

crate::named::named_by_string!(PoolRule);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for r in [
            PoolRule::Every,
            PoolRule::Authors { interval: 0 },
            PoolRule::Authors { interval: 3 },
        ] {
            assert_eq!(r.to_string().parse::<PoolRule>(), Ok(r));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<PoolRule>(&json).unwrap(), r);
        }
        assert_eq!(
            "authors".parse::<PoolRule>(),
            Ok(PoolRule::Authors { interval: 1 })
        );
        for bad in [
            "",
            "authors-",
            "authors-01",
            "authors-+1",
            "authors-65",
            "some",
        ] {
            assert!(bad.parse::<PoolRule>().is_err(), "{bad}");
        }
    }

    #[test]
    fn positions_count_since_the_last_pool() {
        let conv = BlockSpec::new(vec![LayerSpec::Relu]);
        let pooled = BlockSpec::new(vec![LayerSpec::Relu, LayerSpec::MaxPool2]);
        let identity = BlockSpec::new(vec![]);
        let p = PathPos::after([&pooled, &conv, &identity, &conv]);
        assert_eq!(
            p,
            PathPos {
                index: 4,
                since_pool: 2
            }
        );
        let p = PathPos::after([&conv, &pooled]);
        assert_eq!(
            p,
            PathPos {
                index: 3,
                since_pool: 0
            }
        );
    }
}
