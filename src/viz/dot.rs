//! The tree as Graphviz DOT (`dot -Tsvg tree.dot > tree.svg`).
//!
//! One node statement per tree node (`n3 [label="..."]`), one edge per parent-child
//! pair labelled with the child's incoming transformers, and the input as a plain node
//! feeding the root.

use super::stats::NodeStats;
use crate::digits::decimals;
use crate::tree::Topology;

/// Escape a string for a double-quoted DOT label (newlines become `\n`).
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            // Other control characters, shown as their code (`\u{7}`: Graphviz refuses them).
            c if c.is_control() => o.push_str(&format!("\\\\u{{{:x}}}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

fn edge_label(t: &Topology, i: usize) -> String {
    let e = &t.nodes[i].edge;
    if e.is_empty() {
        "identity".into()
    } else {
        e.iter().map(|b| b.label()).collect::<Vec<_>>().join("\n")
    }
}

/// DOT text for `t`; `stats` (optional) adds reach, top classes or target moments and
/// single-path shares to the labels; `class_names` names the classes.
pub fn tree_dot(
    t: &Topology,
    stats: Option<&[NodeStats]>,
    class_names: Option<&[String]>,
) -> String {
    let mut s = String::from("digraph ant {\n");
    s.push_str("  graph [rankdir=TB];\n");
    s.push_str("  node [shape=box, style=\"rounded\", fontname=\"Helvetica\", fontsize=10];\n");
    s.push_str("  edge [fontname=\"Helvetica\", fontsize=9];\n");
    s.push_str(&format!(
        "  input [shape=plaintext, label=\"{}\"];\n",
        escape(&format!("input {}", t.input))
    ));
    let root_mass = stats.map(|st| st[0].mass.max(f64::MIN_POSITIVE));
    for (i, n) in t.nodes.iter().enumerate() {
        let mut lines = module_lines(t, i);
        if let (Some(st), Some(m)) = (stats, root_mass) {
            lines.extend(data_lines(&st[i], m, class_names));
        }
        // leaves filled grey, as the solver circles of the SVG
        let (fill, shape) = if n.is_leaf() {
            ("#dddddd", "box")
        } else {
            ("white", "box")
        };
        s.push_str(&format!(
            "  n{i} [shape={shape}, style=\"rounded,filled\", fillcolor=\"{fill}\", label=\"{}\"];\n",
            escape(&lines.join("\n"))
        ));
    }
    for i in 0..t.nodes.len() {
        s.push_str(&edge_statement(t, i));
    }
    s.push_str("}\n");
    s
}

/// Node `i`'s index, router or solver, output shape and parameter count.
fn module_lines(t: &Topology, i: usize) -> Vec<String> {
    let n = &t.nodes[i];
    let mut lines = vec![format!("node {i}")];
    lines.push(format!("{}: {}", n.role(), n.module().label()));
    lines.push(format!(
        "out {} | {} params",
        t.shape_at(i),
        t.node_cost(i).params
    ));
    lines
}

/// A node's reach (share of `root_mass`), top classes or first target's moments, and
/// single-path share.
fn data_lines(x: &NodeStats, root_mass: f64, class_names: Option<&[String]>) -> Vec<String> {
    let mut lines = vec![format!("reach {:.1}%", 100.0 * x.mass / root_mass)];
    let top: Vec<String> = x
        .top_classes(3)
        .into_iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(c, v)| {
            let name = class_names
                .and_then(|n| n.get(c).cloned())
                .unwrap_or_else(|| c.to_string());
            format!("{name} {:.0}%", 100.0 * v)
        })
        .collect();
    if !top.is_empty() {
        lines.push(format!("top: {}", top.join(", ")));
    }
    if let (Some(mu), Some(sd)) = (&x.target_mean, &x.target_std) {
        lines.push(format!("y0 {} +- {}", decimals(mu[0], 3), decimals(sd[0], 3)));
    }
    if let Some(share) = x.single_path_share {
        lines.push(format!("single path {:.1}%", 100.0 * share));
    }
    lines
}

/// The edge into node `i` (from its parent, or the input), labelled with its
/// transformers and, below the root, the side it leaves the parent by.
fn edge_statement(t: &Topology, i: usize) -> String {
    let n = &t.nodes[i];
    let from = match n.parent {
        Some(p) => format!("n{p}"),
        None => "input".to_string(),
    };
    let side = match n.parent.and_then(|p| t.nodes[p].children()) {
        Some([l, _]) if l == i => ", taillabel=\"L\"",
        Some(_) => ", taillabel=\"R\"",
        None => "",
    };
    format!(
        "  {from} -> n{i} [label=\"{}\"{side}];\n",
        escape(&edge_label(t, i))
    )
}
