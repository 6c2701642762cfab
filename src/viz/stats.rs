//! Per-node numbers behind the pictures, computed from per-sample reach probabilities.
//!
//! Every sample contributes to every node with weight equal to its probability of
//! reaching that node (the product of router decisions on the path), so a node's class
//! histogram is `sum_n reach[n][node] * onehot(y_n)`: the root's equals the class counts.

use crate::data::Targets;
use crate::tree::Topology;

/// What the picture shows at one node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeStats {
    pub node: usize,
    /// Sum of reach probabilities over the samples (the root's is the sample count).
    pub mass: f64,
    /// Reach-weighted class counts (classification); sums to `mass`.
    pub class_hist: Option<Vec<f64>>,
    /// Internal nodes: reach-weighted histogram of the router's probability of going
    /// left, `bins` equal bins over `[0, 1]`; sums to `mass`.
    pub left_hist: Option<Vec<f64>>,
    /// Reach-weighted mean of each target dimension (regression).
    pub target_mean: Option<Vec<f64>>,
    /// Reach-weighted standard deviation of each target dimension (regression).
    pub target_std: Option<Vec<f64>>,
    /// Leaves: samples whose greedy single path ends here, and their share of all.
    pub single_path_count: Option<usize>,
    pub single_path_share: Option<f64>,
}

impl NodeStats {
    /// The class distribution (histogram divided by mass), if any mass reaches the node.
    pub(crate) fn class_dist(&self) -> Option<Vec<f64>> {
        let h = self.class_hist.as_ref()?;
        let s: f64 = h.iter().sum();
        (s > 0.0).then(|| h.iter().map(|v| v / s).collect())
    }

    /// Classes by decreasing weight, at most `k`, with their share of the node's mass.
    pub fn top_classes(&self, k: usize) -> Vec<(usize, f64)> {
        let Some(d) = self.class_dist() else {
            return vec![];
        };
        let mut idx: Vec<(usize, f64)> = d.into_iter().enumerate().collect();
        idx.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        idx.truncate(k);
        idx
    }
}

/// Bin of probability `p` among `bins` equal bins over `[0, 1]` (1.0 goes to the last).
pub fn prob_bin(p: f64, bins: usize) -> usize {
    let p = if p.is_finite() {
        p.clamp(0.0, 1.0)
    } else {
        0.5
    };
    ((p * bins as f64) as usize).min(bins - 1)
}

/// Statistics of every node. `reach` is row-major `[N][nodes]`
/// ([`crate::model::Ant::node_reach_per_sample`]); `single_leaf`, if given, is the leaf of each
/// sample's greedy path. `bins` is the number of left-probability bins (at least 1).
pub fn node_stats(
    topology: &Topology,
    reach: &[f32],
    targets: &Targets,
    single_leaf: Option<&[usize]>,
    bins: usize,
) -> Vec<NodeStats> {
    let m = topology.nodes.len();
    assert_eq!(
        reach.len(),
        targets.len() * m,
        "reach must be [samples][nodes]"
    );
    let mut out = empty_stats(topology, bins.max(1));
    add_masses(&mut out, reach);
    add_left_hists(&mut out, topology, reach);
    match targets {
        Targets::Classes { labels, n_classes } => {
            add_class_hists(&mut out, reach, labels, *n_classes)
        }
        Targets::Values { values, dim } => add_target_moments(&mut out, reach, values, *dim),
    }
    if let Some(leaf) = single_leaf {
        add_single_path(&mut out, topology, leaf);
    }
    out
}

/// Zero statistics per node; internal nodes get an empty `bins`-bin left histogram.
fn empty_stats(topology: &Topology, bins: usize) -> Vec<NodeStats> {
    (0..topology.nodes.len())
        .map(|i| NodeStats {
            node: i,
            mass: 0.0,
            class_hist: None,
            left_hist: topology.nodes[i].children().map(|_| vec![0.0; bins]),
            target_mean: None,
            target_std: None,
            single_path_count: None,
            single_path_share: None,
        })
        .collect()
}

/// Each node's mass: the sum of its reach over the samples.
fn add_masses(out: &mut [NodeStats], reach: &[f32]) {
    for row in reach.chunks(out.len()) {
        for (i, s) in out.iter_mut().enumerate() {
            s.mass += row[i] as f64;
        }
    }
}

/// Internal nodes: each sample's probability of going left is its reach of the left
/// child over its reach of the node; binned, weighted by the reach of the node.
fn add_left_hists(out: &mut [NodeStats], topology: &Topology, reach: &[f32]) {
    let m = out.len();
    for (i, s) in out.iter_mut().enumerate() {
        if let (Some(h), Some([l, _])) = (s.left_hist.as_mut(), topology.nodes[i].children()) {
            let bins = h.len();
            for row in reach.chunks(m) {
                let w = row[i] as f64;
                if w > 0.0 {
                    h[prob_bin(row[l] as f64 / w, bins)] += w;
                }
            }
        }
    }
}

/// Classification: reach-weighted class counts (labels out of range are skipped).
fn add_class_hists(out: &mut [NodeStats], reach: &[f32], labels: &[u32], n_classes: usize) {
    let m = out.len();
    for (i, s) in out.iter_mut().enumerate() {
        let mut h = vec![0.0; n_classes];
        for (row, &y) in reach.chunks(m).zip(labels) {
            if let Some(c) = h.get_mut(y as usize) {
                *c += row[i] as f64;
            }
        }
        s.class_hist = Some(h);
    }
}

/// Regression: reach-weighted mean and standard deviation of each of the `dim` target
/// dimensions (`values` row-major `[N][dim]`), for nodes that any mass reaches.
fn add_target_moments(out: &mut [NodeStats], reach: &[f32], values: &[f32], dim: usize) {
    let m = out.len();
    for (i, s) in out.iter_mut().enumerate() {
        let (mut sum, mut sq) = (vec![0.0; dim], vec![0.0; dim]);
        for (row, y) in reach.chunks(m).zip(values.chunks(dim)) {
            let w = row[i] as f64;
            for j in 0..dim {
                sum[j] += w * y[j] as f64;
                sq[j] += w * (y[j] as f64).powi(2);
            }
        }
        if s.mass > 0.0 {
            let mean: Vec<f64> = sum.iter().map(|v| v / s.mass).collect();
            let std = sq
                .iter()
                .zip(&mean)
                .map(|(q, mu)| (q / s.mass - mu * mu).max(0.0).sqrt())
                .collect();
            s.target_mean = Some(mean);
            s.target_std = Some(std);
        }
    }
}

/// Leaves: how many samples' greedy single path (`leaf` per sample) ends here, and
/// their share of all samples.
fn add_single_path(out: &mut [NodeStats], topology: &Topology, leaf: &[usize]) {
    let total = leaf.len().max(1) as f64;
    for s in out.iter_mut() {
        if topology.nodes[s.node].is_leaf() {
            let c = leaf.iter().filter(|&&l| l == s.node).count();
            s.single_path_count = Some(c);
            s.single_path_share = Some(c as f64 / total);
        }
    }
}
