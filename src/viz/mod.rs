//! Pictures of a grown ANT and of its training.
//!
//! Numbers first, drawing second: `stats` turns per-sample reach probabilities and
//! targets into per-node histograms, `layout` places the nodes, and the drawing
//! modules (`tree_svg`, `dot`, `inspect`, `curves`) only format them.
//! `raster` turns any of the SVGs into a PNG with resvg.

internal_mods! {
    /// Several runs' curves on one picture.
    compare;
    /// Training curves from `records.jsonl`.
    curves;
    /// Graphviz DOT.
    dot;
    /// `ant inspect`'s text.
    inspect;
    /// Where the nodes go.
    placement;
    /// Per-node histograms.
    stats;
    /// The tree as SVG.
    tree_svg;
    /// SVG to PNG.
    #[cfg(feature = "raster")]
    raster;
}

internal_use!(stats::NodeStats);

use std::path::Path;

use crate::data::Dataset;
use crate::error::{AntError, Result};
use crate::model::{Ant, Inference};
use crate::named::Named;

/// Output format of `ant plot`, chosen by `--format` or the extension of `--out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
    Dot,
}

impl Format {
    /// The format named by `name` (`svg`, `png`, `dot`/`gv`).
    pub fn parse(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            "dot" | "gv" => Some(Format::Dot),
            _ => None,
        }
    }

    /// The endings of a file's name in this format.
    pub fn endings(self) -> &'static [&'static str] {
        match self {
            Format::Svg => &["svg"],
            Format::Png => &["png"],
            Format::Dot => &["dot", "gv"],
        }
    }

    /// `explicit` if given, else the extension of `out`.
    pub fn choose(explicit: Option<&str>, out: &Path) -> Result<Format> {
        Self::choose_among(explicit, out, "svg, png or dot")
    }

    /// [`Format::choose`] for a picture that is no graph (training curves): svg or png.
    pub fn choose_picture(explicit: Option<&str>, out: &Path) -> Result<Format> {
        match Self::choose_among(explicit, out, "svg or png")? {
            Format::Dot => Err(AntError::param(
                "curves are drawn as svg or png, not dot (by --format or the extension of --out)",
            )),
            f => Ok(f),
        }
    }

    fn choose_among(explicit: Option<&str>, out: &Path, which: &str) -> Result<Format> {
        let name = match explicit {
            Some(f) => f.to_string(),
            None => out
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_string(),
        };
        if let (None, Some(ending)) = (explicit, crate::store::output_names::only_an_ending(out))
            && Format::parse(&ending[1..]).is_some()
        {
            let msg = format!("names no file, only an ending: give NAME{ending}");
            return Err(AntError::data(out, msg));
        }
        Format::parse(&name).ok_or_else(|| {
            AntError::param(format!(
                "unknown picture format {name:?} (use {which}, by --format or the extension of --out)"
            ))
        })
    }
}

/// Per-node statistics of `model` on `data`: reach-weighted class histograms (or target
/// moments), router left-probability histograms and single-path leaf shares.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn model_stats(
    model: &Ant,
    data: &Dataset,
    bins: usize,
) -> Result<Vec<stats::NodeStats>> {
    if bins == 0 || bins > MAX_BINS {
        let reason = format!("must be from 1 to {MAX_BINS}, got {bins}");
        return Err(AntError::invalid("bins", reason));
    }
    let reach = model.node_reach_per_sample(data)?;
    let single = model.predict(data, Inference::SinglePath)?;
    Ok(stats::node_stats(
        &model.tree().topology,
        &reach,
        &data.targets,
        Some(&single.leaf),
        bins,
    ))
}

/// The most bins a router's left-probability histogram may have.
pub(crate) const MAX_BINS: usize = 1000;

/// Write the picture `bytes` in `format` to `path` atomically, creating its directory
/// (`-`: stdout; a path that is not a regular file, or an existing file of another
/// kind, is refused, see `crate::store::outputs`).
pub fn write_output(path: &Path, bytes: &[u8], format: Format) -> Result<()> {
    crate::store::outputs::write_file(path, bytes, &[], format.endings())
}

/// The tree picture of `model` in `format`: with `data`, the per-node statistics of its
/// samples (`bins` left-probability bins); `width` in pixels (the picture grows when the
/// tree needs more room).
pub fn render_tree(
    model: &Ant,
    data: Option<&Dataset>,
    format: Format,
    width: u32,
    bins: usize,
) -> Result<Vec<u8>> {
    let stats = data.map(|d| model_stats(model, d, bins)).transpose()?;
    let t = &model.tree().topology;
    let names = model.meta().class_names.as_deref();
    if format == Format::Dot {
        return Ok(dot::tree_dot(t, stats.as_deref(), names).into_bytes());
    }
    let title = format!(
        "ANT {} ({} node{}, {} params){}",
        model.meta().preset.name(),
        t.nodes.len(),
        if t.nodes.len() == 1 { "" } else { "s" },
        t.num_params(),
        data.map_or(String::new(), |d| format!(" on {} test samples", d.len()))
    );
    let svg = tree_svg::tree_svg(
        t,
        width as f64,
        &tree_svg::TreePlot {
            title: Some(title),
            stats: stats.as_deref(),
            class_names: names,
        },
    );
    picture(&svg, format, None)
}

/// The bytes of a picture drawn as `svg`, in `format` (svg or png, `width` pixels wide
/// or the SVG's own), every picture's one way out: text XML cannot hold (a class name
/// with a control character) is written visibly first, so that the SVG stays
/// well-formed and the PNG can be drawn.
fn picture(svg: &str, format: Format, width: Option<u32>) -> Result<Vec<u8>> {
    let svg = xml_text(svg);
    match format {
        Format::Png => png(&svg, width),
        Format::Svg => Ok(svg.into_owned().into_bytes()),
        Format::Dot => Err(AntError::param("pictures are drawn as svg or png, not dot")),
    }
}

/// `s` with each character XML 1.0 cannot hold (C0 controls but tab, newline and
/// carriage return; U+FFFE, U+FFFF) written as its code, `\u{7}`.
pub(crate) fn xml_text(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    if !s.contains(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let visible = s
        .chars()
        .fold(String::with_capacity(s.len() + 8), |mut o, c| {
            match bad(c) {
                true => o.push_str(&format!("\\u{{{:x}}}", c as u32)),
                false => o.push(c),
            }
            o
        });
    std::borrow::Cow::Owned(visible)
}

/// A run's epoch records and, when it finished, its `tree.json` record.
fn read_run(
    dir: &Path,
) -> Result<(
    Vec<crate::observe::EpochRecord>,
    Option<crate::model::ModelMeta>,
)> {
    crate::model::check_is_a_folder(dir)?;
    if crate::ensemble::is_ensemble(dir) {
        let member = dir.join("member-0");
        let msg = match member.join("records.jsonl").is_file() {
            true => format!(
                "is an ensemble: its members have the training records; draw one with `ant curves --run {}`",
                member.display()
            ),
            // Members saved from Python have none (the hint would lead to a member that
            // then said so).
            false => "is an ensemble whose members hold no training records (saved from Python, say): `ant curves` draws the runs of `ant train`".to_string(),
        };
        return Err(AntError::data(dir, msg));
    }
    let path = dir.join("records.jsonl");
    if !path.exists() && dir.join("tree.json").is_file() {
        // A model saved from Python has no run's records to draw.
        let msg = "holds a model but no training records (records.jsonl): `ant curves` draws the runs of `ant train`, and a model saved otherwise (from Python, say) has none";
        return Err(AntError::data(dir, msg));
    }
    let records = curves::read_records(&path)?;
    if records.is_empty() {
        return Err(AntError::data(&path, "holds no epochs"));
    }
    // A run under way or cut (its checkpoints there) wrote these records; a tree.json
    // beside them is an earlier run's model, whose decisions are not these records'
    // (they must not be drawn under its labels without a word).
    if dir.join(crate::store::file_names::CHECKPOINT_DIR).is_dir() {
        tracing::warn!(
            "{}: a run is under way or was cut there (checkpoint/): its epochs are drawn without growth decisions, which only a finished run records",
            dir.display()
        );
        return Ok((records, None));
    }
    let meta: Option<crate::model::ModelMeta> =
        crate::store::atomic::read_bounded(&dir.join("tree.json"), 256 << 20)
            .ok()
            .and_then(|s| serde_json::from_slice(&s).ok());
    Ok((records, meta))
}

/// Whether `a` and `b` name the same directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The validation metric's name for a run's task.
fn metric_name(meta: Option<&crate::model::ModelMeta>) -> &'static str {
    match meta {
        Some(m) if m.task.is_classification() => "valid error %",
        Some(_) => "valid MSE",
        None => "valid metric",
    }
}

/// The training curves of the runs in `dirs` (`records.jsonl`, and `tree.json` if
/// present for the task and growth decisions), `width` pixels wide: one run's growth
/// candidates and refinement, or several runs on the same axes, each labelled by the
/// settings that differ between them.
pub fn render_curves(dirs: &[std::path::PathBuf], format: Format, width: u32) -> Result<Vec<u8>> {
    let height = (width as f64 * 0.56) as u32;
    let svg = match dirs {
        [] => return Err(AntError::param("name a run to draw (--run)")),
        [dir] => {
            let (records, meta) = read_run(dir)?;
            let (decisions, name) = match &meta {
                Some(m) => (m.decisions.clone(), m.preset.name()),
                None => (vec![], "run"),
            };
            let title = format!("{name}: growth and refinement ({} epochs)", records.len());
            let metric = metric_name(meta.as_ref());
            curves::curves_svg(&records, &decisions, metric, &title, width, height)?
        }
        _ => {
            for (i, d) in dirs.iter().enumerate() {
                if dirs[..i].iter().any(|e| same_dir(e, d)) {
                    return Err(AntError::data(
                        d,
                        "is given twice (--run): name each run once",
                    ));
                }
            }
            let runs = dirs
                .iter()
                .map(|d| read_run(d))
                .collect::<Result<Vec<_>>>()?;
            // A run without tree.json (still training, or cut) has no task recorded yet.
            let known: Vec<(&std::path::PathBuf, &str)> = dirs
                .iter()
                .zip(&runs)
                .filter(|(_, (_, m))| m.is_some())
                .map(|(d, (_, m))| (d, metric_name(m.as_ref())))
                .collect();
            if let Some((d, other)) = known.iter().find(|(_, m)| *m != known[0].1) {
                let msg = format!(
                    "measures {other}, {} measures {}: draw classification and regression runs apart",
                    known[0].0.display(),
                    known[0].1
                );
                return Err(AntError::data(d, msg));
            }
            let metric = known.first().map_or("valid metric", |(_, m)| m);
            let configs: Vec<Option<serde_json::Value>> = runs
                .iter()
                .map(|(_, m)| {
                    m.as_ref()
                        .and_then(|m| serde_json::to_value(&m.config).ok())
                })
                .collect();
            let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            let labels = compare::labels(&configs, &names);
            let runs: Vec<compare::RunCurves> = runs
                .into_iter()
                .zip(labels)
                .map(|((records, _), label)| compare::RunCurves { label, records })
                .collect();
            compare::compare_svg(&runs, metric, width, height)?
        }
    };
    if format == Format::Dot {
        return Err(AntError::param("curves are drawn as svg or png, not dot"));
    }
    picture(&svg, format, Some(width))
}

/// `12345` -> `12,345` (parameter counts in labels).
pub(crate) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// PNG bytes of an SVG (`width` in pixels, else the SVG's own).
fn png(svg: &str, width: Option<u32>) -> Result<Vec<u8>> {
    #[cfg(feature = "raster")]
    return raster::svg_to_png(svg, width);
    #[cfg(not(feature = "raster"))]
    {
        let _ = (svg, width);
        Err(AntError::render(
            "PNG",
            "this build has no `raster` feature: use SVG",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_of_a_run_without_epochs_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("records.jsonl"), "\n").unwrap();
        let e = render_curves(&[dir.path().to_path_buf()], Format::Svg, 800).unwrap_err();
        assert!(matches!(e, AntError::Data { .. }), "{e:?}");
        assert!(e.to_string().contains("records.jsonl"), "{e}");
    }
}
