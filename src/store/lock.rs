//! A directory's lock: one command writes a model or run directory at a time. The OS
//! lock is held on the directory itself (where the OS can lock one), so that deleting
//! `run.lock` does not let a second command in; `run.lock` says who holds it.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{AntError, Result};
use crate::store::file_names::{LOCK_FILE, LOCK_TEXT};

/// A directory's lock, held by this process until dropped (then its `run.lock` goes):
/// what a command that writes a model directory outside a run holds (`ant prune`, an
/// ensemble's `ensemble.json`), so that two commands never write one directory at once.
pub struct DirLock {
    dir: PathBuf,
    _file: File,
    /// Whether taking the lock made the directory: one left empty (the command failed
    /// before it wrote anything) goes with the lock.
    made: bool,
}

impl DirLock {
    /// The lock of `dir` (made if missing): at once, or an error that another command
    /// holds it; with `wait`, once the command holding it lets go.
    pub fn take(dir: &Path, wait: bool) -> Result<DirLock> {
        let made = !dir.exists();
        crate::store::atomic::create_dir_all(dir)?;
        // Refused, a directory this made stays: another command may be writing it.
        let file = lock_checked(dir, wait)?;
        Ok(DirLock {
            dir: dir.to_path_buf(),
            _file: file,
            made,
        })
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Before the OS lock goes with the file: a command waiting for it writes its own.
        let _ = std::fs::remove_file(self.dir.join(LOCK_FILE));
        if self.made {
            // Only an empty directory is removed: what the command wrote stays.
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// [`lock`] (waiting for a command that holds it to end, with `wait`), then the files
/// `ant` did not write refused ([`crate::store::outputs::check_nothing_foreign`]). Checked with
/// the lock held, before `run.lock` is written: a command writing the directory holds
/// it, and a check beside it could see a file it has written but not yet recorded.
pub(crate) fn lock_checked(out: &Path, wait: bool) -> Result<File> {
    #[cfg(unix)]
    {
        let file = File::open(out).map_err(|e| AntError::io(out, e))?;
        match wait {
            true => file.lock().map_err(|e| AntError::io(out, e))?,
            false => match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Err(held_by_another(out)),
                Err(std::fs::TryLockError::Error(e)) => return Err(AntError::io(out, e)),
            },
        }
        crate::store::outputs::check_nothing_foreign(out)?;
        write_lock_text(out)?;
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        crate::store::outputs::check_nothing_foreign(out)?;
        lock(out)
    }
}

/// The refusal of a directory whose lock another command holds.
fn held_by_another(out: &Path) -> AntError {
    AntError::data(
        out,
        "another run is using this directory (it holds the directory's lock: see its run.lock)",
    )
}

/// Says in `run.lock` who holds the directory's lock.
fn write_lock_text(out: &Path) -> Result<()> {
    let path = out.join(LOCK_FILE);
    let text = format!(
        "{LOCK_TEXT} (process {}) while it writes this directory: no other command may write here until it ends\n",
        std::process::id()
    );
    // Written beside it and renamed: another command reading it never sees it half
    // written (empty). Not one of the durable steps fault injection counts.
    let tmp = out.join(format!(".{LOCK_FILE}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            AntError::io(&path, e)
        })
}

/// Take the directory's lock, or say that another run holds it. The OS lock is held on
/// the directory itself (where the OS can lock one), so that deleting `run.lock` does
/// not let a second run in; `run.lock` says who holds it.
pub(crate) fn lock(out: &Path) -> Result<File> {
    let path = out.join(LOCK_FILE);
    #[cfg(unix)]
    let file = File::open(out).map_err(|e| AntError::io(out, e))?;
    #[cfg(not(unix))]
    let file = File::create(&path).map_err(|e| AntError::io(&path, e))?;
    let held = file.try_lock();
    #[cfg(unix)]
    if held.is_ok() {
        write_lock_text(out)?;
    }
    match held {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(held_by_another(out)),
        Err(std::fs::TryLockError::Error(e)) => Err(AntError::io(&path, e)),
    }
}
