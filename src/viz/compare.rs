//! Several runs' training curves on one picture (`ant curves --run A --run B ...`), as
//! the paper's patience study: each run's validation loss (upper panel) and validation
//! metric (lower panel) over its epochs of growth and refinement, concatenated, one
//! colour a run, each labelled by the settings in which it differs from the others.

use plotters::prelude::*;
use serde_json::Value;

use super::curves::{axis_label, robust_range};
use crate::error::{AntError, Result};
use crate::observe::{EpochRecord, Phase};

/// One run to draw: its records and its label.
pub struct RunCurves {
    pub label: String,
    pub records: Vec<EpochRecord>,
}

/// Distinct colours, one a run (cycled past eight).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];
const FONT: &str = "sans-serif";
/// The most runs the legend names one by one.
const MAX_LEGEND: usize = 12;

/// Each run's label: the settings (`config` of its `tree.json`, spelled as the flags)
/// whose values differ between the runs, e.g. `--patience 1`; `fallback` (the
/// directory's name) for a run without a config, or when no setting differs.
pub fn labels(configs: &[Option<Value>], fallback: &[String]) -> Vec<String> {
    let objects: Vec<Option<&serde_json::Map<String, Value>>> =
        configs.iter().map(|c| c.as_ref().and_then(Value::as_object)).collect();
    let mut keys: Vec<&String> = objects.iter().flatten().flat_map(|o| o.keys()).collect();
    keys.sort();
    keys.dedup();
    let differing: Vec<&String> = keys
        .into_iter()
        .filter(|k| {
            let first = objects[0].and_then(|o| o.get(*k));
            objects.iter().any(|o| o.and_then(|o| o.get(*k)) != first)
        })
        .collect();
    let labels: Vec<String> = objects
        .iter()
        .zip(fallback)
        .map(|(o, name)| match o {
            Some(o) if !differing.is_empty() => differing
                .iter()
                .map(|k| spelled(k, o.get(*k)))
                .collect::<Vec<_>>()
                .join(" "),
            _ => printable(name),
        })
        .collect();
    // Runs whose settings agree (they differ in data, say, and would share one label)
    // are told apart by their directories.
    labels
        .iter()
        .zip(fallback)
        .map(|(l, name)| match labels.iter().filter(|m| *m == l).count() > 1 && *l != printable(name) {
            true => format!("{l} ({})", printable(name)),
            false => l.clone(),
        })
        .collect()
}

/// A setting as a command line spells it: `--patience 1`, or `no --baseline` for one
/// left unset.
fn spelled(key: &str, v: Option<&Value>) -> String {
    let flag = format!("--{}", key.replace('_', "-"));
    match v {
        None | Some(Value::Null) => format!("no {flag}"),
        Some(Value::String(s)) => format!("{flag} {s}"),
        Some(v) => format!("{flag} {v}"),
    }
}

/// A label fit for the picture: control characters (which no SVG may hold) become
/// U+FFFD.
fn printable(label: &str) -> String {
    label.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect()
}

fn err<E: std::fmt::Display>(e: E) -> AntError {
    AntError::render("drawing the curves", e.to_string())
}

/// The runs' curves as one SVG document of `width` x `height` pixels; `metric` names
/// the validation metric. A thin line in a run's colour marks where its refinement
/// starts.
pub fn compare_svg(runs: &[RunCurves], metric: &str, width: u32, height: u32) -> Result<String> {
    let longest = runs.iter().map(|r| r.records.len()).max().unwrap_or(0);
    if longest == 0 {
        return Err(AntError::param("the runs' records.jsonl hold no epochs"));
    }
    let mut buf = String::new();
    {
        let f = (width as f64 / 90.0).clamp(11.0, 22.0);
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let title = format!("{} runs: validation over growth and refinement", runs.len());
        let root = root
            .titled(&title, (FONT, f * 1.4).into_font().style(FontStyle::Bold))
            .map_err(err)?;
        let (upper, lower) = root.split_vertically((height as f64 * 0.5) as u32);
        let loss = |r: &EpochRecord| r.valid_loss;
        let metric_of = |r: &EpochRecord| r.valid_metric;
        draw(&upper, runs, longest, ("valid loss (NLL)", loss), f, false)?;
        draw(&lower, runs, longest, (metric, metric_of), f, true)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}

/// One panel: `value` of every run's records against the epoch.
fn draw(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    runs: &[RunCurves],
    longest: usize,
    (y_desc, value): (&str, fn(&EpochRecord) -> f64),
    f: f64,
    bottom: bool,
) -> Result<()> {
    let all: Vec<f64> = runs.iter().flat_map(|r| r.records.iter().map(value)).collect();
    let (lo, hi) = robust_range(&all);
    let n = longest as f64;
    let mut chart = ChartBuilder::on(area)
        .margin(f * 0.8)
        .x_label_area_size(f * 2.6)
        .y_label_area_size(f * 4.5)
        .build_cartesian_2d(0.5f64..n + 0.5, lo..hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(RGBColor(225, 225, 225))
        .x_desc(if bottom { "epoch (growth, then refinement)" } else { "" })
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&axis_label)
        .label_style((FONT, f * 0.85))
        .axis_desc_style((FONT, f))
        .draw()
        .map_err(err)?;
    for (k, run) in runs.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        // The legend names the first runs; past them, one line says how many more.
        let label = match k {
            k if k < MAX_LEGEND => run.label.clone(),
            k if k == MAX_LEGEND => format!("... and {} more runs", runs.len() - MAX_LEGEND),
            _ => String::new(),
        };
        let pts: Vec<(f64, f64)> = run
            .records
            .iter()
            .enumerate()
            .filter(|(_, r)| value(r).is_finite())
            .map(|(i, r)| ((i + 1) as f64, value(r).clamp(lo, hi)))
            .collect();
        let drawn = chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(err)?;
        if !label.is_empty() {
            drawn.label(label).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
        if let Some(i) = run.records.iter().position(|r| r.phase == Phase::Refine) {
            let x = i as f64 + 0.5;
            let mark = PathElement::new(vec![(x, lo), (x, hi)], color.mix(0.6).stroke_width(1));
            chart.draw_series(std::iter::once(mark)).map_err(err)?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, f * 0.85))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_settings_that_differ_as_flags() {
        let cfg = |p: u64, s: &str| Some(serde_json::json!({"patience": p, "select": s, "seed": 0, "baseline": null}));
        let names = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let got = labels(&[cfg(1, "metric"), cfg(5, "metric"), cfg(15, "nll")], &names);
        assert_eq!(got, ["--patience 1 --select metric", "--patience 5 --select metric", "--patience 15 --select nll"]);
        // Nothing differs, or no config: the directories' names.
        assert_eq!(labels(&[cfg(5, "nll"), cfg(5, "nll")], &names[..2]), ["a", "b"]);
        assert_eq!(labels(&[None, cfg(5, "nll")], &names[..2])[0], "a");
        // An unset setting is said so; a control character never reaches the SVG.
        let base = Some(serde_json::json!({"patience": 5, "select": "nll", "seed": 0, "baseline": "linear"}));
        assert_eq!(labels(&[base, cfg(5, "nll")], &names[..2]), ["--baseline linear", "no --baseline"]);
        assert_eq!(labels(&[None, None], &["a\u{1}b".to_string(), "c".to_string()])[0], "a\u{fffd}b");
        // Two runs of the same settings beside a third: their directories tell them apart.
        let got = labels(&[cfg(5, "nll"), cfg(5, "nll"), cfg(1, "nll")], &names);
        assert_eq!(got, ["--patience 5 (a)", "--patience 5 (b)", "--patience 1"]);
    }
}
