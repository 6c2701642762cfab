//! Training an ensemble's members into its directory, and finishing an interrupted
//! ensemble: the library's part, which `ant train --ensemble` and `--resume` call. The
//! caller trains each member's [`Run`] (and shows its progress as it likes).

use std::path::Path;

use super::{EnsembleFile, MemberState, member_dir, member_state};
use crate::error::{AntError, Result};
use crate::run::{DirLock, Existing, Run, RunSpec};

/// Trains members of an ensemble of `n` runs of `spec` into `out`: all of them, or only
/// `member`, one after the other, each by `train(k, run)`. `ensemble.json` is written
/// with the first member's run (after its data has been checked); one already there
/// must describe the same ensemble.
pub fn train_members(
    out: &Path,
    spec: RunSpec,
    (n, member): (usize, Option<usize>),
    existing: Existing,
    mut train: impl FnMut(usize, Run) -> Result<()>,
) -> Result<()> {
    if n == 0 {
        return Err(AntError::invalid("ensemble", "must be at least 1"));
    }
    if let Some(k) = member
        && k >= n
    {
        let reason = format!(
            "{k} is not a member of --ensemble {n} (members are numbered 0 to {})",
            n - 1
        );
        return Err(AntError::invalid("member", reason));
    }
    let cwd = std::env::current_dir().map_err(|e| AntError::io(".", e))?;
    // An ensemble inside another's member slot (or a run's grown/) broke that one.
    crate::store::outputs::check_not_a_part(out)?;
    let file = EnsembleFile::new(spec, n, cwd)?;
    // A new ensemble is checked as a new run is; members join one as it was started.
    if !file.matches_dir(out)? {
        crate::run::check_new_run(&file.spec, &file.cwd)?;
    }
    let members: Vec<usize> = match member {
        Some(k) => vec![k],
        None => (0..n).collect(),
    };
    check_start(&file, &members)?;
    check_rereadable(&spec_data(&file), members.len())?;
    // Every member's directory is checked before the first trains: a file of the
    // user's in member 1 is found before member 0's training, not after it.
    crate::store::outputs::check_nothing_foreign(out)?;
    for &k in &members {
        crate::store::outputs::check_nothing_foreign(&member_dir(out, k))?;
        crate::store::outputs::check_grown_dir(&member_dir(out, k))?;
    }
    for k in members {
        // Members started at once (--member K in several processes) check and write
        // ensemble.json one at a time: the second sees the first's and must match it.
        let ensemble_lock = DirLock::take(out, true)?;
        let written = file.matches_dir(out)?;
        let run = Run::start(&member_dir(out, k), file.member_spec(k)?, existing)?;
        if !written {
            file.save(out)?;
        }
        drop(ensemble_lock);
        train(k, run)?;
    }
    Ok(())
}

fn spec_data(file: &EnsembleFile) -> std::path::PathBuf {
    file.cwd.join(&file.spec.data.path)
}

/// Each member reads the data anew: a pipe (`<(cat x.csv)`) gives its rows to the first
/// only, so several members in one process need a file or a directory.
fn check_rereadable(data: &Path, members: usize) -> Result<()> {
    let plain = std::fs::metadata(data).is_ok_and(|m| m.is_file() || m.is_dir());
    if members > 1 && !plain {
        let msg = "is not a regular file: each ensemble member reads the data anew, and a pipe \
                   gives its rows once; save them to a file first";
        return Err(AntError::data(data, msg));
    }
    Ok(())
}

/// With `--init-from`, every member to train must hold out the CNN's validation rows:
/// checked for all of them before the first is trained, not member by member.
fn check_start(file: &EnsembleFile, members: &[usize]) -> Result<()> {
    let Some(cnn) = crate::model::start_model(&file.spec.params, &crate::default_device())? else {
        return Ok(());
    };
    let dir = &cnn.dir;
    if members.len() > 1 {
        let msg = "--init-from starts one tree from a CNN that held out that tree's \
                   validation rows, and each ensemble member holds out its own: train each \
                   member's CNN as that member (--baseline cnn --ensemble N --member K), then \
                   each member from its own (--ensemble N --member K --init-from)";
        return Err(AntError::data(dir, msg));
    }
    for &k in members {
        let cfg = file.member_spec(k)?.params.check()?;
        crate::train::check_start_rows(&cnn.config, &cfg)
            .map_err(|m| AntError::data(dir, format!("--init-from for member {k}: {m}")))?;
    }
    Ok(())
}

/// Finishes the ensemble in `dir`: resumes its interrupted members and trains its
/// missing ones, each by `train(k, run)`; its trained members are left as they are.
/// A trained member is checked to be this ensemble's (one copied in from another is
/// refused); an ensemble with nothing left to train is an error, as a finished run is.
pub fn resume_members(dir: &Path, mut train: impl FnMut(usize, Run) -> Result<()>) -> Result<()> {
    let file = EnsembleFile::open(dir)?;
    let mut trained = 0;
    for k in 0..file.size {
        let mdir = member_dir(dir, k);
        let run = match member_state(dir, k) {
            MemberState::Trained => {
                let ant = crate::model::Ant::load(&mdir, &crate::default_device())?;
                super::check_member(&file, k, &ant, None).map_err(|m| AntError::data(&mdir, m))?;
                trained += 1;
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
        train(k, run)?;
    }
    if trained == file.size {
        let msg = format!(
            "holds a finished ensemble (its {} members trained): nothing to resume",
            file.size
        );
        return Err(AntError::data(dir, msg));
    }
    Ok(())
}
