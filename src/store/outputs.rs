//! Where a command may write: every output is checked before anything is written.
//!
//! - An output that is one of the command's inputs is refused: the same file as an
//!   input file (a hard link included), a file inside a data directory it reads, or a
//!   file a model directory it reads owns (`tree.json`, the weights, `ensemble.json`,
//!   `records.jsonl`, `report.json`, `checkpoint/`, `member-K/`...).
//! - An output that exists must be what the command writes: a regular file (or a
//!   directory, for directory outputs). A device, a pipe or a socket is refused (`-`
//!   writes to stdout), and so is a symbolic link that leads nowhere. A link to a
//!   regular file is written through: the file it leads to is replaced, never the link.

use std::path::{Component, Path, PathBuf};

use super::output_names;
use crate::error::{AntError, Result};

/// What a command reads, for [`check`].
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    /// A data file or directory: every file in a directory is read.
    Data(&'a Path),
    /// A model, ensemble or run directory: the files its format owns are read.
    Model(&'a Path),
}

/// What a command writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
}

pub(crate) use crate::store::file_names::is_model_owned;

/// Whether `out` means stdout.
pub(crate) fn is_stdout(out: &Path) -> bool {
    out.as_os_str() == "-"
}

/// Checks that `out` may be written as a `kind` output of a command that reads `inputs`
/// (see the module's description). Returns the path to write: `out`, or for a link to
/// a regular file the file it leads to.
pub fn check(out: &Path, kind: Kind, inputs: &[Input]) -> Result<PathBuf> {
    if is_stdout(out) {
        return check_kind(out, kind);
    }
    let resolved = resolve(out);
    // Only what exists can be overwritten.
    let existing = std::fs::metadata(&resolved).ok();
    for input in inputs {
        let (path, owned): (&Path, fn(&str) -> bool) = match *input {
            Input::Data(p) => (p, |_| true),
            Input::Model(p) => (p, is_model_owned),
        };
        let Ok(canon) = path.canonicalize() else {
            continue; // A missing input is the reader's error, and cannot be overwritten.
        };
        let refuse = |why: String| {
            Err(AntError::data(
                out,
                format!(
                    "{why}: an output never replaces what the command reads; choose another path"
                ),
            ))
        };
        if resolved == canon || same_file(out, &canon) {
            return refuse(format!("is the input {}", path.display()));
        }
        let Some(meta) = &existing else { continue };
        // In a data directory every file is read; in a model directory what it owns.
        let read = match input {
            Input::Data(_) => meta.is_file(),
            Input::Model(_) => true,
        };
        if read
            && canon.is_dir()
            && let Ok(rel) = resolved.strip_prefix(&canon)
            && rel
                .components()
                .any(|c| matches!(c, Component::Normal(n) if owned(&n.to_string_lossy())))
        {
            return refuse(format!("is part of the input {}", path.display()));
        }
        // A directory output replaces what `ant` owns in it: a model input kept there
        // (`--init-from OUT/grown --out OUT`) would be replaced under the run.
        if kind == Kind::Dir
            && matches!(input, Input::Model(_))
            && let Ok(rel) = canon.strip_prefix(&resolved)
            && rel
                .components()
                .next()
                .is_some_and(|c| is_model_owned(&c.as_os_str().to_string_lossy()))
        {
            return refuse(format!("holds the input {}", path.display()));
        }
    }
    if kind == Kind::File {
        check_not_a_part(out)?;
    }
    check_kind(out, kind)
}

/// Refuses an output (a file or a directory, new or not) that is a part of an `ant`
/// model, ensemble or run directory (`ENS/member-2`, `RUN/grown`, another run's
/// `records.jsonl`), or lies inside a part `ant` replaces whole (`checkpoint/`,
/// `grown/`): a model saved there (`train --force`, Python's `save(..,
/// overwrite=True)`, another ensemble) would break the ensemble or run it is part of.
/// Only the command that owns such a directory writes its parts. File outputs come here
/// through [`check`]; directory outputs from each user-facing door (a run's own member
/// directories must not).
pub(crate) fn check_not_a_part(out: &Path) -> Result<()> {
    use crate::store::file_names::{CHECKPOINT_DIR, GROWN_DIR};
    if is_stdout(out) {
        return Ok(());
    }
    let resolved = resolve(out);
    for dir in resolved.ancestors().skip(1) {
        let Some(rest) = resolved.strip_prefix(dir).ok() else {
            continue;
        };
        let Some(part) = rest.components().next() else {
            continue;
        };
        let part = part.as_os_str().to_string_lossy();
        // The part itself, or anything inside a part `ant` replaces whole; a folder or
        // file inside a member (`E/member-0/pruned`) harms nothing.
        let refused = is_model_owned(&part)
            && (rest.components().count() == 1 || [CHECKPOINT_DIR, GROWN_DIR].contains(&&*part));
        if refused && is_ant_dir(dir) {
            let msg = format!(
                "is part of the ant directory {} (its {part}): only the command that wrote it writes there; choose another path",
                dir.display()
            );
            return Err(AntError::data(out, msg));
        }
    }
    Ok(())
}

/// Whether `dir` is a model, ensemble or run directory `ant` wrote: its `tree.json` or
/// `ensemble.json` of `ant`'s format, or a run's `checkpoint/run.json`. A user's folder
/// with a `checkpoint/` of their own (PyTorch's) or another `tree.json` is not.
fn is_ant_dir(dir: &Path) -> bool {
    use crate::store::file_names::{
        CHECKPOINT_DIR, ENSEMBLE_FILE, ENSEMBLE_FORMAT, MODEL_FORMAT, RUN_FILE, TREE_FILE,
    };
    let of_format = |name: &str, format: &str| {
        std::fs::read(dir.join(name))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["format"] == format)
    };
    of_format(TREE_FILE, MODEL_FORMAT)
        || of_format(ENSEMBLE_FILE, ENSEMBLE_FORMAT)
        || dir.join(CHECKPOINT_DIR).join(RUN_FILE).is_file()
}

/// Writes the file output `out` atomically (stdout for `-`), once [`check`]ed against
/// `inputs`. `endings` are the name endings of the format written (`["onnx"]`,
/// `["csv"]`): the name must end so, or have no ending.
pub(crate) fn write_file(
    out: &Path,
    bytes: &[u8],
    inputs: &[Input],
    endings: &[&str],
) -> Result<()> {
    if is_stdout(out) {
        return write_stdout(bytes);
    }
    let target = check(out, Kind::File, inputs)?;
    check_replaces_its_kind(&target, out, endings)?;
    crate::store::atomic::write_atomic(&target, bytes)
}

/// The path that reads standard input (`--input -`); a closed one (`<&-`), which Rust's
/// runtime replaces by `/dev/null`, is an error rather than a read of nothing.
pub fn stdin_input() -> Result<PathBuf> {
    match crate::os::stdin_closed() {
        true => Err(AntError::data(
            "<stdin>",
            "is closed: give a file, or send the rows in (`cat rows.csv | ant predict ... --input -`)",
        )),
        false => Ok(PathBuf::from("/dev/stdin")),
    }
}

/// Refuses a stdout that is closed or open only for reading (see [`write_stdout`]).
pub fn check_stdout() -> Result<()> {
    crate::os::stdout_writable().map_err(|e| AntError::io("<stdout>", e))
}

/// Writes `bytes` to stdout, the one way every command does. A reader that has gone
/// (`ant predict ... | head -1`) ends the output quietly, as for other command-line
/// tools; a stdout that is closed or open only for reading (`1<file`) is an error, which
/// Rust's own stdout would have swallowed.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    check_stdout()?;
    let mut s = std::io::stdout().lock();
    match s.write_all(bytes).and_then(|()| s.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(AntError::io("<stdout>", e)),
        _ => Ok(()),
    }
}

/// Refuses a file output whose name (through a link, the file it leads to) ends as
/// another kind of file does: `--out data.csv` of an ONNX export never turns a table
/// into a model, and `plot --out t.svg --format png` never writes a PNG under an SVG's
/// name (else, written once, the same command would then be refused).
/// A name without an ending, or whose ending is no word, says no kind; endings compare in
/// any case (`T.SVG`).
fn check_replaces_its_kind(target: &Path, out: &Path, endings: &[&str]) -> Result<()> {
    if let Some(ending) = output_names::names_only_an_ending(out, endings) {
        let msg = format!("names no file, only an ending: give NAME{ending}");
        return Err(AntError::data(out, msg));
    }
    let exists = std::fs::metadata(target).is_ok_and(|m| m.is_file());
    let Some(ending) = output_names::another_kinds_ending(target, endings) else {
        return Ok(());
    };
    let kind = endings
        .iter()
        .map(|e| format!(".{e}"))
        .collect::<Vec<_>>()
        .join(" or ");
    let msg = match (exists, target == out) {
        (false, _) => format!(
            "its name ends in .{ending}, but the output is a {kind} file: choose a name ending in {kind}, or one without an ending"
        ),
        (true, same) => format!(
            "{}, and its name ends in .{ending}, not {kind}: an output replaces only a file of the kind it writes; choose such a name, or remove the file",
            match same {
                true => "exists".to_string(),
                false => format!("leads to {}, which exists", target.display()),
            }
        ),
    };
    Err(AntError::data(out, msg))
}

/// Checks the file outputs a command names after the one it was given (an ensemble's
/// `X-member-K.svg` beside `--out X.svg`) as [`check`] does, and refuses any that exists
/// unless `replace` (`--force`): the user never named them, so nothing there is theirs
/// to lose by default.
pub(crate) fn check_derived(
    paths: &[PathBuf],
    given: &Path,
    replace: bool,
    inputs: &[Input],
) -> Result<()> {
    // `plot --out -` of an ensemble would write `--member-K` files.
    if is_stdout(given) {
        let msg = "is standard output, but one picture per member is written here, each named after the output: give a file name (X.svg, for X-member-K.svg)";
        return Err(AntError::data(given, msg));
    }
    for p in paths {
        check(p, Kind::File, inputs)?;
        if !replace && std::fs::symlink_metadata(p).is_ok() {
            let msg = format!(
                "exists: it is named after {}, not by you, so it is replaced only with --force; move it, or choose another path",
                given.display()
            );
            return Err(AntError::data(p, msg));
        }
    }
    Ok(())
}

/// What a command saves into a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Saved {
    /// One model (`tree.json` and its weights).
    Model,
    /// An ensemble (`ensemble.json` and `member-K/`).
    Ensemble,
}

/// Checks the directory `out` that a command reading `inputs` saves a model or an
/// ensemble into (as [`check`] does). A directory that holds an interrupted run, or
/// the other kind of model (which would hide the new one, or be hidden by it), is
/// refused; one that holds a model of this kind only with `replace` (`--force`), and
/// never for an ensemble (its members would be replaced one by one).
pub(crate) fn check_model_dir(
    out: &Path,
    saved: Saved,
    replace: bool,
    inputs: &[Input],
) -> Result<()> {
    use crate::store::file_names::{CHECKPOINT_DIR, ENSEMBLE_FILE, TREE_FILE};
    check_not_a_part(out)?;
    let out = &check(out, Kind::Dir, inputs)?;
    check_nothing_foreign(out)?;
    check_grown_dir(out)?;
    let has = |name: &str| std::fs::symlink_metadata(out.join(name)).is_ok();
    let refuse = |msg: &str| Err(AntError::data(out, msg));
    if has(CHECKPOINT_DIR) {
        return refuse("holds a run (checkpoint/): finish it, or choose another directory");
    }
    match saved {
        Saved::Model if has(ENSEMBLE_FILE) => refuse(
            "holds an ensemble (ensemble.json), which would hide a model saved here: choose another directory",
        ),
        Saved::Ensemble if has(TREE_FILE) => refuse(
            "holds a single model (tree.json), which would hide an ensemble saved here: choose another directory",
        ),
        Saved::Ensemble if has(ENSEMBLE_FILE) => refuse(
            "holds an ensemble: choose another directory (an ensemble is not replaced in place; delete it first)",
        ),
        Saved::Model if has(TREE_FILE) && !replace => {
            refuse("holds a trained model: choose another directory, or replace it (--force)")
        }
        _ => Ok(()),
    }
}

/// Refuses a directory that holds files under the names `ant` writes (and replaces or
/// deletes) in a model or run directory that `ant` cannot prove it wrote: the manifest
/// does not name their bytes (see [`crate::store::manifest`]), or a `checkpoint/` without the
/// run file `ant` starts every run with, or a `run.lock` without its text.
pub fn check_nothing_foreign(out: &Path) -> Result<()> {
    let foreign = crate::store::manifest::foreign(out)?;
    if foreign.is_empty() {
        return Ok(());
    }
    let manifest = crate::store::file_names::MANIFEST_FILE;
    if foreign.iter().any(|f| f == manifest) {
        // A damaged manifest is named on its own, not as one name among many.
        let others: Vec<&str> = foreign
            .iter()
            .map(String::as_str)
            .filter(|f| *f != manifest)
            .collect();
        let msg = format!(
            "holds {manifest}, which is not the manifest ant writes (damaged, or another program's), so nothing there is proven ant's{}; move them, or choose another directory",
            match others.is_empty() {
                true => String::new(),
                false => format!(" ({})", others.join(", ")),
            }
        );
        return Err(AntError::data(out, msg));
    }
    let msg = format!(
        "holds {}, which ant did not write: ant writes, replaces and deletes files of these \
         names in its model and run directories; move them, or choose another directory",
        foreign.join(", ")
    );
    Err(AntError::data(out, msg))
}

/// Refuses a run directory whose `grown/` (the model growth left, which a new run
/// replaces or removes) holds anything `ant` did not put there: only its `tree.json` and
/// its checksum-named weights may be there.
pub(crate) fn check_grown_dir(out: &Path) -> Result<()> {
    let grown = out.join(crate::store::file_names::GROWN_DIR);
    let Ok(meta) = std::fs::symlink_metadata(&grown) else {
        return Ok(());
    };
    let refuse = |what: String| {
        let msg = format!(
            "{what}, which ant did not write: a new run replaces grown/ whole; move it, or choose another directory"
        );
        Err(AntError::data(&grown, msg))
    };
    if !meta.is_dir() {
        return refuse("is not the directory ant keeps the grown model in".into());
    }
    check_nothing_foreign(&grown)?;
    let entries = std::fs::read_dir(&grown).map_err(|e| AntError::io(&grown, e))?;
    let mut foreign: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !is_grown_owned(n) && !crate::store::atomic::is_temp_of(n, is_grown_owned))
        .collect();
    foreign.sort();
    match foreign.is_empty() {
        true => Ok(()),
        false => refuse(format!("holds {}", foreign.join(", "))),
    }
}

/// The names a grown model's directory owns: its `tree.json`, checksum-named weights
/// and manifest.
pub(crate) fn is_grown_owned(name: &str) -> bool {
    use crate::store::file_names::{MANIFEST_FILE, TREE_FILE, is_checksum_weights};
    name == TREE_FILE || name == MANIFEST_FILE || is_checksum_weights(name)
}

/// Who wrote the training records in a directory a model is saved into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Records {
    /// The run saving the model: they describe it, and stay.
    Ours,
    /// Another command's model: they describe the model being replaced.
    Old,
}

/// The inputs of a command that reads the model (ensemble or run) directory `model`
/// and, if given, the data path `data`.
pub fn inputs<'a>(model: &'a Path, data: &[&'a Path]) -> Vec<Input<'a>> {
    std::iter::once(Input::Model(model))
        .chain(data.iter().map(|d| Input::Data(d)))
        .collect()
}

/// Writes the file output `out` (see `write_file`, for `endings`) of a command that
/// reads the model directory `model` and the data paths `data`.
pub fn write_output(
    out: &Path,
    bytes: &[u8],
    endings: &[&str],
    model: &Path,
    data: &[&Path],
) -> Result<()> {
    let trained_on = trained_on(model);
    let mut all = inputs(model, data);
    all.extend(trained_on.as_deref().map(Input::Data));
    write_file(out, bytes, &all, endings)
}

/// The data file a model (or an ensemble's first member) records it was trained on,
/// when it names one: an output of a command that reads the model never replaces it.
fn trained_on(model: &Path) -> Option<PathBuf> {
    let tree = [
        model.join(crate::store::file_names::TREE_FILE),
        model
            .join("member-0")
            .join(crate::store::file_names::TREE_FILE),
    ]
    .into_iter()
    .find_map(|p| crate::store::atomic::read_bounded(&p, 256 << 20).ok())?;
    let v: serde_json::Value = serde_json::from_slice(&tree).ok()?;
    let data = PathBuf::from(v["provenance"]["data"].as_str()?);
    data.exists().then_some(data)
}

/// `ant prune --model M --data D --out OUT [--force]`: OUT as [`check_model_dir`]
/// allows, for a model or an ensemble as M holds.
pub(crate) fn check_prune_out(model: &Path, data: &[&Path], out: &Path, force: bool) -> Result<()> {
    let saved = match model
        .join(crate::store::file_names::ENSEMBLE_FILE)
        .is_file()
    {
        true => Saved::Ensemble,
        false => Saved::Model,
    };
    check_model_dir(out, saved, force, &inputs(model, data))
}

/// `ant export --format web --out DIR`: DIR is no input (the model directory, a data
/// directory or a directory holding them; an earlier site is checked by
/// [`crate::export::write_site`]).
pub fn check_site_out(out: &Path, model: &Path, data: Option<&Path>) -> Result<()> {
    let dir = resolve(&check(out, Kind::Dir, &inputs(model, data.as_slice()))?);
    check_not_a_part(out)?;
    for p in std::iter::once(model).chain(data) {
        if let Ok(canon) = p.canonicalize()
            && canon.starts_with(&dir)
        {
            let msg = format!(
                "holds the input {}: an export replaces its directory whole; choose another path",
                p.display()
            );
            return Err(AntError::data(out, msg));
        }
    }
    Ok(())
}

/// `out` as it may be written for `kind`: refuses an existing path of another type, a
/// device, pipe or socket, and a link that leads nowhere; a link is followed.
fn check_kind(out: &Path, kind: Kind) -> Result<PathBuf> {
    if is_stdout(out) {
        let msg = match kind {
            Kind::File => return Ok(out.to_path_buf()),
            Kind::Dir => "stdout cannot hold a directory: give a directory path",
        };
        return Err(AntError::data(out, msg));
    }
    // `sub/`, `.` or `..` name a directory even where none exists yet: a file written
    // there would land beside it under a name the user never gave.
    // (`components` drops a trailing `.`: `new/.` ends in `new` there.)
    let text = out.as_os_str().to_string_lossy();
    let sep = std::path::MAIN_SEPARATOR;
    let ends_in_name = matches!(out.components().next_back(), Some(Component::Normal(_)))
        && !text.ends_with(sep)
        && !text.ends_with(&format!("{sep}."));
    if kind == Kind::File && !ends_in_name {
        return Err(AntError::data(out, "names a directory: give a file path"));
    }
    let Ok(link) = std::fs::symlink_metadata(out) else {
        return Ok(out.to_path_buf()); // Nothing there yet.
    };
    let meta = match std::fs::metadata(out) {
        Ok(m) => m,
        // ELOOP: links that lead back to one another.
        Err(e) if e.raw_os_error() == Some(40) => {
            let to = std::fs::read_link(out)
                .map(|t| format!(" (it points to {}, which leads back to it)", t.display()))
                .unwrap_or_default();
            let msg = format!(
                "is a loop of symbolic links{to}: remove the link, or choose another path"
            );
            return Err(AntError::data(out, msg));
        }
        Err(_) if link.file_type().is_symlink() => {
            let to = std::fs::read_link(out)
                .map(|t| format!(" to {}", t.display()))
                .unwrap_or_default();
            let msg = format!(
                "is a symbolic link{to}, which leads to nothing: remove the link, or choose another path"
            );
            return Err(AntError::data(out, msg));
        }
        Err(e) => return Err(AntError::io(out, e)),
    };
    let what = match (kind, meta.is_file(), meta.is_dir()) {
        (Kind::File, true, _) | (Kind::Dir, _, true) => None,
        (Kind::File, _, true) => Some("is a directory: give a file path"),
        (Kind::Dir, true, _) => Some("is a file, not a directory: choose another path"),
        (Kind::File, _, _) => Some(
            "is not a regular file (a device, pipe or socket): give a file path, or - for stdout",
        ),
        (Kind::Dir, _, _) => {
            Some("is not a directory (a device, pipe or socket): choose another path")
        }
    };
    if let Some(what) = what {
        return Err(AntError::data(out, what));
    }
    if link.file_type().is_symlink() {
        // Written where it leads: replacing the link itself would leave the file it
        // names as it was (and could replace a system link such as /dev/stdout).
        return out.canonicalize().map_err(|e| AntError::io(out, e));
    }
    Ok(out.to_path_buf())
}

/// `p` made absolute with its longest existing ancestor resolved (links, `..`).
fn resolve(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut r = c;
            for part in rest.iter().rev() {
                r.push(part);
            }
            return r;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                cur = parent;
            }
            _ => return abs,
        }
    }
}

/// Whether `a` (which may not exist) and `b` are the same file (hard links included).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<PathBuf>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn outputs_that_are_inputs_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("m");
        std::fs::create_dir(&m).unwrap();
        std::fs::write(m.join("tree.json"), "{}").unwrap();
        std::fs::create_dir(m.join("member-0")).unwrap();
        let data = d.path().join("x.csv");
        std::fs::write(&data, "a\n").unwrap();
        let model = [Input::Model(&m), Input::Data(&data)];
        let e = err(check(&m.join("tree.json"), Kind::File, &model));
        assert!(e.contains("is part of the input"), "{e}");
        std::fs::write(m.join("member-0/tree.svg"), "x").unwrap();
        let e = err(check(&m.join("member-0/tree.svg"), Kind::File, &model));
        assert!(e.contains("is part of the input"), "{e}");
        std::fs::write(m.join("model-1.safetensors"), "w").unwrap();
        let e = err(check(
            &m.join("../m/model-1.safetensors"),
            Kind::File,
            &model,
        ));
        assert!(e.contains("is part of the input"), "{e}");
        let e = err(check(&data, Kind::File, &model));
        assert!(e.contains("is the input"), "{e}");
        std::fs::hard_link(&data, d.path().join("y.csv")).unwrap();
        let e = err(check(&d.path().join("y.csv"), Kind::File, &model));
        assert!(e.contains("is the input"), "{e}");
        let e = err(check(&m, Kind::Dir, &model));
        assert!(e.contains("is the input"), "{e}");
        // A new file in a model's directory is no part of it.
        assert!(check(&m.join("member-1/a.svg"), Kind::File, &model).is_ok());
        // Other files beside a model, and new paths, are fine.
        assert!(check(&m.join("tree.svg"), Kind::File, &model).is_ok());
        assert!(check(&d.path().join("new/a.onnx"), Kind::File, &model).is_ok());
        // Every file of a data directory is read.
        std::fs::write(m.join("notes"), "x").unwrap();
        let e = err(check(&m.join("notes"), Kind::File, &[Input::Data(&m)]));
        assert!(e.contains("is part of the input"), "{e}");
        assert!(check(&m.join("member-0"), Kind::Dir, &[Input::Data(&m)]).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_links_that_lead_nowhere_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = err(check(Path::new("/dev/null"), Kind::File, &[]));
        assert!(e.contains("not a regular file"), "{e}");
        let e = err(check(Path::new("/dev/null"), Kind::Dir, &[]));
        assert!(e.contains("not a directory"), "{e}");
        let link = d.path().join("l");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &link).unwrap();
        for kind in [Kind::File, Kind::Dir] {
            let e = err(check(&link, kind, &[]));
            assert!(
                e.contains("symbolic link to") && e.contains("nowhere"),
                "{e}"
            );
        }
        // A link to a file is written through.
        let f = d.path().join("f.txt");
        std::fs::write(&f, "old").unwrap();
        let link2 = d.path().join("l2.onnx");
        std::os::unix::fs::symlink(&f, &link2).unwrap();
        // ... only when the file it leads to is of the kind written.
        let e = write_file(&link2, b"new", &[], &["onnx"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("l2.onnx: leads to")
                && e.contains("f.txt, which exists, and its name ends in .txt, not .onnx"),
            "{e}"
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"old");
        write_file(&link2, b"new", &[], &["txt"]).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"new");
        assert!(
            std::fs::symlink_metadata(&link2)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let e = err(check(d.path(), Kind::File, &[]));
        assert!(e.contains("is a directory"), "{e}");
        let e = err(check(&f, Kind::Dir, &[]));
        assert!(e.contains("not a directory"), "{e}");
    }
}
