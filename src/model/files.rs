//! The model's files: `tree.json` (its description, naming its weights file) and
//! `model-<md5>.safetensors` (the weights, named by their checksum), saved as one unit
//! and read back checked.

use std::path::Path;

use burn::module::Module;
use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use serde::{Deserialize, Serialize};

use super::{Ant, ModelMeta};
use crate::error::{AntError, Result};
use crate::store::atomic::read_bounded;
use crate::tree::{Topology, Tree, TreeModules};

pub(crate) use crate::store::file_names::{LEGACY_WEIGHTS_FILE, TREE_FILE};
pub(crate) const FORMAT: &str = crate::store::file_names::MODEL_FORMAT;

/// The weights file a `tree.json` belongs with: written into it by [`Ant::save`] and
/// checked by [`Ant::load`], so a `tree.json` is never used with another model's weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightsRef {
    /// `model-<first 16 hex digits of the md5>.safetensors`, beside `tree.json`.
    pub file: String,
    /// The hex md5 of the file's bytes.
    pub md5: String,
}

impl WeightsRef {
    fn of(bytes: &[u8]) -> WeightsRef {
        let md5 = crate::store::checksum::md5_hex(bytes);
        WeightsRef {
            file: format!("model-{}.safetensors", &md5[..16]),
            md5,
        }
    }

    /// Whether `name` is a weights file of [`Ant::save`] (or the legacy one).
    fn is_weights_name(name: &str) -> bool {
        name == LEGACY_WEIGHTS_FILE
            || (name.starts_with("model-") && name.ends_with(".safetensors"))
    }
}

/// `tree.json` as written: the model's description and the weights file it belongs with.
#[derive(Serialize)]
struct TreeFileOut<'a> {
    #[serde(flatten)]
    meta: &'a ModelMeta,
    topology: &'a Topology,
    weights: &'a WeightsRef,
}

/// What `tree.json` holds beside [`ModelMeta`]: the topology, and the weights reference
/// (absent in files of earlier versions).
#[derive(Deserialize)]
struct TreeFileRest {
    topology: Topology,
    #[serde(default)]
    weights: Option<WeightsRef>,
}

/// A `tree.json` read and checked: its description, its topology and the weights file
/// it names.
struct TreeFile {
    meta: ModelMeta,
    topology: Topology,
    weights: Option<WeightsRef>,
}

impl Ant {
    /// Save the model into `dir` as one unit: the weights go to a new file named by their
    /// checksum, then `tree.json`, which names that file, replaces the old one (the one
    /// atomic switch), then the weights files no `tree.json` names any more are removed.
    /// Interrupted at any point, `dir` holds the old model or the new one, whole.
    ///
    /// A directory holding files under the names a model's files have that `ant` did not
    /// write (a `tree.json` of another format, say) is refused, and of the weights files
    /// only those named by a checksum, as `save` names them, are ever removed.
    pub fn save(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        crate::store::outputs::check_nothing_foreign(dir)?;
        crate::store::atomic::create_dir_all(dir)?;
        let bytes = self.weights_bytes()?;
        let weights = WeightsRef::of(&bytes);
        // Every file goes through the manifest: only what ant wrote is replaced.
        let new = !dir.join(&weights.file).exists();
        let json = self.tree_json(&weights)?;
        let written = crate::store::manifest::write(dir, &weights.file, &bytes)
            .and_then(|()| crate::store::manifest::write(dir, TREE_FILE, &json));
        // A write that failed may have come after the switch (the manifest's record of
        // it): tree.json itself says.
        let switched = written.is_ok()
            || read_bounded(&dir.join(TREE_FILE), MAX_TREE_BYTES).is_ok_and(|t| t == json);
        if !switched {
            // The old model stays, alone: the new weights file (ant's own, just
            // written) goes.
            if new {
                let _ = std::fs::remove_file(dir.join(&weights.file));
            }
            return written;
        }
        // Switched (even if recording it failed after): the old model's weights, and
        // those of interrupted saves, are no longer named.
        let entries = std::fs::read_dir(dir).map_err(|e| AntError::io(dir, e))?;
        let mut removed = Ok(());
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours =
                crate::store::file_names::is_checksum_weights(&name) || name == LEGACY_WEIGHTS_FILE;
            if ours && name != weights.file {
                removed = removed.and(crate::store::manifest::remove(dir, &name));
            }
        }
        written.and(removed)
    }

    /// The bytes [`Ant::save`] writes: `tree.json` (which names the weights file by its
    /// checksum) and the weights file. [`Ant::from_bytes`] reads them back.
    pub fn to_bytes(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        let bytes = self.weights_bytes()?;
        let json = self.tree_json(&WeightsRef::of(&bytes))?;
        Ok((json, bytes))
    }

    /// The weights as a safetensors file: the same weights give the same bytes.
    fn weights_bytes(&self) -> Result<Vec<u8>> {
        // One metadata entry: burn's default entries are a hash map, written in a random
        // order, and the same weights must give the same bytes (the file is named by them).
        let mut store = SafetensorsStore::from_bytes(None)
            .skip_enum_variants(true)
            .clear_metadata()
            .metadata("producer", "ant");
        self.tree
            .modules
            .save_into(&mut store)
            .map_err(|e| AntError::model(format!("saving weights: {e}")))?;
        store
            .get_bytes()
            .map_err(|e| AntError::model(format!("saving weights: {e}")))
    }

    /// `tree.json`: the model's description, naming the weights file it belongs with.
    fn tree_json(&self, weights: &WeightsRef) -> Result<Vec<u8>> {
        let file = TreeFileOut {
            meta: &self.meta,
            topology: &self.tree.topology,
            weights,
        };
        serde_json::to_vec_pretty(&file).map_err(|e| AntError::model(e.to_string()))
    }

    /// Load a model saved by [`Ant::save`]. The weights must be the ones `tree.json`
    /// names (same checksum): a `tree.json` beside another model's weights is refused.
    pub fn load(dir: impl AsRef<Path>, device: &Device) -> Result<Ant> {
        let (file, wp, bytes) = read_model_files(dir.as_ref())?;
        Ant::assemble(file, &wp, bytes, device)
    }

    /// A model from the bytes of a `tree.json` and of its weights file, checked as
    /// [`Ant::load`] checks files, but for the weights' checksum (that ties two files
    /// together; here the caller holds both).
    pub fn from_bytes(tree_json: &[u8], weights: &[u8], device: &Device) -> Result<Ant> {
        let file = parse_tree_file(tree_json, Path::new(TREE_FILE))?;
        Ant::assemble(file, Path::new("weights"), weights.to_vec(), device)
    }

    /// The model `file` describes with the weights `bytes` (read from `wp`).
    fn assemble(file: TreeFile, wp: &Path, bytes: Vec<u8>, device: &Device) -> Result<Ant> {
        let TreeFile { meta, topology, .. } = file;
        // Checked before any allocation: a small file cannot ask for a huge model.
        let params = topology.num_params();
        if bytes.len() / 4 < params {
            let msg = format!(
                "holds {} bytes, too few for the {params} weights tree.json describes",
                bytes.len()
            );
            return Err(AntError::data(wp, msg));
        }
        let device = device.clone().without_autodiff();
        let mut modules = TreeModules::init(&topology, &device);
        let tensors =
            weight_tensors(&bytes).map_err(|e| AntError::data(wp, format!("bad weights: {e}")))?;
        drop(bytes);
        let res = modules.apply(tensors, None, None, true);
        if !res.missing.is_empty() || !res.errors.is_empty() {
            return Err(AntError::data(
                wp,
                format!(
                    "weights do not match tree.json (missing {:?}, errors {:?})",
                    res.missing, res.errors
                ),
            ));
        }
        if !all_finite(&modules) {
            return Err(AntError::data(
                wp,
                "holds weights that are not finite (NaN or inf)",
            ));
        }
        let tree = Tree::new(topology, modules);
        Ok(Ant {
            tree,
            meta,
            device,
            scale_said: super::ScaleSaid::default(),
        })
    }
}

/// The most bytes a `tree.json` can take (its topology and growth decisions, with room).
const MAX_TREE_BYTES: u64 = 256 << 20;

/// The most bytes the weights of a tree of `topology` can take: its weights as f32 (f64
/// at most) and the safetensors header, with room.
fn max_weights_bytes(topology: &Topology) -> u64 {
    (topology.num_params() as u64).saturating_mul(8) + (64 << 20)
}

/// `tree.json`, checked: anything it says must be possible.
fn parse_tree_file(text: &[u8], tp: &Path) -> Result<TreeFile> {
    let not_model = |e: serde_json::Error| AntError::data(tp, format!("not a model file: {e}"));
    let mut meta: ModelMeta = serde_json::from_slice(text).map_err(not_model)?;
    if meta.format != FORMAT {
        return Err(AntError::data(
            tp,
            format!("unknown format {:?}", meta.format),
        ));
    }
    let rest: TreeFileRest = serde_json::from_slice(text).map_err(not_model)?;
    meta.check(&rest.topology, tp)?;
    // Models saved before fitted columns were named read tables by them too.
    meta.complete_table_layout();
    Ok(TreeFile {
        meta,
        topology: rest.topology,
        weights: rest.weights,
    })
}

/// Refuses a file given where a model, run or ensemble folder is asked for, naming the
/// folder when the file is one of a model's (`--model m/tree.json` had said only
/// "m/tree.json/tree.json: Not a directory"; `curves --run`, `train --resume` and
/// `--init-from` the same).
pub(crate) fn check_is_a_folder(dir: &Path) -> Result<()> {
    if !dir.is_file() {
        return Ok(());
    }
    let folder = dir.parent().map(|p| {
        if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        }
    });
    let holds_a_model = |p: &Path| {
        p.join(TREE_FILE).is_file()
            || p.join(crate::store::file_names::ENSEMBLE_FILE).is_file()
            || p.join(crate::store::file_names::CHECKPOINT_DIR).is_dir()
    };
    let msg = match folder.filter(|p| holds_a_model(p)) {
        Some(p) => format!("is a file: give the folder that holds it ({})", p.display()),
        None => "is a file, not a model's or run's folder (one that holds tree.json)".to_string(),
    };
    Err(AntError::data(dir, msg))
}

/// `tree.json` (checked) and the bytes of the weights file it belongs with, and that
/// file's path. A save that switches the model meanwhile may remove the weights the
/// `tree.json` read first names: the files are then read again.
fn read_model_files(dir: &Path) -> Result<(TreeFile, std::path::PathBuf, Vec<u8>)> {
    check_is_a_folder(dir)?;
    let tp = dir.join(TREE_FILE);
    if !tp.exists() && dir.join(crate::store::file_names::CHECKPOINT_DIR).is_dir() {
        let msg = format!(
            "holds an interrupted run, not yet a model: continue it with `ant train --resume {}`",
            dir.display()
        );
        return Err(AntError::data(dir, msg));
    }
    let read_tree = |tp: &Path| read_bounded(tp, MAX_TREE_BYTES).map_err(|e| AntError::io(tp, e));
    let mut text = read_tree(&tp)?;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let file = parse_tree_file(&text, &tp)?;
        let Some(w) = file.weights.clone() else {
            let wp = dir.join(LEGACY_WEIGHTS_FILE);
            let bytes = read_bounded(&wp, max_weights_bytes(&file.topology))
                .map_err(|e| AntError::io(&wp, e))?;
            return Ok((file, wp, bytes));
        };
        if !WeightsRef::is_weights_name(&w.file) || w.file.contains(['/', '\\']) {
            let msg = format!(
                "names {:?} as its weights file: not a weights file name",
                w.file
            );
            return Err(AntError::data(&tp, msg));
        }
        let wp = dir.join(&w.file);
        let bytes = match read_bounded(&wp, max_weights_bytes(&file.topology)) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt <= 3 => {
                let again = read_tree(&tp)?;
                if again == text {
                    let msg = format!(
                        "the weights file {} that tree.json names is missing",
                        w.file
                    );
                    return Err(AntError::data(&tp, msg));
                }
                text = again;
                continue;
            }
            Err(e) => return Err(AntError::io(&wp, e)),
        };
        let md5 = crate::store::checksum::md5_hex(&bytes);
        if md5 != w.md5 {
            let msg = format!(
                "does not belong with {}: its checksum is {md5}, tree.json expects {}",
                tp.display(),
                w.md5
            );
            return Err(AntError::data(&wp, msg));
        }
        return Ok((file, wp, bytes));
    }
}

/// Whether every weight of `modules` is a finite number.
fn all_finite(modules: &TreeModules) -> bool {
    struct Finite(bool);
    impl burn::module::ModuleVisitor for Finite {
        fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
            let t = param.val();
            self.0 &= !(t.clone().is_nan().any().into_scalar::<bool>()
                || t.is_inf().any().into_scalar::<bool>());
        }
    }
    let mut v = Finite(true);
    modules.visit(&mut v);
    v.0
}

/// Every command that saves a model where another may be goes through here, in one
/// order: first what described the old model goes (its report, pruning summary, grown
/// model, and its records unless they are `Records::Ours`), then `grown` (the model
/// growth left, when there is one), then the model itself, whose `tree.json` is the
/// switch. Killed at any point, nothing left describes a model it does not belong to.
pub(crate) fn save_model(
    model: &super::Ant,
    grown: Option<&super::Ant>,
    out: &Path,
    records: crate::store::outputs::Records,
) -> Result<()> {
    use crate::store::file_names::{GROWN_DIR, PRUNE_FILE, RECORDS_FILE, REPORT_FILE};
    use crate::store::outputs::{Records, check_grown_dir, check_nothing_foreign, is_grown_owned};
    check_nothing_foreign(out)?;
    check_grown_dir(out)?;
    let mut stale = vec![REPORT_FILE, PRUNE_FILE];
    if records == Records::Old {
        stale.push(RECORDS_FILE);
    }
    for name in stale {
        crate::store::manifest::remove(out, name)?;
    }
    let grown_dir = out.join(GROWN_DIR);
    // What a save killed there left (the caller holds the directory's lock).
    crate::store::atomic::remove_stale_temps(&grown_dir, is_grown_owned)?;
    match grown {
        Some(g) => g.save(&grown_dir)?,
        None => crate::store::atomic::remove_dir_atomic(&grown_dir)?,
    }
    model.save(out)
}

/// Takes back a save of `model` into `dir` that failed after its switch (`tree.json`
/// is `model`'s): `tree.json` goes first, so that no model is there, then its weights.
/// Plain removals, which a full disk allows (the manifest's rewrite may fail: its
/// entries then name files that are gone, which no check minds). A save that failed
/// before the switch left the old model, which stays, with the files that describe it:
/// `described_by` (written for the new model) goes only with the new model.
pub(crate) fn take_back_save(model: &super::Ant, dir: &Path, described_by: &[&str]) {
    let Ok((json, weights)) = model.to_bytes() else {
        return;
    };
    let tree = dir.join(TREE_FILE);
    let switched = read_bounded(&tree, MAX_TREE_BYTES).is_ok_and(|t| t == json);
    if switched && std::fs::remove_file(&tree).is_ok() {
        let weights = WeightsRef::of(&weights).file;
        for name in [weights.as_str()].iter().chain(described_by) {
            let _ = std::fs::remove_file(dir.join(name));
        }
        for name in [TREE_FILE, weights.as_str()].iter().chain(described_by) {
            let _ = crate::store::manifest::remove(dir, name);
        }
    }
}

/// The tensors of a safetensors file's `bytes`, its header parsed once. (burn's store
/// parses the whole header again for each tensor it loads: a model of 8,000 tensors
/// then took minutes, time growing with the square of their count.)
fn weight_tensors(
    bytes: &[u8],
) -> std::result::Result<Vec<burn::store::burn_pack::Tensor>, String> {
    let file = safetensors::SafeTensors::deserialize(bytes).map_err(|e| e.to_string())?;
    file.tensors()
        .into_iter()
        .map(|(name, view)| {
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(format!("{name} holds {:?}, not f32", view.dtype()));
            }
            let data = burn::tensor::TensorData::from_bytes_vec(
                view.data().to_vec(),
                view.shape().to_vec(),
                burn::tensor::DType::F32,
            );
            Ok(burn::store::bridge::from_data(data, name, None))
        })
        .collect()
}
