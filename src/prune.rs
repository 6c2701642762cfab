//! Pruning starved branches: refinement polarises routers, so some subtrees end up
//! reached by almost no sample; removing them collapses their parent router.

use serde::Serialize;

use crate::tree::{
    InternalModules, Node, NodeKind, NodeModules, Topology, Tree, TreeModules, depth_first,
};

/// Where a node of a pruned tree came from in the original one.
#[derive(Clone, Debug)]
pub(crate) struct Origin {
    /// (old node, edge index) of each transformer on the new edge.
    pub(crate) edge: Vec<(usize, usize)>,
    /// The old node whose router or solver (and children) the new node has.
    pub(crate) head: usize,
}

impl Topology {
    /// The tree without the subtree rooted at `cut` (not the root): its parent's router
    /// goes, and the sibling takes the parent's place, its edge appended to the parent's.
    /// Also returns where each new node came from.
    pub(crate) fn without_subtree(&self, cut: usize) -> (Topology, Vec<Origin>) {
        let mut nodes: Vec<Node> = vec![];
        let mut origins: Vec<Origin> = vec![];
        self.rebuild(0, None, cut, &mut nodes, &mut origins);
        (
            Topology {
                input: self.input,
                nodes,
            },
            origins,
        )
    }

    fn rebuild(
        &self,
        old: usize,
        parent: Option<usize>,
        cut: usize,
        nodes: &mut Vec<Node>,
        origins: &mut Vec<Origin>,
    ) -> usize {
        let mut edge: Vec<(usize, usize)> =
            (0..self.nodes[old].edge.len()).map(|k| (old, k)).collect();
        let mut head = old;
        while let Some([l, r]) = self.nodes[head].children() {
            let keep = if l == cut {
                r
            } else if r == cut {
                l
            } else {
                break;
            };
            edge.extend((0..self.nodes[keep].edge.len()).map(|k| (keep, k)));
            head = keep;
        }
        let h = &self.nodes[head];
        let me = nodes.len();
        nodes.push(Node {
            parent,
            edge: edge
                .iter()
                .map(|&(n, k)| self.nodes[n].edge[k].clone())
                .collect(),
            kind: h.kind.clone(),
        });
        origins.push(Origin { edge, head });
        if let NodeKind::Internal {
            router,
            children: [l, r],
        } = &h.kind
        {
            let a = self.rebuild(*l, Some(me), cut, nodes, origins);
            let b = self.rebuild(*r, Some(me), cut, nodes, origins);
            nodes[me].kind = NodeKind::Internal {
                router: router.clone(),
                children: [a, b],
            };
        }
        me
    }

    /// Mean reach probability of every node, from the mean reach of each leaf.
    pub(crate) fn node_reach(&self, leaf_reach: &[(usize, f64)]) -> Vec<f64> {
        let mut r = vec![0.0; self.nodes.len()];
        for &(leaf, p) in leaf_reach {
            for n in self.path(leaf) {
                r[n] += p;
            }
        }
        r
    }
}

/// What pruning removed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PruneReport {
    /// Original indices of the roots of the removed subtrees, with their reach.
    pub removed: Vec<(usize, f64)>,
    pub(crate) nodes_removed: usize,
    pub params_removed: usize,
}

/// Remove every subtree whose mean reach probability is below `min_reach` (given per
/// node of `tree`), keeping at least one child of every router.
pub(crate) fn prune(tree: &Tree, reach: &[f64], min_reach: f64) -> (Tree, PruneReport) {
    let topo = &tree.topology;
    // Top-down: a starved child is cut whole; its descendants need no visit.
    let mut cuts = vec![];
    depth_first((), |i, ()| {
        let Some([l, r]) = topo.nodes[i].children() else {
            return vec![];
        };
        let (lo, hi) = if reach[l] <= reach[r] { (l, r) } else { (r, l) };
        if reach[lo] < min_reach {
            cuts.push(lo);
            vec![(hi, ())]
        } else {
            // The right child first: the order cuts were always found in.
            vec![(r, ()), (l, ())]
        }
    });
    let mut report = PruneReport::default();
    let (mut t, mut m) = (topo.clone(), tree.modules.clone());
    // Map original indices through each rebuild.
    let mut index: Vec<Option<usize>> = (0..topo.nodes.len()).map(Some).collect();
    for &c in &cuts {
        let cur = index[c].expect("cut subtrees are disjoint");
        let before = (t.nodes.len(), t.num_params());
        let (nt, origins) = t.without_subtree(cur);
        let nm = TreeModules {
            nodes: origins
                .iter()
                .enumerate()
                .map(|(new, Origin { head, edge })| {
                    let edge = edge
                        .iter()
                        .map(|&(n, k)| m.nodes[n].edge()[k].clone())
                        .collect();
                    match (&m.nodes[*head], nt.nodes[new].children()) {
                        (NodeModules::Internal(h), Some(children)) => {
                            NodeModules::Internal(InternalModules {
                                edge,
                                router: h.router.clone(),
                                children,
                            })
                        }
                        (NodeModules::Leaf(h), None) => NodeModules::leaf(edge, h.solver.clone()),
                        _ => unreachable!("a rebuilt node keeps its head's kind"),
                    }
                })
                .collect(),
        };
        let mut new_of_old = vec![None; t.nodes.len()];
        for (new, Origin { head, .. }) in origins.iter().enumerate() {
            new_of_old[*head] = Some(new);
        }
        index = index
            .iter()
            .map(|o| o.and_then(|i| new_of_old[i]))
            .collect();
        report.removed.push((c, reach[c]));
        report.nodes_removed += before.0 - nt.nodes.len();
        report.params_removed += before.1 - nt.num_params();
        (t, m) = (nt, nm);
    }
    (Tree::new(t, m), report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{BlockSpec, LayerSpec, Shape};

    fn fc(i: usize, o: usize) -> BlockSpec {
        BlockSpec::new(vec![
            LayerSpec::Linear { d_in: i, d_out: o },
            LayerSpec::Tanh,
        ])
    }

    #[test]
    fn cutting_a_subtree_collapses_its_parent() {
        let mut t = Topology::root(Shape::Flat { d: 2 }, vec![fc(2, 4)], fc(4, 3));
        let [a, b] = t.split(0, fc(4, 1), fc(4, 3), fc(4, 3));
        t.deepen(b, fc(4, 4), fc(4, 3));
        let [c, _d] = t.split(b, fc(4, 1), fc(4, 3), fc(4, 3));
        // cut `a`: b's edge joins the root's, b's router becomes the root's
        let (p, origins) = t.without_subtree(a);
        p.validate().unwrap();
        assert_eq!(p.nodes.len(), 3);
        assert_eq!(p.nodes[0].edge.len(), 2);
        assert_eq!(p.nodes[0].module(), t.nodes[b].module());
        assert!(!p.nodes[0].is_leaf());
        assert_eq!(origins[0].head, b);
        assert_eq!(t.num_params() - p.num_params(), 4 * 3 + 3 + 5);
        // node reach adds leaves up the tree
        let r = t.node_reach(&[(a, 0.5), (c, 0.3), (4, 0.2)]);
        assert!((r[0] - 1.0).abs() < 1e-12 && (r[b] - 0.5).abs() < 1e-12);
    }
}
