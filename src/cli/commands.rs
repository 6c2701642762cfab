//! The commands other than `train`: each loads what its options name, calls the
//! library and prints (the options are in `args.rs`).

use std::path::Path;

use ant::fetch::{FetchOptions, fetch};
use ant::saved::SavedModel;
use ant::{Ant, AntError, Inference, Result};

use super::args::{
    Cmd, CurvesArgs, DataCmd, EvalArgs, ExportArgs, ExportFormat, InspectArgs, PlotArgs,
    PredictArgs, PruneArgs, Stage,
};
use super::progress::DownloadBars;

/// Runs the command `cmd`. A stdout that is closed or open only for reading is
/// refused first, before any work, by a command that writes to it (a `prune` had saved
/// its model, then failed to print its summary); one that writes none there runs.
pub(crate) fn run(cmd: Cmd) -> Result<()> {
    if writes_stdout(&cmd) {
        ant::export::check_stdout()?;
    }
    match cmd {
        Cmd::Train(a) => super::train::train(*a),
        Cmd::Eval(a) => eval(a),
        Cmd::Prune(a) => prune(a),
        Cmd::Plot(a) => plot(a),
        Cmd::Inspect(a) => inspect(a),
        Cmd::Curves(a) => curves(a),
        Cmd::Predict(a) => predict(a),
        Cmd::Export(a) => export(a),
        Cmd::Data {
            cmd: DataCmd::Fetch(a),
        } => fetch(
            a.set,
            &a.dir,
            &FetchOptions {
                base_url: a.base_url,
                ..FetchOptions::default()
            },
            &mut DownloadBars::default(),
        ),
    }
}

/// Whether `cmd` writes to stdout: its report, its rows, or a file output named `-`
/// (`ant train ... >&-` is not refused: training writes nothing there).
fn writes_stdout(cmd: &Cmd) -> bool {
    let dash = |p: &Path| p.as_os_str() == "-";
    match cmd {
        Cmd::Train(_) | Cmd::Data { .. } => false,
        Cmd::Eval(_) | Cmd::Prune(_) | Cmd::Inspect(_) => true,
        Cmd::Predict(a) => a.output.is_none(),
        Cmd::Plot(a) => dash(&a.out),
        Cmd::Curves(a) => dash(&a.out),
        // A web page is a folder: `--out -` is refused for it by its own check.
        Cmd::Export(a) => dash(&a.out) && matches!(a.format, ExportFormat::Onnx),
    }
}

/// Writes `text` to stdout (see `ant::export::write_stdout`).
fn print_out(text: &str) -> Result<()> {
    ant::export::write_stdout(text.as_bytes())
}

/// One JSON value, pretty, as a line on stdout.
fn print_json(v: &serde_json::Value) -> Result<()> {
    print_out(&format!(
        "{}\n",
        serde_json::to_string_pretty(v).expect("json")
    ))
}

/// Shows the warning a library call returned, if any.
fn warn(warning: Option<String>) {
    if let Some(w) = warning {
        note!("warning: {w}");
    }
}

fn eval(a: EvalArgs) -> Result<()> {
    let model = SavedModel::load_reading(&a.model, &a.device.burn()?, a.table.reading())?;
    let (test, warning) = model.test_rows(&a.data)?;
    warn(warning);
    let report = model.report(&test).map_err(of_file(&a.data))?;
    let text = if a.json {
        format!("{}\n", serde_json::to_string(&report).expect("json"))
    } else {
        let mut text = model.outline();
        for (k, v) in report.as_object().expect("object") {
            match v.as_array() {
                // An ensemble's members: one line each.
                Some(items) => items
                    .iter()
                    .for_each(|m| text.push_str(&format!("{k}: {m}\n"))),
                None => text.push_str(&format!("{k}: {v}\n")),
            }
        }
        text
    };
    print_out(&text)
}

/// An error about rows of `file` (predictions that are not finite) names the file.
fn of_file(file: &Path) -> impl Fn(AntError) -> AntError + '_ {
    move |e| match e {
        AntError::NotFinite { .. } => AntError::data(file, e.to_string()),
        e => e,
    }
}

fn prune(a: PruneArgs) -> Result<()> {
    let device = a.device.burn()?;
    let (reading, force) = (a.table.reading(), a.force);
    let job = ant::saved::PruneJob {
        model: &a.model,
        data: &a.data,
        test_data: a.test_data.as_deref(),
        min_reach: a.min_reach,
        out: &a.out,
        force,
    };
    let (summary, warning) = ant::saved::prune(&job, &device, reading)?;
    warn(warning);
    print_json(&summary)
}

fn plot(a: PlotArgs) -> Result<()> {
    check_table_args_used(&a.table, a.data.as_deref())?;
    let dir = match a.stage {
        Stage::Final => a.model.clone(),
        Stage::Grown => grown_dir(&a.model)?,
    };
    let model = SavedModel::load_reading(&dir, &a.device.burn()?, a.table.reading())?;
    let format = ant::viz::Format::choose(a.format.as_deref(), &a.out)?;
    // The test rows, read once for every member (a pipe gives its rows once).
    let test = match &a.data {
        Some(d) => {
            let (test, warning) = model.first().test_rows(d)?;
            warn(warning);
            Some(test)
        }
        None if format == ant::viz::Format::Dot => None,
        None => return Err(AntError::param("--data is needed for svg and png pictures")),
    };
    if let SavedModel::Single(m) = &model {
        return plot_model(&a, m, test.as_ref(), &a.out);
    }
    // An ensemble: one picture per member, X-member-K.EXT beside --out X.EXT, all
    // checked before the first is drawn.
    let stem = a.out.file_stem().unwrap_or_default().to_string_lossy();
    let outs: Vec<std::path::PathBuf> = (0..model.trees().len())
        .map(|k| match a.out.extension() {
            Some(ext) => format!("{stem}-member-{k}.{}", ext.to_string_lossy()),
            None => format!("{stem}-member-{k}"),
        })
        .map(|name| a.out.with_file_name(name))
        .collect();
    ant::export::check_derived_outputs(&outs, &a.out, a.force, &a.model, a.data.as_deref())?;
    for (m, out) in model.trees().iter().zip(&outs) {
        plot_model(&a, m, test.as_ref(), out)?;
    }
    Ok(())
}

/// The model growth left in the run `dir`, before refinement (`dir/grown`).
fn grown_dir(dir: &Path) -> Result<std::path::PathBuf> {
    let grown = dir.join("grown");
    if grown.join("tree.json").is_file() {
        return Ok(grown);
    }
    let msg = "holds no grown model (grown/): runs that grow a tree keep it beside the final \
               one (not baselines, ensembles or pruned models, nor runs of versions before it)";
    Err(AntError::data(dir, msg))
}

/// Draws `model` (with the test rows `test`) into `out` as `a` asks.
fn plot_model(a: &PlotArgs, model: &Ant, test: Option<&ant::Dataset>, out: &Path) -> Result<()> {
    use ant::viz::{Format, render_tree};
    // The format follows --out (X.svg), not the member's file name.
    let format = Format::choose(a.format.as_deref(), &a.out)?;
    if a.width < 100 {
        return Err(AntError::param("--width must be at least 100"));
    }
    let bytes = render_tree(model, test, format, a.width, a.bins);
    let bytes = match &a.data {
        Some(d) => bytes.map_err(of_file(d))?,
        None => bytes?,
    };
    let data: Vec<&std::path::Path> = a.data.as_deref().into_iter().collect();
    ant::export::write_output(out, &bytes, format.endings(), &a.model, &data)?;
    note!("wrote {}", out.display());
    Ok(())
}

/// Refuses `--delimiter` / `--skip-rows` on a command that reads no data file (no
/// `--data`), where they would do nothing.
fn check_table_args_used(table: &super::args::TableArgs, data: Option<&Path>) -> Result<()> {
    let given = table.delimiter.is_some() || table.skip_rows.is_some();
    match (given, data) {
        (true, None) => Err(AntError::param(
            "--delimiter and --skip-rows say how the --data file is read; no --data is given",
        )),
        _ => Ok(()),
    }
}

fn export(a: ExportArgs) -> Result<()> {
    let data = match a.format {
        ExportFormat::Web => a.data.as_deref(),
        ExportFormat::Onnx => None,
    };
    check_table_args_used(&a.table, data)?;
    let device = ant::default_device();
    let SavedModel::Single(model) = SavedModel::load_reading(&a.model, &device, a.table.reading())?
    else {
        let msg = "is an ensemble: export one member (its member-K directory)";
        return Err(AntError::data(&a.model, msg));
    };
    match a.format {
        ExportFormat::Onnx => {
            let onnx = ant::export::to_onnx(&model)?;
            ant::export::write_output(&a.out, &onnx, &["onnx"], &a.model, &[])?
        }
        ExportFormat::Web => {
            ant::export::check_site_out(&a.out, &a.model, a.data.as_deref())?;
            let examples = match &a.data {
                Some(d) => {
                    let (rows, warning) = model.test_rows(d)?;
                    warn(warning);
                    Some(rows)
                }
                None => None,
            };
            ant::export::write_site(&model, examples.as_ref(), &a.out)?;
        }
    }
    note!("exported to {}", a.out.display());
    Ok(())
}

fn inspect(a: InspectArgs) -> Result<()> {
    print_out(&ant::saved::describe(&a.model)?)
}

fn curves(a: CurvesArgs) -> Result<()> {
    use ant::viz::{Format, render_curves};
    let format = Format::choose_picture(a.format.as_deref(), &a.out)?;
    if a.width < 300 {
        return Err(AntError::param("--width must be at least 300"));
    }
    let bytes = render_curves(&a.run, format, a.width)?;
    ant::export::write_output_of(&a.out, &bytes, format.endings(), &a.run)?;
    note!("wrote {}", a.out.display());
    Ok(())
}

fn predict(mut a: PredictArgs) -> Result<()> {
    use ant::predict::{Format, Inputs, load_inputs, render};
    // `-` is standard input, as `--out -` is standard output elsewhere (read as a pipe).
    if a.input.len() > 1 && a.input.iter().any(|p| p.as_os_str() == "-") {
        let msg = "- (standard input) is one input alone: give it as the only --input";
        return Err(AntError::invalid("input", msg));
    }
    if a.input[0].as_os_str() == "-" {
        a.input[0] = ant::stdin_input()?;
    }
    // `--output -` is standard output, as `--out -` is for the other commands.
    if a.output.as_ref().is_some_and(|o| o.as_os_str() == "-") {
        a.output = None;
    }
    let format = match (&a.format, &a.output) {
        (Some(f), _) => Format::parse(f).unwrap_or(Format::Csv), // clap allows only these
        (None, Some(o)) => Format::of(o)?,
        (None, None) => Format::Csv,
    };
    let mode = if a.single_path {
        Inference::SinglePath
    } else {
        Inference::MultiPath
    };
    let (text, n) = match SavedModel::load_reading(&a.model, &a.device.burn()?, a.table.reading())?
    {
        SavedModel::Single(model) => {
            let Inputs { data, files } = load_inputs(&model, &a.input)?;
            let first = &a.input[0];
            let reach = match a.reach {
                true => Some(model.node_reach_per_sample(&data)?),
                false => None,
            };
            let p = model.predict(&data, mode).map_err(of_file(first))?;
            (
                render(&model, &p, reach.as_deref(), files.as_deref(), format),
                data.len(),
            )
        }
        SavedModel::Ensemble(_) if a.reach => {
            let msg = "is an ensemble: --reach describes one tree (give a member-K directory)";
            return Err(AntError::data(&a.model, msg));
        }
        SavedModel::Ensemble(ens) => {
            let Inputs { data, files } = load_inputs(&ens.members()[0], &a.input)?;
            let p = ens.predict(&data, mode).map_err(of_file(&a.input[0]))?;
            (
                ant::predict::render_ensemble(&ens, &p, files.as_deref(), format),
                data.len(),
            )
        }
    };
    match &a.output {
        Some(o) => {
            let endings = [format.ending()];
            let inputs: Vec<&std::path::Path> =
                a.input.iter().map(std::path::PathBuf::as_path).collect();
            ant::export::write_output(o, text.as_bytes(), &endings, &a.model, &inputs)?;
            note!("{n} predictions written to {}", o.display());
        }
        None => print_out(&text)?,
    }
    Ok(())
}
