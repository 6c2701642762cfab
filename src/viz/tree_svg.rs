//! The tree as an SVG picture, in the style of the paper's figures 2, 5 and 6.
//!
//! Each node is a box (`<g id="node-3" class="node">`) holding its index, modules,
//! output shape and parameter count; with data, a red histogram of the reach-weighted
//! class distribution (or target mean and spread for regression), a blue histogram of
//! the router's probability of going left (internal nodes) and the leaf's share of
//! samples under single-path routing. Edges (`<g id="edge-3" class="edge">`) carry one
//! black dot per transformer (hollow for identity); a white circle marks a router, a
//! grey one a solver.

use svg::Document;
use svg::node::element::{Circle, Group, Line, Rectangle, Text, Title};

use super::layout::{BoxRows, Layout, NodeBox, layout};
use super::stats::NodeStats;
use super::thousands;
use crate::tree::Topology;

const RED: &str = "#d62728";
const BLUE: &str = "#1f77b4";
const GREY: &str = "#9a9a9a";
const FONT: &str = "DejaVu Sans, Arial, Helvetica, sans-serif";

/// What to draw besides the tree itself.
#[derive(Clone, Debug, Default)]
pub struct TreePlot<'a> {
    /// Heading at the top.
    pub title: Option<String>,
    /// Per-node statistics ([`super::stats::node_stats`]); `None` draws the bare tree.
    pub stats: Option<&'a [NodeStats]>,
    /// Class names (else class indices).
    pub class_names: Option<&'a [String]>,
}

/// Rows of a node box in font units: title, edge, module, shape/params, then with data
/// the red histogram and its labels, the top classes, the blue histogram (or the
/// single-path share) and the reach line.
fn rows(with_data: bool) -> BoxRows {
    BoxRows {
        box_h: if with_data { 19.6 } else { 5.4 },
        header: 3.6,
    }
}

/// Round to 0.1 px so the file stays small.
fn r(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn text(x: f64, y: f64, size: f64, s: impl Into<String>) -> Text {
    Text::new(s)
        .set("x", r(x))
        .set("y", r(y))
        .set("font-size", r(size))
        .set("font-family", FONT)
}

/// A font size at most `size` at which `s` fits in `avail` pixels (0.6 em per char).
fn fit(s: &str, size: f64, avail: f64) -> f64 {
    let need = 0.6 * size * s.chars().count().max(1) as f64;
    if need > avail {
        size * avail / need
    } else {
        size
    }
}

fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", r(x))
        .set("y", r(y))
        .set("width", r(w.max(0.0)))
        .set("height", r(h.max(0.0)))
        .set("fill", fill)
}

/// A number with about 3 significant digits.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Histogram bars in the rectangle (x, y, w, h), scaled to the largest value; each bar
/// carries its weight in `data-weight`.
fn bars(values: &[f64], x: f64, y: f64, w: f64, h: f64, fill: &str, class: &str) -> Group {
    bars_ref(values, None, x, y, w, h, fill, class)
}

/// [`bars`] with a reference level per bar (`reference`, same scale after normalising
/// both to sum 1) drawn as a black tick: the root's distribution, so a node's
/// enrichment in a class shows as a bar above its tick.
#[allow(clippy::too_many_arguments)]
fn bars_ref(
    values: &[f64],
    reference: Option<&[f64]>,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    fill: &str,
    class: &str,
) -> Group {
    let mut g = Group::new().set("class", class);
    g = g.add(
        rect(x, y, w, h, "#f4f4f4")
            .set("stroke", "#dddddd")
            .set("stroke-width", 0.5),
    );
    let total: f64 = values.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let norm = |v: &[f64]| -> Vec<f64> {
        let s: f64 = v.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        v.iter().map(|a| a / s).collect()
    };
    let share: Vec<f64> = values.iter().map(|v| v / total).collect();
    let refs = reference.map(norm);
    let max = share
        .iter()
        .chain(refs.iter().flatten())
        .cloned()
        .fold(0.0, f64::max);
    let n = values.len().max(1) as f64;
    let bw = w / n;
    for (j, &v) in values.iter().enumerate() {
        let bh = if max > 0.0 { h * share[j] / max } else { 0.0 };
        g = g.add(
            rect(x + j as f64 * bw + bw * 0.1, y + h - bh, bw * 0.8, bh, fill)
                .set("class", "bar")
                .set("data-weight", format!("{v:.6}")),
        );
        if let Some(rv) = refs.as_ref().and_then(|r| r.get(j))
            && max > 0.0
        {
            let ty = y + h - h * rv / max;
            g = g.add(
                Line::new()
                    .set("x1", r(x + j as f64 * bw + bw * 0.05))
                    .set("x2", r(x + j as f64 * bw + bw * 0.95))
                    .set("y1", r(ty))
                    .set("y2", r(ty))
                    .set("stroke", "black")
                    .set("stroke-width", r((h / 40.0).max(1.0)))
                    .set("class", "reference"),
            );
        }
    }
    g
}

/// One edge: a line from (x1, y1) to (x2, y2) with a dot per transformer.
fn edge(t: &Topology, i: usize, from: (f64, f64), to: (f64, f64), f: f64, width: f64) -> Group {
    let n = &t.nodes[i];
    let mut g = Group::new()
        .set("id", format!("edge-{i}"))
        .set("class", "edge");
    g = g.add(
        Line::new()
            .set("x1", r(from.0))
            .set("y1", r(from.1))
            .set("x2", r(to.0))
            .set("y2", r(to.1))
            .set("stroke", "#333333")
            .set("stroke-width", r(width)),
    );
    let k = n.edge.len().max(1);
    for j in 0..k {
        let a = (j + 1) as f64 / (k + 1) as f64;
        let (cx, cy) = (from.0 + a * (to.0 - from.0), from.1 + a * (to.1 - from.1));
        let ident = n.edge.get(j).is_none_or(|b| b.is_identity());
        let label = n.edge.get(j).map_or("identity".to_string(), |b| b.label());
        g = g.add(
            Circle::new()
                .set("cx", r(cx))
                .set("cy", r(cy))
                .set("r", r(0.42 * f))
                .set("fill", if ident { "white" } else { "black" })
                .set("stroke", "black")
                .set("stroke-width", r(0.12 * f))
                .set("class", if ident { "identity" } else { "transformer" })
                .add(Title::new(label.clone())),
        );
        if !ident {
            g = g.add(text(cx + 0.75 * f, cy + 0.25 * f, 0.62 * f, label).set("fill", "#444444"));
        }
    }
    g
}

fn node_group(t: &Topology, i: usize, b: &NodeBox, f: f64, p: &TreePlot) -> Group {
    let n = &t.nodes[i];
    let pad = 0.5 * f;
    let (x, inner) = (b.left() + pad, b.w - 2.0 * pad);
    let mut g = Group::new().set("id", format!("node-{i}")).set(
        "class",
        if n.is_leaf() {
            "node leaf"
        } else {
            "node internal"
        },
    );
    g = g.add(
        rect(b.left(), b.y, b.w, b.h, "white")
            .set("rx", r(0.4 * f))
            .set("stroke", "#555555")
            .set("stroke-width", r(0.1 * f)),
    );
    // title row: router (white) or solver (grey) circle, index, parameters
    let is_router = !n.is_leaf();
    g = g.add(
        Circle::new()
            .set("cx", r(x + 0.5 * f))
            .set("cy", r(b.y + 0.95 * f))
            .set("r", r(0.5 * f))
            .set("fill", if is_router { "white" } else { GREY })
            .set("stroke", "black")
            .set("stroke-width", r(0.12 * f))
            .set("class", if is_router { "router" } else { "solver" }),
    );
    g = g.add(
        text(x + 1.3 * f, b.y + 1.35 * f, 1.05 * f, format!("node {i}"))
            .set("font-weight", "bold")
            .set("class", "node-label"),
    );
    let cost = t.node_cost(i);
    g = g.add(
        text(
            x + inner,
            b.y + 1.3 * f,
            0.72 * f,
            format!("{} params", thousands(cost.params)),
        )
        .set("text-anchor", "end")
        .set("fill", "#555555"),
    );
    let edge_label = n.edge_label();
    let lines = [
        format!("edge: {edge_label} \u{2192} {}", t.shape_at(i)),
        format!("{}: {}", n.role(), n.module().label()),
    ];
    let mut y = b.y + 2.55 * f;
    for l in lines {
        let size = fit(&l, 0.72 * f, inner);
        g = g.add(text(x, y, size, l).set("class", "module"));
        y += 1.15 * f;
    }
    let Some(stats) = p.stats else {
        return g;
    };
    let s = &stats[i];
    let root_mass = stats[0].mass.max(f64::MIN_POSITIVE);
    y += 0.2 * f;
    if let Some(h) = &s.class_hist {
        let top = y;
        let reference = (i != 0).then(|| stats[0].class_hist.as_deref()).flatten();
        g = g.add(bars_ref(
            h,
            reference,
            x,
            top,
            inner,
            5.0 * f,
            RED,
            "class-hist",
        ));
        let nb = h.len().max(1) as f64;
        let bw = inner / nb;
        let step = ((0.75 * f) / bw).ceil().max(1.0) as usize;
        for j in (0..h.len()).step_by(step) {
            let name = p
                .class_names
                .and_then(|c| c.get(j).cloned())
                .unwrap_or_else(|| j.to_string());
            let size = fit(&name, 0.68 * f, bw * step as f64 * 0.95);
            g = g.add(
                text(
                    x + (j as f64 + 0.5) * bw,
                    top + 5.0 * f + 0.85 * f,
                    size,
                    name,
                )
                .set("text-anchor", "middle")
                .set("class", "class-name"),
            );
        }
        y = top + 6.2 * f;
        let tops: Vec<String> = s
            .top_classes(3)
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(c, v)| {
                let name = p
                    .class_names
                    .and_then(|n| n.get(c).cloned())
                    .unwrap_or_else(|| c.to_string());
                format!("{name} {:.0}%", 100.0 * v)
            })
            .collect();
        let l = format!("top: {}", tops.join(", "));
        g = g.add(
            text(x, y + 0.8 * f, fit(&l, 0.78 * f, inner), l)
                .set("fill", RED)
                .set("class", "top-classes"),
        );
        y += 1.4 * f;
    } else if let (Some(mean), Some(std)) = (&s.target_mean, &s.target_std) {
        // dot-and-whisker per output dimension, in the root's standardised units
        let top = y;
        let (rm, rs) = (
            stats[0].target_mean.clone().unwrap_or_default(),
            stats[0].target_std.clone().unwrap_or_default(),
        );
        let h = 5.0 * f;
        let lim = 2.5;
        g = g.add(
            rect(x, top, inner, h, "#f4f4f4")
                .set("stroke", "#dddddd")
                .set("stroke-width", 0.5),
        );
        let ymap = |z: f64| top + h / 2.0 - (z.clamp(-lim, lim) / lim) * (h / 2.0 - 0.2 * f);
        g = g.add(
            Line::new()
                .set("x1", r(x))
                .set("x2", r(x + inner))
                .set("y1", r(ymap(0.0)))
                .set("y2", r(ymap(0.0)))
                .set("stroke", "#bbbbbb")
                .set("stroke-dasharray", "3,3"),
        );
        let d = mean.len().max(1) as f64;
        let mut wg = Group::new().set("class", "target-moments");
        for j in 0..mean.len() {
            let sd = rs.get(j).copied().filter(|v| *v > 0.0).unwrap_or(1.0);
            let mu0 = rm.get(j).copied().unwrap_or(0.0);
            let z = (mean[j] - mu0) / sd;
            let zs = std[j] / sd;
            let cx = x + (j as f64 + 0.5) * inner / d;
            wg = wg.add(
                Line::new()
                    .set("x1", r(cx))
                    .set("x2", r(cx))
                    .set("y1", r(ymap(z - zs)))
                    .set("y2", r(ymap(z + zs)))
                    .set("stroke", RED)
                    .set("stroke-width", r(0.15 * f)),
            );
            wg = wg.add(
                Circle::new()
                    .set("cx", r(cx))
                    .set("cy", r(ymap(z)))
                    .set("r", r(0.3 * f))
                    .set("fill", RED)
                    .set("data-mean", format!("{:.6}", mean[j]))
                    .set("data-std", format!("{:.6}", std[j])),
            );
        }
        g = g.add(wg);
        y = top + h + 0.2 * f;
        let l = if mean.len() == 1 {
            format!("y: mean {} \u{b1} {}", short(mean[0]), short(std[0]))
        } else {
            format!(
                "{} outputs, mean \u{b1} sd (root-standardised); y0 {} \u{b1} {}",
                mean.len(),
                short(mean[0]),
                short(std[0])
            )
        };
        g = g.add(text(x, y + 0.8 * f, fit(&l, 0.72 * f, inner), l).set("fill", RED));
        y += 2.4 * f;
    }
    if let Some(h) = &s.left_hist {
        let top = y + 0.2 * f;
        g = g.add(bars(h, x, top, inner, 3.6 * f, BLUE, "left-hist"));
        let ly = top + 3.6 * f + 0.85 * f;
        let size = 0.65 * f;
        g = g.add(text(x, ly, size, "0"));
        g = g.add(text(x + inner, ly, size, "1").set("text-anchor", "end"));
        g = g.add(
            text(x + inner / 2.0, ly, size, "P(left)")
                .set("text-anchor", "middle")
                .set("fill", BLUE),
        );
    } else if let (Some(c), Some(share)) = (s.single_path_count, s.single_path_share) {
        let top = y + 0.4 * f;
        g = g.add(
            rect(x, top, inner, 1.2 * f, "#eeeeee")
                .set("stroke", "#cccccc")
                .set("stroke-width", 0.5),
        );
        g = g.add(
            rect(x, top, inner * share, 1.2 * f, "#555555")
                .set("class", "single-path-share")
                .set("data-share", format!("{share:.6}")),
        );
        let l = format!(
            "single path: {:.1}% ({} sample{})",
            100.0 * share,
            thousands(c),
            if c == 1 { "" } else { "s" }
        );
        g = g.add(text(x, top + 2.4 * f, fit(&l, 0.78 * f, inner), l).set("font-weight", "bold"));
    }
    let l = format!(
        "reach: {:.1}% of the samples' mass",
        100.0 * s.mass / root_mass
    );
    g = g.add(
        text(x, b.bottom() - 0.55 * f, fit(&l, 0.7 * f, inner), l)
            .set("fill", "#555555")
            .set("class", "reach"),
    );
    g
}

fn legend(l: &Layout, p: &TreePlot) -> Group {
    let f = l.font;
    let mut g = Group::new().set("id", "legend");
    let mut x = 1.5 * f;
    let y = 1.5 * f + (if p.title.is_some() { 1.8 * f } else { 0.0 });
    let item = |g: Group, mark: Group, label: &str, x: &mut f64| -> Group {
        let t = text(*x + 1.0 * f, y + 0.3 * f, 0.8 * f, label);
        let g = g.add(mark).add(t);
        *x += 1.0 * f + 0.8 * 0.5 * f * label.chars().count() as f64 + 1.2 * f;
        g
    };
    let dot = |fill: &str, x: f64, rr: f64| {
        Group::new().add(
            Circle::new()
                .set("cx", r(x + 0.4 * f))
                .set("cy", r(y))
                .set("r", r(rr * f))
                .set("fill", fill.to_string())
                .set("stroke", "black")
                .set("stroke-width", r(0.12 * f)),
        )
    };
    let sq = |fill: &str, x: f64| Group::new().add(rect(x, y - 0.4 * f, 0.8 * f, 0.8 * f, fill));
    g = item(g, dot("black", x, 0.35), "transformer", &mut x);
    g = item(g, dot("white", x, 0.35), "identity", &mut x);
    g = item(g, dot("white", x, 0.5), "router", &mut x);
    g = item(g, dot(GREY, x, 0.5), "solver", &mut x);
    if p.stats.is_some() {
        g = item(
            g,
            sq(RED, x),
            "class distribution (reach-weighted; tick: root's)",
            &mut x,
        );
        g = item(g, sq(BLUE, x), "router P(left) (reach-weighted)", &mut x);
    }
    g
}

/// The tree as an SVG document, at least `width` pixels wide.
pub fn tree_svg(t: &Topology, width: f64, p: &TreePlot) -> String {
    let l = layout(t, width, rows(p.stats.is_some()));
    let f = l.font;
    let mut doc = Document::new()
        .set("width", r(l.width))
        .set("height", r(l.height))
        .set("viewBox", (0, 0, r(l.width), r(l.height)))
        .add(rect(0.0, 0.0, l.width, l.height, "white"));
    if let Some(title) = &p.title {
        doc = doc.add(
            text(1.5 * f, 2.0 * f, 1.2 * f, title.clone())
                .set("font-weight", "bold")
                .set("id", "title"),
        );
    }
    doc = doc.add(legend(&l, p));
    doc = doc.add(
        text(
            l.input.0,
            l.input.1 - 0.3 * f,
            0.8 * f,
            format!("input {}", t.input),
        )
        .set("text-anchor", "middle"),
    );
    let root_mass = p.stats.map(|s| s[0].mass.max(f64::MIN_POSITIVE));
    let mut edges = Group::new().set("id", "edges");
    for i in 0..t.nodes.len() {
        let from = match t.nodes[i].parent {
            Some(q) => (l.boxes[q].x, l.boxes[q].bottom()),
            None => l.input,
        };
        let to = (l.boxes[i].x, l.boxes[i].y);
        let w = match (p.stats, root_mass) {
            (Some(s), Some(m)) => 0.08 * f + 0.35 * f * (s[i].mass / m).clamp(0.0, 1.0),
            _ => 0.12 * f,
        };
        edges = edges.add(edge(t, i, from, to, f, w));
    }
    doc = doc.add(edges);
    let mut nodes = Group::new().set("id", "nodes");
    for (i, b) in l.boxes.iter().enumerate() {
        nodes = nodes.add(node_group(t, i, b, f, p));
    }
    doc = doc.add(nodes);
    doc.to_string()
}
