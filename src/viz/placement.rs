//! Where the nodes of a tree go in a top-down drawing.
//!
//! Leaves take consecutive slots from left to right (left child first); an internal
//! node sits midway between its children. Subtrees therefore occupy disjoint ranges of
//! slots and boxes never overlap. Slots have a minimum width, so a tree with many leaves
//! makes the picture wider than asked rather than unreadable; fonts and boxes scale
//! with the slot width.

use crate::tree::Topology;

/// Narrowest slot per leaf, in pixels.
pub const MIN_SLOT: f64 = 230.0;
/// Margin around the drawing, in font units.
const MARGIN: f64 = 1.5;
/// A slot is this many font units wide: the font is the slot width over it, within
/// [`MIN_FONT`]..=[`MAX_FONT`] pixels.
const SLOT_FONTS: f64 = 19.0;
const MIN_FONT: f64 = 10.0;
const MAX_FONT: f64 = 16.0;
/// A box fills this share of its slot, up to [`MAX_BOX_W`] font units.
const BOX_SHARE: f64 = 0.9;
const MAX_BOX_W: f64 = 26.0;
/// Vertical gap between levels, in font units per transformer dot on the longest edge
/// (plus one), at least [`MIN_GAP`].
const GAP_PER_DOT: f64 = 1.6;
const MIN_GAP: f64 = 4.0;

/// A node's box: `x` is the centre, `y` the top.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl NodeBox {
    pub fn left(&self) -> f64 {
        self.x - self.w / 2.0
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
}

/// Positions of every node, in pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// Base font size; every other size is a multiple of it.
    pub font: f64,
    pub boxes: Vec<NodeBox>,
    /// Where the root's incoming edge starts (the input).
    pub input: (f64, f64),
    /// Top of the drawing area below the title and legend.
    pub top: f64,
}

/// How tall a node box is and how much room sits above the tree, in font units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxRows {
    /// Box height in font units.
    pub box_h: f64,
    /// Room for the title and legend above the tree, in font units.
    pub header: f64,
}

/// Lay out `t` in a picture at least `min_width` pixels wide.
pub fn layout(t: &Topology, min_width: f64, rows: BoxRows) -> Layout {
    let leaves = t.leaves().len().max(1) as f64;
    let font = ((min_width / leaves).max(MIN_SLOT) / SLOT_FONTS).clamp(MIN_FONT, MAX_FONT);
    let margin = MARGIN * font;
    let slot = ((min_width - 2.0 * margin) / leaves).max(MIN_SLOT);
    let w = (slot * BOX_SHARE).min(MAX_BOX_W * font);
    let width = min_width.max(leaves * slot + 2.0 * margin);
    let x0 = (width - leaves * slot) / 2.0;
    let max_edge = t
        .nodes
        .iter()
        .map(|n| n.edge.len().max(1))
        .max()
        .unwrap_or(1) as f64;
    let gap = font * (GAP_PER_DOT * (max_edge + 1.0)).max(MIN_GAP);
    let top = margin + rows.header * font;
    let box_h = rows.box_h * font;
    let mut boxes = vec![
        NodeBox {
            x: 0.0,
            y: 0.0,
            w,
            h: box_h
        };
        t.nodes.len()
    ];
    let mut next = 0usize;
    fn place(
        t: &Topology,
        i: usize,
        next: &mut usize,
        x0: f64,
        slot: f64,
        boxes: &mut [NodeBox],
    ) -> f64 {
        let x = match t.nodes[i].children() {
            None => {
                let x = x0 + (*next as f64 + 0.5) * slot;
                *next += 1;
                x
            }
            Some([l, r]) => {
                let a = place(t, l, next, x0, slot, boxes);
                let b = place(t, r, next, x0, slot, boxes);
                (a + b) / 2.0
            }
        };
        boxes[i].x = x;
        x
    }
    place(t, 0, &mut next, x0, slot, &mut boxes);
    let input_y = top + font;
    for (i, b) in boxes.iter_mut().enumerate() {
        b.y = input_y + gap + t.depth_of(i) as f64 * (box_h + gap);
    }
    let height = boxes.iter().map(|b| b.bottom()).fold(0.0, f64::max) + margin;
    Layout {
        width,
        height,
        font,
        input: (boxes[0].x, input_y),
        boxes,
        top,
    }
}
