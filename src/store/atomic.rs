//! Atomic file writes: write a temporary file in the same directory, sync, rename, sync
//! the directory. An interrupted run leaves either the old file or the new one, never
//! half of one; a write that fails (a full disk, a file size limit) removes its
//! temporary file and is an error naming the file.
//!
//! Temporary names start with `.` and end with `.tmp` (`.NAME.PID.tmp`): a run that
//! owns a directory removes the ones a killed process left ([`remove_stale_temps`]).
//!
//! For tests, two environment variables inject faults, read here only:
//! `ANT_FAULT_AFTER_WRITES=N` kills the process (SIGKILL) right after the N-th durable
//! step (a temporary file written, a rename, a removal, a line appended), and
//! `ANT_FAULT_FAIL_WRITE=N` makes the N-th file write fail as on a full disk.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{AntError, Result};

/// Create `dir` and the folders above it. The OS says only "File exists" when a folder
/// on the way is a link to nowhere; the error then names the link and where it points.
pub(crate) fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| match what_blocks(dir) {
        Some((at, why)) => AntError::io(at, std::io::Error::new(e.kind(), why)),
        None => AntError::io(dir, e),
    })
}

/// The deepest of `dir` and the folders above it that stops a folder being made there,
/// and why: a link to nowhere (where it points, resolved from the link's own folder; a
/// loop of links), or a file (not said as "File exists", "Not a directory", or as a
/// target to create in the wrong folder).
fn what_blocks(dir: &Path) -> Option<(PathBuf, String)> {
    // `afile/` is `afile`: its trailing slash would make every check of it fail.
    let dir: PathBuf = dir.components().collect();
    dir.ancestors().filter(|a| !a.as_os_str().is_empty()).find_map(|a| {
        let meta = std::fs::symlink_metadata(a).ok()?;
        let link = meta.file_type().is_symlink();
        match (link, std::fs::metadata(a)) {
            (true, Err(e)) => {
                let target = std::fs::read_link(a).ok()?;
                let resolved = parent_of(a).join(&target);
                let why = match e.raw_os_error() == Some(40) || std::fs::symlink_metadata(&resolved).is_ok() {
                    true => format!("a link to {}, which leads to no folder (a loop of links, or a link to a link to nowhere): remove the link", target.display()),
                    false => format!("a link to {}, which does not exist: create that folder or remove the link", resolved.display()),
                };
                Some((a.to_path_buf(), why))
            }
            (_, Ok(m)) if !m.is_dir() => {
                let what = if link { "a link to a file" } else { "a file" };
                Some((a.to_path_buf(), format!("is {what}, not a folder: choose another path")))
            }
            _ => None,
        }
    })
}

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = parent_of(path);
    create_dir_all(dir)?;
    let tmp = temp_path(path);
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        injected_failure()?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        step();
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(AntError::io(path, e));
    }
    sync_dir(dir);
    step();
    warn_of_stale_temp_files(path);
    Ok(())
}

/// Says what killed writes of `path` may have left beside it (`.NAME.PID.tmp` files of
/// processes not seen running): a `kill -9`'d predict's 44 MB temporary file would
/// otherwise stay, unsaid, through later writes of the same output. They are named,
/// never removed: a file of that name may be the user's, and a process this one cannot
/// see (another PID namespace, another host over NFS) may be writing it (removing them
/// would delete both).
/// Each output is looked at once per process: a checkpoint rewritten every epoch reads
/// its folder once, not every time.
fn warn_of_stale_temp_files(path: &Path) {
    static SEEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    {
        let mut seen = SEEN
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if seen.iter().any(|p| p == path) {
            return;
        }
        seen.push(path.to_path_buf());
    }
    let (Some(name), Ok(entries)) = (path.file_name(), std::fs::read_dir(parent_of(path))) else {
        return;
    };
    let stem = temp_stem(&name.to_string_lossy());
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        let ours = temp_parts(&entry).is_some_and(|(target, pid)| {
            target == stem && !entry.ends_with(".old.tmp") && !crate::os::process_alive(pid)
        });
        if ours && e.file_type().is_ok_and(|t| t.is_file()) {
            let size = e.metadata().map_or(0, |m| m.len());
            tracing::warn!(
                "{}: left beside {} ({size} bytes), perhaps by an earlier write of it that was killed; remove it if it is not yours",
                e.path().display(),
                path.display()
            );
        }
    }
}

/// The bytes of the file `path`, at most `limit` of them: what a format allows. A file
/// that holds more (or a stream that goes on, such as a pipe) is an error once `limit`
/// bytes have been read, and a device (`/dev/zero`) is refused before reading.
pub fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = crate::os::open_to_read(path)?;
    let meta = file.metadata()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() || t.is_block_device() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "is a device, not a file",
            ));
        }
    }
    if meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory, not a file",
        ));
    }
    let too_big = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("holds more than the {limit} bytes such a file can have"),
        )
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(crate::os::waits_error)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// Append `line` and a newline to `file` (one write), for logs that grow line by line.
pub fn append_line(file: &mut std::fs::File, path: &Path, line: &str) -> Result<()> {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let res = injected_failure()
        .and_then(|()| file.write_all(&bytes))
        .and_then(|()| file.flush());
    res.map_err(|e| AntError::io(path, e))?;
    step();
    Ok(())
}

/// Remove directory `dir` and everything in it as one step: it is renamed to a
/// temporary name first, so an interruption leaves either all of it or none of it
/// under its name (the temporary rest is removed by [`remove_stale_temps`]).
pub fn remove_dir_atomic(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let tmp = temp_path(dir);
    std::fs::rename(dir, &tmp).map_err(|e| AntError::io(dir, e))?;
    sync_dir(parent_of(dir));
    step();
    std::fs::remove_dir_all(&tmp).map_err(|e| AntError::io(&tmp, e))?;
    step();
    Ok(())
}

/// Make `dir` holding `files` (name, bytes) appear as one step: the files are written
/// into a temporary directory beside it, which is then renamed to `dir` (which must not
/// exist).
pub fn create_dir_atomic(dir: &Path, files: &[(&str, &[u8])]) -> Result<()> {
    staged(dir, files, |tmp| {
        std::fs::rename(tmp, dir).map_err(|e| match e.kind() {
            // Another process made `dir` since it was checked (two exports to one
            // folder at once): said as such, not as "Directory not empty".
            std::io::ErrorKind::DirectoryNotEmpty | std::io::ErrorKind::AlreadyExists => {
                std::io::Error::other(
                    "was made by another command meanwhile; this one replaced nothing: run it again to replace that",
                )
            }
            _ => e,
        })
    })?;
    sync_dir(parent_of(dir));
    step();
    Ok(())
}

/// Writes `files` into a fresh temporary directory beside `dir` (an error names a file
/// where it was to be, in `dir`), then puts it in place with `place(tmp)`; on any error
/// the temporary directory is removed. Returns its path.
fn staged(
    dir: &Path,
    files: &[(&str, &[u8])],
    place: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<PathBuf> {
    let tmp = temp_path(dir);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| AntError::io(&tmp, e))?;
    }
    let res = (|| {
        create_dir_all(&tmp)?;
        for (name, bytes) in files {
            write_atomic(&tmp.join(name), bytes).map_err(|e| match e {
                // Name the file where it will be, not where it is staged.
                AntError::Io { source, .. } => AntError::io(dir.join(name), source),
                e => e,
            })?;
        }
        place(&tmp).map_err(|e| AntError::io(dir, e))
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// Make directory `dir` hold `files` (name, bytes) as one step, whether or not it
/// exists: they are written into a temporary directory beside it, which then takes its
/// place (an atomic exchange of the two names where the OS has one, else two renames),
/// and the old directory is removed after. An interrupted call leaves the old directory
/// or the new one under `dir`, whole; its temporary rest is removed by the next call
/// for the same `dir` ([`remove_stale_siblings`]). The caller checks that the old
/// directory holds only what may be replaced.
pub fn replace_dir_atomic(dir: &Path, files: &[(&str, &[u8])]) -> Result<()> {
    remove_stale_siblings(dir)?;
    if std::fs::symlink_metadata(dir).is_err() {
        return create_dir_atomic(dir, files);
    }
    let tmp = staged(dir, files, |tmp| exchange(tmp, dir))?;
    sync_dir(parent_of(dir));
    step();
    // The old directory, now under the temporary name.
    std::fs::remove_dir_all(&tmp).map_err(|e| AntError::io(&tmp, e))?;
    step();
    Ok(())
}

/// Swaps the names of directories `a` and `b` (both exist).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    match crate::os::rename_exchange(a, b) {
        Some(Ok(())) => return Ok(()),
        Some(Err(e)) => return Err(e),
        // A file system without the exchange: the renames below.
        None => {}
    }
    let old = parent_of(b).join(format!(
        ".{}.{}.old.tmp",
        temp_stem(&b.file_name().unwrap_or_default().to_string_lossy()),
        std::process::id()
    ));
    std::fs::rename(b, &old)?;
    if let Err(e) = std::fs::rename(a, b) {
        let _ = std::fs::rename(&old, b);
        return Err(e);
    }
    std::fs::rename(&old, a)
}

/// Removes the temporary directories (`.NAME.PID.tmp`, `.NAME.PID.old.tmp`) that
/// interrupted [`replace_dir_atomic`] and [`create_dir_atomic`] calls for `dir` left
/// beside it, when the process that made them is gone.
pub fn remove_stale_siblings(dir: &Path) -> Result<()> {
    let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Ok(());
    };
    let parent = parent_of(dir);
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Ok(());
    };
    let prefix = format!(".{}.", temp_stem(&name));
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = entry.strip_prefix(&prefix) else {
            continue;
        };
        let pid = rest
            .strip_suffix(".old.tmp")
            .or_else(|| rest.strip_suffix(".tmp"));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && crate::os::process_alive(pid) {
            continue;
        }
        let p = e.path();
        match std::fs::remove_dir_all(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(AntError::io(&p, e));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Remove `path` (a file), counting it as one step; a missing file is not an error.
pub fn remove_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {
            step();
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(AntError::io(path, e)),
    }
}

/// `(NAME, PID)` of a temporary name this module writes (`.NAME.PID.tmp` or
/// `.NAME.PID.old.tmp`); `None` for any other name.
fn temp_parts(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let rest = rest.strip_suffix(".old").unwrap_or(rest);
    let (target, pid) = rest.rsplit_once('.')?;
    let digits = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    let pid = pid.parse().ok().filter(|_| digits)?;
    (!target.is_empty()).then_some((target, pid))
}

/// Whether `name` is a temporary name this module gives a write of a file that `owned`
/// says is the command's (`.NAME.PID.tmp`).
pub(crate) fn is_temp_of(name: &str, owned: impl Fn(&str) -> bool) -> bool {
    temp_parts(name).is_some_and(|(target, _)| owned(target))
}

/// Remove the temporary files and directories that interrupted writes left in `dir`:
/// only names this module makes (`.NAME.PID.tmp`), for a NAME that `owned` says the
/// command writes there, of a process that is gone. Anything else, `.notes.tmp` say, is
/// the user's and stays. Only for a directory no other process writes to (one whose
/// run lock is held).
pub fn remove_stale_temps(dir: &Path, owned: impl Fn(&str) -> bool) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((target, pid)) = temp_parts(&name) else {
            continue;
        };
        if !owned(target) || (pid != std::process::id() && crate::os::process_alive(pid)) {
            continue;
        }
        let p = e.path();
        let res = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        match res {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(AntError::io(&p, e)),
        }
    }
    Ok(())
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `DIR/.NAME.PID.tmp` for `DIR/NAME`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_of(path).join(format!(".{}.{}.tmp", temp_stem(&name), std::process::id()))
}

/// The longest stem a temporary name may have: `.` + stem + `.` + a PID (10 digits) +
/// `.old.tmp` must fit the 255 bytes a file name may have.
const MAX_STEM: usize = 255 - 1 - 1 - 10 - 8;

/// `name` in a temporary name: itself when the temporary name fits, else as much of it
/// as fits and `~` and 8 hexadecimal digits of its checksum (names of 236 to 255 bytes
/// are outputs too).
fn temp_stem(name: &str) -> String {
    if name.len() <= MAX_STEM {
        return name.to_string();
    }
    let mut end = MAX_STEM - 9;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    use md5::{Digest, Md5};
    let sum = Md5::digest(name.as_bytes());
    let tag: String = sum[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}~{tag}", &name[..end])
}

/// Make the renames in `dir` durable (best effort: not every file system can).
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The fault injection settings, read once.
struct Faults {
    kill_after: Option<usize>,
    fail_write: Option<usize>,
}

static STEPS: AtomicUsize = AtomicUsize::new(0);
static WRITES: AtomicUsize = AtomicUsize::new(0);

fn faults() -> &'static Faults {
    static F: OnceLock<Faults> = OnceLock::new();
    F.get_or_init(|| Faults {
        kill_after: crate::env::fault_after_writes(),
        fail_write: crate::env::fault_fail_write(),
    })
}

/// One durable step done: the injected kill happens here.
fn step() {
    let Some(n) = faults().kill_after else {
        return;
    };
    if STEPS.fetch_add(1, Ordering::SeqCst) + 1 == n {
        crate::os::kill_self();
    }
}

/// The injected full disk: the N-th write fails.
fn injected_failure() -> std::io::Result<()> {
    let Some(n) = faults().fail_write else {
        return Ok(());
    };
    if WRITES.fetch_add(1, Ordering::SeqCst) + 1 == n {
        // ENOSPC (28 on Linux, macOS and the BSDs): what a full disk gives.
        #[cfg(unix)]
        return Err(std::io::Error::from_raw_os_error(28));
        #[cfg(not(unix))]
        return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs named with 236 to 255 bytes are not written through a temporary name
    /// too long for the file system.
    #[test]
    fn files_and_directories_of_the_longest_names_are_written() {
        let d = tempfile::tempdir().unwrap();
        for len in [200, 236, 247, 255] {
            let name: String = "é".repeat(len / 2) + &"x".repeat(len % 2);
            assert_eq!(name.len(), len);
            let f = d.path().join(&name);
            write_atomic(&f, b"one").unwrap();
            write_atomic(&f, b"two").unwrap();
            assert_eq!(std::fs::read(&f).unwrap(), b"two");
            std::fs::remove_file(&f).unwrap();
            replace_dir_atomic(&f, &[("a", b"1")]).unwrap();
            replace_dir_atomic(&f, &[("a", b"2")]).unwrap();
            assert_eq!(std::fs::read(f.join("a")).unwrap(), b"2");
            remove_dir_atomic(&f).unwrap();
            assert!(temp_path(&f).file_name().unwrap().len() <= 255);
        }
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "no temporary rest"
        );
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"first version, long").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(names(d.path()), ["a.json"]);
    }

    #[test]
    fn directories_appear_and_vanish_whole() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join("ck");
        create_dir_atomic(&c, &[("run.json", b"{}"), ("b", b"x")]).unwrap();
        assert_eq!(names(&c), ["b", "run.json"]);
        assert_eq!(names(d.path()), ["ck"]);
        remove_dir_atomic(&c).unwrap();
        assert!(names(d.path()).is_empty());
        remove_dir_atomic(&c).unwrap();
    }

    #[test]
    fn a_directory_is_replaced_whole_and_leftovers_cleaned() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path().join("site");
        replace_dir_atomic(&site, &[("a", b"1"), ("b", b"2")]).unwrap();
        assert_eq!(names(&site), ["a", "b"]);
        replace_dir_atomic(&site, &[("a", b"3")]).unwrap();
        assert_eq!(names(&site), ["a"]);
        assert_eq!(std::fs::read(site.join("a")).unwrap(), b"3");
        // Leftovers of a process that is gone go; those of a live one (init) stay.
        std::fs::create_dir(d.path().join(".site.999999999.tmp")).unwrap();
        std::fs::create_dir(d.path().join(".site.999999999.old.tmp")).unwrap();
        std::fs::create_dir(d.path().join(".site.1.tmp")).unwrap();
        std::fs::create_dir(d.path().join(".other.999999999.tmp")).unwrap();
        replace_dir_atomic(&site, &[("a", b"4")]).unwrap();
        let mut left = names(d.path());
        left.sort();
        let mut want = vec![".other.999999999.tmp", "site"];
        if crate::os::process_alive(1) {
            want.insert(1, ".site.1.tmp");
        }
        assert_eq!(left, want);
    }

    #[test]
    fn stale_temps_are_removed_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        // A process id above Linux's largest (2^22) names a process that is gone.
        let gone = 4_194_999;
        std::fs::write(d.path().join(format!(".tree.json.{gone}.tmp")), b"x").unwrap();
        std::fs::create_dir(d.path().join(format!(".checkpoint.{gone}.old.tmp"))).unwrap();
        std::fs::write(d.path().join("tree.json"), b"x").unwrap();
        std::fs::write(d.path().join(".hidden"), b"x").unwrap();
        // The user's: other names that end in .tmp, a name `ant` does not write there,
        // and a temporary of a process still running (process 1 always is).
        std::fs::write(d.path().join(".notes.tmp"), b"x").unwrap();
        std::fs::create_dir(d.path().join(".scratch.tmp")).unwrap();
        std::fs::write(d.path().join(".scratch.tmp/kept"), b"x").unwrap();
        std::fs::write(d.path().join(format!(".mine.csv.{gone}.tmp")), b"x").unwrap();
        std::fs::write(d.path().join(".tree.json.1.tmp"), b"x").unwrap();
        remove_stale_temps(d.path(), crate::store::file_names::is_model_owned).unwrap();
        let kept = [
            ".hidden",
            &format!(".mine.csv.{gone}.tmp"),
            ".notes.tmp",
            ".scratch.tmp",
        ];
        let mut kept: Vec<String> = kept.iter().map(|s| s.to_string()).collect();
        kept.extend([".tree.json.1.tmp".into(), "tree.json".into()]);
        kept.sort();
        assert_eq!(names(d.path()), kept);
    }
}
