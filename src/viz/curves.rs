//! Training curves from `records.jsonl`, as the paper's Fig. 4 (right).
//!
//! Every optimisation (a growth candidate: "n0 root", "n0 split", "n0 deepen", ...;
//! then refinement) is a segment; segments are concatenated along one x axis of
//! epochs. The upper panel shows training and validation loss, the lower one the
//! validation metric; segments are shaded alternately and labelled, the candidate kept
//! by growth is starred, and the start of refinement is marked in red.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::digits::g4;
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
    let bytes = crate::store::atomic::read_bounded(path, crate::run::MAX_RECORDS_BYTES)
        .map_err(|e| AntError::io(path, e))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        AntError::data(
            path,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })?;
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
    // Segments so far per (phase, node, candidate): counted as they come, so that a
    // run of many candidates takes time linear in its records.
    let mut attempts: HashMap<(Phase, Option<usize>, Option<CandidateKind>), usize> =
        HashMap::new();
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
        let seen = attempts.entry((r.phase, r.node, r.candidate)).or_default();
        let attempt = *seen;
        *seen += 1;
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
    AntError::render("drawing the curves", e.to_string())
}

/// A chart on one panel: x is the epoch, y the panel's quantity.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

const FONT: &str = "sans-serif";
const TRAIN_COLOR: RGBColor = RGBColor(31, 119, 180);
const VALID_COLOR: RGBColor = RGBColor(255, 127, 14);
const METRIC_COLOR: RGBColor = RGBColor(44, 160, 44);
/// Segment shading: growth segments alternate between two greys, refinement is pink.
const SHADE_EVEN: RGBColor = RGBColor(240, 240, 240);
const SHADE_ODD: RGBColor = RGBColor(252, 252, 252);
const SHADE_REFINE: RGBColor = RGBColor(253, 235, 235);
const BOUNDARY_COLOR: RGBColor = RGBColor(150, 150, 150);
const GRID_COLOR: RGBColor = RGBColor(225, 225, 225);
/// Share of the height (below the title) given to the upper (loss) panel.
const UPPER_SHARE: f64 = 0.55;

/// One curve: its legend name, colour and one value per record.
struct Series<'a> {
    name: &'a str,
    color: RGBColor,
    values: Vec<f64>,
}

/// One panel: the upper one shows the losses and labels the segments; the lower one
/// shows the validation metric and names the x axis.
struct Panel<'a> {
    upper: bool,
    y_desc: &'a str,
    series: Vec<Series<'a>>,
}

impl Segment {
    fn is_refine(&self) -> bool {
        self.phase == Phase::Refine
    }
}

/// The two panels' curves: training and validation loss above, `metric` below.
fn panels<'a>(records: &[EpochRecord], metric: &'a str) -> [Panel<'a>; 2] {
    let column = |value: fn(&EpochRecord) -> f64| records.iter().map(value).collect::<Vec<f64>>();
    [
        Panel {
            upper: true,
            y_desc: "loss (NLL)",
            series: vec![
                Series {
                    name: "train loss",
                    color: TRAIN_COLOR,
                    values: column(|r| r.train_loss),
                },
                Series {
                    name: "valid loss",
                    color: VALID_COLOR,
                    values: column(|r| r.valid_loss),
                },
            ],
        },
        Panel {
            upper: false,
            y_desc: metric,
            series: vec![Series {
                name: metric,
                color: METRIC_COLOR,
                values: column(|r| r.valid_metric),
            }],
        },
    ]
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
        // the font unit: every text size and margin is a multiple of it
        let f = (width as f64 / 90.0).clamp(11.0, 22.0);
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root
            .titled(title, (FONT, f * 1.4).into_font().style(FontStyle::Bold))
            .map_err(err)?;
        let (upper, lower) = root.split_vertically((height as f64 * UPPER_SHARE) as u32);
        for (area, panel) in [&upper, &lower].into_iter().zip(panels(records, metric)) {
            draw_panel(area, &panel, &segs, n, f)?;
        }
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// One panel over `n` epochs, font unit `f`: its y range ignores outliers
/// ([`robust_range`]); values beyond it are clipped to its edge.
fn draw_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    panel: &Panel,
    segs: &[Segment],
    n: f64,
    f: f64,
) -> Result<()> {
    let all: Vec<f64> = panel
        .series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .collect();
    let (lo, hi) = robust_range(&all);
    let mut chart = ChartBuilder::on(area)
        .margin(f * 0.8)
        .margin_top(if panel.upper { f * 0.5 } else { f * 0.2 })
        .x_label_area_size(f * 2.6)
        .y_label_area_size(f * 4.5)
        .build_cartesian_2d(0.5f64..n + 0.5, lo..hi)
        .map_err(err)?;
    let px = chart.plotting_area().dim_in_pixel().0 as f64 / n;
    let bands = bands(segs, px);
    shade_segments(&mut chart, segs, &bands, (lo, hi))?;
    draw_mesh(&mut chart, panel, f)?;
    draw_curves(&mut chart, &panel.series, (segs, &bands), px, (lo, hi))?;
    draw_boundaries(&mut chart, segs, &bands, (lo, hi))?;
    if panel.upper {
        label_segments(&mut chart, segs, (&bands, px), (lo, hi), f)?;
    }
    let legend_at = if panel.upper {
        SeriesLabelPosition::MiddleRight
    } else {
        SeriesLabelPosition::UpperRight
    };
    chart
        .configure_series_labels()
        .position(legend_at)
        .label_font((FONT, f * 0.85))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// The narrowest band of the picture, in pixels: segments narrower are drawn together.
const MIN_BAND_PX: f64 = 3.0;

/// The segments as bands of the picture (ranges of `segs`), at `px` pixels per epoch:
/// a segment at least [`MIN_BAND_PX`] wide is its own band; narrower ones are joined
/// until the band is that wide, never across the start of refinement. A run of
/// 280,000 one-epoch candidates is then a few hundred shapes, not a million, and a
/// picture of a usual run is drawn segment by segment as it always was.
fn bands(segs: &[Segment], px: f64) -> Vec<Range<usize>> {
    let mut out = vec![];
    let mut from = 0;
    for (j, s) in segs.iter().enumerate() {
        let wide = (s.end - segs[from].start) as f64 * px >= MIN_BAND_PX;
        let phase_ends = segs.get(j + 1).is_none_or(|n| n.is_refine() != s.is_refine());
        if wide || phase_ends {
            out.push(from..j + 1);
            from = j + 1;
        }
    }
    out
}

/// The records `start..end` a band covers.
fn band_records(segs: &[Segment], band: &Range<usize>) -> Range<usize> {
    segs[band.start].start..segs[band.end - 1].end
}

/// Alternate shading per band over the y range `(lo, hi)`, refinement tinted.
fn shade_segments(
    chart: &mut Chart,
    segs: &[Segment],
    bands: &[Range<usize>],
    (lo, hi): (f64, f64),
) -> Result<()> {
    chart
        .draw_series(bands.iter().enumerate().map(|(j, band)| {
            let c = if segs[band.start].is_refine() {
                SHADE_REFINE
            } else if j % 2 == 0 {
                SHADE_EVEN
            } else {
                SHADE_ODD
            };
            let r = band_records(segs, band);
            Rectangle::new(
                [(r.start as f64 + 0.5, lo), (r.end as f64 + 0.5, hi)],
                c.filled(),
            )
        }))
        .map_err(err)?;
    Ok(())
}

/// Axes, horizontal grid lines and their labels; the lower panel names the x axis.
fn draw_mesh(chart: &mut Chart, panel: &Panel, f: f64) -> Result<()> {
    let x_desc = if panel.upper {
        ""
    } else {
        "epoch (growth candidates, then refinement, concatenated)"
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(GRID_COLOR)
        .x_desc(x_desc)
        .y_desc(panel.y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&axis_label)
        .label_style((FONT, f * 0.85))
        .axis_desc_style((FONT, f))
        .draw()
        .map_err(err)
}

/// A value axis's label: plotters' own (`1.0`, `0.25`) where it writes few digits,
/// `%.4g` beyond (its own writes 1e58 with 58 digits and 1e-9 as `0.0`).
pub(super) fn axis_label(y: &f64) -> String {
    match *y == 0.0 || (1e-4..1e6).contains(&y.abs()) {
        true => <RangedCoordf64 as ValueFormatter<f64>>::format(y),
        false => g4(*y),
    }
}

/// Each series as one line per band (a segment is a separate optimisation: lines are
/// not joined across segments, but within a band of segments too narrow to tell
/// apart), clipped to `(lo, hi)` and at most two points per pixel column; the first
/// band's line carries the legend entry.
fn draw_curves(
    chart: &mut Chart,
    series: &[Series],
    (segs, bands): (&[Segment], &[Range<usize>]),
    px: f64,
    (lo, hi): (f64, f64),
) -> Result<()> {
    for s in series {
        for (j, band) in bands.iter().enumerate() {
            let pts = column_extremes(&s.values, band_records(segs, band), px)
                .map(|i| ((i + 1) as f64, s.values[i].clamp(lo, hi)))
                .collect::<Vec<_>>();
            let style = ShapeStyle::from(&s.color).stroke_width(2);
            let drawn = chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?;
            if j == 0 {
                let c = s.color;
                drawn.label(s.name).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            }
        }
    }
    Ok(())
}

/// The records of `range` to draw at `px` pixels per epoch: all where each has a pixel
/// column of its own, else per column its lowest and highest value, in order.
fn column_extremes(values: &[f64], range: Range<usize>, px: f64) -> impl Iterator<Item = usize> {
    let column = move |i: usize| ((i + 1) as f64 * px).floor() as i64;
    let mut kept = vec![];
    let mut i = range.start;
    while i < range.end {
        let c = column(i);
        let same = (i..range.end).take_while(|&k| column(k) == c);
        let (lo, hi) = same.fold((i, i), |(a, b), k| {
            let a = if values[k] < values[a] { k } else { a };
            let b = if values[k] > values[b] { k } else { b };
            (a, b)
        });
        let last = (i..range.end).take_while(|&k| column(k) == c).last().unwrap_or(i);
        kept.extend(match lo == hi {
            true => vec![lo],
            false => vec![lo.min(hi), lo.max(hi)],
        });
        i = last + 1;
    }
    kept.into_iter()
}

/// A thin grey line before every band, a thick red one where refinement starts.
fn draw_boundaries(
    chart: &mut Chart,
    segs: &[Segment],
    bands: &[Range<usize>],
    (lo, hi): (f64, f64),
) -> Result<()> {
    let refine_start = segs.iter().find(|s| s.is_refine()).map(|s| s.start);
    for band in bands {
        let s = &segs[band.start];
        let x = s.start as f64 + 0.5;
        let style = if s.is_refine() && refine_start == Some(s.start) {
            RED.stroke_width(3)
        } else {
            BOUNDARY_COLOR.stroke_width(1)
        };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, lo), (x, hi)],
                style,
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// Each segment's label, rotated, at the top of its middle; kept candidates starred,
/// refinement in red. A band of several segments has none, nor a label closer than a
/// line's height to the last one drawn (labels at one pixel apart are ink, not text).
fn label_segments(
    chart: &mut Chart,
    segs: &[Segment],
    (bands, px): (&[Range<usize>], f64),
    (lo, hi): (f64, f64),
    f: f64,
) -> Result<()> {
    let font = (FONT, f * 0.8)
        .into_font()
        .transform(FontTransform::Rotate90);
    let mut last_px = f64::NEG_INFINITY;
    for band in bands.iter().filter(|b| b.len() == 1) {
        let s = &segs[band.start];
        let x = (s.start + s.end) as f64 / 2.0 + 0.5;
        if (x - last_px) * px < f * 0.8 {
            continue;
        }
        last_px = x;
        let label = if s.kept {
            format!("{} *", s.label)
        } else {
            s.label.clone()
        };
        let color = if s.is_refine() { RED } else { BLACK };
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
    Ok(())
}
