//! Training curves from `records.jsonl`, as the paper's Fig. 4 (right).
//!
//! Every optimisation (a growth candidate: "n0 root", "n0 split", "n0 deepen", ...;
//! then refinement) is a segment; segments are concatenated along one x axis of
//! epochs. The upper panel shows training and validation loss, the lower one the
//! validation metric; segments are shaded alternately and labelled, the candidate kept
//! by growth is starred, and the start of refinement is marked in red.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{AntError, Result};
use crate::observe::{CandidateKind, Decision, EpochRecord, Phase};

/// One optimisation: records `start..end` of the concatenated list, drawn at x =
/// `start + 1 ..= end`.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub phase: Phase,
    pub node: Option<usize>,
    pub candidate: Option<CandidateKind>,
    pub start: usize,
    pub end: usize,
    /// e.g. "n0 split", or "refine".
    pub label: String,
    /// Whether growth kept this candidate (from the run's decisions).
    pub kept: bool,
}

/// Read `records.jsonl` (one [`EpochRecord`] per line; blank lines skipped).
pub fn read_records(path: &Path) -> Result<Vec<EpochRecord>> {
    let text = std::fs::read_to_string(path).map_err(|e| AntError::io(path, e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| AntError::data(path, format!("line {}: {e}", i + 1)))
        })
        .collect()
}

/// Split records into consecutive optimisations: a new segment starts when the phase,
/// node or candidate changes, or the epoch counter does not increase. `decisions`
/// (from `tree.json`) mark the kept candidates.
pub fn segments(records: &[EpochRecord], decisions: &[Decision]) -> Vec<Segment> {
    let mut out: Vec<Segment> = vec![];
    for (j, r) in records.iter().enumerate() {
        let same = out.last().is_some_and(|s| {
            s.phase == r.phase
                && s.node == r.node
                && s.candidate == r.candidate
                && records[j - 1].epoch < r.epoch
        });
        if same {
            out.last_mut().expect("segment").end = j + 1;
            continue;
        }
        // the k-th training of a candidate at a node belongs to the node's k-th decision
        let attempt = out
            .iter()
            .filter(|s| s.phase == r.phase && s.node == r.node && s.candidate == r.candidate)
            .count();
        let decision = match (&r.node, &r.candidate) {
            (Some(n), Some(c)) if r.phase == Phase::Growth && *c != CandidateKind::Root => {
                decisions.iter().filter(|d| d.node == *n).nth(attempt)
            }
            _ => None,
        };
        let label = match (&r.node, &r.candidate) {
            _ if r.phase == Phase::Refine => "refine".to_string(),
            (Some(n), Some(c)) => match decision {
                Some(d) => format!("n{n} {c} (level {})", d.level),
                None => format!("n{n} {c}"),
            },
            (Some(n), None) => format!("n{n}"),
            (None, Some(c)) => c.to_string(),
            (None, None) => r.phase.to_string(),
        };
        let kept = r.phase == Phase::Growth
            && (r.candidate == Some(CandidateKind::Root)
                || decision.is_some_and(|d| {
                    Some(d.action.as_str()) == r.candidate.map(CandidateKind::as_str)
                }));
        out.push(Segment {
            phase: r.phase,
            node: r.node,
            candidate: r.candidate,
            start: j,
            end: j + 1,
            label,
            kept,
        });
    }
    out
}

/// A y range covering `v`, ignoring outliers above the 95th percentile (first-epoch
/// spikes) so the rest stays readable.
pub fn robust_range(v: &[f64]) -> (f64, f64) {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return (0.0, 1.0);
    }
    s.sort_by(f64::total_cmp);
    let lo = s[0];
    let hi = s[((s.len() - 1) as f64 * 0.95).round() as usize].max(lo);
    let pad = ((hi - lo) * 0.08).max(1e-3 * hi.abs().max(1.0));
    (
        (lo - pad).max(if lo >= 0.0 { 0.0 } else { f64::MIN }),
        hi + pad * 2.0,
    )
}

fn err<E: std::fmt::Display>(e: E) -> AntError {
    AntError::model(format!("drawing the curves: {e}"))
}

/// The curves as an SVG document of `width` x `height` pixels. `metric` names the
/// validation metric ("valid error %" or "valid MSE").
pub fn curves_svg(
    records: &[EpochRecord],
    decisions: &[Decision],
    metric: &str,
    title: &str,
    width: u32,
    height: u32,
) -> Result<String> {
    if records.is_empty() {
        return Err(AntError::param("records.jsonl holds no epochs"));
    }
    let segs = segments(records, decisions);
    let n = records.len() as f64;
    let mut buf = String::new();
    {
        let f = (width as f64 / 90.0).clamp(11.0, 22.0);
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root
            .titled(
                title,
                ("sans-serif", f * 1.4).into_font().style(FontStyle::Bold),
            )
            .map_err(err)?;
        let (upper, lower) = root.split_vertically((height as f64 * 0.55) as u32);
        let panels: [(&DrawingArea<_, _>, &str, Vec<(&str, RGBColor, Vec<f64>)>); 2] = [
            (
                &upper,
                "loss (NLL)",
                vec![
                    (
                        "train loss",
                        RGBColor(31, 119, 180),
                        records.iter().map(|r| r.train_loss).collect(),
                    ),
                    (
                        "valid loss",
                        RGBColor(255, 127, 14),
                        records.iter().map(|r| r.valid_loss).collect(),
                    ),
                ],
            ),
            (
                &lower,
                metric,
                vec![(
                    metric,
                    RGBColor(44, 160, 44),
                    records.iter().map(|r| r.valid_metric).collect(),
                )],
            ),
        ];
        for (k, (area, ydesc, series)) in panels.into_iter().enumerate() {
            let all: Vec<f64> = series.iter().flat_map(|s| s.2.iter().copied()).collect();
            let (lo, hi) = robust_range(&all);
            let mut chart = ChartBuilder::on(area)
                .margin(f * 0.8)
                .margin_top(if k == 0 { f * 0.5 } else { f * 0.2 })
                .x_label_area_size(f * 2.6)
                .y_label_area_size(f * 4.5)
                .build_cartesian_2d(0.5f64..n + 0.5, lo..hi)
                .map_err(err)?;
            // alternate shading per segment, refinement tinted
            chart
                .draw_series(segs.iter().enumerate().map(|(j, s)| {
                    let c = if s.phase == Phase::Refine {
                        RGBColor(253, 235, 235)
                    } else if j % 2 == 0 {
                        RGBColor(240, 240, 240)
                    } else {
                        RGBColor(252, 252, 252)
                    };
                    Rectangle::new(
                        [(s.start as f64 + 0.5, lo), (s.end as f64 + 0.5, hi)],
                        c.filled(),
                    )
                }))
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .light_line_style(RGBColor(225, 225, 225))
                .x_desc(if k == 1 {
                    "epoch (growth candidates, then refinement, concatenated)"
                } else {
                    ""
                })
                .y_desc(ydesc)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .label_style(("sans-serif", f * 0.85))
                .axis_desc_style(("sans-serif", f))
                .draw()
                .map_err(err)?;
            for (name, color, values) in &series {
                for (j, s) in segs.iter().enumerate() {
                    let pts: Vec<(f64, f64)> = (s.start..s.end)
                        .map(|i| ((i + 1) as f64, values[i].clamp(lo, hi)))
                        .collect();
                    let style = ShapeStyle::from(color).stroke_width(2);
                    let drawn = chart
                        .draw_series(LineSeries::new(pts, style))
                        .map_err(err)?;
                    if j == 0 {
                        let c = *color;
                        drawn.label(*name).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                        });
                    }
                }
            }
            // segment boundaries, refinement start
            for s in &segs {
                let x = s.start as f64 + 0.5;
                let refine_start = s.phase == Phase::Refine
                    && segs
                        .iter()
                        .position(|t| t.phase == Phase::Refine)
                        .is_some_and(|p| segs[p].start == s.start);
                let style = if refine_start {
                    RED.stroke_width(3)
                } else {
                    RGBColor(150, 150, 150).stroke_width(1)
                };
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, lo), (x, hi)],
                        style,
                    )))
                    .map_err(err)?;
            }
            if k == 0 {
                let font = ("sans-serif", f * 0.8)
                    .into_font()
                    .transform(FontTransform::Rotate90);
                for s in &segs {
                    let label = if s.kept {
                        format!("{} *", s.label)
                    } else {
                        s.label.clone()
                    };
                    let x = (s.start + s.end) as f64 / 2.0 + 0.5;
                    let color = if s.phase == Phase::Refine { RED } else { BLACK };
                    let style = font
                        .clone()
                        .color(&color)
                        .pos(Pos::new(HPos::Left, VPos::Center));
                    chart
                        .draw_series(std::iter::once(Text::new(
                            label,
                            (x, hi - (hi - lo) * 0.02),
                            style,
                        )))
                        .map_err(err)?;
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::MiddleRight)
                    .label_font(("sans-serif", f * 0.85))
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(err)?;
            } else {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .label_font(("sans-serif", f * 0.85))
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(buf)
}
