//! `ant export --format onnx`: a well-formed ONNX graph with the promised outputs, and
//! clear errors for what cannot be exported. (onnxruntime runs the exported models
//! against `ant predict` in `tests/onnx/test_onnx.py`.)

use std::collections::HashSet;

use ant::observe::Silent;
use ant::{Ablation, Ant};
use onnx_protobuf::{Message, ModelProto};

mod common;
use common::*;

/// A tabular classifier with routers (no transformers: only splits can help), saved.
fn split_model() -> tempfile::TempDir {
    let data = quadrants();
    let params = small_params().with_ablation(Ablation::NoTransformer);
    let dev = ant::default_device();
    let model = Ant::fit(params, &data, &dev, &mut Silent).expect("fits");
    assert!(
        model.tree().topology.routers() > 0,
        "the quadrants need a split"
    );
    let dir = tempfile::tempdir().unwrap();
    model.save(dir.path()).unwrap();
    dir
}

#[test]
fn an_exported_tree_is_a_well_formed_graph_with_every_output() {
    let model = split_model();
    let out = model.path().join("tree.onnx");
    let r = ant(&[
        "export",
        "--model",
        s(model.path()),
        "--format",
        "onnx",
        "--out",
        s(&out),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    let proto = ModelProto::parse_from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert!(
        proto
            .opset_import
            .iter()
            .any(|o| o.domain.is_empty() && o.version >= 17)
    );
    let g = proto.graph.as_ref().unwrap();
    let outputs: Vec<&str> = g.output.iter().map(|o| o.name.as_str()).collect();
    for name in [
        "prediction",
        "label",
        "single_path_prediction",
        "single_path_leaf",
        "reach",
        "p_left",
    ] {
        assert!(outputs.contains(&name), "{name} missing from {outputs:?}");
    }
    // Every value is defined before it is used: inputs, constants, earlier nodes.
    let mut defined: HashSet<&str> = g.input.iter().map(|i| i.name.as_str()).collect();
    defined.extend(g.initializer.iter().map(|t| t.name.as_str()));
    for n in &g.node {
        for i in &n.input {
            assert!(
                defined.contains(i.as_str()),
                "{} uses {i} before it is defined",
                n.name
            );
        }
        defined.extend(n.output.iter().map(String::as_str));
    }
    assert!(outputs.iter().all(|o| defined.contains(o)));
    let meta: Vec<(&str, &str)> = proto
        .metadata_props
        .iter()
        .map(|p| (p.key.as_str(), p.value.as_str()))
        .collect();
    assert!(
        meta.iter().any(|(k, v)| *k == "ant.routers" && *v != "[]"),
        "{meta:?}"
    );
}

#[test]
fn what_cannot_be_exported_is_one_clear_error() {
    let model = split_model();
    let m = s(model.path());
    let not_a_model = tempfile::tempdir().unwrap();
    let file = model.path().join("tree.onnx");
    // An unknown format, a directory without a model, an output that cannot be written.
    let r = ant(&[
        "export",
        "--model",
        m,
        "--format",
        "pmml",
        "--out",
        s(&file),
    ]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("pmml"), "{}", stderr(&r));
    let r = ant(&[
        "export",
        "--model",
        s(not_a_model.path()),
        "--format",
        "onnx",
        "--out",
        s(&file),
    ]);
    assert_clean_error(&r, &["tree.json"]);
    let blocker = model.path().join("a-file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let unwritable = blocker.join("tree.onnx");
    let r = ant(&[
        "export",
        "--model",
        m,
        "--format",
        "onnx",
        "--out",
        s(&unwritable),
    ]);
    assert_clean_error(&r, &["a-file"]);
    assert!(!file.exists(), "nothing is written by a refused export");
}

#[test]
fn the_web_export_is_a_site_holding_the_tree_and_replaces_only_an_earlier_export() {
    let model = split_model();
    let m = s(model.path());
    let site = model.path().join("site");
    for _ in 0..2 {
        // The second time over the first export: replaced.
        let r = ant(&["export", "--model", m, "--format", "web", "--out", s(&site)]);
        assert!(r.status.success(), "{}", stderr(&r));
    }
    let js = std::fs::read_to_string(site.join("model.js")).unwrap();
    let json = js
        .split_once("window.ANT_MODEL = ")
        .unwrap()
        .1
        .trim_end()
        .trim_end_matches(';');
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), model_nodes(model.path()));
    assert!(nodes.iter().any(|n| n["router"].is_object()));
    assert_eq!(v["layout"]["boxes"].as_array().unwrap().len(), nodes.len());
    for f in ["index.html", "viewer.js", "style.css"] {
        assert!(site.join(f).is_file(), "{f}");
    }
    // A directory that is not an earlier export is left alone.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("notes.txt"), "mine").unwrap();
    let r = ant(&[
        "export",
        "--model",
        m,
        "--format",
        "web",
        "--out",
        s(other.path()),
    ]);
    assert_clean_error(&r, &["not an earlier web export"]);
    assert!(other.path().join("notes.txt").exists());
}

/// The number of nodes of the tree saved in `dir`.
fn model_nodes(dir: &std::path::Path) -> usize {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("tree.json")).unwrap()).unwrap();
    v["topology"]["nodes"].as_array().unwrap().len()
}
