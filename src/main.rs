//! `ant`: grow, refine, save and evaluate Adaptive Neural Trees from the command line.
//! This file maps commands to library calls and prints; the options are in `cli/args.rs`.

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use ant::fetch::{FetchOptions, fetch};
use ant::model::Inference;
use ant::persist::write_atomic;
use ant::saved::Model;
use ant::{Ant, AntError, Result};

/// A line on stderr. Unlike `eprintln!`, a closed stderr (`ant train 2>&1 | head -1`)
/// does not panic: the message is dropped and the command goes on.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Writes `text` to stdout. A reader that has gone (`ant predict ... | head -1`) ends
/// the output quietly, as for other command-line tools: that is not an error.
fn print_out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(AntError::io("<stdout>", e)),
        _ => Ok(()),
    }
}

#[path = "cli/args.rs"]
mod args;
#[path = "cli/progress.rs"]
mod progress;
#[path = "cli/train.rs"]
mod train;

use args::{
    Cli, Cmd, CurvesArgs, DataCmd, EvalArgs, ExportArgs, ExportFormat, InspectArgs, PlotArgs,
    PredictArgs, PruneArgs,
};
use progress::DownloadBars;

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
    let model = Model::load(&a.model, &a.device.burn()?)?;
    let (test, warning) = model.test_rows(&a.data)?;
    warn(warning);
    let report = model.report(&test)?;
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

fn prune(a: PruneArgs) -> Result<()> {
    let device = a.device.burn()?;
    ant::outputs::check_prune_out(&a.model, &a.data, &a.out, a.force)?;
    // Held while the pruned model is written: two prunes into one directory would mix
    // one's tree.json with the other's weights.
    let _lock = ant::run::DirLock::take(&a.out, false)?;
    ant::outputs::check_prune_out(&a.model, &a.data, &a.out, a.force)?;
    match Model::load(&a.model, &device)? {
        Model::Single(model) => print_json(&prune_model(&model, &a.data, a.min_reach, &a.out)?),
        // An ensemble: each member pruned into OUT/member-K, ensemble.json copied.
        Model::Ensemble(ens) => {
            let mut members = Vec::new();
            for (k, m) in ens.members.iter().enumerate() {
                let out = ant::ensemble::member_dir(&a.out, k);
                let mut summary = prune_model(m, &a.data, a.min_reach, &out)?;
                summary["member"] = serde_json::json!(k);
                members.push(summary);
            }
            ens.file.save(&a.out)?;
            print_json(&serde_json::json!({ "min_reach": a.min_reach, "members": members }))
        }
        _ => unreachable!("a saved model is a tree or an ensemble"),
    }
}

/// Prunes `model` (trained on `data`) into `out` with its `prune.json`; returns it.
fn prune_model(model: &Ant, data: &Path, min_reach: f64, out: &Path) -> Result<serde_json::Value> {
    let (valid, test) = model.recorded_rows(data)?;
    let (pruned, report) = model.pruned(&valid, min_reach)?;
    pruned.save(out)?;
    ant::outputs::remove_old_descriptions(out)?;
    let (v0, v1) = (model.evaluate(&valid)?, pruned.evaluate(&valid)?);
    let (t0, t1) = (model.evaluate(&test)?, pruned.evaluate(&test)?);
    let summary = serde_json::json!({
        "min_reach": min_reach,
        "removed": report.removed,
        "nodes_removed": report.nodes_removed,
        "params_removed": report.params_removed,
        "params_before": model.tree().topology.num_params(),
        "params_after": pruned.tree().topology.num_params(),
        "valid_multi_path_before": v0.multi_path, "valid_multi_path_after": v1.multi_path,
        "test_multi_path_before": t0.multi_path, "test_multi_path_after": t1.multi_path,
        "test_single_path_before": t0.single_path, "test_single_path_after": t1.single_path,
    });
    write_atomic(
        &out.join(ant::layout::PRUNE_FILE),
        serde_json::to_string_pretty(&summary)
            .expect("json")
            .as_bytes(),
    )?;
    Ok(summary)
}

fn plot(a: PlotArgs) -> Result<()> {
    let model = Model::load(&a.model, &a.device.burn()?)?;
    if let Model::Single(m) = &model {
        return plot_model(&a, m, &a.out);
    }
    // An ensemble: one picture per member, X-member-K.EXT beside --out X.EXT.
    for (k, m) in model.trees().iter().enumerate() {
        let stem = a.out.file_stem().unwrap_or_default().to_string_lossy();
        let name = match a.out.extension() {
            Some(ext) => format!("{stem}-member-{k}.{}", ext.to_string_lossy()),
            None => format!("{stem}-member-{k}"),
        };
        plot_model(&a, m, &a.out.with_file_name(name))?;
    }
    Ok(())
}

/// Draws `model` into `out` as `a` asks.
fn plot_model(a: &PlotArgs, model: &Ant, out: &Path) -> Result<()> {
    use ant::viz::{Format, render_tree};
    // The format follows --out (X.svg), not the member's file name.
    let format = Format::choose(a.format.as_deref(), &a.out)?;
    let test = match &a.data {
        Some(d) => {
            let (test, warning) = model.test_rows(d)?;
            warn(warning);
            Some(test)
        }
        None if format == Format::Dot => None,
        None => return Err(AntError::param("--data is needed for svg and png pictures")),
    };
    if a.width < 100 {
        return Err(AntError::param("--width must be at least 100"));
    }
    let bytes = render_tree(model, test.as_ref(), format, a.width, a.bins.max(1))?;
    ant::outputs::write_output(out, &bytes, &a.model, a.data.as_deref())?;
    note!("wrote {}", out.display());
    Ok(())
}

fn export(a: ExportArgs) -> Result<()> {
    let Model::Single(model) = Model::load(&a.model, &ant::default_device())? else {
        let msg = "is an ensemble: export one member (its member-K directory)";
        return Err(AntError::data(&a.model, msg));
    };
    match a.format {
        ExportFormat::Onnx => {
            ant::outputs::write_output(&a.out, &ant::export::to_onnx(&model)?, &a.model, None)?
        }
        ExportFormat::Web => {
            ant::outputs::check_site_out(&a.out, &a.model, a.data.as_deref())?;
            let examples = match &a.data {
                Some(d) => Some(model.test_rows(d)?.0),
                None => None,
            };
            ant::export::write_site(&model, examples.as_ref(), &a.out)?;
        }
    }
    note!("exported to {}", a.out.display());
    Ok(())
}

fn inspect(a: InspectArgs) -> Result<()> {
    use ant::ensemble::{EnsembleFile, MemberState, member_dir, member_state};
    use ant::viz::inspect::inspect_text;
    if !ant::ensemble::is_ensemble(&a.model) {
        let model = Ant::load(&a.model, &ant::default_device())?;
        return print_out(&format!(
            "{}{}",
            baseline_line(&model),
            inspect_text(&model.tree().topology)
        ));
    }
    // An ensemble: its spec, then each member (trained, training or missing).
    let file = EnsembleFile::open(&a.model)?;
    let mut text = format!(
        "ensemble of {} members: preset {}, data {}, seed {}\n",
        file.size,
        file.preset,
        file.spec.data.path.display(),
        file.spec.params.seed
    );
    for k in 0..file.size {
        let dir = member_dir(&a.model, k);
        let seed = file.member_seeds[k];
        match member_state(&a.model, k) {
            MemberState::Trained => {
                let model = Ant::load(&dir, &ant::default_device())?;
                let t = &model.tree().topology;
                text.push_str(&format!(
                    "\nmember {k} (seed {seed}, {}): {} nodes, {} leaves, {} params\n",
                    dir.display(),
                    t.nodes.len(),
                    t.leaves().len(),
                    t.num_params()
                ));
                text.push_str(&baseline_line(&model));
                text.push_str(&inspect_text(t));
            }
            MemberState::Started => text.push_str(&format!(
                "\nmember {k} (seed {seed}, {}): not finished (resume with `ant train --resume {}`)\n",
                dir.display(),
                dir.display()
            )),
            MemberState::Missing => text.push_str(&format!(
                "\nmember {k} (seed {seed}, {}): missing\n",
                dir.display()
            )),
        }
    }
    print_out(&text)
}

/// `baseline NAME ...` for a baseline's model, nothing for an ANT.
fn baseline_line(model: &Ant) -> String {
    match model.meta().config.baseline {
        Some(b) => format!("baseline {b}: a fixed architecture, trained without growth\n"),
        None => String::new(),
    }
}

fn curves(a: CurvesArgs) -> Result<()> {
    use ant::viz::{Format, render_curves};
    let format = Format::choose(a.format.as_deref(), &a.out)?;
    if a.width < 300 {
        return Err(AntError::param("--width must be at least 300"));
    }
    let bytes = render_curves(&a.run, format, a.width)?;
    ant::outputs::write_output(&a.out, &bytes, &a.run, None)?;
    note!("wrote {}", a.out.display());
    Ok(())
}

fn predict(a: PredictArgs) -> Result<()> {
    use ant::predict::{Format, load_inputs, render};
    let format = match &a.output {
        Some(o) => Format::of(o)?,
        None => Format::Csv,
    };
    let mode = if a.single_path {
        Inference::SinglePath
    } else {
        Inference::MultiPath
    };
    let (text, n) = match Model::load(&a.model, &a.device.burn()?)? {
        Model::Single(model) => {
            let data = load_inputs(&model, &a.input)?;
            let reach = match a.reach {
                true => Some(model.node_reach_per_sample(&data)?),
                false => None,
            };
            let p = model.predict(&data, mode)?;
            (render(&model, &p, reach.as_deref(), format), data.len())
        }
        Model::Ensemble(_) if a.reach => {
            let msg = "is an ensemble: --reach describes one tree (give a member-K directory)";
            return Err(AntError::data(&a.model, msg));
        }
        Model::Ensemble(ens) => {
            let data = load_inputs(&ens.members[0], &a.input)?;
            let p = ens.predict(&data, mode)?;
            (ant::predict::render_ensemble(&ens, &p, format), data.len())
        }
        _ => unreachable!("a saved model is a tree or an ensemble"),
    };
    match &a.output {
        Some(o) => {
            ant::outputs::write_output(o, text.as_bytes(), &a.model, Some(&a.input))?;
            note!("{n} predictions written to {}", o.display());
        }
        None => print_out(&text)?,
    }
    Ok(())
}

fn main() -> ExitCode {
    ant::keep_large_buffers();
    // A write beyond `ulimit -f` is then a failed write, reported, not a silent death.
    ant::persist::file_size_limit_is_an_error();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        // Its default reports a failed write with `eprintln!`, which panics when
        // stderr is closed.
        .log_internal_errors(false)
        .init();
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Train(a) => train::train(*a),
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
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(AntError::InvalidParam {
            name: Some(name),
            reason,
        }) => {
            // The library names its parameters; here they are flags.
            note!(
                "error: invalid parameter: --{} {reason}",
                name.replace('_', "-")
            );
            ExitCode::from(2)
        }
        Err(e) => {
            note!("error: {e}");
            ExitCode::from(2)
        }
    }
}
