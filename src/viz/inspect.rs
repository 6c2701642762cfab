//! The tree in a terminal, drawn with box-drawing characters.
//!
//! ```text
//! node 0  edge conv5-5+relu  router conv5-5+relu+gap+fc3+relu+fc1  -> 5x24x24  1,234 params
//! ├── node 1  edge identity  solver flat+fc10  -> 5x24x24  28,810 params
//! └── node 2  ...
//! ```

use super::thousands;
use crate::tree::Topology;

/// One line describing node `i` (no tree prefix).
pub fn node_line(t: &Topology, i: usize) -> String {
    let n = &t.nodes[i];
    let edge = n.edge_label();
    let what = format!("{} {}", n.role(), n.module().label());
    format!(
        "node {i}  edge {edge}  {what}  -> {}  {} params",
        t.shape_at(i),
        thousands(t.node_cost(i).params)
    )
}

/// The whole tree, one line per node, then a blank line and the totals.
pub fn inspect_text(t: &Topology) -> String {
    let mut s = format!("input {}\n", t.input);
    fn walk(t: &Topology, i: usize, prefix: &str, last: Option<bool>, s: &mut String) {
        let (branch, next) = match last {
            None => ("", String::new()),
            Some(true) => ("└── ", format!("{prefix}    ")),
            Some(false) => ("├── ", format!("{prefix}│   ")),
        };
        s.push_str(&format!("{prefix}{branch}{}\n", node_line(t, i)));
        if let Some([l, r]) = t.nodes[i].children() {
            walk(t, l, &next, Some(false), s);
            walk(t, r, &next, Some(true), s);
        }
    }
    walk(t, 0, "", None, &mut s);
    let total = t.total_cost();
    s.push_str(&format!(
        "\ntotal: {} nodes, {} leaves, {} routers, {} transformers, depth {}, {} params, {} FLOPs per sample (multi-path)\n",
        t.nodes.len(),
        t.leaves().len(),
        t.routers(),
        t.transformers(),
        t.depth(),
        thousands(t.num_params()),
        thousands(total.flops as usize)
    ));
    s
}
