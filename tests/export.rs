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
    assert!(model.topology().routers() > 0, "the quadrants need a split");
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

#[test]
fn an_export_never_replaces_an_input_and_refuses_what_is_not_a_file() {
    let model = split_model();
    let m = model.path();
    let tree = std::fs::read(m.join("tree.json")).unwrap();
    let export = |format: &str, out: &str| {
        ant(&["export", "--model", s(m), "--format", format, "--out", out])
    };
    for f in ["onnx", "web"] {
        let r = export(f, s(&m.join("tree.json")));
        assert_clean_error(&r, &["tree.json", "never replaces what the command reads"]);
        let r = export(f, s(m));
        assert_clean_error(&r, &["is the input"]);
    }
    assert_eq!(std::fs::read(m.join("tree.json")).unwrap(), tree);
    assert!(Ant::load(m, &ant::default_device()).is_ok());
    // `-` is stdout; a device is not a file to replace.
    let file = m.join("m.onnx");
    assert!(export("onnx", s(&file)).status.success());
    let r = export("onnx", "-");
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(r.stdout, std::fs::read(&file).unwrap());
    let r = export("onnx", "/dev/null");
    assert_clean_error(&r, &["/dev/null", "not a regular file", "- for stdout"]);
    // /dev/stdout is a link to this process's stdout, here a pipe: refused, not replaced.
    #[cfg(target_os = "linux")]
    {
        let r = export("onnx", "/dev/stdout");
        assert_clean_error(&r, &["/dev/stdout", "not a regular file"]);
        assert!(r.stdout.is_empty());
    }
    // A link that leads nowhere is named as such.
    #[cfg(unix)]
    {
        let link = m.join("dangling");
        std::os::unix::fs::symlink(m.join("nowhere"), &link).unwrap();
        for f in ["onnx", "web"] {
            let r = export(f, s(&link));
            assert_clean_error(&r, &["dangling", "symbolic link", "leads to nothing"]);
        }
    }
}

#[test]
fn a_web_export_deletes_nothing_it_did_not_write_and_is_replaced_whole() {
    let model = split_model();
    let m = s(model.path());
    let site = model.path().join("site");
    let export = |env: Option<usize>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ant"));
        c.args(["export", "--model", m, "--format", "web", "--out", s(&site)]);
        if let Some(n) = env {
            c.env("ANT_FAULT_AFTER_WRITES", n.to_string());
        }
        c.output().unwrap()
    };
    assert!(export(None).status.success());
    let names = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let whole = names(&site);
    assert!(whole.contains(&"model.js".to_string()), "{whole:?}");
    // Killed at every step of a re-export: the site is there, whole, every time.
    for n in 1.. {
        let r = export(Some(n));
        assert_eq!(names(&site), whole, "killed after step {n}");
        if r.status.success() {
            break;
        }
        assert!(n < 100, "the export never ends");
    }
    // ... and the next export cleans what the killed ones left beside it.
    let leftovers = || {
        names(model.path())
            .into_iter()
            .filter(|n| n.starts_with(".site."))
            .collect::<Vec<_>>()
    };
    assert!(export(Some(3)).status.code() != Some(0));
    assert!(!leftovers().is_empty());
    assert!(export(None).status.success());
    assert_eq!(leftovers(), Vec::<String>::new());
    // A file of the user's in an earlier export: refused, and the file kept.
    std::fs::write(site.join("notes.txt"), "mine").unwrap();
    let r = export(None);
    assert_clean_error(&r, &["notes.txt", "did not write"]);
    assert_eq!(std::fs::read(site.join("notes.txt")).unwrap(), b"mine");
    // A directory that only looks like an export (the same names, and the user's).
    let other = model.path().join("other");
    std::fs::create_dir(&other).unwrap();
    for f in [
        "index.html",
        "model.js",
        "viewer.js",
        "style.css",
        "thesis.tex",
    ] {
        std::fs::write(other.join(f), f).unwrap();
    }
    let r = ant(&[
        "export",
        "--model",
        m,
        "--format",
        "web",
        "--out",
        s(&other),
    ]);
    assert_clean_error(&r, &["thesis.tex"]);
    std::fs::remove_file(other.join("thesis.tex")).unwrap();
    let r = ant(&[
        "export",
        "--model",
        m,
        "--format",
        "web",
        "--out",
        s(&other),
    ]);
    assert_clean_error(&r, &["not an earlier web export"]);
    assert_eq!(names(&other).len(), 4);
    assert_eq!(
        std::fs::read(other.join("index.html")).unwrap(),
        b"index.html"
    );
}
