//! The tree as an arena: nodes in a `Vec`, linked by indices.

use serde::{Deserialize, Serialize};

use crate::pool::PathPos;
use crate::spec::{BlockSpec, LayerSpec, Shape};

/// One node. The root's `edge` transforms the input itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "NodeFile", into = "NodeFile")]
pub struct Node {
    pub parent: Option<usize>,
    /// Transformers on the incoming edge, applied in order ("deepen" appends one).
    /// Empty = identity.
    pub edge: Vec<BlockSpec>,
    pub kind: NodeKind,
}

/// What a node does with the representation its edge produces.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A router (outputs the logit of going left) and its `[left, right]` children.
    Internal {
        router: BlockSpec,
        children: [usize; 2],
    },
    /// A solver: the prediction of this leaf.
    Leaf { solver: BlockSpec },
}

impl Node {
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn is_leaf(&self) -> bool {
        matches!(self.kind, NodeKind::Leaf { .. })
    }

    /// `[left, right]` of an internal node.
    pub fn children(&self) -> Option<[usize; 2]> {
        match self.kind {
            NodeKind::Internal { children, .. } => Some(children),
            NodeKind::Leaf { .. } => None,
        }
    }

    /// The router (internal) or the solver (leaf).
    pub fn module(&self) -> &BlockSpec {
        match &self.kind {
            NodeKind::Internal { router, .. } => router,
            NodeKind::Leaf { solver } => solver,
        }
    }

    /// "router" or "solver": what [`Node::module`] is.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn role(&self) -> &'static str {
        match self.kind {
            NodeKind::Internal { .. } => "router",
            NodeKind::Leaf { .. } => "solver",
        }
    }

    /// The edge's transformers as a short label, e.g. `conv5-5+relu, conv5-5+relu+pool`.
    pub(crate) fn edge_label(&self) -> String {
        if self.edge.is_empty() {
            return "identity".to_string();
        }
        self.edge
            .iter()
            .map(|e| e.label())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A node as `tree.json` stores it: the kind spread over three optional fields.
#[derive(Serialize, Deserialize)]
struct NodeFile {
    parent: Option<usize>,
    children: Option<[usize; 2]>,
    edge: Vec<BlockSpec>,
    router: Option<BlockSpec>,
    solver: Option<BlockSpec>,
}

impl TryFrom<NodeFile> for Node {
    type Error = TopologyError;
    fn try_from(f: NodeFile) -> Result<Node, TopologyError> {
        let kind = match (f.children, f.router, f.solver) {
            (Some(children), Some(router), None) => NodeKind::Internal { router, children },
            (None, None, Some(solver)) => NodeKind::Leaf { solver },
            (Some(_), _, _) => {
                let why = "internal nodes need a router and no solver";
                return Err(TopologyError::NodeKind(why));
            }
            (None, _, _) => {
                return Err(TopologyError::NodeKind(
                    "leaves need a solver and no router",
                ));
            }
        };
        Ok(Node {
            parent: f.parent,
            edge: f.edge,
            kind,
        })
    }
}

impl From<Node> for NodeFile {
    fn from(n: Node) -> NodeFile {
        let (children, router, solver) = match n.kind {
            NodeKind::Internal { router, children } => (Some(children), Some(router), None),
            NodeKind::Leaf { solver } => (None, None, Some(solver)),
        };
        NodeFile {
            parent: n.parent,
            children,
            edge: n.edge,
            router,
            solver,
        }
    }
}

/// The structure of an ANT, without weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Per-sample input shape.
    pub input: Shape,
    pub nodes: Vec<Node>,
}

/// The one tree walk: depth-first from the root, a node's left subtree before its right,
/// over an explicit stack (a deep tree cannot overflow the call stack). `visit(node,
/// state)` returns the children to visit next, each with its state; none for a leaf, or
/// for a subtree not worth visiting.
pub(crate) fn depth_first<S>(start: S, mut visit: impl FnMut(usize, S) -> Vec<(usize, S)>) {
    let mut stack = vec![(0, start)];
    while let Some((i, s)) = stack.pop() {
        // Reversed onto the stack, so the first child returned is visited first.
        stack.extend(visit(i, s).into_iter().rev());
    }
}

impl Topology {
    /// A root-only tree.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn root(input: Shape, edge: Vec<BlockSpec>, solver: BlockSpec) -> Self {
        Topology {
            input,
            nodes: vec![Node {
                parent: None,
                edge,
                kind: NodeKind::Leaf { solver },
            }],
        }
    }

    /// Node indices from the root to `i` (inclusive).
    pub fn path(&self, i: usize) -> Vec<usize> {
        let mut p = vec![i];
        let mut c = i;
        while let Some(q) = self.nodes[c].parent {
            p.push(q);
            c = q;
        }
        p.reverse();
        p
    }

    /// Depth of node `i` in edges from the root.
    pub(crate) fn depth_of(&self, i: usize) -> usize {
        self.path(i).len() - 1
    }

    /// Representation shape at node `i` (after its edge's transformers).
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn shape_at(&self, i: usize) -> Shape {
        let mut s = self.input;
        for n in self.path(i) {
            for t in &self.nodes[n].edge {
                s = t
                    .out_shape(s)
                    .expect("topology shapes are checked when grown");
            }
        }
        s
    }

    /// Where a transformer appended to `i`'s edge would sit on its root path.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn next_pos(&self, i: usize) -> PathPos {
        PathPos::after(self.path(i).iter().flat_map(|&n| &self.nodes[n].edge))
    }

    /// Leaves in arena order (the order of mixture components everywhere).
    pub fn leaves(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].is_leaf())
            .collect()
    }

    pub fn routers(&self) -> usize {
        self.nodes.iter().filter(|n| !n.is_leaf()).count()
    }

    /// Non-identity transformer modules in the tree.
    pub fn transformers(&self) -> usize {
        self.nodes
            .iter()
            .flat_map(|n| &n.edge)
            .filter(|t| !t.is_identity())
            .count()
    }

    /// Maximum leaf depth (in edges), in one pass from the root.
    pub fn depth(&self) -> usize {
        let mut depths: Vec<usize> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            depths.push(n.parent.map_or(0, |p| depths[p] + 1));
        }
        depths.into_iter().max().unwrap_or(0)
    }

    /// Parameters of all modules.
    pub fn num_params(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| {
                n.edge.iter().map(BlockSpec::num_params).sum::<usize>() + n.module().num_params()
            })
            .sum()
    }

    /// Replace leaf `i` by an internal node with `router` and two leaves with identity
    /// edges. Returns the children's indices.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn split(
        &mut self,
        i: usize,
        router: BlockSpec,
        left: BlockSpec,
        right: BlockSpec,
    ) -> [usize; 2] {
        let children = [self.nodes.len(), self.nodes.len() + 1];
        for solver in [left, right] {
            self.nodes.push(Node {
                parent: Some(i),
                edge: vec![],
                kind: NodeKind::Leaf { solver },
            });
        }
        self.nodes[i].kind = NodeKind::Internal { router, children };
        children
    }

    /// Append a transformer to leaf `i`'s edge and give it a new solver.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn deepen(&mut self, i: usize, transformer: BlockSpec, solver: BlockSpec) {
        let n = &mut self.nodes[i];
        n.edge.push(transformer);
        n.kind = NodeKind::Leaf { solver };
    }

    /// One line per node, indented by depth: edge, router or solver, output shape.
    pub fn outline(&self) -> String {
        let mut s = String::new();
        let shapes = self.shapes();
        depth_first(0usize, |i, depth| {
            let n = &self.nodes[i];
            s.push_str(&format!(
                "{}node {i}: edge [{}] {} {} -> {}\n",
                "  ".repeat(depth),
                n.edge_label(),
                n.role(),
                n.module().label(),
                shapes[i]
            ));
            n.children()
                .map_or(vec![], |[l, r]| vec![(l, depth + 1), (r, depth + 1)])
        });
        s
    }

    /// Check the invariants a loaded file must satisfy.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn validate(&self) -> Result<(), TopologyError> {
        if self.nodes.is_empty() {
            return Err(TopologyError::Empty);
        }
        if self.nodes[0].parent.is_some() {
            return Err(TopologyError::RootHasParent);
        }
        for (i, n) in self.nodes.iter().enumerate() {
            for c in n.children().into_iter().flatten() {
                if c >= self.nodes.len() || c <= i || self.nodes[c].parent != Some(i) {
                    return Err(TopologyError::BadChild { node: i, child: c });
                }
            }
            if i > 0 && n.parent.is_none_or(|p| p >= i) {
                return Err(TopologyError::BadParent { node: i });
            }
        }
        // Sizes in range first: the shape arithmetic below then cannot overflow.
        if !self.input.in_range() {
            return Err(TopologyError::TooLarge { node: 0 });
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if !n
                .edge
                .iter()
                .chain([n.module()])
                .all(|b| b.layers.iter().all(LayerSpec::in_range))
            {
                return Err(TopologyError::TooLarge { node: i });
            }
        }
        // Every module must accept the shape it receives.
        let shapes = self.shapes_checked()?;
        for (i, &s) in shapes.iter().enumerate() {
            if self.nodes[i].module().out_shape(s).is_none() {
                return Err(TopologyError::ModuleMisfit { node: i, shape: s });
            }
        }
        Ok(())
    }

    /// The representation shape at every node, each transformer checked, in one pass
    /// from the root (a parent comes before its children): time linear in the nodes,
    /// not in nodes times depth, for a file of a deep tree.
    fn shapes_checked(&self) -> Result<Vec<Shape>, TopologyError> {
        let mut shapes: Vec<Shape> = Vec::with_capacity(self.nodes.len());
        for (i, n) in self.nodes.iter().enumerate() {
            let s = n.parent.map_or(self.input, |p| shapes[p]);
            shapes.push(self.edge_checked(i, s)?);
        }
        Ok(shapes)
    }

    /// The representation shape at every node ([`Topology::shape_at`] of each), in one
    /// pass.
    pub(crate) fn shapes(&self) -> Vec<Shape> {
        self.shapes_checked()
            .expect("topology shapes are checked when grown or loaded")
    }

    /// Node `i`'s edge applied to shape `s`.
    fn edge_checked(&self, i: usize, s: Shape) -> Result<Shape, TopologyError> {
        self.nodes[i].edge.iter().try_fold(s, |s, t| {
            t.out_shape(s)
                .ok_or(TopologyError::TransformerMisfit { node: i, shape: s })
        })
    }
}

/// What makes a topology (e.g. an edited `tree.json`) impossible.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TopologyError {
    #[error("tree has no nodes")]
    Empty,
    #[error("node 0 must be the root")]
    RootHasParent,
    #[error("node {node}: bad child {child}")]
    BadChild { node: usize, child: usize },
    #[error("node {node}: bad parent")]
    BadParent { node: usize },
    #[error("node {node}: transformer does not fit {shape}")]
    TransformerMisfit { node: usize, shape: Shape },
    #[error("node {node}: module does not fit {shape}")]
    ModuleMisfit { node: usize, shape: Shape },
    #[error("node {node}: sizes beyond {max}", max = crate::spec::MAX_SIZE)]
    TooLarge { node: usize },
    /// A stored node whose fields do not make one kind.
    #[error("{0}")]
    NodeKind(&'static str),
}
