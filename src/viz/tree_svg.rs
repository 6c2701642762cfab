//! The tree as an SVG picture, in the style of the paper's figures 2, 5 and 6.
//!
//! Each node is a box (`<g id="node-3" class="node">`) holding its index, modules,
//! output shape and parameter count; with data, a red histogram of the reach-weighted
//! class distribution (or target mean and spread for regression), a blue histogram of
//! the router's probability of going left (internal nodes) and the leaf's share of
//! samples under single-path routing. Edges (`<g id="edge-3" class="edge">`) carry one
//! black dot per transformer (hollow for identity); a white circle marks a router, a
//! grey one a solver.
//!
//! Every length is a multiple of the layout's font size `f` ("font units"), so the
//! picture scales as a whole when the layout picks a larger font.

use svg::Document;
use svg::Node;
use svg::node::element::{Circle, Group, Line, Rectangle, Text, Title};

use super::placement::{BoxRows, Layout, NodeBox, layout};
use super::stats::NodeStats;
use super::thousands;
use crate::digits::{decimals, significant};
use crate::tree::Topology;

const RED: &str = "#d62728";
const BLUE: &str = "#1f77b4";
const GREY: &str = "#9a9a9a";
/// Box outlines and secondary text.
const MUTED: &str = "#555555";
/// Background and outline of a histogram panel.
const PANEL_FILL: &str = "#f4f4f4";
const PANEL_STROKE: &str = "#dddddd";
const FONT: &str = "DejaVu Sans, Arial, Helvetica, sans-serif";

/// Node box height in font units with data: title, edge, module, red panel and its
/// labels, top classes, blue histogram (or the single-path share) and the reach line.
const BOX_ROWS_WITH_DATA: f64 = 19.6;
/// Node box height in font units without data: title, edge and module.
const BOX_ROWS_BARE: f64 = 5.4;
/// Room above the tree for the title and legend, in font units.
const HEADER_ROWS: f64 = 3.6;
/// Padding between a node box's outline and its contents, in font units.
const PAD: f64 = 0.5;
/// Height of the red panel (class histogram or target moments), in font units.
const DIST_H: f64 = 5.0;
/// Height of the blue router histogram, in font units.
const LEFT_H: f64 = 3.6;
/// Height of the single-path share bar, in font units.
const SHARE_H: f64 = 1.2;
/// Target moments are drawn within this many root standard deviations of the root's mean.
const Z_LIMIT: f64 = 2.5;
/// Classes named in a node's "top:" line.
const TOP_CLASSES: usize = 3;

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

/// Rows of a node box and of the header, in font units.
fn rows(with_data: bool) -> BoxRows {
    BoxRows {
        box_h: if with_data {
            BOX_ROWS_WITH_DATA
        } else {
            BOX_ROWS_BARE
        },
        header: HEADER_ROWS,
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

/// A rectangle in pixels: top-left corner and size.
#[derive(Clone, Copy, Debug)]
struct Area {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new()
        .set("x", r(x))
        .set("y", r(y))
        .set("width", r(w.max(0.0)))
        .set("height", r(h.max(0.0)))
        .set("fill", fill)
}

/// The light background of a histogram or moments panel.
fn panel(a: Area) -> Rectangle {
    rect(a.x, a.y, a.w, a.h, PANEL_FILL)
        .set("stroke", PANEL_STROKE)
        .set("stroke-width", 0.5)
}

/// A number with about 3 significant digits (as `%.3g` far from 1).
fn short(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (100.0..1e6).contains(&a) {
        format!("{v:.0}")
    } else if (10.0..100.0).contains(&a) {
        format!("{v:.1}")
    } else if (1.0..10.0).contains(&a) {
        format!("{v:.2}")
    } else if (0.01..1.0).contains(&a) {
        format!("{v:.3}")
    } else {
        significant(v, 3)
    }
}

/// `v` divided by its sum (guarded against an empty or zero sum).
fn normalised(v: &[f64]) -> Vec<f64> {
    let s: f64 = v.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    v.iter().map(|a| a / s).collect()
}

/// Histogram bars in `a`, scaled to the largest share; each bar carries its weight in
/// `data-weight`. With a `reference` (the root's distribution; both normalised to sum
/// 1, so they share a scale) each bar gets a black tick at the reference level: a
/// node's enrichment in a class shows as a bar above its tick.
fn bars(values: &[f64], reference: Option<&[f64]>, a: Area, fill: &str, class: &str) -> Group {
    let mut g = Group::new().set("class", class).add(panel(a));
    let share = normalised(values);
    let refs = reference.map(normalised);
    let max = share
        .iter()
        .chain(refs.iter().flatten())
        .cloned()
        .fold(0.0, f64::max);
    let bw = a.w / values.len().max(1) as f64;
    for (j, &v) in values.iter().enumerate() {
        let bh = if max > 0.0 { a.h * share[j] / max } else { 0.0 };
        let left = a.x + j as f64 * bw;
        g = g.add(
            rect(left + bw * 0.1, a.y + a.h - bh, bw * 0.8, bh, fill)
                .set("class", "bar")
                .set("data-weight", decimals(v, 6)),
        );
        if let Some(rv) = refs.as_ref().and_then(|r| r.get(j))
            && max > 0.0
        {
            let ty = a.y + a.h - a.h * rv / max;
            g = g.add(
                Line::new()
                    .set("x1", r(left + bw * 0.05))
                    .set("x2", r(left + bw * 0.95))
                    .set("y1", r(ty))
                    .set("y2", r(ty))
                    .set("stroke", "black")
                    .set("stroke-width", r((a.h / 40.0).max(1.0)))
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
    // dots evenly spaced along the line; an identity edge gets one hollow dot
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

/// The name of class `j`: from `names`, else its index.
fn class_name(names: Option<&[String]>, j: usize) -> String {
    names
        .and_then(|c| c.get(j).cloned())
        .unwrap_or_else(|| j.to_string())
}

/// The caption under the target moments: the one output's mean and spread, or the
/// first of several.
fn moments_caption(mean: &[f64], std: &[f64]) -> String {
    if mean.len() == 1 {
        format!("y: mean {} \u{b1} {}", short(mean[0]), short(std[0]))
    } else {
        format!(
            "{} outputs, mean \u{b1} sd (root-standardised); y0 {} \u{b1} {}",
            mean.len(),
            short(mean[0]),
            short(std[0])
        )
    }
}

/// Vertical position of a root-standardised value `z` in a moments panel from `top`,
/// `h` pixels tall, font unit `f`; clipped at [`Z_LIMIT`].
#[derive(Clone, Copy)]
struct ZScale {
    top: f64,
    h: f64,
    f: f64,
}

impl ZScale {
    fn y(&self, z: f64) -> f64 {
        let lim = Z_LIMIT;
        self.top + self.h / 2.0 - (z.clamp(-lim, lim) / lim) * (self.h / 2.0 - 0.2 * self.f)
    }
}

/// Draws the contents of one node box, top to bottom, into its group. `x` and `w` are
/// the left edge and width inside the box's padding, `f` the font unit; the row
/// methods take the `y` where they start and return the `y` below them.
struct NodePainter<'a> {
    g: Group,
    x: f64,
    w: f64,
    f: f64,
    class_names: Option<&'a [String]>,
}

impl NodePainter<'_> {
    fn add<T: Into<Box<dyn Node>>>(&mut self, node: T) {
        self.g.append(node);
    }

    /// The router (white) or solver (grey) circle, the node's index and its parameters.
    fn title_row(&mut self, t: &Topology, i: usize, top: f64) {
        let (x, f) = (self.x, self.f);
        let is_router = !t.nodes[i].is_leaf();
        self.add(
            Circle::new()
                .set("cx", r(x + 0.5 * f))
                .set("cy", r(top + 0.95 * f))
                .set("r", r(0.5 * f))
                .set("fill", if is_router { "white" } else { GREY })
                .set("stroke", "black")
                .set("stroke-width", r(0.12 * f))
                .set("class", if is_router { "router" } else { "solver" }),
        );
        self.add(
            text(x + 1.3 * f, top + 1.35 * f, 1.05 * f, format!("node {i}"))
                .set("font-weight", "bold")
                .set("class", "node-label"),
        );
        let params = format!("{} params", thousands(t.node_cost(i).params));
        self.add(
            text(x + self.w, top + 1.3 * f, 0.72 * f, params)
                .set("text-anchor", "end")
                .set("fill", MUTED),
        );
    }

    /// The incoming edge with the node's output shape, then its router or solver.
    fn module_rows(&mut self, t: &Topology, i: usize, mut y: f64) -> f64 {
        let n = &t.nodes[i];
        let lines = [
            format!("edge: {} \u{2192} {}", n.edge_label(), t.shape_at(i)),
            format!("{}: {}", n.role(), n.module().label()),
        ];
        for l in lines {
            let size = fit(&l, 0.72 * self.f, self.w);
            self.add(text(self.x, y, size, l).set("class", "module"));
            y += 1.15 * self.f;
        }
        y
    }

    /// Classification: the red class histogram (ticks at `reference`, the root's),
    /// the class names under it and the node's top classes.
    fn class_panel(
        &mut self,
        s: &NodeStats,
        h: &[f64],
        reference: Option<&[f64]>,
        top: f64,
    ) -> f64 {
        let (x, w, f) = (self.x, self.w, self.f);
        let area = Area {
            x,
            y: top,
            w,
            h: DIST_H * f,
        };
        self.add(bars(h, reference, area, RED, "class-hist"));
        self.class_name_row(h.len(), top);
        let y = top + 6.2 * f;
        self.top_classes_row(s, y);
        y + 1.4 * f
    }

    /// Names under the class histogram's bars; only every `step`-th when the bars are
    /// too narrow for a label each.
    fn class_name_row(&mut self, n_classes: usize, top: f64) {
        let f = self.f;
        let bw = self.w / n_classes.max(1) as f64;
        let step = ((0.75 * f) / bw).ceil().max(1.0) as usize;
        for j in (0..n_classes).step_by(step) {
            let name = class_name(self.class_names, j);
            let size = fit(&name, 0.68 * f, bw * step as f64 * 0.95);
            self.add(
                text(
                    self.x + (j as f64 + 0.5) * bw,
                    top + DIST_H * f + 0.85 * f,
                    size,
                    name,
                )
                .set("text-anchor", "middle")
                .set("class", "class-name"),
            );
        }
    }

    /// "top: a 60%, b 30%, c 10%" (classes with any weight).
    fn top_classes_row(&mut self, s: &NodeStats, y: f64) {
        let tops: Vec<String> = s
            .top_classes(TOP_CLASSES)
            .into_iter()
            .filter(|(_, v)| *v > 0.0)
            .map(|(c, v)| format!("{} {:.0}%", class_name(self.class_names, c), 100.0 * v))
            .collect();
        let l = format!("top: {}", tops.join(", "));
        let size = fit(&l, 0.78 * self.f, self.w);
        self.add(
            text(self.x, y + 0.8 * self.f, size, l)
                .set("fill", RED)
                .set("class", "top-classes"),
        );
    }

    /// Regression: a dot (mean) and whisker (plus/minus one standard deviation) per
    /// output dimension, in units of the root's standard deviation around the root's
    /// mean, over a dashed zero line; a caption below.
    fn moments_panel(&mut self, mean: &[f64], std: &[f64], root: &NodeStats, top: f64) -> f64 {
        let (x, w, f) = (self.x, self.w, self.f);
        let h = DIST_H * f;
        let scale = ZScale { top, h, f };
        self.add(panel(Area { x, y: top, w, h }));
        self.add(
            Line::new()
                .set("x1", r(x))
                .set("x2", r(x + w))
                .set("y1", r(scale.y(0.0)))
                .set("y2", r(scale.y(0.0)))
                .set("stroke", "#bbbbbb")
                .set("stroke-dasharray", "3,3"),
        );
        let whiskers = self.whiskers(mean, std, root, scale);
        self.add(whiskers);
        let y = top + h + 0.2 * f;
        let l = moments_caption(mean, std);
        self.add(text(x, y + 0.8 * f, fit(&l, 0.72 * f, w), l).set("fill", RED));
        y + 2.4 * f
    }

    /// The dots and whiskers of [`Self::moments_panel`], one per output dimension.
    fn whiskers(&self, mean: &[f64], std: &[f64], root: &NodeStats, scale: ZScale) -> Group {
        let f = self.f;
        let (rm, rs) = (
            root.target_mean.clone().unwrap_or_default(),
            root.target_std.clone().unwrap_or_default(),
        );
        let d = mean.len().max(1) as f64;
        let mut wg = Group::new().set("class", "target-moments");
        for j in 0..mean.len() {
            let sd = rs.get(j).copied().filter(|v| *v > 0.0).unwrap_or(1.0);
            let mu0 = rm.get(j).copied().unwrap_or(0.0);
            let z = (mean[j] - mu0) / sd;
            let zs = std[j] / sd;
            let cx = self.x + (j as f64 + 0.5) * self.w / d;
            wg = wg.add(
                Line::new()
                    .set("x1", r(cx))
                    .set("x2", r(cx))
                    .set("y1", r(scale.y(z - zs)))
                    .set("y2", r(scale.y(z + zs)))
                    .set("stroke", RED)
                    .set("stroke-width", r(0.15 * f)),
            );
            wg = wg.add(
                Circle::new()
                    .set("cx", r(cx))
                    .set("cy", r(scale.y(z)))
                    .set("r", r(0.3 * f))
                    .set("fill", RED)
                    .set("data-mean", decimals(mean[j], 6))
                    .set("data-std", decimals(std[j], 6)),
            );
        }
        wg
    }

    /// Internal nodes: the blue histogram of the router's P(left), with its 0..1 axis.
    fn left_panel(&mut self, h: &[f64], y: f64) {
        let (x, w, f) = (self.x, self.w, self.f);
        let top = y + 0.2 * f;
        let area = Area {
            x,
            y: top,
            w,
            h: LEFT_H * f,
        };
        self.add(bars(h, None, area, BLUE, "left-hist"));
        let ly = top + LEFT_H * f + 0.85 * f;
        let size = 0.65 * f;
        self.add(text(x, ly, size, "0"));
        self.add(text(x + w, ly, size, "1").set("text-anchor", "end"));
        self.add(
            text(x + w / 2.0, ly, size, "P(left)")
                .set("text-anchor", "middle")
                .set("fill", BLUE),
        );
    }

    /// Leaves: a bar of the share of samples whose single path ends here, and its count.
    fn single_path_bar(&mut self, count: usize, share: f64, y: f64) {
        let (x, w, f) = (self.x, self.w, self.f);
        let top = y + 0.4 * f;
        self.add(
            rect(x, top, w, SHARE_H * f, "#eeeeee")
                .set("stroke", "#cccccc")
                .set("stroke-width", 0.5),
        );
        self.add(
            rect(x, top, w * share, SHARE_H * f, MUTED)
                .set("class", "single-path-share")
                .set("data-share", decimals(share, 6)),
        );
        let l = format!(
            "single path: {:.1}% ({} sample{})",
            100.0 * share,
            thousands(count),
            if count == 1 { "" } else { "s" }
        );
        self.add(text(x, top + 2.4 * f, fit(&l, 0.78 * f, w), l).set("font-weight", "bold"));
    }

    /// The bottom line: the node's reach as a share of the root's (all samples').
    fn reach_row(&mut self, mass: f64, root_mass: f64, bottom: f64) {
        let l = format!(
            "reach: {:.1}% of the samples' mass",
            100.0 * mass / root_mass
        );
        let size = fit(&l, 0.7 * self.f, self.w);
        self.add(
            text(self.x, bottom - 0.55 * self.f, size, l)
                .set("fill", MUTED)
                .set("class", "reach"),
        );
    }
}

/// The outlined box of node `i`, as the group its contents go into.
fn node_frame(t: &Topology, i: usize, b: &NodeBox, f: f64) -> Group {
    let class = if t.nodes[i].is_leaf() {
        "node leaf"
    } else {
        "node internal"
    };
    Group::new()
        .set("id", format!("node-{i}"))
        .set("class", class)
        .add(
            rect(b.left(), b.y, b.w, b.h, "white")
                .set("rx", r(0.4 * f))
                .set("stroke", MUTED)
                .set("stroke-width", r(0.1 * f)),
        )
}

/// Node `i` in box `b`: title, modules, and with data the class (or target) panel, the
/// router histogram (or single-path share) and the reach.
fn node_group(t: &Topology, i: usize, b: &NodeBox, f: f64, p: &TreePlot) -> Group {
    let pad = PAD * f;
    let mut n = NodePainter {
        g: node_frame(t, i, b, f),
        x: b.left() + pad,
        w: b.w - 2.0 * pad,
        f,
        class_names: p.class_names,
    };
    n.title_row(t, i, b.y);
    let mut y = n.module_rows(t, i, b.y + 2.55 * f);
    let Some(stats) = p.stats else {
        return n.g;
    };
    let (s, root) = (&stats[i], &stats[0]);
    y += 0.2 * f;
    if let Some(h) = &s.class_hist {
        // the root's own histogram needs no reference ticks
        let reference = (i != 0).then_some(root.class_hist.as_deref()).flatten();
        y = n.class_panel(s, h, reference, y);
    } else if let (Some(mean), Some(std)) = (&s.target_mean, &s.target_std) {
        y = n.moments_panel(mean, std, root, y);
    }
    if let Some(h) = &s.left_hist {
        n.left_panel(h, y);
    } else if let (Some(c), Some(share)) = (s.single_path_count, s.single_path_share) {
        n.single_path_bar(c, share, y);
    }
    n.reach_row(s.mass, root.mass.max(f64::MIN_POSITIVE), b.bottom());
    n.g
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

/// Every edge, from the parent's bottom (the input for the root) to the child's top;
/// with data, an edge is as thick as the share of the samples' mass it carries.
fn edges(t: &Topology, l: &Layout, p: &TreePlot) -> Group {
    let f = l.font;
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
    edges
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
    doc = doc.add(edges(t, &l, p));
    let mut nodes = Group::new().set("id", "nodes");
    for (i, b) in l.boxes.iter().enumerate() {
        nodes = nodes.add(node_group(t, i, b, f, p));
    }
    doc.add(nodes).to_string()
}
