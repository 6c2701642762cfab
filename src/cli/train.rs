//! `ant train`: one run, an ensemble of runs, or the rest of an interrupted one, each
//! printed as it trains.

use std::path::{Path, PathBuf};

use ant::data::tabular::TargetSpec;
use ant::observe::Fanout;
use ant::run::{DataSpec, Existing, Run, RunSpec};
use ant::{AntError, ComputeDevice, Result};
use burn::prelude::Device;

use crate::args::TrainArgs;
use crate::progress::ProgressBars;

/// The run a `train` command line describes.
fn run_spec(a: TrainArgs) -> Result<(PathBuf, RunSpec)> {
    // clap requires these unless --resume.
    let (Some(mut params), Some(path), Some(out)) = (a.params, a.data, a.out) else {
        return Err(AntError::param("--preset, --data and --out are required"));
    };
    // Recorded as an absolute path: a resumed run or an ensemble member may start
    // elsewhere.
    if let Some(dir) = &params.init_from {
        params.init_from =
            Some(std::path::absolute(dir).map_or(dir.clone(), |p| p.display().to_string()));
    }
    let target = match (a.target, a.task) {
        (Some(column), Some(task)) => Some(TargetSpec {
            delimiter: a.delimiter,
            skip_rows: a.skip_rows,
            ..TargetSpec::new(column, task)
        }),
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
            let run = Run::start(&out, spec, existing)?;
            note!(
                "checkpoints every epoch: if stopped, continue with `ant train --resume {}`",
                out.display()
            );
            train_run(run, &device, choice)
        }
    }
}

/// Trains the members of an ensemble of `n` into `out`, one after the other: all of
/// them, or only `member`. `ensemble.json` is written with the first member's run
/// (after its data has been checked); one already there must describe the same run.
fn train_ensemble(
    out: &Path,
    spec: RunSpec,
    n: usize,
    member: Option<usize>,
    existing: Existing,
    (device, choice): (&Device, ComputeDevice),
) -> Result<()> {
    use ant::ensemble::{EnsembleFile, member_dir};
    if n == 0 {
        return Err(AntError::param("--ensemble must be at least 1"));
    }
    if let Some(k) = member
        && k >= n
    {
        return Err(AntError::param(format!(
            "--member {k} is not a member of --ensemble {n} (members are numbered 0 to {})",
            n - 1
        )));
    }
    let cwd = std::env::current_dir().map_err(|e| AntError::io(".", e))?;
    let file = EnsembleFile::new(spec, n, cwd)?;
    file.matches_dir(out)?;
    let members: Vec<usize> = match member {
        Some(k) => vec![k],
        None => (0..n).collect(),
    };
    for k in members {
        let dir = member_dir(out, k);
        // Members started at once (--member K in several processes) check and write
        // ensemble.json one at a time: the second sees the first's and must match it.
        let ensemble_lock = ant::run::DirLock::take(out, true)?;
        let written = file.matches_dir(out)?;
        let run = Run::start(&dir, file.member_spec(k)?, existing)?;
        if !written {
            file.save(out)?;
        }
        drop(ensemble_lock);
        note!(
            "member {k} of {n} (seed {}): if stopped, continue with `ant train --resume {}`",
            run.spec().params.seed,
            dir.display()
        );
        train_run(run, device, choice)?;
    }
    Ok(())
}

/// Finishes the ensemble in `dir`: resumes its interrupted members, trains its missing
/// ones and leaves its trained ones as they are.
fn resume_ensemble(dir: &Path, device: &Device, choice: ComputeDevice) -> Result<()> {
    use ant::ensemble::{EnsembleFile, MemberState, member_dir, member_state};
    let file = EnsembleFile::open(dir)?;
    for k in 0..file.size {
        let mdir = member_dir(dir, k);
        let run = match member_state(dir, k) {
            MemberState::Trained => {
                note!("member {k} of {}: trained", file.size);
                continue;
            }
            MemberState::Started => Run::resume(&mdir)?,
            MemberState::Missing => Run::start_from(
                &mdir,
                file.member_spec(k)?,
                Existing::Refuse,
                file.cwd.clone(),
            )?,
        };
        note!(
            "member {k} of {}: training into {}",
            file.size,
            mdir.display()
        );
        train_run(run, device, choice)?;
    }
    Ok(())
}

/// Trains `run` to the end, then prints the tree and its test scores.
fn train_run(run: Run, device: &Device, choice: ComputeDevice) -> Result<()> {
    let spec = run.spec();
    let what = match spec.params.baseline {
        Some(b) => format!("baseline {b} ({} modules)", spec.params.preset),
        None => spec.params.preset.to_string(),
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
    let done = run.fit(device, &mut obs)?;
    let (model, ev) = (&done.model, &done.evaluation);
    note!("{}", model.tree().topology.outline().trim_end());
    let unit = if model.task().is_classification() {
        "% error"
    } else {
        " MSE"
    };
    note!(
        "test: multi-path {:.4}{unit}, single-path {:.4}{unit} on {} samples; {} params; {:.1} s; saved to {}",
        ev.multi_path,
        ev.single_path,
        ev.test_samples,
        model.tree().topology.num_params(),
        done.seconds,
        out.display()
    );
    Ok(())
}
