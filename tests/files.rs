//! What `ant` writes: a model changes as one unit (never a mix of two models' files), a
//! failed write stops the run with a clear error and keeps what was saved, and a run
//! killed at any moment leaves the old model or the new one, and resumes.

use std::path::Path;

use ant::observe::Silent;
use ant::{Ant, AntParams, Dataset, Inference, Preset, Targets};

/// 200 points in [-1,1]^2, class 1 inside a circle.
fn circle() -> Dataset {
    let x: Vec<f32> = (0..400)
        .map(|i| ((i * 7919) % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let labels = x
        .chunks(2)
        .map(|p| u32::from(p[0] * p[0] + p[1] * p[1] < 0.5))
        .collect();
    Dataset::new(
        x,
        vec![2],
        Targets::Classes {
            labels,
            n_classes: 2,
        },
    )
    .unwrap()
}

fn tiny(seed: u64) -> Ant {
    let params = AntParams::new(Preset::Tabular)
        .with_width(8)
        .with_epochs_node(3)
        .with_refine_epochs(Some(2))
        .with_max_depth(1)
        .with_batch_size(64)
        .with_seed(seed);
    Ant::fit(params, &circle(), &ant::default_device(), &mut Silent).unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The weights file the tree.json in `dir` names.
fn weights_file(dir: &Path) -> String {
    json(&dir.join("tree.json"))["weights"]["file"]
        .as_str()
        .unwrap()
        .to_string()
}

fn predictions(m: &Ant) -> Vec<f32> {
    m.predict(&circle(), Inference::MultiPath).unwrap().values
}

fn load(dir: &Path) -> ant::Result<Ant> {
    Ant::load(dir, &ant::default_device())
}

#[test]
fn a_saved_model_is_one_unit() {
    let (a, b) = (tiny(0), tiny(1));
    assert_ne!(predictions(&a), predictions(&b));
    let tmp = tempfile::tempdir().unwrap();
    let (da, db) = (tmp.path().join("a"), tmp.path().join("b"));
    a.save(&da).unwrap();
    let wa = weights_file(&da);
    assert!(
        wa.starts_with("model-") && wa.ends_with(".safetensors"),
        "{wa}"
    );
    assert_eq!(names(&da), [wa.clone(), "tree.json".into()]);

    // Saving another model over it switches the whole model: one weights file, the new.
    a.save(&db).unwrap();
    b.save(&db).unwrap();
    let wb = weights_file(&db);
    assert_ne!(wa, wb);
    assert_eq!(names(&db), [wb.clone(), "tree.json".into()]);
    assert_eq!(predictions(&load(&db).unwrap()), predictions(&b));

    // A tree.json beside another model's weights is refused, naming the file.
    let mix = tmp.path().join("mix");
    b.save(&mix).unwrap();
    // The same model gives the same bytes, so the same file name.
    assert_eq!(weights_file(&mix), wb);
    std::fs::copy(da.join(&wa), mix.join(&wb)).unwrap();
    let e = load(&mix).err().unwrap().to_string();
    assert!(e.contains(&wb) && e.contains("does not belong"), "{e}");
    // ... and so is a tree.json whose weights file is missing.
    std::fs::copy(da.join("tree.json"), mix.join("tree.json")).unwrap();
    let e = load(&mix).err().unwrap().to_string();
    assert!(
        e.contains("tree.json") && e.contains(&wa) && e.contains("missing"),
        "{e}"
    );

    // A tree.json that names a path outside its directory is refused.
    let mut v = json(&da.join("tree.json"));
    v["weights"]["file"] = serde_json::json!("../b/model-x.safetensors");
    let evil = tmp.path().join("evil");
    std::fs::create_dir(&evil).unwrap();
    std::fs::write(evil.join("tree.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    let e = load(&evil).err().unwrap().to_string();
    assert!(e.contains("not a weights file name"), "{e}");
}

#[test]
fn models_saved_by_earlier_versions_still_load() {
    let a = tiny(0);
    let tmp = tempfile::tempdir().unwrap();
    a.save(tmp.path()).unwrap();
    // Earlier versions: model.safetensors, and a tree.json that names no weights file.
    let w = weights_file(tmp.path());
    std::fs::rename(tmp.path().join(&w), tmp.path().join("model.safetensors")).unwrap();
    let mut v = json(&tmp.path().join("tree.json"));
    v.as_object_mut().unwrap().remove("weights");
    std::fs::write(
        tmp.path().join("tree.json"),
        serde_json::to_vec(&v).unwrap(),
    )
    .unwrap();
    assert_eq!(predictions(&load(tmp.path()).unwrap()), predictions(&a));

    // Saving over it leaves the new layout only.
    a.save(tmp.path()).unwrap();
    assert_eq!(names(tmp.path()), [w, "tree.json".into()]);
    assert_eq!(predictions(&load(tmp.path()).unwrap()), predictions(&a));
}
