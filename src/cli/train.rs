//! `ant train`: one run, an ensemble of runs, or the rest of an interrupted one, each
//! printed as it trains.

use std::path::{Path, PathBuf};

use ant::data::tabular::TargetSpec;
use ant::observe::Fanout;
use ant::run::{DataSpec, Existing, Run, RunSpec};
use ant::{AntError, ComputeDevice, Result};
use burn::prelude::Device;

use super::args::TrainArgs;
use super::progress::ProgressBars;

/// The run a `train` command line describes.
fn run_spec(a: TrainArgs) -> Result<(PathBuf, RunSpec)> {
    // clap requires these unless --resume.
    let (Some(mut params), Some(path), Some(out)) = (a.params, a.data, a.out) else {
        return Err(AntError::param("--preset, --data and --out are required"));
    };
    // Recorded as an absolute path: a resumed run or an ensemble member may start
    // elsewhere.
    if let Some(dir) = params.init_from().map(Path::to_path_buf) {
        let absolute = std::path::absolute(&dir).unwrap_or(dir);
        params = params.with_init_from(Some(absolute.into()));
    }
    let target = match (a.target, a.task) {
        (Some(column), Some(task)) => {
            let mut spec = TargetSpec::new(column, task);
            spec.delimiter = a.delimiter;
            spec.skip_rows = a.skip_rows;
            Some(spec)
        }
        (Some(_), None) => {
            return Err(AntError::param(
                "--target needs --task classification or --task regression",
            ));
        }
        (None, _) => None,
    };
    let data = DataSpec {
        path,
        test_data: a.test_data,
        test_fraction: a.test_fraction,
        target,
        train_limit: a.train_limit,
        image_size: a.image_size,
    };
    let spec = RunSpec {
        data,
        params,
        member: None,
    };
    Ok((out, spec))
}

pub(crate) fn train(a: TrainArgs) -> Result<()> {
    let choice = a.device.choice;
    let device = choice.burn()?;
    if let Some(dir) = &a.resume {
        if ant::ensemble::is_ensemble(dir) {
            return resume_ensemble(dir, &device, choice);
        }
        let run = Run::resume(dir)?;
        note!("resuming the run in {}", dir.display());
        return train_run(run, &device, choice);
    }
    let existing = if a.force {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    match (a.ensemble, a.member) {
        (None, Some(_)) => Err(AntError::param(
            "--member K needs --ensemble N (the size of the ensemble it belongs to)",
        )),
        (Some(n), member) => {
            let (out, spec) = run_spec(a)?;
            train_ensemble(&out, spec, n, member, existing, (&device, choice))
        }
        (None, None) => {
            let (out, spec) = run_spec(a)?;
            let piped = read_once(&spec.data).map(Path::to_path_buf);
            let run = Run::start(&out, spec, existing)?;
            match piped {
                Some(p) => note!(
                    "checkpoints every epoch, but {} is a pipe, which cannot be read again: a stopped run cannot be resumed (give a file to resume from)",
                    p.display()
                ),
                None => note!(
                    "checkpoints every epoch: if stopped, continue with `ant train --resume {}`",
                    out.display()
                ),
            }
            train_run(run, &device, choice)
        }
    }
}

/// The data path of `data` that can be read only once (a pipe, `<(...)`, a device), if
/// any: a resumed run reads its data again.
fn read_once(data: &DataSpec) -> Option<&Path> {
    use std::os::unix::fs::FileTypeExt;
    let once = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| {
            let t = m.file_type();
            t.is_fifo() || t.is_char_device() || t.is_socket()
        })
    };
    std::iter::once(data.path.as_path())
        .chain(data.test_data.as_deref())
        .find(|p| once(p))
}

/// Trains members of an ensemble of `n` into `out`: all of them, or only `member`.
fn train_ensemble(
    out: &Path,
    spec: RunSpec,
    n: usize,
    member: Option<usize>,
    existing: Existing,
    (device, choice): (&Device, ComputeDevice),
) -> Result<()> {
    ant::ensemble::train_members(out, spec, (n, member), existing, |k, run| {
        note!(
            "member {k} of {n} (seed {}): if stopped, continue with `ant train --resume {}`",
            run.spec().params.seed(),
            run.out().display()
        );
        train_run(run, device, choice)
    })
}

/// Finishes the ensemble in `dir`: resumes its interrupted members, trains its missing
/// ones and leaves its trained ones as they are.
fn resume_ensemble(dir: &Path, device: &Device, choice: ComputeDevice) -> Result<()> {
    ant::ensemble::resume_members(dir, |k, run| {
        note!("member {k}: training into {}", run.out().display());
        train_run(run, device, choice)
    })
}

/// Trains `run` to the end, then prints the tree and its test scores.
fn train_run(run: Run, device: &Device, choice: ComputeDevice) -> Result<()> {
    let spec = run.spec();
    let what = match spec.params.baseline() {
        Some(b) => format!("baseline {b} ({} modules)", spec.params.preset()),
        None => spec.params.preset().to_string(),
    };
    note!(
        "training {what} on {} samples ({} test) from {}, on {}",
        run.train_set().len(),
        run.test_set().len(),
        spec.data.path.display(),
        choice
    );
    let out = run.out().to_path_buf();
    let mut records = run.records_log()?;
    let mut bars = ProgressBars::default();
    let mut obs = Fanout(vec![&mut bars, &mut records]);
    let done = run.train(device, &mut obs)?;
    let (model, ev) = (&done.model, &done.evaluation);
    for line in model.topology().outline().lines() {
        note!("{line}");
    }
    let score = |v: f64| match model.task().is_classification() {
        true => format!("{v:.4}% error"),
        false => format!("{} MSE", ant::digits::decimals(v, 4)),
    };
    note!(
        "test: multi-path {}, single-path {} on {} samples; {} params; {:.1} s; saved to {}",
        score(ev.multi_path),
        score(ev.single_path),
        ev.test_samples,
        model.topology().num_params(),
        done.seconds,
        out.display()
    );
    Ok(())
}
